package blob

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config says where an S3 store keeps its objects. Its zero values
// mean the documented defaults.
type S3Config struct {
	Bucket string // required
	// Prefix is put before every key ("lodge/a" keeps key k as the object
	// lodge/a/k); "" for none.
	Prefix string
	// Endpoint is the server's host:port (or host), or "unix:/path/to.sock"
	// for a server on a Unix socket (requests then name the host
	// "localhost"). Required: there is no implied AWS.
	Endpoint string
	// Region is the bucket's region; "" is us-east-1.
	Region string
	// Secure speaks https to the endpoint.
	Secure bool
	// AccessKey and SecretKey are the credentials; when empty they are
	// read from the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
	// (and AWS_SESSION_TOKEN when set).
	AccessKey, SecretKey string
	// CacheDir keeps LocalPath's copies on this node; "" is
	// <user cache dir>/lodge/blob/<bucket>[/<prefix>]. One directory per
	// store: two stores sharing one would mix their keys.
	CacheDir string
	// PartSize is the size of a multipart upload's parts, and so the most
	// a Put holds in memory: "" or 0 is 16 MiB; at least 5 MiB, at most
	// 5 GiB (S3's limits). A body of up to PartSize bytes is one PUT.
	PartSize int64
	// Metrics gets the store's metrics; nil for none.
	Metrics *metrics.Set
}

const (
	// DefaultPartSize is the part size of a zero S3Config.PartSize.
	DefaultPartSize = 16 << 20
	minPartSize     = 5 << 20
	maxPartSize     = 5 << 30
	// maxParts is S3's limit of parts in a multipart upload: with the
	// default part size an object is at most 160 GiB.
	maxParts = 10000
	// sha1Meta is the user metadata (x-amz-meta-sha1) that keeps the
	// SHA-1 of an object Put wrote.
	sha1Meta = "X-Amz-Meta-Sha1"
)

// S3 keeps objects in a bucket of S3-compatible object storage shared by
// several nodes, with github.com/minio/minio-go.
//
// Put streams: a body of at most PartSize bytes is read into memory and
// sent as one PUT with its SHA-1 as the user metadata x-amz-meta-sha1; a
// longer one (or one of unknown size that turns out longer) is a
// multipart upload of PartSize parts, one part in memory at a time,
// aborted when anything fails (so no parts are left behind), and once
// complete the object is copied onto itself (server-side, if it is still
// the object this Put completed) to add x-amz-meta-sha1, since a
// multipart upload's metadata is sent before its bytes. Should that copy
// fail, the Put still succeeds (the object is whole and durable) and Stat
// reports no SHA-1 for it.
//
// LocalPath copies an object into CacheDir/<key> (a temporary file,
// synced, renamed) after checking its size and, when known, its SHA-1,
// and sets the copy's modification time to the object's. Each call asks
// the server for the object's size and time (one HEAD): a copy whose size
// or time differs (the object was replaced, or the copy written to) is
// fetched again, and a deleted object is ErrNotFound whatever the cache
// holds. Eviction: Delete removes this node's copy; copies of objects
// deleted through another node, and the cache's total size, are left
// unbounded: the operator may empty the cache directory at any time (a
// missing copy is fetched again), a program reading a copy at that
// moment keeps its open file.
//
// Metrics (on S3Config.Metrics): lodge_blob_seconds{op="..."}, a
// histogram of each operation's latency, and
// lodge_blob_errors_total{op="..."}, the operations that failed (a
// missing key is an answer, not an error), for op put, open, stat,
// delete, list, fetch (LocalPath's download) and ready;
// lodge_blob_cache_fetches_total counts LocalPath's downloads.
type S3 struct {
	core     *minio.Core
	probe    *minio.Client // Ready's: no retries, so it answers now
	bucket   string
	prefix   string // "" or ending in '/'
	cacheDir string
	partSize int64
	parts    sync.Pool // *[]byte of partSize
	m        *s3Metrics

	abortsMu sync.Mutex
	aborts   map[string]string // upload ID to object name: aborts the server refused, for Ready to try again
}

