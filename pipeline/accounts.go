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
)

// AccountSettings reads an account's own mailroom settings, a JSON file the
// operator keeps per account, <Dir>/<ACCOUNT>.json:
//
//	{"cancel_window": "2h30m"}
//
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

func (a AccountSettings) cancelWindow(account string) (time.Duration, bool, error) {
	if a.Dir == "" || !accountFileName.MatchString(account) {
		return 0, false, nil
	}
	path := filepath.Join(a.Dir, account+".json")
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxSettingsBytes {
		return 0, false, fmt.Errorf("%s: not a file of at most %d bytes", path, maxSettingsBytes)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false, err
	}
	var s struct {
		CancelWindow *string `json:"cancel_window"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return 0, false, fmt.Errorf("%s: %w", path, err)
	}
	if s.CancelWindow == nil {
		return 0, false, nil
	}
	d, err := time.ParseDuration(*s.CancelWindow)
	if err != nil || d < 0 || d > 30*24*time.Hour {
		return 0, false, fmt.Errorf("%s: cancel_window %q is not a duration from 0s to 720h", path, *s.CancelWindow)
	}
	return d, true, nil
}
