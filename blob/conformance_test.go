package blob

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// impl is one implementation of Store under the conformance suite.
type impl struct {
	name string
	// new returns an empty store of its own
	new func(t *testing.T) Store
	// leftovers lists what failed Puts may have left behind in s: the
	// local disk's temporary files, object storage's incomplete
	// multipart uploads
	leftovers func(t *testing.T, s Store) []string
}

// implementations is the table of stores every conformance test runs
// over (s3_test.go adds object storage).
var implementations = []impl{{
	name: "local",
	new: func(t *testing.T) Store {
		l, err := NewLocal(filepath.Join(t.TempDir(), "store"))
		if err != nil {
			t.Fatal(err)
		}
		return l
	},
	leftovers: func(t *testing.T, s Store) []string {
		var left []string
		root := s.(*Local).Root()
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasPrefix(d.Name(), ".tmp-") {
				left = append(left, p)
			}
			return nil
		})
		return left
	},
}}

// forEach runs test over every implementation, each subtest with a store
// of its own.
func forEach(t *testing.T, test func(t *testing.T, im impl, s Store)) {
	for _, im := range implementations {
		t.Run(im.name, func(t *testing.T) {
			test(t, im, im.new(t))
		})
	}
}

// data returns n deterministic pseudo-random bytes.
func data(seed uint64, n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), 1})
	r.Read(b)
	return b
}

func sha1hex(b []byte) string {
	s := sha1.Sum(b)
	return hex.EncodeToString(s[:])
}

func put(t *testing.T, s Store, key string, b []byte) Info {
	t.Helper()
	info, err := s.Put(context.Background(), key, bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	if info.Key != key || info.Size != int64(len(b)) || info.SHA1 != sha1hex(b) {
		t.Fatalf("put %s: %+v, want size %d sha1 %s", key, info, len(b), sha1hex(b))
	}
	return info
}

// read returns the object's bytes via Open, checking its Info.
func read(t *testing.T, s Store, key string) []byte {
	t.Helper()
	rc, info, err := s.Open(context.Background(), key)
	if err != nil {
		t.Fatalf("open %s: %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	if info.Key != key || info.Size != int64(len(b)) || (info.SHA1 != "" && info.SHA1 != sha1hex(b)) {
		t.Fatalf("open %s: %+v for %d bytes of sha1 %s", key, info, len(b), sha1hex(b))
	}
	return b
}

func keys(t *testing.T, s Store, prefix string) []string {
	t.Helper()
	var ks []string
	err := s.List(context.Background(), prefix, func(i Info) error {
		ks = append(ks, fmt.Sprintf("%s:%d", i.Key, i.Size))
		return nil
	})
	if err != nil {
		t.Fatalf("list %q: %v", prefix, err)
	}
	return ks
}

func checkNotFound(t *testing.T, s Store, key string) {
	t.Helper()
	ctx := context.Background()
	if _, _, err := s.Open(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Errorf("open %s: %v, want ErrNotFound", key, err)
	}
	if _, err := s.Stat(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Errorf("stat %s: %v, want ErrNotFound", key, err)
	}
	if _, err := s.LocalPath(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Errorf("local path %s: %v, want ErrNotFound", key, err)
	}
	if err := s.Delete(ctx, key); err != nil {
		t.Errorf("delete %s (missing): %v", key, err)
	}
}

func TestRoundTrip(t *testing.T) {
	forEach(t, func(t *testing.T, im impl, s Store) {
		ctx := context.Background()
		f := func(key string, b []byte) {
			t.Helper()
			put(t, s, key, b)
			if got := read(t, s, key); !bytes.Equal(got, b) {
				t.Fatalf("%s: read %d bytes, not what was put (%d)", key, len(got), len(b))
			}
			info, err := s.Stat(ctx, key)
			if err != nil || info.Key != key || info.Size != int64(len(b)) || info.ModTime.IsZero() {
				t.Fatalf("stat %s: %+v, %v", key, info, err)
			}
			if info.SHA1 != "" && info.SHA1 != sha1hex(b) {
				t.Fatalf("stat %s: sha1 %s, want %s", key, info.SHA1, sha1hex(b))
			}
			p, err := s.LocalPath(ctx, key)
			if err != nil {
				t.Fatalf("local path %s: %v", key, err)
			}
			if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, b) {
				t.Fatalf("local path %s: %d bytes, %v", key, len(got), err)
			}
		}
		f("a", []byte("first"))
		f("empty", nil)
		f("blobs/23456789ABCDEFGHJKMNPQRSTV/0123456789abcdef01234567.blob", data(1, 100<<10))
		f("x/y/z/deep_key!-name.pdf", data(2, 1))

		if got, want := keys(t, s, ""), []string{
			"a:5",
			"blobs/23456789ABCDEFGHJKMNPQRSTV/0123456789abcdef01234567.blob:102400",
			"empty:0",
			"x/y/z/deep_key!-name.pdf:1",
		}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("list: %v, want %v", got, want)
		}
		for _, k := range []string{"a", "empty", "x/y/z/deep_key!-name.pdf"} {
			if err := s.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
			checkNotFound(t, s, k)
		}
		if got := keys(t, s, ""); len(got) != 1 {
			t.Errorf("list after deletes: %v", got)
		}
	})
}

