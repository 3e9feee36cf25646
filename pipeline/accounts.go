package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/datafiles"
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
//
// With several nodes the files are the database's (Files:
// datafiles.Sub(shared, "accounts"), the names <ACCOUNT>.json; lodge
// settings put accounts/<ACCOUNT>.json FILE -db URL puts one there): an
// edit applies on every node within datafiles.DefaultCacheFor.
type AccountSettings struct {
	Dir string
	Log *slog.Logger
	// Files, when set, holds the settings files instead of Dir.
	Files datafiles.Files
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

// file returns where an account's settings are and the name of its file
// there; ok is false when there are none (no Dir or Files, or not an
// account code).
func (a AccountSettings) file(account string) (f datafiles.Files, name string, ok bool) {
	if !accountFileName.MatchString(account) {
		return nil, "", false
	}
	switch {
	case a.Files != nil:
		f = a.Files
	case a.Dir != "":
		f = datafiles.Dir(a.Dir)
	default:
		return nil, "", false
	}
	return f, account + ".json", true
}

// read reads an account's file; a missing file is the zero value.
func (a AccountSettings) read(account string) (accountFile, error) {
	var s accountFile
	f, name, ok := a.file(account)
	if !ok {
		return s, nil
	}
	b, err := f.Read(name, maxSettingsBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if errors.Is(err, datafiles.ErrNotFile) {
		return s, fmt.Errorf("%s: not a file of at most %d bytes", f.Where(name), maxSettingsBytes)
	}
	if err != nil {
		return s, err
	}
	s, err = parseAccountFile(b)
	if err != nil {
		return s, fmt.Errorf("%s: %w", f.Where(name), err)
	}
	return s, nil
}

func parseAccountFile(b []byte) (accountFile, error) {
	var s accountFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(&s)
	return s, err
}

// cancelWindow reads a settings file's cancel_window.
func (s accountFile) cancelWindow() (time.Duration, bool, error) {
	if s.CancelWindow == nil {
		return 0, false, nil
	}
	d, err := time.ParseDuration(*s.CancelWindow)
	if err != nil || d < 0 || d > 30*24*time.Hour {
		return 0, false, fmt.Errorf("cancel_window %q is not a duration from 0s to 720h", *s.CancelWindow)
	}
	return d, true, nil
}

func (a AccountSettings) cancelWindow(account string) (time.Duration, bool, error) {
	s, err := a.read(account)
	if err != nil {
		return 0, false, err
	}
	d, ok, err := s.cancelWindow()
	if err != nil {
		f, name, _ := a.file(account)
		return 0, false, fmt.Errorf("%s: %w", f.Where(name), err)
	}
	return d, ok, nil
}

// CheckAccountSettings checks the bytes of a settings file as the server
// reads them (lodge settings put checks a file before it is stored): nil,
// or what is wrong.
func CheckAccountSettings(b []byte) error {
	if len(b) > maxSettingsBytes {
		return fmt.Errorf("%d bytes, more than %d", len(b), maxSettingsBytes)
	}
	s, err := parseAccountFile(b)
	if err != nil {
		return err
	}
	if _, _, err := s.cancelWindow(); err != nil {
		return err
	}
	if s.Senders != nil {
		for _, d := range s.Senders.EmailDomains {
			if why := CheckEmailDomain(d); why != "" {
				return errors.New("senders.email_domains: " + why)
			}
		}
		for _, n := range s.Senders.SMSNames {
			if why := CheckSMSName(n); why != "" {
				return errors.New("senders.sms_names: " + why)
			}
		}
	}
	return nil
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
// kept). The server reads it at each end_session. Two edits at once (of
// this process, or of any node on the shared database) are made one
// after the other: neither is lost.
func (a AccountSettings) EditSenders(account string, fn func(*Senders) error) (Senders, error) {
	f, name, ok := a.file(account)
	if !ok {
		if accountFileName.MatchString(account) {
			return Senders{}, errors.New("account settings: no directory or shared files to keep them in")
		}
		return Senders{}, fmt.Errorf("account %q: an account code is 1 to 32 capital letters and digits", account)
	}
	var out Senders
	err := f.Update(name, maxSettingsBytes, 0o640, func(old []byte, exists bool) ([]byte, error) {
		var s accountFile
		if exists {
			var err error
			if s, err = parseAccountFile(old); err != nil {
				return nil, fmt.Errorf("%s: %w", f.Where(name), err)
			}
		}
		if s.Senders == nil {
			s.Senders = &Senders{}
		}
		if err := fn(s.Senders); err != nil {
			return nil, err
		}
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return nil, err
		}
		out = *s.Senders
		return append(b, '\n'), nil
	})
	if errors.Is(err, datafiles.ErrNotFile) {
		return Senders{}, fmt.Errorf("%s: not a file of at most %d bytes", f.Where(name), maxSettingsBytes)
	}
	if err != nil {
		return Senders{}, err
	}
	return out, nil
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
