package testenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// NpmCI installs the npm packages pinned by npmDir's package.json and
// package-lock.json (npm ci) once per lock file, into the user's cache
// folder (lodge-test/npm-<name>-<hash of both files>), and returns that
// node_modules folder. check is a file under it that says the install is
// whole (e.g. "axe-core/axe.min.js"). Concurrent test processes may
// install at once: one rename wins, whole. npm is found with Tool:
// missing, the test is skipped, or fails in CI.
func NpmCI(t interface {
	Helper()
	Skipf(string, ...any)
	Fatalf(string, ...any)
}, npmDir, name, check string) string {
	t.Helper()
	pkg, err := os.ReadFile(filepath.Join(npmDir, "package.json"))
	if err != nil {
		t.Fatalf("%v", err)
	}
	lock, err := os.ReadFile(filepath.Join(npmDir, "package-lock.json"))
	if err != nil {
		t.Fatalf("%v", err)
	}
	sum := sha256.Sum256(append(pkg, lock...))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "lodge-test", "npm-"+name+"-"+hex.EncodeToString(sum[:6]))
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, check)); err == nil {
		return modules
	}
	npm := Tool(t, "npm")
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatalf("%v", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer os.RemoveAll(tmp) // left only when the rename did not happen
	for f, b := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
			t.Fatalf("%v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--prefix", tmp, "--no-audit", "--no-fund", "--loglevel=error")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("npm ci of %s (%s): %v\n%s", name, npmDir, err, out.String())
	}
	if err := os.Rename(tmp, dir); err != nil {
		// another test process installed it meanwhile
		if _, serr := os.Stat(filepath.Join(modules, check)); serr != nil {
			t.Fatalf("installing %s: %v", name, err)
		}
	}
	return modules
}
