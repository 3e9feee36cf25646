package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/billing"
	"github.com/lodge-mail/lodge/datafiles"
	"github.com/lodge-mail/lodge/delivery/links"
	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/pipeline"
)

// settingsTarget is where lodge settings keeps the files: flags are the
// command's flags for it, files the same files as the server reads them.
type settingsTarget struct {
	name string
	new  func(t *testing.T) (flags []string, files datafiles.Files)
}

var settingsTargets = []settingsTarget{
	{"data-dir", func(t *testing.T) ([]string, datafiles.Files) {
		dir := t.TempDir()
		return []string{"-data-dir", dir}, datafiles.Dir(dir)
	}},
	{"db", func(t *testing.T) ([]string, datafiles.Files) {
		url := testpg.NewDatabase(t)
		files, done, err := openSettingsFiles(context.Background(), url, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(done)
		return []string{"-db", url}, files
	}},
}

func settingsCmd(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := runSettings(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), err
}

// TestSettingsCommand: put checks a file as the server reads it and
// stores it where the server reads it; get, list and rm; names and
// contents the server would not read are refused, nothing stored.
func TestSettingsCommand(t *testing.T) {
	for _, target := range settingsTargets {
		t.Run(target.name, func(t *testing.T) {
			flags, files := target.new(t)
			dir := t.TempDir()
			file := func(name, body string) string {
				p := filepath.Join(dir, name)
				os.WriteFile(p, []byte(body), 0o644)
				return p
			}
			ok := func(want, stdin string, args ...string) {
				t.Helper()
				out, err := settingsCmd(t, stdin, append(args, flags...)...)
				if err != nil || !strings.Contains(out, want) {
					t.Fatalf("lodge settings %v: %q %v, want %q", args, out, err, want)
				}
			}
			bad := func(want string, args ...string) {
				t.Helper()
				out, err := settingsCmd(t, "", append(args, flags...)...)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("lodge settings %v: %q %v, want an error with %q", args, out, err, want)
				}
			}
			ok("accounts/ABC12345.json: stored (26 bytes)", "", "put", "accounts/ABC12345.json", file("a.json", `{"cancel_window":"2h"}`+"\n\n\n\n"))
			if w, set := (pipeline.AccountSettings{Files: datafiles.Sub(files, "accounts")}).CancelWindow("ABC12345"); !set || w != 2*time.Hour {
				t.Fatalf("the server reads %v %v", w, set)
			}
			table := `{"currency":"AUD","sheet":{"mono":1,"colour":2},"duplex_sheet":{"mono":3,"colour":4},"envelope":{"DL":5,"C4":6},
				"postage":{"regular":{"DL":7,"C4":8},"priority":{"DL":9,"C4":10}},"email":1,"sms_part":1,"fax_page":1}`
			ok("prices.json: stored", table, "put", "prices.json", "-")
			if tab, err := (billing.Prices{Files: files}).For("XYZ99999"); err != nil || tab.Postage["regular"]["DL"] != 7 {
				t.Fatalf("the server reads %+v %v", tab, err)
			}
			ok("prices/ABC12345.json: stored", table, "put", "prices/ABC12345.json", "-")
			ok("profiles/ABC12345/default.json: stored", `{"title":"Default run","duplex":true}`, "put", "profiles/ABC12345/default.json", "-")
			ok("profiles/ABC12345/statements.xml: stored", `<pack><title>Statements</title></pack>`, "put", "profiles/ABC12345/statements.xml", "-")
			ok(`{"cancel_window":"2h"}`, "", "get", "accounts/ABC12345.json")
			ok("accounts/ABC12345.json\t26 bytes\t", "", "list")
			ok("profiles/ABC12345/statements.xml\t", "", "list", "profiles/ABC12345")
			if out, _ := settingsCmd(t, "", append([]string{"list", "accounts"}, flags...)...); strings.Contains(out, "prices") {
				t.Fatalf("list accounts: %q", out)
			}
			// refused names: before anything is read or connected
			for _, name := range []string{"links.key", "../x.json", "accounts/abc12345.json", "accounts/ABC12345.txt", "accounts/ABC12345/x.json",
				"prices/../prices.json", "profiles/ABC12345/x.pdf", "profiles/../../etc/passwd", "profiles/ABC12345/" + strings.Repeat("x", 65) + ".json",
				"/etc/passwd", "prices.json\x00", "auth/keys.json", "library/ABC12345/index.json"} {
				if _, err := settingsCmd(t, "{}", append([]string{"put", name, "-"}, flags...)...); err == nil {
					t.Errorf("put %q worked", name)
				}
				if _, err := settingsCmd(t, "", append([]string{"get", name}, flags...)...); err == nil {
					t.Errorf("get %q worked", name)
				}
				if _, err := settingsCmd(t, "", append([]string{"rm", name}, flags...)...); err == nil {
					t.Errorf("rm %q worked", name)
				}
			}
			// refused contents: nothing stored, the old file kept
			bad("cancel_window", "put", "accounts/ABC12345.json", file("b.json", `{"cancel_window":"soon"}`))
			bad("cancel_windw", "put", "accounts/ABC12345.json", file("b.json", `{"cancel_windw":"1h"}`))
			bad("senders.sms_names", "put", "accounts/ABC12345.json", file("b.json", `{"senders":{"sms_names":["far too long a name"]}}`))
			bad("envelope.DL is missing", "put", "prices.json", file("b.json", `{"currency":"AUD"}`))
			bad("not letters", "put", "profiles/ABC12345/default.json", file("b.json", `{"letters":[{"postal":["A","B"]}]}`))
			bad("invalid JSON", "put", "profiles/ABC12345/default.json", file("b.json", `{"title":`))
			bad("more than 1048576 bytes", "put", "prices.json", file("big.json", strings.Repeat(" ", datafiles.MaxSize+1)))
			bad("no such file", "put", "prices.json", filepath.Join(dir, "missing.json"))
			ok(`{"cancel_window":"2h"}`, "", "get", "accounts/ABC12345.json")
			ok(`"title":"Default run"`, "", "get", "profiles/ABC12345/default.json")
			// usage
			bad("unknown subcommand", "copy")
			bad("argument", "put", "prices.json")
			bad("argument", "get")
			bad("argument", "list", "a", "b")
			// rm
			ok("accounts/ABC12345.json: removed", "", "rm", "accounts/ABC12345.json")
			if _, err := settingsCmd(t, "", append([]string{"get", "accounts/ABC12345.json"}, flags...)...); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("get after rm: %v", err)
			}
			if _, err := settingsCmd(t, "", append([]string{"rm", "accounts/ABC12345.json"}, flags...)...); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("rm twice: %v", err)
			}
		})
	}
}

