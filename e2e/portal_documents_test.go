package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/production"
)

// TestPortalDocumentsBrowser: a clerk uploads a document to the account's
// library in a real browser; a later session through the API uploads only
// metadata naming it (spec section 1), end_session accepts it, the
// letters appear (get_letter_status, the portal's mailing page) and the
// print batch made of them holds the library document's text (pdftotext).
// The document is then deleted in the browser, which the mailing does not
// notice. Every page is screenshotted and checked by axe-core.
func TestPortalDocumentsBrowser(t *testing.T) { eachSetup(t, testPortalDocumentsBrowser) }

func testPortalDocumentsBrowser(t *testing.T, start startFunc) {
	testenv.Tool(t, "chromium") // skip before starting lodge when there is none
	const clerkPass = "clerk's long password 12"
	in := start(t, map[string]string{"clerk": clerkPass}, "-cancel-window", "0s")
	doc := mailDoc(t, mailpdf.Page{Text: "Library terms page one"}, mailpdf.Page{Text: "Library terms page two"})
	path := filepath.Join(t.TempDir(), "terms 2026.pdf")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}

	b := newPortalBrowser(t, in)
	b.signIn("clerk", clerkPass)

	// the library, from the navigation: empty
	b.load("open Documents", 200, chromedp.Click(chromedp.CSS(`nav a[href="/portal/documents"]`)))
	b.expect("the empty library", []string{"Documents", "No documents yet", "PDF, PostScript or XPS, up to 32 MB"})
	b.screenshot("documents-empty")

	// upload the document
	b.do("choose the file", chromedp.SetUploadFiles(chromedp.ID("file"), []string{path}))
	b.load("upload", 200, chromedp.Click(chromedp.CSS(`form[action="/portal/documents/upload"] button[type=submit]`)))
	if u := b.location(); u != in.url+"/portal/documents" {
		t.Fatalf("the upload led to %s", u)
	}
	b.expect("uploaded", []string{"Uploaded terms 2026.pdf (2 pages)", "terms 2026.pdf\tPDF\t2\t", "clerk"}, "No documents yet")
	b.screenshot("documents-list")

	// a mailing whose metadata names it, nothing else uploaded
	epid, res := sendMailing(t, in, "m.json", `{"title":"Library mailing","letters":[
		{"postal":["Jo Citizen","10 Jones St","Ultimo NSW 2007"],"file_name":"terms 2026.pdf","reference":"LIB-1"},
		{"postal":["Al Citizen","10 Jones St","Melbourne VIC 3000"],"file_name":"terms 2026.pdf","page_start":1,"page_end":1,"reference":"LIB-2"}]}`)
	if files := fmt.Sprint(res["files"]); !strings.Contains(files, "apath:portal!terms 2026.pdf") {
		t.Fatalf("end_session's files do not list the library document: %s", files)
	}
	waitProduced(t, in)
	for _, l := range letterStatuses(t, in, "LIB-1", "LIB-2") {
		if l["epid"] != epid || l["status"] == "Held" || l["status"] == "Failed" {
			t.Fatalf("a letter of the library mailing: %v", l)
		}
	}

	// the print batch holds the library document's pages
	dir, man := batchOf(t, in, epid)
	if len(man.Letters) != 2 {
		t.Fatalf("the batch's letters: %+v", man.Letters)
	}
	text := pdftotext(t, filepath.Join(dir, production.BatchPDF))
	if strings.Count(text, "Library terms page one") != 1 || strings.Count(text, "Library terms page two") != 2 {
		t.Fatalf("the batch does not hold the library document's pages (page one once, two twice):\n%s", text)
	}

	// the mailing in the portal lists the document and its letters
	b.load("open the mailing", 200, chromedp.Navigate(in.url+"/portal/mailings/"+epid))
	b.expect("the mailing", []string{"Library mailing", "terms 2026.pdf", "LIB-1", "LIB-2"})

	// delete the document: asked, then done; the mailing keeps its copy
	b.load("back to Documents", 200, chromedp.Click(chromedp.CSS(`nav a[href="/portal/documents"]`)))
	b.load("ask to delete", 200, chromedp.Click(chromedp.CSS(`a[href^="/portal/documents/delete"]`)))
	b.expect("the question", []string{"Delete terms 2026.pdf?", "Mailings already accepted keep their own copy"})
	b.screenshot("document-delete")
	b.load("delete", 200, chromedp.Click(chromedp.CSS(`button.danger`)))
	b.expect("deleted", []string{"Deleted terms 2026.pdf.", "No documents yet"})
	b.load("the mailing after the deletion", 200, chromedp.Navigate(in.url+"/portal/mailings/"+epid))
	b.expect("the mailing after the deletion", []string{"Library mailing", "terms 2026.pdf", "LIB-1", "LIB-2"})
}
