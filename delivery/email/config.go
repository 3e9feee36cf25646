package email

import (
	"crypto"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"
	gomail "github.com/wneessen/go-mail"

	"github.com/lodge-mail/lodge/internal/dnsname"
)

// Config configures a Mailer. The zero value of every field but URL means
// its documented default.
type Config struct {
	// URL names the server, the way to secure the connection and the
	// credentials (package doc, "Server URL"). Required.
	URL string
	// Pool is the number of connections kept open, and so the number of
	// messages in flight at a time. Default 4.
	Pool int
	// HelloName is the name given in EHLO. Default: the host's name, or
	// "localhost" when it has none that looks like a domain.
	HelloName string
	// Timeout bounds one Send from connecting (when it must) to the
	// server's answer to the message. Default 30 s.
	Timeout time.Duration
	// DKIM signs every message when its Domain is set.
	DKIM DKIM
	// RootCAs verifies the server's certificate; nil: the system's roots.
	RootCAs *x509.CertPool
	// Metrics receives the Mailer's counters (package doc); nil: none.
	Metrics *metrics.Set
	// Log receives connection events (debug) and failures (warn); nil:
	// slog.Default().
	Log *slog.Logger
}

// DKIM configures DKIM signing (RFC 6376, relaxed/relaxed, rsa-sha256 or
// ed25519-sha256 after the key). The public key must be published at
// <Selector>._domainkey.<Domain>.
type DKIM struct {
	Domain   string
	Selector string
	// KeyPath is a PEM file holding an RSA (PKCS #1 or #8) or Ed25519
	// (PKCS #8) private key, read once by New.
	KeyPath string
}

// Defaults.
const (
	DefaultPool    = 4
	DefaultTimeout = 30 * time.Second
	// maxIdle is how long a kept connection may sit unused before it is
	// replaced rather than tried: servers drop idle clients after a few
	// minutes (RFC 5321 asks them to wait 5), and trying a dead one
	// costs a round trip.
	maxIdle = time.Minute
)

// server is Config.URL read.
type server struct {
	addr        string // host:port
	host        string // for certificate checks
	implicitTLS bool   // smtps
	requireTLS  bool   // smtp with tls=required
	user, pass  string
	auth        bool // user given
	insecure    bool // insecure_auth=1
	redacted    string
}

func parseURL(raw string) (server, error) {
	var s server
	if raw == "" {
		return s, fmt.Errorf("email: no server URL (smtp://user:pass@host:port or smtps://…)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url's error quotes the URL, password included.
		return s, fmt.Errorf("email: server URL is not a URL")
	}
	s.redacted = u.Redacted()
	switch u.Scheme {
	case "smtp":
	case "smtps":
		s.implicitTLS = true
	default:
		return s, fmt.Errorf("email: server URL %s: scheme %q, want smtp or smtps", s.redacted, u.Scheme)
	}
	if u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.Fragment != "" {
		return s, fmt.Errorf("email: server URL %s: only scheme, user, password, host, port and query are allowed", s.redacted)
	}
	s.host = u.Hostname()
	if s.host == "" {
		return s, fmt.Errorf("email: server URL %s: no host", s.redacted)
	}
	port := u.Port()
	if n, err := strconv.Atoi(port); port != "" && (err != nil || n < 1 || n > 65535) {
		return s, fmt.Errorf("email: server URL %s: port %q is not 1 to 65535", s.redacted, port)
	}
	if port == "" {
		port = "587"
		if s.implicitTLS {
			port = "465"
		}
	}
	s.addr = net.JoinHostPort(s.host, port)
	if u.User != nil {
		s.user = u.User.Username()
		s.pass, _ = u.User.Password()
		s.auth = s.user != ""
	}
	for k, v := range u.Query() {
		val := v[len(v)-1]
		switch k {
		case "tls":
			switch val {
			case "required":
				s.requireTLS = true
			case "opportunistic":
			default:
				return s, fmt.Errorf("email: server URL %s: tls=%q, want required or opportunistic", s.redacted, val)
			}
		case "insecure_auth":
			switch val {
			case "1", "true":
				s.insecure = true
			case "0", "false":
			default:
				return s, fmt.Errorf("email: server URL %s: insecure_auth=%q, want 1 or 0", s.redacted, val)
			}
		default:
			return s, fmt.Errorf("email: server URL %s: unknown parameter %q (tls, insecure_auth)", s.redacted, k)
		}
	}
	return s, nil
}

// helloName is the EHLO name by default: the host's name when it looks
// like a domain (servers may check it), else localhost.
func helloName() string {
	h, err := os.Hostname()
	if err != nil || !strings.Contains(h, ".") || !dnsname.Valid(strings.ToLower(h)) {
		return "localhost"
	}
	return strings.ToLower(h)
}

func loadDKIM(d DKIM) (crypto.Signer, error) {
	if d.Domain == "" {
		if d.Selector != "" || d.KeyPath != "" {
			return nil, fmt.Errorf("email: DKIM selector or key given without a domain")
		}
		return nil, nil
	}
	if !dnsname.Valid(strings.ToLower(d.Domain)) {
		return nil, fmt.Errorf("email: DKIM domain %q is not a domain name", d.Domain)
	}
	if d.Selector == "" || !dnsname.Valid(strings.ToLower(d.Selector)) {
		return nil, fmt.Errorf("email: DKIM selector %q is not a DNS label", d.Selector)
	}
	pemBytes, err := os.ReadFile(d.KeyPath)
	if err != nil {
		return nil, fmt.Errorf("email: DKIM key: %w", err)
	}
	key, err := gomail.PrivKeyFromPEM(pemBytes)
	if err != nil {
		return nil, fmt.Errorf("email: DKIM key %s: %w", d.KeyPath, err)
	}
	return key, nil
}
