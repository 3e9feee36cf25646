package xps

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/pagetext"
)

// describe writes a page's characters as "text x0,y0-x1,y1" in points
// (to 0.01), with " d<dir>" when not upright, " s<size>" when the size is
// not 72 and " inv" when invisible, joined by " | "; then its images as
// "img x0,y0-x1,y1".
func describe(p pagetext.Page) string {
	r := func(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100+0, 'f', -1, 64) }
	var out []string
	for _, c := range p.Chars {
		s := fmt.Sprintf("%s %s,%s-%s,%s", c.Text, r(c.X0), r(c.Y0), r(c.X1), r(c.Y1))
		if c.Dir != 0 {
			s += fmt.Sprintf(" d%d", c.Dir)
		}
		if math.Abs(c.Size-72) > 0.005 {
			s += " s" + r(c.Size)
		}
		if c.Invisible {
			s += " inv"
		}
		out = append(out, s)
	}
	for _, im := range p.Images {
		out = append(out, fmt.Sprintf("img %s,%s-%s,%s", r(im.X0), r(im.Y0), r(im.X1), r(im.Y1)))
	}
	return strings.Join(out, " | ")
}

// glyphs is a Glyphs element at origin (96, 192) units, 96 units (72 pt)
// to the em, in a font that is not in the package (so that its box is
// the default 0.8 em above the baseline and 0.2 em below: y 86.4 to
// 158.4 pt), with attrs added.
func glyphs(attrs string) string {
	return `<Glyphs OriginX="96" OriginY="192" FontRenderingEmSize="96" FontUri="/none.ttf" Fill="#FF000000" ` + attrs + `/>`
}

