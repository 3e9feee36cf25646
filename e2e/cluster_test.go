package e2e

import (
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/internal/tests3"
	"github.com/lodge-mail/lodge/pgdb"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/server"
	"github.com/lodge-mail/lodge/upload"
)

// cluster is several lodge serve processes sharing one PostgreSQL
// database and one S3-compatible bucket (a real versitygw), each with a
// data directory of its own for its index, certificate and hot folder.
type cluster struct {
	t      *testing.T
	dbURL  string
	s3     *tests3.Server
	bucket string
	extra  []string
	nodes  []*instance // nil where a node is down
	dirs   []string
	lb     *balancer // in front of the nodes, when there is one
	// oneCert: every node serves node 0's self-signed certificate
	// (-tls-cert), as nodes behind a balancer that passes TLS through
	// must: a client verifies the same name whichever node it reaches
	oneCert bool
}

// startCluster starts n nodes; extra flags go to each.
func startCluster(t *testing.T, n int, extra ...string) *cluster {
	t.Helper()
	c := newCluster(t, n, extra...)
	c.startAll()
	return c
}

// newCluster makes the database, the bucket and the data directories of
// n nodes, none started yet.
func newCluster(t *testing.T, n int, extra ...string) *cluster {
	t.Helper()
	c := &cluster{t: t, dbURL: testpg.NewDatabase(t), s3: tests3.Shared(t), extra: extra}
	c.bucket = tests3.NewBucket(t)
	t.Cleanup(func() {
		if t.Failed() {
			for i, in := range c.nodes {
				if in != nil {
					t.Logf("node %d's last lines:\n%s", i, lastLines(in.logs(), 40))
				}
			}
		}
	})
	for i := 0; i < n; i++ {
		c.dirs = append(c.dirs, t.TempDir())
		c.nodes = append(c.nodes, nil)
	}
	return c
}

// startAll starts every node.
func (c *cluster) startAll() {
	t := c.t
	t.Helper()
	n := len(c.nodes)
	// the first starts alone and migrates the schema; the others then
	// start together (pgdb's own test starts six at once on a new one)
	c.start(0)
	var wg sync.WaitGroup
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); c.start(i) }()
	}
	wg.Wait()
	for i, in := range c.nodes {
		if in == nil {
			t.Fatalf("node %d did not start", i)
		}
	}
}

// blobURL is the nodes' -blob.
func (c *cluster) blobURL() string { return c.s3.URL(c.bucket) }

// start starts node i (again) on its data directory.
func (c *cluster) start(i int) *instance {
	t := c.t
	dataDir := c.dirs[i]
	in := &instance{t: t, dataDir: dataDir, cert: filepath.Join(dataDir, "tls", "cert.pem"), dbURL: c.dbURL}
	args := []string{"serve", "-demo", "-quiet", "-data-dir", dataDir, "-addr", "127.0.0.1:0",
		"-db", c.dbURL, "-blob", c.blobURL(), "-node", fmt.Sprintf("node%d", i)}
	if c.oneCert && i > 0 {
		cert, key := server.SelfSignedPaths(c.dirs[0])
		in.cert = cert
		args = append(args, "-tls-cert", cert, "-tls-key", key)
	}
	cmd := exec.Command(binary, append(args, c.extra...)...)
	cmd.Dir = sharedDir(t)
	cmd.Env = append(os.Environ(), c.s3.Env()...)
	p, err := launch(t, cmd, func(line string) bool {
		if m := keyRE.FindStringSubmatch(line); m != nil {
			in.key = m[1]
		}
		m := servingRE.FindStringSubmatch(line)
		if m == nil {
			return false
		}
		in.url = "https://" + m[1]
		return true
	})
	if err != nil {
		t.Errorf("node %d: %v", i, err)
		return nil
	}
	in.proc = p
	c.nodes[i] = in
	if c.lb != nil {
		c.lb.set(i, strings.TrimPrefix(in.url, "https://"))
	}
	return in
}

