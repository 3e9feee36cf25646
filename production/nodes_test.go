package production

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/internal/testdoc/readback"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/internal/tests3"
	"github.com/lodge-mail/lodge/pipeline"
)

// sharedStores are the ways two nodes share an object store: one
// blob.Local (as two processes on one machine would), or two S3 clients
// of one bucket, each with its own cache (as two machines would).
var sharedStores = []struct {
	name   string
	stores func(t *testing.T) (a, b blob.Store)
}{
	{"local", func(t *testing.T) (blob.Store, blob.Store) {
		s, err := blob.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s, s
	}},
	{"s3", func(t *testing.T) (blob.Store, blob.Store) {
		bucket := tests3.NewBucket(t)
		a, _ := newS3(t, bucket)
		b, _ := newS3(t, bucket)
		return a, b
	}},
}

// twoNodes returns two producers, each over its own data folder, that
// share one object store.
func twoNodes(t *testing.T, stores func(t *testing.T) (a, b blob.Store)) (a, b *Producer) {
	t.Helper()
	testenv.Tool(t, "pdftotext")
	sa, sb := stores(t)
	var err error
	if a, err = New(Config{DataDir: t.TempDir(), Blobs: sa}, nil); err != nil {
		t.Fatal(err)
	}
	if b, err = New(Config{DataDir: t.TempDir(), Blobs: sb}, nil); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// readAll reads r whole into a file of its own.
func readAll(t *testing.T, r io.ReadCloser, size int64) string {
	t.Helper()
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil || int64(len(data)) != size {
		t.Fatalf("read %d bytes of %d: %v", len(data), size, err)
	}
	path := filepath.Join(t.TempDir(), "read.pdf")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNodesBatch: node A checks and composes a batch of documents that
// are only in the object store, then A is gone with its disk; node B
// serves the batch's PDF and manifest from the store (read back with qpdf
// and poppler), composing it again (A died before the mailroom recorded
// it) puts nothing again, and B's printer reads it too (TestPrintStage).
func TestNodesBatch(t *testing.T) {
	for _, ss := range sharedStores {
		t.Run(ss.name, func(t *testing.T) {
			a, b := twoNodes(t, ss.stores)
			ctx := context.Background()
			ml := newMailing(t, a, "E-NODES", pipeline.Production{Duplex: true})
			ml.doc("letters.pdf", mailpdf.Page{Address: mailpdf.Address(1), Text: "Dear Customer 1"}, mailpdf.Page{Text: "Page two"},
				mailpdf.Page{Address: mailpdf.Address(2), Text: "Dear Customer 2"})
			ml.letter(mailpdf.Address(1), "letters.pdf:0-1")
			ml.letter(mailpdf.Address(2), "letters.pdf:2-2")
			bt := ml.compose(a) // checks the store's copy against A's hot folder
			bt.checkLetters()
			batch := pipeline.Batch{ID: bt.man.Batch, EPID: "E-NODES", Dir: filepath.Join(a.cfg.HotFolder, bt.man.Batch)}
			stored := map[string]blob.Info{}
			for _, name := range batchFiles {
				info, err := b.cfg.Blobs.Stat(ctx, BatchKey(batch.ID, name))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				stored[name] = info
			}
			if err := os.RemoveAll(a.cfg.DataDir); err != nil {
				t.Fatal(err)
			}

			if ok, err := b.Batches().Has(ctx, batch, BatchPDF); !ok || err != nil {
				t.Fatalf("B: Has %v %v", ok, err)
			}
			r, size, err := b.Batches().Open(ctx, batch, BatchPDF)
			if err != nil {
				t.Fatal(err)
			}
			path := readAll(t, r, size)
			readback.Check(t, path)
			if n := len(readback.Sizes(t, path)); n != 4 {
				t.Fatalf("B's batch PDF has %d pages, want 4 (2 duplex sheets)", n)
			}
			for pg, want := range map[int]string{1: "Dear Customer 1", 2: "Page two", 3: "Dear Customer 2"} {
				if got := readback.Text(t, path, pg); !strings.Contains(got, want) {
					t.Errorf("B's batch PDF page %d reads %q, want %q", pg, got, want)
				}
			}
			r, size, err = b.Batches().Open(ctx, batch, ManifestJSON)
			if err != nil {
				t.Fatal(err)
			}
			var man Manifest
			if err := json.Unmarshal(readFile(t, readAll(t, r, size)), &man); err != nil {
				t.Fatal(err)
			}
			if man.Batch != batch.ID || len(man.Letters) != 2 || man.Sheets != 2 || man.Letters[1].FirstSheet != 2 {
				t.Fatalf("B's manifest: %+v", man)
			}
			if _, _, err := b.Batches().Open(ctx, pipeline.Batch{ID: "no-such-batch"}, BatchPDF); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a batch never composed: %v", err)
			}
			if _, _, err := b.Batches().Open(ctx, batch, "../x"); err == nil || errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a name that is not a batch file: %v", err)
			}
			// without the store, B has no such folder
			if _, _, err := (Batches{}).Open(ctx, batch, BatchPDF); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("the hot folder of a node gone: %v", err)
			}

			// B composes the batch again (its stage ran again after A
			// died): its own hot folder gets it; the store's objects stay
			var ls []pipeline.Letter
			for _, l := range ml.letters {
				ls = append(ls, *l)
			}
			again := pipeline.Batch{ID: batch.ID, EPID: "E-NODES", Duplex: true, Created: man.Created, Letters: []int{0, 1}}
			dir, err := b.Compose(ctx, &ml.m, &again, ls)
			if err != nil {
				t.Fatal(err)
			}
			if dir != filepath.Join(b.cfg.HotFolder, batch.ID) {
				t.Fatalf("B composed into %s", dir)
			}
			for _, name := range batchFiles {
				info, err := b.cfg.Blobs.Stat(ctx, BatchKey(batch.ID, name))
				if err != nil || !info.ModTime.Equal(stored[name].ModTime) || info.Size != stored[name].Size {
					t.Errorf("%s after B composed again: %+v %v, was %+v", name, info, err, stored[name])
				}
			}
		})
	}
}

