package portal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lodge-mail/lodge/pgdb"
)

// DefaultSessionTouch is how long a shared session's last use may go
// unrecorded (NewPostgresSessions).
const DefaultSessionTouch = time.Minute

// pgSessionTimeout bounds each statement of the shared session store.
const pgSessionTimeout = 10 * time.Second

// NewPostgresSessions returns the sessions of every node on db (table
// portal_sessions, made by pgdb's migration 0110_portal_sessions), for
// Config.Sessions. A page costs one read; a session's last use is written
// at most once per touchEvery (0: DefaultSessionTouch), so a session can
// end up to touchEvery before Config.IdleTimeout has passed since its
// true last use, never after. MaxSessions is kept by each node's sweep
// (once a minute): between sweeps the table can hold the sessions made
// since the last. Expiry is judged by the clock of the node serving the
// request: keep the nodes' clocks in step.
func NewPostgresSessions(db *pgdb.DB, touchEvery time.Duration) SessionStore {
	if touchEvery <= 0 {
		touchEvery = DefaultSessionTouch
	}
	return &pgSessions{db: db, every: touchEvery}
}

type pgSessions struct {
	db    *pgdb.DB
	every time.Duration
}

func (p *pgSessions) touchEvery() time.Duration { return p.every }

func (p *pgSessions) exec(sql string, args ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), pgSessionTimeout)
	defer cancel()
	_, err := p.db.Pool.Exec(ctx, sql, args...)
	return wrapPG(err)
}

func wrapPG(err error) error {
	if err != nil {
		return fmt.Errorf("sessions on PostgreSQL: %w", err)
	}
	return nil
}

func (p *pgSessions) get(k sessionKey) (session, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgSessionTimeout)
	defer cancel()
	var se session
	err := p.db.Pool.QueryRow(ctx, `SELECT account, user_name, operator, csrf, created, last_used, flash
		FROM portal_sessions WHERE key = $1`, k[:]).Scan(&se.Account, &se.User, &se.Operator, &se.CSRF, &se.created, &se.seen, &se.flash)
	if errors.Is(err, pgx.ErrNoRows) {
		return session{}, false, nil
	}
	if err != nil {
		return session{}, false, wrapPG(err)
	}
	return se, true, nil
}

func (p *pgSessions) create(k sessionKey, se session, _ sessionLimits, _ time.Time) error {
	return p.exec(`INSERT INTO portal_sessions (key, account, user_name, operator, csrf, created, last_used, flash)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, k[:], se.Account, se.User, se.Operator, se.CSRF, se.created, se.seen, se.flash)
}

func (p *pgSessions) touch(k sessionKey, at time.Time) error {
	return p.exec(`UPDATE portal_sessions SET last_used = $2 WHERE key = $1 AND last_used < $2`, k[:], at)
}

func (p *pgSessions) setFlash(k sessionKey, msg string) error {
	return p.exec(`UPDATE portal_sessions SET flash = $2 WHERE key = $1`, k[:], msg)
}

func (p *pgSessions) takeFlash(k sessionKey) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgSessionTimeout)
	defer cancel()
	var f string
	// the row locked while read, so that two requests do not both take it
	err := p.db.Pool.QueryRow(ctx, `UPDATE portal_sessions s SET flash = ''
		FROM (SELECT key, flash FROM portal_sessions WHERE key = $1 AND flash <> '' FOR UPDATE) old
		WHERE s.key = old.key RETURNING old.flash`, k[:]).Scan(&f)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return f, wrapPG(err)
}

func (p *pgSessions) end(k sessionKey) error {
	return p.exec(`DELETE FROM portal_sessions WHERE key = $1`, k[:])
}

func (p *pgSessions) sweep(l sessionLimits, now time.Time) error {
	if err := p.exec(`DELETE FROM portal_sessions WHERE last_used < $1 OR created < $2`, now.Add(-l.idle), now.Add(-l.maxAge)); err != nil {
		return err
	}
	// still more than max: the ones idle longest go
	return p.exec(`DELETE FROM portal_sessions WHERE key IN
		(SELECT key FROM portal_sessions ORDER BY last_used DESC, key OFFSET $1)`, l.max)
}

func (p *pgSessions) count() (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgSessionTimeout)
	defer cancel()
	var n int
	err := p.db.Pool.QueryRow(ctx, `SELECT count(*) FROM portal_sessions`).Scan(&n)
	return n, wrapPG(err)
}
