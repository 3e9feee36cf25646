package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/testdoc"
	"github.com/lodge-mail/lodge/internal/testdoc/corpus"
	"github.com/lodge-mail/lodge/internal/testdoc/readback"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/production"
)

type autoLetter struct {
	Idx        int      `json:"idx"`
	Ref        string   `json:"ref"`
	Status     string   `json:"status"`
	Hold       string   `json:"hold"`
	HoldReason string   `json:"hold_reason"`
	Channels   []string `json:"channels"`
	Postal     []string `json:"postal"`
	Email      string   `json:"email"`
	SMS        string   `json:"sms"`
	Fax        string   `json:"fax"`
	Verdict    *struct {
		Status string `json:"status"`
	} `json:"verdict"`
	Masks     []struct{ X, Y, W, H float64 } `json:"masks"`
	Documents []struct {
		File      string `json:"file"`
		PageStart int    `json:"page_start"`
		PageEnd   int    `json:"page_end"`
	} `json:"documents"`
	Batch string `json:"batch"`
}

func getMailing(t *testing.T, in *instance, epid string) (settled bool, letters []autoLetter) {
	t.Helper()
	code, body := in.rpc(`{"jsonrpc":"2.0","id":1,"method":"get_mailing","params":{"account":"DEM00001","session_id":"` + epid + `","limit":1000}}`)
	var res struct {
		Result struct {
			Letters []autoLetter `json:"letters"`
		} `json:"result"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &res) != nil || strings.Contains(body, `"error"`) {
		t.Fatalf("get_mailing: %d %.300s", code, body)
	}
	settled = len(res.Result.Letters) > 0
	for _, l := range res.Result.Letters {
		if l.Status == "Received" || l.Status == "Processing" && l.Batch == "" {
			settled = false
		}
	}
	return settled, res.Result.Letters
}

// TestAutoProcessorRoundTrip uploads the generated letter corpus (every
// layout and producer: PDF from internal/pdf, Ghostscript and Chromium,
// PostScript, XPS) without metadata through the real binary, and reads
// back what lodge made of it: get_mailing shows every letter with the
// pages, address, reference and channels the corpus put there, the
// non-conforming ones held for their reason, and in the print batches
// each printed letter's envelope window shows its address (pdftotext)
// while its channel lines are painted white (pixels, by pdftoppm).
func TestAutoProcessorRoundTrip(t *testing.T) { eachSetup(t, testAutoProcessorRoundTrip) }

func testAutoProcessorRoundTrip(t *testing.T, start startFunc) {
	testenvTool(t, "pdftoppm")
	dir, m, err := corpus.Cached(context.Background(), filepath.Join(os.TempDir(), "lodge-lettercorpus"), corpus.Options{Letters: corpus.Small})
	if err != nil {
		t.Fatal(err)
	}
	in := start(t, nil, "-cancel-window", "0s")
	var files []any
	docs := map[string]corpus.Document{}
	for _, d := range m.Documents {
		if d.PagesPerLetter > 0 {
			continue // a profile splits it: TestAutoProcessorPagesPerLetter
		}
		b, err := os.ReadFile(filepath.Join(dir, d.File))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, d.File, b)
		docs[d.File] = d
	}
	epid, res := sendMailing(t, in, files...)
	t.Logf("end_session: %v", res)
	var letters []autoLetter
	var batches map[string]batchFiles
	testenv.WaitFor(t, func() bool {
		var ok bool
		if ok, letters = getMailing(t, in, epid); !ok {
			return false
		}
		batches = batchesOf(t, in, epid)
		for _, l := range letters {
			if l.Batch != "" && batches[l.Batch].dir == "" {
				return false // composing
			}
		}
		return true
	}, func() string {
		return fmt.Sprintf("the auto mailing's letters extracted and batched: %d letters so far; the server's log ends:\n%s", len(letters), lastLines(in.logs(), 30))
	})
	byDoc := map[string][]autoLetter{}
	for _, l := range letters {
		byDoc[l.Documents[0].File] = append(byDoc[l.Documents[0].File], l)
	}
	printed, masked := 0, 0
	for name, d := range docs {
		got := byDoc[name]
		want := d.Letters
		if d.Hold != "" {
			if len(got) == 0 || !strings.Contains(got[0].HoldReason, "comes before the first address") {
				t.Errorf("%s: the pages before the first address are not a held letter: %+v", name, got)
				continue
			}
			got = got[1:]
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d letters, want %d", name, len(got), len(want))
			continue
		}
		for i, w := range want {
			g := got[i]
			where := fmt.Sprintf("%s letter %d (pages %d-%d)", name, i, w.FirstPage, w.LastPage)
			if g.Documents[0].PageStart+1 != w.FirstPage || g.Documents[0].PageEnd+1 != w.LastPage {
				t.Errorf("%s: pages %d-%d", where, g.Documents[0].PageStart+1, g.Documents[0].PageEnd+1)
			}
			if w.Hold != "" {
				if g.Status != "Held" {
					t.Errorf("%s: %s, want held (%s)", where, g.Status, w.Hold)
				}
				continue
			}
			if !slices.Equal(g.Postal, w.Address) || g.Ref != w.Reference || g.Email != w.Email || g.Fax != w.Fax || g.SMS != w.SMS {
				t.Errorf("%s:\n got %q ref=%q email=%q fax=%q sms=%q\nwant %q ref=%q email=%q fax=%q sms=%q", where,
					g.Postal, g.Ref, g.Email, g.Fax, g.SMS, w.Address, w.Reference, w.Email, w.Fax, w.SMS)
			}
			if g.Verdict == nil || g.Verdict.Status != w.Verdict {
				t.Errorf("%s: verdict %+v, want %s", where, g.Verdict, w.Verdict)
			}
			switch {
			case w.SMS != "" || w.Fax != "" || w.Email != "":
				if g.Status != "Held" || g.Hold != "channel" {
					t.Errorf("%s: %s (%s), want held for its %s channel", where, g.Status, g.HoldReason, g.Channels[0])
				}
			case w.Verdict == "invalid":
				if g.Status != "Held" || g.Hold != "address" {
					t.Errorf("%s: %s, want held for its invalid address", where, g.Status)
				}
			default:
				if g.Status != "Processing" || g.Batch == "" {
					t.Errorf("%s: %s %s %s, want in a print batch", where, g.Status, g.Hold, g.HoldReason)
					continue
				}
				printed++
				masked += len(g.Masks)
				checkPrinted(t, where, batches[g.Batch], epid, g)
			}
		}
	}
	if printed < 20 || masked < 10 {
		t.Errorf("only %d letters printed, %d areas masked: the corpus should have more", printed, masked)
	}
	t.Logf("%d letters, %d printed and read back, %d masked areas white", len(letters), printed, masked)

	// A letter whose window could not be read is corrected: it is
	// printed with the corrected address set in its window.
	idx := -1
	for _, l := range letters {
		if l.Status == "Held" && strings.Contains(l.HoldReason, "cannot be read") {
			idx = l.Idx
		}
	}
	if idx < 0 {
		t.Fatal("no letter held as unreadable")
	}
	fixed := []string{"Jo Citizen", "3/72 Charles St", "St Kilda VIC 3182"}
	pj, _ := json.Marshal(fixed)
	if code, out := in.rpc(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"correct_letter","params":{"account":"DEM00001","session_id":%q,"letter":%d,"postal":%s}}`, epid, idx, pj)); code != 200 || !strings.Contains(out, `"matched"`) {
		t.Fatalf("correct_letter: %d %s", code, out)
	}
	var corrected autoLetter
	testenv.WaitFor(t, func() bool {
		_, ls := getMailing(t, in, epid)
		corrected = ls[idx]
		return corrected.Batch != "" && batchesOf(t, in, epid)[corrected.Batch].dir != ""
	}, func() string {
		return fmt.Sprintf("the corrected letter printed: %s %s", corrected.Status, corrected.HoldReason)
	})
	checkPrinted(t, "the corrected letter", batchesOf(t, in, epid)[corrected.Batch], epid, corrected)
}