// TestNodesLetterPDF: a letter's PDF made on node A is served by node B
// (and the other way), encrypted with the password of the first call
// whichever node asks later with whatever password; the two nodes making
// one letter's PDF at once end with one object that both serve; what
// RemoveLetterPDFs deletes on one node is gone for both.
func TestNodesLetterPDF(t *testing.T) {
	testenv.Tool(t, "qpdf")
	testenv.Tool(t, "gs")
	for _, ss := range sharedStores {
		t.Run(ss.name, func(t *testing.T) {
			a, b := twoNodes(t, ss.stores)
			ctx := context.Background()
			ml := emailMailing(t, a)
			ml.letter(nil, "terms.pdf")
			ml.letter(nil, "b.ps:1-1")
			epid := ml.m.EPID

			pathA, err := a.LetterPDF(ctx, &ml.m, ml.letters[0], "first password")
			if err != nil {
				t.Fatal(err)
			}
			checkEncrypted(t, pathA, "first password")
			made := readFile(t, pathA)
			if err := os.RemoveAll(a.cfg.DataDir); err != nil {
				t.Fatal(err)
			}
			pathB, err := b.ExistingLetterPDF(ctx, epid, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(readFile(t, pathB), made) {
				t.Fatal("B's letter PDF is not the one A made")
			}
			checkEncrypted(t, pathB, "first password")
			// the first call decided: B asked later with another password,
			// or none, gets the same file
			for _, pw := range []string{"another password", ""} {
				p, err := b.LetterPDF(ctx, &ml.m, ml.letters[0], pw)
				if err != nil || !bytes.Equal(readFile(t, p), made) {
					t.Fatalf("B's LetterPDF with %q: %s %v: not the file A made", pw, p, err)
				}
			}
			if got, err := b.ExistingLetterPDF(ctx, epid, 1); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a letter PDF never made: %s %v", got, err)
			}

			// made on B (PostScript converted on B), served on a new A
			a, _ = New(Config{DataDir: t.TempDir(), Blobs: a.cfg.Blobs}, nil)
			if _, err := b.LetterPDF(ctx, &ml.m, ml.letters[3], ""); err != nil {
				t.Fatal(err)
			}
			p, err := a.ExistingLetterPDF(ctx, epid, 3)
			if err != nil {
				t.Fatal(err)
			}
			readback.Check(t, p)
			if got := readback.Text(t, p, 1); !strings.Contains(got, "Page two: an image below") {
				t.Errorf("A reads B's letter PDF as %q", got)
			}

			// both nodes make letter 2's at once, with its password
			paths := make([]string, 2)
			errs := make([]error, 2)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, n := range []*Producer{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					paths[i], errs[i] = n.LetterPDF(ctx, &ml.m, ml.letters[2], "race")
				}()
			}
			close(start)
			wg.Wait()
			if errs[0] != nil || errs[1] != nil {
				t.Fatal(errs)
			}
			pa, err := a.ExistingLetterPDF(ctx, epid, 2)
			if err != nil {
				t.Fatal(err)
			}
			pb, err := b.ExistingLetterPDF(ctx, epid, 2)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(readFile(t, pa), readFile(t, pb)) {
				t.Fatal("after the race the nodes serve different files")
			}
			checkEncrypted(t, pa, "race")
			if keys := storeKeys(t, a.cfg.Blobs, "letters/"); strings.Join(keys, " ") != "letters/EPIDELEC/0.pdf letters/EPIDELEC/2.pdf letters/EPIDELEC/3.pdf" {
				t.Fatalf("letters' objects: %q", keys)
			}
			for _, n := range []*Producer{a, b} {
				if left, _ := filepath.Glob(filepath.Join(n.cfg.WorkDir, "letters", epid, "*")); len(left) != 0 {
					t.Errorf("left in a node's work folder: %q", left)
				}
			}

			// purged on A: gone for B
			if err := a.RemoveLetterPDFs(epid); err != nil {
				t.Fatal(err)
			}
			for i := range 4 {
				if got, err := b.ExistingLetterPDF(ctx, epid, i); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("letter %d after RemoveLetterPDFs on the other node: %s %v", i, got, err)
				}
			}
			if keys := storeKeys(t, b.cfg.Blobs, "letters/"); len(keys) != 0 {
				t.Errorf("letters' objects after RemoveLetterPDFs: %q", keys)
			}
		})
	}
}

