package upload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/pgdb"
	"github.com/lodge-mail/lodge/pipeline"
)

// What only sharing adds: several *Store values on one database and one
// blob store act as the nodes of a deployment.

// sharedBackends are the backends of several nodes: PostgreSQL with the
// blobs on the local disk (a file system all nodes mount), and with
// object storage.
var sharedBackends = backends[1:]

// forShared runs test once per shared backend, as subtests.
func forShared(t *testing.T, test func(t *testing.T, b backend)) {
	for _, b := range sharedBackends {
		t.Run(b.name, func(t *testing.T) { test(t, b) })
	}
}

// nodesOn is n stores of the backend sharing a new database and blob
// store, with opt.
func nodesOn(t *testing.T, b backend, n int, opt Options) []*Store {
	t.Helper()
	node := b.place(t, t.TempDir())
	out := make([]*Store, n)
	for i := range out {
		out[i] = node(opt)
	}
	return out
}

// placeOf is a new database and blob store of the backend, bare.
func placeOf(t *testing.T, b backend) (string, *pgdb.DB, blob.Store) {
	t.Helper()
	dir := t.TempDir()
	url, db, local := sharedPlace(t, dir)
	if b.name == "postgres+s3" {
		return url, db, s3Place(t, dir)
	}
	return url, db, local
}

// otherNode is another node of a shared rig: a store on the rig's
// database and blob store, with its Lodger (the same mailroom) and
// handler.
func (r *rig) otherNode() *Handler {
	r.t.Helper()
	s := r.node(Options{Now: r.c.Now})
	l := NewLodger(s, r.eng, r.mr, LodgerConfig{InProcess: true, Host: "test-host",
		Senders: pipeline.AccountSettings{Dir: filepath.Join(r.dir, "accounts")}.Senders}, quiet)
	return NewHandler(s, l, Config{Host: "test-host"}, quiet)
}

// TestNodesOneSession: a session opened on node A takes its files on
// node B and ends on node C; the mailroom gets each document's blob key,
// which every node reads.
func TestNodesOneSession(t *testing.T) { forShared(t, testNodesOneSession) }

func testNodesOneSession(t *testing.T, be backend) {
	r := newRigOn(t, be)
	b, c := r.otherNode(), r.otherNode()
	doc := pdfPages(2)
	ss, err := r.s.CreateSession("ABC12345", "clerk")
	if err != nil {
		t.Fatal(err)
	}
	put(t, b.store, ss, "doc.pdf", pdfPages(1))
	put(t, r.s, ss, "doc.pdf", doc) // replaced on another node
	put(t, b.store, ss, "m.json", []byte(meta("", melbourne)))
	res, err := c.end(ss, "clerk")
	if err != nil || res.Result != "ok" {
		t.Fatalf("end on node C: %+v, %v", res, err)
	}
	for _, s := range []*Store{r.s, b.store, c.store} {
		got, err := s.Session(ss.EPID)
		if err != nil || got.State != StateEnded || got.Result == nil || got.Result.Result != "ok" {
			t.Errorf("session as a node reads it: %+v, %v", got, err)
		}
	}
	files, _ := b.store.Files(ss.EPID)
	if len(files) != 2 || files[0].Name != "doc.pdf" || files[0].Chunks != 2 || files[0].SHA1 != sha1Hex(doc) || files[0].Intent != IntentDocument {
		t.Errorf("files %+v", files)
	}
	checkBlobs(t, r.s, ss.EPID)
	m, err := r.mailingRec(ss.EPID)
	if err != nil || len(m.Files) != 1 {
		t.Fatalf("mailing %+v, %v", m, err)
	}
	mf := m.Files[0]
	if mf.Blob != BlobKey(ss.EPID, files[0]) || mf.SHA1 != sha1Hex(doc) || mf.Pages != 2 {
		t.Errorf("mailing's file %+v, want blob %s", mf, BlobKey(ss.EPID, files[0]))
	}
	rd, _, err := r.s.blobs.Open(context.Background(), mf.Blob)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rd)
	rd.Close()
	if !bytes.Equal(got, doc) {
		t.Errorf("the blob key reads %d bytes, want the document's %d", len(got), len(doc))
	}
	if got, err := os.ReadFile(mf.Path); err != nil || !bytes.Equal(got, doc) {
		t.Errorf("Path %s on the ending node: %d bytes, %v", mf.Path, len(got), err)
	}
	// a second end_session on yet another node answers as the first
	if again, err := r.h.end(ss, "clerk"); err != nil || again.Status != res.Status || len(again.Files) != len(res.Files) {
		t.Errorf("end again on node A: %+v, %v", again, err)
	}
}