// TestGlyphs: how Glyphs elements become characters. Boxes are in
// points: 96 units to the em is 72 pt, so an advance of 50 (1/100 em) is
// 36 pt.
func TestGlyphs(t *testing.T) {
	f := func(name, body string, zone *pagetext.Rect, want string) {
		t.Helper()
		p := readPage(t, pages(t, []string{body}), 0, zone)
		if got := describe(p); got != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
		if p.Width != 720 || p.Height != 720 {
			t.Errorf("%s: page %v × %v, want 720 × 720", name, p.Width, p.Height)
		}
	}
	f("advances from Indices", glyphs(`UnicodeString="AB" Indices="36,50;37,25"`), nil,
		"A 72,86.4-108,158.4 | B 108,86.4-126,158.4")
	f("a space is a character", glyphs(`UnicodeString="A B" Indices="36,50;3,25;37,25"`), nil,
		"A 72,86.4-108,158.4 |   108,86.4-126,158.4 | B 126,86.4-144,158.4")
	f("the {} escape", glyphs(`UnicodeString="{}{x}" Indices="1,10;2,10;3,10"`), nil,
		"{ 72,86.4-79.2,158.4 | x 79.2,86.4-86.4,158.4 | } 86.4,86.4-93.6,158.4")
	f("entities", glyphs(`UnicodeString="&amp;&lt;&#x41;" Indices="1,10;2,10;3,10"`), nil,
		"& 72,86.4-79.2,158.4 | < 79.2,86.4-86.4,158.4 | A 86.4,86.4-93.6,158.4")
	f("a ligature: three characters, one glyph", glyphs(`UnicodeString="ffix" Indices="(3:1)1234,60;5,10"`), nil,
		"ffi 72,86.4-115.2,158.4 | x 115.2,86.4-122.4,158.4")
	f("one character, two glyphs", glyphs(`UnicodeString="éa" Indices="(1:2)70,40;80,10;5,50"`), nil,
		"é 72,86.4-108,158.4 | a 108,86.4-144,158.4")
	f("a cluster counts UTF-16 code units", glyphs(`UnicodeString="😀x" Indices="(2:1)5,50;6,50"`), nil,
		"😀 72,86.4-108,158.4 | x 108,86.4-144,158.4")
	f("more glyphs than text", glyphs(`UnicodeString="A" Indices="36,50;37,50"`), nil,
		"A 72,86.4-108,158.4 | \uFFFD 108,86.4-144,158.4")
	f("no UnicodeString", glyphs(`Indices="36,50"`), nil, "\uFFFD 72,86.4-108,158.4")
	f("empty entries past the text draw nothing", glyphs(`UnicodeString="A" Indices="36,50;;"`), nil, "A 72,86.4-108,158.4")
	f("u and v offsets move the glyph, not the pen", glyphs(`UnicodeString="AB" Indices="36,50,10,20;37,50"`), nil,
		"A 79.2,72-115.2,144 | B 108,86.4-144,158.4")
	f("right to left", glyphs(`UnicodeString="AB" Indices="36,50;37,25" BidiLevel="1"`), nil,
		"A 36,86.4-72,158.4 | B 18,86.4-36,158.4")
	f("sideways glyphs straddle the baseline", glyphs(`UnicodeString="A" Indices="36,50" IsSideways="true"`), nil,
		"A 72,108-108,180")
	f("size 0 draws nothing", `<Glyphs OriginX="96" OriginY="192" FontRenderingEmSize="0" FontUri="/none.ttf" UnicodeString="A" Indices="36,50"/>`, nil, "")

	// Transforms.
	f("RenderTransform attribute", glyphs(`UnicodeString="A" Indices="36,50" RenderTransform="2,0,0,2,0,-192"`), nil,
		"A 144,28.8-216,172.8 s144")
	f("Glyphs.RenderTransform element", `<Glyphs OriginX="96" OriginY="192" FontRenderingEmSize="96" FontUri="/none.ttf" Fill="#FF000000" UnicodeString="A" Indices="36,50">`+
		`<Glyphs.RenderTransform><MatrixTransform Matrix="1,0,0,1,96,0"/></Glyphs.RenderTransform></Glyphs>`, nil,
		"A 144,86.4-180,158.4")
	f("Canvas RenderTransform, nested", `<Canvas RenderTransform="1,0,0,1,96,0"><Canvas RenderTransform="1,0,0,1,0,96">`+glyphs(`UnicodeString="A" Indices="36,50"`)+`</Canvas></Canvas>`, nil,
		"A 144,158.4-180,230.4")
	f("Canvas.RenderTransform element", `<Canvas><Canvas.RenderTransform><MatrixTransform Matrix="1,0,0,1,96,0"/></Canvas.RenderTransform>`+glyphs(`UnicodeString="A" Indices="36,50"`)+`</Canvas>`, nil,
		"A 144,86.4-180,158.4")
	f("a scale inside a translation", `<Canvas RenderTransform="1,0,0,1,96,0"><Canvas RenderTransform="0.5,0,0,0.5,0,0">`+glyphs(`UnicodeString="A" Indices="36,50"`)+`</Canvas></Canvas>`, nil,
		"A 108,43.2-126,79.2 s36")
	f("a quarter turn clockwise", `<Canvas RenderTransform="0,1,-1,0,480,0">`+glyphs(`UnicodeString="AB" Indices="36,50;37,50"`)+`</Canvas>`, nil,
		"A 201.6,72-273.6,108 d1 | B 201.6,108-273.6,144 d1")
	f("upside down", `<Canvas RenderTransform="-1,0,0,-1,480,480">`+glyphs(`UnicodeString="A" Indices="36,50"`)+`</Canvas>`, nil,
		"A 252,201.6-288,273.6 d2")
	f("a quarter turn anticlockwise", `<Canvas RenderTransform="0,-1,1,0,0,480">`+glyphs(`UnicodeString="A" Indices="36,50"`)+`</Canvas>`, nil,
		"A 86.4,252-158.4,288 d3")
	f("StaticResource transform and brush", `<Canvas><Canvas.Resources><ResourceDictionary>`+
		`<MatrixTransform x:Key="Down" Matrix="1,0,0,1,0,96"/><SolidColorBrush x:Key="White" Color="#FFFFFFFF"/>`+
		`</ResourceDictionary></Canvas.Resources>`+
		`<Glyphs OriginX="96" OriginY="192" FontRenderingEmSize="96" FontUri="/none.ttf" UnicodeString="A" Indices="36,50" RenderTransform="{StaticResource Down}" Fill="{StaticResource White}"/></Canvas>`, nil,
		"A 72,158.4-108,230.4 inv")
	f("FixedPage.Resources, and an inner dictionary wins", `<FixedPage.Resources><ResourceDictionary><MatrixTransform x:Key="T" Matrix="1,0,0,1,0,96"/></ResourceDictionary></FixedPage.Resources>`+
		`<Canvas><Canvas.Resources><ResourceDictionary><MatrixTransform x:Key="T" Matrix="1,0,0,1,96,0"/></ResourceDictionary></Canvas.Resources>`+
		`<Glyphs OriginX="96" OriginY="192" FontRenderingEmSize="96" FontUri="/none.ttf" Fill="#FF000000" UnicodeString="A" Indices="36,50" RenderTransform="{StaticResource T}"/></Canvas>`+
		`<Glyphs OriginX="96" OriginY="192" FontRenderingEmSize="96" FontUri="/none.ttf" Fill="#FF000000" UnicodeString="B" Indices="36,50" RenderTransform="{StaticResource T}"/>`, nil,
		"A 144,86.4-180,158.4 | B 72,158.4-108,230.4")

	// Fills: white, transparent or not filled is invisible.
	for _, c := range []struct{ attrs, want string }{
		{`Fill="#FF000000"`, ""},
		{`Fill="#FF0000"`, ""},
		{`Fill="#FFFFFF"`, " inv"},
		{`Fill="#80FFFFFF"`, " inv"},
		{`Fill="#00FF0000"`, " inv"},
		{`Fill="sc#1,1,1"`, " inv"},
		{`Fill="sc#0,0,0,0"`, " inv"},
		{`Fill="sc#1,0.5,0.5,0.5"`, ""},
		{`Fill="ContextColor /c.icc 0,1,0,0,0"`, " inv"},
		{`Fill="ContextColor /c.icc 1,1,0,0,0"`, ""},
		{`Fill="#FF000000" Opacity="0"`, " inv"},
		{`Fill="#FF000000" Opacity="0.5"`, ""},
		{``, " inv"}, // no Fill: nothing is painted
	} {
		body := `<Glyphs OriginX="96" OriginY="192" FontRenderingEmSize="96" FontUri="/none.ttf" UnicodeString="A" Indices="36,50" ` + c.attrs + `/>`
		f("fill "+c.attrs, body, nil, "A 72,86.4-108,158.4"+c.want)
	}
	f("Canvas Opacity 0", `<Canvas Opacity="0">`+glyphs(`UnicodeString="A" Indices="36,50"`)+`</Canvas>`, nil, "A 72,86.4-108,158.4 inv")
	f("Glyphs.Fill brush with Opacity 0", `<Glyphs OriginX="96" OriginY="192" FontRenderingEmSize="96" FontUri="/none.ttf" UnicodeString="A" Indices="36,50">`+
		`<Glyphs.Fill><SolidColorBrush Color="#FF000000" Opacity="0"/></Glyphs.Fill></Glyphs>`, nil, "A 72,86.4-108,158.4 inv")
	f("Glyphs.Fill gradient", `<Glyphs OriginX="96" OriginY="192" FontRenderingEmSize="96" FontUri="/none.ttf" UnicodeString="A" Indices="36,50">`+
		`<Glyphs.Fill><LinearGradientBrush MappingMode="Absolute" StartPoint="0,0" EndPoint="1,1"><LinearGradientBrush.GradientStops><GradientStop Color="#FF000000" Offset="0"/></LinearGradientBrush.GradientStops></LinearGradientBrush></Glyphs.Fill></Glyphs>`, nil,
		"A 72,86.4-108,158.4")

	// What is read and what is skipped.
	f("markup compatibility: the Fallback", `<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><mc:Choice Requires="v2">`+
		glyphs(`UnicodeString="C" Indices="36,50"`)+`</mc:Choice><mc:Fallback>`+glyphs(`UnicodeString="F" Indices="36,50"`)+`</mc:Fallback></mc:AlternateContent>`, nil,
		"F 72,86.4-108,158.4")
	f("another namespace is skipped", `<e:Extra xmlns:e="urn:example">`+glyphs(`UnicodeString="E" Indices="36,50"`)+`</e:Extra>`+glyphs(`UnicodeString="A" Indices="36,50"`), nil,
		"A 72,86.4-108,158.4")
	f("a brush's visual is not text on the page", `<Path Data="M 0,0 L 10,0 10,10 Z"><Path.Fill><VisualBrush Viewbox="0,0,1,1" Viewport="0,0,1,1"><VisualBrush.Visual><Canvas>`+
		glyphs(`UnicodeString="V" Indices="36,50"`)+`</Canvas></VisualBrush.Visual></VisualBrush></Path.Fill></Path>`, nil, "")
	f("comments, processing instructions, CDATA", `<!-- <Glyphs UnicodeString="no"/> --><?pi x?>`+glyphs(`UnicodeString="A" Indices="36,50"`), nil,
		"A 72,86.4-108,158.4")

	// The zone: a character counts when its box's centre is inside.
	two := glyphs(`UnicodeString="AB" Indices="36,50;37,50"`)
	f("zone holds A's centre", two, &pagetext.Rect{X0: 80, Y0: 100, X1: 100, Y1: 130}, "A 72,86.4-108,158.4")
	f("zone holds B's centre", two, &pagetext.Rect{X0: 120, Y0: 100, X1: 130, Y1: 130}, "B 108,86.4-144,158.4")
	f("zone above the line", two, &pagetext.Rect{X0: 0, Y0: 0, X1: 720, Y1: 100}, "")
	f("zone below the line", two, &pagetext.Rect{X0: 0, Y0: 140, X1: 720, Y1: 720}, "")
	f("zone reached by a v offset", glyphs(`UnicodeString="A" Indices="36,50,0,-300"`), &pagetext.Rect{X0: 0, Y0: 300, X1: 720, Y1: 400},
		"A 72,302.4-108,374.4")

	// Images: Paths filled with an ImageBrush.
	f("ImageBrush path", `<Path Data="M 96,96 L 192,96 192,144 96,144 Z"><Path.Fill><ImageBrush ImageSource="/i.png" Viewbox="0,0,1,1" ViewboxUnits="Absolute" Viewport="96,96,96,48" ViewportUnits="Absolute"/></Path.Fill></Path>`, nil,
		"img 72,72-144,108")
	f("ImageBrush resource, PathGeometry figures, transforms", `<Canvas RenderTransform="2,0,0,2,0,0"><Canvas.Resources><ResourceDictionary><ImageBrush x:Key="I" ImageSource="/i.png" Viewbox="0,0,1,1" Viewport="0,0,1,1"/></ResourceDictionary></Canvas.Resources>`+
		`<Path Fill="{StaticResource I}" RenderTransform="1,0,0,1,8,0"><Path.Data><PathGeometry><PathFigure StartPoint="0,0"><PolyLineSegment Points="40,0 40,20"/><ArcSegment Point="0,20" Size="10,10" RotationAngle="0" IsLargeArc="false" SweepDirection="Clockwise"/></PathFigure></PathGeometry></Path.Data></Path></Canvas>`, nil,
		"img 12,0-72,30")
	f("relative path data", `<Canvas><Canvas.Resources><ResourceDictionary><ImageBrush x:Key="I" ImageSource="/i.png" Viewbox="0,0,1,1" Viewport="0,0,1,1"/></ResourceDictionary></Canvas.Resources><Path Data="F1 m 96,96 h 96 v 48 l -96,0 z" Fill="{StaticResource I}"/></Canvas>`, nil,
		"img 72,72-144,108")
	f("a solid path is no image", `<Path Data="M 0,0 L 10,0 10,10 Z" Fill="#FF000000"/>`, nil, "")
	f("an image outside the zone", `<Path Data="M 96,96 L 192,96 192,144 96,144 Z"><Path.Fill><ImageBrush ImageSource="/i.png" Viewbox="0,0,1,1" Viewport="0,0,1,1"/></Path.Fill></Path>`,
		&pagetext.Rect{X0: 200, Y0: 0, X1: 720, Y1: 720}, "")
}

