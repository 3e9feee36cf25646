package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lodge-mail/lodge/pgdb"
)

// PostgresConfig tunes OpenPostgres. The zero value of each field means
// the default given.
type PostgresConfig struct {
	// Poll is how often each node reads the generation counter in case
	// it missed a notification (its listening connection down or cut
	// off); default 1 second. It bounds how long another node's change
	// can go unnoticed while the listener is down.
	Poll time.Duration
	// Timeout bounds each database operation of the store; default 10
	// seconds.
	Timeout time.Duration
	// Log takes the listener's warnings (connection lost, reconnected);
	// default slog.Default().
	Log *slog.Logger

	// for tests
	params   argonParams // default defaultParams
	noListen bool        // the poll alone carries other nodes' changes
}

// notifyChannel is the channel every write's new generation is sent on.
const notifyChannel = "lodge_auth"

// OpenPostgres opens the store kept in the shared PostgreSQL database db
// (its tables made by pgdb's migration 0100_auth; see the package
// documentation): any number of nodes open it at once and see the same
// accounts, users, keys and Digest nonce key. The first to open it makes
// the nonce key. Close stops listening for other nodes' changes; db stays
// open (its owner closes it).
func OpenPostgres(ctx context.Context, db *pgdb.DB, cfg PostgresConfig) (*Store, error) {
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.params == (argonParams{}) {
		cfg.params = defaultParams
	}
	// PostgreSQL keeps microseconds: a time read back must equal the one
	// the method returned.
	now := func() time.Time { return time.Now().Truncate(time.Microsecond) }
	key := make([]byte, nonceKeyLen)
	rand.Read(key)
	if _, err := db.Pool.Exec(ctx, `INSERT INTO auth_meta (format, realm, nonce_key, created) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO NOTHING`, FormatVersion, DefaultRealm, key, now()); err != nil {
		return nil, fmt.Errorf("auth store on PostgreSQL: %w", err)
	}
	var format int
	var realm string
	if err := db.Pool.QueryRow(ctx, `SELECT format, realm, nonce_key FROM auth_meta`).Scan(&format, &realm, &key); err != nil {
		return nil, fmt.Errorf("auth store on PostgreSQL: %w", err)
	}
	if format != FormatVersion {
		return nil, fmt.Errorf("auth store on PostgreSQL has format %d; this lodge reads format %d", format, FormatVersion)
	}
	p := &pgStorage{db: db, cfg: cfg}
	if err := db.Pool.QueryRow(ctx, `SELECT gen FROM auth_generation`).Scan(&p.seen); err != nil {
		return nil, fmt.Errorf("auth store on PostgreSQL: %w", err)
	}
	s := newStore(p, realm, key, cfg.params, now)
	p.changed = s.changed
	var bg context.Context
	bg, p.stop = context.WithCancel(context.Background())
	if !cfg.noListen {
		p.wg.Add(1)
		go p.listen(bg)
	}
	p.wg.Add(1)
	go p.poll(bg)
	return s, nil
}

// pgStorage keeps the records in PostgreSQL. Every write is one
// transaction that also raises auth_generation and notifies its new value
// on notifyChannel; each node listens, and polls the counter, and calls
// changed when it moves, so that what the node remembers (the read
// cache, the connections' verified headers) is dropped.
type pgStorage struct {
	db      *pgdb.DB
	cfg     PostgresConfig
	changed func()

	mu   sync.Mutex
	seen int64 // the highest generation this node has acted on

	stop context.CancelFunc
	wg   sync.WaitGroup

	// for tests: the listening connection's backend and how many times
	// LISTEN succeeded
	listenPID atomic.Uint32
	listens   atomic.Int64
}

func (p *pgStorage) close() error {
	p.stop()
	p.wg.Wait()
	return nil
}

// observe records that the counter reads gen, and calls changed if that
// is news: the write that made it was another's, or this node's own not
// yet accounted for. notify false: the caller (a write of this node)
// calls changed itself.
func (p *pgStorage) observe(gen int64, notify bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if gen > p.seen {
		p.seen = gen
		if notify {
			p.changed()
		}
	}
}