// TestNodesConcurrentUploads: uploads of the same names in the same
// sessions through three nodes at once are serialised by the sessions'
// locks in the database: each name counts every upload, and exactly the
// last one's blob is left (a replaced blob read before another node's
// commit would be left behind, or the live one deleted). Run with -race.
func TestNodesConcurrentUploads(t *testing.T) { forShared(t, testNodesConcurrentUploads) }

func testNodesConcurrentUploads(t *testing.T, b backend) {
	ns := nodesOn(t, b, 3, Options{})
	var sessions []Session
	for i := 0; i < 2; i++ {
		ss, err := ns[i].CreateSession("ABC12345", "clerk")
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, ss)
	}
	const per = 12 // 4 names, each uploaded 3 times, one per node
	var wg sync.WaitGroup
	errs := make(chan error, len(sessions)*per)
	for _, ss := range sessions {
		for i := 0; i < per; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				name := fmt.Sprintf("d%d.pdf", i%4)
				_, err := ns[i%3].PutFile(ss, "clerk", name, -1, bytes.NewReader(pdfPages(1+i)),
					func(head []byte) (string, error) { return checkContent(name, "pdf", head) })
				if err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, ss := range sessions {
		files, _ := ns[2].Files(ss.EPID)
		if len(files) != 4 {
			t.Errorf("%s: %d files, want 4", ss.EPID, len(files))
		}
		for _, f := range files {
			if f.Chunks != 3 {
				t.Errorf("%s %s: %d uploads, want 3", ss.EPID, f.Name, f.Chunks)
			}
		}
		checkBlobs(t, ns[0], ss.EPID)
	}
}

// waitLockWaiter returns once a connection of the test's database waits
// for an advisory lock; it fails the test if done fires first (what
// should have waited did not).
func waitLockWaiter(t *testing.T, s *Store, done <-chan error) {
	t.Helper()
	for {
		var n int
		err := s.pg.Pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_locks
			WHERE locktype = 'advisory' AND NOT granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("finished without waiting for the session's lock: %v", err)
		default:
		}
	}
}

// TestNodesEndHoldsUploads: while end_session on node A holds a session,
// an upload to it on node B waits for it (holding nothing in the
// database but its wait); once A ended the session, the upload is refused
// as to an ended session and its blob deleted; once A rejected the
// mailing, the upload is committed.
func TestNodesEndHoldsUploads(t *testing.T) { forShared(t, testNodesEndHoldsUploads) }

func testNodesEndHoldsUploads(t *testing.T, be backend) {
	f := func(end bool, want error) {
		t.Helper()
		ns := nodesOn(t, be, 2, Options{})
		a, b := ns[0], ns[1]
		ss, err := a.CreateSession("ABC12345", "clerk")
		if err != nil {
			t.Fatal(err)
		}
		first := put(t, b, ss, "a.pdf", pdfPages(1))
		cur, files, release, err := a.lockEnd(ss.EPID)
		if err != nil || len(files) != 1 {
			t.Fatalf("lockEnd: %v, %v", files, err)
		}
		unlock := sync.OnceFunc(release)
		t.Cleanup(unlock) // a failed test lets its connection go
		done := make(chan error, 1)
		go func() {
			_, err := b.PutFile(ss, "clerk", "late.pdf", -1, bytes.NewReader(pdfPages(2)),
				func(head []byte) (string, error) { return checkContent("late.pdf", "pdf", head) })
			done <- err
		}()
		waitLockWaiter(t, a, done)
		if end {
			// A's writes inside its lock do not wait for it
			cur.State, cur.Ended, cur.Result = StateEnded, time.Now().UTC(), &EndResult{SessionID: ss.EPID, Result: "ok"}
			if err := a.Update(func(t *Tx) error { t.PutSession(cur); return nil }); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case err := <-done:
			t.Fatalf("the upload finished while the end held the session: %v", err)
		default:
		}
		unlock()
		if err := <-done; !errors.Is(err, want) || (want == nil && err != nil) {
			t.Fatalf("end %v: the upload got %v, want %v", end, err, want)
		}
		files, _ = a.Files(ss.EPID)
		if n := map[bool]int{true: 1, false: 2}[end]; len(files) != n || files[0] != first {
			t.Errorf("end %v: files %+v", end, files)
		}
		checkBlobs(t, a, ss.EPID)
	}
	f(true, ErrSessionClosed)
	f(false, nil)
}