func TestReplace(t *testing.T) {
	forEach(t, func(t *testing.T, im impl, s Store) {
		put(t, s, "k/v", []byte("the first, longer, version"))
		put(t, s, "k/v", []byte("second"))
		if got := string(read(t, s, "k/v")); got != "second" {
			t.Errorf("after replace: %q", got)
		}
		if got := keys(t, s, ""); fmt.Sprint(got) != "[k/v:6]" {
			t.Errorf("list: %v", got)
		}
	})
}

func TestMissing(t *testing.T) {
	forEach(t, func(t *testing.T, im impl, s Store) {
		checkNotFound(t, s, "nothing")
		checkNotFound(t, s, "no/such/dir/key")
		put(t, s, "dir/file", []byte("x"))
		// a directory of keys is no object, and a key is no directory
		checkNotFound(t, s, "dir")
		checkNotFound(t, s, "dir/file/under")
		if got := keys(t, s, "dir/file/"); len(got) != 0 {
			t.Errorf("list under a key: %v", got)
		}
		if got := keys(t, s, "nothing/"); len(got) != 0 {
			t.Errorf("list of a missing prefix: %v", got)
		}
	})
}

// hostileKeys are refused by every method with an error that is not
// ErrNotFound, and nothing is written.
var hostileKeys = []string{
	"",
	"/abs",
	"/",
	"../x",
	"a/../../x",
	"..",
	".",
	"a/./b",
	"a//b",
	"a/",
	".hidden",
	"a/.tmp-123",
	"a\x00b",
	"a\\b",
	"..\\x",
	"a b",
	"a\nb",
	"a%2f..",
	"a:b",
	"é",
	"a?x=1",
	"a#f",
	"~user",
	strings.Repeat("k", MaxKeyLen+1),
	strings.Repeat("k", MaxElementLen+1),
	"a/" + strings.Repeat("k", MaxElementLen+1) + "/b",
	strings.Repeat("a/", 200) + strings.Repeat("b", 200),
}

func TestHostileKeys(t *testing.T) {
	forEach(t, func(t *testing.T, im impl, s Store) {
		ctx := context.Background()
		f := func(key string) {
			t.Helper()
			check := func(op string, err error) {
				t.Helper()
				if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "blob: ") {
					t.Errorf("%s %q: %v, want a blob: error", op, key, err)
				}
			}
			_, err := s.Put(ctx, key, strings.NewReader("x"), 1)
			check("put", err)
			_, _, err = s.Open(ctx, key)
			check("open", err)
			_, err = s.Stat(ctx, key)
			check("stat", err)
			check("delete", s.Delete(ctx, key))
			_, err = s.LocalPath(ctx, key)
			check("local path", err)
			_, err = s.DownloadURL(ctx, key, "f.pdf", 60e9)
			check("download url", err)
			if CheckKey(key) == nil {
				t.Errorf("CheckKey(%q) accepted it", key)
			}
		}
		for _, k := range hostileKeys {
			f(k)
		}
		if got := keys(t, s, ""); len(got) != 0 {
			t.Errorf("hostile keys wrote %v", got)
		}
		if left := im.leftovers(t, s); len(left) != 0 {
			t.Errorf("left behind: %v", left)
		}
		for _, p := range []string{"../", "/", "a//", ".tmp", "a/..", "a\x00"} {
			if err := s.List(ctx, p, func(Info) error { return nil }); err == nil {
				t.Errorf("list %q: no error", p)
			}
		}
		// a key of exactly the longest length is fine
		long := strings.Repeat("k", MaxElementLen-1) + "/" + strings.Repeat("k", MaxElementLen) + "/k"
		if len(long) != MaxKeyLen {
			t.Fatal(len(long))
		}
		put(t, s, long, []byte("long"))
		if string(read(t, s, long)) != "long" {
			t.Error("longest key")
		}
	})
}

