package datafiles

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/pgdb"
)

func TestMain(m *testing.M) { testpg.Main(m) }

// clock is a settable clock for the caches.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// backend is one implementation of Files under test: node returns a Files
// of its own over the same storage each time it is called (another
// node); dbs are the databases' round-trip counters (none for Dir).
type backend struct {
	name string
	new  func(t *testing.T, c *clock) (node func() Files, db func(i int) *pgdb.DB)
}

var backends = []backend{
	{"dir", func(t *testing.T, _ *clock) (func() Files, func(int) *pgdb.DB) {
		root := t.TempDir()
		return func() Files { return Dir(root) }, nil
	}},
	{"postgres", func(t *testing.T, c *clock) (func() Files, func(int) *pgdb.DB) {
		url := testpg.NewDatabase(t)
		var dbs []*pgdb.DB
		node := func() Files {
			db, err := pgdb.Open(context.Background(), pgdb.Config{URL: url})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(db.Close)
			dbs = append(dbs, db)
			p, err := NewPostgres(db, Options{Now: c.now})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		return node, func(i int) *pgdb.DB { return dbs[i] }
	}},
}

func forEach(t *testing.T, test func(t *testing.T, b backend, node func() Files, c *clock, db func(int) *pgdb.DB)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			c := &clock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
			node, db := b.new(t, c)
			test(t, b, node, c, db)
		})
	}
}

// TestCheckName: the names of the data directory's files, and what must
// never name one.
func TestCheckName(t *testing.T) {
	f := func(name, want string) {
		t.Helper()
		err := CheckName(name)
		if want == "" {
			if err != nil {
				t.Errorf("CheckName(%q): %v", name, err)
			}
			return
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckName(%q): %v, want %q", name, err, want)
		}
	}
	f("links.key", "")
	f("accounts/ABC12345.json", "")
	f("profiles/ABC12345/statements-2026_v.1.xml", "")
	f("prices/.hidden.json", "")
	f("", "empty name")
	f("/etc/passwd", "empty element at byte 0")
	f("accounts//x.json", "empty element at byte 9")
	f("accounts/", "empty element at byte 9")
	f("../links.key", `element ".." at byte 0`)
	f("a/./b", `element "." at byte 2`)
	f("a/..", `element ".." at byte 2`)
	f(`a\b`, `byte 1 is "\\"`)
	f("a b", `byte 1 is " "`)
	f("a\x00b", `byte 1 is "\x00"`)
	f("a\nb", `byte 1 is "\n"`)
	f("\xff", `byte 0 is "\xff"`)
	f("ü.json", `byte 0 is "\xc3"`)
	f("C:x", `byte 1 is ":"`)
	f(strings.Repeat("a", 256), "element of 256 bytes at byte 0")
	f(strings.Repeat("a/", 256)+"b", "more than 512")
	f(strings.Repeat("a", 255)+"/"+strings.Repeat("b", 255), "")
}

