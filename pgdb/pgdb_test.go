package pgdb

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/internal/testpg"
)

func TestMain(m *testing.M) { testpg.Main(m) }

func TestParseMigrationsHostile(t *testing.T) {
	f := func(files map[string]string, wantErr string) {
		t.Helper()
		fsys := fstest.MapFS{}
		for name, body := range files {
			fsys["m/"+name] = &fstest.MapFile{Data: []byte(body)}
		}
		_, err := parseMigrations(fsys, "m")
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("%v: got %v, want an error with %q", files, err, wantErr)
		}
	}
	f(map[string]string{"0001_a.up.sql": "x"}, "needs both")
	f(map[string]string{"0001_a.down.sql": "x"}, "needs both")
	f(map[string]string{"0001_a.up.sql": "x", "0001_b.down.sql": "y"}, "two names")
	f(map[string]string{"1_a.up.sql": "x", "1_a.down.sql": "y"}, "not NNNN_name")
	f(map[string]string{"0000_a.up.sql": "x", "0000_a.down.sql": "y"}, "not NNNN_name")
	f(map[string]string{"0001_a.sql": "x"}, "not NNNN_name")
	f(map[string]string{"0001.up.sql": "x", "0001.down.sql": "y"}, "not NNNN_name")
	f(map[string]string{"abcd_a.up.sql": "x", "abcd_a.down.sql": "y"}, "not NNNN_name")
	f(map[string]string{"0001_a.up.sql": " \n", "0001_a.down.sql": "y"}, "needs both")
}

func TestMigrationsOfThisBinary(t *testing.T) {
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations")
	}
	for i := 1; i < len(ms); i++ {
		if ms[i].Version <= ms[i-1].Version {
			t.Fatalf("versions out of order: %d after %d", ms[i].Version, ms[i-1].Version)
		}
	}
}

// Many nodes opening one new database together apply each migration
// once, and all of them end at the newest version.
func TestOpenConcurrentlyMigratesOnce(t *testing.T) {
	url := testpg.NewDatabase(t)
	ctx := context.Background()
	const nodes = 6
	var wg sync.WaitGroup
	errs := make([]error, nodes)
	dbs := make([]*DB, nodes)
	for i := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dbs[i], errs[i] = Open(ctx, Config{URL: url})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		defer dbs[i].Close()
	}
	ms, _ := Migrations()
	var rows, newest int
	if err := dbs[0].Pool.QueryRow(ctx, `SELECT count(*), max(version) FROM lodge_schema_migrations`).Scan(&rows, &newest); err != nil {
		t.Fatal(err)
	}
	if rows != len(ms) || newest != ms[len(ms)-1].Version {
		t.Fatalf("%d rows up to %d, want %d up to %d", rows, newest, len(ms), ms[len(ms)-1].Version)
	}
}

// Every migration goes down and up again cleanly: down to nothing leaves
// no table but the record of migrations, and up again gives the same
// schema.
func TestMigrationsReverse(t *testing.T) {
	url := testpg.NewDatabase(t)
	ctx := context.Background()
	db, err := Open(ctx, Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	schema := func() string {
		rows, err := db.Pool.Query(ctx, `SELECT table_name || '.' || column_name || ':' || data_type
			FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'lodge_schema_migrations'
			ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for rows.Next() {
			var s string
			rows.Scan(&s)
			out = append(out, s)
		}
		if rows.Err() != nil {
			t.Fatal(rows.Err())
		}
		return strings.Join(out, "\n")
	}
	full := schema()
	if full == "" {
		t.Fatal("no tables after the migrations")
	}
	ms, _ := Migrations()
	// step down one at a time, then all the way up
	for i := len(ms) - 1; i >= 0; i-- {
		target := 0
		if i > 0 {
			target = ms[i-1].Version
		}
		at, err := db.Migrate(ctx, target)
		if err != nil || at != target {
			t.Fatalf("down to %d: at %d, %v", target, at, err)
		}
	}
	if s := schema(); s != "" {
		t.Fatalf("tables left after migrating down to 0:\n%s", s)
	}
	if v, err := db.Version(ctx); err != nil || v != 0 {
		t.Fatalf("version %d, %v", v, err)
	}
	if at, err := db.Migrate(ctx, -1); err != nil || at != ms[len(ms)-1].Version {
		t.Fatalf("up: at %d, %v", at, err)
	}
	if s := schema(); s != full {
		t.Fatalf("schema after down and up differs:\n%s\nwant\n%s", s, full)
	}
	if _, err := db.Migrate(ctx, ms[len(ms)-1].Version+1); err == nil {
		t.Fatal("a migration this binary does not know was accepted")
	}
}

// A database migrated by a newer binary is refused, not written.
func TestNewerDatabaseRefused(t *testing.T) {
	url := testpg.NewDatabase(t)
	ctx := context.Background()
	db, err := Open(ctx, Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO lodge_schema_migrations (version, name) VALUES (9999, 'future')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(ctx, Config{URL: url}); err == nil || !strings.Contains(err.Error(), "newer than this binary") {
		t.Fatalf("got %v", err)
	}
}

func TestRoundTripsCounted(t *testing.T) {
	url := testpg.NewDatabase(t)
	ctx := context.Background()
	db, err := Open(ctx, Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before := db.RoundTrips()
	var one int
	if err := db.Pool.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil {
		t.Fatal(err)
	}
	if got := db.RoundTrips() - before; got != 1 {
		t.Fatalf("one statement counted %d", got)
	}
}

func TestBadURL(t *testing.T) {
	f := func(url, want string) {
		t.Helper()
		_, err := Open(context.Background(), Config{URL: url})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%q: got %v, want %q", url, err, want)
		}
	}
	f("", "no database URL")
	f("postgres://%zz", "database URL")
	f("host=/nonexistent-lodge-socket-dir port=5432 user=x dbname=y connect_timeout=2", "connect")
}

func TestHeartbeat(t *testing.T) {
	url := testpg.NewDatabase(t)
	ctx := context.Background()
	db, err := Open(ctx, Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { db.Heartbeat(hctx, "node-a", "v1", time.Hour); close(done) }()
	testenv.WaitFor(t, func() bool {
		ns, err := db.Nodes(ctx)
		return err == nil && len(ns) == 1 && ns[0].Name == "node-a" && ns[0].Version == "v1"
	}, func() string { return "node-a's heartbeat" })
	stop()
	<-done
}