// NewS3 returns the store of cfg, after checking that the bucket exists.
func NewS3(ctx context.Context, cfg S3Config) (*S3, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.AccessKey == "" && cfg.SecretKey == "" {
		cfg.AccessKey, cfg.SecretKey = os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	}
	if cfg.AccessKey == "" || cfg.SecretKey == "" {
		return nil, errors.New("blob: s3: no access key: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	partSize := cfg.PartSize
	if partSize == 0 {
		partSize = DefaultPartSize
	}
	prefix := strings.Trim(cfg.Prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	cacheDir := cfg.CacheDir
	if cacheDir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		cacheDir = filepath.Join(base, "lodge", "blob", cfg.Bucket, filepath.FromSlash(prefix))
	}
	tr, err := minio.DefaultTransport(cfg.Secure)
	if err != nil {
		return nil, fmt.Errorf("blob: s3: %w", err)
	}
	tr.MaxIdleConnsPerHost = 64
	host := cfg.Endpoint
	if sock, ok := strings.CutPrefix(cfg.Endpoint, "unix:"); ok {
		host = "localhost"
		tr.Proxy = nil
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		}
	}
	creds := credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, os.Getenv("AWS_SESSION_TOKEN"))
	newClient := func(retries int) (*minio.Client, error) {
		return minio.New(host, &minio.Options{
			Creds: creds, Secure: cfg.Secure, Transport: tr, Region: region, MaxRetries: retries,
		})
	}
	c, err := newClient(0) // minio's default: 10 tries, backing off
	if err != nil {
		return nil, fmt.Errorf("blob: s3: %w", err)
	}
	probe, err := newClient(1)
	if err != nil {
		return nil, fmt.Errorf("blob: s3: %w", err)
	}
	s := &S3{core: &minio.Core{Client: c}, probe: probe, bucket: cfg.Bucket, prefix: prefix,
		cacheDir: cacheDir, partSize: partSize, m: newS3Metrics(cfg.Metrics), aborts: map[string]string{}}
	s.parts.New = func() any { b := make([]byte, partSize); return &b }
	ok, err := c.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("blob: s3: bucket %s at %s: %w", cfg.Bucket, cfg.Endpoint, err)
	}
	if !ok {
		return nil, fmt.Errorf("blob: s3: no bucket %s at %s", cfg.Bucket, cfg.Endpoint)
	}
	return s, nil
}

// check reports what is wrong with cfg (before the environment's keys).
func (cfg S3Config) check() error {
	if err := checkBucket(cfg.Bucket); err != nil {
		return err
	}
	if p := strings.Trim(cfg.Prefix, "/"); p != "" {
		if err := CheckKey(p); err != nil {
			return fmt.Errorf("blob: s3: prefix: %w", err)
		}
	}
	if err := checkEndpoint(cfg.Endpoint); err != nil {
		return err
	}
	if err := checkRegion(cfg.Region); err != nil {
		return err
	}
	if cfg.PartSize != 0 && (cfg.PartSize < minPartSize || cfg.PartSize > maxPartSize) {
		return fmt.Errorf("blob: s3: part size %d: at least %d (5 MiB), at most %d (5 GiB)", cfg.PartSize, minPartSize, int64(maxPartSize))
	}
	if cfg.CacheDir != "" && (!filepath.IsAbs(cfg.CacheDir) || strings.IndexByte(cfg.CacheDir, 0) >= 0) {
		return fmt.Errorf("blob: s3: cache directory %q: not an absolute path", cfg.CacheDir)
	}
	return nil
}

// okey is the object name of key.
func (s *S3) okey(key string) string { return s.prefix + key }

// notFound says whether err is S3's answer that there is no such object.
func notFound(err error) bool {
	r := minio.ToErrorResponse(err)
	return r.Code == "NoSuchKey" || (r.StatusCode == http.StatusNotFound && r.Code != "NoSuchBucket")
}

// Put stores r under key: one PUT, or a multipart upload (see S3).
func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64) (Info, error) {
	if err := CheckKey(key); err != nil {
		return Info{}, err
	}
	start := time.Now()
	info, err := s.put(ctx, key, r, size)
	s.m.done("put", start, err)
	if err != nil {
		return Info{}, fmt.Errorf("blob: put %s: %w", key, err)
	}
	return info, nil
}