// TestClusterOneSessionThreeNodes: a session opened on node 0 takes its
// uploads on node 1 and ends on node 2; its letters are produced once, by
// whichever node claims the work, and every node answers their status.
func TestClusterOneSessionThreeNodes(t *testing.T) {
	c := startCluster(t, 3, "-cancel-window", "0s")
	a, b, cn := c.nodes[0], c.nodes[1], c.nodes[2]
	do := func(in *instance, method, path string, body []byte) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, in.url+path, strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+a.key) // node 0's key, on every node
		resp, err := in.httpsClient(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	code, body := do(a, "GET", "/publicinterface/get_session_id.text?account=DEM00001", nil)
	if code != 200 {
		t.Fatalf("get_session_id on node 0: %d %s", code, body)
	}
	epid := strings.TrimSpace(body)
	rng := rand.New(rand.NewPCG(1, 2))
	doc := onePagePDF(100_000, rng)
	if code, body := do(b, "PUT", "/direct_upload/"+epid+"/letter.pdf", doc); code != 201 {
		t.Fatalf("PUT on node 1: %d %s", code, body)
	}
	meta := `{"letters":[{"postal":["Jo Citizen","10 Jones St","Melbourne VIC 3000"],"file_name":"letter.pdf","reference":"C-1"}]}`
	if code, body := do(b, "PUT", "/direct_upload/"+epid+"/m.json", []byte(meta)); code != 201 {
		t.Fatalf("PUT on node 1: %d %s", code, body)
	}
	code, body = do(cn, "GET", "/publicinterface/end_session.json?session_id="+epid, nil)
	var res upload.EndResult
	if code != 200 || json.Unmarshal([]byte(body), &res) != nil || res.Result != "ok" {
		t.Fatalf("end_session on node 2: %d %s", code, body)
	}
	sum := sha1.Sum(doc)
	found := false
	for _, f := range res.Files {
		found = found || (f.Name == "letter.pdf" && f.SHA1 == hex.EncodeToString(sum[:]))
	}
	if !found {
		t.Fatalf("end_session on node 2 does not list node 1's upload with its SHA-1: %s", body)
	}
	// produced: the letter is in a batch, whichever node made it
	waitProduced(t, a)
	for i, in := range c.nodes {
		ls := letterStatuses(t, in, "C-1")
		if len(ls) != 1 || ls[0]["status"] != pipeline.Processing {
			t.Fatalf("node %d: get_letter_status C-1: %v, want one letter %s (in a print batch)", i, ls, pipeline.Processing)
		}
	}
	// exactly one batch in exactly one node's hot folder
	batches := 0
	for _, dir := range c.dirs {
		ents, _ := os.ReadDir(filepath.Join(dir, "print", "outbox"))
		batches += len(ents)
	}
	if batches != 1 {
		t.Fatalf("%d batches in the nodes' hot folders, want 1", batches)
	}
}

// TestClusterCrash is the failure harness of several nodes: uploaders
// spread every session's requests over three nodes while one node at a
// time is killed with SIGKILL at a random moment and started again; once
// PostgreSQL itself is restarted mid-run, and once the object store
// refuses writes for a while. After each cycle every acknowledged file is
// present and whole in the shared stores and every acknowledged
// end_session has its mailing; at the end, with the nodes left to finish,
// every letter is in exactly one batch, in exactly one node's hot folder,
// and the surviving nodes kept serving throughout.
func TestClusterCrash(t *testing.T) {
	cycles := 100
	if testing.Short() {
		cycles = 10
	}
	c := startCluster(t, 3, "-cancel-window", "0s")
	rng := rand.New(rand.NewPCG(17, 19))
	ack := &acked{files: map[string]map[string]string{}, ended: map[string]bool{}}
	key := c.nodes[0].key
	pgRestart, s3Refuse := cycles/3, 2*cycles/3
	served := 0 // requests answered by nodes that were not killed
	for cycle := 0; cycle < cycles; cycle++ {
		victim := rng.IntN(len(c.nodes))
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var mu sync.Mutex
		for w := 0; w < 3; w++ {
			wg.Add(1)
			seed := rng.Uint64()
			go func() {
				defer wg.Done()
				n := clusterUploader(ctx, c, key, rand.New(rand.NewPCG(seed, 3)), ack)
				mu.Lock()
				served += n
				mu.Unlock()
			}()
		}
		switch cycle {
		case pgRestart:
			if err := testpg.Shared(t).Restart(); err != nil {
				t.Fatalf("restarting PostgreSQL: %v", err)
			}
		case s3Refuse:
			c.s3.SetReadOnly(true)
		}
		time.Sleep(time.Duration(20+rng.IntN(400)) * time.Millisecond)
		c.nodes[victim].stop(syscall.SIGKILL)
		c.nodes[victim] = nil
		if cycle == s3Refuse {
			c.s3.SetReadOnly(false)
		}
		cancel()
		wg.Wait()
		c.verify(ack, false)
		if t.Failed() {
			t.Fatalf("cycle %d failed", cycle)
		}
		if c.start(victim) == nil {
			t.Fatalf("cycle %d: node %d did not start again", cycle, victim)
		}
	}
	waitProduced(t, c.nodes[0])
	c.verify(ack, true)
	n := 0
	for _, fs := range ack.files {
		n += len(fs)
	}
	t.Logf("%d cycles, %d acknowledged files in %d sessions, %d ended, %d requests answered", cycles, n, len(ack.files), len(ack.ended), served)
	if n == 0 || len(ack.ended) == 0 {
		t.Errorf("the harness acknowledged nothing: it tested nothing")
	}
}

