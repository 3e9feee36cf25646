package upload

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/cockroachdb/pebble/v2"
	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/internal/durable"
	"github.com/lodge-mail/lodge/internal/pebblelog"
)

// Errors of the store; test with errors.Is.
var (
	ErrNoSession     = errors.New("no such session")
	ErrSessionClosed = errors.New("session is not open")
	ErrTooLarge      = errors.New("upload larger than the limit")
	// ErrNoSpace: the disk has too little room left to take the upload
	// (Options.MinFreeBytes), or ran out while writing it.
	ErrNoSpace  = errors.New("the server is short of disk space")
	ErrNotFound = errors.New("not found")
)

const (
	prefix        = "upload/v1/"
	sessionPrefix = prefix + "session/"
	filePrefix    = prefix + "file/"
	acctPrefix    = prefix + "acct/"
	openPrefix    = prefix + "open/"
	keptPrefix    = prefix + "kept/"
	purgePrefix   = prefix + "purge/"
	indexesKey    = prefix + "indexes"
)

// Session states: a session is open until it is ended (end_session
// accepted its mailing), expires (its time ran out while open) or is
// abandoned (a failed mpf_upload request: no client can go on with it).
// An expired or abandoned session's files are deleted.
const (
	StateOpen      = "open"
	StateEnded     = "ended"
	StateExpired   = "expired"
	StateAbandoned = "abandoned"
)

