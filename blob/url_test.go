package blob

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/testenv"
)

func TestParseURL(t *testing.T) {
	f := func(raw string, want S3Config) {
		t.Helper()
		got, err := ParseURL(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", raw, got, want)
		}
		// String reads back to the same
		again, err := ParseURL(got.String())
		if err != nil || again != got {
			t.Errorf("%s: String() %s reads back as %+v, %v", raw, got.String(), again, err)
		}
	}
	f("s3://lodge?endpoint=s3.example.com", S3Config{Bucket: "lodge", Endpoint: "s3.example.com", Secure: true})
	f("s3://lodge/?endpoint=s3.example.com:9000&secure=false", S3Config{Bucket: "lodge", Endpoint: "s3.example.com:9000"})
	f("s3://my.bucket-1/a/b/?endpoint=10.0.0.1:9000&region=ap-southeast-2&secure=true&cache=/var/cache/lodge",
		S3Config{Bucket: "my.bucket-1", Prefix: "a/b", Endpoint: "10.0.0.1:9000", Region: "ap-southeast-2", Secure: true, CacheDir: "/var/cache/lodge"})
	f("s3://lodge?endpoint=unix:/run/s3/s3.sock", S3Config{Bucket: "lodge", Endpoint: "unix:/run/s3/s3.sock"})
	f("s3://lodge?endpoint=unix:/run/s3.sock&secure=true", S3Config{Bucket: "lodge", Endpoint: "unix:/run/s3.sock", Secure: true})
	f("s3://lodge?endpoint=[::1]:9000&secure=false", S3Config{Bucket: "lodge", Endpoint: "[::1]:9000"})
	f("s3://lodge?endpoint=[fe80::1]", S3Config{Bucket: "lodge", Endpoint: "[fe80::1]", Secure: true})
	f("s3://lodge?cache=/a%20b&endpoint=minio", S3Config{Bucket: "lodge", Endpoint: "minio", Secure: true, CacheDir: "/a b"})
}