// TestFonts: what the font gives: advances and glyphs when Indices has
// none, the box's ascent and descent, obfuscated and plain font parts.
func TestFonts(t *testing.T) {
	sans := dejaVu(t, "DejaVuSans.ttf")
	// DejaVu Sans: 2,048 units to the em, ascent 1,901, descent 483;
	// "A" (glyph 36) advances 1,401 units, "V" (57) 1,401.
	const em = 72.0
	asc, desc := 1901.0/2048*em, 483.0/2048*em
	if math.Abs(sans.ascent*em-asc) > 0.01 || math.Abs(sans.descent*em-desc) > 0.01 {
		t.Fatalf("DejaVu Sans ascent %v descent %v em, want 1901/2048 and 483/2048", sans.ascent, sans.descent)
	}
	adv := 1401.0 / 2048 * em
	y0, y1 := 144-asc, 144+desc
	f := func(name, attrs string, want []pagetext.Char) {
		t.Helper()
		body := `<Glyphs OriginX="96" OriginY="192" FontRenderingEmSize="96" FontUri="../../../Resources/sans.ttf" Fill="#FF000000" ` + attrs + `/>`
		p := readPage(t, pages(t, []string{body}), 0, nil)
		if len(p.Chars) != len(want) {
			t.Fatalf("%s: %s, want %d characters", name, describe(p), len(want))
		}
		for i, c := range p.Chars {
			w := want[i]
			if c.Text != w.Text || math.Abs(c.X0-w.X0) > 0.01 || math.Abs(c.X1-w.X1) > 0.01 || math.Abs(c.Y0-y0) > 0.01 || math.Abs(c.Y1-y1) > 0.01 {
				t.Errorf("%s: character %d is %+v, want %q %v-%v, y %v-%v", name, i, c, w.Text, w.X0, w.X1, y0, y1)
			}
		}
	}
	av := []pagetext.Char{{Text: "A", X0: 72, X1: 72 + adv}, {Text: "V", X0: 72 + adv, X1: 72 + 2*adv}}
	f("UnicodeString only: cmap and hmtx", `UnicodeString="AV"`, av)
	f("glyph indices only: hmtx", `UnicodeString="AV" Indices="36;57"`, av)
	f("empty entries: cmap and hmtx", `UnicodeString="AV" Indices=";"`, av)
	f("an advance given, the other from hmtx", `UnicodeString="AV" Indices="36,50;"`, []pagetext.Char{{Text: "A", X0: 72, X1: 108}, {Text: "V", X0: 108, X1: 108 + adv}})
	f("text longer than Indices", `UnicodeString="AV" Indices="36"`, av)

	// The Writer's obfuscated fonts read back; a broken one is an error
	// naming it, for a run that needs it.
	data := build(t, false, func(w *Writer) { w.Page(720, 720).Text(72, 144, 72, sans, "AV", TextOptions{NoAdvances: true}) })
	p := readPage(t, data, 0, nil)
	if len(p.Chars) != 2 || math.Abs(p.Chars[1].X1-(72+2*adv)) > 0.01 || math.Abs(p.Chars[0].Y0-y0) > 0.01 {
		t.Errorf("obfuscated font: %s", describe(p))
	}
}

