package production

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/pipeline"
)

func TestWindowVerdict(t *testing.T) {
	f := func(window string, postal []string, want string) {
		t.Helper()
		if got := windowVerdict(window, postal); got != want {
			t.Fatalf("windowVerdict(%q, %q) = %q, want %q", window, postal, got, want)
		}
	}
	addr := []string{"Jo Citizen", "3/72 Charles St", "St Kilda VIC 3182"}
	f("Jo Citizen\n3/72 Charles St\nSt Kilda VIC 3182\n", addr, "")
	f("JO CITIZEN\n3/72 CHARLES ST.\nST KILDA  VIC  3182", addr, "")
	f("ref:INV-1\nemail:jo@example.com\nJo Citizen\n3/72 Charles St\nSt Kilda VIC 3182\nAUSTRALIA", addr, "")
	f("", addr, "clear")
	f("  \n \n", addr, "clear")
	f("Al Other\n1 Main St\nSYDNEY NSW 2000", addr, "AL OTHER / 1 MAIN ST / SYDNEY NSW 2000")
	f("Jo Citizen\n3/72 Charles St", addr, "JO CITIZEN / 3/72 CHARLES ST")
	f("Jo Citizen\n3/72 Charles St\nSt Kilda VIC 3182\nInvoice 5", addr, "JO CITIZEN / 3/72 CHARLES ST / ST KILDA VIC 3182 / INVOICE 5")
	g := func(shown string, want bool) {
		t.Helper()
		if got := looksLikeAddress(shown); got != want {
			t.Fatalf("looksLikeAddress(%q) = %v", shown, got)
		}
	}
	g("AL OTHER / 1 MAIN ST / SYDNEY NSW 2000", true)
	g("PO Box 12 / Darwin nt 0800", true)
	g("EXAMPLE UTILITIES PTY LTD / ABN 00 000 000 000", false)
	g("Statement for March 2026 / Account 1234", false)
}

func TestSheetsAndPostcode(t *testing.T) {
	if sheets(3, true) != 2 || sheets(4, true) != 2 || sheets(3, false) != 3 || sheets(1, true) != 1 {
		t.Fatal("sheets")
	}
	f := func(lines []string, want string) {
		t.Helper()
		if got := postcode(lines); got != want {
			t.Fatalf("postcode(%q) = %q, want %q", lines, got, want)
		}
	}
	f([]string{"Jo", "10 Smith St", "SYDNEY NSW 2000"}, "2000")
	f([]string{"Jo", "1234 Long Rd", "SYDNEY NSW 2000", "AUSTRALIA"}, "2000")
	f([]string{"Jo", "PO Box 12", "Darwin", "NT 0800"}, "0800")
	f([]string{"Jo", "10 Downing St", "London SW1A 2AA"}, "9999")
}

// letterPDF writes a PDF whose pages carry an address block at the
// default window (or none, for an empty string) and some body text.
func letterPDF(t *testing.T, dir, name string, addresses ...string) pipeline.File {
	t.Helper()
	pages := make([]mailpdf.Page, len(addresses))
	for i, a := range addresses {
		pages[i].Text = "Dear customer, your statement is below."
		if a != "" {
			pages[i].Address = strings.Split(a, "\n")
		}
	}
	return writeDoc(t, dir, name, pages...)
}

// writeDoc writes a PDF of the pages given as a mailing's document.
func writeDoc(t *testing.T, dir, name string, pages ...mailpdf.Page) pipeline.File {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := mailpdf.Pages(f, pages...); err != nil {
		t.Fatal(err)
	}
	return pipeline.File{Name: name, Kind: "pdf", Path: path, Pages: len(pages)}
}

// TestInspect reads the windows of real PDFs with pdftotext: a matching
// window passes, a clear one is printed into, another address is held,
// a PostScript document is converted first, and a broken one is held.
func TestInspect(t *testing.T) { eachSetup(t, testInspect) }

