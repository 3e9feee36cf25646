package xps

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/internal/pagetext"
	"github.com/lodge-mail/lodge/internal/testenv"
)

var fuzzLimits = Limits{MaxPartBytes: 1 << 20, MaxFontBytes: 2 << 20, MaxTotalBytes: 16 << 20, MaxPages: 50, MaxChars: 20_000, MaxElements: 50_000, Timeout: 5 * time.Second}

// FuzzPageText: any bytes, as an XPS package and as the FixedPage of a
// package with real fonts, read page by page with and without the
// window zone: only ErrMalformed or ErrLimit errors, never a panic or a
// hang, and characters with finite boxes (inside the zone when one is
// given). Seeded with the Writer's packages and their pages, and the
// hand-made pages of TestGlyphs' kind.
func FuzzPageText(f *testing.F) {
	testenv.LimitMinimization(f, "2s")
	sans := dejaVu(f, "DejaVuSans.ttf")
	written := [][]byte{
		letters(f, 2),
		build(f, true, func(w *Writer) {
			p := w.Page(300, 300)
			p.Text(10, 20, 12, sans, "{braces} & <angles>", TextOptions{NoAdvances: true})
			p.Canvas(Matrix{A: 0, B: 1, C: -1, D: 0, E: 200, F: 10}).Text(0, 0, 9, sans, "turned ref:X1", TextOptions{Colour: "#FFFFFFFF", BidiLevel: 1})
			p.Rect(pagetext.Rect{X0: 10, Y0: 10, X1: 50, Y1: 50}, "#FF00FF00")
		}),
	}
	for _, w := range written {
		f.Add(w)
		zr, err := zip.NewReader(bytes.NewReader(w), int64(len(w)))
		if err != nil {
			f.Fatal(err)
		}
		for _, zf := range zr.File {
			if strings.HasSuffix(zf.Name, ".fpage") {
				r, _ := zf.Open()
				b, _ := io.ReadAll(r)
				f.Add(b)
			}
		}
	}
	for _, body := range []string{
		glyphs(`UnicodeString="ffix" Indices="(3:1)1234,60;5,10"`),
		`<Canvas><Canvas.Resources><ResourceDictionary><MatrixTransform x:Key="T" Matrix="1,0,0,1,0,96"/><ImageBrush x:Key="I" ImageSource="/i.png" Viewbox="0,0,1,1" Viewport="0,0,1,1"/></ResourceDictionary></Canvas.Resources>` +
			`<Canvas.RenderTransform><MatrixTransform Matrix="0,1,-1,0,480,0"/></Canvas.RenderTransform>` +
			`<Glyphs OriginX="96" OriginY="192" FontRenderingEmSize="96" FontUri="../../../Resources/sans.ttf" UnicodeString="AB" Indices=";,,10,20" RenderTransform="{StaticResource T}" Fill="#80FFFFFF" IsSideways="true"/>` +
			`<Path Data="F1 m 96,96 h 96 v 48 l -96,0 z" Fill="{StaticResource I}"/></Canvas>`,
		`<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><mc:Fallback>` + glyphs(`UnicodeString="😀x" Indices="(2:1)5,50;6,50" BidiLevel="1"`) + `</mc:Fallback></mc:AlternateContent>`,
	} {
		f.Add([]byte(page(body)))
	}
	font := mustRead(f, fontDir+"DejaVuSans.ttf")
	f.Fuzz(func(t *testing.T, data []byte) {
		check(t, data)
		check(t, fuzzPackage(t, data, font))
	})
}

// fuzzPackage is a one-page package whose page is data, with DejaVu Sans
// as /Resources/sans.ttf.
func fuzzPackage(t *testing.T, data, font []byte) []byte {
	return zipOf(t, true, "_rels/.rels", relsXML, "seq.fdseq", seqXML,
		"Documents/1/doc.fdoc", `<FixedDocument `+xpsNS+`><PageContent Source="Pages/1.fpage"/></FixedDocument>`,
		"Documents/1/Pages/1.fpage", string(data), "Resources/sans.ttf", string(font))
}

func check(t *testing.T, data []byte) {
	d, err := open(data, fuzzLimits)
	if err != nil {
		categorised(t, err)
		return
	}
	var p pagetext.Page
	for i := 0; i < d.NumPages(); i++ {
		for _, zone := range []*pagetext.Rect{nil, &window} {
			if err := d.PageText(i, zone, &p); err != nil {
				categorised(t, err)
				continue
			}
			for _, c := range p.Chars {
				for _, v := range []float64{c.X0, c.Y0, c.X1, c.Y1, c.Size} {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("page %d: %+v", i, c)
					}
				}
				if c.X0 > c.X1 || c.Y0 > c.Y1 || c.Dir < 0 || c.Dir > 3 {
					t.Fatalf("page %d: %+v", i, c)
				}
				if zone != nil && !zone.Contains((c.X0+c.X1)/2, (c.Y0+c.Y1)/2) {
					t.Fatalf("page %d: %+v is outside the zone", i, c)
				}
			}
		}
	}
}

func categorised(t *testing.T, err error) {
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrLimit) {
		t.Fatalf("%T %v: not ErrMalformed or ErrLimit", err, err)
	}
}

func mustRead(t testing.TB, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
