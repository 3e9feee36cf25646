package upload

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestEndUTF16Metadata: XML metadata in UTF-16, as .NET writes it, is
// stored by PUT and read by end_session, in both byte orders, with a
// byte order mark or with only the declaration.
func TestEndUTF16Metadata(t *testing.T) {
	r := newRig(t)
	for _, name := range []string{"le_bom_crlf.xml", "be_bom_crlf.xml", "le_nobom.xml", "be_nobom.xml"} {
		meta, err := os.ReadFile(filepath.Join("metadata", "testdata", "utf16", name))
		if err != nil {
			t.Fatal(err)
		}
		res := r.end(r.session("statements.pdf", pdfPages(3), "m.xml", meta))
		if res.Result != "ok" || len(res.Errs) > 0 {
			t.Errorf("%s: %+v", name, res)
			continue
		}
		m, err := r.mailingRec(res.SessionID)
		if err != nil || m.Title != "Relevés de mars 📬" {
			t.Errorf("%s: mailing title %q (%v)", name, m.Title, err)
		}
	}
	// A UTF-16 file whose declaration contradicts its byte order mark is
	// refused at end_session with its line.
	bad := "\xff\xfe" + utf16LE(`<?xml version="1.0" encoding="utf-8"?><pack/>`)
	res := r.end(r.session("statements.pdf", pdfPages(3), "m.xml", bad))
	if res.Result != "error" || !strings.Contains(strings.Join(res.Errs, "\n"), `m.xml: line 1: the file is UTF-16LE (by its byte order mark) but declares encoding "utf-8"`) {
		t.Errorf("contradicting declaration: %+v", res)
	}
}

// utf16LE writes ASCII s in UTF-16LE.
func utf16LE(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte(s[i])
		b.WriteByte(0)
	}
	return b.String()
}

// TestProfileProblemsNameTheProfile: a problem in what the operator's
// profile supplied is reported against the profile's file, not against
// the client's metadata file (which may not even have the field).
func TestProfileProblemsNameTheProfile(t *testing.T) {
	r := newRig(t)
	dir := filepath.Join(t.TempDir(), "profiles")
	r.l.cfg.ProfileDir = dir
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, "ABC12345"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "ABC12345", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	letter := `"letters":[{"postal":["Jo Citizen","10 Jones St","Melbourne VIC 3000"]}]`
	f := func(meta string, want ...string) {
		t.Helper()
		res := r.end(r.session("doc.pdf", pdfPages(1), "m.json", meta))
		if res.Result != "error" || !reflect.DeepEqual(res.Errs, want) {
			t.Errorf("%s:\ngot  %q\nwant %q", meta, res.Errs, want)
		}
	}
	write("statements.json", `{"attachments":["terms.pdf"],"customer_email":"ops@"}`)
	f(`{"profile":"statements",`+letter+`}`,
		`profile "statements" (profiles/ABC12345/statements.json): customer_email: "ops@" is not a valid email address`,
		`profile "statements" (profiles/ABC12345/statements.json): attachments[0]: no document "terms.pdf" in this mailing`)
	// The client's own values and mistakes stay the client's.
	f(`{"profile":"statements","customer_email":"jo@","attachments":["other.pdf"],`+letter+`}`,
		`m.json: customer_email: "jo@" is not a valid email address`,
		`m.json: attachments[0]: no document "other.pdf" in this mailing`)
	// The default profile, applied without being named, and a profile
	// file that is not valid (the mailing is not checked further).
	write("default.xml", `<pack><colour_model>12</colour_model></pack>`)
	f(`{`+letter+`}`, `profile "default" (profiles/ABC12345/default.xml): colour_model: 12 is out of range: 0 to 9 are accepted`)
	write("broken.json", `{"title":"x","letters":[{"email":"a@b.example"}]}`)
	f(`{"profile":"broken",`+letter+`}`,
		`profile "broken" (profiles/ABC12345/broken.json): letters: a profile holds mailing attributes only, not letters (the operator must correct the profile)`)
}

// TestEndUncoveredPages: a statement run whose letters leave pages of the
// document out is accepted, and warned that those pages go nowhere.
func TestEndUncoveredPages(t *testing.T) {
	r := newRig(t)
	meta := `{"letters":[{"postal":["Jo Citizen","10 Jones St","Melbourne VIC 3000"],"page_start":0,"page_end":1}]}`
	res := r.end(r.session("statements.pdf", pdfPages(7), "m.json", meta))
	want := []string{`m.json: "statements.pdf": pages 2-6 are in no letter and will not be sent (7 pages, numbered 0 to 6, as page_start and page_end)`}
	if res.Result != "ok" || !reflect.DeepEqual(res.Warnings, want) {
		t.Errorf("%+v, want warnings %q", res, want)
	}
}
