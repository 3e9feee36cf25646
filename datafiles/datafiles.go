// Package datafiles keeps the small files of lodge's data directory that
// the server reads while it runs and that every node of several must see
// alike: account settings (accounts/<ACCOUNT>.json), price tables
// (prices.json, prices/<ACCOUNT>.json), letter profiles
// (profiles/<ACCOUNT>/<name>.json or .xml) and the signed links' key
// (links.key). Files is where they are: Dir, the files of one node's data
// directory (the embedded default, exactly the files lodge always had), or
// Postgres, the table lodge_shared_files of the database several nodes
// share (lodge serve -db; migration 0450_shared_files).
//
// # Names
//
// A file's name is its path under the data directory, slash-separated:
// 1 to 512 bytes of elements of 1 to 255 bytes of [A-Za-z0-9._-], none
// of them "." or ".." (CheckName). A file holds at most MaxSize bytes.
//
// # What it promises
//
//   - Write, Create, Update and Remove return when the change is durable:
//     on the disk written to a temporary file, synced and renamed over the
//     file, its directory synced (package durable); in the database
//     committed.
//   - Create writes a file only when there is none, and returns the file
//     as it then is: of several nodes (or processes) creating one file at
//     once, all get the first one's bytes (the links key of every node is
//     the same key).
//   - Update reads, changes and writes a file under a lock that other
//     Updates of it wait for: on the disk a lock of the process, in the
//     database a transaction's advisory lock, held across nodes.
//   - Postgres caches what it read for Options.CacheFor (default
//     DefaultCacheFor, 2 seconds): a change made on another node is seen
//     by this one at most that long after it was committed. A change made
//     on this node is seen by this node at once (its cache takes the new
//     bytes, and a read that was under way when the change was made does
//     not cache what it read). Dir reads the file every time.
package datafiles

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// MaxSize is the largest file, in bytes (the largest a reader accepts:
// price tables and profiles are bounded at 1 MiB).
const MaxSize = 1 << 20

// Bounds of names.
const (
	MaxNameLen    = 512
	MaxElementLen = 255
)

// Errors; test with errors.Is. A missing file is fs.ErrNotExist.
var (
	// ErrNotFile is a read of a name that is not a regular file (a
	// directory, a device) or is larger than the reader allows.
	ErrNotFile = errors.New("not a regular file of at most the size allowed")
	// ErrTooLarge is a write of more than MaxSize bytes.
	ErrTooLarge = fmt.Errorf("larger than %d bytes", MaxSize)
)

// Info describes a file of List.
type Info struct {
	Name    string
	Size    int64
	ModTime time.Time
}

// Files holds small files by name (see the package doc). Implementations
// are safe for concurrent use.
type Files interface {
	// Read returns the file's bytes: an error wrapping fs.ErrNotExist
	// when there is none, ErrNotFile when it is not a regular file of at
	// most max bytes. The caller must not change the bytes.
	Read(name string, max int64) ([]byte, error)
	// Write replaces the file with b, durably. perm is the mode of a file
	// on the disk (the database has none).
	Write(name string, b []byte, perm fs.FileMode) error
	// Create writes b as the file when there is none, durably, and returns
	// the file's bytes: b, or those of the file that was there (at most
	// MaxSize of them).
	Create(name string, b []byte, perm fs.FileMode) ([]byte, error)
	// Update calls change with the file's bytes (exists false when there
	// is none) and writes what it returns, under a lock other Updates of
	// the name wait for. An error of change is returned, nothing written.
	Update(name string, max int64, perm fs.FileMode, change func(old []byte, exists bool) ([]byte, error)) error
	// Remove removes the file: fs.ErrNotExist when there is none.
	Remove(name string) error
	// List returns the files under the directory dir ("" for all), in
	// name order (bytewise).
	List(dir string) ([]Info, error)
	// Where names the file for a message to the operator: its path on the
	// disk, or its name in the database.
	Where(name string) string
}

// CheckName returns an error saying what is wrong with name (and where)
// unless it is a valid name (see the package doc).
func CheckName(name string) error {
	if name == "" {
		return errors.New("datafiles: empty name")
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("datafiles: name of %d bytes, more than %d", len(name), MaxNameLen)
	}
	start := 0
	for i := 0; i <= len(name); i++ {
		if i < len(name) {
			c := name[i]
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' {
				continue
			}
			if c != '/' {
				return fmt.Errorf("datafiles: name %q: byte %d is %q; names are [A-Za-z0-9._-] and '/'", trunc(name), i, name[i:i+1])
			}
		}
		switch el := name[start:i]; {
		case el == "":
			return fmt.Errorf("datafiles: name %q: empty element at byte %d", trunc(name), i)
		case el == "." || el == "..":
			return fmt.Errorf("datafiles: name %q: element %q at byte %d", trunc(name), el, start)
		case len(el) > MaxElementLen:
			return fmt.Errorf("datafiles: name %q: element of %d bytes at byte %d, more than %d", trunc(name), len(el), start, MaxElementLen)
		}
		start = i + 1
	}
	return nil
}

// checkDir checks List's dir: "" or a valid name.
func checkDir(dir string) error {
	if dir == "" {
		return nil
	}
	return CheckName(dir)
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// Sub returns the files of f under the directory dir: its name n is f's
// dir/n. Where names them as f does.
func Sub(f Files, dir string) Files {
	return sub{f, strings.Trim(dir, "/")}
}

type sub struct {
	f   Files
	dir string
}

func (s sub) name(n string) string {
	if s.dir == "" {
		return n
	}
	return s.dir + "/" + n
}

func (s sub) Read(n string, max int64) ([]byte, error) { return s.f.Read(s.name(n), max) }
func (s sub) Write(n string, b []byte, perm fs.FileMode) error {
	return s.f.Write(s.name(n), b, perm)
}
func (s sub) Create(n string, b []byte, perm fs.FileMode) ([]byte, error) {
	return s.f.Create(s.name(n), b, perm)
}
func (s sub) Update(n string, max int64, perm fs.FileMode, change func([]byte, bool) ([]byte, error)) error {
	return s.f.Update(s.name(n), max, perm, change)
}
func (s sub) Remove(n string) error { return s.f.Remove(s.name(n)) }
func (s sub) Where(n string) string { return s.f.Where(s.name(n)) }
func (s sub) List(dir string) ([]Info, error) {
	var full string
	if dir == "" {
		full = s.dir
	} else {
		full = s.name(dir)
	}
	infos, err := s.f.List(full)
	for i := range infos {
		infos[i].Name = strings.TrimPrefix(infos[i].Name, s.dir+"/")
	}
	return infos, err
}