// listen takes the other nodes' changes by notification (pgdb.Listen),
// until ctx ends. Each time it listens anew it first reads the counter:
// changes made while nobody listened.
func (p *pgStorage) listen(ctx context.Context) {
	defer p.wg.Done()
	p.db.Listen(ctx, notifyChannel, "auth", p.cfg.Log, func(ctx context.Context, conn *pgx.Conn) error {
		var gen int64
		if err := conn.QueryRow(ctx, `SELECT gen FROM auth_generation`).Scan(&gen); err != nil {
			return err
		}
		p.observe(gen, true)
		p.listenPID.Store(conn.PgConn().PID())
		p.listens.Add(1)
		return nil
	}, func(payload string) {
		if gen, err := strconv.ParseInt(payload, 10, 64); err == nil {
			p.observe(gen, true)
		}
	})
}

// poll reads the counter every cfg.Poll until ctx ends.
func (p *pgStorage) poll(ctx context.Context) {
	defer p.wg.Done()
	t := time.NewTicker(p.cfg.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		qctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
		var gen int64
		err := p.db.Pool.QueryRow(qctx, `SELECT gen FROM auth_generation`).Scan(&gen)
		cancel()
		if err == nil {
			p.observe(gen, true)
		}
	}
}

func (p *pgStorage) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), p.cfg.Timeout)
}

// write runs fn in a transaction that also raises the generation and
// notifies it.
func (p *pgStorage) write(fn func(ctx context.Context, tx pgx.Tx) error) error {
	ctx, cancel := p.ctx()
	defer cancel()
	var gen int64
	err := p.db.Tx(ctx, pgx.ReadCommitted, func(tx pgx.Tx) error {
		if err := fn(ctx, tx); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `WITH g AS (UPDATE auth_generation SET gen = gen + 1 RETURNING gen)
			SELECT gen, pg_notify('`+notifyChannel+`', gen::text) FROM g`).Scan(&gen, nil)
	})
	if err != nil {
		return dbError(err)
	}
	p.observe(gen, false)
	return nil
}

// dbError wraps an error of the database, leaving the store's own as
// they are.
func dbError(err error) error {
	for _, e := range []error{ErrExists, ErrNotFound, ErrInvalidInput, errKeyIDTaken} {
		if errors.Is(err, e) {
			return err
		}
	}
	return fmt.Errorf("auth store on PostgreSQL: %w", err)
}

func isForeignKeyViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23503"
}

// queryOne runs a query of at most one row.
func queryOne[T any](p *pgStorage, scan func(pgx.Row) (T, error), sql string, args ...any) (T, bool, error) {
	ctx, cancel := p.ctx()
	defer cancel()
	v, err := scan(p.db.Pool.QueryRow(ctx, sql, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return v, false, nil
	}
	if err != nil {
		return v, false, dbError(err)
	}
	return v, true, nil
}

// queryAll runs a query and scans every row.
func queryAll[T any](p *pgStorage, scan func(pgx.Row) (T, error), sql string, args ...any) ([]T, error) {
	ctx, cancel := p.ctx()
	defer cancel()
	rows, err := p.db.Pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, dbError(err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, dbError(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, dbError(err)
	}
	return out, nil
}

// ---- accounts

const accountColumns = `code, name, disabled, created`

func scanAccount(r pgx.Row) (Account, error) {
	var a Account
	err := r.Scan(&a.Code, &a.Name, &a.Disabled, &a.Created)
	a.Created = a.Created.UTC()
	return a, err
}

func (p *pgStorage) account(code string) (Account, bool, error) {
	return queryOne(p, scanAccount, `SELECT `+accountColumns+` FROM auth_accounts WHERE code = $1`, code)
}

func (p *pgStorage) accounts() ([]Account, error) {
	return queryAll(p, scanAccount, `SELECT `+accountColumns+` FROM auth_accounts ORDER BY code COLLATE "C"`)
}

func (p *pgStorage) addAccount(a Account) error {
	return p.write(func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO auth_accounts (`+accountColumns+`) VALUES ($1, $2, $3, $4)
			ON CONFLICT (code) DO NOTHING`, a.Code, a.Name, a.Disabled, a.Created)
		if err == nil && tag.RowsAffected() == 0 {
			err = fmt.Errorf("account %s: %w", a.Code, ErrExists)
		}
		return err
	})
}

func (p *pgStorage) setAccountDisabled(code string, disabled bool) error {
	return p.write(func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE auth_accounts SET disabled = $2 WHERE code = $1`, code, disabled)
		if err == nil && tag.RowsAffected() == 0 {
			err = fmt.Errorf("account %s: %w", code, ErrNotFound)
		}
		return err
	})
}

// ---- users

const userColumns = `name, account, disabled, role, created, password_set, gen, hash, realm, ha1_md5, ha1_sha256`

