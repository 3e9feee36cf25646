package upload

import (
	"archive/zip"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/testdoc"
)

// clock is a settable time source for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// openStore opens a store in dir, closed when the test ends unless the
// test closes it first (closeStore).
func openStore(t *testing.T, dir string, opt Options) *Store {
	t.Helper()
	s, err := Open(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeStore(s) })
	return s
}

var closed sync.Map // *Store → true once closed

func closeStore(s *Store) {
	if _, done := closed.LoadOrStore(s, true); !done {
		s.Close()
	}
}

// newStore is a fresh store of the backend with a settable clock.
func newStore(t *testing.T, b backend) (*Store, *clock) {
	t.Helper()
	c := newClock()
	return b.open(t, Options{Now: c.Now}), c
}

// pdfPages writes a valid PDF with n pages and a correct cross-reference
// table.
func pdfPages(n int) []byte { return pdfDoc(n, 0) }

// pdfDoc is pdfPages with a comment of pad bytes after the header.
func pdfDoc(n, pad int) []byte { return testdoc.PDF(n, pad) }

// zipOf packs files (name, content, name, content ...) into a ZIP.
func zipOf(t *testing.T, files ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i+1 < len(files); i += 2 {
		w, err := zw.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[i+1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sha1Hex(b []byte) string {
	h := sha1.Sum(b)
	return hex.EncodeToString(h[:])
}

// put stores a file in a session the way the handler does, content checked
// against the extension.
func put(t *testing.T, s *Store, ss Session, name string, body []byte) File {
	t.Helper()
	ext, status, msg := CheckName(name)
	if status != 0 {
		t.Fatalf("put %s: %d %s", name, status, msg)
	}
	f, err := s.PutFile(ss, "clerk", name, int64(len(body)), bytes.NewReader(body),
		func(head []byte) (string, error) { return checkContent(name, ext, head) })
	if err != nil {
		t.Fatalf("put %s: %v", name, err)
	}
	return f
}

// checkBlobs fails unless every file record of the session has its blob
// with the content its SHA-1 says, and no other blob is left.
func checkBlobs(t *testing.T, s *Store, epid string) {
	t.Helper()
	files, err := s.Files(epid)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, f := range files {
		want[f.Blob] = true
		b, err := readBlob(t, s, epid, f)
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		if got := sha1Hex(b); got != f.SHA1 || int64(len(b)) != f.Size {
			t.Errorf("%s: blob has %d bytes, SHA-1 %s; record says %d, %s", f.Name, len(b), got, f.Size, f.SHA1)
		}
	}
	for _, b := range blobs(t, s, epid) {
		if !want[b] {
			t.Errorf("blob %s has no record", b)
		}
	}
}

// TestEPID: identifiers are 28 characters of the unambiguous alphabet and
// do not repeat; ValidEPID accepts exactly that form.
func TestEPID(t *testing.T) {
	if len(EPIDAlphabet) != 30 {
		t.Errorf("alphabet has %d letters, want 30", len(EPIDAlphabet))
	}
	for _, c := range "01ILOU" {
		if strings.ContainsRune(EPIDAlphabet, c) {
			t.Errorf("alphabet has the look-alike %q", c)
		}
	}
	seen := map[string]bool{}
	used := map[rune]bool{}
	for i := 0; i < 2000; i++ {
		e, err := NewEPID()
		if err != nil {
			t.Fatal(err)
		}
		if len(e) != 28 || !ValidEPID(e) {
			t.Fatalf("%q: not 28 characters of the alphabet", e)
		}
		for _, c := range e {
			if !strings.ContainsRune(EPIDAlphabet, c) {
				t.Fatalf("%q has %q", e, c)
			}
			used[c] = true
		}
		if seen[e] {
			t.Fatalf("%q handed out twice", e)
		}
		seen[e] = true
	}
	// 56,000 draws leave no letter of 30 unused unless the draw is skewed
	if len(used) != len(EPIDAlphabet) {
		t.Errorf("only %d of %d letters ever drawn", len(used), len(EPIDAlphabet))
	}

	f := func(s string, want bool) {
		t.Helper()
		if got := ValidEPID(s); got != want {
			t.Errorf("ValidEPID(%q) = %v, want %v", s, got, want)
		}
	}
	f("2JWM49JYMXWV2PGYX8TRBGJ847JK", true)
	f("Q9VGGCHHM2Q7D68MJVMR9TDTGPQ4", true)
	f("2JWM49JYMXWV2PGYX8TRBGJ847J", false)   // 27
	f("2JWM49JYMXWV2PGYX8TRBGJ847JKK", false) // 29
	f("2jwm49jymxwv2pgyx8trbgj847jk", false)  // lower case
	f("0JWM49JYMXWV2PGYX8TRBGJ847JK", false)  // zero
	f("OJWM49JYMXWV2PGYX8TRBGJ847JK", false)  // letter O
	f("IJWM49JYMXWV2PGYX8TRBGJ847JK", false)
	f("UJWM49JYMXWV2PGYX8TRBGJ847JK", false)
	f("../M49JYMXWV2PGYX8TRBGJ847JK", false)
	f("", false)
}

// TestSessions: a session is created open for its account and user, read
// back as written, and reads as expired once its time is up.
func TestSessions(t *testing.T) { forBackends(t, testSessions) }

func testSessions(t *testing.T, b backend) {
	s, c := newStore(t, b)
	ss, err := s.CreateSession("ABC12345", "clerk")
	if err != nil {
		t.Fatal(err)
	}
	if ss.State != StateOpen || ss.Account != "ABC12345" || ss.User != "clerk" || !ss.Expires.Equal(c.Now().Add(24*time.Hour)) {
		t.Fatalf("created %+v", ss)
	}
	got, err := s.Session(ss.EPID)
	if err != nil || got.EPID != ss.EPID || got.State != StateOpen || !got.Created.Equal(ss.Created) {
		t.Fatalf("read back %+v, %v", got, err)
	}
	for _, e := range []string{"ZZZZZZZZZZZZZZZZZZZZZZZZZZZZ", "nonsense", ""} {
		if _, err := s.Session(e); !errors.Is(err, ErrNoSession) {
			t.Errorf("Session(%q): %v, want ErrNoSession", e, err)
		}
	}
	c.Add(24 * time.Hour)
	if got, _ := s.Session(ss.EPID); got.State != StateOpen {
		t.Errorf("at the expiry instant: %s, want open", got.State)
	}
	c.Add(time.Nanosecond)
	if got, _ := s.Session(ss.EPID); got.State != StateExpired {
		t.Errorf("after expiry: %s, want expired", got.State)
	}
	if _, err := s.PutFile(ss, "clerk", "a.pdf", -1, bytes.NewReader(pdfPages(1)), func([]byte) (string, error) { return "pdf", nil }); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("upload to an expired session: %v, want ErrSessionClosed", err)
	}
}

// TestPutFileReplaces: uploading a name again replaces the file: the old
// blob is removed, the record has the new content's size and SHA-1, and
// keeps the time of the first upload.
func TestPutFileReplaces(t *testing.T) { forBackends(t, testPutFileReplaces) }

func testPutFileReplaces(t *testing.T, b backend) {
	s, c := newStore(t, b)
	ss, _ := s.CreateSession("ABC12345", "clerk")
	one, two := pdfPages(1), pdfPages(3)
	f1 := put(t, s, ss, "a.pdf", one)
	if f1.SHA1 != sha1Hex(one) || f1.Size != int64(len(one)) || f1.Chunks != 1 || f1.Kind != "pdf" || f1.Declared != int64(len(one)) {
		t.Fatalf("first upload: %+v", f1)
	}
	c.Add(time.Minute)
	f2 := put(t, s, ss, "a.pdf", two)
	if f2.SHA1 != sha1Hex(two) || f2.Size != int64(len(two)) || f2.Chunks != 2 || f2.First != f1.First || f2.Last != f1.First+60 {
		t.Fatalf("second upload: %+v (first %+v)", f2, f1)
	}
	if f2.Blob == f1.Blob {
		t.Fatalf("replaced in place: blob %s", f2.Blob)
	}
	if blobExists(t, s, ss.EPID, f1) {
		t.Errorf("old blob %s still there", f1.Blob)
	}
	if got := blobs(t, s, ss.EPID); len(got) != 1 || got[0] != f2.Blob {
		t.Errorf("blobs %v, want only %s", got, f2.Blob)
	}
	files, err := s.Files(ss.EPID)
	if err != nil || len(files) != 1 || files[0] != f2 {
		t.Errorf("Files: %+v, %v; want [%+v]", files, err, f2)
	}
	checkBlobs(t, s, ss.EPID)
	// a name differing in case is another file
	put(t, s, ss, "A.PDF", one)
	if files, _ := s.Files(ss.EPID); len(files) != 2 || files[0].Name != "a.pdf" || files[1].Name != "A.PDF" {
		t.Errorf("Files in upload order: %+v", files)
	}
	checkBlobs(t, s, ss.EPID)
}

// TestPutFileRefused: uploads refused by their check, their size or their
// session leave no record, no blob and no temporary file behind.
func TestPutFileRefused(t *testing.T) { forBackends(t, testPutFileRefused) }

func testPutFileRefused(t *testing.T, b backend) {
	c := newClock()
	s := b.open(t, Options{Now: c.Now, MaxFileBytes: 100 << 10})
	ss, _ := s.CreateSession("ABC12345", "clerk")
	keep := put(t, s, ss, "keep.pdf", pdfPages(1))
	big := append(pdfPages(1), bytes.Repeat([]byte("%"), 100<<10)...)
	ok := func(head []byte) (string, error) { return "pdf", nil }
	f := func(name string, declared int64, body []byte, check func([]byte) (string, error), want error, wantMsg string) {
		t.Helper()
		_, err := s.PutFile(ss, "clerk", name, declared, bytes.NewReader(body), check)
		switch {
		case err == nil:
			t.Errorf("%s: stored", name)
		case want != nil && !errors.Is(err, want):
			t.Errorf("%s: %v, want %v", name, err, want)
		case wantMsg != "" && !strings.Contains(err.Error(), wantMsg):
			t.Errorf("%s: %v, want %q", name, err, wantMsg)
		}
		if files, _ := s.Files(ss.EPID); len(files) != 1 || files[0] != keep {
			t.Errorf("%s: files now %+v", name, files)
		}
		if got := blobs(t, s, ss.EPID); len(got) != 1 || got[0] != keep.Blob {
			t.Errorf("%s: left blobs %v", name, got)
		}
	}
	f("z.pdf", -1, zipOf(t, "a", "b"), func(head []byte) (string, error) { return checkContent("z.pdf", "pdf", head) }, nil, "the content is")
	f("e.pdf", 0, nil, func(head []byte) (string, error) { return checkContent("e.pdf", "pdf", head) }, nil, "empty")
	f("big.pdf", int64(len(big)), big, ok, ErrTooLarge, "")
	f("big.pdf", -1, big, ok, ErrTooLarge, "")                        // undeclared: counted
	f("short.pdf", 5000, pdfPages(1), ok, nil, "Content-Length said") // fewer bytes than declared
	f("keep.pdf", -1, big, ok, ErrTooLarge, "")                       // a refused replacement keeps the old file
	var rej *rejectedError
	if _, err := s.PutFile(ss, "clerk", "x.pdf", -1, bytes.NewReader([]byte("GIF89a")), func(head []byte) (string, error) {
		return checkContent("x.pdf", "pdf", head)
	}); !errors.As(err, &rej) {
		t.Errorf("content not matching its extension: %v, want a rejectedError", err)
	}
	// the check sees the first HeadSize bytes and nothing more
	var seen int
	peek := func(head []byte) (string, error) { seen = len(head); return "pdf", nil }
	if _, err := s.PutFile(ss, "clerk", "h.pdf", int64(len(big)-(90<<10)), bytes.NewReader(big[:len(big)-(90<<10)]), peek); err != nil || seen != HeadSize {
		t.Errorf("check saw %d bytes (%v), want %d", seen, err, HeadSize)
	}
	checkBlobs(t, s, ss.EPID)
}

// TestExpireSessions: sessions whose time ran out while open lose their
// files and file records and read as expired; ended sessions and open
// sessions with time left keep theirs.
func TestExpireSessions(t *testing.T) { forBackends(t, testExpireSessions) }

func testExpireSessions(t *testing.T, b backend) {
	s, c := newStore(t, b)
	old, _ := s.CreateSession("ABC12345", "clerk")
	done, _ := s.CreateSession("ABC12345", "clerk")
	put(t, s, old, "a.pdf", pdfPages(1))
	put(t, s, old, "m.json", []byte(`{}`))
	put(t, s, done, "a.pdf", pdfPages(1))
	done.State, done.Ended = StateEnded, c.Now()
	if err := s.Update(func(t *Tx) error { t.PutSession(done); return nil }); err != nil {
		t.Fatal(err)
	}
	c.Add(23 * time.Hour)
	fresh, _ := s.CreateSession("ABC12345", "clerk")
	put(t, s, fresh, "a.pdf", pdfPages(1))
	if n, err := s.ExpireSessions(); n != 0 || err != nil {
		t.Fatalf("before the expiry: expired %d, %v", n, err)
	}
	c.Add(time.Hour + time.Second)
	if n, err := s.ExpireSessions(); n != 1 || err != nil {
		t.Fatalf("expired %d, %v; want 1", n, err)
	}
	f := func(ss Session, state string, files int) {
		t.Helper()
		got, err := s.Session(ss.EPID)
		if err != nil || got.State != state {
			t.Errorf("%s: %s, %v; want %s", ss.EPID, got.State, err, state)
		}
		fs, err := s.Files(ss.EPID)
		if err != nil || len(fs) != files {
			t.Errorf("%s: %d file records, %v; want %d", ss.EPID, len(fs), err, files)
		}
		if got := blobs(t, s, ss.EPID); len(got) != files {
			t.Errorf("%s: blobs %v; want %d", ss.EPID, got, files)
		}
	}
	f(old, StateExpired, 0)
	f(done, StateEnded, 1)
	f(fresh, StateOpen, 1)
	if n, err := s.ExpireSessions(); n != 0 || err != nil {
		t.Errorf("again: expired %d, %v; want 0", n, err)
	}
	// the expired state is on disk, not only computed from the clock
	if raw, err := s.rawSession(old.EPID); err != nil || raw.State != StateExpired {
		t.Errorf("stored state %q, %v", raw.State, err)
	}
}

// TestExpireSkipsSessionEndedMeanwhile: a session the janitor listed as
// expired but end_session ended before the janitor took its lock stays
// ended with its files.
func TestExpireSkipsSessionEndedMeanwhile(t *testing.T) {
	forBackends(t, testExpireSkipsSessionEndedMeanwhile)
}

func testExpireSkipsSessionEndedMeanwhile(t *testing.T, b backend) {
	s, c := newStore(t, b)
	ss, _ := s.CreateSession("ABC12345", "clerk")
	put(t, s, ss, "a.pdf", pdfPages(1))
	c.Add(25 * time.Hour)
	listed := c.Now() // ExpireSessions listed the session, open and past its time
	ended := ss
	ended.State, ended.Ended = StateEnded, c.Now()
	if err := s.Update(func(t *Tx) error { t.PutSession(ended); return nil }); err != nil {
		t.Fatal(err)
	}
	if done, err := s.expire(ss.EPID, listed); done || err != nil {
		t.Errorf("expired an ended session: %v, %v", done, err)
	}
	got, _ := s.Session(ss.EPID)
	files, _ := s.Files(ss.EPID)
	if got.State != StateEnded || len(files) != 1 {
		t.Errorf("ended session now %s with %d files", got.State, len(files))
	}
	checkBlobs(t, s, ss.EPID)
}

// TestAccountIndex: every session write keeps one account index entry,
// and a scan of an account's entries lists its sessions newest first.
func TestAccountIndex(t *testing.T) { forBackends(t, testAccountIndex) }

func testAccountIndex(t *testing.T, b backend) {
	s, c := newStore(t, b)
	var want []string
	for i := 0; i < 3; i++ {
		ss, err := s.CreateSession("ABC12345", "clerk")
		if err != nil {
			t.Fatal(err)
		}
		want = append([]string{ss.EPID}, want...)
		c.Add(time.Second)
	}
	other, _ := s.CreateSession("XYZ99999", "other")
	// rewriting a session (expiry, end) adds no second entry
	c.Add(48 * time.Hour)
	if _, err := s.ExpireSessions(); err != nil {
		t.Fatal(err)
	}
	got, err := s.accountSessions("ABC12345", nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("index %v, want %v", got, want)
	}
	// and from a session on, the older ones
	mid, _ := s.Session(want[0])
	if got, err := s.accountSessions("ABC12345", &mid, 100); err != nil || !reflect.DeepEqual(got, want[1:]) {
		t.Errorf("before %s: %v, %v; want %v", mid.EPID, got, err, want[1:])
	}
	if got, err := s.accountSessions("ABC12345", nil, 2); err != nil || !reflect.DeepEqual(got, want[:2]) {
		t.Errorf("limit 2: %v, %v; want %v", got, err, want[:2])
	}
	if got, _ := s.accountSessions("XYZ99999", nil, 100); len(got) != 1 || got[0] != other.EPID {
		t.Errorf("other account: %v, want [%s]", got, other.EPID)
	}
}

// TestConcurrentUploads: uploads to one session and to several sessions
// at once all end up stored intact (run with -race).
func TestConcurrentUploads(t *testing.T) { forBackends(t, testConcurrentUploads) }

func testConcurrentUploads(t *testing.T, b backend) {
	s, _ := newStore(t, b)
	var sessions []Session
	for i := 0; i < 4; i++ {
		ss, _ := s.CreateSession("ABC12345", "clerk")
		sessions = append(sessions, ss)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for _, ss := range sessions {
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				name := fmt.Sprintf("d%d.pdf", i%4) // pairs race on one name
				body := pdfPages(1 + i)
				_, err := s.PutFile(ss, "clerk", name, -1, bytes.NewReader(body),
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
		files, _ := s.Files(ss.EPID)
		if len(files) != 4 {
			t.Errorf("%s: %d files, want 4", ss.EPID, len(files))
		}
		for _, f := range files {
			if f.Chunks != 2 {
				t.Errorf("%s %s: %d uploads, want 2", ss.EPID, f.Name, f.Chunks)
			}
		}
		checkBlobs(t, s, ss.EPID)
	}
}

// TestSessionDirSynced: the first file of a session makes its blob
// directory and syncs blobs/, the directory's parent, before the file's
// record is committed; later files sync only the session's directory.
// This proves the sync is asked for at the right moment, through the
// store's syncDir hook; that the kernel then keeps the name across a power
// cut is fsync's promise, which no test here can cut the power to check.
func TestSessionDirSynced(t *testing.T) {
	s, _ := newStore(t, backends[0])
	ss, _ := s.CreateSession("ABC12345", "clerk")
	root := filepath.Join(s.dir, "blobs")
	var synced []string
	s.syncDir = func(dir string) error {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			return err
		}
		// when blobs/ is synced, the session's directory must exist and
		// no record may point into it yet
		if rel == "." {
			if _, err := os.Stat(filepath.Join(root, ss.EPID)); err != nil {
				t.Errorf("blobs/ synced before the session directory was made: %v", err)
			}
			if files, _ := s.Files(ss.EPID); len(files) != 0 {
				t.Errorf("blobs/ synced after a record was committed: %v", files)
			}
		}
		synced = append(synced, rel)
		return nil
	}
	put(t, s, ss, "a.pdf", pdfPages(1))
	if want := []string{".", ss.EPID}; !reflect.DeepEqual(synced, want) {
		t.Errorf("first file synced %q, want %q", synced, want)
	}
	synced = nil
	put(t, s, ss, "b.pdf", pdfPages(1))
	if want := []string{ss.EPID}; !reflect.DeepEqual(synced, want) {
		t.Errorf("second file synced %q, want %q", synced, want)
	}
}
