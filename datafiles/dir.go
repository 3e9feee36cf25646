package datafiles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/lodge-mail/lodge/internal/durable"
)

// Dir is the files of one node's data directory: the name a/b is the file
// <Dir>/a/b. It is what lodge always read and wrote, unchanged: a file
// read is stat'ed (following links) and must be regular, a file written
// goes through durable.WriteFile, a directory made is mode 0750.
type Dir string

func (d Dir) path(name string) string { return filepath.Join(string(d), filepath.FromSlash(name)) }

// Where is the file's path.
func (d Dir) Where(name string) string { return d.path(name) }

// Read implements Files.
func (d Dir) Read(name string, max int64) ([]byte, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	p := d.path(name)
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > max {
		return nil, fmt.Errorf("%s: %w", p, ErrNotFile)
	}
	return os.ReadFile(p)
}

// Write implements Files.
func (d Dir) Write(name string, b []byte, perm fs.FileMode) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if len(b) > MaxSize {
		return fmt.Errorf("%s: %w", d.path(name), ErrTooLarge)
	}
	p := d.path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		return err
	}
	return durable.WriteFile(p, b, perm)
}

// Create implements Files: the file is written under a temporary name and
// linked to its own, which, unlike a rename, fails when the name exists,
// so that the first maker's file stays.
func (d Dir) Create(name string, b []byte, perm fs.FileMode) ([]byte, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if len(b) > MaxSize {
		return nil, fmt.Errorf("%s: %w", d.path(name), ErrTooLarge)
	}
	old, err := d.Read(name, MaxSize)
	if !errors.Is(err, fs.ErrNotExist) {
		return old, err
	}
	p := d.path(name)
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, ".create-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return nil, err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), p); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return d.Read(name, MaxSize)
		}
		return nil, err
	}
	if err := durable.SyncDir(dir); err != nil {
		return nil, err
	}
	return b, nil
}

// fileLocks serialises the Updates of a file within the process (by its
// path, whatever Dir value names it).
var fileLocks sync.Map // path -> *sync.Mutex

// Update implements Files. The lock is the process's: another process
// writing the file at once (an operator's editor) is not kept out, as it
// never was.
func (d Dir) Update(name string, max int64, perm fs.FileMode, change func([]byte, bool) ([]byte, error)) error {
	if err := CheckName(name); err != nil {
		return err
	}
	mu, _ := fileLocks.LoadOrStore(d.path(name), new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	old, err := d.Read(name, max)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	b, err := change(old, exists)
	if err != nil {
		return err
	}
	return d.Write(name, b, perm)
}

// Remove implements Files.
func (d Dir) Remove(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	p := d.path(name)
	if err := os.Remove(p); err != nil {
		return err
	}
	return durable.SyncDir(filepath.Dir(p))
}

// List implements Files: the regular files under dir whose names are
// valid (not the temporary files of writes under way).
func (d Dir) List(dir string) ([]Info, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	var out []Info
	root := d.path(dir)
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !e.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(string(d), p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if CheckName(name) != nil || strings.HasPrefix(path.Base(name), ".") {
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		out = append(out, Info{Name: name, Size: fi.Size(), ModTime: fi.ModTime()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}
