package pdf

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/pagetext"
	"github.com/lodge-mail/lodge/internal/testenv"
)

// textFixtures are the PDFs of real producers in testdata/text (see its
// README), with words each must hold.
var textFixtures = []struct {
	name  string
	pages int
	words []string
}{
	{"gs.pdf", 2, []string{"ref:INV−0042", "Renée", "Müller", "NORTH", "2060", "Müller", "finance", "Account", "$1,234.56", "lodge", "crème", "«déjà", "vu»", "reader’s"}},
	{"chromium.pdf", 1, []string{"ref:ACME-00017", "Łukasz", "O’Brien-Smith", "MELBOURNE", "3000", "efficient", "“workflow”", "first", "Bold", "italic", "Ελληνικά", "Кириллица."}},
	{"cairo.pdf", 1, []string{"ref:ACME-00017", "Łukasz", "O’Brien-Smith", "MELBOURNE", "3000", "efficient", "“workflow”", "first", "Bold", "italic", "Ελληνικά", "Кириллица."}},
	{"rotated.pdf", 2, []string{"ref:INV−0042", "Renée", "Müller", "NORTH", "2060", "lodge", "crème"}},
}

// word is a word of a page: characters drawn one after the other on a
// line, without space between them.
type word struct {
	text           string
	x0, y0, x1, y1 float64
}

// words groups a page's characters into words as poppler's pdftotext
// does in substance: in drawing order, a new word at a space character,
// at a gap of more than a tenth of the size along the line, at a step
// back, or off the line.
func words(p *pagetext.Page) []word {
	var out []word
	var cur *word
	var prev pagetext.Char
	along := func(c pagetext.Char) (start, end, base float64) {
		switch c.Dir {
		case 1:
			return c.Y0, c.Y1, c.X0
		case 2:
			return -c.X1, -c.X0, c.Y0
		case 3:
			return -c.Y1, -c.Y0, c.X1
		}
		return c.X0, c.X1, c.Y1
	}
	for _, c := range p.Chars {
		if strings.TrimSpace(c.Text) == "" {
			cur = nil
			continue
		}
		if cur != nil {
			s, _, b := along(c)
			_, pe, pb := along(prev)
			if c.Dir != prev.Dir || math.Abs(b-pb) > 0.2*c.Size || s-pe > 0.1*c.Size || s-pe < -0.5*c.Size {
				cur = nil
			}
		}
		if cur == nil {
			out = append(out, word{x0: c.X0, y0: c.Y0, x1: c.X1, y1: c.Y1})
			cur = &out[len(out)-1]
		}
		cur.text += c.Text
		cur.x0, cur.y0 = min(cur.x0, c.X0), min(cur.y0, c.Y0)
		cur.x1, cur.y1 = max(cur.x1, c.X1), max(cur.y1, c.Y1)
		prev = c
	}
	return out
}

// popplerWords runs pdftotext -bbox-layout on a page.
func popplerWords(t *testing.T, path string, page int) []word {
	t.Helper()
	bin := testenv.Tool(t, "pdftotext")
	out, err := exec.Command(bin, "-bbox-layout", "-f", fmt.Sprint(page+1), "-l", fmt.Sprint(page+1), path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext %s: %v", path, err)
	}
	dec := xml.NewDecoder(bytes.NewReader(out))
	dec.Strict = false
	var ws []word
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "word" {
			continue
		}
		var w struct {
			XMin float64 `xml:"xMin,attr"`
			YMin float64 `xml:"yMin,attr"`
			XMax float64 `xml:"xMax,attr"`
			YMax float64 `xml:"yMax,attr"`
			Text string  `xml:",chardata"`
		}
		if err := dec.DecodeElement(&w, &se); err != nil {
			t.Fatal(err)
		}
		ws = append(ws, word{text: spellOut(w.Text), x0: w.XMin, y0: w.YMin, x1: w.XMax, y1: w.YMax})
	}
	return ws
}

// TestTextFixtures: the text of PDFs from Ghostscript (Type 1C subsets
// with custom encodings, standard fonts not embedded, white and rotated
// text), headless Chromium (TrueType CID fonts, Identity-H, ToUnicode),
// cairo (simple TrueType and CID fonts) and a page turned by /Rotate
// holds the same words as poppler's pdftotext reads, each box within 1
// pt of poppler's.
func TestTextFixtures(t *testing.T) {
	for _, fx := range textFixtures {
		path := filepath.Join("testdata", "text", fx.name)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r := open(t, data, Limits{})
		if r.NumPages() != fx.pages {
			t.Fatalf("%s: %d pages, want %d", fx.name, r.NumPages(), fx.pages)
		}
		var p pagetext.Page
		have := map[string]bool{}
		for i := range r.NumPages() {
			if err := r.pageText(i, nil, &p); err != nil {
				t.Fatalf("%s page %d: %v", fx.name, i+1, err)
			}
			checkZones(t, fmt.Sprintf("%s page %d", fx.name, i+1), r, i, &p)
			ours := words(&p)
			for _, w := range ours {
				have[w.text] = true
			}
			theirs := popplerWords(t, path, i)
			if len(theirs) == 0 {
				t.Fatalf("%s page %d: pdftotext found no words", fx.name, i+1)
			}
			used := make([]bool, len(ours))
			for _, pw := range theirs {
				found := false
				for k, w := range ours {
					if !used[k] && w.text == pw.text && math.Abs(w.x0-pw.x0) <= 1 && math.Abs(w.y0-pw.y0) <= 1 &&
						math.Abs(w.x1-pw.x1) <= 1 && math.Abs(w.y1-pw.y1) <= 1 {
						used[k], found = true, true
						break
					}
				}
				if !found {
					t.Errorf("%s page %d: poppler's word %q [%.2f %.2f %.2f %.2f] is not ours within 1 pt%s", fx.name, i+1, pw.text, pw.x0, pw.y0, pw.x1, pw.y1, nearWords(ours, pw))
				}
			}
			for k, w := range ours {
				if !used[k] {
					t.Errorf("%s page %d: our word %q [%.2f %.2f %.2f %.2f] is not poppler's", fx.name, i+1, w.text, w.x0, w.y0, w.x1, w.y1)
				}
			}
		}
		for _, w := range fx.words {
			if !have[w] {
				t.Errorf("%s: no word %q", fx.name, w)
			}
		}
	}
}

