package inspect

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/testenv"
)

// TestPostScript: PostScript is counted by what it prints (Ghostscript),
// whatever its DSC comments say; errors, endless loops and missing
// pages are refused with what went wrong.
func TestPostScript(t *testing.T) {
	testenv.Tool(t, "gs")
	f := func(name, ps string, lim Limits, want int, wantErr error, msg string) {
		t.Helper()
		if wantErr == nil && lim.Timeout == 0 {
			// a document that must count is given time on a loaded
			// machine: the bound is tested by the cases that expect it
			lim.Timeout = 2 * time.Minute
		}
		d, err := Inspect(PostScript, strings.NewReader(ps), int64(len(ps)), lim)
		if d.Pages != want || !errors.Is(err, wantErr) || err != nil && !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %d, %v; want %d, %v containing %q", name, d.Pages, err, want, wantErr, msg)
		}
		if err != nil && len(categoriesOf(err)) == 0 {
			t.Errorf("%s: error %v has no category", name, err)
		}
	}
	text := "/Times-Roman findfont 12 scalefont setfont 72 720 moveto (Hello) show "
	f("no DSC comments", "%!\n"+text+"showpage\n"+text+"showpage\n", Limits{}, 2, nil, "")
	f("%%Pages: 1 but 3 showpages", "%!PS-Adobe-3.0\n%%Pages: 1\n%%EndComments\n%%Page: 1 1\nshowpage\nshowpage\nshowpage\n%%EOF\n", Limits{}, 3, nil, "")
	f("%%Pages: 5 but one showpage", "%!PS-Adobe-3.0\n%%Pages: 5\n%%EndComments\nshowpage\n", Limits{}, 1, nil, "")
	f("pages in a loop", "%!PS\n1 1 7 { pop showpage } for\n", Limits{}, 7, nil, "")
	f("copypage prints a page", "%!PS\ncopypage showpage\n", Limits{}, 2, nil, "")
	f("CR line ends", "%!PS-Adobe-3.0\r%%Pages: 2\r%%EndComments\rshowpage\rshowpage\r", Limits{}, 2, nil, "")
	f("EPS without showpage", "%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 100 100\n0 0 moveto 100 100 lineto stroke\n", Limits{}, 1, nil, "")
	f("Ctrl-D before and after", "\x04%!PS\nshowpage\n\x04", Limits{}, 1, nil, "")
	f("a printer job with PJL", "\x1b%-12345X@PJL JOB\r\n@PJL ENTER LANGUAGE=POSTSCRIPT\r\n%!PS\nshowpage showpage\n\x1b%-12345X", Limits{}, 2, nil, "")
	f("quit after two pages", "%!PS\nshowpage showpage quit showpage\n", Limits{}, 2, nil, "")
	f("the document redefines print and =", "%!PS\n/print { pop } def /= { pop } def /cvs { pop pop () } def showpage showpage\n", Limits{}, 2, nil, "")
	f("the document prints what looks like pages", "%!PS\n(LODGE-0000000000000000 page 595 842\\n) print showpage\n", Limits{}, 1, nil, "")
	f("the document sets its own EndPage", "%!PS\n<< /EndPage { pop pop false } >> setpagedevice showpage\n", Limits{}, 0, ErrMalformed, "prints no page")

	f("no pages", "%!PS-Adobe-3.0\n%%Pages: 5\n%%EndComments\n", Limits{}, 0, ErrMalformed, "PostScript prints no page (its DSC comments say 5 pages)")
	f("error after a page", "%!PS\nshowpage\nnosuchoperator\nshowpage\n", Limits{}, 0, ErrMalformed, "PostScript error /undefined in nosuchoperator after 1 page")
	f("error before any page", "%!PS\n1 0 div\n", Limits{}, 0, ErrMalformed, "PostScript error /undefinedresult in div after no page: it cannot be printed")
	f("syntax error", "%!PS\n{ showpage\n", Limits{}, 0, ErrMalformed, "/syntaxerror")
	f("an endless loop", "%!PS\n{ } loop\n", Limits{Timeout: time.Second}, 0, ErrLimit, "PostScript did not finish within 1s: a program that never ends?")
	f("an endless loop printing pages", "%!PS\n{ showpage } loop\n", Limits{Timeout: time.Second, MaxPages: 1 << 30}, 0, ErrLimit, "did not finish within 1s")
	f("more pages than MaxPages", "%!PS\n11 { showpage } repeat\n", Limits{MaxPages: 10}, 0, ErrLimit, "more than 10 pages")
	f("as many pages as MaxPages", "%!PS\n10 { showpage } repeat\n", Limits{MaxPages: 10}, 10, nil, "")
	f("memory", "%!PS\n/a [ 1 1 100000000 { } for ] def showpage\n", Limits{}, 0, ErrMalformed, "/stackoverflow")
	f("strings growing without end", "%!PS\n/s 1 def { /s s 2 mul def s string pop } loop\n", Limits{}, 0, ErrMalformed, "/limitcheck")
	f("reading another file", "%!PS\n(/etc/passwd) (r) file pop showpage\n", Limits{}, 0, ErrMalformed, "/invalidfileaccess")
	f("running a command", "%!PS\n(%pipe%echo hi) (w) file pop showpage\n", Limits{}, 0, ErrMalformed, "/invalidfileaccess")
	f("no Ghostscript", "%!PS\nshowpage\n", Limits{Ghostscript: "/nonexistent/gs"}, 0, ErrNoGhostscript, "the operator must install it (Debian package ghostscript")
	f("not PostScript at all", "\x00\x01\x02 binary", Limits{}, 0, ErrMalformed, "")
}