func scanUser(r pgx.Row) (userRecord, error) {
	var u userRecord
	var gen int64
	err := r.Scan(&u.Name, &u.Account, &u.Disabled, &u.Role, &u.Created, &u.PasswordSet, &gen, &u.Hash, &u.Realm, &u.HA1MD5, &u.HA1SHA256)
	u.Gen = uint64(gen)
	u.Created, u.PasswordSet = u.Created.UTC(), u.PasswordSet.UTC()
	if u.Role == RoleCustomer {
		u.Role = "" // as the pebble record has it: see User.Role
	}
	return u, err
}

// userArgs are a record's values in userColumns order.
func userArgs(u userRecord) []any {
	return []any{u.Name, u.Account, u.Disabled, u.withRole().Role, u.Created, u.PasswordSet, int64(u.Gen), u.Hash, u.Realm, u.HA1MD5, u.HA1SHA256}
}

func (p *pgStorage) user(name string) (userRecord, bool, error) {
	return queryOne(p, scanUser, `SELECT `+userColumns+` FROM auth_users WHERE name = $1`, name)
}

func (p *pgStorage) users(account string) ([]userRecord, error) {
	return queryAll(p, scanUser, `SELECT `+userColumns+` FROM auth_users WHERE $1 = '' OR account = $1 ORDER BY name COLLATE "C"`, account)
}

func (p *pgStorage) addUser(rec userRecord) error {
	return p.write(func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO auth_users (`+userColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (name) DO NOTHING`, userArgs(rec)...)
		switch {
		case isForeignKeyViolation(err):
			return fmt.Errorf("account %s: %w", rec.Account, ErrNotFound)
		case err == nil && tag.RowsAffected() == 0:
			return fmt.Errorf("user %s: %w", rec.Name, ErrExists)
		}
		return err
	})
}

func (p *pgStorage) updateUser(name string, fn func(*userRecord)) error {
	return p.write(func(ctx context.Context, tx pgx.Tx) error {
		rec, err := scanUser(tx.QueryRow(ctx, `SELECT `+userColumns+` FROM auth_users WHERE name = $1 FOR UPDATE`, name))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("user %s: %w", name, ErrNotFound)
		}
		if err != nil {
			return err
		}
		fn(&rec)
		rec.Gen++
		_, err = tx.Exec(ctx, `UPDATE auth_users SET (`+userColumns+`) = ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			WHERE name = $1`, userArgs(rec)...)
		return err
	})
}

// ---- keys

const keyColumns = `id, account, label, created, revoked, sha256`

func scanKey(r pgx.Row) (keyRecord, error) {
	var k keyRecord
	var revoked *time.Time
	err := r.Scan(&k.ID, &k.Account, &k.Label, &k.Created, &revoked, &k.SHA256)
	k.Created = k.Created.UTC()
	if revoked != nil {
		k.Revoked = revoked.UTC()
	}
	return k, err
}

func (p *pgStorage) key(id string) (keyRecord, bool, error) {
	return queryOne(p, scanKey, `SELECT `+keyColumns+` FROM auth_keys WHERE id = $1`, id)
}

func (p *pgStorage) keys(account string) ([]keyRecord, error) {
	return queryAll(p, scanKey, `SELECT `+keyColumns+` FROM auth_keys WHERE $1 = '' OR account = $1`, account)
}

func (p *pgStorage) addKey(rec keyRecord) error {
	return p.write(func(ctx context.Context, tx pgx.Tx) error {
		var revoked *time.Time
		if rec.IsRevoked() {
			revoked = &rec.Revoked
		}
		tag, err := tx.Exec(ctx, `INSERT INTO auth_keys (`+keyColumns+`) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (id) DO NOTHING`, rec.ID, rec.Account, rec.Label, rec.Created, revoked, rec.SHA256)
		switch {
		case isForeignKeyViolation(err):
			return fmt.Errorf("account %s: %w", rec.Account, ErrNotFound)
		case err == nil && tag.RowsAffected() == 0:
			return errKeyIDTaken
		}
		return err
	})
}

func (p *pgStorage) revokeKey(id string, at time.Time) error {
	return p.write(func(ctx context.Context, tx pgx.Tx) error {
		var found bool
		err := tx.QueryRow(ctx, `WITH r AS (UPDATE auth_keys SET revoked = COALESCE(revoked, $2) WHERE id = $1 RETURNING 1)
			SELECT EXISTS (SELECT 1 FROM r)`, id, at).Scan(&found)
		if err == nil && !found {
			err = fmt.Errorf("key %s: %w", id, ErrNotFound)
		}
		return err
	})
}
