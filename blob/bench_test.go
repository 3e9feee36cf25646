package blob

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

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

// BenchmarkS3Put64KiB puts 64 KiB bodies (the size of a typical upload)
// into versitygw as one PUT each: the way Put sends them (the SHA-1 as
// x-amz-checksum-sha1, the payload unsigned) side by side with the way
// before (minio-go's default over plain HTTP: the payload signed in
// chunks of SHA-256). It reports the CPU of this process (the client)
// and of versitygw per PUT:
//
//	go test -run - -bench S3Put64KiB -benchtime 2000x -count 3 ./blob
func BenchmarkS3Put64KiB(b *testing.B) {
	ctx := context.Background()
	srv := tests3.Shared(b)
	s, err := NewS3(ctx, S3Config{Bucket: tests3.NewBucket(b), Endpoint: srv.Endpoint(),
		AccessKey: srv.AccessKey(), SecretKey: srv.SecretKey(), CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	body := data(64, 64<<10)
	sum := sha1hex(body)
	ways := []struct {
		name string
		put  func(key string) error
	}{
		{"checksum_sha1", func(key string) error { _, err := s.putOne(ctx, key, body, sum); return err }},
		{"streaming_signature", func(key string) error {
			_, err := s.core.PutObject(ctx, s.bucket, key, bytes.NewReader(body), int64(len(body)), "", "",
				minio.PutObjectOptions{ContentType: "application/octet-stream", UserMetadata: map[string]string{"sha1": sum}})
			return err
		}},
	}
	for _, w := range ways {
		b.Run(w.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			client, server := selfCPU(), procCPU(srv.PID())
			i := 0
			for b.Loop() {
				if err := w.put(fmt.Sprintf("%s/%d", w.name, i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric((selfCPU()-client).Seconds()*1e6/float64(i), "client-cpu-µs/op")
			b.ReportMetric((procCPU(srv.PID())-server).Seconds()*1e6/float64(i), "server-cpu-µs/op")
		})
	}
}

// selfCPU is this process's CPU time so far, user and system.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is process pid's CPU time so far, user and system, from
// /proc/PID/stat (in clock ticks of 10 ms).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// the fields after the command name, which is in parentheses
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}