// putOne sends body as one PUT of the object okey, whose SHA-1 is sum
// (hex): kept as the user metadata sha1 and sent as x-amz-checksum-sha1,
// which the server checks against what it received (S3 answers BadDigest
// to a mismatch). The payload is then not signed (UNSIGNED-PAYLOAD):
// minio-go would otherwise, over plain HTTP, sign it in chunks of SHA-256
// (streaming signature V4), hashing every byte a second time on both
// sides, 12% of a node's CPU a 64 KiB PUT; over HTTPS it never signs the
// payload. The request's headers are signed either way.
func (s *S3) putOne(ctx context.Context, okey string, body []byte, sum string) (minio.UploadInfo, error) {
	raw, err := hex.DecodeString(sum)
	if err != nil {
		return minio.UploadInfo{}, fmt.Errorf("sha1 %q: %w", sum, err)
	}
	return s.core.PutObject(ctx, s.bucket, okey, bytes.NewReader(body), int64(len(body)), "", "",
		minio.PutObjectOptions{
			ContentType: "application/octet-stream",
			// minio-go sends an x-amz-* key as a header of its own, not
			// as x-amz-meta-*, and then adds no checksum of its own
			UserMetadata:         map[string]string{"sha1": sum, "x-amz-checksum-sha1": base64.StdEncoding.EncodeToString(raw)},
			DisableContentSha256: true,
		})
}

func (s *S3) put(ctx context.Context, key string, r io.Reader, size int64) (Info, error) {
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	if size > maxParts*s.partSize {
		return Info{}, fmt.Errorf("%d bytes, more than %d parts of %d bytes", size, maxParts, s.partSize)
	}
	sr := newSumReader(ctx, r)
	var body io.Reader = sr
	var buf []byte
	if size >= 0 {
		body = io.LimitReader(sr, size+1) // one byte more tells a body longer than size
	}
	if size >= 0 && size < s.partSize {
		buf = make([]byte, size+1)
	} else {
		b := s.parts.Get().(*[]byte)
		defer s.parts.Put(b)
		buf = *b
	}
	br := bufio.NewReaderSize(body, 16)
	// readPart fills buf; last says the body has nothing after it. Only
	// the body's own io.EOF ends it: io.ReadFull's ErrUnexpectedEOF can
	// also be the error of a body cut short (an HTTP request's), which
	// must fail the Put, not store what came.
	readPart := func() (n int, last bool, err error) {
		for n < len(buf) {
			var m int
			m, err = br.Read(buf[n:])
			n += m
			if err == io.EOF {
				return n, true, nil
			}
			if err != nil {
				return n, false, err
			}
		}
		if size >= 0 && sr.n > size {
			return n, false, sizeError(sr.n, size)
		}
		if _, err := br.Peek(1); errors.Is(err, io.EOF) {
			return n, true, nil
		} else if err != nil {
			return n, false, err
		}
		return n, false, nil
	}
	checkSize := func() error {
		if size >= 0 && sr.n != size {
			return sizeError(sr.n, size)
		}
		return nil
	}
	n, last, err := readPart()
	if err != nil {
		return Info{}, err
	}
	okey := s.okey(key)
	if last {
		if err := checkSize(); err != nil {
			return Info{}, err
		}
		sum := sr.sum()
		up, err := s.putOne(ctx, okey, buf[:n], sum)
		if err != nil {
			return Info{}, err
		}
		return Info{Key: key, Size: sr.n, SHA1: sum, ModTime: modTime(up.LastModified)}, nil
	}

	uploadID, err := s.core.NewMultipartUpload(ctx, s.bucket, okey, minio.PutObjectOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return Info{}, err
	}
	completed := false
	defer func() {
		if !completed {
			s.abort(ctx, okey, uploadID)
		}
	}()
	var parts []minio.CompletePart
	for num := 1; ; num++ {
		if num > maxParts {
			return Info{}, fmt.Errorf("more than %d parts of %d bytes", maxParts, s.partSize)
		}
		p, err := s.core.PutObjectPart(ctx, s.bucket, okey, uploadID, num, bytes.NewReader(buf[:n]), int64(n), minio.PutObjectPartOptions{})
		if err != nil {
			return Info{}, fmt.Errorf("part %d: %w", num, err)
		}
		parts = append(parts, minio.CompletePart{PartNumber: num, ETag: p.ETag})
		if last {
			break
		}
		if n, last, err = readPart(); err != nil {
			return Info{}, err
		}
	}
	if err := checkSize(); err != nil {
		return Info{}, err
	}
	up, err := s.core.CompleteMultipartUpload(ctx, s.bucket, okey, uploadID, parts, minio.PutObjectOptions{})
	if err != nil {
		return Info{}, err
	}
	completed = true
	sum := sr.sum()
	info := Info{Key: key, Size: sr.n, SHA1: sum, ModTime: modTime(up.LastModified)}
	// the metadata of a multipart upload is sent before its bytes: add the
	// SHA-1 by copying the object onto itself, if it is still ours
	oi, err := s.core.CopyObject(ctx, s.bucket, okey, s.bucket, okey,
		map[string]string{"x-amz-metadata-directive": "REPLACE", sha1Meta: sum, "Content-Type": "application/octet-stream"},
		minio.CopySrcOptions{Bucket: s.bucket, Object: okey, MatchETag: up.ETag}, minio.PutObjectOptions{})
	if err != nil {
		slog.Warn("blob: the SHA-1 of a multipart upload not recorded: Stat will not report it", "key", key, "err", err)
		return info, nil
	}
	if !oi.LastModified.IsZero() {
		info.ModTime = oi.LastModified
	}
	return info, nil
}

