// Package durable writes files so that they survive a crash: a file is
// either the old one or the whole new one, never half of it, and once a
// call returns the new one is on disk (fsync of the file and of its
// directory). It is the one place lodge's stores, index and certificates
// do that.
package durable

import (
	"os"
	"path/filepath"
	"runtime"
)

// WriteFile writes b to path atomically and durably: into path+".tmp",
// synced, renamed over path, and the directory synced.
func WriteFile(path string, b []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir syncs a directory, so that the names created, renamed or removed
// in it last. (Windows cannot sync a directory; there it does nothing.)
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