// TestSettingsImport: a node's files go into the database, its links key
// too (so the links it gave verify on every node); a broken file is said
// and not imported; a second import changes nothing; a file changed in the
// database is kept unless -replace.
func TestSettingsImport(t *testing.T) {
	url := testpg.NewDatabase(t)
	dataDir := t.TempDir()
	d := datafiles.Dir(dataDir)
	// in this order: Write goes through NAME.tmp, so the leftover of an
	// interrupted write is made after the file it would have replaced
	// (a map's order once wrote it first, and the next Write renamed it)
	for _, f := range []struct{ name, body string }{
		{"accounts/ABC12345.json", `{"cancel_window":"90m"}`},
		{"accounts/ABC12345.json.tmp", `{"cancel_wi`},
		{"accounts/BAD00001.json", `{"cancel_window":"soon"}`},
		{"prices.json", `{}`},
		{"profiles/ABC12345/default.json", `{"title":"Default run"}`},
		{"profiles/ABC12345/notes.txt", `not a profile`},
	} {
		if err := d.Write(f.name, []byte(f.body), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	key, err := links.LoadOrCreateKey(filepath.Join(dataDir, "links.key"))
	if err != nil {
		t.Fatal(err)
	}
	imp := func(args ...string) (string, error) {
		return settingsCmd(t, "", append([]string{"import", "-db", url, "-data-dir", dataDir}, args...)...)
	}
	out, err := imp()
	if err == nil || !strings.Contains(err.Error(), "2 file(s) not imported") {
		t.Fatalf("import with broken files: %v\n%s", err, out)
	}
	for _, want := range []string{
		"accounts/ABC12345.json: imported\n",
		"accounts/ABC12345.json.tmp: skipped",
		"accounts/BAD00001.json: not imported: cancel_window",
		"prices.json: not imported: envelope.DL is missing",
		"profiles/ABC12345/default.json: imported\n",
		"profiles/ABC12345/notes.txt: skipped",
		"links.key: imported",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("import said\n%s\nwithout %q", out, want)
		}
	}
	shared, done, err := openSettingsFiles(context.Background(), url, "")
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if got, err := links.LoadOrCreateSharedKey(shared); err != nil || !bytes.Equal(got, key) {
		t.Fatalf("the shared key %x %v, the node's %x", got, err, key)
	}
	if w, ok := (pipeline.AccountSettings{Files: datafiles.Sub(shared, "accounts")}).CancelWindow("ABC12345"); !ok || w != 90*time.Minute {
		t.Fatalf("the imported settings: %v %v", w, ok)
	}
	if _, err := shared.Read("accounts/BAD00001.json", datafiles.MaxSize); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a broken file imported: %v", err)
	}
	// fixed, imported again
	os.Remove(filepath.Join(dataDir, "accounts", "BAD00001.json"))
	os.Remove(filepath.Join(dataDir, "prices.json"))
	if out, err := imp(); err != nil || !strings.Contains(out, "accounts/ABC12345.json: the same in the database") {
		t.Fatalf("import again: %v\n%s", err, out)
	}
	// changed in the database, then on the node: the database's is kept
	if err := shared.Write("accounts/ABC12345.json", []byte(`{"cancel_window":"3h"}`), 0); err != nil {
		t.Fatal(err)
	}
	if out, err := imp(); err != nil || !strings.Contains(out, "accounts/ABC12345.json: kept the database's") {
		t.Fatalf("import over a changed file: %v\n%s", err, out)
	}
	if out, err := imp("-replace"); err != nil || !strings.Contains(out, "accounts/ABC12345.json: replaced the database's") {
		t.Fatalf("import -replace: %v\n%s", err, out)
	}
	// another node's key: the database's stays
	os.Remove(filepath.Join(dataDir, "links.key"))
	if _, err := links.LoadOrCreateKey(filepath.Join(dataDir, "links.key")); err != nil {
		t.Fatal(err)
	}
	if out, err := imp(); err != nil || !strings.Contains(out, "links.key: kept the database's, which differs") {
		t.Fatalf("import of another key: %v\n%s", err, out)
	}
	if got, _ := links.LoadOrCreateSharedKey(shared); !bytes.Equal(got, key) {
		t.Fatal("the database's key was replaced")
	}
	if _, err := settingsCmd(t, "", "import", "-data-dir", dataDir); err == nil {
		t.Fatal("import without -db")
	}
}

// TestSenderCommandShared: lodge account sender -db edits the shared
// database's settings, not the data directory's.
func TestSenderCommandShared(t *testing.T) {
	url := testpg.NewDatabase(t)
	dataDir := t.TempDir()
	if err := runSender([]string{"add", "ABC12345", "-sms", "ACME", "-db", url, "-data-dir", dataDir}); err != nil {
		t.Fatal(err)
	}
	shared, done, err := openSettingsFiles(context.Background(), url, "")
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	s, err := (pipeline.AccountSettings{Files: datafiles.Sub(shared, "accounts")}).Senders("ABC12345")
	if err != nil || len(s.SMSNames) != 1 || s.SMSNames[0] != "ACME" {
		t.Fatalf("the shared senders: %+v %v", s, err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "accounts")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the data directory was written: %v", err)
	}
}