// abort aborts a multipart upload, even when ctx is done, so that its
// parts do not stay (and cost) in the bucket.
func (s *S3) abort(ctx context.Context, okey, uploadID string) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := s.core.AbortMultipartUpload(actx, s.bucket, okey, uploadID); err != nil && !noSuchUpload(err) {
		slog.Warn("blob: aborting a failed multipart upload: Ready will try again", "object", okey, "upload", uploadID, "err", err)
		s.abortsMu.Lock()
		if len(s.aborts) < maxPendingAborts {
			s.aborts[uploadID] = okey
		}
		s.abortsMu.Unlock()
	}
}

// maxPendingAborts bounds the aborts Ready tries again: past it a
// refused abort is only logged (a bucket lifecycle rule that aborts
// incomplete multipart uploads after a day is the backstop).
const maxPendingAborts = 1000

func noSuchUpload(err error) bool {
	return minio.ToErrorResponse(err).Code == "NoSuchUpload"
}

// retryAborts tries again the aborts the server refused.
func (s *S3) retryAborts(ctx context.Context) error {
	s.abortsMu.Lock()
	pending := make(map[string]string, len(s.aborts))
	for id, okey := range s.aborts {
		pending[id] = okey
	}
	s.abortsMu.Unlock()
	for id, okey := range pending {
		err := (&minio.Core{Client: s.probe}).AbortMultipartUpload(ctx, s.bucket, okey, id)
		if err != nil && !noSuchUpload(err) {
			return fmt.Errorf("aborting the multipart upload of %s: %w", okey, err)
		}
		s.abortsMu.Lock()
		delete(s.aborts, id)
		s.abortsMu.Unlock()
	}
	return nil
}

func modTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

// info turns what the server said of an object into an Info.
func (s *S3) info(key string, oi minio.ObjectInfo) Info {
	sum := oi.Metadata.Get(sha1Meta)
	if !isSHA1Hex(sum) {
		sum = ""
	}
	return Info{Key: key, Size: oi.Size, SHA1: sum, ModTime: oi.LastModified}
}

