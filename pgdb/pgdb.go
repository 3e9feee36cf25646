// Package pgdb opens the PostgreSQL database that several lodge nodes
// share (lodge serve -db postgres://...) and keeps its schema current.
//
// # What it promises
//
//   - Open connects a pool and applies every migration the binary knows
//     that the database has not had, before it returns. Any number of
//     nodes may start together: the migrations run under a session-level
//     advisory lock (MigrationLock), so exactly one node applies each
//     migration and the others wait for it and then find it applied.
//   - Each migration runs in one transaction with the row that records it
//     in lodge_schema_migrations: a migration is applied whole or not at
//     all.
//   - Every migration has a down script; Migrate(ctx, n) takes the schema
//     to version n, up or down (lodge db migrate -to n). A database newer
//     than the binary (a version it does not know) is refused at Open
//     rather than written with an old idea of its tables.
//   - Round trips are counted (RoundTrips, lodge_db_round_trips_total): a
//     statement, a batch and a COPY each count one. Begin and Commit are
//     statements and count. pgxpool's health-check ping of a connection
//     idle for more than a second is not counted (pgx does not trace it).
//   - Listen keeps a connection of its own LISTENing on a channel, makes
//     another when it fails, and lets the caller catch up each time
//     (auth's changes, the mailroom's queued jobs).
//
// # What it stores
//
// Only lodge_schema_migrations(version, name, applied_at). The tables of
// accounts and keys (package auth), sessions and files (upload), and
// mailings, letters and the queue (pipeline) are created by their
// migrations, in migrations/NNNN_name.up.sql and NNNN_name.down.sql.
// Versions are unique and increasing (each package's migrations take
// their own numbers, so there may be gaps); a missing up or down script
// is a programming error that Open reports.
//
// # Concurrency
//
// A *DB is safe for concurrent use (a pgxpool.Pool underneath).
package pgdb

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// MigrationLock is the key of the advisory lock migrations run under
// ("lodge" in ASCII).
const MigrationLock int64 = 0x6c6f646765

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Config is how to reach the database. The zero value of every field but
// URL means the documented default.
type Config struct {
	// URL is a PostgreSQL connection string: a postgres:// URL or
	// libpq's key=value form (host=/run/postgresql for a Unix socket).
	URL string
	// MaxConns bounds the pool (default 4 per core, at least 8).
	MaxConns int32
	// ConnectTimeout bounds each connection attempt (default 10 s).
	ConnectTimeout time.Duration
}

// DB is the shared database: a connection pool with counted round trips.
type DB struct {
	Pool  *pgxpool.Pool
	trips *atomic.Int64
}

// Open connects, checks the server answers and migrates the schema to the
// newest version this binary knows.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	db, err := Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := db.Migrate(ctx, -1); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Connect connects without migrating (lodge db migrate uses it to move
// the schema down).
func Connect(ctx context.Context, cfg Config) (*DB, error) {
	if cfg.URL == "" {
		return nil, errors.New("pgdb: no database URL")
	}
	pc, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("pgdb: database URL: %w", err)
	}
	if cfg.MaxConns > 0 {
		pc.MaxConns = cfg.MaxConns
	} else if pc.MaxConns < 8 {
		pc.MaxConns = 8
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	if pc.ConnConfig.ConnectTimeout == 0 {
		pc.ConnConfig.ConnectTimeout = cfg.ConnectTimeout
	}
	trips := new(atomic.Int64)
	pc.ConnConfig.Tracer = tripCounter{trips}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("pgdb: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgdb: connect: %w", err)
	}
	return &DB{Pool: pool, trips: trips}, nil
}

// Close closes the pool.
func (db *DB) Close() { db.Pool.Close() }

// RoundTrips is the number of statements, batches and COPYs sent so far.
func (db *DB) RoundTrips() int64 { return db.trips.Load() }

// Ping checks that the database answers (lodge's /readyz).
func (db *DB) Ping(ctx context.Context) error { return db.Pool.Ping(ctx) }

// Tx runs fn in a transaction at the isolation level given (the zero
// value: read committed) and commits when fn returns nil. A serialization
// failure or deadlock (SQLSTATE 40001, 40P01) is retried, up to 10 times:
// that is the contract of serializable transactions, not a guess at
// timing.
func (db *DB) Tx(ctx context.Context, iso pgx.TxIsoLevel, fn func(pgx.Tx) error) error {
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		err = pgx.BeginTxFunc(ctx, db.Pool, pgx.TxOptions{IsoLevel: iso}, fn)
		if !Retryable(err) {
			return err
		}
	}
	return err
}

// Retryable reports whether err is a serialization failure or a deadlock,
// after which the whole transaction may be run again.
func Retryable(err error) bool {
	var pe interface{ SQLState() string }
	if errors.As(err, &pe) {
		switch pe.SQLState() {
		case "40001", "40P01":
			return true
		}
	}
	return false
}

type tripCounter struct{ n *atomic.Int64 }

