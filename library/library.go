// Package library is each account's documents library: PDF, PostScript
// and XPS documents a customer uploads in the portal for later mailings,
// which a mailing's metadata then names (spec section 1: "Portal-uploaded
// documents stay available for later mailings"). A document stays until
// the customer deletes it; end_session copies the documents a mailing
// names into the mailing's own files (package upload), so that deleting
// or replacing one later does not change a mailing already accepted.
//
// # What it stores
//
//	<dir>/<account>/index.json     the account's documents: a JSON array of
//	                               Document, rewritten whole on every change
//	                               (durable.WriteFile: fsync and rename)
//	<dir>/<account>/<rand>.blob    one document's bytes, a new random name
//	                               for every upload (never rewritten)
//	<dir>/<account>/.tmp-*         an upload in progress
//
// A document's name is unique in its account, with upload's rules for
// file names (upload.CheckName: no paths, drives, control characters or
// bytes that are not UTF-8, at most 255 bytes) and an extension of .pdf,
// .ps or .xps whose content it must be (inspect.CheckType). Its pages are
// counted when it is stored, in a child process (inspect.InspectIsolated)
// unless Options.InProcess: a document that cannot be counted is refused.
//
// # Durability
//
// Put writes the document to a temporary file, fsyncs it, renames it to
// its blob and syncs the directory, and only then writes the index
// (durably); its success means both are on disk. The blob of a replaced
// name is removed after the index no longer names it; so is a deleted
// document's. A crash leaves the old index with its old blobs or the new
// one with its new blobs; blobs and temporary files the index does not
// name are removed by Open.
//
// # Limits
//
// Options.MaxBytes bounds one document (default 32 MiB, DefaultMaxBytes),
// Options.MaxDocuments the documents of one account (default 500,
// DefaultMaxDocuments); past either, Put fails with ErrTooLarge or ErrFull
// and stores nothing.
//
// # Concurrency
//
// A Library is safe for concurrent use by one process (another process
// must not use the same directory). Writing and counting an upload happen
// outside any lock; changes of an index (the end of Put, Delete) are
// serialised by one lock, which readers (List, Get, Read, PortalDocs)
// share: a reader sees an index and opens its blobs before any writer can
// remove them, and an open document stays readable whatever happens to
// it later.
//
// # Several nodes
//
// OpenShared keeps the libraries of nodes sharing a PostgreSQL database
// and a blob.Store (lodge serve -db, -blob), with the same names, checks,
// limits and errors, so that a document uploaded on one node is listed,
// shown and used by end_session on every other:
//
//	library_documents (account, name)   a row per document (migration
//	                                    0400_library), its Document
//	library/<account>/<rand>.blob       its bytes, an object of the store
//	library_loose (blob, since)         objects no row may name yet or
//	                                    any more (see below)
//
// Put receives and checks a document in a temporary file of this node
// (Options.TempDir) exactly as on one node, then records its new object
// as loose, stores the object (durable when Put returns: blob.Store's
// promise) and commits its row in one statement that also takes the
// object off the loose list, checks the account's room under the
// account's advisory lock (MaxDocuments holds across nodes) and puts a
// replaced document's object on the loose list. Its success means the row
// and the object are both durable. Delete moves the row's object to the
// loose list in the statement that deletes the row. The objects of
// replaced and deleted documents are deleted at once and taken off the
// list; what a node that died left on it is deleted by Sweep once an hour
// old (a Put never commits an object loose for more than half that:
// maxLooseAge). A reader that finds the object of the row it read gone
// (replaced or deleted meanwhile by another node) reads the row again: it
// gets the new document, or ErrNotFound.
package library

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lodge-mail/lodge/auth"
	"github.com/lodge-mail/lodge/internal/durable"
	"github.com/lodge-mail/lodge/upload"
	"github.com/lodge-mail/lodge/upload/inspect"
)

// Defaults of Options.
const (
	DefaultMaxBytes     = 32 << 20
	DefaultMaxDocuments = 500
)

// Errors of the library; test with errors.Is.
var (
	ErrNotFound = errors.New("no such document")
	ErrTooLarge = errors.New("document larger than the limit")
	ErrFull     = errors.New("the library holds as many documents as it may")
)

// RefusedError is a document refused for its name or content: the
// customer's mistake, its message fit to show them.
type RefusedError struct{ Msg string }

func (e *RefusedError) Error() string { return e.Msg }

