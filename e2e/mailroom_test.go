package e2e

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/testdoc"
	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/internal/testdoc/readback"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/production"
)

const mmPt = 72 / 25.4

// mailDoc writes a PDF of mailpdf pages.
func mailDoc(t *testing.T, pages ...mailpdf.Page) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := mailpdf.Pages(&b, pages...); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sendMailing uploads files (name, content ...) in a session of the demo
// account over HTTPS and ends it; it returns the EPID and the answer.
func sendMailing(t *testing.T, in *instance, files ...any) (string, map[string]any) {
	t.Helper()
	client := in.httpsClient(t)
	do := func(method, url string, body []byte) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+in.key)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	code, b := do("GET", in.url+"/publicinterface/get_session_id.text?account=DEM00001", nil)
	if code != 200 {
		t.Fatalf("get_session_id: %d %s", code, b)
	}
	epid := strings.TrimSpace(string(b))
	for i := 0; i+1 < len(files); i += 2 {
		body, ok := files[i+1].([]byte)
		if !ok {
			body = []byte(files[i+1].(string))
		}
		if code, b := do("PUT", in.url+"/direct_upload/"+epid+"/"+files[i].(string), body); code != 201 {
			t.Fatalf("PUT %s: %d %s", files[i], code, b)
		}
	}
	code, b = do("GET", in.url+"/publicinterface/end_session.json?session_id="+epid, nil)
	var res map[string]any
	if code != 200 || json.Unmarshal(b, &res) != nil || res["result"] != "ok" {
		t.Fatalf("end_session: %d %s", code, b)
	}
	return epid, res
}

// batchOf finds the hot-folder batch of a mailing's letters (one batch:
// the shapes here share envelope and postage) and returns its folder and
// manifest; of several nodes, in the hot folder of the one that made it.
func batchOf(t *testing.T, in *instance, epid string) (string, production.Manifest) {
	t.Helper()
	dir, found := "", production.Manifest{}
	for _, outbox := range in.hotFolders() {
		ents, _ := os.ReadDir(outbox)
		for _, e := range ents {
			var man production.Manifest
			raw, err := os.ReadFile(filepath.Join(outbox, e.Name(), production.ManifestJSON))
			if err == nil && json.Unmarshal(raw, &man) == nil && man.EPID == epid {
				if dir != "" && found.Batch == man.Batch {
					t.Fatalf("batch %s of mailing %s is in two hot folders: %s and %s", man.Batch, epid, dir, outbox)
				}
				if dir == "" {
					dir, found = filepath.Join(outbox, e.Name()), man
				}
			}
		}
	}
	if dir == "" {
		t.Fatalf("no batch of mailing %s in the hot folder", epid)
	}
	return dir, found
}