func isSHA1Hex(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !('0' <= s[i] && s[i] <= '9' || 'a' <= s[i] && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// Open GETs the object.
func (s *S3) Open(ctx context.Context, key string) (io.ReadCloser, Info, error) {
	if err := CheckKey(key); err != nil {
		return nil, Info{}, err
	}
	start := time.Now()
	rc, oi, _, err := s.core.GetObject(ctx, s.bucket, s.okey(key), minio.GetObjectOptions{})
	if notFound(err) {
		err = ErrNotFound
	}
	s.m.done("open", start, err)
	if err != nil {
		return nil, Info{}, fmt.Errorf("blob: open %s: %w", key, err)
	}
	return rc, s.info(key, oi), nil
}

// Stat HEADs the object.
func (s *S3) Stat(ctx context.Context, key string) (Info, error) {
	if err := CheckKey(key); err != nil {
		return Info{}, err
	}
	start := time.Now()
	info, err := s.stat(ctx, key)
	s.m.done("stat", start, err)
	if err != nil {
		return Info{}, fmt.Errorf("blob: stat %s: %w", key, err)
	}
	return info, nil
}

func (s *S3) stat(ctx context.Context, key string) (Info, error) {
	oi, err := s.core.StatObject(ctx, s.bucket, s.okey(key), minio.StatObjectOptions{})
	if notFound(err) {
		return Info{}, ErrNotFound
	}
	if err != nil {
		return Info{}, err
	}
	return s.info(key, oi), nil
}

// Delete removes the object and this node's cached copy of it.
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	start := time.Now()
	err := s.core.RemoveObject(ctx, s.bucket, s.okey(key), minio.RemoveObjectOptions{})
	if notFound(err) {
		err = nil
	}
	if err == nil {
		if rerr := os.Remove(s.cachePath(key)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && !errors.Is(rerr, errNotDir) {
			err = rerr
		}
	}
	s.m.done("delete", start, err)
	if err != nil {
		return fmt.Errorf("blob: delete %s: %w", key, err)
	}
	return nil
}

// List lists the bucket under the store's prefix and prefix. Objects
// whose names are no valid key (not written by a Store) are skipped.
// Info.SHA1 is "" (a listing does not carry metadata).
func (s *S3) List(ctx context.Context, prefix string, fn func(Info) error) error {
	if err := CheckPrefix(prefix); err != nil {
		return err
	}
	start := time.Now()
	var ferr error
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err := func() error {
		for oi := range s.core.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.okey(prefix), Recursive: true}) {
			if oi.Err != nil {
				return oi.Err
			}
			key, ok := strings.CutPrefix(oi.Key, s.prefix)
			if !ok || CheckKey(key) != nil {
				continue
			}
			if ferr = fn(Info{Key: key, Size: oi.Size, ModTime: oi.LastModified}); ferr != nil {
				return nil
			}
		}
		return nil
	}()
	s.m.done("list", start, err)
	if err != nil {
		return fmt.Errorf("blob: list %s: %w", prefix, err)
	}
	return ferr
}

func (s *S3) cachePath(key string) string {
	return filepath.Join(s.cacheDir, filepath.FromSlash(key))
}

// LocalPath returns the verified copy of the object in the cache, fetched
// when it is missing or stale (see S3).
func (s *S3) LocalPath(ctx context.Context, key string) (string, error) {
	if err := CheckKey(key); err != nil {
		return "", err
	}
	start := time.Now()
	info, err := s.stat(ctx, key)
	s.m.done("stat", start, err)
	if err != nil {
		return "", fmt.Errorf("blob: local path %s: %w", key, err)
	}
	p := s.cachePath(key)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Size() == info.Size && fi.ModTime().Equal(info.ModTime) {
		return p, nil
	}
	start = time.Now()
	err = s.fetch(ctx, key, p)
	if errors.Is(err, ErrNotFound) {
		s.m.done("fetch", start, nil)
		return "", fmt.Errorf("blob: local path %s: %w", key, err)
	}
	s.m.done("fetch", start, err)
	s.m.fetches.Inc()
	if err != nil {
		return "", fmt.Errorf("blob: local path %s: %w", key, err)
	}
	return p, nil
}

// fetch downloads the object to p: a temporary file beside it, its size
// and SHA-1 checked, synced (so that a crash cannot leave a copy of the
// right size and time but not the right bytes), its time set to the
// object's, renamed over p.
func (s *S3) fetch(ctx context.Context, key, p string) error {
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	rc, oi, _, err := s.core.GetObject(ctx, s.bucket, s.okey(key), minio.GetObjectOptions{})
	if notFound(err) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	defer rc.Close()
	info := s.info(key, oi)
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if tmp != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	sr := newSumReader(ctx, rc)
	if _, err := copyBody(tmp, sr, info.Size); err != nil {
		return err
	}
	if info.SHA1 != "" && sr.sum() != info.SHA1 {
		return fmt.Errorf("downloaded bytes of SHA-1 %s, the object's is %s", sr.sum(), info.SHA1)
	}
	if err := tmp.Chmod(0o440); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chtimes(tmp.Name(), info.ModTime, info.ModTime); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return err
	}
	tmp = nil
	return nil
}

