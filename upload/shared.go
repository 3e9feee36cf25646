package upload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/pgdb"
)

// The store of a node of several (OpenShared): records in PostgreSQL
// (migrations 0200_upload: tables upload_sessions and upload_files), the
// files' bytes in a blob.Store under blobs/<epid>/<blob>. doc.go says
// what it promises; this file is how.

// shared is the part of a Store that only a shared store has.
type shared struct {
	pg    *pgdb.DB
	blobs blob.Store

	// held are the sessions whose lock this node holds for a long
	// operation (end_session: lockEnd), each on a connection of its own;
	// only the goroutine holding the session's local lock reads or writes
	// its entry.
	heldMu sync.Mutex
	held   map[string]*pgxpool.Conn

	// endSlots bounds the end_sessions holding a connection for their
	// session's lock to half the pool: each needs one more connection at
	// a time for its work, so with every connection held by a lock the
	// ends would wait on each other for ever (16 at once on a pool of 8
	// did). The others wait here, holding nothing.
	endSlots chan struct{}

	// deletes are the deletions of replaced blobs still running
	// (deleteLater); slots bounds them
	deletes sync.WaitGroup
	slots   chan struct{}
}

// maxDeletes bounds the deletions of replaced blobs running at once; past
// it an upload deletes the blob it replaced before it answers.
const maxDeletes = 64

// sessionLockClass is the first key of the advisory locks of sessions
// ("upld"); the second is a hash of the EPID (sessionLockKey). Two
// sessions sharing a hash only wait for each other now and then.
const sessionLockClass int32 = 0x75706c64

func sessionLockKey(epid string) int32 {
	h := fnv.New32a()
	h.Write([]byte(epid))
	return int32(h.Sum32())
}

// sweepLease is how long a node that took on deleting a session's blobs
// (closing it, purging its documents) is taken to be at it: past it, any
// node's janitor finishes the job (Sweep). Deleting twice is harmless.
const sweepLease = 10 * time.Minute