// nearWords names our words that overlap w, for the message.
func nearWords(ours []word, w word) string {
	var b strings.Builder
	for _, o := range ours {
		if o.x0 < w.x1+2 && w.x0 < o.x1+2 && o.y0 < w.y1+2 && w.y0 < o.y1+2 {
			fmt.Fprintf(&b, "; ours nearby: %q [%.2f %.2f %.2f %.2f]", o.text, o.x0, o.y0, o.x1, o.y1)
		}
	}
	return b.String()
}

// checkZones: reading a page in a zone gives the characters of the whole
// page whose centre is in it, in the same order, and the images that
// overlap it.
func checkZones(t *testing.T, name string, r *Reader, i int, whole *pagetext.Page) {
	t.Helper()
	w, h := whole.Width, whole.Height
	var p pagetext.Page
	for _, z := range []pagetext.Rect{
		{X0: 0, Y0: 0, X1: w, Y1: h}, {X0: 0, Y0: 0, X1: w / 2, Y1: h / 3}, {X0: w / 3, Y0: h / 4, X1: w, Y1: h / 2}, {X0: 50, Y0: 120, X1: 320, Y1: 240},
	} {
		if err := r.pageText(i, &z, &p); err != nil {
			t.Fatalf("%s in %v: %v", name, z, err)
		}
		var want []pagetext.Char
		for _, c := range whole.Chars {
			if z.Contains((c.X0+c.X1)/2, (c.Y0+c.Y1)/2) {
				want = append(want, c)
			}
		}
		var images []pagetext.Rect
		for _, im := range whole.Images {
			if z.Intersects(im) {
				images = append(images, im)
			}
		}
		if fmt.Sprint(p.Chars) != fmt.Sprint(want) || fmt.Sprint(p.Images) != fmt.Sprint(images) {
			t.Errorf("%s in %v: %d characters and images %v, want %d and %v", name, z, len(p.Chars), p.Images, len(want), images)
		}
		if p.Width != w || p.Height != h {
			t.Errorf("%s in %v: page %v x %v, want %v x %v", name, z, p.Width, p.Height, w, h)
		}
	}
	if err := r.pageText(i, nil, whole); err != nil { // whole again, for the caller
		t.Fatal(err)
	}
}

// TestPageTextEncrypted: Chromium's letter encrypted by qpdf with an
// owner password (RC4 and AES, revisions 2 to 6, object streams or not)
// reads the same text as the plain one: its content, fonts and ToUnicode
// maps decrypted as they are read.
func TestPageTextEncrypted(t *testing.T) {
	qpdf := testenv.Tool(t, "qpdf")
	src := filepath.Join("testdata", "text", "chromium.pdf")
	read := func(path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r := open(t, data, Limits{})
		var b strings.Builder
		var p pagetext.Page
		for i := range r.NumPages() {
			if err := r.PageText(i, nil, &p); err != nil {
				t.Fatalf("%s page %d: %v", path, i+1, err)
			}
			for _, c := range p.Chars {
				fmt.Fprintf(&b, "%s %.2f %.2f|", c.Text, c.X0, c.Y1)
			}
		}
		return b.String()
	}
	plain := read(src)
	if !strings.Contains(plain, "Ł") {
		t.Fatalf("%s reads %.100q", src, plain)
	}
	for _, args := range [][]string{{"40"}, {"128"}, {"128", "--use-aes=y"}, {"256", "--force-R5"}, {"256"}} {
		out := filepath.Join(t.TempDir(), "enc.pdf")
		cmd := append([]string{"--allow-weak-crypto", "--object-streams=generate", "--encrypt", "", "owner"}, args...)
		cmd = append(cmd, "--", src, out)
		if b, err := exec.Command(qpdf, cmd...).CombinedOutput(); err != nil {
			t.Fatalf("qpdf %v: %v %s", args, err, b)
		}
		if got := read(out); got != plain {
			t.Errorf("encrypted %v reads %.100q, plain %.100q", args, got, plain)
		}
	}
}
