package blob

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/VictoriaMetrics/metrics"
)

// Open returns the store a -blob URL names: "" is the local disk under
// localRoot (NewLocal), and
//
//	s3://bucket[/prefix]?endpoint=host:port[&region=r][&secure=true|false][&cache=/dir]
//
// a bucket of S3-compatible object storage (NewS3, with set for its
// metrics). endpoint "unix:/path/to.sock" is a server on a Unix socket.
// secure (https) is true unless said, or unless the endpoint is a Unix
// socket. The keys are never in the URL: they come from the environment
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY).
func Open(ctx context.Context, rawURL, localRoot string, set *metrics.Set) (Store, error) {
	if rawURL == "" {
		return NewLocal(localRoot)
	}
	cfg, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	cfg.Metrics = set
	return NewS3(ctx, cfg)
}

// MaxURLLen is the longest -blob URL.
const MaxURLLen = 4096

// urlParams are the query parameters of an s3 URL.
var urlParams = "endpoint, region, secure, cache"

// ParseURL reads an s3:// URL (see Open) into an S3Config. Its errors say
// what is wrong and where, without quoting the whole URL (which could
// hold a secret someone put in it by mistake).
func ParseURL(raw string) (S3Config, error) {
	bad := func(format string, args ...any) (S3Config, error) {
		return S3Config{}, fmt.Errorf("blob: s3 URL: "+format, args...)
	}
	if len(raw) > MaxURLLen {
		return bad("%d bytes, more than %d", len(raw), MaxURLLen)
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c < 0x21 || c >= 0x7f {
			return bad("byte %d is %q: spaces, control and non-ASCII characters must be %%-escaped", i, c)
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err // url.Error quotes the URL
		}
		return bad("%v", err)
	}
	switch {
	case u.Scheme != "s3":
		return bad("scheme %q, want s3:// (or no -blob for the local disk)", trunc(u.Scheme))
	case u.Opaque != "":
		return bad("want s3://bucket, not s3:bucket")
	case u.User != nil:
		return bad("keys are never in the URL: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return bad("a fragment (#...) means nothing here")
	case u.Port() != "" || strings.HasSuffix(u.Host, ":"):
		return bad("the host is the bucket, it has no port: the server is endpoint=host:port")
	}
	cfg := S3Config{Bucket: u.Host}
	if err := checkBucket(cfg.Bucket); err != nil {
		return S3Config{}, err
	}
	if u.RawPath != "" || strings.Contains(u.EscapedPath(), "%") {
		return bad("the prefix %q is %%-escaped: keys need no escaping", trunc(u.EscapedPath()))
	}
	if p := strings.TrimPrefix(u.Path, "/"); p != "" {
		if err := CheckKey(strings.TrimSuffix(p, "/")); err != nil {
			return bad("prefix: %v", err)
		}
		cfg.Prefix = strings.TrimSuffix(p, "/")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return bad("query: %v", err)
	}
	secure, hasSecure := "", false
	for name, vs := range q {
		if len(vs) != 1 {
			return bad("%s given %d times", trunc(name), len(vs))
		}
		v := vs[0]
		switch name {
		case "endpoint":
			cfg.Endpoint = v
		case "region":
			cfg.Region = v
			if v == "" {
				return bad("region= is empty")
			}
		case "secure":
			secure, hasSecure = v, true
		case "cache":
			cfg.CacheDir = v
			if v == "" || !filepath.IsAbs(v) || strings.IndexByte(v, 0) >= 0 {
				return bad("cache=%q: not an absolute path", trunc(v))
			}
		default:
			return bad("unknown parameter %q (there are %s)", trunc(name), urlParams)
		}
	}
	if err := checkEndpoint(cfg.Endpoint); err != nil {
		return S3Config{}, err
	}
	if err := checkRegion(cfg.Region); err != nil {
		return S3Config{}, err
	}
	switch {
	case !hasSecure:
		cfg.Secure = !strings.HasPrefix(cfg.Endpoint, "unix:")
	case secure == "true":
		cfg.Secure = true
	case secure == "false":
	default:
		return bad("secure=%q: true or false", trunc(secure))
	}
	return cfg, nil
}

// String is cfg as a -blob URL (which ParseURL reads back to cfg, keys
// and metrics aside): for logs, it holds no secret.
func (cfg S3Config) String() string {
	u := url.URL{Scheme: "s3", Host: cfg.Bucket}
	if cfg.Prefix != "" {
		u.Path = "/" + cfg.Prefix
	}
	q := url.Values{"endpoint": {cfg.Endpoint}, "secure": {strconv.FormatBool(cfg.Secure)}}
	if cfg.Region != "" {
		q.Set("region", cfg.Region)
	}
	if cfg.CacheDir != "" {
		q.Set("cache", cfg.CacheDir)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// checkBucket checks a bucket name by S3's rules: 3 to 63 of [a-z0-9.-],
// beginning and ending with a letter or digit, no "..", not an IP
// address.
func checkBucket(b string) error {
	bad := func(why string) error { return fmt.Errorf("blob: s3 bucket %q: %s", trunc(b), why) }
	if len(b) < 3 || len(b) > 63 {
		return bad("3 to 63 characters")
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			return bad(fmt.Sprintf("byte %d is %q: bucket names are [a-z0-9.-]", i, c))
		}
	}
	if !isAlnum(b[0]) || !isAlnum(b[len(b)-1]) {
		return bad("begins or ends with other than a letter or digit")
	}
	if strings.Contains(b, "..") || strings.Contains(b, ".-") || strings.Contains(b, "-.") {
		return bad(`has "..", ".-" or "-."`)
	}
	if net.ParseIP(b) != nil {
		return bad("is an IP address")
	}
	return nil
}

func isAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// maxSocketPath is the longest Unix socket path (sun_path less its NUL).
const maxSocketPath = 107

// checkEndpoint checks an endpoint: host, host:port, [v6]:port, or
// unix:/absolute/path.
func checkEndpoint(e string) error {
	bad := func(why string) error { return fmt.Errorf("blob: s3 endpoint %q: %s", trunc(e), why) }
	if e == "" {
		return fmt.Errorf("blob: s3: no endpoint: say endpoint=host:port (or unix:/path/to.sock)")
	}
	if sock, ok := strings.CutPrefix(e, "unix:"); ok {
		switch {
		case !strings.HasPrefix(sock, "/"):
			return bad("a Unix socket's path must be absolute")
		case len(sock) > maxSocketPath:
			return bad(fmt.Sprintf("a Unix socket's path is at most %d bytes", maxSocketPath))
		case strings.IndexByte(sock, 0) >= 0:
			return bad("NUL in the socket's path")
		case filepath.Clean(sock) != sock:
			return bad("the socket's path is not clean")
		}
		return nil
	}
	if strings.Contains(e, "://") {
		return bad("host:port only, no scheme (secure=true is https)")
	}
	host, port := e, ""
	if strings.HasPrefix(e, "[") || strings.Count(e, ":") == 1 {
		h, p, err := net.SplitHostPort(e)
		if err != nil {
			if !strings.HasPrefix(e, "[") || !strings.HasSuffix(e, "]") {
				return bad("want host:port")
			}
			h = e[1 : len(e)-1] // [v6] without a port
		}
		host, port = h, p
		if strings.HasPrefix(e, "[") && net.ParseIP(host) == nil {
			return bad("not an IP address in [...]")
		}
	} else if strings.Contains(e, ":") {
		return bad("an IPv6 address goes in [...]")
	}
	if port != "" || strings.HasSuffix(e, ":") {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '0' {
			return bad("the port is not a number from 1 to 65535")
		}
	}
	if host == "" {
		return bad("no host")
	}
	if net.ParseIP(host) != nil {
		return nil
	}
	if len(host) > 253 {
		return bad("host name longer than 253")
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return bad("not a host name")
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !(isAlnum(c) || 'A' <= c && c <= 'Z' || c == '-') {
				return bad(fmt.Sprintf("%q in the host name (no scheme, path or user: host:port only)", c))
			}
		}
	}
	return nil
}

// checkRegion checks a region name: up to 64 of [a-z0-9-].
func checkRegion(r string) error {
	if len(r) > 64 {
		return fmt.Errorf("blob: s3 region of %d bytes, more than 64", len(r))
	}
	for i := 0; i < len(r); i++ {
		if c := r[i]; !(isAlnum(c) || c == '-') {
			return fmt.Errorf("blob: s3 region %q: byte %d is %q: regions are [a-z0-9-]", trunc(r), i, c)
		}
	}
	return nil
}
