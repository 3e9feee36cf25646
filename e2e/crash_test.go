package e2e

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/pdf"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/production"
	"github.com/lodge-mail/lodge/upload"
)

// onePagePDF is a small valid PDF with n bytes of padding in a comment, so
// uploads vary in size.
func onePagePDF(pad int, rng *rand.Rand) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%")
	for i := 0; i < pad; i++ {
		b.WriteByte(byte('a' + rng.IntN(26)))
	}
	b.WriteString("\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n3 0 obj<</Type/Page/Parent 2 0 R>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")
	return b.Bytes()
}

// acked is what the server acknowledged: files by session and name with
// their SHA-1, and sessions it ended.
type acked struct {
	mu    sync.Mutex
	files map[string]map[string]string // epid → name → sha1
	ended map[string]bool
}

func (a *acked) file(epid, name, sum string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.files[epid] == nil {
		a.files[epid] = map[string]string{}
	}
	a.files[epid][name] = sum
}

// TestCrashDurability kills the server with SIGKILL at random points
// during uploads and end_session, 100 times, and checks after each restart
// that every acknowledged file is present with the SHA-1 reported, every
// acknowledged end_session is still ended, and nothing half-written is
// visible: each stored file's blob hashes to its record.
//
// One node only: it kills the one process and reads its data directory;
// TestClusterCrash is the same harness over three nodes.
func TestCrashDurability(t *testing.T) {
	cycles := 100
	if testing.Short() {
		cycles = 10
	}
	dataDir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 11))
	ack := &acked{files: map[string]map[string]string{}, ended: map[string]bool{}}
	client := &http.Client{Timeout: 30 * time.Second}
	for cycle := 0; cycle < cycles; cycle++ {
		inst := startWithDir(t, dataDir, "-plain-addr", "127.0.0.1:0", "-cancel-window", "0s")
		base := inst.plainURL
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			seed := rng.Uint64()
			go func() {
				defer wg.Done()
				uploader(ctx, client, base, inst.key, rand.New(rand.NewPCG(seed, 1)), ack)
			}()
		}
		time.Sleep(time.Duration(20+rng.IntN(400)) * time.Millisecond)
		inst.stop(syscall.SIGKILL)
		cancel()
		wg.Wait()
		verify(t, dataDir, ack)
		verifyMailroom(t, dataDir, ack, false)
		if t.Failed() {
			t.Fatalf("cycle %d failed", cycle)
		}
	}
	// a last run, left to finish what the kills interrupted: then every
	// letter of every mailing is in exactly one batch, in the hot folder
	inst := startWithDir(t, dataDir, "-cancel-window", "0s")
	waitProduced(t, inst)
	if err := inst.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("stopping: %v", err)
	}
	verifyMailroom(t, dataDir, ack, true)
	n := 0
	for _, fs := range ack.files {
		n += len(fs)
	}
	t.Logf("%d cycles, %d acknowledged files in %d sessions, %d ended", cycles, n, len(ack.files), len(ack.ended))
	if n == 0 || len(ack.ended) == 0 {
		t.Errorf("the harness acknowledged nothing: it tested nothing")
	}
}

// uploader opens sessions, uploads files and ends sessions until ctx ends,
// recording what the server acknowledged.
func uploader(ctx context.Context, client *http.Client, base, key string, rng *rand.Rand, ack *acked) {
	runSessions(ctx, requester(ctx, client, key, func() string { return base }, nil), rng, ack)
}

