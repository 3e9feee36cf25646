package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/datafiles"
	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/pgdb"
)

// settingsBackend is where account settings are kept: node returns the
// settings of another node over the same files each time it is called,
// and write puts a file's raw bytes there (as an operator does).
type settingsBackend struct {
	name string
	new  func(t *testing.T) (node func() AccountSettings, write func(account, body string))
}

var settingsBackends = []settingsBackend{
	{"dir", func(t *testing.T) (func() AccountSettings, func(string, string)) {
		dir := t.TempDir()
		return func() AccountSettings { return AccountSettings{Dir: dir} }, func(account, body string) {
			os.WriteFile(filepath.Join(dir, account+".json"), []byte(body), 0o644)
		}
	}},
	{"postgres", func(t *testing.T) (func() AccountSettings, func(string, string)) {
		url := testpg.NewDatabase(t)
		node := func() datafiles.Files {
			db, err := pgdb.Open(context.Background(), pgdb.Config{URL: url})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(db.Close)
			// no cache: these tests read what was written on another node
			// at once (datafiles' tests cover the cache)
			f, err := datafiles.NewPostgres(db, datafiles.Options{CacheFor: -1})
			if err != nil {
				t.Fatal(err)
			}
			return datafiles.Sub(f, "accounts")
		}
		raw := node()
		return func() AccountSettings { return AccountSettings{Files: node()} }, func(account, body string) {
			if err := raw.Write(account+".json", []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}},
}

func forEachSettings(t *testing.T, test func(t *testing.T, node func() AccountSettings, write func(account, body string))) {
	for _, b := range settingsBackends {
		t.Run(b.name, func(t *testing.T) {
			node, write := b.new(t)
			test(t, node, write)
		})
	}
}

func TestAccountSettings(t *testing.T) {
	forEachSettings(t, func(t *testing.T, node func() AccountSettings, write func(string, string)) {
		a := node()
		f := func(account, body string, want time.Duration, wantOK bool) {
			t.Helper()
			if body != "" {
				write(account, body)
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
		f("BIG00001", `{"cancel_window":"1h"}`+strings.Repeat(" ", maxSettingsBytes), 0, false)
		f("../etc", "", 0, false)
		f("abc12345", "", 0, false)
		// what is wrong is said, with the file's name
		if _, err := a.Senders("BAD00004"); err == nil || !strings.Contains(err.Error(), "BAD00004.json") {
			t.Fatalf("a broken file's senders: %v", err)
		}
		if _, err := a.Senders("BIG00001"); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("not a file of at most %d bytes", maxSettingsBytes)) {
			t.Fatalf("a large file's senders: %v", err)
		}
		if _, err := a.EditSenders("BAD00004", func(*Senders) error { return nil }); err == nil || !strings.Contains(err.Error(), "BAD00004.json") {
			t.Fatalf("editing a broken file: %v", err)
		}
		if _, err := a.EditSenders("../etc", func(*Senders) error { return nil }); err == nil || !strings.Contains(err.Error(), "an account code") {
			t.Fatalf("editing ../etc: %v", err)
		}
	})
}

// TestEditSenders: senders edited on one node are read on another, the
// other settings kept; edits on two nodes at once are all kept.
func TestEditSenders(t *testing.T) {
	forEachSettings(t, func(t *testing.T, node func() AccountSettings, write func(string, string)) {
		a, b := node(), node()
		write("ABC12345", `{"cancel_window":"90m"}`)
		s, err := a.EditSenders("ABC12345", func(s *Senders) error {
			s.EmailDomains = append(s.EmailDomains, "example.com.au")
			return nil
		})
		if err != nil || !slices.Equal(s.EmailDomains, []string{"example.com.au"}) {
			t.Fatalf("%+v %v", s, err)
		}
		if s, err := b.Senders("ABC12345"); err != nil || !slices.Equal(s.EmailDomains, []string{"example.com.au"}) {
			t.Fatalf("on the other node: %+v %v", s, err)
		}
		if w, ok := b.CancelWindow("ABC12345"); !ok || w != 90*time.Minute {
			t.Fatalf("the cancel window after an edit: %v %v", w, ok)
		}
		// an edit that fails changes nothing
		boom := errors.New("boom")
		if _, err := b.EditSenders("ABC12345", func(s *Senders) error { s.SMSNames = []string{"X"}; return boom }); !errors.Is(err, boom) {
			t.Fatal(err)
		}
		// sixteen edits at once, half on each node
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := a
				if i%2 == 1 {
					n = b
				}
				if _, err := n.EditSenders("ABC12345", func(s *Senders) error {
					s.SMSNames = append(s.SMSNames, fmt.Sprintf("N%02d", i))
					return nil
				}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		s, err = a.Senders("ABC12345")
		if err != nil || len(s.SMSNames) != 16 || len(s.EmailDomains) != 1 {
			t.Fatalf("after 16 edits at once: %+v %v", s, err)
		}
		// a new account's file is made
		if s, err := b.EditSenders("NEW00001", func(s *Senders) error { s.SMSNames = []string{"ACME"}; return nil }); err != nil || s.SMSNames[0] != "ACME" {
			t.Fatalf("%+v %v", s, err)
		}
		if s, _ := a.Senders("NEW00001"); len(s.SMSNames) != 1 {
			t.Fatalf("the new account's senders on the other node: %+v", s)
		}
	})
}

// TestEditSendersDir: on one node's disk the file is where it always was,
// with its mode.
func TestEditSendersDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "accounts")
	if _, err := (AccountSettings{Dir: dir}).EditSenders("ABC12345", func(s *Senders) error { s.SMSNames = []string{"ACME"}; return nil }); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "ABC12345.json"))
	if err != nil || string(b) != "{\n  \"senders\": {\n    \"sms_names\": [\n      \"ACME\"\n    ]\n  }\n}\n" {
		t.Fatalf("%q %v", b, err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "ABC12345.json")); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if _, err := (AccountSettings{}).EditSenders("ABC12345", func(*Senders) error { return nil }); err == nil {
		t.Fatal("edited settings kept nowhere")
	}
}

func TestCheckAccountSettings(t *testing.T) {
	f := func(body, want string) {
		t.Helper()
		err := CheckAccountSettings([]byte(body))
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", body, err)
			}
			return
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
	f(`{}`, "")
	f(`{"cancel_window":"2h","senders":{"email_domains":["example.com.au"],"sms_names":["ACME"]}}`, "")
	f(`{"cancel_window":"soon"}`, "not a duration")
	f(`{"cancel_window":"721h"}`, "not a duration")
	f(`{"cancel_windw":"1h"}`, "cancel_windw")
	f(`{`, "EOF")
	f(`{"senders":{"email_domains":["Example.COM"]}}`, "senders.email_domains")
	f(`{"senders":{"sms_names":["far too long a name"]}}`, "senders.sms_names")
	f(strings.Repeat(" ", maxSettingsBytes+1), "more than")
}
