// Package blob keeps lodge's objects: uploaded documents, produced print
// batches and previews, under keys, on the local disk of one node (the
// embedded default) or in S3-compatible object storage shared by several
// nodes (lodge serve -blob s3://bucket?endpoint=...).
//
// # What it promises
//
//   - Put returns only when the object is durable: on the local disk
//     written to a temporary file, fsynced, renamed into place and its
//     directory fsynced; in object storage acknowledged by the server (a
//     single PUT, or a completed multipart upload for a body of unknown
//     or large size, streamed, at most one part held in memory). A Put that
//     fails leaves no object under the key, or the one that was there.
//   - Put reports the size and SHA-1 of the bytes it stored, computed as
//     they streamed through.
//   - Put fails, storing nothing, when r gives other than size bytes
//     (size >= 0) or fails itself.
//   - Keys are relative slash-separated paths of the characters
//     [A-Za-z0-9._!-] and '/', without empty elements or elements that
//     begin with '.' (so no "." or "..": names beginning with a dot are
//     the stores' own, such as the local disk's .tmp-* files), at most
//     512 bytes and elements of at most 255 (a file name's limit)
//     (CheckKey): the same key names the same object in every
//     implementation. A key is never also the directory of other keys
//     ("a" and "a/b" cannot both exist): the local disk and file-backed
//     object servers keep "a/b" as the file b in the directory a.
//   - Open, Stat and LocalPath of a missing key fail with an error that
//     errors.Is ErrNotFound (a bad key's error does not); Delete of a
//     missing key is not an error.
//
// # Implementations
//
// Open chooses one from lodge serve's -blob URL. Local (NewLocal) keeps
// key k as the file <root>/k. S3 (NewS3) keeps it as the object
// <prefix>/k of a bucket, with its SHA-1 as the user metadata
// x-amz-meta-sha1, and copies of the objects that programs read in a
// cache directory on each node; its doc says how it streams, what it
// caches and its metrics.
//
// # Concurrency
//
// A Store is safe for concurrent use. Two Puts of one key race: one of
// the two objects remains whole. lodge never writes one key twice with
// different bytes (keys carry a random or content-derived part).
package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// ErrNotFound is returned for a key with no object.
var ErrNotFound = errors.New("blob: not found")

// Info describes a stored object.
type Info struct {
	Key     string
	Size    int64
	SHA1    string // hex; "" when the store cannot tell: always on the local disk but from Put, never from List
	ModTime time.Time
}

// Store keeps objects by key.
type Store interface {
	// Put stores the bytes of r under key, durably, replacing any object
	// of that key. size is the length of r when known (-1 when not: an
	// object store then streams it in parts).
	Put(ctx context.Context, key string, r io.Reader, size int64) (Info, error)
	// Open returns the object's bytes for reading from the start.
	Open(ctx context.Context, key string) (io.ReadCloser, Info, error)
	// Stat returns what is known of the object.
	Stat(ctx context.Context, key string) (Info, error)
	// Delete removes the object; a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// List calls fn for every object whose key begins with prefix, in key
	// order, until fn returns an error (which List returns).
	List(ctx context.Context, prefix string, fn func(Info) error) error
	// LocalPath returns a path on this node's disk holding the object's
	// bytes, for programs that read files (Ghostscript, qpdf, the PDF
	// reader): the object's own file on the local disk, a verified copy
	// in the node's cache for object storage. The file must not be
	// written to.
	LocalPath(ctx context.Context, key string) (string, error)
	// DownloadURL returns a presigned URL valid for expiry that fetches
	// the object straight from the store, or "" when the store has none
	// (the local disk: lodge serves the bytes itself).
	DownloadURL(ctx context.Context, key, filename string, expiry time.Duration) (string, error)
	// Ready checks that the store can be read and written now (/readyz).
	Ready(ctx context.Context) error
}

// MaxKeyLen is the longest key, in bytes, and MaxElementLen the longest
// element between slashes (the longest file name of common file
// systems).
const (
	MaxKeyLen     = 512
	MaxElementLen = 255
)

// CheckKey returns an error saying what is wrong with key (and where)
// unless it is a valid key (see the package doc).
func CheckKey(key string) error {
	return checkKey(key, false)
}

// CheckPrefix is CheckKey for List's prefix: "" and prefixes ending in
// '/' or in part of an element are fine; what is there must be able to
// begin a valid key.
func CheckPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	return checkKey(prefix, true)
}

func checkKey(key string, prefix bool) error {
	what := "key"
	if prefix {
		what = "prefix"
	}
	if key == "" {
		return fmt.Errorf("blob: empty %s", what)
	}
	if len(key) > MaxKeyLen {
		return fmt.Errorf("blob: %s of %d bytes, more than %d", what, len(key), MaxKeyLen)
	}
	start := 0
	for i := 0; i <= len(key); i++ {
		if i < len(key) {
			c := key[i]
			switch {
			case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
				c == '.', c == '_', c == '!', c == '-':
				continue
			case c != '/':
				return fmt.Errorf("blob: %s %q: byte %d is %q; keys are [A-Za-z0-9._!-] and '/'", what, trunc(key), i, c)
			}
		}
		// key[start:i] is an element, ended by '/' or by the end
		if i == len(key) && prefix {
			break // the last element of a prefix may be cut short, even to nothing
		}
		switch {
		case i == start:
			return fmt.Errorf("blob: %s %q: empty element at byte %d", what, trunc(key), i)
		case key[start] == '.':
			return fmt.Errorf("blob: %s %q: element %q at byte %d begins with '.'", what, trunc(key), trunc(key[start:i]), start)
		case i-start > MaxElementLen:
			return fmt.Errorf("blob: %s %q: element of %d bytes at byte %d, more than %d", what, trunc(key), i-start, start, MaxElementLen)
		}
		start = i + 1
	}
	if prefix && start < len(key) && key[start] == '.' {
		return fmt.Errorf("blob: %s %q: element at byte %d begins with '.'", what, trunc(key), start)
	}
	return nil
}

// trunc shortens what an error quotes of a key.
func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