// TestFiles: what every implementation does alike.
func TestFiles(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, node func() Files, _ *clock, _ func(int) *pgdb.DB) {
		f := node()
		if _, err := f.Read("accounts/ABC12345.json", MaxSize); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("read of nothing: %v", err)
		}
		if err := f.Write("accounts/ABC12345.json", []byte(`{"a":1}`), 0o640); err != nil {
			t.Fatal(err)
		}
		if got, err := f.Read("accounts/ABC12345.json", 7); err != nil || string(got) != `{"a":1}` {
			t.Fatalf("read back: %q %v", got, err)
		}
		if _, err := f.Read("accounts/ABC12345.json", 6); !errors.Is(err, ErrNotFile) {
			t.Fatalf("read past max: %v", err)
		}
		// empty is a file (nil or not)
		if err := f.Write("empty", []byte{}, 0o640); err != nil {
			t.Fatal(err)
		}
		if err := f.Write("empty", nil, 0o640); err != nil {
			t.Fatal(err)
		}
		if got, err := f.Read("empty", 0); err != nil || len(got) != 0 {
			t.Fatalf("empty: %q %v", got, err)
		}
		if got, err := f.Create("empty2", []byte{}, 0o640); err != nil || len(got) != 0 {
			t.Fatalf("empty created: %q %v", got, err)
		}
		// the largest file, and one byte more
		big := bytes.Repeat([]byte("x"), MaxSize)
		if err := f.Write("big", big, 0o640); err != nil {
			t.Fatal(err)
		}
		if got, err := f.Read("big", MaxSize); err != nil || !bytes.Equal(got, big) {
			t.Fatalf("big: %d %v", len(got), err)
		}
		if err := f.Write("big", append(big, 'y'), 0o640); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("too big: %v", err)
		}
		if _, err := f.Create("bigger", append(big, 'y'), 0o640); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("too big created: %v", err)
		}
		if got, err := f.Read("big", MaxSize); err != nil || !bytes.Equal(got, big) {
			t.Fatalf("big after a refused write: %d %v", len(got), err)
		}
		// hostile names: refused by every method, nothing written
		for _, name := range []string{"", "../x", "/x", "a//b", "a/../../x", "a\x00", "\xff", "a/.", strings.Repeat("z", 256)} {
			if _, err := f.Read(name, MaxSize); err == nil || errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Read(%q): %v", name, err)
			}
			if err := f.Write(name, []byte("x"), 0o640); err == nil {
				t.Errorf("Write(%q) worked", name)
			}
			if _, err := f.Create(name, []byte("x"), 0o640); err == nil {
				t.Errorf("Create(%q) worked", name)
			}
			if err := f.Update(name, MaxSize, 0o640, func([]byte, bool) ([]byte, error) { return []byte("x"), nil }); err == nil {
				t.Errorf("Update(%q) worked", name)
			}
			if err := f.Remove(name); err == nil || errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Remove(%q): %v", name, err)
			}
		}
		if _, err := f.List("../.."); err == nil {
			t.Error("List(../..) worked")
		}
		// List: under a directory only, in bytewise order
		for _, n := range []string{"prices/Z.json", "prices/A.json", "prices/B/c.json", "pricesX.json", "prices.json", "accounts/_.json"} {
			if err := f.Write(n, []byte(n), 0o640); err != nil {
				t.Fatal(err)
			}
		}
		names := func(dir string) []string {
			t.Helper()
			infos, err := f.List(dir)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, i := range infos {
				out = append(out, i.Name+":"+strconv.FormatInt(i.Size, 10))
			}
			return out
		}
		if got := names("prices"); !slices.Equal(got, []string{"prices/A.json:13", "prices/B/c.json:15", "prices/Z.json:13"}) {
			t.Fatalf("List(prices): %v", got)
		}
		if got := names("nothing"); len(got) != 0 {
			t.Fatalf("List(nothing): %v", got)
		}
		if got := names(""); len(got) != 10 || got[0] != "accounts/ABC12345.json:7" || got[1] != "accounts/_.json:15" {
			t.Fatalf("List(): %v", got)
		}
		// Sub: the same files under a directory's names
		s := Sub(f, "prices")
		if got, err := s.Read("A.json", MaxSize); err != nil || string(got) != "prices/A.json" {
			t.Fatalf("Sub read: %q %v", got, err)
		}
		if infos, err := s.List(""); err != nil || len(infos) != 3 || infos[1].Name != "B/c.json" {
			t.Fatalf("Sub list: %+v %v", infos, err)
		}
		if infos, err := s.List("B"); err != nil || len(infos) != 1 || infos[0].Name != "B/c.json" {
			t.Fatalf("Sub list B: %+v %v", infos, err)
		}
		if _, err := s.Read("../links.key", MaxSize); err == nil || errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Sub read out of its directory: %v", err)
		}
		if w := s.Where("A.json"); w != f.Where("prices/A.json") {
			t.Fatalf("Sub where %q", w)
		}
		// Remove
		if err := f.Remove("prices/A.json"); err != nil {
			t.Fatal(err)
		}
		if err := f.Remove("prices/A.json"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("removing twice: %v", err)
		}
		if _, err := f.Read("prices/A.json", MaxSize); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("read of a removed file: %v", err)
		}
		// Update: fn's error writes nothing
		boom := errors.New("boom")
		if err := f.Update("prices.json", MaxSize, 0o640, func(old []byte, ok bool) ([]byte, error) {
			if !ok || string(old) != "prices.json" {
				t.Errorf("update saw %q %v", old, ok)
			}
			return []byte("changed"), boom
		}); !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if got, _ := f.Read("prices.json", MaxSize); string(got) != "prices.json" {
			t.Fatalf("after a failed update: %q", got)
		}
		if err := f.Update("new.json", MaxSize, 0o640, func(old []byte, ok bool) ([]byte, error) {
			if ok || old != nil {
				t.Errorf("update of nothing saw %q %v", old, ok)
			}
			return []byte("made"), nil
		}); err != nil {
			t.Fatal(err)
		}
		if got, _ := f.Read("new.json", MaxSize); string(got) != "made" {
			t.Fatalf("after an update: %q", got)
		}
		if err := f.Update("big", MaxSize-1, 0o640, func([]byte, bool) ([]byte, error) { return nil, nil }); !errors.Is(err, ErrNotFile) {
			t.Fatalf("update past max: %v", err)
		}
		if err := f.Update("new.json", MaxSize, 0o640, func([]byte, bool) ([]byte, error) { return append(big, 'y'), nil }); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("update too big: %v", err)
		}
	})
}

