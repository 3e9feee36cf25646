package portal_test

import (
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/pipeline"
)

// TestSuggest: the live check behind the correction box answers the
// engine's verdict and suggestion, for a signed-in user only, within its
// limits.
func TestSuggest(t *testing.T) {
	f := newFixture(t)
	anon := f.browser()
	anon.get("/portal/suggest?address=" + url.QueryEscape("Jo\n10 Jones St\nUltimmo NSW 2007"))
	if anon.status == 200 && strings.Contains(anon.body, "ULTIMO") {
		t.Fatalf("suggestions answered without a session: %s", anon.body)
	}
	b := f.browser()
	b.signIn("jo", joPass).expect(200)
	f2 := func(address string, status int, want string) {
		t.Helper()
		b.get("/portal/suggest?address=" + url.QueryEscape(address))
		if b.status != status {
			t.Fatalf("%q: status %d, want %d: %s", address, b.status, status, b.body)
		}
		if ct := b.header.Get("Content-Type"); ct != "application/json" {
			t.Fatalf("%q: content type %q", address, ct)
		}
		var got struct {
			Status     string   `json:"status"`
			Suggestion []string `json:"suggestion"`
			Error      string   `json:"error"`
		}
		if err := json.Unmarshal([]byte(b.body), &got); err != nil {
			t.Fatalf("%q: %v: %s", address, err, b.body)
		}
		if s := got.Status + " " + strings.Join(got.Suggestion, " / ") + got.Error; !strings.Contains(s, want) {
			t.Fatalf("%q: %q, want %q in it", address, s, want)
		}
	}
	f2("Jo Citizen\n10 Jones St\nUltimmo NSW 2007", 200, "unmatched JO CITIZEN / 10 JONES ST / ULTIMO NSW 2007")
	f2("Jo Citizen\n10 Jones St\nUltimo NSW 2000", 200, "unmatched JO CITIZEN / 10 JONES ST / ULTIMO NSW 2007")
	f2("Jo Citizen\n10 Jones St\nUltimo NSW 2007", 200, "matched")
	f2("Jo Citizen\nx", 200, "invalid")
	f2("", 422, "1 to 7 lines")
	f2("1\n2\n3\n4\n5\n6\n7\n8", 422, "1 to 7 lines")
	f2(strings.Repeat("a", 5000), 413, "too long")

	// without script: the held letter's page offers the suggestion for
	// the address in the box as a form of its own
	token := b.get("/portal/mailings/FIX1").csrf()
	b.post("/portal/mailings/FIX1/letters/2/correct", url.Values{"csrf": {token}, "address": {"Jo Citizen\nx"}}).expect(422, "Not corrected")
	b.get("/portal/mailings/FIX1/letters/2").expect(200, `data-suggest="suggestion"`, `<script src="/portal/app.js" defer>`)
	if strings.Contains(b.body, "The address check suggests") {
		t.Fatalf("a suggestion for an address the engine has none for: %s", b.body)
	}
	b.post("/portal/mailings/FIX1/letters/2/correct", url.Values{"csrf": {token}, "address": {"Jo Citizen\n1 Nowhere Rd\nAtlantis VIC 2999"}})
	if l := f.letter("FIX1", 2); l.Status != pipeline.Held {
		t.Fatalf("an invalid correction changed the letter: %s", l.Status)
	}

	// a letter held because its window shows a misspelt address: the page
	// offers the engine's suggestion, and its form corrects to it
	err := f.mr.Store().Update([]string{"FIX1"}, func(tx pipeline.Tx) error {
		l, err := tx.Letter("FIX1", 1)
		if err != nil {
			return err
		}
		l.Postal = []string{"Jo Citizen", "10 Jones St", "Ultimmo NSW 2007"}
		l.HoldFor(f.clock.Now(), pipeline.HoldWindow, "the envelope window shows another address")
		tx.PutLetter(l)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b.get("/portal/mailings/FIX1/letters/1").expect(200, "The address check suggests", "JO CITIZEN, 10 JONES ST, ULTIMO NSW 2007",
		"<input type=\"hidden\" name=\"address\" value=\"JO CITIZEN\n10 JONES ST\nULTIMO NSW 2007\">")
	b.post("/portal/mailings/FIX1/letters/1/correct", url.Values{"csrf": {token}, "address": {"JO CITIZEN\n10 JONES ST\nULTIMO NSW 2007"}}).expect(200, "Letter 2 corrected")
	if l := f.letter("FIX1", 1); l.Status == pipeline.Held || strings.Join(l.Postal, "|") != "JO CITIZEN|10 JONES ST|ULTIMO NSW 2007" {
		t.Fatalf("after the suggested correction: %s %q", l.Status, l.Postal)
	}
}

// TestPreview: a letter's preview is the real producer's PDF, for its own
// account only; letters without documents, and purged mailings, have
// none.
func TestPreview(t *testing.T) {
	testenv.Tool(t, "gs")
	f := newFixture(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "doc.pdf")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := mailpdf.Pages(out, mailpdf.Page{Address: mailpdf.Address(0), Text: "Preview me please"}); err != nil {
		t.Fatal(err)
	}
	out.Close()
	for _, m := range []struct {
		epid, account string
		purged        bool
	}{{"DOC1", "ABC00001", false}, {"DOC2", "ABC00002", false}, {"DOC3", "ABC00001", true}} {
		ml := pipeline.Mailing{EPID: m.epid, Account: m.account, Letters: 2, Purged: m.purged,
			Files: []pipeline.File{{Name: "doc.pdf", Kind: "pdf", Path: path, Pages: 1}}}
		ls := []pipeline.Letter{
			{Idx: 0, Channels: []string{"email"}, Email: "jo@example.com", Documents: []pipeline.DocPart{{File: "doc.pdf", PageEnd: -1}}},
			{Idx: 1, Channels: []string{"email"}, Email: "jo@example.com"},
		}
		if err := f.mr.Submit(ml, ls); err != nil {
			t.Fatal(err)
		}
	}
	b := f.browser()
	b.signIn("jo", joPass).expect(200)
	b.get("/portal/mailings/DOC1/letters/0").expect(200, `href="/portal/mailings/DOC1/letters/0/preview.pdf"`)
	b.get("/portal/mailings/DOC1/letters/0/preview.pdf").expect(200, "%PDF-")
	if ct, cd := b.header.Get("Content-Type"), b.header.Get("Content-Disposition"); ct != "application/pdf" || !strings.HasPrefix(cd, "inline;") {
		t.Fatalf("preview served as %q, %q", ct, cd)
	}
	got := filepath.Join(dir, "got.pdf")
	os.WriteFile(got, []byte(b.body), 0o600)
	text, err := exec.Command("pdftotext", got, "-").Output()
	if err != nil || !strings.Contains(string(text), "Preview me please") {
		t.Fatalf("the preview reads %q (%v)", text, err)
	}
	if b.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("a preview may be cached: %q", b.header.Get("Cache-Control"))
	}
	b.get("/portal/mailings/DOC1/letters/1").expect(200)
	if strings.Contains(b.body, "preview.pdf") {
		t.Fatal("a letter without a document offers a preview")
	}
	b.get("/portal/mailings/DOC1/letters/1/preview.pdf").expect(404, "no document to preview")
	b.get("/portal/mailings/DOC3/letters/0/preview.pdf").expect(422, "no longer kept")
	b.get("/portal/mailings/DOC2/letters/0/preview.pdf").expect(404, "no such page, mailing or letter")
	b.get("/portal/mailings/DOC1/letters/2/preview.pdf").expect(404)
	token := b.get("/portal/mailings/DOC1").csrf()
	b.post("/portal/mailings/DOC1/letters/0/preview.pdf", url.Values{"csrf": {token}}).expect(404)
	anon := f.browser()
	anon.get("/portal/mailings/DOC1/letters/0/preview.pdf")
	if strings.Contains(anon.body, "%PDF-") {
		t.Fatal("a preview served without a session")
	}
}