func letterStatuses(t *testing.T, in *instance, refs ...string) []map[string]any {
	t.Helper()
	b, _ := json.Marshal(refs)
	code, body := in.rpc(`{"jsonrpc":"2.0","id":1,"method":"get_letter_status","params":{"account":"DEM00001","refs":` + string(b) + `}}`)
	var res struct {
		Result struct {
			Letters []map[string]any `json:"letters"`
		} `json:"result"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &res) != nil {
		t.Fatalf("get_letter_status: %d %s", code, body)
	}
	return res.Result.Letters
}

// windowText reads the DL window of a batch page (1-based), widened as the
// check reads it.
func windowText(t *testing.T, path string, page int) string {
	t.Helper()
	w := production.DefaultDL.Window.Grow(3)
	return strings.Join(strings.Fields(readback.TextIn(t, path, page, w.X*mmPt, w.Y*mmPt, w.W*mmPt, w.H*mmPt)), " ")
}

func code(t *testing.T, path string, page int) string {
	t.Helper()
	img := readback.RenderArea(t, path, page, 300, 0, mailpdf.A4H-30*mmPt, 30*mmPt, 30*mmPt)
	return readback.DataMatrix(t, img)
}

// TestMailroomShapes sends every postal mailing shape of the
// specification through the real binary and reads the batches it hands
// to the print room back with qpdf, poppler and dmtxread: addressed and
// unaddressed letters (one and several recipients), a statement run,
// duplex with blank backs, colour kept and mono greyed, a letterhead
// behind the letter and not its attachment, attachments in order,
// PostScript and XPS converted; a letter whose window shows another
// address is held, not printed; the print room's marks make letters
// Printed, then Lodged.
func TestMailroomShapes(t *testing.T) { eachSetup(t, testMailroomShapes) }

func testMailroomShapes(t *testing.T, start startFunc) {
	for _, tool := range []string{"qpdf", "pdftotext", "pdftoppm", "dmtxread", "gs", "xpstopdf"} {
		testenvTool(t, tool)
	}
	in := start(t, nil, "-cancel-window", "0s")
	addr := func(i int) []string { return mailpdf.Address(i) }
	postal := func(i int) string { b, _ := json.Marshal(addr(i)); return string(b) }

	// 1. a statement run: three addressed letters of 2, 1 and 3 pages
	stmt := mailDoc(t,
		mailpdf.Page{Address: addr(0), Text: "L0 p1"}, mailpdf.Page{Text: "L0 p2"},
		mailpdf.Page{Address: addr(1), Text: "L1 p1"},
		mailpdf.Page{Address: addr(2), Text: "L2 p1"}, mailpdf.Page{Text: "L2 p2"}, mailpdf.Page{Text: "L2 p3"})
	run, _ := sendMailing(t, in, "statements.pdf", stmt, "m.json", fmt.Sprintf(`{"department":"Billing","letters":[
		{"postal":%s,"page_start":0,"page_end":1,"reference":"S-0"},
		{"postal":%s,"page_start":2,"page_end":2,"reference":"S-1"},
		{"postal":%s,"page_start":3,"page_end":5,"reference":"S-2"}]}`, postal(0), postal(1), postal(2)))

	// 2. one unaddressed letter to several recipients, duplex, with an
	// attachment and a letterhead behind every page of the letter
	var lh bytes.Buffer
	mailpdf.Letterhead(&lh)
	notice := mailDoc(t, mailpdf.Page{Text: "Notice page 1", Black: true}, mailpdf.Page{Text: "Notice page 2"}, mailpdf.Page{Text: "Notice page 3"})
	terms := mailDoc(t, mailpdf.Page{Text: "Terms and conditions"})
	many, _ := sendMailing(t, in, "notice.pdf", notice, "terms.pdf", terms, "letterhead.pdf", lh.Bytes(), "m.json", fmt.Sprintf(`{"duplex":true,
		"attachments":["terms.pdf"],"production_options":{"background":"letterhead.pdf","background_pages":"all"},"letters":[
		{"postal":%s,"file_name":"notice.pdf","reference":"N-0"},{"postal":%s,"file_name":"notice.pdf","reference":"N-1"}]}`, postal(3), postal(4)))

	// 3. colour kept, and the same document in mono
	colour := mailDoc(t, mailpdf.Page{Address: addr(5), Colour: true, Text: "In colour"})
	inColour, _ := sendMailing(t, in, "c.pdf", colour, "m.json", fmt.Sprintf(`{"colour_model":1,"letters":[{"postal":%s,"reference":"C-1"}]}`, postal(5)))
	inMono, _ := sendMailing(t, in, "c.pdf", colour, "m.json", fmt.Sprintf(`{"letters":[{"postal":%s,"reference":"M-1"}]}`, postal(5)))

	// 4. PostScript with its address in the window, XPS unaddressed
	ps := "%!PS\n/Helvetica findfont 10 scalefont setfont\n" +
		fmt.Sprintf("71 685 moveto (%s) show\n71 672 moveto (%s) show\n71 660 moveto (%s) show\n", addr(6)[0], addr(6)[1], addr(6)[2]) +
		"71 400 moveto (From PostScript) show\nshowpage\n"
	fromPS, _ := sendMailing(t, in, "letter.ps", ps, "m.json", fmt.Sprintf(`{"letters":[{"postal":%s,"reference":"P-1"}]}`, postal(6)))
	fromXPS, _ := sendMailing(t, in, "letter.xps", testdoc.XPS(1), "m.json", fmt.Sprintf(`{"letters":[{"postal":%s,"reference":"X-1"}]}`, postal(7)))

	// 5. the window shows another address than the metadata's: held
	wrong := mailDoc(t, mailpdf.Page{Address: addr(8)})
	sendMailing(t, in, "w.pdf", wrong, "m.json", fmt.Sprintf(`{"letters":[{"postal":%s,"reference":"W-1"}]}`, postal(9)))

	waitProduced(t, in)

	// the statement run: one sheet a page, the address in each letter's
	// window, a code on every sheet
	dir, man := batchOf(t, in, run)
	pdfPath := filepath.Join(dir, production.BatchPDF)
	readback.Check(t, pdfPath)
	for _, sz := range readback.Sizes(t, pdfPath) {
		if sz[0] < 594 || sz[0] > 596 || sz[1] < 841 || sz[1] > 843 {
			t.Errorf("statement run: a page of %.1f x %.1f points, not A4", sz[0], sz[1])
		}
	}
	if len(man.Letters) != 3 || man.Sheets != 6 {
		t.Fatalf("statement run manifest: %+v", man)
	}
	for _, row := range man.Letters {
		want := strings.Join(strings.Fields(strings.Join(addr(row.Letter), " ")), " ")
		if got := windowText(t, pdfPath, row.FirstSheet); got != want {
			t.Errorf("statement letter %d: window shows %q, want %q", row.Letter, got, want)
		}
		for s := 1; s <= row.Sheets; s++ {
			if got, want := code(t, pdfPath, row.FirstSheet+s-1), production.SheetCode(run, row.Letter, s, row.Sheets); got != want {
				t.Errorf("statement letter %d sheet %d: code %q, want %q", row.Letter, s, got, want)
			}
		}
	}

	// the notice: duplex, 3 letter pages + 1 attachment = 4 pages on 2
	// sheets a recipient; the address printed in the window; the
	// letterhead behind the letter's pages and not behind the terms
	dir, man = batchOf(t, in, many)
	pdfPath = filepath.Join(dir, production.BatchPDF)
	readback.Check(t, pdfPath)
	if len(man.Letters) != 2 || man.Sheets != 4 || len(readback.Sizes(t, pdfPath)) != 8 {
		t.Fatalf("notice manifest %+v, %d pages", man, len(readback.Sizes(t, pdfPath)))
	}
	for _, row := range man.Letters {
		first := 2*(row.FirstSheet-1) + 1 // the sheet's front, as a page of the PDF
		want := strings.Join(strings.Fields(strings.Join(addr(3+row.Letter), " ")), " ")
		if got := windowText(t, pdfPath, first); got != want {
			t.Errorf("notice letter %d: window shows %q, want %q printed there", row.Letter, got, want)
		}
		for i, want := range []string{"Notice page 1", "Notice page 2", "Notice page 3", "Terms and conditions"} {
			if got := readback.Text(t, pdfPath, first+i); !strings.Contains(got, want) {
				t.Errorf("notice letter %d page %d: %q, want %q", row.Letter, i+1, got, want)
			}
		}
		band := func(page int) [3]uint8 {
			return readback.At(readback.Render(t, pdfPath, page, 50), 50, 100*mmPt, 10*mmPt)
		}
		// mono: the green band prints as the grey of its luminosity
		if got := band(first + 1); got[0] > 100 || got[0] != got[1] || got[1] != got[2] {
			t.Errorf("notice letter %d: no letterhead behind page 2 (pixel %v)", row.Letter, got)
		}
		if got := band(first + 3); got != [3]uint8{255, 255, 255} {
			t.Errorf("notice letter %d: the attachment has a letterhead (pixel %v)", row.Letter, got)
		}
		if code(t, pdfPath, first) == "" || code(t, pdfPath, first+2) == "" || code(t, pdfPath, first+1) != "" {
			t.Errorf("notice letter %d: codes on fronts only, not backs", row.Letter)
		}
	}

	// colour kept; mono grey
	red := func(epid string) [3]uint8 {
		dir, _ := batchOf(t, in, epid)
		return readback.At(readback.Render(t, filepath.Join(dir, production.BatchPDF), 1, 50), 50, 100*mmPt, 10*mmPt)
	}
	if c := red(inColour); c[0] < 150 || c[1] > 80 {
		t.Errorf("colour mailing: the red band is %v", c)
	}
	if c := red(inMono); c[0] != c[1] || c[1] != c[2] {
		t.Errorf("mono mailing: the red band is %v, not grey", c)
	}

	// PostScript and XPS through their converters
	dir, _ = batchOf(t, in, fromPS)
	if got := readback.Text(t, filepath.Join(dir, production.BatchPDF), 1); !strings.Contains(got, "From PostScript") {
		t.Errorf("the PostScript letter: %q", got)
	}
	dir, _ = batchOf(t, in, fromXPS)
	want := strings.Join(strings.Fields(strings.Join(addr(7), " ")), " ")
	if got := windowText(t, filepath.Join(dir, production.BatchPDF), 1); got != want {
		t.Errorf("the XPS letter: window %q, want %q", got, want)
	}

	// statuses: produced letters are Processing, the wrong window held;
	// the print room's marks move a batch's letters on
	st := letterStatuses(t, in, "S-0", "N-1", "P-1", "W-1")
	for i, want := range []string{"Processing", "Processing", "Processing", "Held"} {
		if st[i]["status"] != want {
			t.Errorf("%s: %v, want %s", st[i]["ref"], st[i], want)
		}
	}
	if st[3]["hold"] != "window" || !strings.Contains(fmt.Sprint(st[3]["hold_reason"]), "shows") {
		t.Errorf("W-1: %v", st[3])
	}
	_, man = batchOf(t, in, run)
	for _, mark := range []struct{ verb, status string }{{"done", "Printed"}, {"lodged", "Lodged"}} {
		if out, err := in.admin("", "print", mark.verb, man.Batch); err != nil {
			t.Fatalf("lodge print %s: %v\n%s", mark.verb, err, out)
		}
		if st := letterStatuses(t, in, "S-0", "S-2"); st[0]["status"] != mark.status || st[1]["status"] != mark.status {
			t.Errorf("after print %s: %v", mark.verb, st)
		}
	}
	if st := letterStatuses(t, in, "S-0"); st[0]["lodged_ts"] == nil {
		t.Errorf("a lodged letter without lodged_ts: %v", st[0])
	}
}

// testenvTool skips or fails (in CI) without a program the test needs.
func testenvTool(t *testing.T, name string) {
	t.Helper()
	testenv.Tool(t, name)
}

// httpsClient trusts the instance's self-signed certificate (its
// nodes' certificates).
func (in *instance) httpsClient(t *testing.T) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(in.cert)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("the instance's certificate does not parse")
	}
	// Several nodes: a new connection for each request, so that the
	// balancer spreads a session's requests over the nodes.
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"},
		DisableKeepAlives: in.shared()}}
}
