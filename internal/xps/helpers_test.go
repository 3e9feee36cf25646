package xps

import (
	"archive/zip"
	"bytes"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/pagetext"
)

const fontDir = "/usr/share/fonts/truetype/dejavu/"

// dejaVu loads a DejaVu font (scripts/test installs fonts-dejavu-core).
func dejaVu(t testing.TB, name string) *Font {
	t.Helper()
	f, err := LoadFont(fontDir + name)
	if err != nil {
		t.Fatalf("%v (scripts/test installs fonts-dejavu-core)", err)
	}
	return f
}

// build writes an XPS package with fn.
func build(t testing.TB, openXPS bool, fn func(w *Writer)) []byte {
	t.Helper()
	var b bytes.Buffer
	w := NewWriter(&b)
	w.OpenXPS = openXPS
	fn(w)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func open(data []byte, lim Limits) (*Doc, error) {
	return Open(bytes.NewReader(data), int64(len(data)), lim)
}

// readPage opens a package and reads one page, failing the test on an
// error.
func readPage(t testing.TB, data []byte, i int, zone *pagetext.Rect) pagetext.Page {
	t.Helper()
	d, err := open(data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var p pagetext.Page
	if err := d.PageText(i, zone, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// word is a run of characters between spaces, with the union of their
// boxes.
type word struct {
	text           string
	x0, y0, x1, y1 float64
	invisible      bool
	dir            int
}

// words groups a page's characters into words: a space, a change of
// direction or a gap of more than a fifth of the size ends one.
func words(p pagetext.Page) []word {
	var out []word
	var cur *word
	var last pagetext.Char
	for _, c := range p.Chars {
		if strings.TrimSpace(c.Text) == "" {
			cur = nil
			continue
		}
		if cur != nil && (c.Dir != last.Dir || gap(last, c) > c.Size/5) {
			cur = nil
		}
		if cur == nil {
			out = append(out, word{x0: c.X0, y0: c.Y0, x1: c.X1, y1: c.Y1, dir: c.Dir, invisible: c.Invisible})
			cur = &out[len(out)-1]
		}
		cur.text += c.Text
		cur.x0, cur.y0 = math.Min(cur.x0, c.X0), math.Min(cur.y0, c.Y0)
		cur.x1, cur.y1 = math.Max(cur.x1, c.X1), math.Max(cur.y1, c.Y1)
		last = c
	}
	return out
}

// gap is the distance between two boxes that follow each other.
func gap(a, b pagetext.Char) float64 {
	dx := math.Max(0, math.Max(b.X0-a.X1, a.X0-b.X1))
	dy := math.Max(0, math.Max(b.Y0-a.Y1, a.Y0-b.Y1))
	return math.Max(dx, dy)
}

// text is the page's characters joined.
func text(p pagetext.Page) string {
	var b strings.Builder
	for _, c := range p.Chars {
		b.WriteString(c.Text)
	}
	return b.String()
}

// zipOf makes a ZIP of name, content pairs (stored when store is set).
func zipOf(t testing.TB, store bool, parts ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := 0; i+1 < len(parts); i += 2 {
		h := &zip.FileHeader{Name: parts[i], Method: zip.Deflate}
		if store {
			h.Method = zip.Store
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(parts[i+1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const (
	xpsNS   = `xmlns="http://schemas.microsoft.com/xps/2005/06"`
	keyNS   = `xmlns:x="http://schemas.microsoft.com/xps/2005/06/resourcedictionary-key"`
	relsXML = `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="R0" Type="http://schemas.microsoft.com/xps/2005/06/fixedrepresentation" Target="/seq.fdseq"/></Relationships>`
	seqXML  = `<FixedDocumentSequence ` + xpsNS + `><DocumentReference Source="Documents/1/doc.fdoc"/></FixedDocumentSequence>`
)

// pages makes a package whose pages are the given FixedPage contents
// (each wrapped in a 960 × 960 unit FixedPage, 720 pt square), with
// DejaVu Sans as /Resources/sans.ttf; extra adds parts.
func pages(t testing.TB, bodies []string, extra ...string) []byte {
	t.Helper()
	font, err := os.ReadFile(fontDir + "DejaVuSans.ttf")
	if err != nil {
		t.Fatal(err)
	}
	parts := []string{"_rels/.rels", relsXML, "seq.fdseq", seqXML, "Resources/sans.ttf", string(font)}
	var doc strings.Builder
	doc.WriteString(`<FixedDocument ` + xpsNS + `>`)
	for i, b := range bodies {
		fmt.Fprintf(&doc, `<PageContent Source="Pages/%d.fpage"/>`, i+1)
		parts = append(parts, fmt.Sprintf("Documents/1/Pages/%d.fpage", i+1), page(b))
	}
	doc.WriteString(`</FixedDocument>`)
	parts = append(parts, "Documents/1/doc.fdoc", doc.String())
	return zipOf(t, true, append(parts, extra...)...)
}

// page wraps content in a 960 × 960 FixedPage.
func page(body string) string {
	return `<FixedPage ` + xpsNS + ` ` + keyNS + ` Width="960" Height="960">` + body + `</FixedPage>`
}