// batchesOf reads the manifests of a mailing's batches in the hot folder
// (of several nodes, in each node's; a batch in two is an error).
func batchesOf(t *testing.T, in *instance, epid string) map[string]batchFiles {
	t.Helper()
	out := map[string]batchFiles{}
	for _, outbox := range in.hotFolders() {
		ents, _ := os.ReadDir(outbox)
		for _, e := range ents {
			var man production.Manifest
			raw, err := os.ReadFile(filepath.Join(outbox, e.Name(), production.ManifestJSON))
			if err == nil && json.Unmarshal(raw, &man) == nil && man.EPID == epid {
				if prev, ok := out[man.Batch]; ok {
					t.Fatalf("batch %s is in two hot folders: %s and %s", man.Batch, prev.dir, outbox)
				}
				out[man.Batch] = batchFiles{dir: filepath.Join(outbox, e.Name()), man: man}
			}
		}
	}
	return out
}

type batchFiles struct {
	dir string
	man production.Manifest
}

// checkPrinted reads a printed letter's first page in its batch: the
// window shows its postal lines, and each masked area is white.
func checkPrinted(t *testing.T, where string, b batchFiles, epid string, l autoLetter) {
	t.Helper()
	if b.dir == "" {
		t.Errorf("%s: its batch %s is not in the hot folder", where, l.Batch)
		return
	}
	page := 0
	for _, r := range b.man.Letters {
		if r.Letter == l.Idx && r.EPID == epid {
			page = r.FirstSheet
			if b.man.Duplex {
				page = 2*r.FirstSheet - 1
			}
		}
	}
	if page == 0 {
		t.Errorf("%s: not in its batch's manifest", where)
		return
	}
	pdfPath := filepath.Join(b.dir, "batch.pdf")
	shown := strings.ToUpper(windowText(t, pdfPath, page))
	if b.man.Envelope == "C4" {
		w := production.DefaultC4.Window.Grow(3)
		shown = strings.ToUpper(strings.Join(strings.Fields(readback.TextIn(t, pdfPath, page, w.X*mmPt, w.Y*mmPt, w.W*mmPt, w.H*mmPt)), " "))
	}
	for _, line := range l.Postal {
		if !strings.Contains(shown, strings.ToUpper(strings.Join(strings.Fields(line), " "))) {
			t.Errorf("%s: the window of batch page %d shows %q, not %q", where, page, shown, line)
		}
	}
	for _, a := range l.Masks {
		const dpi = 100
		img := readback.RenderArea(t, pdfPath, page, dpi, (a.X)*mmPt+0.5, (a.Y)*mmPt+0.5, a.W*mmPt-1, a.H*mmPt-1)
		bounds := img.Bounds()
		for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
			for x := bounds.Min.X; x < bounds.Max.X; x++ {
				if r, g, bl := readback.Pixel(img, x, y); r < 250 || g < 250 || bl < 250 {
					t.Errorf("%s: masked area %+v is not white at (%d,%d): %d,%d,%d", where, a, x, y, r, g, bl)
					return
				}
			}
		}
	}
}

