package library

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/internal/testdoc"
	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/internal/tests3"
	"github.com/lodge-mail/lodge/pgdb"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testpg.Stop()
	tests3.Stop()
	os.Exit(code)
}

func openLib(t *testing.T, dir string, opt Options) *Library {
	t.Helper()
	opt.InProcess = true
	if opt.Now == nil {
		opt.Now = func() time.Time { return time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) }
	}
	l, err := Open(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// files lists an account directory's names.
func files(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// rig is a library's storage under test: node opens a library over it
// (each call another node, over the same storage); stored lists the
// blobs kept for an account (its documents' Blob, once each, if all is
// well), sorted; leftovers what a finished Put or Delete must not leave
// (temporary files, loose objects).
type rig struct {
	node      func(opt Options) *Library
	stored    func(account string) []string
	leftovers func() []string
	db        *pgdb.DB // shared: the database
}

// backends is the table of storages every library test runs over.
var backends = []struct {
	name string
	new  func(t *testing.T) *rig
}{
	{"local", func(t *testing.T) *rig {
		dir := t.TempDir()
		return &rig{
			node: func(opt Options) *Library { return openLib(t, dir, opt) },
			stored: func(account string) []string {
				var out []string
				ents, _ := os.ReadDir(filepath.Join(dir, account))
				for _, e := range ents {
					if e.Name() != indexName {
						out = append(out, e.Name())
					}
				}
				return out
			},
			leftovers: func() []string {
				var out []string
				filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
					if err == nil && e.Type().IsRegular() && e.Name() != indexName && !strings.HasSuffix(e.Name(), ".blob") {
						out = append(out, p)
					}
					return nil
				})
				return out
			},
		}
	}},
	{"shared", func(t *testing.T) *rig {
		root := t.TempDir()
		return sharedBackend(t, func() blob.Store {
			bs, err := blob.NewLocal(root)
			if err != nil {
				t.Fatal(err)
			}
			return bs
		}, func() []string {
			var out []string
			filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
				if err == nil && strings.HasPrefix(e.Name(), ".tmp-") {
					out = append(out, p)
				}
				return nil
			})
			return out
		})
	}},
	{"shared-s3", func(t *testing.T) *rig {
		srv := tests3.Shared(t)
		bucket := tests3.NewBucket(t)
		return sharedBackend(t, func() blob.Store {
			bs, err := blob.NewS3(context.Background(), blob.S3Config{Bucket: bucket, Endpoint: srv.Endpoint(),
				AccessKey: srv.AccessKey(), SecretKey: srv.SecretKey(), CacheDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			return bs
		}, func() []string {
			c, err := srv.Client()
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.ListMultipartUploads(context.Background(), bucket, "", "", "", "", 1000)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, u := range res.Uploads {
				out = append(out, "upload of "+u.Key)
			}
			return out
		})
	}},
}

// sharedBackend is a rig of libraries on one database and the blob store
// newStore opens (one value per node); storeLeftovers lists what the
// store's failed Puts may leave.
func sharedBackend(t *testing.T, newStore func() blob.Store, storeLeftovers func() []string) *rig {
	url := testpg.NewDatabase(t)
	tmpDir := t.TempDir()
	r := &rig{}
	openDB := func() *pgdb.DB {
		db, err := pgdb.Open(context.Background(), pgdb.Config{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		return db
	}
	r.db = openDB()
	bs := newStore()
	r.node = func(opt Options) *Library {
		t.Helper()
		opt.InProcess = true
		if opt.Now == nil {
			opt.Now = func() time.Time { return time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) }
		}
		opt.TempDir = tmpDir
		l, err := OpenShared(openDB(), newStore(), opt)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	r.stored = func(account string) []string {
		var out []string
		err := bs.List(context.Background(), "library/"+account+"/", func(i blob.Info) error {
			out = append(out, strings.TrimPrefix(i.Key, "library/"+account+"/"))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	r.leftovers = func() []string {
		var out []string
		for _, n := range files(t, tmpDir) {
			out = append(out, "temp "+n)
		}
		out = append(out, storeLeftovers()...)
		rows, err := r.db.Pool.Query(context.Background(), `SELECT blob FROM library_loose`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k string
			rows.Scan(&k)
			out = append(out, "loose "+k)
		}
		return out
	}
	return r
}

// forEach runs test over every backend, each with storage of its own.
func forEach(t *testing.T, test func(t *testing.T, r *rig)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { test(t, b.new(t)) })
	}
}

// TestPutHostile: names and contents a customer may send; each refused
// with a message and nothing stored, or accepted with its kind and pages.
func TestPutHostile(t *testing.T) { forEach(t, testPutHostile) }

func testPutHostile(t *testing.T, r *rig) {
	l := r.node(Options{MaxBytes: 64 << 10})
	f := func(name string, body []byte, want string) {
		t.Helper()
		d, err := l.Put("ABC12345", "jo", name, int64(len(body)), bytes.NewReader(body))
		if want == "" || strings.HasPrefix(want, "pages ") {
			if err != nil {
				t.Errorf("Put(%q): %v", name, err)
				return
			}
			sum := sha1.Sum(body)
			if got := "pages " + string(rune('0'+d.Pages)); got != want || d.Name != name || d.Size != int64(len(body)) || d.SHA1 != hex.EncodeToString(sum[:]) || d.By != "jo" {
				t.Errorf("Put(%q) = %+v, want %s", name, d, want)
			}
			return
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Put(%q): %v, want an error with %q", name, err, want)
		}
		var re *RefusedError
		if !errors.As(err, &re) && !errors.Is(err, ErrTooLarge) {
			t.Errorf("Put(%q): %T is neither refused nor too large", name, err)
		}
		if _, err := l.Get("ABC12345", name); !errors.Is(err, ErrNotFound) {
			t.Errorf("refused %q stored: %v", name, err)
		}
	}
	pdf := testdoc.PDF(2, 0)
	// names: upload's rules
	f("", pdf, "a file name is required")
	f("..", pdf, "a file name is required")
	f("../x.pdf", pdf, "contains a path")
	f(`a\b.pdf`, pdf, "contains a path")
	f("/etc/x.pdf", pdf, "contains a path")
	f("C:x.pdf", pdf, "names a drive")
	f("a\x00.pdf", pdf, "control characters")
	f("a\nb.pdf", pdf, "control characters")
	f("\xff.pdf", pdf, "not UTF-8")
	f(strings.Repeat("a", 252)+".pdf", pdf, "longer than 255 bytes")
	f("noext", pdf, "has no extension")
	f("x.exe", pdf, "not accepted")
	f("m.json", []byte(`{"letters":[]}`), "the library keeps documents")
	f("a.zip", pdf, "the library keeps documents")
	// contents: what the extension says, and countable
	f("empty.pdf", nil, "is empty")
	f("fake.pdf", []byte("<html><script>alert(1)</script>"), "the extension says PDF")
	f("ps.pdf", testdoc.PostScript(1), "the extension says PDF")
	f("pdf.ps", pdf, "the extension says PostScript")
	f("zip.xps", zipNotXPS(t), "not in the package")
	f("broken.pdf", []byte("%PDF-1.4\nnot really\n"), "broken.pdf:")
	f("big.pdf", testdoc.PDF(1, 70<<10), "larger than the limit")
	// accepted
	f("letter.pdf", pdf, "pages 2")
	f("Statement March 2026 (final) ünï.pdf", testdoc.PDF(3, 0), "pages 3")
	f("<iframe src=javascript:alert(1)>.pdf", testdoc.PDF(1, 0), "pages 1")
	f("flyer.ps", testdoc.PostScript(4), "pages 4")
	f("form.XPS", testdoc.XPS(2), "pages 2")
	docs, err := l.List("ABC12345")
	if err != nil || len(docs) != 5 {
		t.Fatalf("List: %d %v", len(docs), err)
	}
	// only the documents' blobs are left
	if left := r.leftovers(); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	var want []string
	for _, d := range docs {
		want = append(want, d.Blob)
	}
	if got := r.stored("ABC12345"); !sameSet(got, want) {
		t.Errorf("stored %v, documents' %v", got, want)
	}
	// names no document can have are not found (and never reach a
	// database)
	for _, name := range []string{"", "a\x00.pdf", "\xff.pdf", "../ABC12345/letter.pdf", strings.Repeat("x", 300) + ".pdf", "x.exe"} {
		if _, err := l.Get("ABC12345", name); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%q): %v", name, err)
		}
		if _, _, err := l.Read("ABC12345", name); !errors.Is(err, ErrNotFound) {
			t.Errorf("Read(%q): %v", name, err)
		}
		if err := l.Delete("ABC12345", name); !errors.Is(err, ErrNotFound) {
			t.Errorf("Delete(%q): %v", name, err)
		}
	}
	if pd, err := l.PortalDocs("ABC12345", []string{"a\x00.pdf", "\xff.pdf", "letter.pdf"}); err != nil || len(pd) != 1 {
		t.Errorf("PortalDocs with hostile names: %v %v", pd, err)
	} else {
		pd[0].Body.Close()
	}
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// zipNotXPS is a ZIP named .xps that is no XPS package: refused when its
// pages are counted.
func zipNotXPS(t *testing.T) []byte {
	x := testdoc.XPS(1)
	// an XPS package without its document sequence is a plain ZIP
	return bytes.Replace(x, []byte("FixedDocSeq.fdseq"), []byte("FixedDocSeq.other"), -1)
}

// TestPutReplaceDeleteAndAccounts: a name is unique per account (a new
// upload replaces the old, whose blob goes); another account's document
// is not found by Get, Read, PortalDocs or Delete; deleted documents go
// with their blob.
func TestPutReplaceDeleteAndAccounts(t *testing.T) { forEach(t, testPutReplaceDeleteAndAccounts) }

func testPutReplaceDeleteAndAccounts(t *testing.T, r *rig) {
	l := r.node(Options{})
	put := func(account, name string, body []byte) Document {
		t.Helper()
		d, err := l.Put(account, "jo", name, -1, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	put("ABC12345", "a.pdf", testdoc.PDF(1, 0))
	d := put("ABC12345", "a.pdf", testdoc.PDF(2, 0))
	put("XYZ99999", "eve.pdf", testdoc.PDF(1, 0))
	if docs, _ := l.List("ABC12345"); len(docs) != 1 || docs[0] != d {
		t.Fatalf("List after a replace: %+v", docs)
	}
	if got := r.stored("ABC12345"); !slices.Equal(got, []string{d.Blob}) {
		t.Fatalf("stored after a replace: %v", got)
	}
	// another account's
	if _, err := l.Get("ABC12345", "eve.pdf"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if _, _, err := l.Read("ABC12345", "eve.pdf"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if pd, err := l.PortalDocs("ABC12345", []string{"eve.pdf", "a.pdf", "../XYZ99999/eve.pdf"}); err != nil || len(pd) != 1 || pd[0].Name != "a.pdf" || pd[0].Pages != 2 {
		t.Fatalf("PortalDocs: %+v %v", pd, err)
	} else {
		pd[0].Body.Close()
	}
	if err := l.Delete("ABC12345", "eve.pdf"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	for _, acct := range []string{"../XYZ99999", "", "xyz99999/..", "."} {
		if _, err := l.Get(acct, "eve.pdf"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("account %q: %v", acct, err)
		}
		if _, err := l.Put(acct, "jo", "x.pdf", -1, bytes.NewReader(testdoc.PDF(1, 0))); err == nil {
			t.Fatalf("Put in account %q", acct)
		}
	}
	// a document open for reading stays readable after its deletion
	_, fh, err := l.Read("ABC12345", "a.pdf")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if err := l.Delete("ABC12345", "a.pdf"); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(fh); err != nil || !bytes.Equal(b, testdoc.PDF(2, 0)) {
		t.Fatalf("reading a deleted document: %d bytes, %v", len(b), err)
	}
	if got := r.stored("ABC12345"); len(got) != 0 {
		t.Fatalf("stored after a delete: %v", got)
	}
	if left := r.leftovers(); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	if err := l.Delete("ABC12345", "a.pdf"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
}

// TestMaxDocuments: past Options.MaxDocuments a new name is refused
// before any of its body is read; replacing a document still works.
func TestMaxDocuments(t *testing.T) { forEach(t, testMaxDocuments) }

func testMaxDocuments(t *testing.T, r *rig) {
	l := r.node(Options{MaxDocuments: 2})
	for _, n := range []string{"a.pdf", "b.pdf"} {
		if _, err := l.Put("ABC12345", "jo", n, -1, bytes.NewReader(testdoc.PDF(1, 0))); err != nil {
			t.Fatal(err)
		}
	}
	read := &countReader{r: bytes.NewReader(testdoc.PDF(1, 0))}
	if _, err := l.Put("ABC12345", "jo", "c.pdf", -1, read); !errors.Is(err, ErrFull) || read.n != 0 {
		t.Fatalf("a third document: %v, %d bytes read", err, read.n)
	}
	if _, err := l.Put("ABC12345", "jo", "a.pdf", -1, bytes.NewReader(testdoc.PDF(2, 0))); err != nil {
		t.Fatalf("replacing in a full library: %v", err)
	}
	if _, err := l.Put("XYZ99999", "eve", "c.pdf", -1, bytes.NewReader(testdoc.PDF(1, 0))); err != nil {
		t.Fatalf("another account is not full: %v", err)
	}
	// declared too large: refused before reading
	read = &countReader{r: bytes.NewReader(testdoc.PDF(1, 0))}
	if _, err := l.Put("ABC12345", "jo", "a.pdf", DefaultMaxBytes+1, read); !errors.Is(err, ErrTooLarge) || read.n != 0 {
		t.Fatalf("declared too large: %v, %d bytes read", err, read.n)
	}
}

// TestBodyCut: a body whose reading fails (the client's connection cut)
// is a *ReadError and stores nothing; so is one shorter than declared.
func TestBodyCut(t *testing.T) { forEach(t, testBodyCut) }

func testBodyCut(t *testing.T, r *rig) {
	l := r.node(Options{})
	pdf := testdoc.PDF(1, 20<<10)
	cut := io.MultiReader(bytes.NewReader(pdf[:10<<10]), iotest.ErrReader(io.ErrUnexpectedEOF))
	var re *ReadError
	if _, err := l.Put("ABC12345", "jo", "a.pdf", -1, cut); !errors.As(err, &re) {
		t.Fatalf("a cut body: %v", err)
	}
	if _, err := l.Put("ABC12345", "jo", "a.pdf", int64(len(pdf)+1), bytes.NewReader(pdf)); !errors.As(err, &re) {
		t.Fatalf("a body shorter than declared: %v", err)
	}
	if got := r.stored("ABC12345"); len(got) != 0 {
		t.Fatalf("stored: %v", got)
	}
	if left := r.leftovers(); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

type countReader struct {
	r io.Reader
	n int
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestCrashLeftovers: what an interrupted Put or Delete leaves (a
// temporary file, a blob the index does not name, the index's own
// temporary file) is removed by Open; the documents stay.
func TestCrashLeftovers(t *testing.T) {
	dir := t.TempDir()
	l := openLib(t, dir, Options{})
	d, err := l.Put("ABC12345", "a.pdf", "a.pdf", -1, bytes.NewReader(testdoc.PDF(1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	acct := filepath.Join(dir, "ABC12345")
	for _, n := range []string{".tmp-123", "0123456789abcdef01234567.blob", indexName + ".tmp"} {
		if err := os.WriteFile(filepath.Join(acct, n), []byte("%PDF-half"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	l = openLib(t, dir, Options{})
	if got := files(t, acct); len(got) != 2 || !slices.Contains(got, d.Blob) {
		t.Fatalf("files after Open: %v", got)
	}
	if _, fh, err := l.Read("ABC12345", "a.pdf"); err != nil {
		t.Fatal(err)
	} else {
		fh.Close()
	}
}

// TestConcurrentPuts: uploads and deletes of one account at once (on two
// nodes, when shared) leave an index naming exactly the blobs stored.
func TestConcurrentPuts(t *testing.T) { forEach(t, testConcurrentPuts) }

func testConcurrentPuts(t *testing.T, r *rig) {
	l := r.node(Options{})
	l2 := l
	if r.db != nil {
		l2 = r.node(Options{})
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := string(rune('a'+i%3)) + ".pdf"
			l := l
			if i%2 == 1 {
				l = l2
			}
			if _, err := l.Put("ABC12345", "jo", name, -1, bytes.NewReader(testdoc.PDF(1+i%3, 0))); err != nil {
				t.Error(err)
			}
			if i%4 == 0 {
				if err := l.Delete("ABC12345", name); err != nil && !errors.Is(err, ErrNotFound) {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	docs, err := l.List("ABC12345")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, d := range docs {
		want = append(want, d.Blob)
	}
	if got := r.stored("ABC12345"); !sameSet(got, want) {
		t.Fatalf("stored %v, index names %v", got, want)
	}
	if left := r.leftovers(); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}
