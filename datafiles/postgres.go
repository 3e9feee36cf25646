package datafiles

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lodge-mail/lodge/pgdb"
)

// DefaultCacheFor is how long Postgres believes what it read, by default.
const DefaultCacheFor = 2 * time.Second

// Bounds of a Postgres cache: past either, it is emptied of what expired,
// and if that is not enough, of everything.
const (
	maxCached      = 10000
	maxCachedBytes = 64 << 20
)

// Options tune Postgres. The zero value of each field means its default.
type Options struct {
	// CacheFor is how long a read is believed (default DefaultCacheFor;
	// negative: never, every read asks the database).
	CacheFor time.Duration
	// Timeout bounds each database operation (default 10 seconds).
	Timeout time.Duration
	Now     func() time.Time // the cache's clock (tests)
}

// Postgres is the files of the database several nodes share, in the table
// lodge_shared_files (migration 0450_shared_files).
type Postgres struct {
	db  *pgdb.DB
	opt Options

	mu    sync.Mutex
	cache map[string]cached
	bytes int
	// writes counts this node's changes: a read that a change overtook
	// does not cache what it read (it may be the bytes before the change)
	writes uint64
}

type cached struct {
	body   []byte
	exists bool
	at     time.Time
}

// NewPostgres returns the files of db, whose schema pgdb.Open migrated. db
// stays the caller's to close.
func NewPostgres(db *pgdb.DB, opt Options) (*Postgres, error) {
	if db == nil {
		return nil, errors.New("datafiles: no database")
	}
	if opt.CacheFor == 0 {
		opt.CacheFor = DefaultCacheFor
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 10 * time.Second
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	p := &Postgres{db: db, opt: opt, cache: map[string]cached{}}
	ctx, cancel := p.ctx()
	defer cancel()
	var n int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM lodge_shared_files WHERE false`).Scan(&n); err != nil {
		return nil, fmt.Errorf("datafiles: the shared database has no lodge_shared_files (migration 0450): %w", err)
	}
	return p, nil
}

func (p *Postgres) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), p.opt.Timeout)
}

// Where is the file's name in the database.
func (p *Postgres) Where(name string) string { return "shared file " + name }

// Read implements Files.
func (p *Postgres) Read(name string, max int64) ([]byte, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	body, exists, err := p.read(name)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, fmt.Errorf("%s: %w", p.Where(name), fs.ErrNotExist)
	}
	if int64(len(body)) > max {
		return nil, fmt.Errorf("%s: %w", p.Where(name), ErrNotFile)
	}
	return body, nil
}

// read returns the file from the cache, or from the database (caching
// it).
func (p *Postgres) read(name string) ([]byte, bool, error) {
	now := p.opt.Now()
	p.mu.Lock()
	c, ok := p.cache[name]
	writes := p.writes
	p.mu.Unlock()
	if ok && now.Sub(c.at) < p.opt.CacheFor {
		return c.body, c.exists, nil
	}
	ctx, cancel := p.ctx()
	defer cancel()
	var body []byte
	err := p.db.Pool.QueryRow(ctx, `SELECT body FROM lodge_shared_files WHERE name = $1`, name).Scan(&body)
	exists := err == nil
	if errors.Is(err, pgx.ErrNoRows) {
		err = nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("datafiles: reading %s: %w", name, err)
	}
	if p.opt.CacheFor > 0 {
		p.mu.Lock()
		if p.writes == writes {
			p.put(name, body, exists, now)
		}
		p.mu.Unlock()
	}
	return body, exists, nil
}

// put caches a file's bytes (as of at); p.mu is held.
func (p *Postgres) put(name string, body []byte, exists bool, at time.Time) {
	if old, ok := p.cache[name]; ok {
		p.bytes -= len(old.body)
		delete(p.cache, name)
	}
	if len(p.cache) >= maxCached || p.bytes+len(body) > maxCachedBytes {
		now := p.opt.Now()
		for n, c := range p.cache {
			if now.Sub(c.at) >= p.opt.CacheFor {
				p.bytes -= len(c.body)
				delete(p.cache, n)
			}
		}
		if len(p.cache) >= maxCached || p.bytes+len(body) > maxCachedBytes {
			clear(p.cache)
			p.bytes = 0
		}
	}
	p.cache[name] = cached{body: body, exists: exists, at: at}
	p.bytes += len(body)
}

// wrote records a change this node made: the cache takes the new bytes
// (nil and !exists for a removal) and reads under way do not cache.
func (p *Postgres) wrote(name string, body []byte, exists bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writes++
	if p.opt.CacheFor > 0 {
		p.put(name, body, exists, p.opt.Now())
	}
}

const upsert = `INSERT INTO lodge_shared_files (name, body) VALUES ($1, $2)
	ON CONFLICT (name) DO UPDATE SET body = EXCLUDED.body, updated_at = now()`

// Write implements Files.
func (p *Postgres) Write(name string, b []byte, _ fs.FileMode) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if len(b) > MaxSize {
		return fmt.Errorf("%s: %w", p.Where(name), ErrTooLarge)
	}
	b = clone(b)
	ctx, cancel := p.ctx()
	defer cancel()
	if _, err := p.db.Pool.Exec(ctx, upsert, name, b); err != nil {
		return fmt.Errorf("datafiles: writing %s: %w", name, err)
	}
	p.wrote(name, b, true)
	return nil
}

// Create implements Files: INSERT ... ON CONFLICT DO NOTHING, then the
// row read back when another made it first.
func (p *Postgres) Create(name string, b []byte, _ fs.FileMode) ([]byte, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if len(b) > MaxSize {
		return nil, fmt.Errorf("%s: %w", p.Where(name), ErrTooLarge)
	}
	b = clone(b)
	ctx, cancel := p.ctx()
	defer cancel()
	// A file removed between the insert and the read is made again: the
	// loop ends when one of the two finds a row.
	for attempt := 0; attempt < 10; attempt++ {
		tag, err := p.db.Pool.Exec(ctx, `INSERT INTO lodge_shared_files (name, body) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, b)
		if err != nil {
			return nil, fmt.Errorf("datafiles: creating %s: %w", name, err)
		}
		if tag.RowsAffected() == 1 {
			p.wrote(name, b, true)
			return b, nil
		}
		var body []byte
		err = p.db.Pool.QueryRow(ctx, `SELECT body FROM lodge_shared_files WHERE name = $1`, name).Scan(&body)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("datafiles: reading %s: %w", name, err)
		}
		p.wrote(name, body, true)
		return body, nil
	}
	return nil, fmt.Errorf("datafiles: creating %s: removed as often as it was made", name)
}