// TestNodesSweepOnce: the janitors of three nodes sweeping together
// expire each session due once (the counts add up to the sessions) and
// leave no blob of them.
func TestNodesSweepOnce(t *testing.T) { forShared(t, testNodesSweepOnce) }

func testNodesSweepOnce(t *testing.T, b backend) {
	c := newClock()
	ns := nodesOn(t, b, 3, Options{Now: c.Now})
	var due []Session
	for i := 0; i < 12; i++ {
		ss, err := ns[i%3].CreateSession("ABC12345", "clerk")
		if err != nil {
			t.Fatal(err)
		}
		put(t, ns[(i+1)%3], ss, "a.pdf", pdfPages(1))
		due = append(due, ss)
	}
	c.Add(25 * time.Hour)
	fresh, _ := ns[0].CreateSession("ABC12345", "clerk")
	put(t, ns[0], fresh, "a.pdf", pdfPages(1))
	var wg sync.WaitGroup
	expired := make([]int, len(ns))
	for i, s := range ns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if expired[i], _, err = s.Sweep(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := expired[0] + expired[1] + expired[2]; n != len(due) {
		t.Errorf("expired %v: %d in all, want %d", expired, n, len(due))
	}
	for _, ss := range due {
		if got, _ := ns[1].Session(ss.EPID); got.State != StateExpired || !blobsGone(t, ns[1], ss.EPID) {
			t.Errorf("%s: %s, blobs %v", ss.EPID, got.State, blobs(t, ns[1], ss.EPID))
		}
	}
	if got := lifeIndex(t, ns[0], "purge"); got != nil {
		t.Errorf("deletions left marked: %v", got)
	}
	checkBlobs(t, ns[2], fresh.EPID)
	if len(blobs(t, ns[2], fresh.EPID)) != 1 {
		t.Errorf("the open session lost its blob")
	}
}

// failingDeletes is a blob store whose deletes fail while on is set: a
// node that stops between committing a closing and deleting its blobs.
type failingDeletes struct {
	blob.Store
	mu sync.Mutex
	on bool
}

func (f *failingDeletes) Delete(ctx context.Context, key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.on {
		return errors.New("the node stopped")
	}
	return f.Store.Delete(ctx, key)
}

// TestSharedOrphansAndTakeover: the rules of a shared store's leftovers.
// A blob without a record in an open session (a node stopped between
// storing it and committing its record, or an upload in flight on
// another node) is left alone by a node's start and by the janitor, and
// goes with the session's blobs when it closes. A deletion of blobs a
// node committed to and did not finish (a closing, a purge) is finished
// by another node's janitor once its lease is over, not before; a purge
// finished so counts and marks the mailing purged.
func TestSharedOrphansAndTakeover(t *testing.T) { forShared(t, testSharedOrphansAndTakeover) }

func testSharedOrphansAndTakeover(t *testing.T, b backend) {
	c := newClock()
	_, db, local := placeOf(t, b)
	stopping := &failingDeletes{Store: local}
	x := openShared(t, db, stopping, Options{Now: c.Now}) // the node that stops
	open, _ := x.CreateSession("ABC12345", "clerk")
	kept := put(t, x, open, "a.pdf", pdfPages(1))
	orphan := BlobKey(open.EPID, File{Blob: randomName() + ".blob"})
	if _, err := local.Put(context.Background(), orphan, bytes.NewReader([]byte("bytes with no record")), -1); err != nil {
		t.Fatal(err)
	}
	closing, _ := x.CreateSession("ABC12345", "clerk")
	put(t, x, closing, "a.pdf", pdfPages(1))
	mailing, _ := x.CreateSession("ABC12345", "clerk")
	put(t, x, mailing, "a.pdf", pdfPages(1))
	ended, _ := x.Session(mailing.EPID)
	ended.State, ended.Ended, ended.Result = StateEnded, c.Now(), &EndResult{SessionID: mailing.EPID, Result: "ok"}
	if err := x.Update(func(t *Tx) error { t.PutSession(ended); return nil }); err != nil {
		t.Fatal(err)
	}
	stopping.on = true
	if err := x.Abandon(closing.EPID, "test"); err == nil {
		t.Fatal("the closing's deletes did not fail")
	}
	if err := x.PurgeMailing(mailing.EPID); err == nil {
		t.Fatal("the purge's deletes did not fail")
	}

	y := openShared(t, db, local, Options{Now: c.Now}) // another node starts
	f := func(what string, wantOrphan, wantClosing, wantPurged bool, wantSwept int) {
		t.Helper()
		if _, purged, err := y.Sweep(); err != nil || purged != wantSwept {
			t.Errorf("%s: sweep purged %d, %v; want %d", what, purged, err, wantSwept)
		}
		if _, err := local.Stat(context.Background(), orphan); (err == nil) != wantOrphan {
			t.Errorf("%s: the orphan is there: %v, want %v", what, err == nil, wantOrphan)
		}
		if got := blobsGone(t, y, closing.EPID); got == wantClosing {
			t.Errorf("%s: the closed session's blobs gone %v", what, got)
		}
		if got, _ := y.Session(mailing.EPID); got.Purged.IsZero() == wantPurged || blobsGone(t, y, mailing.EPID) != wantPurged {
			t.Errorf("%s: mailing purged at %v, blobs %v", what, got.Purged, blobs(t, y, mailing.EPID))
		}
	}
	f("at once", true, true, false, 0)
	c.Add(sweepLease - time.Second)
	f("within the lease", true, true, false, 0)
	c.Add(2 * time.Second)
	f("after the lease", true, false, true, 1)
	if got := lifeIndex(t, y, "purge"); got != nil {
		t.Errorf("deletions left marked: %v", got)
	}
	if got, _ := y.Session(closing.EPID); got.State != StateAbandoned {
		t.Errorf("closed session %s", got.State)
	}
	if fs, _ := y.Files(mailing.EPID); len(fs) != 1 {
		t.Errorf("purged mailing's file records %+v", fs)
	}
	if fs, _ := y.Files(open.EPID); len(fs) != 1 || fs[0] != kept {
		t.Errorf("open session's files %+v", fs)
	}
	// the open session's orphan goes when the session closes
	if err := y.Abandon(open.EPID, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := local.Stat(context.Background(), orphan); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("orphan after the session closed: %v", err)
	}
	if !blobsGone(t, y, open.EPID) {
		t.Errorf("blobs of the abandoned session: %v", blobs(t, y, open.EPID))
	}
}

// watched is a blob store that calls its hooks after a Put succeeded
// and before a Delete.
type watched struct {
	blob.Store
	put, del func(key string)
}

func (w *watched) Put(ctx context.Context, key string, r io.Reader, size int64) (blob.Info, error) {
	i, err := w.Store.Put(ctx, key, r, size)
	if err == nil {
		w.put(key)
	}
	return i, err
}

func (w *watched) Delete(ctx context.Context, key string) error {
	w.del(key)
	return w.Store.Delete(ctx, key)
}

// TestSharedPutOrder: an upload's blob is stored (durably: Put has
// returned) before its record commits, and a replaced blob is deleted
// only once the record naming the new one is committed; an upload whose
// commit fails (the database unreachable) leaves no blob.
func TestSharedPutOrder(t *testing.T) { forShared(t, testSharedPutOrder) }

func testSharedPutOrder(t *testing.T, b backend) {
	url, db, local := placeOf(t, b)
	var s *Store
	var epid string
	record := func() string { // the blob a.pdf's committed record names
		files, err := s.Files(epid)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if f.Name == "a.pdf" {
				return BlobKey(epid, f)
			}
		}
		return ""
	}
	var puts, dels []string
	w := &watched{Store: local,
		put: func(key string) {
			if r := record(); r == key {
				t.Errorf("the record named %s before its Put returned", key)
			}
			puts = append(puts, key)
		},
		del: func(key string) {
			if r := record(); r == key || r != puts[len(puts)-1] {
				t.Errorf("deleting %s while the record names %s, not the new %s", key, r, puts[len(puts)-1])
			}
			dels = append(dels, key)
		}}
	s = openShared(t, db, w, Options{})
	ss, _ := s.CreateSession("ABC12345", "clerk")
	epid = ss.EPID
	put(t, s, ss, "a.pdf", pdfPages(1))
	put(t, s, ss, "a.pdf", pdfPages(2))
	s.settle()
	if len(puts) != 2 || len(dels) != 1 || dels[0] != puts[0] {
		t.Errorf("puts %v, deletes %v", puts, dels)
	}
	checkBlobs(t, s, epid)

	// a node whose database is gone: its upload fails and leaves nothing
	gone, err := pgdb.Open(context.Background(), pgdb.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	g := openShared(t, gone, local, Options{})
	gone.Close()
	if _, err := g.PutFile(ss, "clerk", "b.pdf", -1, bytes.NewReader(pdfPages(1)), func([]byte) (string, error) { return "pdf", nil }); err == nil {
		t.Fatal("stored without a database")
	}
	checkBlobs(t, s, epid)
	if n := len(blobs(t, s, epid)); n != 1 {
		t.Errorf("%d blobs, want 1", n)
	}
}

// TestRoundTrips: a PUT costs at most 2 database round trips on a shared
// store (the handler's read of the session and the commit), whether it
// adds or replaces a file; end_session's are counted and bounded so that
// a change that adds one shows here (the mailroom's store, pebble in this
// test, not counted).
func TestRoundTrips(t *testing.T) { forShared(t, testRoundTrips) }

func testRoundTrips(t *testing.T, b backend) {
	w := newWebOn(t, b)
	db := w.s.pg
	epid := w.newSession()
	f := func(what string, max int64, do func() answer, want int) {
		t.Helper()
		before := db.RoundTrips()
		if a := do(); a.status != want {
			t.Fatalf("%s: %+v", what, a)
		}
		n := db.RoundTrips() - before
		t.Logf("%s: %d round trips", what, n)
		if n > max {
			t.Errorf("%s: %d round trips, want at most %d", what, n, max)
		}
	}
	f("PUT of a new file", 2, func() answer { return w.putFile(epid, "a.pdf", pdfPages(1)) }, 201)
	f("PUT replacing a file", 2, func() answer { return w.putFile(epid, "a.pdf", pdfPages(2)) }, 201)
	f("PUT of metadata", 2, func() answer { return w.putFile(epid, "m.json", meta("", melbourne)) }, 201)
	f("end_session", 5, func() answer {
		return w.do("GET", "/publicinterface/end_session.json?session_id="+epid, "ABC12345", nil)
	}, 200)
	f("end_session again", 1, func() answer {
		return w.do("GET", "/publicinterface/end_session.json?session_id="+epid, "ABC12345", nil)
	}, 200)
}

// TestNodesManyEndsAtOnce: more end_sessions at once than the pool has
// connections all finish. Each holds a connection for its session's lock
// and needs another for its work: with every connection held by a lock
// they waited on each other for ever (16 on a pool of 8, found by
// bench/clusterbench).
func TestNodesManyEndsAtOnce(t *testing.T) { forShared(t, testNodesManyEndsAtOnce) }

func testNodesManyEndsAtOnce(t *testing.T, be backend) {
	r := newRigOn(t, be)
	n := 2 * int(r.s.pg.Pool.Config().MaxConns)
	sessions := make([]Session, n)
	for i := range sessions {
		sessions[i] = r.session("doc.pdf", pdfPages(1), "m.json", meta("", melbourne))
	}
	var done atomic.Int32
	errs := make(chan error, n)
	for _, ss := range sessions {
		go func() {
			res, err := r.h.end(ss, "clerk")
			if err == nil && res.Result != "ok" {
				err = fmt.Errorf("end_session of %s: %+v", ss.EPID, res)
			}
			errs <- err
			done.Add(1)
		}()
	}
	testenv.WaitFor(t, func() bool { return int(done.Load()) == n },
		func() string { return fmt.Sprintf("%d end_sessions at once to finish (%d did)", n, done.Load()) })
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
