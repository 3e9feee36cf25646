package portal_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/testdoc"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/upload"
)

// The fixture's upload limits: small, so that a test reaches them.
const (
	autoMaxFiles = 3
	autoMaxBytes = 256 << 10
)

// newUploads is the upload interface behind the fixture's /portal/auto:
// its store in dir, ending sessions into mr (pages counted in process).
func newUploads(t *testing.T, dir string, eng *engine.Engine, mr *pipeline.Mailroom) (*upload.Handler, *upload.Store) {
	t.Helper()
	st, err := upload.Open(filepath.Join(dir, "upload"), upload.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	log := slog.New(slog.DiscardHandler)
	lodger := upload.NewLodger(st, eng, mr, upload.LodgerConfig{InProcess: true}, log)
	return upload.NewHandler(st, lodger, upload.Config{}, log), st
}

var quoter = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// part is one field of a multipart form: a file when file is set.
type part struct {
	name, file string
	body       []byte
}

func field(name, value string) part           { return part{name: name, body: []byte(value)} }
func file(name string, body []byte) part      { return part{name: "file", file: name, body: body} }
func formBody(parts ...part) (string, []byte) { return formBodyOf(parts) }

func formBodyOf(parts []part) (string, []byte) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		if p.file != "" || p.name == "file" {
			// the name quoted, as mime/multipart's CreateFormFile quotes it
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, p.name, quoter.Replace(p.file)))
			h.Set("Content-Type", "application/octet-stream")
		} else {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"`, p.name))
		}
		pw, _ := w.CreatePart(h)
		pw.Write(p.body)
	}
	w.Close()
	return w.FormDataContentType(), b.Bytes()
}

// upload posts the upload form: the CSRF token of the last page first,
// then parts.
func (b *browser) upload(parts ...part) *browser {
	b.f.t.Helper()
	return b.uploadRaw(append([]part{field("csrf", b.csrf())}, parts...)...)
}

