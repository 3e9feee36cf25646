package upload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/internal/tests3"
	"github.com/lodge-mail/lodge/pgdb"
)

// backend is one implementation of the store under the store tests.
// place makes an empty store's place in the directory dir (the store's
// directory; a new database and a blob store) and returns the function
// that opens a node of it: on one node the same directory again (after
// the last was closed), with several another node sharing the database
// and the blob store.
type backend struct {
	name  string
	place func(t *testing.T, dir string) (node func(opt Options) *Store)
}

// backends is the table of implementations the store tests run over.
var backends = []backend{
	{name: "embedded", place: func(t *testing.T, dir string) func(Options) *Store {
		return func(opt Options) *Store { return openStore(t, dir, opt) }
	}},
	{name: "postgres", place: func(t *testing.T, dir string) func(Options) *Store {
		_, db, blobs := sharedPlace(t, dir)
		return func(opt Options) *Store { return openShared(t, db, blobs, opt) }
	}},
	{name: "postgres+s3", place: func(t *testing.T, dir string) func(Options) *Store {
		_, db, _ := sharedPlace(t, dir)
		blobs := s3Place(t, dir)
		return func(opt Options) *Store { return openShared(t, db, blobs, opt) }
	}},
}

// s3Place is a blob store in a new bucket of the test binary's
// S3-compatible server (tests3), its node cache in dir/s3cache. Bodies of
// more than 5 MiB are multipart uploads.
func s3Place(t testing.TB, dir string) blob.Store {
	t.Helper()
	srv := tests3.Shared(t)
	s, err := blob.NewS3(context.Background(), blob.S3Config{
		Bucket: tests3.NewBucket(t), Endpoint: srv.Endpoint(),
		AccessKey: srv.AccessKey(), SecretKey: srv.SecretKey(),
		CacheDir: filepath.Join(dir, "s3cache"), PartSize: 5 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// forBackends runs test once per backend, as subtests.
func forBackends(t *testing.T, test func(t *testing.T, b backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { test(t, b) })
	}
}

// open is a new store of the backend with opt.
func (b backend) open(t *testing.T, opt Options) *Store { return b.place(t, t.TempDir())(opt) }

// sharedPlace is a new database (testpg: its URL, and a connection pool
// closed when the test ends) and a blob store on the local disk in
// dir/blobstore.
func sharedPlace(t testing.TB, dir string) (string, *pgdb.DB, blob.Store) {
	t.Helper()
	url := testpg.NewDatabase(t)
	db, err := pgdb.Open(context.Background(), pgdb.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	blobs, err := blob.NewLocal(filepath.Join(dir, "blobstore"))
	if err != nil {
		t.Fatal(err)
	}
	return url, db, blobs
}

func openShared(t testing.TB, db *pgdb.DB, blobs blob.Store, opt Options) *Store {
	t.Helper()
	s, err := OpenShared(db, blobs, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeStore(s) })
	return s
}

// blobs lists the names of a session's blobs: the entries of its blob
// directory, or its objects in a shared store's blob store.
func blobs(t *testing.T, s *Store, epid string) []string {
	t.Helper()
	s.settle() // the deletions of replaced blobs an upload left running
	var out []string
	if s.pg != nil {
		prefix := "blobs/" + epid + "/"
		err := s.blobs.List(context.Background(), prefix, func(i blob.Info) error {
			out = append(out, strings.TrimPrefix(i.Key, prefix))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	ents, err := os.ReadDir(filepath.Join(s.dir, "blobs", epid))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// blobsGone reports whether a session's blobs were removed whole: its
// directory (and for a shared store every object under its prefix).
func blobsGone(t *testing.T, s *Store, epid string) bool {
	t.Helper()
	if s.pg != nil {
		if len(blobs(t, s, epid)) > 0 {
			return false
		}
		if l, ok := s.blobs.(interface{ Root() string }); ok {
			_, err := os.Stat(filepath.Join(l.Root(), "blobs", epid))
			return os.IsNotExist(err)
		}
		return true
	}
	_, err := os.Stat(filepath.Join(s.dir, "blobs", epid))
	return os.IsNotExist(err)
}

// readBlob reads a file's bytes through the store.
func readBlob(t *testing.T, s *Store, epid string, f File) ([]byte, error) {
	t.Helper()
	return s.readFile(context.Background(), epid, f)
}

// blobExists reports whether a file's blob is there.
func blobExists(t *testing.T, s *Store, epid string, f File) bool {
	t.Helper()
	for _, b := range blobs(t, s, epid) {
		if b == f.Blob {
			return true
		}
	}
	return false
}

// lifeIndex lists, sorted, the sessions the janitor and start-up find in
// one of the lifecycle indexes: open (open sessions), kept (ended
// mailings whose documents are stored) or purge (closings whose blobs
// are being removed). A shared store's are the predicates of its partial
// indexes.
func lifeIndex(t *testing.T, s *Store, which string) []string {
	t.Helper()
	var out []string
	var err error
	if s.pg != nil {
		where := map[string]string{
			"open":  `state = 'open'`,
			"kept":  `state = 'ended' AND purged IS NULL`,
			"purge": `sweep`,
		}[which]
		out, err = s.pgEPIDs(`SELECT epid FROM upload_sessions WHERE ` + where)
	} else {
		pfx := map[string]string{"open": openPrefix, "kept": keptPrefix, "purge": purgePrefix}[which]
		out, err = s.epids(pfx, prefixEnd(pfx))
	}
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil
	}
	return out
}