// TestAutoProcessorMetadataWithoutLetters: metadata without letters
// (spec 2.1) gives the mailing its attributes, and the auto processor
// the letters: here split every two pages (production_options
// split_pages), each with the mailing's attachment after its own pages.
func TestAutoProcessorMetadataWithoutLetters(t *testing.T) {
	eachSetup(t, testAutoProcessorMetadataWithoutLetters)
}

func testAutoProcessorMetadataWithoutLetters(t *testing.T, start startFunc) {
	dir, m, err := corpus.Cached(context.Background(), filepath.Join(os.TempDir(), "lodge-lettercorpus"), corpus.Options{Letters: corpus.Small})
	if err != nil {
		t.Fatal(err)
	}
	var doc corpus.Document
	for _, d := range m.Documents {
		if d.PagesPerLetter == 2 && d.Format == "pdf" {
			doc = d
		}
	}
	if doc.File == "" {
		t.Fatal("the corpus has no two-pages-per-letter document")
	}
	body, err := os.ReadFile(filepath.Join(dir, doc.File))
	if err != nil {
		t.Fatal(err)
	}
	in := start(t, nil, "-cancel-window", "0s")
	meta := `{"title":"March statements","department":"Billing","production_options":{"split_pages":2},"attachments":["terms.pdf"]}`
	epid, _ := sendMailing(t, in, "meta.json", meta, doc.File, body, "terms.pdf", testdoc.PDF(1, 0))
	var letters []autoLetter
	testenv.WaitFor(t, func() bool {
		var ok bool
		ok, letters = getMailing(t, in, epid)
		return ok
	}, func() string {
		return fmt.Sprintf("letters read: %d so far; log:\n%s", len(letters), lastLines(in.logs(), 20))
	})
	if len(letters) != len(doc.Letters) {
		t.Fatalf("%d letters, want %d", len(letters), len(doc.Letters))
	}
	for i, w := range doc.Letters {
		g := letters[i]
		if len(g.Documents) != 2 || g.Documents[0].File != doc.File || g.Documents[0].PageStart+1 != w.FirstPage || g.Documents[0].PageEnd+1 != w.LastPage ||
			g.Documents[1].File != "terms.pdf" || !slices.Equal(g.Postal, w.Address) || g.Ref != w.Reference {
			t.Errorf("letter %d: %+v\nwant pages %d-%d of %s then terms.pdf, %q ref %q", i, g, w.FirstPage, w.LastPage, doc.File, w.Address, w.Reference)
		}
	}
	code, out := in.rpc(`{"jsonrpc":"2.0","id":1,"method":"get_mailing","params":{"account":"DEM00001","session_id":"` + epid + `","limit":1}}`)
	if code != 200 || !strings.Contains(out, `"title":"March statements"`) || !strings.Contains(out, `"department":"Billing"`) || !strings.Contains(out, `"split_pages":2`) {
		t.Errorf("get_mailing: %d %.600s", code, out)
	}
}