func TestCheckKey(t *testing.T) {
	f := func(key, wantErr string) {
		t.Helper()
		err := CheckKey(key)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != wantErr {
			t.Errorf("CheckKey(%q) = %q, want %q", key, got, wantErr)
		}
	}
	f("a", "")
	f("blobs/ABC/0a.blob", "")
	f("a.b/c-d_e!f", "")
	f("", "blob: empty key")
	f("a//b", `blob: key "a//b": empty element at byte 2`)
	f("/a", `blob: key "/a": empty element at byte 0`)
	f("a/", `blob: key "a/": empty element at byte 2`)
	f("a/../b", `blob: key "a/../b": element ".." at byte 2 begins with '.'`)
	f("a\x00", `blob: key "a\x00": byte 1 is '\x00'; keys are [A-Za-z0-9._!-] and '/'`)
	f("a\\b", `blob: key "a\\b": byte 1 is '\\'; keys are [A-Za-z0-9._!-] and '/'`)
	f(strings.Repeat("x", 513), "blob: key of 513 bytes, more than 512")
	f("a/"+strings.Repeat("x", 256), `blob: key "a/`+strings.Repeat("x", 78)+`...": element of 256 bytes at byte 2, more than 255`)

	p := func(prefix string, ok bool) {
		t.Helper()
		if err := CheckPrefix(prefix); (err == nil) != ok {
			t.Errorf("CheckPrefix(%q) = %v", prefix, err)
		}
	}
	p("", true)
	p("a", true)
	p("a/", true)
	p("a/b", true)
	p("a/.", false)
	p("a//", false)
	p("/", false)
	p("../", false)
	p("a/../", false)
}

// failingReader gives n bytes, then fails.
type failingReader struct {
	r   io.Reader
	err error // errBody when nil
}

var errBody = errors.New("the client went away")

// errCutShort is how an HTTP server's body reader reports a body that
// ended before its length: an error wrapping io.ErrUnexpectedEOF, which
// must not be taken for the body's end.
var errCutShort = fmt.Errorf("body cut short: %w", io.ErrUnexpectedEOF)

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		if f.err != nil {
			return n, f.err
		}
		return n, errBody
	}
	return n, err
}