// requester sends a request with the key to the server base names (asked
// again for each request), counting the answers read whole in answered
// (when not nil).
func requester(ctx context.Context, client *http.Client, key string, base func() string, answered *int) func(method, path string, body []byte) (int, []byte, error) {
	return func(method, path string, body []byte) (int, []byte, error) {
		req, err := http.NewRequestWithContext(ctx, method, base()+path, bytes.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && answered != nil {
			*answered++
		}
		return resp.StatusCode, b, err
	}
}

// runSessions is the uploaders' work: sessions of one to three PDF
// uploads (names repeat, so uploads replace), most with metadata naming
// their letters, each ended, until ctx ends or a request fails; do sends
// a request to a server (path from the root) with the demo key.
func runSessions(ctx context.Context, do func(method, path string, body []byte) (int, []byte, error), rng *rand.Rand, ack *acked) {
	for ctx.Err() == nil {
		code, b, err := do("GET", "/publicinterface/get_session_id.text?account=DEM00001", nil)
		if err != nil || code != 200 {
			return
		}
		epid := strings.TrimSpace(string(b))
		nfiles := 1 + rng.IntN(3)
		for i := 0; i < nfiles; i++ {
			name := fmt.Sprintf("doc%d.pdf", rng.IntN(3)) // names repeat: uploads replace
			body := onePagePDF(rng.IntN(300_000), rng)
			code, b, err := do("PUT", "/direct_upload/"+epid+"/"+name, body)
			if err != nil {
				return
			}
			if code == 201 {
				sum := sha1.Sum(body)
				if got := strings.Fields(string(b)); len(got) != 3 || got[2] != hex.EncodeToString(sum[:]) {
					panic(fmt.Sprintf("201 for %s with body %q, sha1 %x", name, b, sum))
				}
				ack.file(epid, name, hex.EncodeToString(sum[:]))
			}
		}
		// most sessions name their documents' letters, so that the
		// mailroom produces them; the others go to the auto processor
		ack.mu.Lock()
		var docs []string
		for name := range ack.files[epid] {
			docs = append(docs, name)
		}
		ack.mu.Unlock()
		if len(docs) > 0 && rng.IntN(10) < 7 {
			sort.Strings(docs)
			var letters []string
			for i, name := range docs {
				letters = append(letters, fmt.Sprintf(`{"postal":["Jo Citizen %d","10 Jones St","Melbourne VIC 3000"],"file_name":%q,"reference":"%s-%d"}`, i, name, epid, i))
			}
			meta := []byte(`{"letters":[` + strings.Join(letters, ",") + `]}`)
			if code, _, err := do("PUT", "/direct_upload/"+epid+"/m.json", meta); err != nil {
				return
			} else if code == 201 {
				sum := sha1.Sum(meta)
				ack.file(epid, "m.json", hex.EncodeToString(sum[:]))
			}
		}
		code, b, err = do("GET", "/publicinterface/end_session.json?session_id="+epid, nil)
		if err != nil {
			return
		}
		if code == 200 {
			var res upload.EndResult
			if json.Unmarshal(b, &res) == nil && res.Result == "ok" {
				ack.mu.Lock()
				ack.ended[epid] = true
				ack.mu.Unlock()
			}
		}
	}
}

// verify opens the upload store the killed server left and checks it.
func verify(t *testing.T, dataDir string, ack *acked) {
	t.Helper()
	st, err := upload.Open(filepath.Join(dataDir, "upload"), upload.Options{})
	if err != nil {
		t.Fatalf("reopening the upload store: %v", err)
	}
	defer st.Close()
	verifyUploads(t, st, ack)
	// nothing half-written: no temporary files survive a reopen
	filepath.Walk(filepath.Join(dataDir, "upload", "blobs"), func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(info.Name(), ".tmp-") {
			t.Errorf("temporary file %s left visible", p)
		}
		return nil
	})
}

// verifyUploads checks an upload store against what was acknowledged:
// every acknowledged file is there, every stored file's bytes hash to its
// record, every acknowledged end_session is ended with its files.
func verifyUploads(t *testing.T, st *upload.Store, ack *acked) {
	t.Helper()
	ack.mu.Lock()
	defer ack.mu.Unlock()
	for epid, want := range ack.files {
		files, err := st.Files(epid)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]upload.File{}
		for _, f := range files {
			got[f.Name] = f
		}
		for name, sum := range want {
			f, ok := got[name]
			if !ok {
				t.Errorf("session %s: acknowledged file %s is gone", epid, name)
				continue
			}
			if f.SHA1 != sum && !ack.ended[epid] {
				// a later upload of the same name may have been stored
				// without its 201 reaching the client; it must still be whole
				t.Logf("session %s: %s replaced by an unacknowledged upload", epid, name)
			}
		}
		for _, f := range files {
			b, err := readStored(st, epid, f)
			if err != nil {
				t.Errorf("session %s: %s: %v", epid, f.Name, err)
				continue
			}
			if sum := sha1.Sum(b); hex.EncodeToString(sum[:]) != f.SHA1 || int64(len(b)) != f.Size {
				t.Errorf("session %s: %s is half-written: %d bytes, sha1 %x, record says %d and %s", epid, f.Name, len(b), sum, f.Size, f.SHA1)
			}
		}
	}
	for epid := range ack.ended {
		ss, err := st.Session(epid)
		if err != nil || ss.State != upload.StateEnded || ss.Result == nil || ss.Result.Result != "ok" {
			t.Errorf("session %s: end_session was acknowledged but the session is %+v (%v)", epid, ss, err)
			continue
		}
		// the answer recorded lists every acknowledged file with its sha1
		listed := map[string]string{}
		for _, f := range ss.Result.Files {
			listed[f.Name] = f.SHA1
		}
		for name, sum := range ack.files[epid] {
			if listed[name] != sum {
				t.Errorf("session %s: ended with %s sha1 %q, acknowledged %q", epid, name, listed[name], sum)
			}
		}
	}
}