// TestTwoNodes: what one node writes, creates, updates or removes, the
// other reads (at once for Dir; for Postgres once its cache expires), and
// the writer reads back at once.
func TestTwoNodes(t *testing.T) {
	forEach(t, func(t *testing.T, b backend, node func() Files, c *clock, _ func(int) *pgdb.DB) {
		a, bb := node(), node()
		read := func(f Files, name string) string {
			t.Helper()
			got, err := f.Read(name, MaxSize)
			if errors.Is(err, fs.ErrNotExist) {
				return "(none)"
			}
			if err != nil {
				t.Fatal(err)
			}
			return string(got)
		}
		cached := b.name == "postgres"
		// B has read that there is none; A writes
		if got := read(bb, "accounts/ABC12345.json"); got != "(none)" {
			t.Fatal(got)
		}
		if err := a.Write("accounts/ABC12345.json", []byte("v1"), 0o640); err != nil {
			t.Fatal(err)
		}
		if got := read(a, "accounts/ABC12345.json"); got != "v1" {
			t.Fatalf("A reads its own write: %s", got)
		}
		want := "v1"
		if cached {
			want = "(none)" // within DefaultCacheFor of B's read
		}
		c.add(DefaultCacheFor - time.Nanosecond)
		if got := read(bb, "accounts/ABC12345.json"); got != want {
			t.Fatalf("B before its cache expires: %s, want %s", got, want)
		}
		c.add(time.Nanosecond)
		if got := read(bb, "accounts/ABC12345.json"); got != "v1" {
			t.Fatalf("B once its cache expired: %s", got)
		}
		// B updates: A sees it when its cache expires, B at once
		if err := bb.Update("accounts/ABC12345.json", MaxSize, 0o640, func(old []byte, _ bool) ([]byte, error) {
			return append(old, "+v2"...), nil
		}); err != nil {
			t.Fatal(err)
		}
		if got := read(bb, "accounts/ABC12345.json"); got != "v1+v2" {
			t.Fatalf("B reads its own update: %s", got)
		}
		c.add(DefaultCacheFor)
		if got := read(a, "accounts/ABC12345.json"); got != "v1+v2" {
			t.Fatalf("A: %s", got)
		}
		// A removes: B sees it
		if err := a.Remove("accounts/ABC12345.json"); err != nil {
			t.Fatal(err)
		}
		if got := read(a, "accounts/ABC12345.json"); got != "(none)" {
			t.Fatalf("A reads its own removal: %s", got)
		}
		c.add(DefaultCacheFor)
		if got := read(bb, "accounts/ABC12345.json"); got != "(none)" {
			t.Fatalf("B after A removed it: %s", got)
		}
		// Create from eight goroutines of each node: one file, everyone gets it
		var wg sync.WaitGroup
		got := make([]string, 16)
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f := a
				if i%2 == 1 {
					f = bb
				}
				k, err := f.Create("links.key", []byte("key"+strconv.Itoa(i)), 0o600)
				if err != nil {
					t.Error(err)
				}
				got[i] = string(k)
			}()
		}
		wg.Wait()
		for _, k := range got {
			if k != got[0] || !strings.HasPrefix(k, "key") {
				t.Fatalf("keys differ: %q", got)
			}
		}
		if k := read(bb, "links.key"); k != got[0] {
			t.Fatalf("the key read %s, created %s", k, got[0])
		}
		if k, err := a.Create("links.key", []byte("other"), 0o600); err != nil || string(k) != got[0] {
			t.Fatalf("created again: %q %v", k, err)
		}
		// Updates from both nodes at once: none lost
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f := a
				if i%2 == 1 {
					f = bb
				}
				err := f.Update("counter", MaxSize, 0o640, func(old []byte, _ bool) ([]byte, error) {
					n, _ := strconv.Atoi(string(old))
					return []byte(strconv.Itoa(n + 1)), nil
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		c.add(DefaultCacheFor)
		if got := read(a, "counter"); got != "20" {
			t.Fatalf("counter %s after 20 updates", got)
		}
	})
}

