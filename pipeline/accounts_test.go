package pipeline

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestAccountSettings(t *testing.T) {
	dir := t.TempDir()
	a := AccountSettings{Dir: dir}
	f := func(account, body string, want time.Duration, wantOK bool) {
		t.Helper()
		if body != "" {
			os.WriteFile(filepath.Join(dir, account+".json"), []byte(body), 0o644)
		}
		got, ok := a.CancelWindow(account)
		if got != want || ok != wantOK {
			t.Fatalf("%s %s: %v %v, want %v %v", account, body, got, ok, want, wantOK)
		}
	}
	f("NOFILE01", "", 0, false)
	f("ABC12345", `{"cancel_window":"2h30m"}`, 150*time.Minute, true)
	f("ZERO0001", `{"cancel_window":"0s"}`, 0, true)
	f("EMPTY001", `{}`, 0, false)
	// broken files: the default applies
	f("BAD00001", `{"cancel_window":"soon"}`, 0, false)
	f("BAD00002", `{"cancel_window":"-1h"}`, 0, false)
	f("BAD00003", `{"cancel_windw":"1h"}`, 0, false)
	f("BAD00004", `{`, 0, false)
	f("../etc", "", 0, false)
}