// readStored reads a stored file's bytes through the store.
func readStored(st *upload.Store, epid string, f upload.File) ([]byte, error) {
	r, err := st.OpenFile(context.Background(), epid, f)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// verifyMailroom opens the mailroom store the server left and checks it:
// every acknowledged end_session has its mailing; no letter is in two
// batches, and a letter says the batch that lists it; the hot folder holds
// only whole batches, each of a batch the store knows, its PDF of as many
// pages as the batch's sheets. When finished, every letter of a mailing
// with letters is also in a batch that is in the hot folder.
func verifyMailroom(t *testing.T, dataDir string, ack *acked, finished bool) {
	t.Helper()
	ms, err := pipeline.OpenPebble(filepath.Join(dataDir, "mailroom"))
	if err != nil {
		t.Fatalf("reopening the mailroom store: %v", err)
	}
	defer ms.Close()
	verifyMailroomStore(t, ms, []string{filepath.Join(dataDir, "print", "outbox")}, ack, finished)
}

// verifyMailroomStore is verifyMailroom's check of a mailroom store and
// the hot folders of the nodes that produce from it: a batch is in at
// most one of them.
func verifyMailroomStore(t *testing.T, ms pipeline.Store, outboxes []string, ack *acked, finished bool) {
	t.Helper()
	ack.mu.Lock()
	defer ack.mu.Unlock()
	type addr struct {
		epid string
		idx  int
	}
	batchOf := map[addr]string{}
	batches, err := ms.Batches("")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]pipeline.Batch{}
	for _, b := range batches {
		known[b.ID] = b
		for _, idx := range b.Letters {
			k := addr{b.EPID, idx}
			if other, dup := batchOf[k]; dup {
				t.Errorf("letter %d of %s is in batches %s and %s", idx, b.EPID, other, b.ID)
			}
			batchOf[k] = b.ID
		}
	}
	letters := 0
	for epid := range ack.ended {
		m, err := ms.Mailing(epid)
		if err != nil {
			t.Errorf("session %s: ended without its mailing: %v", epid, err)
			continue
		}
		ls, err := ms.Letters(epid, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ls) != m.Letters {
			t.Errorf("mailing %s: %d letters recorded, the mailing says %d", epid, len(ls), m.Letters)
		}
		if finished && m.Auto && m.Letters != len(m.Files) {
			t.Errorf("auto mailing %s: %d letters read out of %d documents", epid, m.Letters, len(m.Files))
		}
		for _, l := range ls {
			letters++
			if l.Batch != batchOf[addr{epid, l.Idx}] {
				t.Errorf("letter %d of %s says batch %q, the batches say %q", l.Idx, epid, l.Batch, batchOf[addr{epid, l.Idx}])
			}
			if finished && m.Auto {
				// the harness's documents carry no address: the auto
				// processor holds each as a letter without one
				if l.Status != pipeline.Held || !strings.Contains(l.HoldReason, "before the first address") {
					t.Errorf("letter %d of auto mailing %s: %s %s, want held for the address its document lacks", l.Idx, epid, l.Status, l.HoldReason)
				}
				continue
			}
			if finished && (l.Batch == "" || known[l.Batch].State != pipeline.BatchReady) {
				t.Errorf("letter %d of %s was not produced: %s %s, batch %q", l.Idx, epid, l.Status, l.HoldReason, l.Batch)
			}
		}
	}
	inFolder := map[string]string{}
	for _, outbox := range outboxes {
		ents, err := os.ReadDir(outbox)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, e := range ents {
			verifyHotFolderBatch(t, known, inFolder, outbox, e)
		}
	}
	for _, b := range batches {
		if b.State == pipeline.BatchReady && inFolder[b.ID] == "" {
			t.Errorf("batch %s is ready but not in a hot folder", b.ID)
		}
	}
	if finished {
		t.Logf("mailroom: %d letters of %d ended mailings, %d batches", letters, len(ack.ended), len(batches))
		if letters == 0 || len(batches) == 0 {
			t.Errorf("the harness produced nothing: it tested nothing")
		}
	}
}

