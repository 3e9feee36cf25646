package upload

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// index lists the sessions in one of the lifecycle indexes, sorted.
func index(t *testing.T, s *Store, pfx string) []string {
	t.Helper()
	out, err := s.epids(pfx, prefixEnd(pfx))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func sorted(epids ...string) []string {
	out := append([]string{}, epids...)
	sort.Strings(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

// TestSessionIndexes: the open/ index holds exactly the open sessions and
// kept/ exactly the ended mailings whose documents are stored, through
// every change of state: opened, ended, expired, abandoned, purged.
func TestSessionIndexes(t *testing.T) { forBackends(t, testSessionIndexes) }

func testSessionIndexes(t *testing.T, be backend) {
	r := newRigOn(t, be)
	r.s.opt.Retention = 48 * time.Hour
	check := func(what string, open, kept []string) {
		t.Helper()
		if got := lifeIndex(t, r.s, "open"); !reflect.DeepEqual(got, sorted(open...)) {
			t.Errorf("%s: open index %v, want %v", what, got, sorted(open...))
		}
		if got := lifeIndex(t, r.s, "kept"); !reflect.DeepEqual(got, sorted(kept...)) {
			t.Errorf("%s: kept index %v, want %v", what, got, sorted(kept...))
		}
	}
	check("empty", nil, nil)
	a := r.session("a.pdf", pdfPages(1))
	b := r.session("b.pdf", pdfPages(1))
	c := r.session("c.pdf", pdfPages(1))
	check("opened", []string{a.EPID, b.EPID, c.EPID}, nil)
	if res := r.end(a); res.Result != "ok" {
		t.Fatal(res)
	}
	if err := r.s.Abandon(b.EPID, "test"); err != nil {
		t.Fatal(err)
	}
	check("ended and abandoned", []string{c.EPID}, []string{a.EPID})
	r.c.Add(25 * time.Hour)
	d := r.session("d.pdf", pdfPages(1))
	if exp, purged, err := r.s.Sweep(); exp != 1 || purged != 0 || err != nil {
		t.Fatalf("sweep: %d expired, %d purged, %v", exp, purged, err)
	}
	check("expired", []string{d.EPID}, []string{a.EPID})
	r.keep = func(string) bool { return false } // the mailroom is done with it
	r.c.Add(24 * time.Hour)
	if _, purged, err := r.s.Sweep(); purged != 1 || err != nil {
		t.Fatalf("sweep: %d purged, %v", purged, err)
	}
	check("purged", nil, nil)
	// the records say what happened
	for ss, want := range map[Session]string{a: StateEnded, b: StateAbandoned, c: StateExpired, d: StateExpired} {
		got, err := r.s.Session(ss.EPID)
		if err != nil || got.State != want {
			t.Errorf("%s: %s, %v; want %s", ss.EPID, got.State, err, want)
		}
	}
	if got, _ := r.s.Session(a.EPID); got.Purged.IsZero() {
		t.Errorf("purged mailing not marked: %+v", got)
	}
	// no purge/ entry is left behind once the directories are gone
	if got := lifeIndex(t, r.s, "purge"); got != nil {
		t.Errorf("purge entries left: %v", got)
	}
	for _, ss := range []Session{a, b, c, d} {
		if !blobsGone(t, r.s, ss.EPID) {
			t.Errorf("%s: blobs left: %v", ss.EPID, blobs(t, r.s, ss.EPID))
		}
	}
}

// TestRetention: an ended mailing's documents are deleted once the
// retention period after its end is over, and not before, unless the
// mailroom still needs them (Options.Keep); their records stay.
// PurgeMailing deletes them at once (the mailroom's own retention). Open
// sessions are not touched.
func TestRetention(t *testing.T) { forBackends(t, testRetention) }

func testRetention(t *testing.T, b backend) {
	r := newRigOn(t, b)
	r.s.opt.Retention = 48 * time.Hour
	done := r.mailing("doc.pdf", pdfPages(1), "m.json", meta("", melbourne))
	needed := r.mailing("doc.pdf", pdfPages(1), "m.json", meta("", melbourne))
	auto := r.mailing("a.pdf", pdfPages(1))
	now := r.mailing("doc.pdf", pdfPages(1), "m.json", meta("", melbourne))
	stillNeeded := map[string]bool{needed.EPID: true, now.EPID: true}
	r.keep = func(epid string) bool { return stillNeeded[epid] }
	r.c.Add(47 * time.Hour)
	open := r.session("o.pdf", pdfPages(1))
	if n, err := r.s.PurgeDocuments(); n != 0 || err != nil {
		t.Fatalf("within the retention period: purged %d, %v", n, err)
	}
	gone := func(ss Session, want bool) {
		t.Helper()
		if got := blobsGone(t, r.s, ss.EPID); got != want {
			t.Errorf("%s: blobs gone %v, want %v", ss.EPID, got, want)
		}
	}
	// the mailroom's purge does not wait
	if err := r.s.PurgeMailing(now.EPID); err != nil {
		t.Fatal(err)
	}
	gone(now, true)
	if err := r.s.PurgeMailing(open.EPID); err != nil {
		t.Fatal(err)
	}
	gone(open, false) // not ended: not a mailing
	r.c.Add(time.Hour + time.Minute)
	if n, err := r.s.PurgeDocuments(); n != 2 || err != nil {
		t.Fatalf("purged %d, %v; want 2 (the done and the auto mailing)", n, err)
	}
	gone(done, true)
	gone(auto, true)
	gone(needed, false)
	gone(open, false)
	checkBlobs(t, r.s, open.EPID)
	checkBlobs(t, r.s, needed.EPID)
	// the records stay
	ss, err := r.s.Session(done.EPID)
	if err != nil || ss.State != StateEnded || ss.Result == nil || !ss.Purged.Equal(r.c.Now()) {
		t.Errorf("session %+v, %v", ss, err)
	}
	if files, _ := r.s.Files(done.EPID); len(files) != 2 {
		t.Errorf("file records %v", files)
	}
	if ls := r.letters(done.EPID); len(ls) != 1 {
		t.Errorf("letters %+v", ls)
	}
	// the needed mailing's documents go once the mailroom is done
	delete(stillNeeded, needed.EPID)
	if n, err := r.s.PurgeDocuments(); n != 1 || err != nil {
		t.Fatalf("once not needed: purged %d, %v; want 1", n, err)
	}
	gone(needed, true)
	if n, err := r.s.PurgeDocuments(); n != 0 || err != nil {
		t.Errorf("again: purged %d, %v", n, err)
	}
}

// TestRetentionDefault: the zero Options mean DefaultRetention, 30 days.
func TestRetentionDefault(t *testing.T) {
	if got := (Options{}).withDefaults().Retention; got != 30*24*time.Hour {
		t.Errorf("default retention %v", got)
	}
}

// TestOpenRecovers: opening a store removes what a stopped process left
// unfinished: temporary files and blobs without a record in open
// sessions' directories, and the directory of a session whose closing
// had committed but not yet removed it. It keeps every blob a record
// refers to.
func TestOpenRecovers(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	ss, _ := s.CreateSession("ABC12345", "clerk")
	f := put(t, s, ss, "a.pdf", pdfPages(1))
	closing, _ := s.CreateSession("ABC12345", "clerk")
	put(t, s, closing, "a.pdf", pdfPages(1))
	// the closing committed (state, file records gone, purge/ entry), then
	// the process stopped before it removed the directory
	cs, _ := s.Session(closing.EPID)
	cs.State = StateExpired
	err := s.Update(func(t *Tx) error {
		t.PutSession(cs)
		t.deleteKey(filePrefix + closing.EPID + "/a.pdf")
		t.put(purgePrefix+closing.EPID, closing.EPID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	closeStore(s)
	bd := filepath.Join(dir, "blobs", ss.EPID)
	for _, n := range []string{".tmp-123", "0123456789abcdef01234567.blob"} {
		if err := os.WriteFile(filepath.Join(bd, n), []byte("junk"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	s = openStore(t, dir, Options{})
	if got := blobs(t, s, ss.EPID); len(got) != 1 || got[0] != f.Blob {
		t.Errorf("blobs after reopening: %v, want [%s]", got, f.Blob)
	}
	checkBlobs(t, s, ss.EPID)
	if _, err := os.Stat(filepath.Join(dir, "blobs", closing.EPID)); !os.IsNotExist(err) {
		t.Errorf("directory of the closed session: %v", err)
	}
	if got := index(t, s, purgePrefix); got != nil {
		t.Errorf("purge entries left: %v", got)
	}
}

// TestOpenBuildsIndexes: a store written before the lifecycle indexes
// (records only, no version marker) builds them once when it opens, tidies
// every blob directory as start-up did then, and then expires and purges
// as a new store does.
func TestOpenBuildsIndexes(t *testing.T) {
	r := newRig(t)
	r.s.opt.Retention = 48 * time.Hour
	ended := r.mailing("doc.pdf", pdfPages(1), "m.json", meta("", melbourne))
	r.keep = func(string) bool { return false } // the mailroom is done with it
	open := r.session("a.pdf", pdfPages(1))
	expired := r.session("a.pdf", pdfPages(1))
	if err := r.s.Abandon(expired.EPID, ""); err != nil {
		t.Fatal(err)
	}
	// what the store looked like before: no index, no marker
	for _, pfx := range []string{openPrefix, keptPrefix, purgePrefix} {
		if err := r.s.db.DeleteRange([]byte(pfx), []byte(prefixEnd(pfx)), pebble.Sync); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.s.db.Delete([]byte(indexesKey), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	closeStore(r.s)
	r.ms.Close()
	// and leftovers anywhere, which start-up used to find by reading
	// every directory
	junk := filepath.Join(r.dir, "blobs", "ZZZZZZZZZZZZZZZZZZZZZZZZZZZZ")
	os.MkdirAll(junk, 0o750)
	os.WriteFile(filepath.Join(junk, "x.blob"), []byte("junk"), 0o640)
	os.WriteFile(filepath.Join(r.dir, "blobs", ended.EPID, ".tmp-1"), []byte("junk"), 0o640)
	r.open()
	r.s.opt.Retention = 48 * time.Hour
	if got := index(t, r.s, openPrefix); !reflect.DeepEqual(got, []string{open.EPID}) {
		t.Errorf("open index %v", got)
	}
	if got := index(t, r.s, keptPrefix); !reflect.DeepEqual(got, []string{ended.EPID}) {
		t.Errorf("kept index %v", got)
	}
	if got := blobs(t, r.s, "ZZZZZZZZZZZZZZZZZZZZZZZZZZZZ"); len(got) != 0 {
		t.Errorf("blobs of a session without records: %v", got)
	}
	checkBlobs(t, r.s, ended.EPID)
	checkBlobs(t, r.s, open.EPID)
	var v int
	if err := r.s.get(indexesKey, &v); err != nil || v != indexVersion {
		t.Errorf("version marker %d, %v", v, err)
	}
	r.c.Add(49 * time.Hour)
	if exp, purged, err := r.s.Sweep(); exp != 1 || purged != 1 || err != nil {
		t.Errorf("sweep: %d expired, %d purged, %v; want 1, 1", exp, purged, err)
	}
	// the marker is there: a second start does not read every directory
	closeStore(r.s)
	os.MkdirAll(junk, 0o750)
	os.WriteFile(filepath.Join(junk, "y.blob"), []byte("junk"), 0o640)
	r.open()
	if got := blobs(t, r.s, "ZZZZZZZZZZZZZZZZZZZZZZZZZZZZ"); !reflect.DeepEqual(got, []string{"y.blob"}) {
		t.Errorf("a directory no index names was read at start-up: %v", got)
	}
}

// TestJanitorReadsOnlyIndex: the janitor finds open sessions through the
// open/ index alone: an open session record the index does not name (no
// code path writes one) is never read, which is what makes a pass cost
// the open sessions rather than the history.
func TestJanitorReadsOnlyIndex(t *testing.T) {
	s, c := newStore(t, backends[0])
	ss, _ := s.CreateSession("ABC12345", "clerk")
	if err := s.db.Delete([]byte(openKey(ss)), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	c.Add(25 * time.Hour)
	if n, err := s.ExpireSessions(); n != 0 || err != nil {
		t.Errorf("expired %d, %v: the janitor read the session records", n, err)
	}
}
