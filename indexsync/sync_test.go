package indexsync

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/index"
	"github.com/lodge-mail/lodge/internal/tests3"
	"github.com/lodge-mail/lodge/progress"
)

var quietLog = slog.New(slog.DiscardHandler)

// Reference data of three small indexes: each judges one more address
// matched than the one before.
var (
	locsA = []string{"Melbourne,VIC,3000"}
	locsB = []string{"Melbourne,VIC,3000", "Carlton,VIC,3053"}
	locsC = []string{"Melbourne,VIC,3000", "Carlton,VIC,3053", "Fitzroy,VIC,3065"}

	carlton = []string{"Jo", "1 Smith St", "Carlton VIC 3053"}
	fitzroy = []string{"Jo", "1 Smith St", "Fitzroy VIC 3065"}
)

// build imports an index of the given localities into dataDir, through
// the real import path, and returns its directory.
func build(t *testing.T, dataDir string, locs []string) string {
	t.Helper()
	csv := filepath.Join(t.TempDir(), "localities-au.csv")
	body := "locality,state,postcode,count,latitude,longitude\n"
	for _, l := range locs {
		body += l + ",100,-37.8,144.9\n"
	}
	if err := os.WriteFile(csv, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	src := index.Sources{Dir: filepath.Dir(csv), Files: map[string]string{index.SrcGNAFLocalities: csv}}
	res, err := index.Build(context.Background(), src, dataDir, index.BuildOptions{Log: quietLog, Progress: progress.Options{Out: io.Discard}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Dir
}

// node is one lodge serve: a data directory, its index and a Follower.
type node struct {
	t       *testing.T
	dataDir string
	f       *Follower
	set     *metrics.Set
	polls   chan error
}

func startNode(t *testing.T, store blob.Store, locs []string, cfg Config) *node {
	t.Helper()
	n := &node{t: t, dataDir: t.TempDir(), set: metrics.NewSet(), polls: make(chan error, 100)}
	build(t, n.dataDir, locs)
	ix, err := index.Open(n.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Metrics, cfg.Log = n.set, quietLog
	cfg.Polled = func(reloaded bool, err error) {
		if reloaded || err != nil {
			n.polls <- err
		}
	}
	if n.f, err = NewFollower(store, n.dataDir, ix, engine.Config{}, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.f.Close)
	return n
}

func (n *node) status(lines []string) engine.Status { return n.f.Engine().Check(lines, false).Status }

// metric returns a metric's value as /metrics shows it.
func (n *node) metric(name string) string {
	var b bytes.Buffer
	n.set.WritePrometheus(&b)
	for _, l := range strings.Split(b.String(), "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			return v
		}
	}
	return "(none)"
}

// indexDirs lists the data directory's index directories.
func (n *node) indexDirs() []string {
	ents, err := os.ReadDir(n.dataDir)
	if err != nil {
		n.t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "index-") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

func (n *node) current() string {
	s, err := index.CurrentStamp(n.dataDir)
	if err != nil {
		n.t.Fatal(err)
	}
	return s
}

// kinds are the stores the tests run over: each gives a place that
// several nodes share, and each node's store of it.
var kinds = []struct {
	name  string
	place func(t *testing.T) func(t *testing.T) blob.Store
}{
	{"local", func(t *testing.T) func(t *testing.T) blob.Store {
		root := t.TempDir()
		return func(t *testing.T) blob.Store {
			s, err := blob.NewLocal(root)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}},
	// a real versitygw, a bucket of the test's own; each node its own
	// client and cache
	{"s3", func(t *testing.T) func(t *testing.T) blob.Store {
		bucket := tests3.NewBucket(t)
		return func(t *testing.T) blob.Store {
			srv := tests3.Shared(t)
			s, err := blob.NewS3(context.Background(), blob.S3Config{Bucket: bucket, Endpoint: srv.Endpoint(),
				AccessKey: srv.AccessKey(), SecretKey: srv.SecretKey(), CacheDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}},
}

// eachStore runs test once over each kind of store, as a subtest.
func eachStore(t *testing.T, test func(t *testing.T, nodeStore func(t *testing.T) blob.Store)) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) { test(t, k.place(t)) })
	}
}

func TestMain(m *testing.M) { tests3.Main(m) }

func getObject(t *testing.T, store blob.Store, key string) []byte {
	t.Helper()
	rc, _, err := store.Open(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func putObject(t *testing.T, store blob.Store, key string, b []byte) {
	t.Helper()
	if _, err := store.Put(context.Background(), key, bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
}

func publish(t *testing.T, store blob.Store, dir string) Manifest {
	t.Helper()
	m, err := Publish(context.Background(), store, dir, PublishOptions{Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPublishFollow: node A imports and publishes; node B, following the
// same store from a data directory of its own, takes A's index into use
// without a restart, makes it its current index (a restart keeps it),
// and removes its old one once unused; a second publication is picked up
// by B's polling loop.
func TestPublishFollow(t *testing.T) { eachStore(t, testPublishFollow) }

func testPublishFollow(t *testing.T, nodeStore func(t *testing.T) blob.Store) {
	ctx := context.Background()
	store := nodeStore(t) // node A's
	b := startNode(t, nodeStore(t), locsA, Config{})
	if got := b.status(carlton); got != engine.StatusUnmatched {
		t.Fatalf("B before: %v", got)
	}
	oldB := b.current()
	if reloaded, err := b.f.Poll(ctx); reloaded || err != nil {
		t.Fatalf("poll with nothing published: %v %v", reloaded, err)
	}

	dataA := t.TempDir()
	m := publish(t, store, build(t, dataA, locsB))
	if m.Stamp <= oldB || m.Key != TarKey(m.Stamp) || m.Format != index.FormatVersion {
		t.Fatalf("manifest %+v (B's stamp %s)", m, oldB)
	}
	raw := getObject(t, store, ManifestKey)
	var onDisk Manifest
	if err := json.Unmarshal(raw, &onDisk); err != nil || onDisk != m {
		t.Fatalf("stored manifest %s, Publish said %+v (%v)", raw, m, err)
	}
	tarBytes := getObject(t, store, m.Key)
	if sum := sha1.Sum(tarBytes); hex.EncodeToString(sum[:]) != m.SHA1 || int64(len(tarBytes)) != m.Size {
		t.Fatalf("the stored tar (%d bytes) is not the manifest's %+v", len(tarBytes), m)
	}

	reloaded, err := b.f.Poll(ctx)
	if !reloaded || err != nil {
		t.Fatalf("B's poll after A published: %v %v", reloaded, err)
	}
	if got := b.status(carlton); got != engine.StatusMatched {
		t.Errorf("B after A published: %v, want A's matched", got)
	}
	if g := b.f.Engine().Generation(); g != 2 {
		t.Errorf("generation %d, want 2", g)
	}
	if b.current() != m.Stamp || b.f.Stamp() != m.Stamp {
		t.Errorf("B's current is %s and in use %s, want %s", b.current(), b.f.Stamp(), m.Stamp)
	}
	for name, want := range map[string]string{"lodge_index_generation": "2", "lodge_index_reloads_total": "1", "lodge_index_reload_errors_total": "0"} {
		if got := b.metric(name); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
	if reloaded, err := b.f.Poll(ctx); reloaded || err != nil {
		t.Errorf("poll of the same manifest again: %v %v", reloaded, err)
	}
	// a restart of B opens A's index
	ix, err := index.Open(b.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Stamp() != m.Stamp || ix.Meta.Counts.Localities != 2 {
		t.Errorf("B restarted on %s with %d localities", ix.Stamp(), ix.Meta.Counts.Localities)
	}
	ix.Close()

	// the polling loop picks up the next publication
	runCtx, cancel := context.WithCancel(ctx)
	ran := make(chan struct{})
	b.f.cfg.Interval = 10 * time.Millisecond
	for len(b.polls) > 0 { // what the polls above did
		<-b.polls
	}
	go func() { b.f.Run(runCtx); close(ran) }()
	m2 := publish(t, store, build(t, dataA, locsC))
	if err := <-b.polls; err != nil { // the first poll that did something
		t.Fatalf("B's loop: %v", err)
	}
	cancel()
	<-ran
	if got := b.status(fitzroy); got != engine.StatusMatched || b.f.Stamp() != m2.Stamp {
		t.Errorf("B after A's second publication: %v on %s, want matched on %s", got, b.f.Stamp(), m2.Stamp)
	}
	b.f.Close() // waits for the replaced indexes to be closed and removed
	if dirs := b.indexDirs(); len(dirs) != 1 || dirs[0] != "index-"+m2.Stamp {
		t.Errorf("B's index directories %v, want only index-%s", dirs, m2.Stamp)
	}

	// three publications: the store keeps the newest two tars
	m3 := publish(t, store, build(t, dataA, locsB))
	var keys []string
	store.List(ctx, "index/", func(i blob.Info) error { keys = append(keys, i.Key); return nil })
	if want := []string{m2.Key, m3.Key, ManifestKey}; fmt.Sprint(keys) != fmt.Sprint(want) {
		t.Errorf("store holds %v, want %v", keys, want)
	}
}

// TestFollowLocalImport: an import on the node itself (another process
// swapping current) is taken into use without downloading, with no store
// at all.
func TestFollowLocalImport(t *testing.T) {
	n := startNode(t, nil, locsA, Config{})
	build(t, n.dataDir, locsB)
	if reloaded, err := n.f.Poll(context.Background()); !reloaded || err != nil {
		t.Fatalf("poll after an import here: %v %v", reloaded, err)
	}
	if got := n.status(carlton); got != engine.StatusMatched {
		t.Errorf("after the import: %v", got)
	}
	if n.f.Stamp() != n.current() {
		t.Errorf("in use %s, current %s", n.f.Stamp(), n.current())
	}
}

// TestFollowOwnPublication: the node that imported and published takes
// its index from its own data directory, not the store; a local index
// that does not open is refused once, and its publication is not fetched
// in its place (Install would refuse the stamp already current).
func TestFollowOwnPublication(t *testing.T) {
	ctx := context.Background()
	store := kinds[0].place(t)(t)
	a := startNode(t, store, locsA, Config{})
	publish(t, store, build(t, a.dataDir, locsB))
	if reloaded, err := a.f.Poll(ctx); !reloaded || err != nil {
		t.Fatalf("poll after its own import: %v %v", reloaded, err)
	}
	if reloaded, err := a.f.Poll(ctx); reloaded || err != nil {
		t.Fatalf("poll again: %v %v", reloaded, err)
	}
	broken := build(t, a.dataDir, locsC)
	publish(t, store, broken)
	if err := os.RemoveAll(filepath.Join(broken, "pebble")); err != nil {
		t.Fatal(err)
	}
	if reloaded, err := a.f.Poll(ctx); reloaded || err == nil {
		t.Fatalf("poll with a current index that does not open: %v %v", reloaded, err)
	}
	if reloaded, err := a.f.Poll(ctx); reloaded || err != nil {
		t.Errorf("poll again: %v %v, want nothing done", reloaded, err)
	}
	if got := a.metric("lodge_index_reload_errors_total"); got != "1" {
		t.Errorf("errors counted %s, want 1", got)
	}
	if a.status(carlton) != engine.StatusMatched || a.status(fitzroy) != engine.StatusUnmatched {
		t.Errorf("not serving the index before the broken one")
	}
}

// TestPublishRules: an index already published is not sent again; an
// older one does not replace a newer manifest; a failed upload leaves the
// manifest as it was.
func TestPublishRules(t *testing.T) { eachStore(t, testPublishRules) }

func testPublishRules(t *testing.T, nodeStore func(t *testing.T) blob.Store) {
	ctx := context.Background()
	store := nodeStore(t)
	data := t.TempDir()
	older := build(t, data, locsA)
	olderCopy := t.TempDir() + "/" + filepath.Base(older)
	if err := os.CopyFS(olderCopy, os.DirFS(older)); err != nil { // Build removes it at the next import
		t.Fatal(err)
	}
	newer := build(t, data, locsB)
	m := publish(t, store, newer)
	again := publish(t, store, newer)
	if again != m {
		t.Errorf("publishing again gave %+v, want the same %+v", again, m)
	}
	if _, err := Publish(ctx, store, olderCopy, PublishOptions{Log: quietLog}); !errors.Is(err, ErrNewerPublished) {
		t.Errorf("publishing an older index over a newer: %v", err)
	}
	if _, err := Publish(ctx, store, data, PublishOptions{Log: quietLog}); err == nil {
		t.Error("published a directory that is not index-<stamp>")
	}

	// an upload that fails half way
	fs := &failingStore{Store: store, failKey: "index/", after: 4096}
	newest := build(t, data, locsC)
	if _, err := Publish(ctx, fs, newest, PublishOptions{Log: quietLog}); err == nil {
		t.Fatal("a failed upload published")
	}
	got, err := readManifest(ctx, store)
	if err != nil || got != m {
		t.Errorf("manifest after a failed upload: %+v %v, want %+v", got, err, m)
	}
}

// failingStore is the real store with Puts under failKey failing after
// some bytes (the connection lost half way).
type failingStore struct {
	blob.Store
	failKey string
	after   int64
}

func (s *failingStore) Put(ctx context.Context, key string, r io.Reader, size int64) (blob.Info, error) {
	if strings.HasPrefix(key, s.failKey) && key != ManifestKey {
		r = io.MultiReader(io.LimitReader(r, s.after), &failReader{})
	}
	return s.Store.Put(ctx, key, r, size)
}

type failReader struct{}

func (failReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

// TestFollowRefuses: a published index that is not what its manifest
// says, a manifest this lodge must not follow, or a tar that is not an
// index is refused: the old index keeps serving, current is unchanged,
// nothing is left behind, the error is counted once and the same
// manifest is not fetched again. A missing tar is retried.
func TestFollowRefuses(t *testing.T) {
	ctx := context.Background()
	f := func(name string, retried bool, tamper func(t *testing.T, store blob.Store, m Manifest)) {
		t.Run(name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, nodeStore func(t *testing.T) blob.Store) {
				store := nodeStore(t) // the publisher's
				b := startNode(t, nodeStore(t), locsA, Config{})
				before := b.current()
				m := publish(t, store, build(t, t.TempDir(), locsB))
				tamper(t, store, m)
				reloaded, err := b.f.Poll(ctx)
				if reloaded || err == nil {
					t.Fatalf("poll: reloaded %v, err %v; want refused", reloaded, err)
				}
				t.Logf("refused: %v", err)
				if got := b.status(carlton); got != engine.StatusUnmatched {
					t.Errorf("after the refusal B judges %v, want its old index's unmatched", got)
				}
				if g := b.f.Engine().Generation(); g != 1 || b.current() != before || b.f.Stamp() != before {
					t.Errorf("generation %d, current %s, in use %s; want 1 and %s", g, b.current(), b.f.Stamp(), before)
				}
				if dirs := b.indexDirs(); len(dirs) != 1 || dirs[0] != "index-"+before {
					t.Errorf("index directories %v, want only index-%s", dirs, before)
				}
				b.f.Poll(ctx)
				want := "1"
				if retried {
					want = "2"
				}
				if got := b.metric("lodge_index_reload_errors_total"); got != want {
					t.Errorf("errors counted %s after two polls, want %s", got, want)
				}
			})
		})
	}
	writeManifest := func(t *testing.T, store blob.Store, m Manifest) {
		b, _ := json.Marshal(m)
		putObject(t, store, ManifestKey, b)
	}
	// replaceTar stores other bytes as the tar and, when manifest is set,
	// a manifest that describes them truthfully
	replaceTar := func(t *testing.T, store blob.Store, m Manifest, b []byte, manifest bool) {
		putObject(t, store, m.Key, b)
		if manifest {
			sum := sha1.Sum(b)
			m.Size, m.SHA1 = int64(len(b)), hex.EncodeToString(sum[:])
			writeManifest(t, store, m)
		}
	}
	readTar := func(t *testing.T, store blob.Store, m Manifest) []byte { return getObject(t, store, m.Key) }

	f("wrong SHA-1 in the manifest", false, func(t *testing.T, store blob.Store, m Manifest) {
		m.SHA1 = strings.Repeat("0", 40)
		writeManifest(t, store, m)
	})
	f("tar truncated, manifest of the whole", false, func(t *testing.T, store blob.Store, m Manifest) {
		b := readTar(t, store, m)
		replaceTar(t, store, m, b[:len(b)/2], false)
	})
	f("tar truncated, manifest of the truncated bytes", false, func(t *testing.T, store blob.Store, m Manifest) {
		b := readTar(t, store, m)
		replaceTar(t, store, m, b[:len(b)/2], true)
	})
	f("tar header corrupt, manifest of it", false, func(t *testing.T, store blob.Store, m Manifest) {
		b := readTar(t, store, m)
		b[0] ^= 0x20 // the first entry's name: its header checksum no longer matches
		replaceTar(t, store, m, b, true)
	})
	f("file contents corrupt, manifest of it", false, func(t *testing.T, store blob.Store, m Manifest) {
		// every byte of pebble's files flipped: the tar is sound, the
		// index does not open
		es := readTarEntries(t, readTar(t, store, m))
		for _, e := range es {
			if strings.HasPrefix(e.hdr.Name, "pebble/") && e.hdr.Typeflag == tar.TypeReg {
				for i := range e.body {
					e.body[i] ^= 0xff
				}
			}
		}
		replaceTar(t, store, m, tarOf(t, es...), true)
	})
	f("a hostile entry, manifest of it", false, func(t *testing.T, store blob.Store, m Manifest) {
		replaceTar(t, store, m, tarOf(t, tarEntry{hdr: tar.Header{Name: "pebble/", Typeflag: tar.TypeDir}},
			tarEntry{hdr: tar.Header{Name: "pebble/x", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}), true)
	})
	f("a tar of no index, manifest of it", false, func(t *testing.T, store blob.Store, m Manifest) {
		replaceTar(t, store, m, tarOf(t, tarEntry{hdr: tar.Header{Name: "readme", Typeflag: tar.TypeReg, Size: 5}, body: []byte("hello")}), true)
	})
	f("more bytes than the manifest says", false, func(t *testing.T, store blob.Store, m Manifest) {
		m.Size--
		writeManifest(t, store, m)
	})
	f("manifest of a later index format", false, func(t *testing.T, store blob.Store, m Manifest) {
		m.Format = index.FormatVersion + 1
		writeManifest(t, store, m)
	})
	f("manifest with a stamp that is a path", false, func(t *testing.T, store blob.Store, m Manifest) {
		m.Stamp = "../../" + m.Stamp
		m.Key = "index/" + m.Stamp + ".tar"
		writeManifest(t, store, m)
	})
	f("manifest naming another key", false, func(t *testing.T, store blob.Store, m Manifest) {
		m.Key = "blobs/other.tar"
		writeManifest(t, store, m)
	})
	f("manifest not JSON", false, func(t *testing.T, store blob.Store, m Manifest) {
		putObject(t, store, ManifestKey, []byte(`{"format":1,"stamp":`))
	})
	f("manifest with data after it", false, func(t *testing.T, store blob.Store, m Manifest) {
		b, _ := json.Marshal(m)
		putObject(t, store, ManifestKey, append(b, "{}"...))
	})
	f("tar missing (retried)", true, func(t *testing.T, store blob.Store, m Manifest) {
		if err := store.Delete(context.Background(), m.Key); err != nil {
			t.Fatal(err)
		}
	})
}

// TestFollowLimits: a published index over the follower's limits is
// refused before anything is written.
func TestFollowLimits(t *testing.T) {
	store := kinds[0].place(t)(t)
	b := startNode(t, store, locsA, Config{Limits: Limits{MaxBytes: 1024}})
	publish(t, store, build(t, t.TempDir(), locsB))
	if reloaded, err := b.f.Poll(context.Background()); reloaded || err == nil || !strings.Contains(err.Error(), "more than 1024") {
		t.Errorf("poll: %v %v, want refused over MaxBytes", reloaded, err)
	}
}

type tarEntry struct {
	hdr  tar.Header
	body []byte
}

func readTarEntries(t *testing.T, b []byte) []tarEntry {
	t.Helper()
	var out []tarEntry
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tarEntry{hdr: *hdr, body: body})
	}
}

// tarOf writes entries as a tar, whatever they are.
func tarOf(t *testing.T, es ...tarEntry) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range es {
		if err := tw.WriteHeader(&e.hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