// Every bad URL gets an error saying what is wrong, and no secret of the
// URL is repeated.
func TestParseURLHostile(t *testing.T) {
	f := func(raw, wantErr string) {
		t.Helper()
		_, err := ParseURL(raw)
		if err == nil {
			t.Fatalf("%q: no error", raw)
		}
		if !strings.Contains(err.Error(), wantErr) || !strings.HasPrefix(err.Error(), "blob: s3") {
			t.Errorf("%q: %v, want %q", raw, err, wantErr)
		}
		if strings.Contains(err.Error(), "s3kr1t") {
			t.Errorf("%q: the error repeats the secret: %v", raw, err)
		}
	}
	f("lodge", `scheme ""`)
	f("/var/lib/lodge", `scheme ""`)
	f("http://lodge?endpoint=x", `scheme "http"`)
	f("file:///data", `scheme "file"`)
	f("s3:lodge", "not s3:bucket")
	f("s3://", "bucket \"\": 3 to 63")
	f("s3://ab?endpoint=x", "3 to 63")
	f("s3://"+strings.Repeat("a", 64)+"?endpoint=x", "3 to 63")
	f("s3://Lodge?endpoint=x", `byte 0 is 'L'`)
	f("s3://lo_dge?endpoint=x", `byte 2 is '_'`)
	f("s3://-lodge?endpoint=x", "begins or ends")
	f("s3://lodge.?endpoint=x", "begins or ends")
	f("s3://lo..dge?endpoint=x", `".."`)
	f("s3://192.168.1.1?endpoint=x", "IP address")
	f("s3://lodge:9000?endpoint=x", "has no port")
	f("s3://lodge:?endpoint=x", "has no port")
	f("s3://AKIA:s3kr1t@lodge?endpoint=x", "keys are never in the URL")
	f("s3://s3kr1t@lodge?endpoint=x", "keys are never in the URL")
	f("s3://lodge", "no endpoint")
	f("s3://lodge?endpoint=", "no endpoint")
	f("s3://lodge?region=x", "no endpoint")
	f("s3://lodge?endpoint=http://s3.example.com", "no scheme")
	f("s3://lodge?endpoint=https://s3.example.com/", "no scheme")
	f("s3://lodge?endpoint=s3.example.com/path", `'/' in the host name`)
	f("s3://lodge?endpoint=user@host", `'@' in the host name`)
	f("s3://lodge?endpoint=host:0", "port")
	f("s3://lodge?endpoint=host:65536", "port")
	f("s3://lodge?endpoint=host:-1", "port")
	f("s3://lodge?endpoint=host:08", "port")
	f("s3://lodge?endpoint=host:", "port")
	f("s3://lodge?endpoint=:9000", "no host")
	f("s3://lodge?endpoint=::1", "[...]")
	f("s3://lodge?endpoint=[notip]:9", "not an IP address")
	f("s3://lodge?endpoint=a..b", "not a host name")
	f("s3://lodge?endpoint=-a.b", "not a host name")
	f("s3://lodge?endpoint="+strings.Repeat("a", 64)+".com", "not a host name")
	f("s3://lodge?endpoint=unix:relative.sock", "must be absolute")
	f("s3://lodge?endpoint=unix:", "must be absolute")
	f("s3://lodge?endpoint=unix:/"+strings.Repeat("s", 107), "at most 107 bytes")
	f("s3://lodge?endpoint=unix:/a/../b.sock", "not clean")
	f("s3://lodge?endpoint=unix:/a%00b", "NUL")
	f("s3://lodge?endpoint=x&endpoint=y", "endpoint given 2 times")
	f("s3://lodge?endpoint=x&secure=yes", `secure="yes"`)
	f("s3://lodge?endpoint=x&secure=1", `secure="1"`)
	f("s3://lodge?endpoint=x&secure", `secure=""`)
	f("s3://lodge?endpoint=x&region=", "region= is empty")
	f("s3://lodge?endpoint=x&region=US_EAST", "regions are [a-z0-9-]")
	f("s3://lodge?endpoint=x&region="+strings.Repeat("r", 65), "more than 64")
	f("s3://lodge?endpoint=x&cache=relative", "not an absolute path")
	f("s3://lodge?endpoint=x&cache=", "not an absolute path")
	f("s3://lodge?endpoint=x&cache=/a%00b", "not an absolute path")
	f("s3://lodge?endpoint=x&access_key=s3kr1t", `unknown parameter "access_key"`)
	f("s3://lodge?endpoint=x&Endpoint=y", `unknown parameter "Endpoint"`)
	f("s3://lodge?endpoint=x&%zz=1", "query")
	f("s3://lodge?endpoint=x;y", "query")
	f("s3://lodge?endpoint=x#frag", "fragment")
	f("s3://lodge#", "fragment")
	f("s3://lodge/../x?endpoint=x", "prefix")
	f("s3://lodge/a//b?endpoint=x", "empty element")
	f("s3://lodge/.tmp?endpoint=x", "begins with '.'")
	f("s3://lodge/a%2Fb?endpoint=x", "escaped")
	f("s3://lodge/a%20b?endpoint=x", "escaped")
	f("s3://lodge/a b?endpoint=x", "byte 12 is ' '")
	f("s3://lodge/é?endpoint=x", "byte 11")
	f("s3://lodge\x00?endpoint=x", "byte 10")
	f("s3://lodge\n?endpoint=x", "byte 10")
	f("s3://lodge/"+strings.Repeat("p", 256)+"?endpoint=x", "element of 256 bytes")
	f("s3://lodge?endpoint="+strings.Repeat("x", MaxURLLen), "more than 4096")
	f("s3://%zz?endpoint=x", "invalid URL escape")
	f("s3://[::1]?endpoint=x", "bucket")
}

func FuzzParseURL(f *testing.F) {
	testenv.LimitMinimization(f, "10s")
	for _, s := range []string{
		"s3://lodge?endpoint=s3.example.com",
		"s3://my.bucket-1/a/b/?endpoint=10.0.0.1:9000&region=ap-southeast-2&secure=true&cache=/var/cache/lodge",
		"s3://lodge?endpoint=unix:/run/s3.sock",
		"s3://lodge?endpoint=[::1]:9000&secure=false",
		"s3://a:b@lodge?endpoint=x",
		"s3://lodge/%2e%2e?endpoint=x",
		"s3:lodge",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		cfg, err := ParseURL(raw)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "blob: s3") {
				t.Errorf("%q: error %q without its prefix", raw, err)
			}
			return
		}
		if cfg.check() != nil {
			t.Errorf("%q: accepted %+v, which NewS3 refuses: %v", raw, cfg, cfg.check())
		}
		again, err := ParseURL(cfg.String())
		if err != nil || again != cfg {
			t.Errorf("%q: %+v reads back from %s as %+v, %v", raw, cfg, cfg.String(), again, err)
		}
	})
}

func FuzzCheckKey(f *testing.F) {
	testenv.LimitMinimization(f, "10s")
	for _, k := range append([]string{"a", "blobs/X/y.blob", "a/b/", "a.b/c"}, hostileKeys...) {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if CheckKey(key) != nil {
			return
		}
		// an accepted key names a file under the root, whatever it is
		root := "/r/o/o/t"
		p := filepath.Join(root, filepath.FromSlash(key))
		if !strings.HasPrefix(p, root+"/") || filepath.Clean(p) != p || p != root+"/"+key || len(key) > MaxKeyLen {
			t.Errorf("accepted %q, which is the file %s", key, p)
		}
		if CheckPrefix(key) != nil || CheckPrefix(key+"/") != nil {
			t.Errorf("key %q is no prefix", key)
		}
	})
}
