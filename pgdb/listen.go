package pgdb

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// Listen holds a connection of its own that LISTENs on channel, and makes
// another when it fails (after 50 ms, doubling to 5 s; logged as what's),
// until ctx ends. The connection is taken from the pool and never given
// back: one in LISTEN state must not serve other statements. After each
// LISTEN, ready runs on the connection (to catch up on what changed while
// nobody listened: notifications are not kept for a listener that was
// not there); then notify runs with the payload of each notification.
// Listen returns when ctx ends. Callers keep a poll of their own for the
// time no connection listens.
func (db *DB) Listen(ctx context.Context, channel, what string, log *slog.Logger, ready func(ctx context.Context, conn *pgx.Conn) error, notify func(payload string)) {
	wait := 50 * time.Millisecond
	for {
		listened, err := db.listenOnce(ctx, channel, ready, notify)
		if ctx.Err() != nil {
			return
		}
		if listened {
			wait = 50 * time.Millisecond
		}
		log.Warn(what+": not listening on "+channel+"; polling", "err", err, "retry_in", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// listenOnce LISTENs on a new connection, runs ready, then takes
// notifications until the connection fails. listened says whether LISTEN
// succeeded.
func (db *DB) listenOnce(ctx context.Context, channel string, ready func(context.Context, *pgx.Conn) error, notify func(string)) (listened bool, err error) {
	pc, err := db.Pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	conn := pc.Hijack()
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second) // a dead peer does not hold Close up
		conn.Close(cctx)
		cancel()
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return false, err
	}
	if err := ready(ctx, conn); err != nil {
		return true, err
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		notify(n.Payload)
	}
}
