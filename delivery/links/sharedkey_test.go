package links

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/datafiles"
	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/pgdb"
)

func TestMain(m *testing.M) { testpg.Main(m) }

// keyBackend is where the links key is kept: node returns a node's
// LoadOrCreate (another node, over the same storage, each call); corrupt
// stores a key of n bytes there.
type keyBackend struct {
	name string
	new  func(t *testing.T) (node func() func() ([]byte, error), corrupt func(n int))
}

var keyBackends = []keyBackend{
	{"file", func(t *testing.T) (func() func() ([]byte, error), func(int)) {
		path := filepath.Join(t.TempDir(), "links.key")
		return func() func() ([]byte, error) {
				return func() ([]byte, error) { return LoadOrCreateKey(path) }
			}, func(n int) {
				os.Remove(path)
				os.WriteFile(path, bytes.Repeat([]byte{7}, n), 0o600)
			}
	}},
	{"shared", func(t *testing.T) (func() func() ([]byte, error), func(int)) {
		url := testpg.NewDatabase(t)
		files := func() datafiles.Files {
			db, err := pgdb.Open(context.Background(), pgdb.Config{URL: url})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(db.Close)
			f, err := datafiles.NewPostgres(db, datafiles.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		return func() func() ([]byte, error) {
				f := files()
				return func() ([]byte, error) { return LoadOrCreateSharedKey(f) }
			}, func(n int) {
				if err := files().Write(SharedKeyName, bytes.Repeat([]byte{7}, n), 0o600); err != nil {
					t.Fatal(err)
				}
			}
	}},
}

// TestKeyNodes: nodes starting at once make one key between them; a link
// signed by one verifies on every other; a stored key of another size is
// refused.
func TestKeyNodes(t *testing.T) {
	for _, b := range keyBackends {
		t.Run(b.name, func(t *testing.T) {
			node, corrupt := b.new(t)
			nodes := make([]func() ([]byte, error), 4)
			for i := range nodes {
				nodes[i] = node()
			}
			keys := make([][]byte, 8)
			var wg sync.WaitGroup
			for i := range keys {
				wg.Add(1)
				go func() {
					defer wg.Done()
					k, err := nodes[i%len(nodes)]()
					if err != nil {
						t.Error(err)
					}
					keys[i] = k
				}()
			}
			wg.Wait()
			for _, k := range keys {
				if len(k) != KeySize || !bytes.Equal(k, keys[0]) {
					t.Fatalf("keys differ: %x", keys)
				}
			}
			now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
			tok := Sign(keys[0], "EPID0001", 3, KindDoc, now.Add(time.Hour))
			later, err := nodes[3]()
			if err != nil {
				t.Fatal(err)
			}
			if epid, idx, kind, err := Verify(later, tok, now); err != nil || epid != "EPID0001" || idx != 3 || kind != KindDoc {
				t.Fatalf("a link of node 0 on node 3: %s %d %s %v", epid, idx, kind, err)
			}
			for _, n := range []int{0, 5, KeySize + 1} {
				corrupt(n)
				if _, err := node()(); err == nil || !strings.Contains(err.Error(), "want 32") {
					t.Fatalf("a key of %d bytes: %v", n, err)
				}
			}
		})
	}
}