// ReadError is a failure to read the document's body (the client's
// connection cut, a form over its limit), as opposed to one of storing
// it.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return "reading the document: " + e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// bodyReader remembers the error its reader gave.
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// Options tune a Library. The zero value of each field means its default.
type Options struct {
	MaxBytes     int64 // one document; default DefaultMaxBytes
	MaxDocuments int   // documents per account; default DefaultMaxDocuments
	// Inspect bounds counting a document's pages (upload's limits).
	Inspect inspect.Limits
	// InProcess counts pages in this process instead of a child process
	// (tests); the default isolates the parser from hostile documents.
	InProcess bool
	Now       func() time.Time
	// TempDir holds uploads while they are checked, for a shared library
	// (OpenShared; default os.TempDir()). One node's library keeps them
	// in the account's directory.
	TempDir string
}

func (opt Options) withDefaults() Options {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	if opt.MaxDocuments <= 0 {
		opt.MaxDocuments = DefaultMaxDocuments
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return opt
}

// Document is one document of an account's library.
type Document struct {
	Name     string    `json:"name"`
	Kind     string    `json:"kind"` // pdf, ps or xps
	Size     int64     `json:"size"`
	Pages    int       `json:"pages"`
	SHA1     string    `json:"sha1"`
	Uploaded time.Time `json:"uploaded"`
	By       string    `json:"by"`   // the portal user who uploaded it
	Blob     string    `json:"blob"` // its file under <dir>/<account>/ (shared: the object library/<account>/<blob>)
}

// Library is the accounts' documents libraries under one directory, or
// shared by several nodes (OpenShared).
type Library struct {
	dir string
	opt Options
	mu  sync.RWMutex // held to change an index (write), or to read one and open its blobs (read)
	sh  *shared      // nil: one node's directory
}

const indexName = "index.json"

// Open opens (creating) the libraries in dir and removes what an
// interrupted upload or change left: temporary files and blobs no index
// names.
func Open(dir string, opt Options) (*Library, error) {
	opt = opt.withDefaults()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	l := &Library{dir: dir, opt: opt}
	accounts, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, a := range accounts {
		if !a.IsDir() || !auth.ValidAccountCode(a.Name()) {
			continue
		}
		if err := l.tidy(a.Name()); err != nil {
			return nil, fmt.Errorf("library %s: %w", a.Name(), err)
		}
	}
	return l, nil
}

// tidy removes an account directory's files its index does not name.
func (l *Library) tidy(account string) error {
	docs, err := l.load(account)
	if err != nil {
		return err
	}
	keep := map[string]bool{indexName: true}
	for _, d := range docs {
		keep[d.Blob] = true
	}
	dir := l.accountDir(account)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !keep[e.Name()] && e.Type().IsRegular() {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *Library) accountDir(account string) string { return filepath.Join(l.dir, account) }

// Options returns the library's options with defaults applied.
func (l *Library) Options() Options { return l.opt }

// load reads an account's index; an account without one has no
// documents.
func (l *Library) load(account string) ([]Document, error) {
	b, err := os.ReadFile(filepath.Join(l.accountDir(account), indexName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var docs []Document
	if err := json.Unmarshal(b, &docs); err != nil {
		return nil, fmt.Errorf("library index of %s: %w", account, err)
	}
	return docs, nil
}

// List returns an account's documents by name.
func (l *Library) List(account string) ([]Document, error) {
	if !auth.ValidAccountCode(account) {
		return nil, nil
	}
	if l.sh != nil {
		return l.sh.list(account)
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	docs, err := l.load(account)
	slices.SortFunc(docs, func(a, b Document) int { return strings.Compare(a.Name, b.Name) })
	return docs, err
}

// Get returns an account's document; ErrNotFound when it has none of that
// name (another account's documents are never found).
func (l *Library) Get(account, name string) (Document, error) {
	if !auth.ValidAccountCode(account) {
		return Document{}, ErrNotFound
	}
	if l.sh != nil {
		return l.sh.get(account, name)
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.find(account, name)
}

func (l *Library) find(account, name string) (Document, error) {
	docs, err := l.load(account)
	if err != nil {
		return Document{}, err
	}
	for _, d := range docs {
		if d.Name == name {
			return d, nil
		}
	}
	return Document{}, ErrNotFound
}

// Read returns an account's document open for reading: the caller
// closes it. It stays readable after the document is deleted or
// replaced.
func (l *Library) Read(account, name string) (Document, io.ReadCloser, error) {
	if !auth.ValidAccountCode(account) {
		return Document{}, nil, ErrNotFound
	}
	if l.sh != nil {
		return l.sh.read(account, name)
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	d, err := l.find(account, name)
	if err != nil {
		return Document{}, nil, err
	}
	f, err := os.Open(filepath.Join(l.accountDir(account), d.Blob))
	if err != nil {
		return Document{}, nil, err
	}
	return d, f, nil
}

// PortalDocs is Read for end_session (upload.PortalDocs): the account's
// documents of the names a mailing's metadata gives, each open (the
// caller closes them); names the account has no document of are left out.
func (l *Library) PortalDocs(account string, names []string) ([]upload.PortalDoc, error) {
	if !auth.ValidAccountCode(account) {
		return nil, nil
	}
	if l.sh != nil {
		return l.sh.portalDocs(account, names)
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	docs, err := l.load(account)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]Document, len(docs))
	for _, d := range docs {
		byName[d.Name] = d
	}
	var out []upload.PortalDoc
	for _, n := range names {
		d, ok := byName[n]
		if !ok {
			continue
		}
		f, err := os.Open(filepath.Join(l.accountDir(account), d.Blob))
		if err != nil {
			for _, o := range out {
				o.Body.Close()
			}
			return nil, err
		}
		out = append(out, upload.PortalDoc{Name: d.Name, Kind: d.Kind, SHA1: d.SHA1, By: d.By, Size: d.Size, Pages: d.Pages, Body: f})
	}
	return out, nil
}

// CheckName checks a document's name as Put does, before its content is
// read: nil, or a *RefusedError saying what is wrong.
func CheckName(name string) error {
	ext, status, msg := upload.CheckName(name)
	if status != 0 {
		return &RefusedError{Msg: msg}
	}
	switch ext {
	case "pdf", "ps", "xps":
		return nil
	}
	return &RefusedError{Msg: fmt.Sprintf("%q: the library keeps documents: PDF (.pdf), PostScript (.ps) or XPS (.xps)", name)}
}

// Put stores body as the account's document name, uploaded by by,
// replacing a document of the same name. declared is the body's size
// when known, else -1. The document's type and pages are checked before
// it is stored; on success it is on disk (shared: its row committed and
// its object stored).
func (l *Library) Put(account, by, name string, declared int64, body io.Reader) (Document, error) {
	if !auth.ValidAccountCode(account) {
		return Document{}, fmt.Errorf("library: account %q is not an account code", account)
	}
	if err := CheckName(name); err != nil {
		return Document{}, err
	}
	if declared > l.opt.MaxBytes {
		return Document{}, ErrTooLarge
	}
	if err := l.room(account, name); err != nil {
		return Document{}, err
	}
	br := &bodyReader{r: body}
	head := make([]byte, upload.HeadSize)
	n, err := io.ReadFull(br, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return Document{}, &ReadError{err}
	}
	head = head[:n]
	kind, err := inspect.CheckType(name, head)
	if err != nil {
		return Document{}, &RefusedError{Msg: err.Error()}
	}
	var dir, pattern string
	if l.sh != nil {
		dir, pattern = l.opt.TempDir, "lodge-library-*"
	} else if dir, err = l.makeAccountDir(account); err != nil {
		return Document{}, err
	} else {
		pattern = ".tmp-*"
	}
	tmp, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return Document{}, err
	}
	defer func() {
		if tmp != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha1.New()
	size, err := io.Copy(io.MultiWriter(tmp, h), io.MultiReader(bytes.NewReader(head), io.LimitReader(br, l.opt.MaxBytes-int64(n)+1)))
	if br.err != nil {
		return Document{}, &ReadError{br.err}
	}
	if err != nil {
		return Document{}, fmt.Errorf("storing %s: %w", name, err)
	}
	if size > l.opt.MaxBytes {
		return Document{}, ErrTooLarge
	}
	if declared >= 0 && size != declared {
		return Document{}, &ReadError{fmt.Errorf("%d bytes, %d declared", size, declared)}
	}
	if l.sh == nil { // the file becomes the document's: shared, the object does
		if err := tmp.Sync(); err != nil {
			return Document{}, err
		}
	}
	pages, err := l.countPages(kind, tmp, size)
	if err != nil {
		if errors.Is(err, inspect.ErrBusy) || errors.Is(err, inspect.ErrNoGhostscript) {
			return Document{}, err // not the document's fault
		}
		return Document{}, &RefusedError{Msg: fmt.Sprintf("%s: %v", name, err)}
	}
	if l.sh != nil {
		d := Document{Name: name, Kind: string(kind), Size: size, Pages: pages, SHA1: hex.EncodeToString(h.Sum(nil)),
			Uploaded: l.opt.Now().UTC().Truncate(time.Microsecond), By: by} // as the database keeps it
		return l.sh.put(account, d, tmp, l.opt.MaxDocuments)
	}
	if err := tmp.Close(); err != nil {
		return Document{}, err
	}
	blob := randomName() + ".blob"
	if err := os.Rename(tmp.Name(), filepath.Join(dir, blob)); err != nil {
		return Document{}, err
	}
	tmp = nil
	if err := durable.SyncDir(dir); err != nil {
		os.Remove(filepath.Join(dir, blob))
		return Document{}, err
	}
	d := Document{Name: name, Kind: string(kind), Size: size, Pages: pages, SHA1: hex.EncodeToString(h.Sum(nil)),
		Uploaded: l.opt.Now().UTC(), By: by, Blob: blob}
	gone, err := l.commit(account, func(docs []Document) ([]Document, error) {
		for i := range docs {
			if docs[i].Name == name {
				docs[i] = d
				return docs, nil
			}
		}
		if len(docs) >= l.opt.MaxDocuments {
			return nil, ErrFull
		}
		return append(docs, d), nil
	})
	if err != nil {
		os.Remove(filepath.Join(dir, blob))
		return Document{}, err
	}
	removeBlobs(dir, gone)
	return d, nil
}

// room fails early, before any of the body is read, when the account's
// library is full and name is not one of its documents (Put checks again
// when it commits).
func (l *Library) room(account, name string) error {
	if l.sh != nil {
		return l.sh.room(account, name, l.opt.MaxDocuments)
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	docs, err := l.load(account)
	if err != nil {
		return err
	}
	if len(docs) < l.opt.MaxDocuments || slices.ContainsFunc(docs, func(d Document) bool { return d.Name == name }) {
		return nil
	}
	return ErrFull
}

// Delete removes an account's document; ErrNotFound when it has none of
// that name.
func (l *Library) Delete(account, name string) error {
	if !auth.ValidAccountCode(account) {
		return ErrNotFound
	}
	if l.sh != nil {
		return l.sh.delete(account, name)
	}
	gone, err := l.commit(account, func(docs []Document) ([]Document, error) {
		i := slices.IndexFunc(docs, func(d Document) bool { return d.Name == name })
		if i < 0 {
			return nil, ErrNotFound
		}
		return slices.Delete(docs, i, i+1), nil
	})
	if err != nil {
		return err
	}
	removeBlobs(l.accountDir(account), gone)
	return nil
}

// commit changes an account's index under the lock and writes it
// durably; it returns the blobs the index named before and no longer
// does. They are removed after the lock is released: a reader opens the
// blobs of the index it read before a writer can change it.
func (l *Library) commit(account string, change func([]Document) ([]Document, error)) (gone []string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	docs, err := l.load(account)
	if err != nil {
		return nil, err
	}
	was := map[string]bool{}
	for _, d := range docs {
		was[d.Blob] = true
	}
	docs, err = change(docs)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(docs)
	if err != nil {
		return nil, err
	}
	if _, err := l.makeAccountDir(account); err != nil {
		return nil, err
	}
	if err := durable.WriteFile(filepath.Join(l.accountDir(account), indexName), b, 0o640); err != nil {
		return nil, err
	}
	for _, d := range docs {
		delete(was, d.Blob)
	}
	for blob := range was {
		gone = append(gone, blob)
	}
	return gone, nil
}

// removeBlobs removes blobs no index names any more; one a failure here
// leaves is removed by the next Open.
func removeBlobs(dir string, blobs []string) {
	for _, b := range blobs {
		os.Remove(filepath.Join(dir, b))
	}
}

// makeAccountDir makes an account's directory, its name synced into the
// library's before anything in it is relied on.
func (l *Library) makeAccountDir(account string) (string, error) {
	dir := l.accountDir(account)
	err := os.Mkdir(dir, 0o750)
	if errors.Is(err, fs.ErrExist) {
		return dir, nil
	}
	if err != nil {
		return "", err
	}
	return dir, durable.SyncDir(l.dir)
}

// countPages counts a stored (synced) document's pages, as end_session
// counts an uploaded one's.
func (l *Library) countPages(kind inspect.Kind, f *os.File, size int64) (int, error) {
	if l.opt.InProcess {
		d, err := inspect.Inspect(kind, f, size, l.opt.Inspect)
		return d.Pages, err
	}
	lim := l.opt.Inspect.WithDefaults()
	ctx, cancel := context.WithTimeout(context.Background(), lim.ChildWait+lim.Timeout+5*time.Second)
	defer cancel()
	return inspect.PagesIsolated(ctx, kind, f.Name(), l.opt.Inspect)
}

func randomName() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
