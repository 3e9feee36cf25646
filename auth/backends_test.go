package auth

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/pgdb"
)

func TestMain(m *testing.M) { testpg.Main(m) }

// kind is one storage of a Store; the tests of what a Store does run over
// each (eachKind).
type kind struct {
	name string
	// place makes a place for a new, empty store: a directory, or a
	// database's URL.
	place func(t testing.TB) string
	// open opens the store at place. Opened again after Close it is the
	// same store after a restart; on PostgreSQL, opened twice at once it
	// is a second node.
	open func(t testing.TB, place string) (*Store, error)
}

var pebbleKind = kind{
	name:  "pebble",
	place: func(t testing.TB) string { return filepath.Join(t.TempDir(), "data", "auth") },
	open:  func(_ testing.TB, dir string) (*Store, error) { return openStore(dir, testParams) },
}

var postgresKind = kind{
	name:  "postgres",
	place: func(t testing.TB) string { return testpg.NewDatabase(t) },
	open: func(t testing.TB, url string) (*Store, error) {
		s, _, err := openPostgresTest(t, url, PostgresConfig{})
		return s, err
	},
}

var kinds = []kind{pebbleKind, postgresKind}

// openPostgresTest opens a store on the database at url with a pool of
// its own (a node's), both closed when the test ends.
func openPostgresTest(t testing.TB, url string, cfg PostgresConfig) (*Store, *pgdb.DB, error) {
	t.Helper()
	db, err := pgdb.Open(context.Background(), pgdb.Config{URL: url})
	if err != nil {
		return nil, nil, err
	}
	cfg.params = testParams
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	s, err := OpenPostgres(context.Background(), db, cfg)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	t.Cleanup(func() { s.Close(); db.Close() })
	return s, db, nil
}

// eachKind runs fn as a subtest per kind of storage.
func eachKind(t *testing.T, fn func(t *testing.T, k kind)) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) { fn(t, k) })
	}
}

// openTest opens the store at place ("": a new one), closed when the
// test ends.
func (k kind) openTest(t testing.TB, place string) *Store {
	t.Helper()
	if place == "" {
		place = k.place(t)
	}
	s, err := k.open(t, place)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// pebbleDB is the database under a store of pebbleKind, for the tests
// that write records as an older lodge did.
func pebbleDB(s *Store) *pebble.DB { return s.st.(*pebbleStorage).db }