func (t tripCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	t.n.Add(1)
	return ctx
}
func (tripCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (t tripCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	t.n.Add(1)
	return ctx
}
func (tripCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (tripCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (t tripCounter) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	t.n.Add(1)
	return ctx
}
func (tripCounter) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}

// Migration is one step of the schema.
type Migration struct {
	Version  int
	Name     string
	Up, Down string
}

// Migrations returns the migrations this binary knows, in version order.
func Migrations() ([]Migration, error) { return parseMigrations(migrationFiles, "migrations") }

func parseMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	byVersion := map[int]*Migration{}
	for _, e := range ents {
		name := e.Name()
		var up bool
		var stem string
		switch {
		case strings.HasSuffix(name, ".up.sql"):
			up, stem = true, strings.TrimSuffix(name, ".up.sql")
		case strings.HasSuffix(name, ".down.sql"):
			stem = strings.TrimSuffix(name, ".down.sql")
		default:
			return nil, fmt.Errorf("pgdb: migrations/%s: not NNNN_name.up.sql or .down.sql", name)
		}
		num, label, ok := strings.Cut(stem, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 || len(num) != 4 {
			return nil, fmt.Errorf("pgdb: migrations/%s: not NNNN_name.up.sql or .down.sql", name)
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		m := byVersion[v]
		if m == nil {
			m = &Migration{Version: v, Name: label}
			byVersion[v] = m
		} else if m.Name != label {
			return nil, fmt.Errorf("pgdb: migration %d has two names, %s and %s", v, m.Name, label)
		}
		if up {
			m.Up = string(b)
		} else {
			m.Down = string(b)
		}
	}
	out := make([]Migration, 0, len(byVersion))
	for _, m := range byVersion {
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for _, m := range out {
		if strings.TrimSpace(m.Up) == "" || strings.TrimSpace(m.Down) == "" {
			return nil, fmt.Errorf("pgdb: migration %04d_%s needs both an up and a down script", m.Version, m.Name)
		}
	}
	return out, nil
}

// Version returns the schema version the database is at (0: none).
func (db *DB) Version(ctx context.Context) (int, error) {
	var v int
	err := db.Pool.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM lodge_schema_migrations`).Scan(&v)
	if err != nil {
		var pe interface{ SQLState() string }
		if errors.As(err, &pe) && pe.SQLState() == "42P01" { // undefined_table
			return 0, nil
		}
		return 0, err
	}
	return v, nil
}

// Migrate takes the schema to version target (-1: the newest this binary
// knows) and returns the version it is at. It holds MigrationLock on one
// connection throughout, so concurrent calls on any number of nodes apply
// each step once.
func (db *DB) Migrate(ctx context.Context, target int) (int, error) {
	ms, err := Migrations()
	if err != nil {
		return 0, err
	}
	return db.migrate(ctx, ms, target)
}

func (db *DB) migrate(ctx context.Context, ms []Migration, target int) (int, error) {
	newest := 0
	if len(ms) > 0 {
		newest = ms[len(ms)-1].Version
	}
	if target < 0 {
		target = newest
	}
	if target > newest {
		return 0, fmt.Errorf("pgdb: no migration %d: the newest this binary knows is %d", target, newest)
	}
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		return 0, fmt.Errorf("pgdb: migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, MigrationLock); err != nil {
		return 0, fmt.Errorf("pgdb: migrate: lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, MigrationLock)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS lodge_schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return 0, fmt.Errorf("pgdb: migrate: %w", err)
	}
	var at int
	if err := conn.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM lodge_schema_migrations`).Scan(&at); err != nil {
		return 0, fmt.Errorf("pgdb: migrate: %w", err)
	}
	if at > newest {
		return at, fmt.Errorf("pgdb: the database is at schema version %d, newer than this binary's %d: upgrade lodge", at, newest)
	}
	step := func(m Migration, script, record string) error {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, script); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, record, m.Version, m.Name)
			return err
		})
		return err
	}
	for _, m := range ms {
		if m.Version <= at || m.Version > target {
			continue
		}
		if err := step(m, m.Up, `INSERT INTO lodge_schema_migrations (version, name) VALUES ($1, $2)`); err != nil {
			return at, fmt.Errorf("pgdb: migration %04d_%s up: %w", m.Version, m.Name, err)
		}
		at = m.Version
	}
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		if m.Version > at || m.Version <= target {
			continue
		}
		if err := step(m, m.Down, `DELETE FROM lodge_schema_migrations WHERE version = $1 AND name = $2`); err != nil {
			return at, fmt.Errorf("pgdb: migration %04d_%s down: %w", m.Version, m.Name, err)
		}
		at = 0
		if i > 0 {
			at = ms[i-1].Version
		}
	}
	return at, nil
}

// Node is a lodge node sharing the database, as its heartbeat last wrote.
type Node struct {
	Name      string
	Version   string
	StartedAt time.Time
	SeenAt    time.Time
}

// Heartbeat records node in lodge_nodes now and every interval (default
// 10 s) until ctx ends. Nothing depends on it for correctness: it tells
// operators (lodge db nodes) which nodes are running.
func (db *DB) Heartbeat(ctx context.Context, node, version string, every time.Duration) {
	if every <= 0 {
		every = 10 * time.Second
	}
	started := time.Now()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		wctx, cancel := context.WithTimeout(ctx, every)
		db.Pool.Exec(wctx, `INSERT INTO lodge_nodes (node, started_at, seen_at, version) VALUES ($1, $2, now(), $3)
			ON CONFLICT (node) DO UPDATE SET started_at = $2, seen_at = now(), version = $3`, node, started, version)
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Nodes lists the nodes whose heartbeat was seen, newest first.
func (db *DB) Nodes(ctx context.Context) ([]Node, error) {
	rows, err := db.Pool.Query(ctx, `SELECT node, version, started_at, seen_at FROM lodge_nodes ORDER BY seen_at DESC, node`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Node, error) {
		var n Node
		err := r.Scan(&n.Name, &n.Version, &n.StartedAt, &n.SeenAt)
		return n, err
	})
}
