package portal_test

import (
	"bytes"
	"errors"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/testdoc"
	"github.com/lodge-mail/lodge/library"
)

// libMaxBytes is the fixture library's limit on one document.
const libMaxBytes = 256 << 10

// uploadDoc posts the documents form: the CSRF token (when not empty)
// first, then the file, as a browser sends it.
func (b *browser) uploadDoc(csrf, name string, body []byte) *browser {
	b.f.t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if csrf != "" {
		w.WriteField("csrf", csrf)
	}
	fw, _ := w.CreateFormFile("file", name)
	fw.Write(body)
	w.Close()
	req, _ := http.NewRequest("POST", b.f.url+"/portal/documents/upload", &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return b.do(req)
}

func (f *fixture) libHas(account, name string) bool {
	f.t.Helper()
	_, err := f.lib.Get(account, name)
	if err != nil && !errors.Is(err, library.ErrNotFound) {
		f.t.Fatal(err)
	}
	return err == nil
}

// TestDocuments: upload, list, preview and delete a document; refused
// uploads say why and store nothing; a hostile file name is escaped.
func TestDocuments(t *testing.T) {
	f := newFixture(t)
	b := f.browser()
	b.signIn("jo", joPass)
	b.get("/portal/documents").expect(200, "No documents yet", `enctype="multipart/form-data"`, "up to 0.25 MB", `href="/portal/documents"`)

	pdf := testdoc.PDF(2, 0)
	b.uploadDoc(b.csrf(), "terms.pdf", pdf).expect(200, "Uploaded terms.pdf (2 pages)", "terms.pdf", "PDF", "jo")
	b.uploadDoc(b.csrf(), "flyer.ps", testdoc.PostScript(3)).expect(200, "Uploaded flyer.ps (3 pages)", "PostScript")
	b.uploadDoc(b.csrf(), xssFile, testdoc.PDF(1, 0)).expect(200, "&lt;iframe src=javascript:alert(1)&gt;.pdf")
	if strings.Contains(b.body, "<iframe") {
		t.Fatal("a file name is not escaped")
	}
	if !strings.Contains(b.body, `href="/portal/documents/view?name=%3ciframe%20src%3djavascript%3aalert%281%29%3e.pdf"`) {
		t.Fatalf("the hostile name's link: %s", b.body)
	}

	// refused: each says why, nothing is stored
	f2 := func(name string, body []byte, status int, msg string) {
		t.Helper()
		b.get("/portal/documents")
		b.uploadDoc(b.csrf(), name, body).expect(status, msg)
		if f.libHas("ABC00001", name) {
			t.Fatalf("refused %q was stored", name)
		}
	}
	f2("fake.pdf", []byte("<html><script>alert(1)</script>"), 422, "the extension says PDF")
	f2("broken.pdf", []byte("%PDF-1.4\nno more\n"), 422, "Not uploaded: broken.pdf:")
	f2("m.json", []byte(`{"letters":[]}`), 422, "the library keeps documents")
	f2(`a\b.pdf`, pdf, 422, "contains a path")
	f2("big.pdf", testdoc.PDF(1, libMaxBytes+1), 413, "larger than 0.25 MB")
	// larger than the document and the form's slack: refused by its
	// Content-Length, before the body is read
	f2("huge.pdf", testdoc.PDF(1, libMaxBytes+(64<<10)), 413, "larger than 0.25 MB")
	b.get("/portal/documents")
	b.uploadDoc(b.csrf(), "", nil).expect(400, "Choose a document")

	// preview: a PDF inline, PostScript downloaded
	b.get("/portal/documents/view?name=terms.pdf")
	if b.status != 200 || b.body != string(pdf) || b.header.Get("Content-Type") != "application/pdf" ||
		b.header.Get("Content-Disposition") != `inline; filename=terms.pdf` {
		t.Fatalf("view: %d %q %q", b.status, b.header.Get("Content-Type"), b.header.Get("Content-Disposition"))
	}
	b.get("/portal/documents/view?name=flyer.ps")
	if b.status != 200 || b.header.Get("Content-Type") != "application/postscript" || !strings.HasPrefix(b.header.Get("Content-Disposition"), "attachment;") {
		t.Fatalf("view PostScript: %d %q %q", b.status, b.header.Get("Content-Type"), b.header.Get("Content-Disposition"))
	}
	b.get("/portal/documents/view?name=" + url.QueryEscape(xssFile))
	if b.status != 200 || b.header.Get("Content-Disposition") != `inline; filename="<iframe src=javascript:alert(1)>.pdf"` {
		t.Fatalf("view the hostile name: %d %q", b.status, b.header.Get("Content-Disposition"))
	}
	b.get("/portal/documents/view?name=nothing.pdf").expect(404, "no such page")

	// replace: same name, new content
	b.get("/portal/documents")
	b.uploadDoc(b.csrf(), "terms.pdf", testdoc.PDF(4, 0)).expect(200, "Uploaded terms.pdf (4 pages)")
	if docs, _ := f.lib.List("ABC00001"); len(docs) != 3 {
		t.Fatalf("documents after a replace: %+v", docs)
	}

	// delete: asked first, then done
	b.get("/portal/documents/delete?name=terms.pdf").expect(200, "Delete terms.pdf?", "4 pages", `name="name" value="terms.pdf"`)
	if !f.libHas("ABC00001", "terms.pdf") {
		t.Fatal("deleted by asking")
	}
	b.post("/portal/documents/delete", url.Values{"csrf": {b.csrf()}, "name": {"terms.pdf"}}).expect(200, "Deleted terms.pdf.")
	if f.libHas("ABC00001", "terms.pdf") {
		t.Fatal("not deleted")
	}
	b.get("/portal/documents/view?name=terms.pdf").expect(404)
	b.get("/portal/documents/delete?name=terms.pdf").expect(404)
}

// TestDocumentsOtherAccount: another account's document is 404 to view,
// to ask to delete and to delete, as a missing one is; it is not listed
// and stays.
func TestDocumentsOtherAccount(t *testing.T) {
	f := newFixture(t)
	eve := f.browser()
	eve.signIn("eve", evePass)
	eve.get("/portal/documents")
	eve.uploadDoc(eve.csrf(), "eve-secret.pdf", testdoc.PDF(1, 0)).expect(200, "eve-secret.pdf")

	jo := f.browser()
	jo.signIn("jo", joPass)
	jo.get("/portal/documents").expect(200, "No documents yet")
	if strings.Contains(jo.body, "eve-secret") {
		t.Fatal("another account's document is listed")
	}
	token := jo.csrf()
	jo.get("/portal/documents/view?name=eve-secret.pdf").expect(404, "no such page")
	jo.get("/portal/documents/delete?name=eve-secret.pdf").expect(404, "no such page")
	jo.post("/portal/documents/delete", url.Values{"csrf": {token}, "name": {"eve-secret.pdf"}}).expect(404, "no such page")
	if !f.libHas("ABC00002", "eve-secret.pdf") {
		t.Fatal("another account's document was deleted")
	}
	// jo's own document of the same name is jo's
	jo.get("/portal/documents")
	jo.uploadDoc(jo.csrf(), "eve-secret.pdf", testdoc.PDF(2, 0)).expect(200, "Uploaded eve-secret.pdf (2 pages)")
	if d, _ := f.lib.Get("ABC00002", "eve-secret.pdf"); d.Pages != 1 {
		t.Fatalf("another account's document changed: %+v", d)
	}
}

// TestDocumentsCSRF: an upload or a delete without the session's token
// is refused and changes nothing.
func TestDocumentsCSRF(t *testing.T) {
	f := newFixture(t)
	b := f.browser()
	b.signIn("jo", joPass)
	b.get("/portal/documents")
	token := b.csrf()
	b.uploadDoc("", "a.pdf", testdoc.PDF(1, 0)).expect(403, "security token")
	b.uploadDoc("not the token", "a.pdf", testdoc.PDF(1, 0)).expect(403, "security token")
	if f.libHas("ABC00001", "a.pdf") {
		t.Fatal("stored without the token")
	}
	b.uploadDoc(token, "a.pdf", testdoc.PDF(1, 0)).expect(200, "Uploaded a.pdf")
	b.post("/portal/documents/delete", url.Values{"name": {"a.pdf"}}).expect(403, "security token")
	b.post("/portal/documents/delete", url.Values{"csrf": {"x"}, "name": {"a.pdf"}}).expect(403, "security token")
	if !f.libHas("ABC00001", "a.pdf") {
		t.Fatal("deleted without the token")
	}
	// a multipart form to another route is not let through without its check
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	w.WriteField("csrf", token)
	w.WriteField("name", "a.pdf")
	w.Close()
	req, _ := http.NewRequest("POST", f.url+"/portal/documents/delete", &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	b.do(req).expect(403, "security token")
	if !f.libHas("ABC00001", "a.pdf") {
		t.Fatal("deleted by a multipart form")
	}
}