// TestZoneFastPath: with a zone, PageText gives exactly the characters
// of the whole page whose centres lie in the zone, on letters and on
// text turned every way.
func TestZoneFastPath(t *testing.T) {
	sans := dejaVu(t, "DejaVuSans.ttf")
	turned := build(t, false, func(w *Writer) {
		p := w.Page(595, 842)
		for i, m := range []Matrix{Identity, {A: 0, B: 1, C: -1, D: 0, E: 200, F: 100}, {A: -1, D: -1, E: 300, F: 300}, {A: 0, B: -1, C: 1, D: 0, E: 100, F: 250}, {A: 0.7, B: 0.7, C: -0.7, D: 0.7, E: 150, F: 150}} {
			c := p.Canvas(m)
			for j := 0; j < 20; j++ {
				c.Text(float64(j*3), float64(j*12), 10, sans, fmt.Sprintf("line %d of transform %d", j, i), TextOptions{})
			}
		}
	})
	for _, data := range [][]byte{letters(t, 3), turned} {
		d, err := open(data, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < d.NumPages(); i++ {
			var whole pagetext.Page
			if err := d.PageText(i, nil, &whole); err != nil {
				t.Fatal(err)
			}
			for _, zone := range []pagetext.Rect{window, {X0: 150, Y0: 120, X1: 260, Y1: 220}, {X0: 0, Y0: 0, X1: 595, Y1: 842}} {
				var want []pagetext.Char
				for _, c := range whole.Chars {
					if zone.Contains((c.X0+c.X1)/2, (c.Y0+c.Y1)/2) {
						want = append(want, c)
					}
				}
				var got pagetext.Page
				if err := d.PageText(i, &zone, &got); err != nil {
					t.Fatal(err)
				}
				if len(want) == 0 {
					t.Fatalf("page %d zone %v: nothing to compare", i, zone)
				}
				if len(got.Chars) != len(want) {
					t.Errorf("page %d zone %v: %d characters, want %d", i, zone, len(got.Chars), len(want))
					continue
				}
				for k := range want {
					if got.Chars[k] != want[k] {
						t.Errorf("page %d zone %v: character %d is %+v, want %+v", i, zone, k, got.Chars[k], want[k])
						break
					}
				}
			}
		}
	}
}

// TestLiftSameAsDecoder: a page read with its Glyphs' values lifted out
// (lift.go) gives what the Decoder alone gives, and a page lift cannot
// read alike (values in single quotes holding a tag, entities, a
// DOCTYPE) is still read right.
func TestLiftSameAsDecoder(t *testing.T) {
	f := func(name, body string, want string) {
		t.Helper()
		data := pages(t, []string{body})
		d, err := open(data, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		var p pagetext.Page
		if err := d.PageText(0, nil, &p); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s := &d.pg
		raw := utf8Part(d.buf)
		var plain pagetext.Page
		if err := s.readWith(&plain, nil, d.pages[0], raw, nil, nil); err != nil {
			t.Fatalf("%s without lifting: %v", name, err)
		}
		if describe(p) != describe(plain) || describe(p) != want {
			t.Errorf("%s:\n lifted %s\n  plain %s\n   want %s", name, describe(p), describe(plain), want)
		}
	}
	f("plain values", glyphs(`UnicodeString="AB" Indices="36,50;37,25"`), "A 72,86.4-108,158.4 | B 108,86.4-126,158.4")
	f("an entity", glyphs(`UnicodeString="A&amp;" Indices="36,50;37,25"`), "A 72,86.4-108,158.4 | & 108,86.4-126,158.4")
	f("a tab (encoding/xml keeps it)", glyphs("UnicodeString=\"A\tB\" Indices=\"36,50;3,10;37,25\""), "A 72,86.4-108,158.4 | \t 108,86.4-115.2,158.4 | B 115.2,86.4-133.2,158.4")
	f("single quotes", glyphs(`UnicodeString='A"' Indices='36,50;37,25'`), `A 72,86.4-108,158.4 | " 108,86.4-126,158.4`)
	f("a Glyphs look-alike in a comment", `<!-- <Glyphs Indices="1"> -->`+glyphs(`UnicodeString="A" Indices="36,50"`), "A 72,86.4-108,158.4")
	f("a Glyphs look-alike in a CDATA", `<![CDATA[<Glyphs Indices="1">]]>`+glyphs(`UnicodeString="A" Indices="36,50"`), "A 72,86.4-108,158.4")
	f("a prefixed Glyphs", `<p:Glyphs xmlns:p="http://schemas.microsoft.com/xps/2005/06" OriginX="96" OriginY="192" FontRenderingEmSize="96" FontUri="/none.ttf" Fill="#FF000000" UnicodeString="A" Indices="36,50"/>`, "A 72,86.4-108,158.4")
	// Should the Decoder see other Glyphs than lift noted, the walker
	// says so (and PageText reads the page again without lifting).
	d, err := open(pages(t, []string{glyphs(`UnicodeString="A" Indices="36,50"`) + glyphs(`UnicodeString="B" Indices="36,50"`)}), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var p pagetext.Page
	if err := d.PageText(0, nil, &p); err != nil || text(p) != "AB" {
		t.Fatalf("%q %v", text(p), err)
	}
	raw := utf8Part(d.buf)
	compact, notes, ok := lift(raw, nil, nil)
	if !ok || len(notes) != 2 {
		t.Fatalf("lift: %v, %d notes", ok, len(notes))
	}
	for _, n := range [][]lifted{notes[:1], append(notes, notes[0])} {
		if err := d.pg.readWith(&p, nil, d.pages[0], compact, raw, n); err != errMismatch {
			t.Errorf("notes %v: %v, want errMismatch", n, err)
		}
	}
	f("a prefixed attribute is not the value", glyphs(`UnicodeString="A" Indices="36,50" e:Indices="1,1" xmlns:e="urn:e"`), "A 72,86.4-108,158.4")
}

// TestStructure: how pages are found: relative and absolute URIs,
// percent-encoding and case, OpenXPS, no relationships part,
// interleaved pieces, UTF-16 parts, a document named twice.
func TestStructure(t *testing.T) {
	body := page(glyphs(`UnicodeString="A" Indices="36,50"`))
	f := func(name string, pkg []byte, wantPages int) {
		t.Helper()
		d, err := open(pkg, Limits{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d.NumPages() != wantPages {
			t.Fatalf("%s: %d pages, want %d", name, d.NumPages(), wantPages)
		}
		for i := 0; i < wantPages; i++ {
			var p pagetext.Page
			if err := d.PageText(i, nil, &p); err != nil {
				t.Fatalf("%s: page %d: %v", name, i+1, err)
			}
			if text(p) != "A" {
				t.Fatalf("%s: page %d: %q", name, i+1, text(p))
			}
		}
	}
	f("relative URIs", zipOf(t, false, "_rels/.rels", relsXML, "seq.fdseq", seqXML,
		"Documents/1/doc.fdoc", `<FixedDocument `+xpsNS+`><PageContent Source="./Pages/../Pages/1.fpage"/></FixedDocument>`,
		"Documents/1/Pages/1.fpage", body), 1)
	f("absolute URIs, percent-encoding and case", zipOf(t, false, "_rels/.rels", relsXML, "seq.fdseq", `<FixedDocumentSequence `+xpsNS+`><DocumentReference Source="/DOCUMENTS/1/doc.fdoc"/></FixedDocumentSequence>`,
		"Documents/1/doc.fdoc", `<FixedDocument `+xpsNS+`><PageContent Source="/Documents/1/Pages/Page%20One.fpage"/></FixedDocument>`,
		"Documents/1/Pages/Page One.fpage", body), 1)
	f("no relationships: the only .fdseq", zipOf(t, false, "seq.fdseq", seqXML,
		"Documents/1/doc.fdoc", `<FixedDocument `+xpsNS+`><PageContent Source="Pages/1.fpage"/></FixedDocument>`,
		"Documents/1/Pages/1.fpage", body), 1)
	oxps := `xmlns="http://schemas.openxps.org/oxps/v1.0"`
	f("OpenXPS", zipOf(t, false, "_rels/.rels", strings.ReplaceAll(relsXML, "http://schemas.microsoft.com/xps/2005/06/", "http://schemas.openxps.org/oxps/v1.0/"),
		"seq.fdseq", strings.ReplaceAll(seqXML, xpsNS, oxps),
		"Documents/1/doc.fdoc", `<FixedDocument `+oxps+`><PageContent Source="Pages/1.fpage"/></FixedDocument>`,
		"Documents/1/Pages/1.fpage", strings.ReplaceAll(body, xpsNS, oxps)), 1)
	f("interleaved pieces", zipOf(t, false, "_rels/.rels", relsXML, "seq.fdseq", seqXML,
		"Documents/1/doc.fdoc", `<FixedDocument `+xpsNS+`><PageContent Source="Pages/1.fpage"/></FixedDocument>`,
		"Documents/1/Pages/1.fpage/[0].piece", body[:40], "Documents/1/Pages/1.fpage/[1].piece", body[40:90], "Documents/1/Pages/1.fpage/[2].last.piece", body[90:]), 1)
	f("UTF-16 parts", zipOf(t, false, "_rels/.rels", relsXML, "seq.fdseq", utf16le(`<?xml version="1.0" encoding="UTF-16"?>`+seqXML),
		"Documents/1/doc.fdoc", utf16le(`<FixedDocument `+xpsNS+`><PageContent Source="Pages/1.fpage"/></FixedDocument>`),
		"Documents/1/Pages/1.fpage", utf16le(`<?xml version="1.0" encoding="utf-16"?>`+body)), 1)
	f("a document named twice", zipOf(t, false, "_rels/.rels", relsXML, "seq.fdseq", `<FixedDocumentSequence `+xpsNS+`><DocumentReference Source="d.fdoc"/><DocumentReference Source="d.fdoc"/></FixedDocumentSequence>`,
		"d.fdoc", `<FixedDocument `+xpsNS+`><PageContent Source="1.fpage"><PageContent.LinkTargets><LinkTarget Name="x"/></PageContent.LinkTargets></PageContent><PageContent Source="1.fpage"/></FixedDocument>`,
		"1.fpage", body), 4)
}

func utf16le(s string) string {
	b := []byte{0xFF, 0xFE}
	for _, r := range s {
		if r >= 0x10000 {
			panic("BMP only")
		}
		b = append(b, byte(r), byte(r>>8))
	}
	return string(b)
}

// TestPageIndex: a page number out of range is an error, not a panic.
func TestPageIndex(t *testing.T) {
	d, err := open(pages(t, []string{""}), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var p pagetext.Page
	for _, i := range []int{-1, 1, 1 << 40} {
		if err := d.PageText(i, nil, &p); err == nil || errors.Is(err, ErrMalformed) {
			t.Errorf("page %d: %v", i, err)
		}
	}
}

// TestWriterErrors: what the Writer cannot write is an error of Close.
func TestWriterErrors(t *testing.T) {
	sans := dejaVu(t, "DejaVuSans.ttf")
	f := func(name string, fn func(w *Writer), msg string) {
		t.Helper()
		var b strings.Builder
		w := NewWriter(&b)
		fn(w)
		if err := w.Close(); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", name, err, msg)
		}
	}
	f("no pages", func(w *Writer) {}, "at least one page")
	f("no font", func(w *Writer) { w.Page(10, 10).Text(1, 1, 1, nil, "A", TextOptions{}) }, "needs a font")
	f("no text", func(w *Writer) { w.Page(10, 10).Text(1, 1, 1, sans, "", TextOptions{}) }, "needs a font and valid UTF-8 text")
	f("not UTF-8", func(w *Writer) { w.Page(10, 10).Text(1, 1, 1, sans, "\xff", TextOptions{}) }, "valid UTF-8")
	f("not a PNG", func(w *Writer) { w.Page(10, 10).Image(pagetext.Rect{X1: 1, Y1: 1}, []byte("GIF89a")) }, "xps: Image: ")
}
