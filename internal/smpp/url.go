package smpp

import (
	"fmt"
	"net"
	"net/url"
)

// DefaultPort is SMPP's registered port, used when a URL names none.
const DefaultPort = "2775"

// ParseURL reads smpp://system_id:password@host[:port][?system_type=X]
// (lodge serve -smpp) into a Config's address and credentials; the
// system_id and password are percent-decoded. Other schemes (TLS's
// ssmpp), paths and parameters are refused.
func ParseURL(s string) (Config, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Config{}, fmt.Errorf("smpp: URL: %w", err)
	}
	if u.Scheme != "smpp" {
		return Config{}, fmt.Errorf("smpp: URL %q: scheme %q, want smpp://system_id:password@host:port", u.Redacted(), u.Scheme)
	}
	if u.Opaque != "" || u.Path != "" && u.Path != "/" || u.Fragment != "" {
		return Config{}, fmt.Errorf("smpp: URL %q: no path or fragment is read", u.Redacted())
	}
	if u.User == nil || u.User.Username() == "" {
		return Config{}, fmt.Errorf("smpp: URL %q: no system_id (smpp://system_id:password@host:port)", u.Redacted())
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return Config{}, fmt.Errorf("smpp: URL %q: no host", u.Redacted())
	}
	if port == "" {
		port = DefaultPort
	}
	cfg := Config{Addr: net.JoinHostPort(host, port), SystemID: u.User.Username()}
	cfg.Password, _ = u.User.Password()
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Config{}, fmt.Errorf("smpp: URL %q: parameters: %w", u.Redacted(), err)
	}
	for k, v := range q {
		if k != "system_type" || len(v) != 1 {
			return Config{}, fmt.Errorf("smpp: URL %q: parameter %q is not read (only system_type, once)", u.Redacted(), k)
		}
		cfg.SystemType = v[0]
	}
	if _, err := cfg.withDefaults(); err != nil {
		return Config{}, fmt.Errorf("smpp: URL %q: %w", u.Redacted(), err)
	}
	return cfg, nil
}
