package production

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/pipeline"
)

// What production keeps in a shared object store (Config.Blobs), so that
// any node serves it: a batch's files under print/<batch>/<name>, a
// letter's PDF for email and links under letters/<epid>/<idx>.pdf.

// BatchKey is the key of a batch's file (BatchPDF, ManifestJSON, ...) in
// the object store.
func BatchKey(batch, name string) string { return "print/" + batch + "/" + name }

// letterKey is the key of a letter's PDF for electronic delivery, and
// lettersPrefix that of all of a mailing's.
func letterKey(epid string, idx int) string { return lettersPrefix(epid) + strconv.Itoa(idx) + ".pdf" }
func lettersPrefix(epid string) string      { return "letters/" + epid + "/" }

// batchFiles are the files of a batch put into the store, in the order
// they are put: manifest.json last, so that its presence says the others
// are there.
var batchFiles = []string{BatchPDF, ManifestCSV, LodgementJSON, ManifestJSON}

// storeError is a failure of the object store (not of a customer's
// document): the stage is retried, the letter is not held.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

func isStoreError(err error) bool {
	var se *storeError
	return errors.As(err, &se)
}

// DocumentPath returns where this node reads a mailing's document: with
// an object store (blobs: production's and the auto processor's
// Config.Blobs) and the document's key in it (File.Blob), a verified copy
// on this node's disk (blob.Store.LocalPath); else File.Path, which is
// valid on the node that took the upload. A document missing from the
// store is a DocumentError (its letters are held); other failures of the
// store are the server's (the stage is retried).
func DocumentPath(ctx context.Context, blobs blob.Store, f pipeline.File) (string, error) {
	if blobs == nil || f.Blob == "" {
		return f.Path, nil
	}
	path, err := blobs.LocalPath(ctx, f.Blob)
	if errors.Is(err, blob.ErrNotFound) {
		return "", &docError{fmt.Sprintf("%s is no longer stored (object %s)", f.Name, f.Blob)}
	}
	if err != nil {
		return "", &storeError{fmt.Errorf("reading %s from the object store: %w", f.Name, err)}
	}
	return path, nil
}

// publishBatch puts a batch's files, written in its folder dir of the hot
// folder, into the object store (when there is one), each durably, before
// Compose returns: so the batch is in the store before the mailroom
// records it ready. A batch whose manifest.json (put last) is in the store
// already is left as it is: it was put whole before (by this node before a
// crash, or by another node that composed the same batch: the same
// records give the same pages).
func (p *Producer) publishBatch(ctx context.Context, id, dir string) error {
	if p.cfg.Blobs == nil {
		return nil
	}
	last := BatchKey(id, ManifestJSON)
	if err := blob.CheckKey(last); err != nil {
		return fmt.Errorf("batch %q: %w", id, err)
	}
	if _, err := p.cfg.Blobs.Stat(ctx, last); err == nil {
		return nil
	} else if !errors.Is(err, blob.ErrNotFound) {
		return fmt.Errorf("batch %s: %w", id, err)
	}
	for _, name := range batchFiles {
		if err := putFile(ctx, p.cfg.Blobs, BatchKey(id, name), filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("batch %s: %w", id, err)
		}
	}
	return nil
}

// putFile puts a file's bytes under key.
func putFile(ctx context.Context, blobs blob.Store, key, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	_, err = blobs.Put(ctx, key, f, fi.Size())
	return err
}

// Batches reads ready batches' files, on any node: from the object store
// when Blobs is set (production's Config.Blobs: Producer.Batches), else
// from the batch's folder in the hot folder of the node that composed it
// (Batch.Dir), while it is there. The zero value reads the hot folder.
type Batches struct {
	Blobs blob.Store
	// PresignExpiry is how long URL's presigned URLs last; 0: URL gives
	// none, and the bytes are served by lodge (Open).
	PresignExpiry time.Duration
}

// Batches returns the reader of this producer's batches.
func (p *Producer) Batches() Batches {
	return Batches{Blobs: p.cfg.Blobs, PresignExpiry: p.cfg.PresignExpiry}
}

// ErrNoBatchFile is what Open and URL wrap when the batch's file is not
// there (not composed yet, or moved on from the hot folder); it is also
// fs.ErrNotExist.
var ErrNoBatchFile = fmt.Errorf("no such batch file: %w", fs.ErrNotExist)

func batchName(name string) error {
	for _, n := range batchFiles {
		if name == n {
			return nil
		}
	}
	return fmt.Errorf("%q is not a file of a batch", name)
}

// Open opens a file of a batch (BatchPDF, ManifestJSON, ManifestCSV,
// LodgementJSON) for reading, with its size.
func (bs Batches) Open(ctx context.Context, b pipeline.Batch, name string) (io.ReadCloser, int64, error) {
	if err := batchName(name); err != nil {
		return nil, 0, err
	}
	if bs.Blobs != nil {
		r, info, err := bs.Blobs.Open(ctx, BatchKey(b.ID, name))
		if errors.Is(err, blob.ErrNotFound) {
			return nil, 0, fmt.Errorf("batch %s: %s: %w", b.ID, name, ErrNoBatchFile)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("batch %s: %w", b.ID, err)
		}
		return r, info.Size, nil
	}
	if b.Dir == "" {
		return nil, 0, fmt.Errorf("batch %s: %s: %w", b.ID, name, ErrNoBatchFile)
	}
	f, err := os.Open(filepath.Join(b.Dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("batch %s: %s: %w", b.ID, name, ErrNoBatchFile)
	}
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a file", f.Name())
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// Has reports whether a batch's file can be read.
func (bs Batches) Has(ctx context.Context, b pipeline.Batch, name string) (bool, error) {
	if err := batchName(name); err != nil {
		return false, err
	}
	if bs.Blobs != nil {
		_, err := bs.Blobs.Stat(ctx, BatchKey(b.ID, name))
		if errors.Is(err, blob.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	if b.Dir == "" {
		return false, nil
	}
	fi, err := os.Stat(filepath.Join(b.Dir, name))
	return err == nil && fi.Mode().IsRegular(), nil
}

// URL returns a presigned URL that downloads a batch's file straight from
// the object store, named filename, valid for PresignExpiry; "" when
// there is none (no store, a store without URLs, or PresignExpiry 0):
// the caller serves Open's bytes itself. The URL works for whoever holds
// it until it expires: hand it only to who may read the batch.
func (bs Batches) URL(ctx context.Context, b pipeline.Batch, name, filename string) (string, error) {
	if err := batchName(name); err != nil {
		return "", err
	}
	if bs.Blobs == nil || bs.PresignExpiry <= 0 {
		return "", nil
	}
	key := BatchKey(b.ID, name)
	// a URL of a missing object would answer the browser with the store's
	// own error page: say so here instead
	if _, err := bs.Blobs.Stat(ctx, key); errors.Is(err, blob.ErrNotFound) {
		return "", fmt.Errorf("batch %s: %s: %w", b.ID, name, ErrNoBatchFile)
	} else if err != nil {
		return "", fmt.Errorf("batch %s: %w", b.ID, err)
	}
	return bs.Blobs.DownloadURL(ctx, key, filename, bs.PresignExpiry)
}