// TestPostScriptFile: a document read from a file is given to
// Ghostscript by its name (no copy), whatever characters the name has.
func TestPostScriptFile(t *testing.T) {
	testenv.Tool(t, "gs")
	p := filepath.Join(t.TempDir(), "a (strange) \\name%.ps")
	if err := os.WriteFile(p, []byte("%!PS\nshowpage showpage showpage\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if n, err := Pages(PostScript, fh, 31, Limits{}); n != 3 || err != nil {
		t.Errorf("%d, %v", n, err)
	}
}

// TestDSCHint: what the DSC comments say, used in messages only.
func TestDSCHint(t *testing.T) {
	f := func(name, ps string, lim Limits, want int) {
		t.Helper()
		h, err := psDSC(strings.NewReader(ps), int64(len(ps)), lim.WithDefaults(), newDeadline(DefaultTimeout))
		if h.pages != want || err != nil {
			t.Errorf("%s: %d, %v; want %d", name, h.pages, err, want)
		}
	}
	f("%%Pages: 2", psTwoPages, Limits{}, 2)
	f("%%Pages: (atend)", psAtEnd, Limits{}, 3)
	f("%%Page: lines only", "%!PS\n%%Page: 1 1\nshowpage\n%%Page: 2 2\n%%Page: 3 3\n", Limits{}, 3)
	f("CR line ends", "%!PS-Adobe-3.0\r%%Pages: 5\r%%EndComments\r", Limits{}, 5)
	f("(atend) without a trailer", "%!PS-Adobe-3.0\n%%Pages: (atend)\n%%EndComments\n%%Page: 1 1\n%%Page: 2 2\n", Limits{}, 2)
	f("embedded document pages do not count", "%!PS-Adobe-3.0\n%%EndComments\n%%Page: 1 1\n"+
		"%%BeginDocument: x.eps\n%!PS-Adobe-3.0\n%%Pages: 9\n%%Page: 1 1\n%%Page: 2 2\n%%EndDocument\n%%Page: 2 2\n", Limits{}, 2)
	f("binary section", "%!PS-Adobe-3.0\n%%Pages: (atend)\n%%Page: 1 1\n%%BeginBinary: 20\n%%Page: 9 9\n%%EndBinary\n%%Trailer\n", Limits{}, 1)
	f("%%Pages: N M", "%!PS-Adobe-3.0\n%%Pages: 4 -1\n%%EndComments\n", Limits{}, 4)
	f("EPS", "%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 100 100\n", Limits{}, 1)
	f("DOS EPS", string(append([]byte{0xC5, 0xD0, 0xD3, 0xC6, 30, 0, 0, 0}, "%!PS-Adobe-3.0 EPSF-3.0\n"...)), Limits{}, 1)
	f("no DSC", "%!\nshowpage\n", Limits{}, -1)
	f("%%Pages: 0", "%!PS-Adobe-3.0\n%%Pages: 0\n", Limits{}, -1)
	f("a negative count", "%!PS-Adobe-3.0\n%%Pages: -5\n%%Page: 1 1\n", Limits{}, 1)
	f("one 2 MB line", "%!PS-Adobe-3.0\n%%Pages: 2"+strings.Repeat("0", 2<<20)+"\n", Limits{}, -1)
	f("%%Page: beyond MaxPages stops counting", "%!PS\n"+strings.Repeat("%%Page: 1 1\n", 100), Limits{MaxPages: 10}, 11)
}

// TestParseGhostscript: the lines of the counting program, among
// whatever the document printed.
func TestParseGhostscript(t *testing.T) {
	f := func(name, out string, max, pages int, notA4 []PageRun, errName, errCommand string) {
		t.Helper()
		r := parseGhostscript([]byte(out), "T", max)
		if r.doc.Pages != pages || !slices.Equal(r.doc.NotA4, notA4) || r.errName != errName || r.errCommand != errCommand {
			t.Errorf("%s: %+v", name, r)
		}
	}
	f("pages", "T page 595 842\nT page 612 792\nT page 612.0 792.0\n", 10, 3, []PageRun{{1, 2, 216, 279}}, "", "")
	f("noise, and pages of unknown size", "hello\nT\nTpage 1 2\nT page\nT page x y\n\nT pagex 1 1\n", 10, 2, nil, "", "")
	f("error", "T page 595 842\nT error undefined foo bar\nT error typecheck x\n", 10, 1, nil, "undefined", "foo bar")
	f("error without a command", "T error\n", 10, 0, nil, "unknown", "--unknown--")
	f("counting stops past max", strings.Repeat("T page 1 1\n", 50), 3, 4, []PageRun{{0, 3, 0, 0}}, "", "")
	f("unprintable names", "T error \x00\xff\x1b[31m x\n", 10, 0, nil, "???[31m", "x")
	f("a long line", strings.Repeat("x", 10000)+"\nT page 595 842\n", 10, 1, nil, "", "")
	f("CR LF", "T page 595 842\r\nT page 595 842\r\n", 10, 2, nil, "", "")
}
