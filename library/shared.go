package library

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/pgdb"
	"github.com/lodge-mail/lodge/upload"
)

// The libraries of nodes sharing a database and a blob store (OpenShared):
// the package doc says what they promise; this file is how.

// shared is the part of a Library that only a shared one has.
type shared struct {
	db    *pgdb.DB
	blobs blob.Store
	// Test hooks: afterRow runs between reading a document's row and
	// opening its object (where another node's replace or delete may
	// come); beforeCommit before a Put commits its row.
	afterRow     func()
	beforeCommit func(key string)
}

// Timings of loose objects: Sweep deletes those loose for longer than
// looseGrace; a Put whose object has been loose for longer than
// maxLooseAge (its upload stalled) is not committed, so that no Put ever
// commits an object a Sweep may be deleting. putTimeout bounds a Put's
// storing and committing well within maxLooseAge.
const (
	looseGrace  = time.Hour
	maxLooseAge = looseGrace / 2
	putTimeout  = 10 * time.Minute
	// opTimeout bounds every other database operation.
	opTimeout = time.Minute
)

// lockClass is the first key of the advisory locks of accounts' libraries
// ("libr"); the second is a hash of the account code.
const lockClass int32 = 0x6c696272

func lockKey(account string) int32 {
	h := fnv.New32a()
	h.Write([]byte(account))
	return int32(h.Sum32())
}

// objectKey is the key of a document's object in the blob store.
func objectKey(account, blobName string) string { return "library/" + account + "/" + blobName }