// TestDir: the files on the disk are where lodge always kept them, with
// their modes; what is not a regular file is not read; no temporary file
// is left.
func TestDir(t *testing.T) {
	root := t.TempDir()
	d := Dir(root)
	if err := d.Write("accounts/ABC12345.json", []byte("{}\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if k, err := d.Create("links.key", []byte("secret"), 0o600); err != nil || string(k) != "secret" {
		t.Fatalf("%q %v", k, err)
	}
	f := func(rel string, mode fs.FileMode) {
		t.Helper()
		fi, err := os.Stat(filepath.Join(root, rel))
		if err != nil || fi.Mode() != mode {
			t.Fatalf("%s: %v %v, want %v", rel, fi.Mode(), err, mode)
		}
	}
	f("accounts", fs.ModeDir|0o750)
	f("accounts/ABC12345.json", 0o640)
	f("links.key", 0o600)
	if w := d.Where("accounts/ABC12345.json"); w != filepath.Join(root, "accounts", "ABC12345.json") {
		t.Fatal(w)
	}
	os.Mkdir(filepath.Join(root, "prices.json"), 0o750)
	if _, err := d.Read("prices.json", MaxSize); !errors.Is(err, ErrNotFile) {
		t.Fatalf("a directory read: %v", err)
	}
	if _, err := d.Create("prices.json", []byte("x"), 0o644); !errors.Is(err, ErrNotFile) {
		t.Fatalf("a directory created over: %v", err)
	}
	os.Symlink("/dev/zero", filepath.Join(root, "zero"))
	if _, err := d.Read("zero", MaxSize); !errors.Is(err, ErrNotFile) {
		t.Fatalf("a device read: %v", err)
	}
	// a temporary file of a write under way is not listed
	os.WriteFile(filepath.Join(root, "accounts", ".create-123"), nil, 0o600)
	infos, err := d.List("")
	if err != nil || len(infos) != 2 || infos[0].Name != "accounts/ABC12345.json" || infos[1].Name != "links.key" {
		t.Fatalf("%+v %v", infos, err)
	}
	os.Remove(filepath.Join(root, "accounts", ".create-123"))
	left, _ := filepath.Glob(filepath.Join(root, "*", ".*"))
	left2, _ := filepath.Glob(filepath.Join(root, ".*"))
	if len(left)+len(left2) != 0 {
		t.Fatalf("left behind: %v %v", left, left2)
	}
}

// TestPostgresRoundTrips: a read within the cache's time costs nothing; a
// write, a read that misses, a removal one round trip each; a Create of a
// new file one.
func TestPostgresRoundTrips(t *testing.T) {
	c := &clock{t: time.Now()}
	node, db := backends[1].new(t, c)
	f := node()
	trips := func(what string, want int64, fn func()) {
		t.Helper()
		before := db(0).RoundTrips()
		fn()
		if got := db(0).RoundTrips() - before; got != want {
			t.Errorf("%s: %d round trips, want %d", what, got, want)
		}
	}
	trips("write", 1, func() { f.Write("a", []byte("1"), 0) })
	trips("read of what this node wrote", 0, func() { f.Read("a", MaxSize) })
	trips("read of nothing", 1, func() { f.Read("b", MaxSize) })
	trips("read of nothing again", 0, func() { f.Read("b", MaxSize) })
	c.add(DefaultCacheFor)
	trips("read past the cache's time", 1, func() { f.Read("a", MaxSize) })
	trips("create", 1, func() { f.Create("k", []byte("k"), 0) })
	trips("create of what exists", 2, func() { f.Create("k", []byte("k"), 0) })
	trips("update", 5, func() {
		f.Update("a", MaxSize, 0, func(b []byte, _ bool) ([]byte, error) { return b, nil })
	})
	trips("remove", 1, func() { f.Remove("a") })
	// no cache: every read asks
	p, err := NewPostgres(db(0), Options{CacheFor: -1})
	if err != nil {
		t.Fatal(err)
	}
	trips("uncached reads", 2, func() { p.Read("k", MaxSize); p.Read("k", MaxSize) })
}

// TestPostgresCacheBounded: reads of many names (as hostile profile names
// in metadata would make) do not grow the cache past its bounds.
func TestPostgresCacheBounded(t *testing.T) {
	c := &clock{t: time.Now()}
	node, _ := backends[1].new(t, c)
	p := node().(*Postgres)
	for i := range maxCached + 10 {
		p.Read("profiles/ABC12345/p"+strconv.Itoa(i)+".json", MaxSize)
	}
	p.mu.Lock()
	n := len(p.cache)
	p.mu.Unlock()
	if n > maxCached || n == 0 {
		t.Fatalf("%d cached", n)
	}
}

// FuzzCheckName: a name CheckName accepts is a file under the directory
// whatever it holds (never the directory itself, nor outside it), and the
// same name in the database; what it refuses, it says why.
func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"links.key", "accounts/ABC12345.json", "../x", "a//b", "a/./b", "/x", "a\x00", "\xff", "..", "a/..b", "...", strings.Repeat("a/", 300)} {
		f.Add(s)
	}
	root := filepath.FromSlash("/data/lodge")
	f.Fuzz(func(t *testing.T, name string) {
		err := CheckName(name)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		p := Dir(root).Where(name)
		if !strings.HasPrefix(p, root+string(filepath.Separator)) || filepath.Clean(p) != p || len(name) > MaxNameLen {
			t.Fatalf("%q is %q", name, p)
		}
		if rel, _ := filepath.Rel(root, p); filepath.ToSlash(rel) != name {
			t.Fatalf("%q is %q under the root", name, rel)
		}
	})
}
