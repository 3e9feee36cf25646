package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/minio/minio-go/v7"

	"github.com/lodge-mail/lodge/internal/tests3"
)

func TestMain(m *testing.M) { tests3.Main(m) }

func init() {
	implementations = append(implementations, impl{
		name: "s3",
		new: func(t *testing.T) Store {
			return newTestS3(t, tests3.NewBucket(t), t.TempDir(), nil)
		},
		leftovers: s3Leftovers,
	})
}

// testPartSize is the smallest part S3 allows, so that the tests'
// bodies of a few MiB are multipart uploads.
const testPartSize = 5 << 20

func newTestS3(t *testing.T, bucket, cache string, set *metrics.Set) *S3 {
	t.Helper()
	srv := tests3.Shared(t)
	s, err := NewS3(context.Background(), S3Config{
		Bucket: bucket, Prefix: "pre/fix", Endpoint: srv.Endpoint(),
		AccessKey: srv.AccessKey(), SecretKey: srv.SecretKey(),
		CacheDir: cache, PartSize: testPartSize, Metrics: set,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// s3Leftovers lists the bucket's incomplete multipart uploads and the
// cache's temporary files.
func s3Leftovers(t *testing.T, st Store) []string {
	t.Helper()
	s := st.(*S3)
	c, err := tests3.Shared(t).Client()
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.ListMultipartUploads(context.Background(), s.bucket, "", "", "", "", 1000)
	if err != nil {
		t.Fatalf("listing multipart uploads: %v", err)
	}
	var left []string
	for _, u := range res.Uploads {
		left = append(left, "upload of "+u.Key)
	}
	filepath.WalkDir(s.cacheDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".tmp-") {
			left = append(left, p)
		}
		return nil
	})
	return left
}

// S3 keeps the SHA-1 of what Put wrote, one PUT or multipart, under the
// store's prefix.
func TestS3SHA1AndPrefix(t *testing.T) {
	bucket := tests3.NewBucket(t)
	s := newTestS3(t, bucket, t.TempDir(), nil)
	ctx := context.Background()
	for _, n := range []int{0, 1, testPartSize, testPartSize + 1, 3*testPartSize + 7} {
		b := data(uint64(n), n)
		for _, size := range []int64{-1, int64(n)} {
			key := fmt.Sprintf("sha/%d/%d", n, size+1)
			put(t, s, key, b)
			info, err := s.Stat(ctx, key)
			if err != nil || info.SHA1 != sha1hex(b) || info.Size != int64(n) {
				t.Errorf("%s: stat %+v, %v; want sha1 %s", key, info, err, sha1hex(b))
			}
			rc, oinfo, err := s.Open(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(rc)
			rc.Close()
			if oinfo.SHA1 != sha1hex(b) || !bytes.Equal(got, b) {
				t.Errorf("%s: open %+v", key, oinfo)
			}
		}
	}
	// the objects are under the prefix, in the server's own directory for the bucket
	if fi, err := os.Stat(filepath.Join(tests3.Shared(t).Root(), bucket, "pre", "fix", "sha", "1", "2")); err != nil || fi.Size() != 1 {
		t.Errorf("object not under the prefix: %v", err)
	}
}

// A single PUT carries the SHA-1 as x-amz-checksum-sha1, and the server
// checks it: a body that is not what the SHA-1 says is refused, nothing
// stored. (The payload itself is not signed: this check is what stands in
// for the streaming signature's SHA-256.)
func TestS3PutChecksumVerified(t *testing.T) {
	s := newTestS3(t, tests3.NewBucket(t), t.TempDir(), nil)
	ctx := context.Background()
	body := data(7, 64<<10)
	if _, err := s.putOne(ctx, s.okey("good"), body, sha1hex(body)); err != nil {
		t.Fatalf("the right SHA-1: %v", err)
	}
	f := func(name string, sent []byte, sum string) {
		t.Helper()
		_, err := s.putOne(ctx, s.okey(name), sent, sum)
		var er minio.ErrorResponse
		if !errors.As(err, &er) || er.Code != "BadDigest" {
			t.Errorf("%s: %v, want the server's BadDigest", name, err)
		}
		if _, err := s.Stat(ctx, name); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: stored anyway (%v)", name, err)
		}
	}
	flipped := bytes.Clone(body)
	flipped[len(flipped)/2] ^= 1
	f("one-bit", flipped, sha1hex(body))
	f("cut-short", body[:len(body)-1], sha1hex(body))
	f("other-sum", body, sha1hex([]byte("something else")))
}

// LocalPath's copy is the object's bytes; a copy written to, cut short,
// or of an object replaced or deleted through another node is not used.
func TestS3LocalPathCache(t *testing.T) {
	bucket := tests3.NewBucket(t)
	cache := t.TempDir()
	set := metrics.NewSet()
	a := newTestS3(t, bucket, cache, set)
	b := newTestS3(t, bucket, t.TempDir(), nil) // another node
	ctx := context.Background()
	body := data(9, 2<<20)
	put(t, a, "doc/x.pdf", body)
	fetches := func() int {
		var buf bytes.Buffer
		set.WritePrometheus(&buf)
		var n int
		for _, l := range strings.Split(buf.String(), "\n") {
			if v, ok := strings.CutPrefix(l, "lodge_blob_cache_fetches_total "); ok {
				fmt.Sscan(v, &n)
			}
		}
		return n
	}
	check := func(what string, want []byte, wantFetches int) string {
		t.Helper()
		p, err := a.LocalPath(ctx, "doc/x.pdf")
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: copy of %d bytes, %v; want %d", what, len(got), err, len(want))
		}
		if n := fetches(); n != wantFetches {
			t.Errorf("%s: %d fetches, want %d", what, n, wantFetches)
		}
		return p
	}
	p := check("first", body, 1)
	if p != filepath.Join(cache, "doc", "x.pdf") {
		t.Errorf("copy at %s", p)
	}
	check("cached", body, 1)

	// bytes changed in place, same size: the copy's time changed with them
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("garbage"), 1000)
	f.Close()
	check("written to", body, 2)
	// cut short
	os.Truncate(p, 100)
	check("truncated", body, 3)
	// replaced through another node, a different size
	body2 := data(10, 3<<20)
	put(t, b, "doc/x.pdf", body2)
	check("replaced", body2, 4)
	// deleted through another node: not found, whatever the cache holds
	if err := b.Delete(ctx, "doc/x.pdf"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.LocalPath(ctx, "doc/x.pdf"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted elsewhere: %v", err)
	}
	// deleted here: the copy goes too
	put(t, a, "doc/x.pdf", body)
	check("again", body, 5)
	if err := a.Delete(ctx, "doc/x.pdf"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("copy after delete: %v", err)
	}
	if left := s3Leftovers(t, a); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// A copy whose bytes disagree with the object's SHA-1 is refused.
func TestS3FetchChecksSHA1(t *testing.T) {
	bucket := tests3.NewBucket(t)
	s := newTestS3(t, bucket, t.TempDir(), nil)
	put(t, s, "k", []byte("the bytes put"))
	// the server's file changed behind its back: same size, other bytes
	f := filepath.Join(tests3.Shared(t).Root(), bucket, "pre", "fix", "k")
	if err := os.WriteFile(f, []byte("other bytes!!"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := s.LocalPath(context.Background(), "k")
	if err == nil || !strings.Contains(err.Error(), "SHA-1") {
		t.Errorf("local path of corrupt object: %v", err)
	}
	if left := s3Leftovers(t, s); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// A presigned URL fetched with a plain client gives the bytes, and names
// the file.
func TestS3DownloadURL(t *testing.T) {
	srv := tests3.Shared(t)
	s := newTestS3(t, tests3.NewBucket(t), t.TempDir(), nil)
	ctx := context.Background()
	body := data(11, 300<<10)
	put(t, s, "out/batch.pdf", body)
	client := &http.Client{Transport: srv.Transport()}
	get := func(u string) (int, []byte, http.Header) {
		t.Helper()
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b, resp.Header
	}
	f := func(filename, wantDisposition string) {
		t.Helper()
		u, err := s.DownloadURL(ctx, "out/batch.pdf", filename, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		code, b, h := get(u)
		if code != 200 || !bytes.Equal(b, body) {
			t.Fatalf("GET %s: %d, %d bytes", u, code, len(b))
		}
		if got := h.Get("Content-Disposition"); got != wantDisposition {
			t.Errorf("%q: Content-Disposition %q, want %q", filename, got, wantDisposition)
		}
	}
	f("batch 7.pdf", `attachment; filename="batch 7.pdf"`)
	f(`a "quoted" name.pdf`, `attachment; filename="a \"quoted\" name.pdf"`)
	f("été.pdf", `attachment; filename*=utf-8''%C3%A9t%C3%A9.pdf`)
	f("bad\nname", `attachment; filename*=utf-8''bad%0Aname`)

	// a URL changed after signing, or of another key, is refused
	u, _ := s.DownloadURL(ctx, "out/batch.pdf", "x.pdf", time.Hour)
	if code, _, _ := get(strings.Replace(u, "batch.pdf", "other.pdf", 1)); code != http.StatusForbidden {
		t.Errorf("tampered URL: %d", code)
	}
	for _, e := range []time.Duration{0, time.Millisecond, -time.Hour, 8 * 24 * time.Hour} {
		if _, err := s.DownloadURL(ctx, "out/batch.pdf", "x.pdf", e); err == nil {
			t.Errorf("expiry %v: no error", e)
		}
	}
}

// Ready fails while the server is down, and works again once it is up.
func TestS3ReadyDown(t *testing.T) {
	srv := tests3.Shared(t)
	set := metrics.NewSet()
	s := newTestS3(t, tests3.NewBucket(t), t.TempDir(), set)
	ctx := context.Background()
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	srv.Down()
	err := s.Ready(ctx)
	if uerr := srv.Up(); uerr != nil {
		t.Fatal(uerr)
	}
	if err == nil {
		t.Error("ready while the server is down")
	}
	if err := s.Ready(ctx); err != nil {
		t.Errorf("ready once up: %v", err)
	}
	var buf bytes.Buffer
	set.WritePrometheus(&buf)
	if !strings.Contains(buf.String(), `lodge_blob_errors_total{op="ready"} 1`) {
		t.Errorf("metrics:\n%s", buf.String())
	}
}

// While the store refuses writes, a Put fails and leaves nothing: not
// one begun before (its later parts refused), not one begun during; the
// old objects stay readable, and Puts work again afterwards.
func TestS3RefusesWrites(t *testing.T) {
	srv := tests3.Shared(t)
	bucket := tests3.NewBucket(t)
	s := newTestS3(t, bucket, t.TempDir(), nil)
	ctx := context.Background()
	put(t, s, "old", []byte("old object"))
	c, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}

	// a multipart Put in flight: its first part is on the server
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := s.Put(ctx, "inflight", pr, -1)
		done <- err
	}()
	body := data(12, 3*testPartSize)
	pw.Write(body[:testPartSize+1])
	for {
		res, err := c.ListMultipartUploads(ctx, bucket, "", "", "", "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Uploads) == 1 {
			parts, err := c.ListObjectParts(ctx, bucket, res.Uploads[0].Key, res.Uploads[0].UploadID, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(parts.ObjectParts) == 1 {
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("put ended before its first part was seen: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}

	if err := srv.SetReadOnly(true); err != nil {
		t.Fatal(err)
	}
	go func() {
		pw.Write(body[testPartSize+1:])
		pw.Close()
	}()
	if err := <-done; err == nil {
		t.Error("put in flight: no error")
	}
	pr.Close() // the Put stopped reading: the writer gets an error
	for _, size := range []int{10, 2*testPartSize + 3} {
		if _, err := s.Put(ctx, "during", bytes.NewReader(data(13, size)), -1); err == nil {
			t.Errorf("put of %d bytes while refused: no error", size)
		}
	}
	if got := string(read(t, s, "old")); got != "old object" {
		t.Errorf("old object: %q", got)
	}
	if err := s.Ready(ctx); err == nil {
		t.Error("ready while writes are refused")
	}
	if err := srv.SetReadOnly(false); err != nil {
		t.Fatal(err)
	}
	checkNotFound(t, s, "inflight")
	checkNotFound(t, s, "during")
	if got := keys(t, s, ""); fmt.Sprint(got) != "[old:10]" {
		t.Errorf("list: %v", got)
	}
	// the abort the server refused is done by the next Ready
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if left := s3Leftovers(t, s); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	put(t, s, "after", []byte("works again"))
}

// Errors are counted per operation; a missing key is no error.
func TestS3Metrics(t *testing.T) {
	set := metrics.NewSet()
	s := newTestS3(t, tests3.NewBucket(t), t.TempDir(), set)
	ctx := context.Background()
	put(t, s, "a", []byte("x"))
	s.Stat(ctx, "missing")
	s.Put(ctx, "b", &failingReader{r: strings.NewReader("y")}, -1)
	var buf bytes.Buffer
	set.WritePrometheus(&buf)
	out := buf.String()
	for _, want := range []string{
		`lodge_blob_errors_total{op="put"} 1`,
		`lodge_blob_errors_total{op="stat"} 0`,
		`lodge_blob_seconds_count{op="put"} 2`,
		`lodge_blob_seconds_count{op="stat"} 1`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("no %s in\n%s", want, out)
		}
	}
}

// NewS3 says what is wrong: no bucket, no keys, wrong keys.
func TestNewS3Errors(t *testing.T) {
	srv := tests3.Shared(t)
	ctx := context.Background()
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	f := func(cfg S3Config, want string) {
		t.Helper()
		_, err := NewS3(ctx, cfg)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", cfg, err, want)
		}
	}
	ok := S3Config{Bucket: tests3.DefaultBucket, Endpoint: srv.Endpoint(), AccessKey: srv.AccessKey(), SecretKey: srv.SecretKey()}
	cfg := ok
	cfg.Bucket = "no-such-bucket"
	f(cfg, "no bucket no-such-bucket")
	cfg = ok
	cfg.AccessKey, cfg.SecretKey = "", ""
	f(cfg, "no access key")
	cfg = ok
	cfg.SecretKey = "wrong"
	f(cfg, "bucket lodge at unix:")
	cfg = ok
	cfg.PartSize = 1 << 20
	f(cfg, "part size")
	cfg = ok
	cfg.PartSize = 6 << 30
	f(cfg, "part size")
	cfg = ok
	cfg.Prefix = "../x"
	f(cfg, "prefix")
	cfg = ok
	cfg.CacheDir = "relative"
	f(cfg, "cache directory")
	cfg = ok
	cfg.Endpoint = "unix:" + filepath.Join(t.TempDir(), "none.sock")
	f(cfg, "bucket lodge at unix:")

	// the keys from the environment
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey())
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey())
	cfg = ok
	cfg.AccessKey, cfg.SecretKey = "", ""
	if _, err := NewS3(ctx, cfg); err != nil {
		t.Error(err)
	}
}

// The -blob URL of the test server opens it, with the keys from the
// environment.
func TestOpenURL(t *testing.T) {
	srv := tests3.Shared(t)
	bucket := tests3.NewBucket(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	ctx := context.Background()
	st, err := Open(ctx, srv.URL(bucket)+"&cache="+t.TempDir(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.(*S3); !ok {
		t.Fatalf("%T", st)
	}
	put(t, st, "via/url", []byte("hello"))
	c, _ := srv.Client()
	o, err := c.Client.GetObject(ctx, bucket, "via/url", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(o)
	if string(b) != "hello" {
		t.Errorf("object %q", b)
	}
	local, err := Open(ctx, "", filepath.Join(t.TempDir(), "d"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := local.(*Local); !ok {
		t.Fatalf("%T", local)
	}
}

// A body declared larger than S3's 10,000 parts is refused before a byte
// of it is read or sent.
func TestS3TooLarge(t *testing.T) {
	s := newTestS3(t, tests3.NewBucket(t), t.TempDir(), nil)
	r := &countingReader{}
	_, err := s.Put(context.Background(), "huge", r, maxParts*testPartSize+1)
	if err == nil || !strings.Contains(err.Error(), "more than 10000 parts") || r.n != 0 {
		t.Errorf("put: %v after reading %d bytes", err, r.n)
	}
	checkNotFound(t, s, "huge")
}

type countingReader struct{ n int }

func (c *countingReader) Read(p []byte) (int, error) {
	c.n += len(p)
	return len(p), nil
}
