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
//     or large size, streamed, never held whole in memory). A Put that
//     fails leaves no object under the key, or the one that was there.
//   - Put reports the size and SHA-1 of the bytes it stored, computed as
//     they streamed through.
//   - Keys are relative slash-separated paths of the characters
//     [A-Za-z0-9._!-] and '/', without empty, "." or ".." elements, at
//     most 512 bytes (CheckKey): the same key names the same object in
//     every implementation.
//   - Open of a missing key, Stat and Delete's callers can tell by
//     errors.Is(err, ErrNotFound); Delete of a missing key is not an
//     error.
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
	"io"
	"time"
)

// ErrNotFound is returned for a key with no object.
var ErrNotFound = errors.New("blob: not found")

// Info describes a stored object.
type Info struct {
	Key     string
	Size    int64
	SHA1    string // hex; "" when the store cannot tell (Stat of an object it did not write)
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