// verifyHotFolderBatch checks one entry of a hot folder: a whole batch
// the mailroom made, in no other hot folder, its PDF of its sheets.
func verifyHotFolderBatch(t *testing.T, known map[string]pipeline.Batch, inFolder map[string]string, outbox string, e os.DirEntry) {
	t.Helper()
	b, ok := known[e.Name()]
	if !ok || !e.IsDir() {
		t.Errorf("hot folder: %s is no batch the mailroom made", e.Name())
		return
	}
	if other := inFolder[b.ID]; other != "" {
		t.Errorf("batch %s is in two hot folders, %s and %s: produced twice", b.ID, other, outbox)
	}
	inFolder[b.ID] = outbox
	dir := filepath.Join(outbox, e.Name())
	for _, name := range []string{production.BatchPDF, production.ManifestJSON, production.ManifestCSV, production.LodgementJSON} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("hot folder: batch %s without %s: half-written", b.ID, name)
		}
	}
	var man production.Manifest
	if raw, err := os.ReadFile(filepath.Join(dir, production.ManifestJSON)); err != nil || json.Unmarshal(raw, &man) != nil || man.Batch != b.ID || len(man.Letters) != len(b.Letters) {
		t.Errorf("hot folder: batch %s: manifest %+v (%v), the batch has %d letters", b.ID, man.Batch, err, len(b.Letters))
	}
	f, err := os.Open(filepath.Join(dir, production.BatchPDF))
	if err != nil {
		return
	}
	fi, _ := f.Stat()
	doc, err := pdf.Open(f, fi.Size(), pdf.Limits{})
	if err != nil || doc.NumPages() != b.Sheets {
		t.Errorf("hot folder: batch %s: batch.pdf %v, want %d pages", b.ID, err, b.Sheets)
	}
	f.Close()
}

// waitProduced waits until no mailing of the demo account has a letter
// still Received (waiting for the check or the batch stage) and no batch
// is being composed (lodge print list, through the admin socket), or
// fails after a minute.
func waitProduced(t *testing.T, in *instance) {
	t.Helper()
	waiting := 0
	testenv.WaitFor(t, func() bool {
		code, body := in.rpc(`{"jsonrpc":"2.0","id":1,"method":"recent_uploads","params":{"account":"DEM00001","limit":1000}}`)
		var res struct {
			Result struct {
				Uploads []struct {
					EPID    string         `json:"epid"`
					Status  string         `json:"status"`
					Letters map[string]int `json:"letters"`
				} `json:"uploads"`
			} `json:"result"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &res) != nil {
			t.Fatalf("recent_uploads: %d %s", code, body)
		}
		waiting = 0
		for _, u := range res.Result.Uploads {
			waiting += u.Letters[pipeline.Received]
			if u.Status == "queued_auto" {
				waiting++ // its letters are not read yet
			}
		}
		if waiting > 0 {
			return false
		}
		args := []string{"print", "list", "-state", "composing", "-data-dir", in.dataDir}
		if in.dbURL != "" {
			args = append(args, "-db", in.dbURL)
		}
		out, err := lodge(t, "", args...)
		if err != nil {
			t.Fatalf("lodge print list: %v\n%s", err, out)
		}
		return strings.Contains(out, "no print batches composing")
	}, func() string {
		return fmt.Sprintf("the mailroom to finish (%d letters still waiting, or a batch being composed)", waiting)
	})
}
