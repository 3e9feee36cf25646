// Package safetar writes a directory of regular files and directories as
// a tar, and extracts such a tar without trusting it: only regular files
// and directories with plain relative names ([A-Za-z0-9._-] elements, no
// "." or "..", no absolute paths), each once, within Limits (bytes in all,
// bytes of one file, entries), written through an os.Root of the target
// directory so that nothing lands outside it even if a check were wrong.
// Every refusal names the entry: its number from 1 and its name.
package safetar

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Limits bound what Extract may write. The zero value means the
// defaults, sized for lodge's reference index (a full-scale one, 15.6
// million addresses, is about a gigabyte in a few hundred files).
type Limits struct {
	MaxBytes     int64 // the tar, in all: 0 means 16 GiB
	MaxFileBytes int64 // one file: 0 means 4 GiB
	MaxEntries   int   // files and directories: 0 means 100,000
}

// WithDefaults returns l with its zero fields set to the defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = 16 << 30
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = 4 << 30
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = 100_000
	}
	return l
}

// Names in the tar: relative, slash-separated, elements of these
// characters (what pebble and bleve name their files) and lengths.
const (
	maxNameLen    = 1024
	maxElementLen = 255
)

// Write writes the directory dir as a tar: its directories and regular
// files, in lexical order, named relative to dir, with names Extract
// takes. Anything else (a symlink, a device) is an error.
func Write(ctx context.Context, w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if err := checkName(name); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: name, ModTime: info.ModTime()}
		switch {
		case d.IsDir():
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, name+"/", 0o755
			return tw.WriteHeader(hdr)
		case d.Type().IsRegular():
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, info.Size()
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := io.Copy(tw, f); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			return nil
		default:
			return fmt.Errorf("%s: %s is neither a regular file nor a directory", p, d.Type())
		}
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// checkName returns what is wrong with an entry's name (without a
// directory's trailing slash).
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("empty name")
	case len(name) > maxNameLen:
		return fmt.Errorf("name of %d bytes, more than %d", len(name), maxNameLen)
	case strings.HasPrefix(name, "/"):
		return errors.New("absolute path")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' || c == '/') {
			return fmt.Errorf("byte %d is %q; names are [A-Za-z0-9._-] and '/'", i, c)
		}
	}
	for _, el := range strings.Split(name, "/") {
		switch {
		case el == "":
			return errors.New("empty path element")
		case el == "." || el == "..":
			return fmt.Errorf("path element %q", el)
		case len(el) > maxElementLen:
			return fmt.Errorf("path element of %d bytes, more than %d", len(el), maxElementLen)
		}
	}
	if path.Clean(name) != name || !filepath.IsLocal(name) {
		return errors.New("not a plain relative path")
	}
	return nil
}

// Extract writes the files and directories of the tar r into dir, which
// should be empty (a file already there is not overwritten: an error).
// Only directories and regular files with plain names are taken, each
// once, within lim; anything else stops it with an error naming the
// entry. It reads r up to the tar's end marker, not beyond.
func Extract(r io.Reader, dir string, lim Limits) error {
	lim = lim.WithDefaults()
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	tr := tar.NewReader(r)
	seen := map[string]bool{}
	var total int64
	for n := 1; ; n++ {
		hdr, err := tr.Next()
		if err == io.EOF {
			if n == 1 {
				return errors.New("tar: no entries")
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("tar entry %d: %w", n, err)
		}
		if n > lim.MaxEntries {
			return fmt.Errorf("tar entry %d: more than %d entries", n, lim.MaxEntries)
		}
		if err := extractEntry(root, tr, hdr, seen, &total, lim); err != nil {
			return fmt.Errorf("tar entry %d (%q): %w", n, trunc(hdr.Name), err)
		}
	}
}

func extractEntry(root *os.Root, tr *tar.Reader, hdr *tar.Header, seen map[string]bool, total *int64, lim Limits) error {
	name := hdr.Name
	if hdr.Typeflag == tar.TypeDir {
		name = strings.TrimSuffix(name, "/")
	}
	if err := checkName(name); err != nil {
		return err
	}
	if seen[name] {
		return errors.New("named twice")
	}
	seen[name] = true
	switch hdr.Typeflag {
	case tar.TypeDir:
		return root.MkdirAll(name, 0o755)
	case tar.TypeReg:
	default:
		return fmt.Errorf("type %q: only regular files and directories are taken", hdr.Typeflag)
	}
	if hdr.Size > lim.MaxFileBytes {
		return fmt.Errorf("%d bytes, more than %d in one file", hdr.Size, lim.MaxFileBytes)
	}
	if *total += hdr.Size; *total > lim.MaxBytes {
		return fmt.Errorf("more than %d bytes in all", lim.MaxBytes)
	}
	if d := path.Dir(name); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, tr)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if n != hdr.Size {
		return fmt.Errorf("%d bytes read, the header says %d", n, hdr.Size)
	}
	return nil
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