func (b *browser) uploadRaw(parts ...part) *browser {
	b.f.t.Helper()
	ct, body := formBodyOf(parts)
	req, _ := http.NewRequest("POST", b.f.url+"/portal/auto", bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	return b.do(req)
}

// mailingsOf lists an account's mailings in the mailroom.
func (f *fixture) mailingsOf(account string) []pipeline.Mailing {
	f.t.Helper()
	ms, err := f.mr.Store().Mailings(account, time.Time{}, 1000)
	if err != nil {
		f.t.Fatal(err)
	}
	return ms
}

// storedBlobs lists the files the upload store holds (its blob
// directories' entries).
func (f *fixture) storedBlobs() []string {
	f.t.Helper()
	var out []string
	root := filepath.Join(filepath.Dir(filepath.Dir(f.uploads.BlobPath("X", upload.File{Blob: "y"}))))
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

var reviewRE = regexp.MustCompile(`/portal/auto/([0-9A-Za-z]+)`)

func TestAutoUpload(t *testing.T) {
	f := newFixture(t)
	jo := f.browser()
	jo.signIn("jo", joPass)
	jo.get("/portal/auto").expect(200, "Upload letters", `enctype="multipart/form-data"`, `name="file"`,
		"Up to 3 files and 0.25 MB at a time", `href="/portal/auto"`)
	before := len(f.mailingsOf("ABC00001"))

	// a title and a file name that would run script, and two documents
	jo.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	jo.upload(field("title", xssTitle), file(`C:\fakepath\`+xssFile, testdoc.PDF(2, 0)), file("more.ps", testdoc.PostScript(1)))
	if jo.status != 303 {
		t.Fatalf("upload: %d %s", jo.status, jo.body)
	}
	loc := jo.header.Get("Location")
	m := reviewRE.FindStringSubmatch(loc)
	if m == nil {
		t.Fatalf("the upload leads to %q, not a review", loc)
	}
	epid := m[1]
	loc = "/portal/auto/" + epid
	jo.c.CheckRedirect = nil

	// one mailing of jo's account, on customer hold, for the auto
	// processor, with the documents (and not the form's metadata)
	ms := f.mailingsOf("ABC00001")
	if len(ms) != before+1 || ms[0].EPID != epid {
		t.Fatalf("mailings of ABC00001 after the upload: %d (was %d), newest %s, want %s", len(ms), before, ms[0].EPID, epid)
	}
	got := ms[0]
	if got.Account != "ABC00001" || got.User != "jo" || !got.Auto || !got.CustHold || got.Title != xssTitle || got.Letters != 0 {
		t.Fatalf("the mailing: %+v", got)
	}
	if len(got.Files) != 2 || got.Files[0].Name != xssFile || got.Files[0].Pages != 2 || got.Files[1].Name != "more.ps" || got.Files[1].Kind != "ps" {
		t.Fatalf("the mailing's files: %+v", got.Files)
	}
	if n := len(f.mailingsOf("ABC00002")); n != 1 {
		t.Fatalf("eve's account has %d mailings, want its 1", n)
	}

	// the review while the auto processor reads: a reload link, no script,
	// the customer's strings escaped
	jo.get(loc).expect(200, "Review the letters of", epid, "on hold", "Reading your letters", "2 files (3 pages)",
		`<a class="button" href="/portal/auto/`+epid+`">Reload to see the letters</a>`,
		"2 files uploaded as mailing "+epid+", on hold until you confirm it.",
		"&lt;script&gt;alert(&#34;title&#34;)&lt;/script&gt;", "&lt;iframe src=javascript:alert(1)&gt;.pdf")
	for _, raw := range []string{xssTitle, "<iframe", "<script>", "http-equiv"} {
		if strings.Contains(jo.body, raw) {
			t.Fatalf("the review page holds %q unescaped or a refresh: %s", raw, jo.body)
		}
	}

	// the mailing's page leads to the review
	jo.get("/portal/mailings/"+epid).expect(200, `<a href="/portal/auto/`+epid+`">review them</a>`)

	// another account: the same 404 as a mailing that does not exist
	eve := f.browser()
	eve.signIn("eve", evePass)
	eve.get(loc).expect(404, "There is no such page")
	if strings.Contains(eve.body, epid) || strings.Contains(eve.body, "alert(") {
		t.Fatalf("eve sees jo's upload: %s", eve.body)
	}
	eve.get("/portal/auto/NOSUCHEPID").expect(404, "There is no such page")
	eve.get("/portal/mailings").expect(200)
	if strings.Contains(eve.body, epid) {
		t.Fatal("jo's upload is listed for eve")
	}
	// and a mailing with letters from metadata is reviewed on its own page
	jo.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	jo.get("/portal/auto/FIX1")
	if jo.status != 303 || !strings.HasSuffix(jo.header.Get("Location"), "/portal/mailings/FIX1") {
		t.Fatalf("the review of a metadata mailing: %d %q", jo.status, jo.header.Get("Location"))
	}
}

// TestAutoReview is the review once the letters are read (recorded here as
// the extract stage records them): every letter's address lines, verdict,
// pages, reference, channels and hold reason; the held address corrected
// through the letter's page; confirm releases the customer's hold.
func TestAutoReview(t *testing.T) {
	f := newFixture(t)
	v := func(status, msg string) *pipeline.Verdict {
		return &pipeline.Verdict{Status: status, Nation: "AU", Message: msg}
	}
	doc := func(first, last int) []pipeline.DocPart {
		return []pipeline.DocPart{{File: "run.pdf", PageStart: first, PageEnd: last}}
	}
	letters := []pipeline.Letter{
		{Idx: 0, Reference: "A-1", Channels: []string{"postal"}, Postal: []string{"Jo Citizen", "10 Jones St", "Ultimo NSW 2007"}, Address: v("matched", ""), Documents: doc(0, 1)},
		{Idx: 1, Reference: xssRef, Channels: []string{"postal"}, Postal: []string{xssLine, "1 Nowhere Rd", "Atlantis VIC 2999"}, Address: v("invalid", "no such locality"), Documents: doc(2, 2)},
		{Idx: 2, Channels: []string{"email", "postal"}, Email: "jo@example.com", Postal: []string{"Jo Citizen", "10 Jones St", "Ultimo NSW 2007"}, Address: v("matched", ""), Documents: doc(3, 3)},
	}
	m := pipeline.Mailing{EPID: "AUTO1", Account: "ABC00001", User: "jo", Auto: true, CustHold: true, Title: "Read letters", Letters: len(letters),
		Files: []pipeline.File{{Name: "run.pdf", Kind: "pdf", Pages: 4}}}
	if err := f.mr.Submit(m, letters); err != nil {
		t.Fatal(err)
	}
	jo := f.browser()
	jo.signIn("jo", joPass)
	jo.get("/portal/auto/AUTO1").expect(200, "Review the letters of", "Read letters", "3 letters", "Letters 1–3 of 3",
		"Jo Citizen<br>10 Jones St<br>Ultimo NSW 2007<br>", "run.pdf</span> p.&nbsp;1–2", "run.pdf</span> p.&nbsp;3<", "A-1",
		"email, postal", "email: jo@example.com", "no such locality", "invalid postal address",
		"the mailing is on customer hold", "email delivery is not available", "&lt;svg onload=alert(1)&gt;", "&#34;&gt;&lt;img src=x onerror=alert(&#39;ref&#39;)&gt;",
		`action="/portal/mailings/AUTO1/release"`, "Confirm and release",
		`<a class="fix" href="/portal/mailings/AUTO1/letters/1">Correct<span class="sr"> the address of letter 2</span></a>`)
	if strings.Contains(jo.body, xssLine) || strings.Contains(jo.body, "<img") || strings.Count(jo.body, ">Correct<") != 1 {
		t.Fatalf("the review: %s", jo.body)
	}
	for i, want := range []string{"Held customer", "Held address", "Held channel"} {
		if l := f.letter("AUTO1", i); l.Status+" "+l.Hold != want {
			t.Fatalf("letter %d before confirming: %s %s, want %s", i, l.Status, l.Hold, want)
		}
	}

	// confirm: the customer's hold ends, the invalid address stays held
	jo.post("/portal/mailings/AUTO1/release", url.Values{"csrf": {jo.csrf()}, "whole": {"1"}}).expect(200, "1 letter released.", "Not released: letter 2", "letter 3")
	for i, want := range []string{"Received ", "Held address", "Held channel"} {
		if l := f.letter("AUTO1", i); l.Status+" "+l.Hold != want {
			t.Fatalf("letter %d after confirming: %s %s, want %s", i, l.Status, l.Hold, want)
		}
	}
	jo.get("/portal/auto/AUTO1").expect(200, "This mailing was confirmed")
	if strings.Contains(jo.body, "Confirm and release") {
		t.Fatal("a confirmed mailing offers to confirm again")
	}
	// correct the held address: the letter goes on
	jo.get("/portal/mailings/AUTO1/letters/1")
	jo.post("/portal/mailings/AUTO1/letters/1/correct", url.Values{"csrf": {jo.csrf()}, "address": {"Jo Citizen\n10 Jones St\nUltimo NSW 2007"}}).
		expect(200, "Letter 2 corrected")
	if l := f.letter("AUTO1", 1); l.Status != pipeline.Received {
		t.Fatalf("the corrected letter: %s %s", l.Status, l.Hold)
	}
	jo.get("/portal/auto/AUTO1").expect(200, "Ultimo NSW 2007")
	if strings.Contains(jo.body, ">Correct<") {
		t.Fatal("a corrected letter still offers correction")
	}
}

func TestAutoUploadCSRF(t *testing.T) {
	f := newFixture(t)
	jo := f.browser()
	jo.signIn("jo", joPass)
	jo.get("/portal/auto")
	token := jo.csrf()
	pdf := file("letters.pdf", testdoc.PDF(1, 0))
	check := func(what string) {
		t.Helper()
		if jo.status != 403 || !strings.Contains(jo.body, "security token") {
			t.Fatalf("%s: %d %s", what, jo.status, jo.body)
		}
		if n := len(f.mailingsOf("ABC00001")); n != 2 {
			t.Fatalf("%s: ABC00001 has %d mailings, want its 2", what, n)
		}
		if b := f.storedBlobs(); len(b) != 0 {
			t.Fatalf("%s: the upload store keeps %v", what, b)
		}
	}
	jo.uploadRaw(pdf)
	check("no token")
	wrong := "x" + token[1:]
	if wrong == token { // one time in 64
		wrong = "y" + token[1:]
	}
	jo.uploadRaw(field("csrf", wrong), pdf)
	check("a wrong token")
	jo.uploadRaw(pdf, field("csrf", token))
	check("the token after the file")
	eve := f.browser()
	eve.signIn("eve", evePass)
	eve.get("/portal/auto")
	jo.uploadRaw(field("csrf", eve.csrf()), pdf)
	check("another session's token")
	// not signed in at all
	anon := f.browser()
	ct, body := formBody(field("csrf", token), pdf)
	req, _ := http.NewRequest("POST", f.url+"/portal/auto", bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	anon.do(req)
	if anon.status != 403 || len(f.storedBlobs()) != 0 {
		t.Fatalf("an upload without a session: %d %s", anon.status, anon.body)
	}
}

// TestAutoUploadRefused: each bad upload is answered with the form and a
// message naming the file, and leaves no mailing and no stored file.
func TestAutoUploadRefused(t *testing.T) {
	f := newFixture(t)
	jo := f.browser()
	jo.signIn("jo", joPass)
	pdf := testdoc.PDF(1, 0)
	check := func(what string, status int, want ...string) {
		t.Helper()
		if jo.status != status {
			t.Fatalf("%s: status %d, want %d: %s", what, jo.status, status, jo.body)
		}
		for _, w := range want {
			if !strings.Contains(jo.body, w) {
				t.Fatalf("%s: the answer lacks %q: %s", what, w, jo.body)
			}
		}
		if n := len(f.mailingsOf("ABC00001")); n != 2 {
			t.Fatalf("%s: ABC00001 has %d mailings, want its 2", what, n)
		}
		if b := f.storedBlobs(); len(b) != 0 {
			t.Fatalf("%s: the upload store keeps %v", what, b)
		}
	}
	f1 := func(what string, status int, parts []part, want ...string) {
		t.Helper()
		jo.get("/portal/auto")
		jo.upload(parts...)
		check(what, status, want...)
	}
	f1("no file", 400, []part{field("title", "x"), file("", nil)}, "Choose at least one PDF, PostScript or XPS file.")
	f1("a program", 403, []part{file("setup.exe", []byte("MZ..."))}, "setup.exe: file type .exe is not accepted")
	f1("metadata", 403, []part{file("good.pdf", pdf), file("m.json", []byte(`{"letters":[]}`))}, "m.json: file type .json is not accepted here: send pdf, ps, xps", "Nothing was uploaded")
	f1("a name that would run script", 403, []part{file("<img src=x onerror=alert(1)>.exe", []byte("MZ"))},
		"&lt;img src=x onerror=alert(1)&gt;.exe")
	f1("content not of its type", 403, []part{file("good.pdf", pdf), file("fake.pdf", testdoc.PostScript(1))}, "fake.pdf", "the extension says")
	f1("empty", 403, []part{file("empty.xps", nil)}, "empty.xps", "is empty")
	f1("twice", 400, []part{file("a.pdf", pdf), file("a.pdf", pdf)}, "a.pdf was sent twice")
	f1("too many", 400, []part{file("1.pdf", pdf), file("2.pdf", pdf), file("3.pdf", pdf), file("4.pdf", pdf)}, "More than 3 files", "at most 3 files")
	f1("a long title", 400, []part{field("title", strings.Repeat("é", 201)), file("a.pdf", pdf)}, "The title is longer than 200 characters")
	f1("a title with a control character", 400, []part{field("title", "a\x00b"), file("a.pdf", pdf)}, "The title holds characters that cannot be used")
	f1("a document that cannot be read", 400, []part{file("good.pdf", pdf), file("broken.pdf", []byte("%PDF-1.4\nnot a document at all\n"))},
		"The files were refused", "broken.pdf: ")
	if strings.Contains(jo.body, "<img src") {
		t.Fatal("a file name unescaped")
	}

	// too large: declared, and sent without a length (chunked)
	big := bytes.Repeat([]byte("0"), autoMaxBytes)
	f1("declared too large", 413, []part{file("a.pdf", pdf), file("big.pdf", append([]byte("%PDF-1.4\n"), big...))}, "larger than 0.25 MB in all")
	jo.get("/portal/auto")
	ct, body := formBody(field("csrf", jo.csrf()), file("a.pdf", pdf), file("big.pdf", append([]byte("%PDF-1.4\n"), big...)))
	req, _ := http.NewRequest("POST", f.url+"/portal/auto", io.MultiReader(bytes.NewReader(body)))
	req.Header.Set("Content-Type", ct)
	jo.do(req)
	if req.ContentLength > 0 {
		t.Fatal("the request declared its length")
	}
	check("chunked too large", 413, "larger than 0.25 MB in all")

	// and a good one after them all goes through
	jo.get("/portal/auto")
	jo.upload(file("a.pdf", pdf))
	if jo.status != 200 || !strings.Contains(jo.body, "Reading your letters") || len(f.mailingsOf("ABC00001")) != 3 {
		t.Fatalf("a good upload after refused ones: %d %s", jo.status, jo.body)
	}
}