// lockClass is the first key of the advisory locks of Update ("dfil");
// the second is a hash of the name.
const lockClass int32 = 0x6466696c

func lockKey(name string) int32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int32(h.Sum32())
}

// Update implements Files: a transaction holding the name's advisory lock
// reads the row (not the cache), and writes the change.
func (p *Postgres) Update(name string, max int64, _ fs.FileMode, change func([]byte, bool) ([]byte, error)) error {
	if err := CheckName(name); err != nil {
		return err
	}
	ctx, cancel := p.ctx()
	defer cancel()
	var changed []byte
	err := p.db.Tx(ctx, pgx.ReadCommitted, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, lockClass, lockKey(name)); err != nil {
			return err
		}
		var old []byte
		err := tx.QueryRow(ctx, `SELECT body FROM lodge_shared_files WHERE name = $1`, name).Scan(&old)
		exists := err == nil
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if int64(len(old)) > max {
			return fmt.Errorf("%s: %w", p.Where(name), ErrNotFile)
		}
		b, err := change(old, exists)
		if err != nil {
			return err
		}
		if len(b) > MaxSize {
			return fmt.Errorf("%s: %w", p.Where(name), ErrTooLarge)
		}
		changed = clone(b)
		_, err = tx.Exec(ctx, upsert, name, changed)
		return err
	})
	if err != nil {
		return err
	}
	p.wrote(name, changed, true)
	return nil
}

// Remove implements Files.
func (p *Postgres) Remove(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	ctx, cancel := p.ctx()
	defer cancel()
	tag, err := p.db.Pool.Exec(ctx, `DELETE FROM lodge_shared_files WHERE name = $1`, name)
	if err != nil {
		return fmt.Errorf("datafiles: removing %s: %w", name, err)
	}
	p.wrote(name, nil, false)
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", p.Where(name), fs.ErrNotExist)
	}
	return nil
}

// List implements Files (from the database, not the cache).
func (p *Postgres) List(dir string) ([]Info, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	ctx, cancel := p.ctx()
	defer cancel()
	rows, err := p.db.Pool.Query(ctx, `SELECT name, octet_length(body), updated_at FROM lodge_shared_files
		WHERE starts_with(name, $1) ORDER BY name COLLATE "C"`, prefix)
	if err != nil {
		return nil, fmt.Errorf("datafiles: listing %s: %w", dir, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Info, error) {
		var i Info
		err := r.Scan(&i.Name, &i.Size, &i.ModTime)
		return i, err
	})
	if err != nil {
		return nil, fmt.Errorf("datafiles: listing %s: %w", dir, err)
	}
	return out, nil
}

// clone copies b, never to nil (which pgx would send as NULL).
func clone(b []byte) []byte {
	return append([]byte{}, b...)
}
