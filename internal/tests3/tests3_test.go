package tests3

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

func TestMain(m *testing.M) { Main(m) }

// The server answers signed requests, refuses writes while read-only and
// every request while down, and comes back with its objects.
func TestServer(t *testing.T) {
	s := Shared(t)
	bucket := NewBucket(t)
	c, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	put := func(key string) error {
		_, err := c.PutObject(ctx, bucket, key, strings.NewReader("body"), 4, "", "", minio.PutObjectOptions{})
		return err
	}
	get := func(key string) (string, error) {
		o, err := c.Client.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
		if err != nil {
			return "", err
		}
		defer o.Close()
		b, err := io.ReadAll(o)
		return string(b), err
	}
	if err := put("a"); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.BucketExists(ctx, DefaultBucket); !ok || err != nil {
		t.Errorf("default bucket: %v, %v", ok, err)
	}

	if err := s.SetReadOnly(true); err != nil {
		t.Fatal(err)
	}
	err = put("b")
	if minio.ToErrorResponse(err).StatusCode != http.StatusForbidden {
		t.Errorf("put while read-only: %v", err)
	}
	if got, err := get("a"); got != "body" || err != nil {
		t.Errorf("get while read-only: %q, %v", got, err)
	}
	if err := s.SetReadOnly(false); err != nil {
		t.Fatal(err)
	}
	if err := put("b"); err != nil {
		t.Errorf("put after read-only: %v", err)
	}

	s.Down()
	fast, err := s.client(1)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := fast.ListBuckets(short); err == nil {
		t.Error("list while down: no error")
	}
	if err := s.Up(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b"} {
		if got, err := get(k); got != "body" || err != nil {
			t.Errorf("get %s after restart: %q, %v", k, got, err)
		}
	}
	if !strings.HasPrefix(s.URL(bucket), "s3://"+bucket+"?endpoint=unix:/") || len(s.Env()) != 2 {
		t.Errorf("url %s env %v", s.URL(bucket), s.Env())
	}
}