// MaxDownloadExpiry is the longest a presigned URL can be valid (S3's
// limit of a signature).
const MaxDownloadExpiry = 7 * 24 * time.Hour

// DownloadURL presigns a GET of the object, valid for expiry (a second
// to 7 days), that names the download filename (Content-Disposition:
// attachment) when filename is not "". It does not ask the server
// whether the object exists.
func (s *S3) DownloadURL(ctx context.Context, key, filename string, expiry time.Duration) (string, error) {
	if err := CheckKey(key); err != nil {
		return "", err
	}
	if expiry < time.Second || expiry > MaxDownloadExpiry {
		return "", fmt.Errorf("blob: download url %s: expiry %v, not within 1s to %v", key, expiry, MaxDownloadExpiry)
	}
	params := url.Values{}
	if filename != "" {
		params.Set("response-content-disposition", contentDisposition(filename))
	}
	u, err := s.core.PresignedGetObject(ctx, s.bucket, s.okey(key), expiry, params)
	if err != nil {
		return "", fmt.Errorf("blob: download url %s: %w", key, err)
	}
	return u.String(), nil
}

// contentDisposition names filename for a download: quoted, or encoded
// (RFC 2231) when it is not plain ASCII; a name that cannot be said (a
// control character) is left out.
func contentDisposition(filename string) string {
	if v := mime.FormatMediaType("attachment", map[string]string{"filename": filename}); v != "" {
		return v
	}
	return "attachment"
}

// Ready puts, stats and deletes a small probe object (under the prefix,
// named .ready-<random>: no key can name it), without retries, then
// aborts the multipart uploads of failed Puts whose abort the server
// refused (while it refused writes).
func (s *S3) Ready(ctx context.Context) error {
	start := time.Now()
	err := s.ready(ctx)
	s.m.done("ready", start, err)
	if err != nil {
		return fmt.Errorf("blob: ready: %w", err)
	}
	return nil
}

func (s *S3) ready(ctx context.Context) error {
	var b [8]byte
	rand.Read(b[:])
	name := s.prefix + ".ready-" + hex.EncodeToString(b[:])
	body := []byte("ready\n")
	if _, err := s.probe.PutObject(ctx, s.bucket, name, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
		return err
	}
	oi, err := s.probe.StatObject(ctx, s.bucket, name, minio.StatObjectOptions{})
	if err == nil && oi.Size != int64(len(body)) {
		err = fmt.Errorf("probe object of %d bytes, want %d", oi.Size, len(body))
	}
	if derr := s.probe.RemoveObject(ctx, s.bucket, name, minio.RemoveObjectOptions{}); err == nil {
		err = derr
	}
	if err != nil {
		return err
	}
	return s.retryAborts(ctx)
}

// s3Metrics are an S3 store's metrics; a nil set gives metrics nobody
// reads.
type s3Metrics struct {
	seconds map[string]*metrics.Histogram
	errors  map[string]*metrics.Counter
	fetches *metrics.Counter
}

var s3Ops = []string{"put", "open", "stat", "delete", "list", "fetch", "ready"}

func newS3Metrics(set *metrics.Set) *s3Metrics {
	if set == nil {
		set = metrics.NewSet() // never registered: counted and dropped
	}
	m := &s3Metrics{seconds: map[string]*metrics.Histogram{}, errors: map[string]*metrics.Counter{},
		fetches: set.GetOrCreateCounter("lodge_blob_cache_fetches_total")}
	for _, op := range s3Ops {
		m.seconds[op] = set.GetOrCreateHistogram(`lodge_blob_seconds{op="` + op + `"}`)
		m.errors[op] = set.GetOrCreateCounter(`lodge_blob_errors_total{op="` + op + `"}`)
	}
	return m
}

// done records an operation that began at start; ErrNotFound is no
// error.
func (m *s3Metrics) done(op string, start time.Time, err error) {
	m.seconds[op].UpdateDuration(start)
	if err != nil && !errors.Is(err, ErrNotFound) {
		m.errors[op].Inc()
	}
}
