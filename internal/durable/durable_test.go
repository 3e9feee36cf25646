package durable

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	f := func(content string, mode os.FileMode) {
		t.Helper()
		if err := WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil || string(b) != content {
			t.Errorf("read %q, %v; want %q", b, err, content)
		}
		if _, err := os.Stat(p + ".tmp"); !os.IsNotExist(err) {
			t.Errorf("temporary file left: %v", err)
		}
	}
	f("first", 0o600)
	f("second, longer than the first", 0o600)
	f("", 0o644)
	// a directory that does not exist: an error, nothing written
	if err := WriteFile(filepath.Join(dir, "no", "f"), []byte("x"), 0o600); err == nil {
		t.Error("no error writing into a missing directory")
	}
	if err := SyncDir(filepath.Join(dir, "no")); err == nil {
		t.Error("no error syncing a missing directory")
	}
}
