package blob

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/lodge-mail/lodge/internal/tests3"
)

// BenchmarkPut40MiB puts a 40 MiB body into each store, of known size
// and not, with the default part size (16 MiB: three parts):
//
//	go test -run - -bench Put40MiB -benchtime 10x ./blob
func BenchmarkPut40MiB(b *testing.B) {
	body := data(40, 40<<20)
	ctx := context.Background()
	stores := []struct {
		name string
		new  func(b *testing.B) Store
	}{
		{"local", func(b *testing.B) Store {
			l, err := NewLocal(filepath.Join(b.TempDir(), "store"))
			if err != nil {
				b.Fatal(err)
			}
			return l
		}},
		{"s3", func(b *testing.B) Store {
			srv := tests3.Shared(b)
			s, err := NewS3(ctx, S3Config{Bucket: tests3.NewBucket(b), Endpoint: srv.Endpoint(),
				AccessKey: srv.AccessKey(), SecretKey: srv.SecretKey(), CacheDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
	}
	for _, st := range stores {
		for _, size := range []int64{int64(len(body)), -1} {
			name := st.name + "/size=known"
			if size < 0 {
				name = st.name + "/size=unknown"
			}
			b.Run(name, func(b *testing.B) {
				s := st.new(b)
				b.SetBytes(int64(len(body)))
				b.ResetTimer()
				for i := range b.N {
					// a reader that is only a reader, as a request body is
					r := struct{ *bytes.Reader }{bytes.NewReader(body)}
					if _, err := s.Put(ctx, fmt.Sprintf("bench/%d", i), r, size); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