// OpenShared opens the libraries of a node of several sharing db (whose
// schema pgdb.Open migrated: 0400_library) and blobs. It removes nothing
// at start: what a node that died left is Sweep's. db and blobs stay the
// caller's to close.
func OpenShared(db *pgdb.DB, blobs blob.Store, opt Options) (*Library, error) {
	if db == nil || blobs == nil {
		return nil, errors.New("library: a shared library needs a database and a blob store")
	}
	opt = opt.withDefaults()
	if opt.TempDir == "" {
		opt.TempDir = os.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	var n int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM library_documents WHERE false`).Scan(&n); err != nil {
		return nil, fmt.Errorf("library: the shared database has no library tables (migration 0400): %w", err)
	}
	return &Library{opt: opt, sh: &shared{db: db, blobs: blobs}}, nil
}

func opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opTimeout)
}

const documentColumns = `name, kind, size, pages, sha1, uploaded, by_user, blob`

func scanDocument(row pgx.Row) (Document, error) {
	var d Document
	err := row.Scan(&d.Name, &d.Kind, &d.Size, &d.Pages, &d.SHA1, &d.Uploaded, &d.By, &d.Blob)
	d.Uploaded = d.Uploaded.UTC()
	return d, err
}

func (s *shared) list(account string) ([]Document, error) {
	ctx, cancel := opContext()
	defer cancel()
	rows, err := s.db.Pool.Query(ctx, `SELECT `+documentColumns+` FROM library_documents WHERE account = $1 ORDER BY name COLLATE "C"`, account)
	if err != nil {
		return nil, fmt.Errorf("library %s: %w", account, err)
	}
	docs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Document, error) { return scanDocument(r) })
	if err != nil {
		return nil, fmt.Errorf("library %s: %w", account, err)
	}
	slices.SortFunc(docs, func(a, b Document) int { return strings.Compare(a.Name, b.Name) })
	return docs, nil
}

// get reads a document's row. A name Put would refuse is no document's,
// and is not sent to the database (which refuses text that is not UTF-8
// or holds a NUL).
func (s *shared) get(account, name string) (Document, error) {
	if CheckName(name) != nil {
		return Document{}, ErrNotFound
	}
	ctx, cancel := opContext()
	defer cancel()
	d, err := scanDocument(s.db.Pool.QueryRow(ctx, `SELECT `+documentColumns+` FROM library_documents WHERE account = $1 AND name = $2`, account, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return Document{}, ErrNotFound
	}
	if err != nil {
		return Document{}, fmt.Errorf("library %s: %w", account, err)
	}
	return d, nil
}

// open opens the object of the document d whose row was read. When it is
// gone, another node replaced or deleted the document since: its row is
// read again, and the new document's object opened (ErrNotFound when
// there is none any more).
func (s *shared) open(account string, d Document) (Document, io.ReadCloser, error) {
	for attempt := 0; ; attempt++ {
		if s.afterRow != nil {
			s.afterRow()
		}
		rc, _, err := s.blobs.Open(context.Background(), objectKey(account, d.Blob))
		if err == nil {
			return d, rc, nil
		}
		if !errors.Is(err, blob.ErrNotFound) || attempt == 10 {
			return Document{}, nil, fmt.Errorf("library %s: document %s: %w", account, d.Name, err)
		}
		again, err := s.get(account, d.Name)
		if err != nil {
			return Document{}, nil, err
		}
		if again.Blob == d.Blob {
			return Document{}, nil, fmt.Errorf("library %s: document %s: its object %s is missing", account, d.Name, objectKey(account, d.Blob))
		}
		d = again
	}
}

func (s *shared) read(account, name string) (Document, io.ReadCloser, error) {
	d, err := s.get(account, name)
	if err != nil {
		return Document{}, nil, err
	}
	return s.open(account, d)
}

// portalDocs reads the rows of the names asked for in one statement, and
// opens their objects.
func (s *shared) portalDocs(account string, names []string) ([]upload.PortalDoc, error) {
	var valid []string
	for _, n := range names {
		if CheckName(n) == nil {
			valid = append(valid, n)
		}
	}
	if len(valid) == 0 {
		return nil, nil
	}
	ctx, cancel := opContext()
	defer cancel()
	rows, err := s.db.Pool.Query(ctx, `SELECT `+documentColumns+` FROM library_documents WHERE account = $1 AND name = ANY($2)`, account, valid)
	if err != nil {
		return nil, fmt.Errorf("library %s: %w", account, err)
	}
	docs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Document, error) { return scanDocument(r) })
	if err != nil {
		return nil, fmt.Errorf("library %s: %w", account, err)
	}
	byName := make(map[string]Document, len(docs))
	for _, d := range docs {
		byName[d.Name] = d
	}
	var out []upload.PortalDoc
	for _, n := range valid {
		d, ok := byName[n]
		if !ok {
			continue
		}
		d, body, err := s.open(account, d)
		if errors.Is(err, ErrNotFound) {
			continue // deleted since
		}
		if err != nil {
			for _, o := range out {
				o.Body.Close()
			}
			return nil, err
		}
		out = append(out, upload.PortalDoc{Name: d.Name, Kind: d.Kind, SHA1: d.SHA1, By: d.By, Size: d.Size, Pages: d.Pages, Body: body})
	}
	return out, nil
}

// room is Library.room from the database: one statement.
func (s *shared) room(account, name string, max int) error {
	ctx, cancel := opContext()
	defer cancel()
	var n int
	var has bool
	err := s.db.Pool.QueryRow(ctx, `SELECT count(*), coalesce(bool_or(name = $2), false) FROM library_documents WHERE account = $1`, account, name).Scan(&n, &has)
	if err != nil {
		return fmt.Errorf("library %s: %w", account, err)
	}
	if n < max || has {
		return nil
	}
	return ErrFull
}

// commitPut is the statement that commits a Put (after the account's
// lock, in the same implicit transaction): the new object is taken off
// the loose list, when the account has room for the document and the
// object has been loose for less than maxLooseAge; the row is inserted or
// replaced only then; a replaced row's object goes on the loose list. It
// returns whether there was room, whether the row was written, and the
// replaced object's key (NULL when none).
const commitPut = `WITH old AS (
	SELECT blob FROM library_documents WHERE account = $1 AND name = $2
), ok AS (
	SELECT EXISTS (SELECT 1 FROM old) OR (SELECT count(*) FROM library_documents WHERE account = $1) < $10 AS room
), claimed AS (
	DELETE FROM library_loose WHERE blob = $11 AND since > now() - $12::float8 * interval '1 second' AND (SELECT room FROM ok)
	RETURNING blob
), up AS (
	INSERT INTO library_documents (account, name, kind, size, pages, sha1, uploaded, by_user, blob)
	SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9 FROM claimed
	ON CONFLICT (account, name) DO UPDATE SET kind = EXCLUDED.kind, size = EXCLUDED.size, pages = EXCLUDED.pages,
		sha1 = EXCLUDED.sha1, uploaded = EXCLUDED.uploaded, by_user = EXCLUDED.by_user, blob = EXCLUDED.blob
	RETURNING 1
), gone AS (
	INSERT INTO library_loose (blob) SELECT $13::text || old.blob FROM old, up
	ON CONFLICT (blob) DO NOTHING
	RETURNING blob
)
SELECT (SELECT room FROM ok), (SELECT count(*) FROM up), (SELECT blob FROM gone)`

// put stores the checked document in tmp (d without its Blob) and commits
// its row.
func (s *shared) put(account string, d Document, tmp *os.File, max int) (Document, error) {
	ctx, cancel := context.WithTimeout(context.Background(), putTimeout)
	defer cancel()
	d.Blob = randomName() + ".blob"
	key := objectKey(account, d.Blob)
	if _, err := s.db.Pool.Exec(ctx, `INSERT INTO library_loose (blob) VALUES ($1)`, key); err != nil {
		return Document{}, fmt.Errorf("library %s: %w", account, err)
	}
	// unstore removes the object of a Put that will not commit; a failure
	// here leaves it loose, for Sweep
	unstore := func() {
		ctx, cancel := opContext()
		defer cancel()
		if err := s.blobs.Delete(ctx, key); err == nil {
			s.db.Pool.Exec(ctx, `DELETE FROM library_loose WHERE blob = $1`, key)
		}
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		unstore()
		return Document{}, err
	}
	info, err := s.blobs.Put(ctx, key, tmp, d.Size)
	if err != nil {
		unstore()
		return Document{}, fmt.Errorf("storing %s: %w", d.Name, err)
	}
	if info.SHA1 != "" && info.SHA1 != d.SHA1 {
		unstore()
		return Document{}, fmt.Errorf("storing %s: the store has sha1 %s, the upload %s", d.Name, info.SHA1, d.SHA1)
	}
	if s.beforeCommit != nil {
		s.beforeCommit(key)
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock($1, $2)`, lockClass, lockKey(account))
	b.Queue(commitPut, account, d.Name, d.Kind, d.Size, d.Pages, d.SHA1, d.Uploaded, d.By, d.Blob,
		max, key, maxLooseAge.Seconds(), objectKey(account, ""))
	var room bool
	var written int
	var replaced *string
	br := s.db.Pool.SendBatch(ctx, b)
	_, err = br.Exec()
	if err == nil {
		err = br.QueryRow().Scan(&room, &written, &replaced)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		// whether it committed is unknown: if it did not, the object
		// stays loose and Sweep deletes it
		return Document{}, fmt.Errorf("library %s: committing %s: %w", account, d.Name, err)
	case !room:
		unstore()
		return Document{}, ErrFull
	case written == 0:
		return Document{}, fmt.Errorf("library %s: %s was stored too slowly (more than %v): try again", account, d.Name, maxLooseAge)
	}
	if replaced != nil {
		s.drop(*replaced)
	}
	return d, nil
}

