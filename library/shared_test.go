package library

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/internal/testdoc"
	"github.com/lodge-mail/lodge/internal/tests3"
)

// forEachShared runs test over the shared backends.
func forEachShared(t *testing.T, test func(t *testing.T, r *rig)) {
	for _, b := range backends {
		if strings.HasPrefix(b.name, "shared") {
			t.Run(b.name, func(t *testing.T) { test(t, b.new(t)) })
		}
	}
}

func readAll(t *testing.T, rc io.ReadCloser) []byte {
	t.Helper()
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSharedTwoNodes: a document uploaded on one node is listed, read and
// given to end_session (PortalDocs) by another; a replace on that one is
// read by the first; a delete on the first is seen by the second; the
// account's limit holds across nodes.
func TestSharedTwoNodes(t *testing.T) { forEachShared(t, testSharedTwoNodes) }

func testSharedTwoNodes(t *testing.T, r *rig) {
	a, b := r.node(Options{MaxDocuments: 2}), r.node(Options{MaxDocuments: 2})
	two, three := testdoc.PDF(2, 0), testdoc.PDF(3, 0)
	d, err := a.Put("ABC12345", "jo", "terms.pdf", int64(len(two)), bytes.NewReader(two))
	if err != nil {
		t.Fatal(err)
	}
	if docs, err := b.List("ABC12345"); err != nil || len(docs) != 1 || docs[0] != d {
		t.Fatalf("B lists %+v %v, want %+v", docs, err, d)
	}
	if got, err := b.Get("ABC12345", "terms.pdf"); err != nil || got != d {
		t.Fatalf("B gets %+v %v", got, err)
	}
	got, rc, err := b.Read("ABC12345", "terms.pdf")
	if err != nil || got != d || !bytes.Equal(readAll(t, rc), two) {
		t.Fatalf("B reads %+v %v", got, err)
	}
	pd, err := b.PortalDocs("ABC12345", []string{"terms.pdf", "other.pdf"})
	if err != nil || len(pd) != 1 || pd[0].Pages != 2 || pd[0].SHA1 != d.SHA1 || pd[0].By != "jo" || !bytes.Equal(readAll(t, pd[0].Body), two) {
		t.Fatalf("B's PortalDocs: %+v %v", pd, err)
	}
	// B replaces, A reads the new one
	d2, err := b.Put("ABC12345", "al", "terms.pdf", -1, bytes.NewReader(three))
	if err != nil {
		t.Fatal(err)
	}
	if got, rc, err := a.Read("ABC12345", "terms.pdf"); err != nil || got != d2 || !bytes.Equal(readAll(t, rc), three) {
		t.Fatalf("A reads after B's replace: %+v %v", got, err)
	}
	if got := r.stored("ABC12345"); len(got) != 1 || got[0] != d2.Blob {
		t.Fatalf("stored after the replace: %v", got)
	}
	// the limit: one each, the third refused on either node
	if _, err := a.Put("ABC12345", "jo", "b.pdf", -1, bytes.NewReader(two)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put("ABC12345", "jo", "c.pdf", -1, bytes.NewReader(two)); !errors.Is(err, ErrFull) {
		t.Fatalf("a third document on B: %v", err)
	}
	// A deletes, B finds none
	if err := a.Delete("ABC12345", "terms.pdf"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get("ABC12345", "terms.pdf"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("B after A's delete: %v", err)
	}
	if err := b.Delete("ABC12345", "terms.pdf"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("B deletes it again: %v", err)
	}
	if left := r.leftovers(); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// TestSharedReadRace: a document replaced or deleted by another node
// between a reader's reading its row and opening its object is read as
// it now is (the new document), or not found; a document whose object is
// missing for no such reason is an error, not a panic or an empty body.
func TestSharedReadRace(t *testing.T) { forEachShared(t, testSharedReadRace) }

func testSharedReadRace(t *testing.T, r *rig) {
	a, b := r.node(Options{}), r.node(Options{})
	one, two := testdoc.PDF(1, 0), testdoc.PDF(2, 0)
	put := func(body []byte) Document {
		t.Helper()
		d, err := a.Put("ABC12345", "jo", "x.pdf", -1, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// once: the next time B has read a row, A does something
	once := func(fn func()) {
		b.sh.afterRow = func() {
			b.sh.afterRow = nil
			fn()
		}
	}
	put(one)
	var d2 Document
	once(func() { d2 = put(two) })
	got, rc, err := b.Read("ABC12345", "x.pdf")
	if err != nil || got != d2 || !bytes.Equal(readAll(t, rc), two) {
		t.Fatalf("read across a replace: %+v %v", got, err)
	}
	once(func() { put(one) })
	pd, err := b.PortalDocs("ABC12345", []string{"x.pdf"})
	if err != nil || len(pd) != 1 || pd[0].Pages != 1 || !bytes.Equal(readAll(t, pd[0].Body), one) {
		t.Fatalf("PortalDocs across a replace: %+v %v", pd, err)
	}
	once(func() { a.Delete("ABC12345", "x.pdf") })
	if _, _, err := b.Read("ABC12345", "x.pdf"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("read across a delete: %v", err)
	}
	put(one)
	once(func() { a.Delete("ABC12345", "x.pdf") })
	if pd, err := b.PortalDocs("ABC12345", []string{"x.pdf"}); err != nil || len(pd) != 0 {
		t.Fatalf("PortalDocs across a delete: %+v %v", pd, err)
	}
	// an object lost under its row
	d := put(two)
	if err := a.sh.blobs.Delete(context.Background(), objectKey("ABC12345", d.Blob)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Read("ABC12345", "x.pdf"); err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "is missing") {
		t.Fatalf("a lost object: %v", err)
	}
	if _, err := b.PortalDocs("ABC12345", []string{"x.pdf"}); err == nil || !strings.Contains(err.Error(), "is missing") {
		t.Fatalf("PortalDocs of a lost object: %v", err)
	}
	if docs, err := b.List("ABC12345"); err != nil || len(docs) != 1 {
		t.Fatalf("List with a lost object: %v %v", docs, err)
	}
}

// failingStore is a real store whose Puts can be made to fail, as an
// object store refusing writes does.
type failingStore struct {
	blob.Store
	fail error
}

func (f *failingStore) Put(ctx context.Context, key string, r io.Reader, size int64) (blob.Info, error) {
	if f.fail != nil {
		return blob.Info{}, f.fail
	}
	return f.Store.Put(ctx, key, r, size)
}

// TestSharedFailures: an object store refusing the write stores nothing
// and leaves nothing; a Put that stalled past maxLooseAge before its
// commit is refused, its object left loose; Sweep deletes what was loose
// for more than looseGrace and nothing else.
func TestSharedFailures(t *testing.T) { forEachShared(t, testSharedFailures) }

func testSharedFailures(t *testing.T, r *rig) {
	a := r.node(Options{})
	ctx := context.Background()
	refusing := &failingStore{Store: a.sh.blobs, fail: errors.New("the store refuses writes")}
	a.sh.blobs = refusing
	if _, err := a.Put("ABC12345", "jo", "x.pdf", -1, bytes.NewReader(testdoc.PDF(1, 0))); err == nil || !strings.Contains(err.Error(), "refuses writes") {
		t.Fatalf("a refused write: %v", err)
	}
	if docs, _ := a.List("ABC12345"); len(docs) != 0 {
		t.Fatalf("documents after a refused write: %+v", docs)
	}
	if left := r.leftovers(); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	refusing.fail = nil
	kept, err := a.Put("ABC12345", "jo", "kept.pdf", -1, bytes.NewReader(testdoc.PDF(1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	// stalled: its object was loose for longer than maxLooseAge
	var stalled string
	a.sh.beforeCommit = func(key string) {
		stalled = key
		if _, err := r.db.Pool.Exec(ctx, `UPDATE library_loose SET since = now() - interval '40 minutes' WHERE blob = $1`, key); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Put("ABC12345", "jo", "slow.pdf", -1, bytes.NewReader(testdoc.PDF(1, 0))); err == nil || !strings.Contains(err.Error(), "too slowly") {
		t.Fatalf("a stalled Put: %v", err)
	}
	a.sh.beforeCommit = nil
	if _, err := a.Get("ABC12345", "slow.pdf"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the stalled document: %v", err)
	}
	// a crash left another object loose, an hour and more ago; and one
	// loose for a minute (a Put under way on another node)
	for _, k := range []string{"library/ABC12345/crashed.blob", "library/ABC12345/underway.blob"} {
		if _, err := a.sh.blobs.Put(ctx, k, strings.NewReader("%PDF-"), 5); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.db.Pool.Exec(ctx, `INSERT INTO library_loose (blob, since) VALUES
		('library/ABC12345/crashed.blob', now() - interval '61 minutes'), ('library/ABC12345/underway.blob', now() - interval '1 minute')`); err != nil {
		t.Fatal(err)
	}
	if n, err := a.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	r.db.Pool.Exec(ctx, `UPDATE library_loose SET since = now() - interval '2 hours' WHERE blob = $1`, stalled)
	b := r.node(Options{})
	if n, err := b.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep on another node: %d %v", n, err)
	}
	if got := r.stored("ABC12345"); !sameSet(got, []string{kept.Blob, "underway.blob"}) {
		t.Fatalf("stored after the sweeps: %v", got)
	}
	if left := r.leftovers(); len(left) != 1 || left[0] != "loose library/ABC12345/underway.blob" {
		t.Fatalf("loose after the sweeps: %v", left)
	}
	if _, rc, err := b.Read("ABC12345", "kept.pdf"); err != nil {
		t.Fatal(err)
	} else {
		rc.Close()
	}
	// one node's library has nothing to sweep
	if n, err := openLib(t, t.TempDir(), Options{}).Sweep(ctx); n != 0 || err != nil {
		t.Fatalf("local sweep: %d %v", n, err)
	}
}

// TestSharedRoundTrips counts the database round trips of each operation
// (the figures of the package doc and the report).
func TestSharedRoundTrips(t *testing.T) { forEachShared(t, testSharedRoundTrips) }

func testSharedRoundTrips(t *testing.T, r *rig) {
	l := r.node(Options{})
	pdf := testdoc.PDF(1, 0)
	f := func(what string, want int64, fn func() error) {
		t.Helper()
		before := l.sh.db.RoundTrips()
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := l.sh.db.RoundTrips() - before; got != want {
			t.Errorf("%s: %d round trips, want %d", what, got, want)
		}
	}
	put := func() error { _, err := l.Put("ABC12345", "jo", "a.pdf", -1, bytes.NewReader(pdf)); return err }
	f("Put of a new document", 3, put) // room; loose; commit
	f("Put replacing one", 4, put)     // and the replaced object off the loose list
	f("List", 1, func() error { _, err := l.List("ABC12345"); return err })
	f("Get", 1, func() error { _, err := l.Get("ABC12345", "a.pdf"); return err })
	f("Read", 1, func() error {
		_, rc, err := l.Read("ABC12345", "a.pdf")
		if err == nil {
			rc.Close()
		}
		return err
	})
	f("PortalDocs", 1, func() error {
		pd, err := l.PortalDocs("ABC12345", []string{"a.pdf", "b.pdf"})
		for _, d := range pd {
			d.Body.Close()
		}
		return err
	})
	f("Delete", 2, func() error { return l.Delete("ABC12345", "a.pdf") })
}

// TestSharedS3RefusesWrites: while the object store refuses writes a Put
// fails, stores no document and leaves only a loose row (the store would
// not take the object's deletion either); once it takes writes again,
// Puts work and Sweep clears the row.
func TestSharedS3RefusesWrites(t *testing.T) {
	var r *rig
	for _, b := range backends {
		if b.name == "shared-s3" {
			r = b.new(t)
		}
	}
	l := r.node(Options{})
	srv := tests3.Shared(t)
	if err := srv.SetReadOnly(true); err != nil {
		t.Fatal(err)
	}
	defer srv.SetReadOnly(false)
	if _, err := l.Put("ABC12345", "jo", "x.pdf", -1, bytes.NewReader(testdoc.PDF(1, 0))); err == nil {
		t.Fatal("a Put while the store refuses writes")
	}
	if docs, err := l.List("ABC12345"); err != nil || len(docs) != 0 {
		t.Fatalf("documents: %+v %v", docs, err)
	}
	if err := srv.SetReadOnly(false); err != nil {
		t.Fatal(err)
	}
	left := r.leftovers()
	if len(left) != 1 || !strings.HasPrefix(left[0], "loose library/ABC12345/") {
		t.Fatalf("left: %v", left)
	}
	if _, err := l.Put("ABC12345", "jo", "x.pdf", -1, bytes.NewReader(testdoc.PDF(1, 0))); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r.db.Pool.Exec(ctx, `UPDATE library_loose SET since = now() - interval '2 hours'`)
	if n, err := l.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	if left := r.leftovers(); len(left) != 0 {
		t.Fatalf("left after the sweep: %v", left)
	}
	if _, rc, err := l.Read("ABC12345", "x.pdf"); err != nil {
		t.Fatal(err)
	} else {
		rc.Close()
	}
}