// A Put that fails, however it fails, stores nothing and leaves the
// previous object whole.
func TestPutFails(t *testing.T) {
	forEach(t, func(t *testing.T, im impl, s Store) {
		ctx := context.Background()
		put(t, s, "keep/old", []byte("the old object"))
		f := func(what, key string, r io.Reader, size int64) {
			t.Helper()
			if _, err := s.Put(ctx, key, r, size); err == nil {
				t.Errorf("%s: no error", what)
			}
		}
		body := data(3, 12<<20) // more than two parts of 5 MiB: a multipart upload fails
		f("fails at once", "new/a", &failingReader{r: strings.NewReader("")}, -1)
		f("fails mid-stream", "new/b", &failingReader{r: bytes.NewReader(body)}, -1)
		f("fails mid-stream, size known", "new/c", &failingReader{r: bytes.NewReader(body)}, int64(len(body))+1)
		f("shorter than declared", "new/d", bytes.NewReader(body[:100]), 101)
		f("longer than declared", "new/e", bytes.NewReader(body[:102]), 101)
		f("longer than declared, many parts", "new/f", bytes.NewReader(body), 6<<20)
		f("cut short, one part", "new/h", &failingReader{bytes.NewReader(body[:1000]), errCutShort}, -1)
		f("cut short, many parts", "new/i", &failingReader{bytes.NewReader(body), errCutShort}, -1)
		f("cut short exactly at a part's end", "new/j", &failingReader{bytes.NewReader(body[:5<<20]), errCutShort}, -1)
		f("replacement fails", "keep/old", &failingReader{r: bytes.NewReader(body)}, -1)
		f("replacement too short", "keep/old", bytes.NewReader(body), int64(len(body))+1)
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.Put(cancelled, "new/g", bytes.NewReader(body), -1); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled: %v", err)
		}
		for _, k := range []string{"new/a", "new/b", "new/c", "new/d", "new/e", "new/f", "new/g", "new/h", "new/i", "new/j"} {
			checkNotFound(t, s, k)
		}
		if got := string(read(t, s, "keep/old")); got != "the old object" {
			t.Errorf("old object now %q", got)
		}
		if got := keys(t, s, ""); fmt.Sprint(got) != "[keep/old:14]" {
			t.Errorf("list: %v", got)
		}
		if left := im.leftovers(t, s); len(left) != 0 {
			t.Errorf("left behind: %v", left)
		}
	})
}

