package upload

import (
	"os"
	"path/filepath"
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
		p, err := r.s.Pack(res.SessionID)
		if err != nil || p.Title != "Relevés de mars 📬" {
			t.Errorf("%s: pack title %q (%v)", name, p.Title, err)
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