// TestNodesDocumentGone: a document missing from the object store holds
// its letters with the reason (Inspect), fails the letter in Compose
// (LetterError) and is the letter's problem for its PDF (DocumentError).
func TestNodesDocumentGone(t *testing.T) {
	for _, ss := range sharedStores {
		t.Run(ss.name, func(t *testing.T) {
			a, _ := twoNodes(t, ss.stores)
			ctx := context.Background()
			ml := newMailing(t, a, "E-GONE", pipeline.Production{})
			ml.doc("letter.pdf", mailpdf.Page{Address: mailpdf.Address(1), Text: "Dear Customer 1"})
			ml.letter(mailpdf.Address(1), "letter.pdf")
			ml.remove(ml.m.Files[0])
			ml.m.Letters = 1
			if err := a.Inspect(ctx, &ml.m, ml.letters); err != nil {
				t.Fatal(err)
			}
			if l := ml.letters[0]; l.Status != pipeline.Held || l.Hold != pipeline.HoldDocument || !strings.Contains(l.HoldReason, "letter.pdf is no longer stored") {
				t.Fatalf("letter: %s %s %q", l.Status, l.Hold, l.HoldReason)
			}
			l := *ml.letters[0]
			l.Status, l.Pages, l.Sheets = pipeline.Received, 1, 1
			_, err := a.Compose(ctx, &ml.m, &pipeline.Batch{ID: "B-GONE", EPID: "E-GONE", Letters: []int{0}}, []pipeline.Letter{l})
			var le *pipeline.LetterError
			if !errors.As(err, &le) || le.Idx != 0 {
				t.Fatalf("Compose: %v, want the letter's error", err)
			}
			if _, err := a.LetterPDF(ctx, &ml.m, &l, ""); !DocumentError(err) {
				t.Fatalf("LetterPDF: %v, want a document error", err)
			}
		})
	}
}

// TestNodesStoreDown: while the object store does not answer, nothing is
// the letters' fault: Inspect, Compose and LetterPDF fail (their stage is
// retried), no letter is held; when it is back they succeed.
func TestNodesStoreDown(t *testing.T) {
	srv := tests3.Shared(t)
	a, _ := twoNodes(t, sharedStores[1].stores)
	ctx := context.Background()
	ml := newMailing(t, a, "E-DOWN", pipeline.Production{})
	ml.doc("letter.pdf", mailpdf.Page{Address: mailpdf.Address(1), Text: "Dear Customer 1"})
	ml.letter(mailpdf.Address(1), "letter.pdf")
	ml.m.Letters = 1
	srv.Down()
	up := sync.OnceFunc(func() {
		if err := srv.Up(); err != nil {
			t.Fatal(err)
		}
	})
	t.Cleanup(up)
	// the client retries: each call is bounded
	bounded := func() context.Context {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		t.Cleanup(cancel)
		return c
	}
	if err := a.Inspect(bounded(), &ml.m, ml.letters); err == nil || DocumentError(err) {
		t.Fatalf("Inspect with the store down: %v, want the server's error", err)
	}
	if l := ml.letters[0]; l.Status != pipeline.Received {
		t.Fatalf("Inspect with the store down held the letter: %s %q", l.Status, l.HoldReason)
	}
	l := *ml.letters[0]
	l.Pages, l.Sheets = 1, 1
	_, err := a.Compose(bounded(), &ml.m, &pipeline.Batch{ID: "B-DOWN", EPID: "E-DOWN", Letters: []int{0}}, []pipeline.Letter{l})
	var le *pipeline.LetterError
	if err == nil || errors.As(err, &le) {
		t.Fatalf("Compose with the store down: %v, want the server's error", err)
	}
	if _, err := a.LetterPDF(bounded(), &ml.m, &l, ""); err == nil || DocumentError(err) {
		t.Fatalf("LetterPDF with the store down: %v, want the server's error", err)
	}
	up()
	if err := a.Inspect(ctx, &ml.m, ml.letters); err != nil || ml.letters[0].Status != pipeline.Received {
		t.Fatalf("Inspect with the store back: %v %s %q", err, ml.letters[0].Status, ml.letters[0].HoldReason)
	}
	if _, err := a.Compose(ctx, &ml.m, &pipeline.Batch{ID: "B-DOWN", EPID: "E-DOWN", Letters: []int{0}}, []pipeline.Letter{*ml.letters[0]}); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.Batches().Has(ctx, pipeline.Batch{ID: "B-DOWN"}, BatchPDF); !ok || err != nil {
		t.Fatalf("the batch is not in the store: %v %v", ok, err)
	}
}
