package upload

import (
	"net/url"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/upload/metadata"
)

// TestCheckNameHostile: names with paths, drives, control characters or
// bytes that are not UTF-8 are refused (400), names without an extension
// are 500 and types not accepted 403, as spec section 7 gives them; every
// name accepted can be referenced from metadata, so that no file is stored
// that no letter could use.
func TestCheckNameHostile(t *testing.T) {
	f := func(name string, want int) {
		t.Helper()
		ext, status, msg := CheckName(name)
		if status != want {
			t.Errorf("CheckName(%q) = %d %q, want %d", name, status, msg, want)
			return
		}
		if status != 0 {
			if msg == "" || !utf8Valid(msg) {
				t.Errorf("CheckName(%q): message %q", name, msg)
			}
			return
		}
		// accepted: the metadata can name it (as a document when it is one)
		if ext != "pdf" {
			return
		}
		b, _ := json.Marshal(map[string]any{"letters": []any{map[string]any{"email": "jo@example.com", "file_name": name}}})
		p, probs := metadata.Parse("m.json", b, metadata.Limits{})
		if metadata.HasErrors(probs) {
			t.Errorf("%q: metadata naming it: %v", name, probs)
			return
		}
		if _, probs := p.Plan(metadata.Files{{Name: name, Kind: "pdf", Pages: 1}}); metadata.HasErrors(probs) {
			t.Errorf("%q accepted by PUT but metadata cannot reference it: %v", name, probs)
		}
	}
	// paths and drives
	f("", 400)
	f(".", 400)
	f("..", 400)
	f("a/b.pdf", 400)
	f(`a\b.pdf`, 400)
	f("../letter.pdf", 400)
	f("/etc/passwd.pdf", 400)
	f("C:letter.pdf", 400)
	f("c:letter.pdf", 400)
	f("Z:.pdf", 400)
	f(`C:\letter.pdf`, 400)
	f("C:/letter.pdf", 400)
	f(`\\server\share\letter.pdf`, 400)
	f("a..pdf", 400) // ".." anywhere is taken as a path
	// control characters and encodings
	f("letter\x00.pdf", 400)
	f("let\nter.pdf", 400)
	f("letter\r.pdf", 400)
	f("\x1b[31mred.pdf", 400)
	f("letter\x7f.pdf", 400)
	f("letter\u0085.pdf", 400) // C1 NEL
	f("letter\u009b.pdf", 400) // C1 CSI
	f("\xff\xfe.pdf", 400)
	f("lettre \xe9t\xe9.pdf", 400) // Latin-1, not UTF-8
	f("\xc0\xaf.pdf", 400)         // overlong "/"
	f(strings.Repeat("a", 252)+".pdf", 400)
	// extensions
	f("letter", 500)
	f("letter.", 500)
	f(".pdf", 500)
	f("letter.doc", 403)
	f("letter.pdf.exe", 403)
	f("letter\u202egpj.exe", 403) // right-to-left override hiding .exe
	// accepted
	f("letter.pdf", 0)
	f("LETTER.PDF", 0)
	f("my letter (final).pdf", 0)
	f("lettre été.pdf", 0)
	f("1:letter.pdf", 0) // not a drive
	f("a:b.pdf", 400)    // drive A:
	f("ab:c.pdf", 0)     // not a drive: the colon comes later
	f(strings.Repeat("a", 251)+".pdf", 0)
	f("m.json", 0)
	f("docs.zip", 0)
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\ufffd") == s }

// TestPutRefusesDrive: PUT and mpf_upload refuse a name with a drive with
// 400 and store nothing.
func TestPutRefusesDrive(t *testing.T) {
	w := newWeb(t)
	epid := w.newSession()
	for _, name := range []string{"C:letter.pdf", "d:x.pdf", "bad%FF.pdf", "nel%C2%85.pdf"} {
		a := w.putFile(epid, name, pdfPages(1))
		if a.status != 400 {
			t.Errorf("PUT %s: %d %q, want 400", name, a.status, a.body)
		}
	}
	if files, _ := w.s.Files(epid); len(files) != 0 {
		t.Errorf("stored %v", files)
	}
	for _, name := range []string{"C:letter.pdf", "x\xff.pdf"} {
		body, ctype := multipartBody(t, "m.json", meta("", melbourne), name, pdfPages(1))
		a := w.do("POST", "/publicinterface/mpf_upload?account=ABC12345", "ABC12345", body, "Content-Type", ctype)
		if a.status != 400 || !strings.Contains(a.body, "part 2: file name") {
			t.Errorf("mpf_upload with part %q: %d %s, want 400 naming part 2", url.PathEscape(name), a.status, a.body)
		}
	}
}