// drop deletes a loose object (of a replaced or deleted document) and
// takes it off the list; a failure leaves it to Sweep.
func (s *shared) drop(key string) {
	ctx, cancel := opContext()
	defer cancel()
	if err := s.blobs.Delete(ctx, key); err == nil {
		s.db.Pool.Exec(ctx, `DELETE FROM library_loose WHERE blob = $1`, key)
	}
}

func (s *shared) delete(account, name string) error {
	if CheckName(name) != nil {
		return ErrNotFound
	}
	ctx, cancel := opContext()
	defer cancel()
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock($1, $2)`, lockClass, lockKey(account))
	b.Queue(`WITH gone AS (
		DELETE FROM library_documents WHERE account = $1 AND name = $2 RETURNING blob
	), loose AS (
		INSERT INTO library_loose (blob) SELECT $3::text || blob FROM gone ON CONFLICT (blob) DO NOTHING
	)
	SELECT (SELECT $3::text || blob FROM gone)`, account, name, objectKey(account, ""))
	var key *string
	br := s.db.Pool.SendBatch(ctx, b)
	_, err := br.Exec()
	if err == nil {
		err = br.QueryRow().Scan(&key)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("library %s: deleting %s: %w", account, name, err)
	}
	if key == nil {
		return ErrNotFound
	}
	s.drop(*key)
	return nil
}

// Sweep deletes the objects a shared library's nodes left loose for more
// than an hour (a node that died between storing an object and committing
// its row, or between deleting a row and its object) and returns how many
// it deleted. Any node may run it, at any time, as often as it likes
// (lodge serve's janitor); nodes running it at once share the work. One
// node's library has nothing to sweep (Open tidies its directory).
func (l *Library) Sweep(ctx context.Context) (int, error) {
	if l.sh == nil {
		return 0, nil
	}
	return l.sh.sweep(ctx)
}

func (s *shared) sweep(ctx context.Context) (int, error) {
	const batch = 100
	total := 0
	for {
		var claimed, done int
		err := s.db.Tx(ctx, pgx.ReadCommitted, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `SELECT blob FROM library_loose WHERE since < now() - $1::float8 * interval '1 second'
				ORDER BY since LIMIT $2 FOR UPDATE SKIP LOCKED`, looseGrace.Seconds(), batch)
			if err != nil {
				return err
			}
			keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			claimed = len(keys)
			var deleted []string
			for _, k := range keys {
				// a row's lock is held while its object is deleted, so
				// that a Put's commit, which takes the row, waits and
				// then finds it gone
				if err := s.blobs.Delete(ctx, k); err != nil {
					break // left for the next sweep
				}
				deleted = append(deleted, k)
			}
			done = len(deleted)
			_, err = tx.Exec(ctx, `DELETE FROM library_loose WHERE blob = ANY($1)`, deleted)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("library: sweeping: %w", err)
		}
		total += done
		if claimed < batch || done < claimed {
			return total, nil
		}
	}
}
