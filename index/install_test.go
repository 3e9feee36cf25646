package index_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	. "github.com/lodge-mail/lodge/index"
)

func TestCheckStamp(t *testing.T) {
	f := func(s string, ok bool) {
		t.Helper()
		if err := CheckStamp(s); (err == nil) != ok {
			t.Errorf("CheckStamp(%q) = %v, want ok %v", s, err, ok)
		}
	}
	f("20250102T030405.123456789Z", true)
	f("20250102T030405.000000000Z", true)
	f("", false)
	f("20250102T030405Z", false)            // no fraction
	f("20250102T030405.123Z", false)        // short fraction
	f("20251302T030405.123456789Z", false)  // month 13
	f("20250102T030405.123456789Z/", false) // a path
	f("../20250102T030405.123456789Z", false)
	f("20250102T030405.123456789+01:00", false)
	f(" 20250102T030405.123456789Z", false)
}

// tinyIndex builds an index of one locality into a data directory of its
// own and returns its directory.
func tinyIndex(t *testing.T) string {
	t.Helper()
	csv := filepath.Join(t.TempDir(), "localities-au.csv")
	if err := os.WriteFile(csv, []byte("locality,state,postcode,count,latitude,longitude\nCarlton,VIC,3053,1,-37.8,144.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Build(context.Background(), Sources{Dir: filepath.Dir(csv), Files: map[string]string{SrcGNAFLocalities: csv}}, t.TempDir(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	return res.Dir
}

func indexDirs(t *testing.T, dataDir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "index-") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// TestInstall: an index made elsewhere is installed under its stamp,
// opened by use before it becomes current, and the index current before
// is kept until RemoveUnused; a fill or use that fails, a stamp already
// current or a running import leave the data directory as it was.
func TestInstall(t *testing.T) {
	dataDir := t.TempDir()
	first := tinyIndex(t)
	copyIndex := func(src string) func(dir string) error {
		return func(dir string) error { return os.CopyFS(dir, os.DirFS(src)) }
	}
	var opened *Index
	open := func(dir string) error {
		var err error
		opened, err = OpenDir(dir)
		return err
	}
	dir1, err := Install(dataDir, StampOf(first), copyIndex(first), open)
	if err != nil {
		t.Fatal(err)
	}
	if opened.Stamp() != StampOf(first) || opened.Meta.Counts.Localities != 1 {
		t.Fatalf("use opened %s with %d localities", opened.Stamp(), opened.Meta.Counts.Localities)
	}
	opened.Close()
	if s, err := CurrentStamp(dataDir); err != nil || s != StampOf(first) {
		t.Fatalf("current %s %v, want %s", s, err, StampOf(first))
	}
	if _, err := Install(dataDir, StampOf(first), copyIndex(first), open); err == nil || !strings.Contains(err.Error(), "already current") {
		t.Errorf("installing the current stamp again: %v", err)
	}

	second := tinyIndex(t)
	boom := errors.New("boom")
	for name, c := range map[string]struct{ fill, use func(string) error }{
		"fill fails": {fill: func(string) error { return boom }, use: open},
		"use fails":  {fill: copyIndex(second), use: func(string) error { return boom }},
	} {
		if _, err := Install(dataDir, StampOf(second), c.fill, c.use); !errors.Is(err, boom) {
			t.Errorf("%s: %v", name, err)
		}
		if dirs := indexDirs(t, dataDir); len(dirs) != 1 || dirs[0] != filepath.Base(dir1) {
			t.Errorf("%s: left %v", name, dirs)
		}
		if s, _ := CurrentStamp(dataDir); s != StampOf(first) {
			t.Errorf("%s: current moved to %s", name, s)
		}
	}

	// an import running in the data directory holds its lock
	lock, err := os.OpenFile(filepath.Join(dataDir, ".build.lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(dataDir, StampOf(second), copyIndex(second), open); err == nil || !strings.Contains(err.Error(), "another import is running") {
		t.Errorf("install during an import: %v", err)
	}
	RemoveUnused(dataDir, dir1) // nothing while locked, and dir1 is current anyway
	lock.Close()

	dir2, err := Install(dataDir, StampOf(second), copyIndex(second), open)
	if err != nil {
		t.Fatal(err)
	}
	opened.Close()
	if dirs := indexDirs(t, dataDir); len(dirs) != 2 {
		t.Errorf("after the second install: %v, want the new and the one before", dirs)
	}
	RemoveUnused(dataDir, dir2)  // current: kept
	RemoveUnused(dataDir, first) // not in dataDir: ignored
	if _, err := os.Stat(first); err != nil {
		t.Errorf("RemoveUnused removed a directory of another data directory: %v", err)
	}
	RemoveUnused(dataDir, dir1)
	if dirs := indexDirs(t, dataDir); len(dirs) != 1 || dirs[0] != filepath.Base(dir2) {
		t.Errorf("after RemoveUnused of the one before: %v", dirs)
	}
	ix, err := Open(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.Dir != dir2 {
		t.Errorf("Open gives %s, want %s", ix.Dir, dir2)
	}
}
