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
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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
		inst := startWithDir(t, dataDir, "-plain-addr", "127.0.0.1:0")
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
		if t.Failed() {
			t.Fatalf("cycle %d failed", cycle)
		}
	}
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
	do := func(method, url string, body []byte) (int, []byte, error) {
		req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
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
		return resp.StatusCode, b, err
	}
	for ctx.Err() == nil {
		code, b, err := do("GET", base+"/publicinterface/get_session_id.text?account=DEM00001", nil)
		if err != nil || code != 200 {
			return
		}
		epid := strings.TrimSpace(string(b))
		nfiles := 1 + rng.IntN(3)
		for i := 0; i < nfiles; i++ {
			name := fmt.Sprintf("doc%d.pdf", rng.IntN(3)) // names repeat: uploads replace
			body := onePagePDF(rng.IntN(300_000), rng)
			code, b, err := do("PUT", base+"/direct_upload/"+epid+"/"+name, body)
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
		code, b, err = do("GET", base+"/publicinterface/end_session.json?session_id="+epid, nil)
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
			b, err := os.ReadFile(st.BlobPath(epid, f))
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
		if _, err := st.Pack(epid); err != nil {
			t.Errorf("session %s: ended without its mailing: %v", epid, err)
		}
	}
	// nothing half-written: no temporary files survive a reopen
	filepath.Walk(filepath.Join(dataDir, "upload", "blobs"), func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(info.Name(), ".tmp-") {
			t.Errorf("temporary file %s left visible", p)
		}
		return nil
	})
}
