package index

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lodge-mail/lodge/internal/durable"
)

// stampLayout is the stamp of an index directory (index-<stamp>): its UTC
// build time, fixed width, so that stamps sort as the times do.
const stampLayout = "20060102T150405.000000000Z"

// CheckStamp returns an error unless s is a stamp as Build writes them.
// A checked stamp is safe in a file name and an object key.
func CheckStamp(s string) error {
	t, err := time.Parse(stampLayout, s)
	if err != nil || t.Format(stampLayout) != s {
		if len(s) > 64 {
			s = s[:64] + "..."
		}
		return fmt.Errorf("index stamp %q is not a UTC time written %s", s, stampLayout)
	}
	return nil
}

// StampOf returns the stamp of an index directory's path ("" when its name
// is not index-<stamp>).
func StampOf(dir string) string {
	s, ok := strings.CutPrefix(filepath.Base(dir), "index-")
	if !ok || CheckStamp(s) != nil {
		return ""
	}
	return s
}

// Stamp returns the stamp of the index's directory (StampOf).
func (ix *Index) Stamp() string { return StampOf(ix.Dir) }

// CurrentStamp returns the stamp of dataDir's current index; the error
// wraps ErrNoIndex when there is none.
func CurrentStamp(dataDir string) (string, error) {
	dir, err := currentDir(dataDir)
	if err != nil {
		return "", err
	}
	s := StampOf(dir)
	if s == "" {
		return "", fmt.Errorf("%s: current index %s is not named index-<stamp>", dataDir, dir)
	}
	return s, nil
}

// Install adds to dataDir an index made elsewhere (one that another node
// built and published) under its own stamp, and makes it current:
//
//  1. fill writes the index into an empty directory (index-<stamp>.tmp,
//     which Open never uses);
//  2. the directory is synced and renamed to index-<stamp>;
//  3. use is called with that path (it opens the index and takes it into
//     use); its error removes the directory and leaves current as it was;
//  4. current is swapped to it, and index directories other than it and
//     the one current before are removed (that one may still be in use
//     until the checks running on it end: RemoveUnused removes it then).
//
// It holds the data directory's build lock throughout, so it fails when
// an import is running there, and refuses a stamp that is already
// current. It returns the new index directory.
func Install(dataDir, stamp string, fill func(dir string) error, use func(dir string) error) (string, error) {
	if err := CheckStamp(stamp); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockDir(dataDir)
	if err != nil {
		return "", err
	}
	defer unlock()
	final := filepath.Join(dataDir, "index-"+stamp)
	prev, err := currentDir(dataDir)
	switch {
	case errors.Is(err, ErrNoIndex):
		prev = ""
	case err != nil:
		return "", err
	case filepath.Clean(prev) == final:
		return "", fmt.Errorf("%s: index %s is already current", dataDir, stamp)
	}
	removeStale(dataDir, "") // unfinished builds and installs; keeps current
	tmp := final + ".tmp"
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
			os.RemoveAll(final)
		}
	}()
	if err := fill(tmp); err != nil {
		return "", err
	}
	if err := syncTree(tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", err
	}
	if err := durable.SyncDir(dataDir); err != nil {
		return "", err
	}
	if err := use(final); err != nil {
		return "", err
	}
	ok = true // in use now: kept even if current cannot be swapped
	if err := swapCurrent(dataDir, filepath.Base(final)); err != nil {
		return final, fmt.Errorf("%s: index %s is in use but current still names the one before: %w", dataDir, stamp, err)
	}
	removeStale(dataDir, filepath.Base(prev))
	return final, nil
}

// RemoveUnused removes the index directory dir of dataDir once nothing
// uses it, unless it is current. It is best effort: when an import or an
// Install holds the data directory it does nothing (the next one removes
// what is stale).
func RemoveUnused(dataDir, dir string) {
	if filepath.Dir(filepath.Clean(dir)) != filepath.Clean(dataDir) || StampOf(dir) == "" {
		return // not an index directory of dataDir
	}
	unlock, err := lockDir(dataDir)
	if err != nil {
		return
	}
	defer unlock()
	if cur, err := currentDir(dataDir); err == nil && filepath.Clean(cur) == filepath.Clean(dir) {
		return
	}
	os.RemoveAll(dir)
}