// Session is one upload session (EPID).
type Session struct {
	EPID    string `json:"epid"`
	Account string `json:"account"`
	// User opened the session (a user name or an API key id); any valid
	// credential of the account may continue and end it.
	User    string    `json:"user"`
	State   string    `json:"state"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
	Ended   time.Time `json:"ended,omitempty"`
	EndedBy string    `json:"ended_by,omitempty"` // who ended it (user name or API key id)
	// Purged is when an ended mailing's documents were deleted, the
	// retention period over (Options.Retention); its records stay.
	Purged time.Time `json:"purged,omitempty"`
	// Reason says why an abandoned session was abandoned: the answer its
	// request got.
	Reason string `json:"reason,omitempty"`
	// Result is the end_session answer once the session ended, so that
	// end_session is idempotent.
	Result *EndResult `json:"result,omitempty"`
}

// File is one file received in a session. JSON names are the ones the
// service in the field uses in end_session answers.
type File struct {
	Name     string  `json:"name"`
	Size     int64   `json:"sz"`      // bytes stored
	Received int64   `json:"upld_sz"` // bytes received in the last upload of the name
	Declared int64   `json:"cl_sz"`   // Content-Length declared (-1 when chunked)
	Chunks   int     `json:"chunks"`  // uploads of this name in the session
	Intent   int     `json:"intent"`  // what the file is used as: see Intent*
	First    float64 `json:"first"`   // Unix time of the first upload of the name
	Last     float64 `json:"last"`    // Unix time of the last upload
	SHA1     string  `json:"sha1"`
	Kind     string  `json:"kind"`            // pdf, ps, xps, json, xml, zip
	Pages    int     `json:"pages,omitempty"` // page count of a document, once known
	Blob     string  `json:"blob"`            // blob file name under blobs/<epid>/
	Archive  string  `json:"archive,omitempty"`
	// Portal marks a copy of a document of the account's library that
	// the mailing's metadata names (portaldocs.go), not a file the client
	// uploaded in the session.
	Portal bool   `json:"portal,omitempty"`
	By     string `json:"by,omitempty"` // who uploaded it last (user name or API key id)

	// PageSizes holds end_session's warnings about the document's pages
	// that are not A4, one a line, made when its pages are counted (text,
	// so that a File stays comparable).
	PageSizes string `json:"page_sizes,omitempty"`
}

// Intent values: what a file is used as in its mailing.
const (
	IntentUnknown    = 0
	IntentDocument   = 1 // a letter's document
	IntentMetadata   = 2
	IntentAttachment = 3
	IntentArchive    = 4 // a ZIP unpacked into the session
	IntentUnused     = 5 // uploaded but not part of the mailing
)

// Options tune a Store. The zero value means the documented defaults.
type Options struct {
	// MaxFileBytes bounds one uploaded file (default 1 GiB).
	MaxFileBytes int64
	// SessionTTL is how long a session stays open (default 24 h).
	SessionTTL time.Duration
	// MinFreeBytes is the room an upload must leave free on the store's
	// disk (default 1 GiB): an upload that would leave less is refused
	// (HTTP 503, retry later) before any of it is written, so that a full
	// disk refuses new files cleanly instead of failing half-way. A
	// shared store (OpenShared) checks it on a blob store on this node's
	// disk (blob.Local) and leaves object storage to refuse for itself.
	MinFreeBytes int64
	// Retention is how long the documents (uploaded files) of an ended
	// mailing the mailroom does not keep (Keep) stay after end_session
	// (default 30 days); then they are deleted and the records stay. See
	// PurgeDocuments.
	Retention time.Duration
	// Metrics is the metric set the upload counters go on (metrics.go):
	// the server's, so that /metrics shows them; nil for a private one.
	Metrics *metrics.Set
	// Keep, when set, tells whether an ended mailing's documents are
	// still needed (its letters not all produced): the retention sweep
	// leaves those, and the mailroom purges them itself (PurgeMailing).
	Keep func(epid string) bool
	Now  func() time.Time
}

func (o Options) withDefaults() Options {
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 1 << 30
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = 24 * time.Hour
	}
	if o.MinFreeBytes <= 0 {
		o.MinFreeBytes = 1 << 30
	}
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Store keeps sessions, files, mailings and letters: embedded (Open:
// pebble and files under one directory) or shared by several nodes
// (OpenShared: PostgreSQL and a blob.Store; shared.go).
type Store struct {
	dir   string
	db    *pebble.DB
	opt   Options
	locks [256]sync.Mutex
	// syncDir syncs a directory (durable.SyncDir); tests watch it.
	syncDir func(dir string) error
	m       *storeMetrics

	shared // the shared store's database and blob store; zero when embedded
}

// Open opens (creating) the store in dir and removes what an interrupted
// upload left behind: temporary files and blobs without a record.
func Open(dir string, opt Options) (*Store, error) {
	opt = opt.withDefaults()
	if err := os.MkdirAll(filepath.Join(dir, "blobs"), 0o750); err != nil {
		return nil, err
	}
	db, err := pebble.Open(filepath.Join(dir, "db"), &pebble.Options{Logger: pebblelog.Quiet{}})
	if err != nil {
		return nil, fmt.Errorf("upload store %s: %w", dir, err)
	}
	s := &Store{dir: dir, db: db, opt: opt, syncDir: durable.SyncDir, m: newStoreMetrics(opt.Metrics)}
	// a session directory made just before a crash, whose name the crash
	// kept from being synced, is synced now, before a record points into
	// it (sessionDir syncs only the directories it makes)
	if err := s.syncDir(filepath.Join(dir, "blobs")); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.recover(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the store. A shared store's database and blob store are
// its caller's, and stay open; its Close waits for the deletions of
// replaced blobs under way.
func (s *Store) Close() error {
	if s.pg != nil {
		s.settle()
		return nil
	}
	return s.db.Close()
}

// Options returns the store's options with defaults applied.
func (s *Store) Options() Options { return s.opt }

func (s *Store) lock(epid string) *sync.Mutex { return &s.locks[lockIndex(epid, len(s.locks))] }

func lockIndex(epid string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(epid))
	return int(h.Sum32() % uint32(n))
}

// lockAll takes the locks of several sessions and returns the function
// that releases them. The locks are taken in index order, each once (two
// sessions may share one): every other holder takes a single session's
// lock, so two callers of lockAll cannot deadlock with each other or with
// them.
func (s *Store) lockAll(epids []string) (unlock func()) {
	idx := make([]int, 0, len(epids))
	seen := map[int]bool{}
	for _, epid := range epids {
		if i := lockIndex(epid, len(s.locks)); !seen[i] {
			seen[i] = true
			idx = append(idx, i)
		}
	}
	sort.Ints(idx)
	for _, i := range idx {
		s.locks[i].Lock()
	}
	return func() {
		for j := len(idx) - 1; j >= 0; j-- {
			s.locks[idx[j]].Unlock()
		}
	}
}

func (s *Store) scan(prefix string, fn func(k, v []byte) error) error {
	return s.scanRange(prefix, prefix, fn)
}

// scanRange is scan over the keys of prefix from from (inclusive) on.
func (s *Store) scanRange(prefix, from string, fn func(k, v []byte) error) error {
	return s.scanKeys(from, prefixEnd(prefix), fn)
}

// prefixEnd is the first key after every key with the prefix pfx.
func prefixEnd(pfx string) string {
	end := []byte(pfx)
	end[len(end)-1]++
	return string(end)
}

// scanKeys calls fn for every key from lo (inclusive) to hi (exclusive).
func (s *Store) scanKeys(lo, hi string, fn func(k, v []byte) error) error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(lo), UpperBound: []byte(hi)})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return err
	}
	return it.Close()
}

func (s *Store) get(key string, v any) error {
	b, closer, err := s.db.Get([]byte(key))
	if err != nil {
		if errors.Is(err, pebble.ErrNotFound) {
			return ErrNotFound
		}
		return err
	}
	defer closer.Close()
	return json.Unmarshal(b, v)
}

// Tx collects writes committed together with a synced batch; a shared
// store's, statements committed as one transaction (pgUpdate).
type Tx struct {
	b   *pebble.Batch
	err error

	pg  bool // a shared store's: ops, not pebble keys
	ops []pgOp
}

// errNotEmbedded is the error of a write of pebble keys to a shared
// store: a bug.
var errNotEmbedded = errors.New("upload: a pebble key written to a shared store")

func (t *Tx) put(key string, v any) {
	if t.pg {
		t.err = errNotEmbedded
	}
	if t.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.err = err
		return
	}
	t.err = t.b.Set([]byte(key), b, nil)
}

func (t *Tx) del(key string) {
	if t.pg {
		t.err = errNotEmbedded
	}
	if t.err == nil {
		t.err = t.b.Delete([]byte(key), nil)
	}
}

// PutSession records a session and keeps its index entries: under its
// account always, among the open sessions by expiry while it is open, and
// among the mailings whose documents are kept by end time once it ended
// until they are removed (see lifecycle.go).
func (t *Tx) PutSession(ss Session) {
	if t.pg {
		t.pgPutSession(ss)
		return
	}
	t.put(sessionPrefix+ss.EPID, ss)
	t.put(acctKey(ss), ss.EPID)
	if ss.State == StateOpen {
		t.put(openKey(ss), ss.EPID)
	} else {
		t.del(openKey(ss))
	}
	if ss.State == StateEnded {
		if ss.Purged.IsZero() {
			t.put(keptKey(ss), ss.EPID)
		} else {
			t.del(keptKey(ss))
		}
	}
}

// acctKey is a session's key in the account index: the inverted creation
// time makes a scan list an account's sessions newest first.
func acctKey(ss Session) string {
	return fmt.Sprintf("%s%s/%016x/%s", acctPrefix, ss.Account, ^uint64(ss.Created.UnixNano()), ss.EPID)
}

// PutFile records a file of a session.
func (t *Tx) PutFile(epid string, f File) {
	if t.pg {
		t.pgPutFile(epid, f)
		return
	}
	t.put(filePrefix+epid+"/"+f.Name, f)
}

// deleteFile removes the record of a session's file.
func (t *Tx) deleteFile(epid, name string) {
	if t.pg {
		t.pgDeleteFile(epid, name)
		return
	}
	t.del(filePrefix + epid + "/" + name)
}

func (t *Tx) deleteKey(key string) { t.del(key) }

// Update runs fn and commits its writes atomically with fsync; with
// several nodes (OpenShared), in one transaction under the sessions'
// locks (pgUpdate).
func (s *Store) Update(fn func(t *Tx) error) error {
	if s.pg != nil {
		return s.pgUpdate(fn)
	}
	t := &Tx{b: s.db.NewBatch()}
	defer t.b.Close()
	if err := fn(t); err != nil {
		return err
	}
	if t.err != nil {
		return t.err
	}
	return t.b.Commit(pebble.Sync)
}

// CreateSession opens a new session for an account's user.
func (s *Store) CreateSession(account, user string) (Session, error) {
	epid, err := NewEPID()
	if err != nil {
		return Session{}, err
	}
	now := s.opt.Now().UTC()
	ss := Session{EPID: epid, Account: account, User: user, State: StateOpen, Created: now, Expires: now.Add(s.opt.SessionTTL)}
	if s.pg != nil { // what the database keeps, so that the answer is what a read gives
		ss.Created, ss.Expires = pgFloor(ss.Created), pgFloor(ss.Expires)
	}
	if err := s.Update(func(t *Tx) error { t.PutSession(ss); return nil }); err != nil {
		return Session{}, err
	}
	s.m.sessionsOpened.Inc()
	return ss, nil
}

// Session returns a session; ErrNoSession when there is none.
func (s *Store) Session(epid string) (Session, error) {
	if !ValidEPID(epid) {
		return Session{}, ErrNoSession
	}
	ss, err := s.rawSession(epid)
	if err != nil {
		return Session{}, err
	}
	return s.asOf(ss), nil
}

// asOf is the session as it reads now: an open session past its time
// reads as expired before the janitor records it.
func (s *Store) asOf(ss Session) Session {
	if ss.State == StateOpen && s.opt.Now().After(ss.Expires) {
		ss.State = StateExpired
	}
	return ss
}

// rawSession is the session's record as stored; ErrNoSession when there
// is none.
func (s *Store) rawSession(epid string) (Session, error) {
	if s.pg != nil {
		return s.pgSession(epid)
	}
	var ss Session
	if err := s.get(sessionPrefix+epid, &ss); err != nil {
		if errors.Is(err, ErrNotFound) {
			return Session{}, ErrNoSession
		}
		return Session{}, err
	}
	return ss, nil
}

// Files returns a session's files in the order they were first uploaded.
func (s *Store) Files(epid string) ([]File, error) {
	if s.pg != nil {
		return s.pgFiles(epid)
	}
	var out []File
	err := s.scan(filePrefix+epid+"/", func(k, v []byte) error {
		var f File
		if err := json.Unmarshal(v, &f); err != nil {
			return err
		}
		out = append(out, f)
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].First < out[j].First })
	return out, err
}

// BlobPath returns where an embedded store (Open) keeps a file's content;
// "" for a shared store, whose bytes are read with OpenFile or LocalPath.
func (s *Store) BlobPath(epid string, f File) string {
	if s.pg != nil {
		return ""
	}
	return filepath.Join(s.dir, "blobs", epid, f.Blob)
}

// BlobKey is a file's key in a blob store: blobs/<epid>/<blob>, the path
// of its bytes under the embedded store's directory too (what a
// blob.Local of that directory reads), and end_session's gpath.
func BlobKey(epid string, f File) string { return "blobs/" + epid + "/" + f.Blob }

// OpenFile opens a file's bytes for reading, on any node.
func (s *Store) OpenFile(ctx context.Context, epid string, f File) (io.ReadCloser, error) {
	if s.pg != nil {
		r, _, err := s.blobs.Open(ctx, BlobKey(epid, f))
		return r, err
	}
	return os.Open(s.BlobPath(epid, f))
}

// LocalPath returns a path on this node's disk holding a file's bytes,
// for what reads files (page counting in a child process, ZIP archives):
// the blob itself on the local disk, a verified copy in this node's cache
// for object storage (blob.Store.LocalPath). The file must not be written.
func (s *Store) LocalPath(ctx context.Context, epid string, f File) (string, error) {
	if s.pg != nil {
		return s.blobs.LocalPath(ctx, BlobKey(epid, f))
	}
	return s.BlobPath(epid, f), nil
}

// readFile reads a file's bytes whole (a metadata file).
func (s *Store) readFile(ctx context.Context, epid string, f File) ([]byte, error) {
	r, err := s.OpenFile(ctx, epid, f)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// removeBlob deletes a file's bytes whose record is gone or was never
// committed; one left behind by a crash is an orphan (see the package
// doc for who removes it).
func (s *Store) removeBlob(epid string, f File) {
	if s.pg != nil {
		s.blobs.Delete(context.Background(), BlobKey(epid, f))
		return
	}
	os.Remove(s.BlobPath(epid, f))
}

// HeadSize is how many leading bytes PutFile hands to its check before it
// stores anything.
const HeadSize = 8 << 10

// PutFile stores body as the file name of an open session, uploaded by
// by (a user name or API key id of the session's account), replacing an
// earlier upload of the same name. check sees the first HeadSize bytes (or
// all of a shorter body) before anything is stored and may refuse the file.
// The returned record is committed and its content synced.
func (s *Store) PutFile(ss Session, by, name string, declared int64, body io.Reader, check func(head []byte) (kind string, err error)) (File, error) {
	mu := s.lock(ss.EPID)
	mu.Lock()
	defer mu.Unlock()
	f, err := s.putFileLocked(ss, by, name, declared, body, check, nil)
	if err == nil {
		s.m.filesReceived.Inc()
		s.m.bytesReceived.AddInt64(f.Size)
	}
	return f, err
}

// putFileLocked is PutFile for a caller holding the session's lock; edit,
// when set, amends the record before it is committed.
func (s *Store) putFileLocked(ss Session, by, name string, declared int64, body io.Reader, check func(head []byte) (kind string, err error), edit func(*File)) (File, error) {
	if s.pg != nil {
		return s.putShared(ss, by, name, declared, body, check, edit)
	}
	cur, err := s.Session(ss.EPID)
	if err != nil {
		return File{}, err
	}
	if cur.State != StateOpen {
		return File{}, ErrSessionClosed
	}
	head, kind, err := s.admit(declared, body, check, s.dir)
	if err != nil {
		return File{}, err
	}
	n := len(head)
	dir, err := s.sessionDir(ss.EPID)
	if err != nil {
		return File{}, err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return File{}, err
	}
	defer func() {
		if tmp != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha1.New()
	w := io.MultiWriter(tmp, h)
	if _, err := w.Write(head); err != nil {
		return File{}, err
	}
	rest, err := copyBody(tmp, h, io.LimitReader(body, s.opt.MaxFileBytes-int64(n)+1))
	if err != nil {
		return File{}, fmt.Errorf("receiving %s: %w", name, err)
	}
	size := int64(n) + rest
	if size > s.opt.MaxFileBytes {
		return File{}, ErrTooLarge
	}
	if declared >= 0 && size != declared {
		return File{}, &readError{fmt.Errorf("received %d bytes, Content-Length said %d", size, declared)}
	}
	if err := tmp.Sync(); err != nil {
		return File{}, err
	}
	if err := tmp.Close(); err != nil {
		return File{}, err
	}
	blob := randomName() + ".blob"
	if err := os.Rename(tmp.Name(), filepath.Join(dir, blob)); err != nil {
		return File{}, err
	}
	tmp = nil
	if err := s.syncDir(dir); err != nil {
		return File{}, err
	}
	var prev File
	hadPrev := s.get(filePrefix+ss.EPID+"/"+name, &prev) == nil
	now := float64(s.opt.Now().UnixNano()) / 1e9
	f := File{Name: name, Size: size, Received: size, Declared: declared, Chunks: 1, First: now, Last: now,
		SHA1: hex.EncodeToString(h.Sum(nil)), Kind: kind, Blob: blob, By: by}
	if hadPrev {
		f.Chunks, f.First = prev.Chunks+1, prev.First
	}
	if edit != nil {
		edit(&f)
	}
	if err := s.Update(func(t *Tx) error { t.PutFile(ss.EPID, f); return nil }); err != nil {
		os.Remove(filepath.Join(dir, blob))
		return File{}, err
	}
	if hadPrev && prev.Blob != blob {
		os.Remove(filepath.Join(dir, prev.Blob))
	}
	return f, nil
}

// admit decides, before anything is stored, whether an upload of declared
// bytes (-1: unknown) may be taken: within the size limit, leaving
// Options.MinFreeBytes free on the disk of dir ("" for none), and its
// first HeadSize bytes, read from body, passing check. It returns them
// and the kind check gave.
func (s *Store) admit(declared int64, body io.Reader, check func(head []byte) (kind string, err error), dir string) ([]byte, string, error) {
	if declared > s.opt.MaxFileBytes {
		return nil, "", ErrTooLarge
	}
	if dir != "" {
		if free, ok := diskFree(dir); ok && free < uint64(max(declared, 0))+uint64(s.opt.MinFreeBytes) {
			return nil, "", ErrNoSpace
		}
	}
	head := make([]byte, HeadSize)
	n, err := io.ReadFull(body, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, "", &readError{err}
	}
	head = head[:n]
	kind, err := check(head)
	if err != nil {
		return nil, "", err
	}
	return head, kind, nil
}

// sessionDir returns the blob directory of a session, making it when it
// is missing. A new directory's name is synced into blobs/ before any
// record can point into it: a power cut must not keep a file record and
// lose the directory of its blob. The caller holds the session's lock.
func (s *Store) sessionDir(epid string) (string, error) {
	dir := filepath.Join(s.dir, "blobs", epid)
	err := os.Mkdir(dir, 0o750)
	if errors.Is(err, fs.ErrExist) {
		return dir, nil
	}
	if err != nil {
		return "", err
	}
	if err := s.syncDir(filepath.Dir(dir)); err != nil {
		return "", err
	}
	return dir, nil
}

func randomName() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
