package pgdb

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/internal/testpg"
)

// TestListen: notifications on the channel reach notify, in order; when
// the listening connection is cut (its backend terminated), Listen
// listens on a new one, runs ready again, and takes notifications again;
// it returns when its context ends.
func TestListen(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, Config{URL: testpg.NewDatabase(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var (
		readies atomic.Int32
		pid     atomic.Uint32
		mu      sync.Mutex
		got     []string
	)
	lctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		db.Listen(lctx, "lodge_test", "test", slog.New(slog.DiscardHandler), func(_ context.Context, conn *pgx.Conn) error {
			pid.Store(conn.PgConn().PID())
			readies.Add(1)
			return nil
		}, func(payload string) {
			mu.Lock()
			got = append(got, payload)
			mu.Unlock()
		})
	}()
	received := func(n int) func() bool {
		return func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == n }
	}
	notify := func(payload string) {
		t.Helper()
		if _, err := db.Pool.Exec(ctx, `SELECT pg_notify('lodge_test', $1)`, payload); err != nil {
			t.Fatal(err)
		}
	}
	testenv.WaitFor(t, func() bool { return readies.Load() == 1 }, func() string { return "the first LISTEN" })
	notify("a")
	notify("b")
	testenv.WaitFor(t, received(2), func() string { return "two notifications" })

	var cut bool
	if err := db.Pool.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, int32(pid.Load())).Scan(&cut); err != nil || !cut {
		t.Fatalf("terminating the listener: %v %v", cut, err)
	}
	testenv.WaitFor(t, func() bool { return readies.Load() == 2 }, func() string { return "a LISTEN on a new connection" })
	notify("c")
	testenv.WaitFor(t, received(3), func() string { return "the notification after the cut" })
	mu.Lock()
	if got[0] != "a" || got[1] != "b" || got[2] != "c" {
		t.Fatalf("payloads %q", got)
	}
	mu.Unlock()
	stop()
	<-done
}
