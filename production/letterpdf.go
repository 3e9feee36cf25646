package production

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/internal/durable"
	"github.com/lodge-mail/lodge/internal/pdf"
	"github.com/lodge-mail/lodge/internal/sandbox"
	"github.com/lodge-mail/lodge/pipeline"
)

// LetterPDF returns the path of a letter's PDF for electronic delivery
// (an email attachment, the document behind a link): the pages of its
// documents as they are, in order, attachments after (the letter's
// Documents; PostScript and XPS through their PDF conversion), each page
// at its own size and orientation, with no sheet code, letterhead or
// print settings; the areas of l.Masks painted white on its first page,
// as in print. With a password the file is encrypted with it (AES-256,
// revision 6, which Ghostscript opens too; by qpdf, the password handed
// over on a file descriptor, never on a command line or on disk) and an
// owner password of 32 random bytes that is not kept.
//
// The file, <WorkDir>/letters/<epid>/<idx>.pdf, is written once,
// atomically and durably (fsync, rename); later calls, after a crash too,
// return it as it is, whatever the password they give: the first call
// decides. A problem of the letter's documents (DocumentError) or of the
// password (pdf.CheckPassword) is the letter's; other errors are the
// server's and worth a retry.
//
// With an object store (Config.Blobs) the PDF is the object
// letters/<epid>/<idx>.pdf, and the path returned is its copy on this
// node (blob.Store.LocalPath): once there, every node returns it, to
// whichever password. It is made as above in this node's work folder
// (encrypted there: only the encrypted file is ever put), then put unless
// the object appeared meanwhile, and the local file removed. Two nodes
// may still both make it and both put it (between the check and the put):
// the store keeps one object whole (the later Put), and both were made
// from the same letter record with the same password (the record holds
// the password until the send is done, and from then on only
// ExistingLetterPDF is asked), so the two differ only in their random
// encryption keys; each node returns the object as it found it in the
// store after its own put.
func (p *Producer) LetterPDF(ctx context.Context, m *pipeline.Mailing, l *pipeline.Letter, password string) (string, error) {
	if !plainEPID(m.EPID) || l.Idx < 0 {
		return "", fmt.Errorf("letter %d of mailing %q: not a name for a file", l.Idx, m.EPID)
	}
	dir := filepath.Join(p.cfg.WorkDir, "letters", m.EPID)
	final := filepath.Join(dir, strconv.Itoa(l.Idx)+".pdf")
	unlock := p.lockLetter(m.EPID, l.Idx)
	defer unlock()
	key := letterKey(m.EPID, l.Idx)
	if p.cfg.Blobs != nil {
		path, err := p.cfg.Blobs.LocalPath(ctx, key)
		if err == nil {
			return path, nil
		}
		if !errors.Is(err, blob.ErrNotFound) {
			return "", err
		}
	}
	if _, err := os.Stat(final); errors.Is(err, fs.ErrNotExist) {
		// made by no call yet (with a store: a file here is one this
		// node made and then crashed before putting)
		if err := p.makeLetterPDF(ctx, dir, final, m, l, password); err != nil {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	if p.cfg.Blobs == nil {
		return final, nil
	}
	if _, err := p.cfg.Blobs.Stat(ctx, key); errors.Is(err, blob.ErrNotFound) {
		if err := putFile(ctx, p.cfg.Blobs, key, final); err != nil {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	path, err := p.cfg.Blobs.LocalPath(ctx, key)
	if err != nil {
		return "", err
	}
	if path != final { // (a store kept in the work folder would be the file itself)
		if err := os.Remove(final); err != nil {
			return "", err
		}
	}
	return path, nil
}

// makeLetterPDF writes the letter's PDF into final (see LetterPDF).
func (p *Producer) makeLetterPDF(ctx context.Context, dir, final string, m *pipeline.Mailing, l *pipeline.Letter, password string) error {
	if password != "" {
		if why := pdf.CheckPassword(password); why != "" {
			return &docError{why}
		}
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	plain := final + ".plain.tmp"
	pages, err := p.writeLetterPDF(ctx, plain, m, l)
	if err != nil {
		os.Remove(plain)
		return err
	}
	defer os.Remove(plain)
	out := plain
	if password != "" {
		out = final + ".tmp"
		if err := p.encrypt(ctx, plain, out, password, pages); err != nil {
			os.Remove(out)
			return err
		}
	}
	if err := syncFile(out); err != nil { // qpdf's output; the plain one is synced
		return err
	}
	if err := os.Rename(out, final); err != nil {
		return err
	}
	return durable.SyncDir(dir)
}

// ExistingLetterPDF returns the path of a letter's PDF when LetterPDF
// has made it, without making it: what a link serves once the letter's
// password is no longer kept (making it then would give a PDF without
// the password). A PDF not made is an error wrapping fs.ErrNotExist;
// with an object store, the path is the object's copy on this node, and
// the store's failures are errors of their own (worth a retry).
func (p *Producer) ExistingLetterPDF(ctx context.Context, epid string, idx int) (string, error) {
	if !plainEPID(epid) || idx < 0 {
		return "", fmt.Errorf("letter %d of mailing %.80q: %w", idx, epid, fs.ErrNotExist)
	}
	if p.cfg.Blobs != nil {
		path, err := p.cfg.Blobs.LocalPath(ctx, letterKey(epid, idx))
		if errors.Is(err, blob.ErrNotFound) {
			return "", fmt.Errorf("letter %d of mailing %s: %w", idx, epid, fs.ErrNotExist)
		}
		return path, err
	}
	path := filepath.Join(p.cfg.WorkDir, "letters", epid, strconv.Itoa(idx)+".pdf")
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("letter %d of mailing %s: %w", idx, epid, fs.ErrNotExist)
	}
	return path, nil
}

// RemoveLetterPDFs deletes the letters' PDFs of a mailing (when its
// documents are purged): in the object store too, when there is one.
func (p *Producer) RemoveLetterPDFs(epid string) error {
	if !plainEPID(epid) {
		return fmt.Errorf("bad EPID %q", epid)
	}
	if p.cfg.Blobs != nil {
		ctx := context.Background()
		var keys []string
		if err := p.cfg.Blobs.List(ctx, lettersPrefix(epid), func(info blob.Info) error {
			keys = append(keys, info.Key)
			return nil
		}); err != nil {
			return err
		}
		for _, k := range keys {
			if err := p.cfg.Blobs.Delete(ctx, k); err != nil {
				return err
			}
		}
	}
	return os.RemoveAll(filepath.Join(p.cfg.WorkDir, "letters", epid))
}

// plainEPID reports whether an EPID can name a folder: 1 to 64 letters,
// digits, '-' or '_' (never "..", never a path).
func plainEPID(epid string) bool {
	if epid == "" || len(epid) > 64 {
		return false
	}
	for i := 0; i < len(epid); i++ {
		c := epid[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// letterLocks serialise LetterPDF for one letter (the send stage and a
// link opened at once), so that its temporary files are its own: a
// fixed set of locks, a letter's chosen by a hash.
var (
	letterLocks [64]sync.Mutex
	lockSeed    = maphash.MakeSeed()
)

func (p *Producer) lockLetter(epid string, idx int) func() {
	var h maphash.Hash
	h.SetSeed(lockSeed)
	h.WriteString(p.cfg.WorkDir)
	h.WriteString(epid)
	h.WriteString(strconv.Itoa(idx))
	mu := &letterLocks[h.Sum64()%uint64(len(letterLocks))]
	mu.Lock()
	return mu.Unlock
}

// writeLetterPDF writes the letter's pages into path (synced) and
// returns how many.
func (p *Producer) writeLetterPDF(ctx context.Context, path string, m *pipeline.Mailing, l *pipeline.Letter) (int, error) {
	lp, err := plan(m, l)
	if err != nil {
		return 0, err
	}
	out, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o640)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	k := &composer{p: p, ctx: ctx, m: m, w: pdf.NewWriter(out), sources: map[string]*source{}}
	defer func() {
		for _, s := range k.sources {
			s.f.Close()
		}
	}()
	first := true
	for _, part := range lp.parts {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		imp, err := k.open(part.file.Name)
		if err != nil {
			return 0, k.letterErr(err)
		}
		for pg := part.first; pg <= part.last; pg++ {
			f, err := imp.Page(pg)
			if err != nil {
				return 0, k.letterErr(fmt.Errorf("%s page %d: %w", part.file.Name, pg+1, err))
			}
			w, h := f.W, f.H
			if !(w > 0 && h > 0) {
				w, h = a4W, a4H
			}
			c := &k.c
			c.Form(f.Ref)
			if first && len(l.Masks) > 0 {
				c.Save()
				whiteAreas(c, h, l.Masks)
				c.Restore()
			}
			first = false
			k.w.AddPage(w, h, c)
			c.Reset()
		}
	}
	if err := k.w.Close(); err != nil {
		return 0, err
	}
	if err := out.Sync(); err != nil {
		return 0, err
	}
	return lp.pages, out.Close()
}

// letterErr tells the letter's problems (its documents cannot be read)
// from the server's (cancelled, the writer failed, a converter missing).
func (k *composer) letterErr(err error) error {
	if k.ctx.Err() != nil || k.w.Err() != nil || errors.Is(err, sandbox.ErrMissing) || DocumentError(err) || isStoreError(err) {
		return err
	}
	return &docError{err.Error()}
}

// qpdfJob is the part of qpdf's job JSON (qpdf --job-json-help) that
// encrypts a file.
type qpdfJob struct {
	InputFile    string `json:"inputFile"`
	OutputFile   string `json:"outputFile"`
	WarningExit0 string `json:"warningExit0"`
	Encrypt      struct {
		UserPassword  string   `json:"userPassword"`
		OwnerPassword string   `json:"ownerPassword"`
		Bits256       struct{} `json:"256bit"`
	} `json:"encrypt"`
}

// encrypt writes in encrypted with AES-256 (revision 6) to out, by qpdf:
// the job, passwords included, is read from its standard input, a file
// that lives in memory only (secretFile).
func (p *Producer) encrypt(ctx context.Context, in, out, password string, pages int) error {
	owner := make([]byte, 32)
	if _, err := rand.Read(owner); err != nil {
		return err
	}
	var job qpdfJob
	job.InputFile, job.OutputFile = in, out
	job.Encrypt.UserPassword, job.Encrypt.OwnerPassword = password, hex.EncodeToString(owner)
	data, err := json.Marshal(job)
	if err != nil {
		return err
	}
	f, err := secretFile(filepath.Dir(out), data)
	clear(data)
	if err != nil {
		return err
	}
	defer f.Close()
	lim := p.cfg.toolLimits(pages)
	lim.Stdin = f
	if _, err := sandbox.Run(ctx, lim, filepath.Dir(out), "qpdf", "--job-json-file=/dev/stdin"); err != nil {
		return fmt.Errorf("encrypting the letter's PDF: %w", err)
	}
	return nil
}

// secretTemp is secretFile's fallback: a temporary file of dir, mode
// 0600, whose name is removed before data is written into it.
func secretTemp(dir string, data []byte) (*os.File, error) {
	f, err := os.CreateTemp(dir, ".secret-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return fillSecret(f, data)
}

func fillSecret(f *os.File, data []byte) (*os.File, error) {
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