// clusterUploader is uploader with each request sent to a node drawn at
// random among those up; it returns the number of answers it had.
func clusterUploader(ctx context.Context, c *cluster, key string, rng *rand.Rand, ack *acked) int {
	var up []string
	for _, in := range c.nodes {
		if in != nil {
			up = append(up, in.url)
		}
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: insecureLoopback()}
	answered := 0
	base := func() string { return up[rng.IntN(len(up))] }
	do := requester(ctx, client, key, base, &answered)
	runSessions(ctx, do, rng, ack)
	return answered
}

// verify checks the shared stores as TestCrashDurability's verify and
// verifyMailroom check one node's, reading them as a node would.
func (c *cluster) verify(ack *acked, finished bool) {
	t := c.t
	t.Helper()
	ctx := context.Background()
	db, err := pgdb.Open(ctx, pgdb.Config{URL: c.dbURL})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, kv := range c.s3.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	blobs, err := blob.Open(ctx, c.blobURL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := upload.OpenShared(db, blobs, upload.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	verifyUploads(t, st, ack)
	ms, err := pipeline.OpenPostgres(db, pipeline.PostgresOptions{Renew: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer ms.Close()
	var outboxes []string
	for _, d := range c.dirs {
		outboxes = append(outboxes, filepath.Join(d, "print", "outbox"))
	}
	verifyMailroomStore(t, ms, outboxes, ack, finished)
}

// insecureLoopback is a transport for the nodes' self-signed
// certificates, each node its own, on loopback only.
func insecureLoopback() *http.Transport {
	return &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
}

// TestClusterIndexPublished: an index imported elsewhere and published to
// the object store (lodge import -publish) is taken into use by every
// running node without a restart, and answers addr_check there.
func TestClusterIndexPublished(t *testing.T) {
	c := startCluster(t, 2, "-index-poll", "200ms")
	for i, in := range c.nodes {
		if g := in.metric(t, "lodge_index_generation"); g != 1 {
			t.Fatalf("node %d starts at index generation %v, want 1", i, g)
		}
	}
	cmd := exec.Command(binary, "import", "-force", "-quiet", "-data-dir", t.TempDir(), "-publish", c.blobURL())
	cmd.Dir = sharedDir(t)
	cmd.Env = append(os.Environ(), c.s3.Env()...)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "published index") {
		t.Fatalf("lodge import -publish: %v\n%s", err, out)
	}
	for i, in := range c.nodes {
		testenv.WaitFor(t, func() bool { return in.metric(t, "lodge_index_generation") == 2 },
			func() string { return fmt.Sprintf("node %d to take the published index", i) })
		if g := in.metric(t, "lodge_index_reload_errors_total"); g != 0 {
			t.Errorf("node %d: %v reload errors", i, g)
		}
		code, body := in.rpc(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jo Citizen","10 Jones St","Melbourne VIC 3000"]}}`)
		if code != 200 || !strings.Contains(body, `"status":"matched"`) {
			t.Errorf("node %d after the swap: %d %s", i, code, body)
		}
	}
}