// A large body streams through with the right SHA-1, of known size or
// not.
func TestLarge(t *testing.T) {
	forEach(t, func(t *testing.T, im impl, s Store) {
		ctx := context.Background()
		body := data(4, 40<<20)
		want := sha1hex(body)
		for _, size := range []int64{-1, int64(len(body))} {
			key := fmt.Sprintf("large/%d", size+1)
			// a reader that is only a reader: no Seek, no WriteTo, no Len
			info, err := s.Put(ctx, key, struct{ io.Reader }{bytes.NewReader(body)}, size)
			if err != nil {
				t.Fatal(err)
			}
			if info.Size != int64(len(body)) || info.SHA1 != want {
				t.Errorf("size %d: put %+v, want sha1 %s", size, info, want)
			}
			rc, oinfo, err := s.Open(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			h := sha1.New()
			n, err := io.Copy(h, rc)
			rc.Close()
			if err != nil || n != int64(len(body)) || hex.EncodeToString(h.Sum(nil)) != want {
				t.Errorf("size %d: read back %d bytes, %v", size, n, err)
			}
			if oinfo.SHA1 != "" && oinfo.SHA1 != want {
				t.Errorf("size %d: open says sha1 %s", size, oinfo.SHA1)
			}
		}
		if left := im.leftovers(t, s); len(left) != 0 {
			t.Errorf("left behind: %v", left)
		}
	})
}

func TestConcurrentPuts(t *testing.T) {
	forEach(t, func(t *testing.T, im impl, s Store) {
		ctx := context.Background()
		const n = 16
		var wg sync.WaitGroup
		errs := make(chan error, 2*n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b := data(uint64(100+i), 64<<10+i)
				// a key of its own, in a directory shared with others and in one of its own
				for _, k := range []string{fmt.Sprintf("c/shared/%02d", i), fmt.Sprintf("c/own%02d/x", i)} {
					if _, err := s.Put(ctx, k, bytes.NewReader(b), -1); err != nil {
						errs <- err
					}
				}
				// everyone writes one key: one whole object remains
				if _, err := s.Put(ctx, "c/same", bytes.NewReader(data(7, 300<<10)), -1); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		for i := range n {
			b := data(uint64(100+i), 64<<10+i)
			for _, k := range []string{fmt.Sprintf("c/shared/%02d", i), fmt.Sprintf("c/own%02d/x", i)} {
				if !bytes.Equal(read(t, s, k), b) {
					t.Errorf("%s differs", k)
				}
			}
		}
		if !bytes.Equal(read(t, s, "c/same"), data(7, 300<<10)) {
			t.Error("c/same differs")
		}
		if got := keys(t, s, "c/"); len(got) != 2*n+1 {
			t.Errorf("list: %d keys", len(got))
		}
		if left := im.leftovers(t, s); len(left) != 0 {
			t.Errorf("left behind: %v", left)
		}
	})
}

// List gives keys in byte order, as object storage does, whatever the
// directories, and only those with the prefix.
func TestListOrder(t *testing.T) {
	forEach(t, func(t *testing.T, im impl, s Store) {
		ks := []string{"a.c", "a/b", "a-b", "ab", "a_b", "a!", "b/c/d", "b/c.d", "b/c-d/e", "B", "0", "a/b0/c", "a/b.0"}
		for _, k := range ks {
			put(t, s, k, []byte(k))
		}
		f := func(prefix string, want ...string) {
			t.Helper()
			var got []string
			err := s.List(context.Background(), prefix, func(i Info) error {
				got = append(got, i.Key)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("list %q: %q, want %q", prefix, got, want)
			}
		}
		all := append([]string(nil), ks...)
		sort.Strings(all)
		f("", all...)
		f("a/", "a/b", "a/b.0", "a/b0/c")
		f("a", "a!", "a-b", "a.c", "a/b", "a/b.0", "a/b0/c", "a_b", "ab")
		f("a/b", "a/b", "a/b.0", "a/b0/c")
		f("b/c", "b/c-d/e", "b/c.d", "b/c/d")
		f("b/c/", "b/c/d")
		f("c")
		f("a/b/")
		// fn's error stops the walk and is List's
		stop := errors.New("stop")
		n := 0
		err := s.List(context.Background(), "", func(Info) error { n++; return stop })
		if err != stop || n != 1 {
			t.Errorf("stopping list: %v after %d", err, n)
		}
	})
}

func TestReady(t *testing.T) {
	forEach(t, func(t *testing.T, im impl, s Store) {
		if err := s.Ready(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := keys(t, s, ""); len(got) != 0 {
			t.Errorf("ready left %v", got)
		}
	})
}

// The local store of a directory that is gone is not ready.
func TestLocalReadyFails(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	l, err := NewLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(root)
	os.WriteFile(root, []byte("a file, not the store's directory"), 0o600)
	if err := l.Ready(context.Background()); err == nil {
		t.Error("ready with its directory gone")
	}
}

// Key k is the file <root>/k, whatever wrote it: package upload's data
// directories stay readable.
func TestLocalLayout(t *testing.T) {
	root := t.TempDir()
	l, err := NewLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	key := "blobs/23456789ABCDEFGHJKMNPQRSTV/0123456789abcdef01234567.blob"
	put(t, l, key, []byte("%PDF-1.4"))
	file := filepath.Join(root, "blobs", "23456789ABCDEFGHJKMNPQRSTV", "0123456789abcdef01234567.blob")
	if b, err := os.ReadFile(file); err != nil || string(b) != "%PDF-1.4" {
		t.Fatalf("%s: %q, %v", file, b, err)
	}
	if p, err := l.LocalPath(context.Background(), key); err != nil || p != file {
		t.Errorf("local path %q, %v; want %s", p, err, file)
	}
	// a file written by an older lodge, and a crash's temporary file
	os.WriteFile(filepath.Join(root, "blobs", "23456789ABCDEFGHJKMNPQRSTV", "old.blob"), []byte("old"), 0o600)
	os.WriteFile(filepath.Join(root, "blobs", "23456789ABCDEFGHJKMNPQRSTV", ".tmp-42"), []byte("junk"), 0o600)
	if got := string(read(t, l, "blobs/23456789ABCDEFGHJKMNPQRSTV/old.blob")); got != "old" {
		t.Errorf("old file: %q", got)
	}
	if got := keys(t, l, "blobs/"); fmt.Sprint(got) != "[blobs/23456789ABCDEFGHJKMNPQRSTV/0123456789abcdef01234567.blob:8 blobs/23456789ABCDEFGHJKMNPQRSTV/old.blob:3]" {
		t.Errorf("list: %v", got)
	}
	if u, err := l.DownloadURL(context.Background(), key, "a.pdf", 60e9); u != "" || err != nil {
		t.Errorf("download url %q, %v", u, err)
	}
	// a key whose directory is a file: an error, not a panic or a write elsewhere
	if _, err := l.Put(context.Background(), key+"/under", strings.NewReader("x"), 1); err == nil {
		t.Error("put under a file: no error")
	}
}