// OpenShared opens the store of a node of several sharing db and blobs:
// sessions and files' records in the database (whose schema pgdb.Open
// migrated), the files' bytes in blobs, under the keys the embedded store
// uses as paths (BlobKey). It removes nothing at start: what an
// interrupted node left is finished by the janitor (Sweep) of whichever
// node runs it. db and blobs stay the caller's to close.
func OpenShared(db *pgdb.DB, blobs blob.Store, opt Options) (*Store, error) {
	if db == nil || blobs == nil {
		return nil, errors.New("upload: a shared store needs a database and a blob store")
	}
	opt = opt.withDefaults()
	var n int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM upload_sessions WHERE false`).Scan(&n); err != nil {
		return nil, fmt.Errorf("upload: the shared database has no upload tables (migration 0200): %w", err)
	}
	s := &Store{opt: opt, m: newStoreMetrics(opt.Metrics), syncDir: func(string) error { return nil }}
	s.pg, s.blobs, s.held, s.slots = db, blobs, map[string]*pgxpool.Conn{}, make(chan struct{}, maxDeletes)
	s.endSlots = make(chan struct{}, max(1, int(db.Pool.Config().MaxConns)/2))
	return s, nil
}

// holds reports whether this node holds the session's lock for a long
// operation; only the holder of its local lock may ask.
func (s *Store) holds(epid string) bool {
	s.heldMu.Lock()
	defer s.heldMu.Unlock()
	return s.held[epid] != nil
}

// queueLock queues the session's lock for the transaction of b, unless
// this node holds it already (lockEnd): every write of a session's
// records takes it, so that the writes of one session are serialised
// across nodes as the local lock serialises them within one.
func (s *Store) queueLock(b *pgx.Batch, epid string) bool {
	if s.holds(epid) {
		return false
	}
	b.Queue(`SELECT pg_advisory_xact_lock($1, $2)`, sessionLockClass, sessionLockKey(epid))
	return true
}

// lockEnd takes a session's lock for end_session and reads the session
// (as Session does) and, unless it ended with an answer, its files. The
// caller calls unlock when done. With several nodes the lock is also a
// PostgreSQL session-level advisory lock on a connection held until
// unlock, taken in the same round trip as the reads; the end's own
// writes then skip the per-transaction lock, and every other node's
// writes of the session wait for unlock. A node that dies holding it
// loses its connection and the lock with it.
func (s *Store) lockEnd(epid string) (cur Session, files []File, unlock func(), err error) {
	mu := s.lock(epid)
	mu.Lock()
	if s.pg == nil {
		cur, err = s.Session(epid)
		if err == nil && !(cur.State == StateEnded && cur.Result != nil) {
			files, err = s.Files(epid)
		}
		if err != nil {
			mu.Unlock()
			return Session{}, nil, nil, err
		}
		return cur, files, mu.Unlock, nil
	}
	ctx := context.Background()
	s.endSlots <- struct{}{}
	conn, err := s.pg.Pool.Acquire(ctx)
	if err != nil {
		<-s.endSlots
		mu.Unlock()
		return Session{}, nil, nil, err
	}
	fail := func(err error) (Session, []File, func(), error) {
		conn.Conn().Close(ctx) // the lock, if taken, goes with the connection
		conn.Release()
		<-s.endSlots
		mu.Unlock()
		return Session{}, nil, nil, err
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_lock($1, $2)`, sessionLockClass, sessionLockKey(epid))
	b.Queue(`SELECT `+sessionCols+` FROM upload_sessions WHERE epid = $1`, epid)
	b.Queue(`SELECT `+fileCols+` FROM upload_files WHERE epid = $1 ORDER BY first_at, name`, epid)
	br := conn.SendBatch(ctx, b)
	_, err = br.Exec()
	if err == nil {
		cur, err = scanSession(br.QueryRow())
	}
	if err == nil {
		files, err = scanFiles(br.Query())
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	cur = s.asOf(cur)
	if cur.State == StateEnded && cur.Result != nil {
		files = nil
	}
	s.heldMu.Lock()
	s.held[epid] = conn
	s.heldMu.Unlock()
	return cur, files, func() {
		s.heldMu.Lock()
		delete(s.held, epid)
		s.heldMu.Unlock()
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock($1, $2)`, sessionLockClass, sessionLockKey(epid)); err != nil {
			conn.Conn().Close(ctx)
		}
		conn.Release()
		<-s.endSlots
		mu.Unlock()
	}, nil
}

// The columns of a session and of a file, in the order scanSession and
// scanFile read them.
const (
	sessionCols = `epid, account, user_name, state, created, expires, ended, ended_by, purged, reason, result`
	fileCols    = `name, size, received, declared, chunks, intent, first_at, last_at, sha1, kind, pages, blob, archive, portal, by_user, page_sizes`
)

func scanSession(row pgx.Row) (Session, error) {
	var ss Session
	var ended, purged *time.Time
	var result []byte
	err := row.Scan(&ss.EPID, &ss.Account, &ss.User, &ss.State, &ss.Created, &ss.Expires, &ended, &ss.EndedBy, &purged, &ss.Reason, &result)
	if errors.Is(err, pgx.ErrNoRows) {
		return Session{}, ErrNoSession
	}
	if err != nil {
		return Session{}, err
	}
	ss.Created, ss.Expires = ss.Created.UTC(), ss.Expires.UTC()
	if ended != nil {
		ss.Ended = ended.UTC()
	}
	if purged != nil {
		ss.Purged = purged.UTC()
	}
	if result != nil {
		ss.Result = new(EndResult)
		if err := json.Unmarshal(result, ss.Result); err != nil {
			return Session{}, fmt.Errorf("session %s: its end_session answer: %w", ss.EPID, err)
		}
	}
	return ss, nil
}

func scanFiles(rows pgx.Rows, err error) ([]File, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []File
	for rows.Next() {
		var f File
		if err := rows.Scan(&f.Name, &f.Size, &f.Received, &f.Declared, &f.Chunks, &f.Intent, &f.First, &f.Last,
			&f.SHA1, &f.Kind, &f.Pages, &f.Blob, &f.Archive, &f.Portal, &f.By, &f.PageSizes); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// pgFloor is t as timestamptz keeps it: whole microseconds, UTC.
func pgFloor(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// pgCeil is the first whole microsecond at or after t. A stored time x
// (whole microseconds) is before t exactly when x < pgCeil(t), and after
// it exactly when x > pgCeil(t) is false for x <= t: comparisons in SQL
// with pgCeil(now) agree with Go's on the full-precision now.
func pgCeil(t time.Time) time.Time {
	f := pgFloor(t)
	if f.Before(t) {
		f = f.Add(time.Microsecond)
	}
	return f
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

func (s *Store) pgSession(epid string) (Session, error) {
	return scanSession(s.pg.Pool.QueryRow(context.Background(), `SELECT `+sessionCols+` FROM upload_sessions WHERE epid = $1`, epid))
}

func (s *Store) pgFiles(epid string) ([]File, error) {
	return scanFiles(s.pg.Pool.Query(context.Background(),
		`SELECT `+fileCols+` FROM upload_files WHERE epid = $1 ORDER BY first_at, name`, epid))
}

// pgOp is one statement of a Tx of a shared store.
type pgOp struct {
	epid string
	sql  string
	args []any
}

const putSessionSQL = `INSERT INTO upload_sessions (` + sessionCols + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
	ON CONFLICT (epid) DO UPDATE SET account = excluded.account, user_name = excluded.user_name,
		state = excluded.state, created = excluded.created, expires = excluded.expires, ended = excluded.ended,
		ended_by = excluded.ended_by, purged = excluded.purged, reason = excluded.reason, result = excluded.result`

const putFileSQL = `INSERT INTO upload_files (epid, ` + fileCols + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
	ON CONFLICT (epid, name) DO UPDATE SET size = excluded.size, received = excluded.received,
		declared = excluded.declared, chunks = excluded.chunks, intent = excluded.intent,
		first_at = excluded.first_at, last_at = excluded.last_at, sha1 = excluded.sha1, kind = excluded.kind,
		pages = excluded.pages, blob = excluded.blob, archive = excluded.archive, portal = excluded.portal,
		by_user = excluded.by_user, page_sizes = excluded.page_sizes`

func (t *Tx) pgPutSession(ss Session) {
	var result []byte
	if ss.Result != nil {
		var err error
		if result, err = json.Marshal(ss.Result); err != nil {
			t.err = err
			return
		}
	}
	t.ops = append(t.ops, pgOp{ss.EPID, putSessionSQL, []any{ss.EPID, ss.Account, ss.User, ss.State,
		ss.Created.UTC(), ss.Expires.UTC(), nullTime(ss.Ended), ss.EndedBy, nullTime(ss.Purged), ss.Reason, result}})
}

func (t *Tx) pgPutFile(epid string, f File) {
	t.ops = append(t.ops, pgOp{epid, putFileSQL, []any{epid, f.Name, f.Size, f.Received, f.Declared, f.Chunks,
		f.Intent, f.First, f.Last, f.SHA1, f.Kind, f.Pages, f.Blob, f.Archive, f.Portal, f.By, f.PageSizes}})
}

func (t *Tx) pgDeleteFile(epid, name string) {
	t.ops = append(t.ops, pgOp{epid, `DELETE FROM upload_files WHERE epid = $1 AND name = $2`, []any{epid, name}})
}

// pgUpdate is Update of a shared store: fn's writes go in one batch, one
// round trip, run by PostgreSQL as one transaction (the implicit one of
// a pipeline up to its Sync), which first takes the lock of every
// session they touch, in key order, unless this node holds it.
func (s *Store) pgUpdate(fn func(t *Tx) error) error {
	t := &Tx{pg: true}
	if err := fn(t); err != nil {
		return err
	}
	if t.err != nil {
		return t.err
	}
	if len(t.ops) == 0 {
		return nil
	}
	epids := map[string]bool{}
	for _, op := range t.ops {
		epids[op.epid] = true
	}
	keys := make([]int32, 0, len(epids))
	for epid := range epids {
		if !s.holds(epid) {
			keys = append(keys, sessionLockKey(epid))
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	b := &pgx.Batch{}
	for i, k := range keys {
		if i == 0 || k != keys[i-1] {
			b.Queue(`SELECT pg_advisory_xact_lock($1, $2)`, sessionLockClass, k)
		}
	}
	for _, op := range t.ops {
		b.Queue(op.sql, op.args...)
	}
	return s.pg.Pool.SendBatch(context.Background(), b).Close()
}

// commitFileSQL records an upload in one statement, under the session's
// lock taken before it in the same transaction: the file is inserted or
// replaces the name's (one more upload of it, the time of the first
// kept) only while the session is open and not past its time; the answer
// says whether the session exists, its state, the name's previous blob
// and the stored count and first time.
const commitFileSQL = `WITH s AS (SELECT state, expires FROM upload_sessions WHERE epid = $1),
	old AS (SELECT blob FROM upload_files WHERE epid = $1 AND name = $2),
	ins AS (
		INSERT INTO upload_files AS f (epid, ` + fileCols + `)
		SELECT $1, $2, $3, $4, $5, 1, $6, $7, $7, $8, $9, $10, $11, $12, $13, $14, $15
		FROM s WHERE s.state = 'open' AND s.expires >= $16
		ON CONFLICT (epid, name) DO UPDATE SET size = excluded.size, received = excluded.received,
			declared = excluded.declared, chunks = f.chunks + 1, intent = excluded.intent,
			last_at = excluded.last_at, sha1 = excluded.sha1, kind = excluded.kind, pages = excluded.pages,
			blob = excluded.blob, archive = excluded.archive, portal = excluded.portal,
			by_user = excluded.by_user, page_sizes = excluded.page_sizes
		RETURNING chunks, first_at)
	SELECT s.state, (SELECT blob FROM old), ins.chunks, ins.first_at FROM s LEFT JOIN ins ON true`

// putShared is putFileLocked of a shared store. The bytes go to the blob
// store first (durable when Put returns), then the record commits in one
// round trip; a refused commit (the session closed meanwhile) deletes the
// new blob, and a committed one deletes the blob it replaced. The session
// is not read again: ss is the caller's fresh reading, and the commit
// checks it under the session's lock.
func (s *Store) putShared(ss Session, by, name string, declared int64, body io.Reader, check func(head []byte) (kind string, err error), edit func(*File)) (File, error) {
	ctx := context.Background()
	if ss.State != StateOpen || s.opt.Now().After(ss.Expires) {
		return File{}, ErrSessionClosed
	}
	dir := ""
	if l, ok := s.blobs.(interface{ Root() string }); ok {
		dir = l.Root()
	}
	head, kind, err := s.admit(declared, body, check, dir)
	if err != nil {
		return File{}, err
	}
	name0 := randomName() + ".blob"
	key := BlobKey(ss.EPID, File{Blob: name0})
	in := &bodyCounter{r: io.MultiReader(bytes.NewReader(head), body), max: s.opt.MaxFileBytes, declared: declared}
	info, err := s.blobs.Put(ctx, key, in, declared)
	if err != nil {
		if in.err != nil {
			return File{}, fmt.Errorf("receiving %s: %w", name, in.err)
		}
		return File{}, fmt.Errorf("receiving %s: %w", name, err)
	}
	if in.err != nil { // the body failed, whatever the store made of it
		s.blobs.Delete(ctx, key)
		return File{}, fmt.Errorf("receiving %s: %w", name, in.err)
	}
	if info.Size != in.n || info.SHA1 == "" {
		s.blobs.Delete(ctx, key)
		return File{}, fmt.Errorf("receiving %s: the blob store kept %d bytes (sha1 %q) of %d", name, info.Size, info.SHA1, in.n)
	}
	now := float64(s.opt.Now().UnixNano()) / 1e9
	f := File{Name: name, Size: info.Size, Received: info.Size, Declared: declared, Chunks: 1, First: now, Last: now,
		SHA1: info.SHA1, Kind: kind, Blob: name0, By: by}
	if edit != nil {
		edit(&f)
	}
	old, err := s.commitFile(ctx, ss.EPID, &f)
	if err != nil {
		s.blobs.Delete(ctx, key)
		return File{}, err
	}
	if old != "" && old != f.Blob {
		s.deleteLater(BlobKey(ss.EPID, File{Blob: old}))
	}
	return f, nil
}

// deleteLater deletes a replaced blob without the upload waiting for it:
// the record naming the new blob is committed, so the old one is already
// an orphan, and its deletion (a directory sync on a disk, a request to
// object storage) need not delay the answer. One a crash keeps is an
// orphan like any other (see the package doc). Close waits for them.
func (s *Store) deleteLater(key string) {
	select {
	case s.slots <- struct{}{}:
		s.deletes.Add(1)
		go func() {
			defer func() { <-s.slots; s.deletes.Done() }()
			s.blobs.Delete(context.Background(), key)
		}()
	default:
		s.blobs.Delete(context.Background(), key)
	}
}

// settle waits for the deletions of replaced blobs under way.
func (s *Store) settle() {
	if s.pg != nil {
		s.deletes.Wait()
	}
}

// commitFile commits an upload's record (commitFileSQL): one round trip.
// It sets f's upload count and first time as stored, and returns the
// blob of the upload it replaced ("" for none).
func (s *Store) commitFile(ctx context.Context, epid string, f *File) (string, error) {
	b := &pgx.Batch{}
	locked := s.queueLock(b, epid)
	b.Queue(commitFileSQL, epid, f.Name, f.Size, f.Received, f.Declared, f.Intent, f.First, f.SHA1, f.Kind,
		f.Pages, f.Blob, f.Archive, f.Portal, f.By, f.PageSizes, pgCeil(s.opt.Now()))
	br := s.pg.Pool.SendBatch(ctx, b)
	var err error
	if locked {
		_, err = br.Exec()
	}
	var state, old *string
	var chunks *int
	var first *float64
	if err == nil {
		err = br.QueryRow().Scan(&state, &old, &chunks, &first)
	}
	if cerr := br.Close(); err == nil { // the commit: nothing is durable before it
		err = cerr
	}
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", ErrNoSession
	case err != nil:
		return "", err
	case chunks == nil:
		return "", ErrSessionClosed
	}
	f.Chunks, f.First = *chunks, *first
	if old == nil {
		return "", nil
	}
	return *old, nil
}

// bodyCounter is an upload's body as the blob store reads it: it counts
// the bytes, stops with ErrTooLarge past max and with a *readError when
// the body fails or, declared >= 0, gives other than declared bytes; err
// keeps why it stopped, so that the store's error need not say.
type bodyCounter struct {
	r        io.Reader
	n, max   int64
	declared int64
	err      error
}

func (b *bodyCounter) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	switch {
	case b.n > b.max:
		b.err = ErrTooLarge
	case b.declared >= 0 && (b.n > b.declared || (err == io.EOF && b.n != b.declared)):
		b.err = &readError{fmt.Errorf("received %d bytes, Content-Length said %d", b.n, b.declared)}
	case err != nil && err != io.EOF:
		b.err = &readError{err}
	}
	if b.err != nil {
		return n, b.err
	}
	return n, err
}

// pgClose is close of a shared store: in one statement under the
// session's lock, an open session (past its time at now, unless now is
// zero) takes state and reason, loses its file records and is marked for
// the deletion of its blobs (sweep), which this node then does
// (finishSweep). The conditional update is the claim: of several nodes'
// janitors, one closes the session.
func (s *Store) pgClose(epid, state, reason string, now time.Time) (bool, error) {
	mu := s.lock(epid)
	mu.Lock()
	defer mu.Unlock()
	ctx := context.Background()
	var before any
	if !now.IsZero() {
		before = pgCeil(now)
	}
	b := &pgx.Batch{}
	locked := s.queueLock(b, epid)
	b.Queue(`WITH c AS (
			UPDATE upload_sessions SET state = $2, reason = $3, sweep = true, sweep_until = $4
			WHERE epid = $1 AND state = 'open' AND ($5::timestamptz IS NULL OR expires < $5) RETURNING epid),
		d AS (DELETE FROM upload_files f USING c WHERE f.epid = c.epid)
		SELECT EXISTS (SELECT 1 FROM upload_sessions WHERE epid = $1), (SELECT count(*) FROM c)`,
		epid, state, reason, s.opt.Now().Add(sweepLease).UTC(), before)
	br := s.pg.Pool.SendBatch(ctx, b)
	var err error
	if locked {
		_, err = br.Exec()
	}
	var exists bool
	var n int
	if err == nil {
		err = br.QueryRow().Scan(&exists, &n)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return false, err
	case !exists:
		return false, ErrNotFound
	case n == 0:
		return false, nil
	}
	if state == StateAbandoned {
		s.m.sessionsAbandoned.Inc()
	} else {
		s.m.sessionsExpired.Inc()
	}
	_, err = s.finishSweep(ctx, epid)
	return true, err
}

// pgPurge is purgeIf of a shared store: an ended mailing whose documents
// are stored (and, cutoff not zero, that ended before cutoff) is claimed
// for the deletion (sweep) by one conditional update, so that one node
// deletes them; then they are deleted and the session marked Purged.
func (s *Store) pgPurge(epid string, cutoff time.Time) (bool, error) {
	mu := s.lock(epid)
	mu.Lock()
	defer mu.Unlock()
	ctx := context.Background()
	var before any
	if !cutoff.IsZero() {
		before = pgCeil(cutoff)
	}
	b := &pgx.Batch{}
	locked := s.queueLock(b, epid)
	b.Queue(`UPDATE upload_sessions SET sweep = true, sweep_until = $2
		WHERE epid = $1 AND state = 'ended' AND purged IS NULL AND NOT sweep AND ($3::timestamptz IS NULL OR ended < $3)
		RETURNING epid`, epid, s.opt.Now().Add(sweepLease).UTC(), before)
	br := s.pg.Pool.SendBatch(ctx, b)
	var err error
	if locked {
		_, err = br.Exec()
	}
	var got string
	claimed := true
	if err == nil {
		err = br.QueryRow().Scan(&got)
		if errors.Is(err, pgx.ErrNoRows) {
			claimed, err = false, nil // not due, purged, or being purged
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil || !claimed {
		return false, err
	}
	if _, err := s.finishSweep(ctx, epid); err != nil {
		return false, err
	}
	s.m.documentsPurged.Inc()
	return true, nil
}

// finishSweep deletes every blob of a session marked for it (sweep),
// then clears the mark, marking an ended session's documents Purged. It
// is safe to run twice, on two nodes: a blob deleted twice is not an
// error, and no upload can be committed into a session no longer open.
// It reports whether it marked documents purged.
func (s *Store) finishSweep(ctx context.Context, epid string) (bool, error) {
	if err := s.removeSessionBlobs(ctx, epid); err != nil {
		return false, err
	}
	var state string
	err := s.pg.Pool.QueryRow(ctx, `UPDATE upload_sessions
		SET sweep = false, sweep_until = NULL, purged = CASE WHEN state = 'ended' THEN COALESCE(purged, $2) ELSE purged END
		WHERE epid = $1 AND sweep RETURNING state`, epid, pgFloor(s.opt.Now())).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil // another node finished first
	}
	return state == StateEnded, err
}

// removeSessionBlobs deletes every object under a session's prefix
// (blobs/<epid>/), and with a blob store on this node's disk the
// session's directory with what failed uploads left in it.
func (s *Store) removeSessionBlobs(ctx context.Context, epid string) error {
	var keys []string
	if err := s.blobs.List(ctx, "blobs/"+epid+"/", func(i blob.Info) error {
		keys = append(keys, i.Key)
		return nil
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if err := s.blobs.Delete(ctx, k); err != nil {
			return err
		}
	}
	if l, ok := s.blobs.(interface{ Root() string }); ok {
		// temporary files of uploads cut off, and of uploads that cannot
		// commit any more (the session is not open)
		if err := os.RemoveAll(filepath.Join(l.Root(), "blobs", epid)); err != nil {
			return err
		}
	}
	return nil
}

// pgEPIDs returns the first column of a query's rows.
func (s *Store) pgEPIDs(sql string, args ...any) ([]string, error) {
	rows, err := s.pg.Pool.Query(context.Background(), sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// pgDueOpen lists the open sessions past their time at now, by expiry.
func (s *Store) pgDueOpen(now time.Time) ([]string, error) {
	return s.pgEPIDs(`SELECT epid FROM upload_sessions WHERE state = 'open' AND expires < $1 ORDER BY expires`, pgCeil(now))
}

// pgDueKept lists the ended mailings whose documents are stored, ended
// before cutoff, by end time.
func (s *Store) pgDueKept(cutoff time.Time) ([]string, error) {
	return s.pgEPIDs(`SELECT epid FROM upload_sessions
		WHERE state = 'ended' AND purged IS NULL AND NOT sweep AND ended < $1 ORDER BY ended`, pgCeil(cutoff))
}

// takeOverSweeps finishes the blob deletions whose node did not within
// its lease (it stopped): each is claimed by moving its lease, rows
// locked by another node's claim skipped, so that one node takes each.
// It returns how many mailings' documents it marked purged.
func (s *Store) takeOverSweeps() (int, error) {
	ctx := context.Background()
	now := s.opt.Now()
	epids, err := s.pgEPIDs(`UPDATE upload_sessions SET sweep_until = $2 WHERE epid IN (
			SELECT epid FROM upload_sessions WHERE sweep AND sweep_until < $1
			ORDER BY sweep_until LIMIT 100 FOR UPDATE SKIP LOCKED)
		RETURNING epid`, pgCeil(now), now.Add(sweepLease).UTC())
	if err != nil {
		return 0, err
	}
	n := 0
	for _, epid := range epids {
		purged, err := s.finishSweep(ctx, epid)
		if err != nil {
			return n, err
		}
		if purged {
			n++
			s.m.documentsPurged.Inc()
		}
	}
	return n, nil
}

// pgAccountSessions is accountSessions of a shared store.
func (s *Store) pgAccountSessions(account string, before *Session, limit int) ([]string, error) {
	if before == nil {
		return s.pgEPIDs(`SELECT epid FROM upload_sessions WHERE account = $1
			ORDER BY created DESC, epid LIMIT $2`, account, limit)
	}
	return s.pgEPIDs(`SELECT epid FROM upload_sessions WHERE account = $1
			AND (created < $2 OR (created = $2 AND epid > $3))
		ORDER BY created DESC, epid LIMIT $4`, account, before.Created.UTC(), before.EPID, limit)
}

func (s *Store) pgFileCount(epid string) (int, error) {
	var n int
	err := s.pg.Pool.QueryRow(context.Background(), `SELECT count(*) FROM upload_files WHERE epid = $1`, epid).Scan(&n)
	return n, err
}
