package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/testdoc"
	"github.com/lodge-mail/lodge/internal/testref"
)

// pdfPages writes a valid PDF with n pages and a correct cross-reference
// table.
func pdfPages(n int) []byte { return testdoc.PDF(n, 0) }

func postScript(pages int) []byte { return testdoc.PostScript(pages) }

// xpsPages writes a minimal XPS package with n pages.
func xpsPages(n int) []byte { return testdoc.XPS(n) }

// shape is one mailing shape of the specification's section 1: its
// metadata (from upload/metadata's golden files) and documents.
type shape struct {
	name  string
	files map[string][]byte // uploaded in this order: see order
	order []string
	auth  string // how the client authenticates: bearer, basic, digest
}

func shapes(t *testing.T) []shape {
	t.Helper()
	root, err := testref.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	meta := func(golden, as string) (string, []byte) {
		b, err := os.ReadFile(filepath.Join(root, "upload", "metadata", "testdata", golden+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return as, b
	}
	mk := func(name, auth string, docs ...any) shape {
		s := shape{name: name, files: map[string][]byte{}, auth: auth}
		for i := 0; i+1 < len(docs); i += 2 {
			fn := docs[i].(string)
			s.files[fn] = docs[i+1].([]byte)
			s.order = append(s.order, fn)
		}
		return s
	}
	m := func(golden string) []byte { _, b := meta(golden, ""); return b }
	return []shape{
		mk("single_addressed", "bearer", "letter.pdf", pdfPages(2), "single_addressed.json", m("single_addressed")),
		mk("unaddressed_one", "basic", "m.json", m("unaddressed_one"), "welcome.pdf", pdfPages(3)),
		mk("unaddressed_many", "digest", "notice.pdf", pdfPages(1), "m.json", m("unaddressed_many")),
		mk("statements", "bearer", "statements.pdf", pdfPages(10), "m.json", m("statements")),
		mk("colour_duplex", "bearer", "brochure.pdf", pdfPages(4), "m.json", m("colour_duplex")),
		mk("attachments_letterhead", "digest", "offer-a.pdf", pdfPages(2), "offer-b.pdf", pdfPages(2), "terms.pdf", pdfPages(3), "insert.pdf", pdfPages(2), "m.json", m("attachments_letterhead")),
		mk("files_first_is_letter", "basic", "cover.pdf", pdfPages(1), "report.pdf", pdfPages(5), "appendix.pdf", pdfPages(2), "m.json", m("files_first_is_letter")),
		mk("references", "bearer", "invoices.pdf", pdfPages(2), "m.json", m("references")),
		mk("department", "bearer", "renewal.ps", postScript(2), "m.json", m("department")),
		mk("text_only", "bearer", "reminders.json", m("text_only")),
		mk("password_link", "digest", "statements.pdf", pdfPages(6), "s.json", m("password_link")),
		mk("auto", "bearer", "a.pdf", pdfPages(1), "b.xps", xpsPages(1)),
	}
}

// curlAuth returns curl's options for a way of authenticating.
func (in *instance) curlAuth(how, user, pass string) []string {
	switch how {
	case "basic":
		return []string{"--basic", "-u", user + ":" + pass}
	case "digest":
		return []string{"--digest", "-u", user + ":" + pass}
	}
	return []string{"-H", "Authorization: Bearer " + in.key}
}

// TestUploadShapes sends every mailing shape through the standard method
// with curl (PUT with -T), each with one of Bearer, Basic and Digest, and
// checks end_session's answer.
func TestUploadShapes(t *testing.T) { eachSetup(t, testUploadShapes) }

func testUploadShapes(t *testing.T, start startFunc) {
	in := start(t, map[string]string{"clerk": "correct horse battery"})
	dir := t.TempDir()
	// the profile attachments_letterhead names, as the operator keeps it
	in.putSetting("profiles/DEM00001/letterhead-a4.json", `{"template":"letterhead-a4","duplex":true}`)
	// the senders the email and SMS shapes use, approved as an operator does
	for _, args := range [][]string{{"-email", "clinic.example.com.au"}, {"-email", "acmebank.example.com"}, {"-sms", "ACMEBANK"}} {
		if out, err := in.admin("", append([]string{"account", "sender", "add", "DEM00001"}, args...)...); err != nil {
			t.Fatalf("sender add %v: %v\n%s", args, err, out)
		}
	}
	for _, sh := range shapes(t) {
		a := in.curlAuth(sh.auth, "clerk", "correct horse battery")
		code, epid := in.curl(append(a, in.url+"/publicinterface/get_session_id.text?account=DEM00001")...)
		epid = strings.TrimSpace(epid)
		if code != 200 || len(epid) != 28 {
			t.Fatalf("%s: get_session_id: %d %q", sh.name, code, epid)
		}
		for _, fn := range sh.order {
			p := filepath.Join(dir, fn)
			os.WriteFile(p, sh.files[fn], 0o644)
			if code, body := in.curl(append(a, "-T", p, in.url+"/direct_upload/"+epid+"/"+fn)...); code != 201 {
				t.Fatalf("%s: PUT %s: %d %s", sh.name, fn, code, body)
			}
		}
		code, body := in.curl(append(a, in.url+"/publicinterface/end_session.json?session_id="+epid)...)
		var res struct {
			Result, Status, Error string
			Files                 []struct{ Name, SHA1 string }
		}
		if err := json.Unmarshal([]byte(body), &res); err != nil || code != 200 || res.Result != "ok" {
			t.Errorf("%s: end_session %d: %s", sh.name, code, body)
			continue
		}
		if len(res.Files) != len(sh.order) {
			t.Errorf("%s: end_session lists %d files, uploaded %d", sh.name, len(res.Files), len(sh.order))
		}
		wantStatus := "received"
		if sh.name == "auto" {
			wantStatus = "queued_auto"
		}
		if res.Status != wantStatus {
			t.Errorf("%s: status %q, want %q", sh.name, res.Status, wantStatus)
		}
		// end_session is idempotent
		if code, again := in.curl(append(a, in.url+"/publicinterface/end_session.json?session_id="+epid)...); code != 200 || again != body {
			t.Errorf("%s: second end_session differs: %d %s", sh.name, code, again)
		}
	}
	// letters by reference, lodged or held
	code, got := in.rpc(`{"jsonrpc":"2.0","id":1,"method":"get_letter_status","params":{"account":"DEM00001","refs":["INV-2024-0001","INV-2024-0002","nosuchref"]}}`)
	var st struct {
		Result struct {
			Letters []struct {
				EPID, Ref, Status string
				Transport         any
			}
		}
	}
	if err := json.Unmarshal([]byte(got), &st); err != nil || code != 200 || len(st.Result.Letters) != 3 {
		t.Fatalf("get_letter_status: %d %s", code, got)
	}
	if l := st.Result.Letters[2]; l.Ref != "nosuchref" || l.Status != "Unknown" || l.EPID != "" || l.Transport != nil {
		t.Errorf("unknown ref: %+v, want only ref nosuchref and status Unknown", l)
	}
	// post waits for the cancellation window; email is held while this
	// server has no email gateway
	for i, want := range []struct{ ref, transport, status string }{{"INV-2024-0001", "POST", "Received"}, {"INV-2024-0002", "EMAIL", "Held"}} {
		l := st.Result.Letters[i]
		if l.Ref != want.ref || l.Transport != want.transport || len(l.EPID) != 28 || l.Status != want.status {
			t.Errorf("letter %d: %+v, want ref %s by %s, %s", i, l, want.ref, want.transport, want.status)
		}
	}
}

// TestUploadStatusCodes: every status code of the specification's table.
func TestUploadStatusCodes(t *testing.T) { eachSetup(t, testUploadStatusCodes) }

func testUploadStatusCodes(t *testing.T, start startFunc) {
	in := start(t, map[string]string{"clerk": "correct horse battery"})
	dir := t.TempDir()
	pdf := filepath.Join(dir, "a.pdf")
	os.WriteFile(pdf, pdfPages(1), 0o644)
	zipAsPDF := filepath.Join(dir, "z.pdf")
	os.WriteFile(zipAsPDF, xpsPages(1), 0o644)
	bearer := []string{"-H", "Authorization: Bearer " + in.key}
	_, epid := in.curl(append(bearer, in.url+"/publicinterface/get_session_id.text?account=DEM00001")...)
	epid = strings.TrimSpace(epid)
	f := func(want int, args ...string) {
		t.Helper()
		if code, body := in.curl(args...); code != want {
			t.Errorf("%q: %d, want %d: %s", args, code, want, body)
		}
	}
	put := func(name, file string) []string {
		return append(append([]string{}, bearer...), "-T", file, in.url+"/direct_upload/"+epid+"/"+name)
	}
	f(201, put("a.pdf", pdf)...)
	f(201, put("a.pdf", pdf)...) // replaced
	f(403, put("a.exe", pdf)...)
	f(403, put("z.pdf", zipAsPDF)...) // content is not a PDF
	f(500, put("noextension", pdf)...)
	f(400, put("dir%2Fa.pdf", pdf)...)
	f(404, append(append([]string{}, bearer...), "-T", pdf, in.url+"/direct_upload/ZZZZZZZZZZZZZZZZZZZZZZZZZZZZ/a.pdf")...)
	f(401, "-T", pdf, in.url+"/direct_upload/"+epid+"/a.pdf")
	f(400, append(append([]string{}, bearer...), in.url+"/publicinterface/get_session_id.text")...)
	f(403, append(append([]string{}, bearer...), in.url+"/publicinterface/get_session_id.text?account=ABC12345")...)
	f(200, append(append([]string{}, bearer...), in.url+"/publicinterface/end_session.json?session_id="+epid)...)
	// another account's credentials get 403
	if out, err := in.admin("", "account", "add", "-name", "Other", "OTH00001"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	key, err := in.admin("", "key", "create", "-account", "OTH00001")
	if err != nil {
		t.Fatalf("%v %s", err, key)
	}
	other := regexp.MustCompile(`lk_[A-Za-z0-9_\-]+`).FindString(key)
	f(403, "-H", "Authorization: Bearer "+other, in.url+"/publicinterface/end_session.json?session_id="+epid)
	// multipart: one mailing per request, 20 MB combined limit
	meta := filepath.Join(dir, "m.json")
	os.WriteFile(meta, []byte(`{"letters":[{"postal":["Jo Citizen","10 Jones St","Melbourne VIC 3000"]}]}`), 0o644)
	f(200, append(append([]string{}, bearer...), "-F", "file=@"+pdf, "-F", "file=@"+meta, in.url+"/publicinterface/mpf_upload?account=DEM00001")...)
	big := filepath.Join(dir, "big.pdf")
	os.WriteFile(big, append(pdfPages(1), bytes.Repeat([]byte("%"), 21<<20)...), 0o644)
	f(413, append(append([]string{}, bearer...), "-F", "file=@"+big, in.url+"/publicinterface/mpf_upload?account=DEM00001")...)
	// a large upload without credentials: the challenge comes before the body is sent
	f(401, "-T", big, in.url+"/direct_upload/"+epid+"/big.pdf")
}

// TestUploadPythonDigest: Python's requests with HTTPDigestAuth opens a
// session, uploads and ends it.
func TestUploadPythonDigest(t *testing.T) { eachSetup(t, testUploadPythonDigest) }

func testUploadPythonDigest(t *testing.T, start startFunc) {
	in := start(t, map[string]string{"clerk": "correct horse battery"})
	dir := t.TempDir()
	pdf := filepath.Join(dir, "letter.pdf")
	os.WriteFile(pdf, pdfPages(2), 0o644)
	script := `
import sys, requests
from requests.auth import HTTPDigestAuth
url, cert, pdf, spread = sys.argv[1:5]
s = requests.Session()
s.auth = HTTPDigestAuth("clerk", "correct horse battery")
s.verify = cert
if spread == "spread":
    # a new connection each request: the balancer sends each to the next
    # node, which verifies the Digest nonce another node gave
    s.headers["Connection"] = "close"
r = s.get(url + "/publicinterface/get_session_id.json", params={"account": "DEM00001"})
assert r.status_code == 200, (r.status_code, r.text)
epid = r.json()["session_id"]
with open(pdf, "rb") as f:
    r = s.put(url + "/direct_upload/" + epid + "/letter.pdf", data=f.read(), headers={"Content-Type": "application/pdf"})
assert r.status_code == 201, (r.status_code, r.text)
meta = b'{"letters":[{"postal":["Jo Citizen","3/72 Charles St","St Kilda VIC 3182"],"reference":"py-1"}]}'
r = s.put(url + "/direct_upload/" + epid + "/meta.json", data=meta, headers={"Content-Type": "application/json"})
assert r.status_code == 201, (r.status_code, r.text)
r = s.get(url + "/publicinterface/end_session.xml", params={"session_id": epid})
assert r.status_code == 200 and "<Result>ok</Result>" in r.text, (r.status_code, r.text)
r = requests.get(url + "/publicinterface/get_session_id.json", params={"account": "DEM00001"}, verify=cert,
                 auth=HTTPDigestAuth("clerk", "wrong"))
assert r.status_code == 401, r.status_code
print("ALL OK")
`
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	spread := "keep-alive"
	if in.shared() {
		spread = "spread"
	}
	cmd := exec.CommandContext(ctx, "python3", "-c", script, in.url, in.cert, pdf, spread)
	// requests prefers REQUESTS_CA_BUNDLE over a Session's verify.
	cmd.Env = append(os.Environ(), "REQUESTS_CA_BUNDLE="+in.cert)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ALL OK") {
		t.Fatalf("python: %v\n%s", err, out)
	}
}