func testInspect(t *testing.T, s setup) {
	testenv.Tool(t, "gs")
	p := s.producer(t)
	ml := newMailing(t, p, "E1", pipeline.Production{Duplex: true})
	dir := ml.dir
	stmt := ml.put(letterPDF(t, dir, "statements.pdf",
		"Jo Citizen\n3/72 Charles St\nST KILDA VIC 3182", "",
		"Al Other\n1 Main St\nSYDNEY NSW 2000", "",
		"", ""))
	file := func(name, kind, data string) pipeline.File {
		f := pipeline.File{Name: name, Kind: kind, Path: filepath.Join(dir, name), Pages: 1}
		if err := os.WriteFile(f.Path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return ml.put(f)
	}
	ps := file("letter.ps", "ps", "%!PS\n/Helvetica findfont 10 scalefont setfont\n71 640 moveto (Bo Person) show\n71 626 moveto (9 High St) show\n71 612 moveto (DARWIN NT 0800) show\nshowpage\n")
	broken := file("broken.ps", "ps", "%!PS\n/foo bar baz\n")
	// a PDF production's reader cannot open, and a PostScript program
	// that never ends (stopped by the converter's time bound)
	garbled := file("garbled.pdf", "pdf", "%PDF-1.4\nnot a PDF at all\n")
	bomb := file("bomb.ps", "ps", "%!PS\n{ 1 pop } loop\nshowpage\n")
	p.cfg.ToolTimeout = 2 * time.Second
	m := &ml.m
	m.Files = []pipeline.File{stmt, ps, broken, garbled, bomb}
	mk := func(idx int, file string, start, end int, postal ...string) *pipeline.Letter {
		return &pipeline.Letter{EPID: "E1", Idx: idx, Status: pipeline.Received, Channels: []string{"postal"}, Postal: postal, Received: time.Now(),
			Documents: []pipeline.DocPart{{File: file, PageStart: start, PageEnd: end}}}
	}
	ls := []*pipeline.Letter{
		mk(0, "statements.pdf", 0, 1, "Jo Citizen", "3/72 Charles St", "St Kilda VIC 3182"),
		mk(1, "statements.pdf", 2, 3, "Jo Citizen", "3/72 Charles St", "St Kilda VIC 3182"),
		mk(2, "statements.pdf", 4, 5, "Cy Blank", "5 Low Rd", "HOBART TAS 7000"),
		mk(3, "letter.ps", 0, -1, "Bo Person", "9 High St", "DARWIN NT 0800"),
		mk(4, "broken.ps", 0, -1, "Bo Person", "9 High St", "DARWIN NT 0800"),
		mk(5, "statements.pdf", 4, 9, "Cy Blank", "5 Low Rd", "HOBART TAS 7000"),
		mk(6, "garbled.pdf", 0, -1, "Bo Person", "9 High St", "DARWIN NT 0800"),
		mk(7, "bomb.ps", 0, -1, "Bo Person", "9 High St", "DARWIN NT 0800"),
	}
	if err := p.Inspect(context.Background(), m, ls); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		status, hold, why string
		unaddressed       bool
		sheets            int
	}{
		{status: pipeline.Received, sheets: 1},
		{status: pipeline.Held, hold: pipeline.HoldWindow, why: `shows "AL OTHER / 1 MAIN ST / SYDNEY NSW 2000"`},
		{status: pipeline.Received, unaddressed: true, sheets: 1},
		{status: pipeline.Received, sheets: 1},
		{status: pipeline.Held, hold: pipeline.HoldDocument, why: "broken.ps could not be converted"},
		{status: pipeline.Held, hold: pipeline.HoldDocument, why: "has no pages 5 to 10"},
		{status: pipeline.Held, hold: pipeline.HoldDocument, why: "garbled.pdf cannot be read for printing"},
		{status: pipeline.Held, hold: pipeline.HoldDocument, why: "bomb.ps could not be converted to PDF for printing: gs took too long"},
	}
	for i, w := range want {
		l := ls[i]
		if l.Status != w.status || l.Hold != w.hold || !strings.Contains(l.HoldReason, w.why) || l.Unaddressed != w.unaddressed || l.Sheets != w.sheets {
			t.Errorf("letter %d: %s %s %q unaddressed %v sheets %d; want %+v", i, l.Status, l.Hold, l.HoldReason, l.Unaddressed, l.Sheets, w)
		}
	}
	if l := ls[0]; l.Envelope != "DL" || l.Postage != "regular" || l.Postcode != "3182" || l.Price != 15+6+170 {
		t.Errorf("letter 0 facts: %+v", l)
	}
}
