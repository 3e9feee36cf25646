package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/internal/durable"
)

// AccountSettings reads an account's own mailroom settings, a JSON file the
// operator keeps per account, <Dir>/<ACCOUNT>.json:
//
//	{"cancel_window": "2h30m",
//	 "senders": {"email_domains": ["example.com.au"], "sms_names": ["ACME"]}}
//
// senders are kept by lodge account sender add|remove (EditSenders): the
// domains the account's email_from may use and the alphanumeric names its
// sms_from may be.
// cancel_window is how long after end_session the account's letters can
// be cancelled (a Go duration: "0s" for none, "90m", "24h"); absent, the
// server's default (lodge serve -cancel-window) applies. The file is read
// when a mailing is submitted, so an edit applies to the next mailing.
type AccountSettings struct {
	Dir string
	Log *slog.Logger
}

var accountFileName = regexp.MustCompile(`^[A-Z0-9]{1,32}$`)

// maxSettingsBytes bounds a settings file.
const maxSettingsBytes = 64 << 10

// CancelWindow returns an account's own cancellation window; ok is false
// when it has none (no file, or a file without it). A broken file is
// logged and the default used: a mailing is never refused for the
// operator's typo, and never produced before the default window.
func (a AccountSettings) CancelWindow(account string) (time.Duration, bool) {
	w, ok, err := a.cancelWindow(account)
	if err != nil {
		log := a.Log
		if log == nil {
			log = slog.Default()
		}
		log.Error("account settings: the default cancellation window applies", "account", account, "err", err)
		return 0, false
	}
	return w, ok
}

// accountFile is the JSON of an account's settings file.
type accountFile struct {
	CancelWindow *string `json:"cancel_window,omitempty"`
	// Senders are what an operator approved for the account: email_from
	// domains and alphanumeric sms_from names.
	Senders *Senders `json:"senders,omitempty"`
}

// Senders are the sender identities an operator approved for an account
// (lodge account sender add): the domains its email_from may use, and
// the alphanumeric names its sms_from may be (a mobile number needs no
// approval).
type Senders struct {
	EmailDomains []string `json:"email_domains,omitempty"`
	SMSNames     []string `json:"sms_names,omitempty"`
}

func (a AccountSettings) path(account string) (string, bool) {
	if a.Dir == "" || !accountFileName.MatchString(account) {
		return "", false
	}
	return filepath.Join(a.Dir, account+".json"), true
}

// read reads an account's file; a missing file is the zero value.
func (a AccountSettings) read(account string) (accountFile, error) {
	var s accountFile
	path, ok := a.path(account)
	if !ok {
		return s, nil
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxSettingsBytes {
		return s, fmt.Errorf("%s: not a file of at most %d bytes", path, maxSettingsBytes)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func (a AccountSettings) cancelWindow(account string) (time.Duration, bool, error) {
	s, err := a.read(account)
	if err != nil || s.CancelWindow == nil {
		return 0, false, err
	}
	path, _ := a.path(account)
	d, err := time.ParseDuration(*s.CancelWindow)
	if err != nil || d < 0 || d > 30*24*time.Hour {
		return 0, false, fmt.Errorf("%s: cancel_window %q is not a duration from 0s to 720h", path, *s.CancelWindow)
	}
	return d, true, nil
}

// Senders returns the sender identities approved for an account. A
// broken file approves nothing (and says why).
func (a AccountSettings) Senders(account string) (Senders, error) {
	s, err := a.read(account)
	if err != nil || s.Senders == nil {
		return Senders{}, err
	}
	return *s.Senders, nil
}

// EditSenders changes an account's approved senders with fn and writes
// the file again, synced and renamed into place (the other settings
// kept). The server reads it at each end_session.
func (a AccountSettings) EditSenders(account string, fn func(*Senders) error) (Senders, error) {
	path, ok := a.path(account)
	if !ok {
		return Senders{}, fmt.Errorf("account %q: an account code is 1 to 32 capital letters and digits", account)
	}
	s, err := a.read(account)
	if err != nil {
		return Senders{}, err
	}
	if s.Senders == nil {
		s.Senders = &Senders{}
	}
	if err := fn(s.Senders); err != nil {
		return Senders{}, err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return Senders{}, err
	}
	if err := os.MkdirAll(a.Dir, 0o750); err != nil {
		return Senders{}, err
	}
	return *s.Senders, durable.WriteFile(path, append(b, '\n'), 0o640)
}

var (
	smsName     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 ._&-]{0,9}$`)
	emailDomain = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$`)
)

// CheckSMSName says what is wrong with an alphanumeric sms_from name
// ("" when nothing): 1 to 10 characters (spec 2.2), letters, digits,
// space . _ & -, starting with a letter or digit.
func CheckSMSName(s string) string {
	if !smsName.MatchString(s) {
		return fmt.Sprintf("%q is not an sms_from name: 1 to 10 letters, digits, spaces or . _ & -", s)
	}
	return ""
}

// CheckEmailDomain says what is wrong with an email_from domain.
func CheckEmailDomain(s string) string {
	if len(s) > 253 || !emailDomain.MatchString(s) {
		return fmt.Sprintf("%q is not a domain name (lower case, e.g. example.com.au)", s)
	}
	return ""
}
