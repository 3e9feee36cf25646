package corpus

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/lodge-mail/lodge/internal/pdf"
)

// Layouts are the layouts of the corpus, with the producers that draw
// them:
//
//	plain        internal/pdf   one or two pages, Helvetica or Courier, return address, date block, body
//	statement    internal/pdf   statement runs of 1 to 8 pages, tables in Courier, some continuation pages
//	                            repeating the address, some landscape continuation pages
//	form         internal/pdf   the window text inside a form XObject, or a form nested in a scaled form
//	fixed_pages  internal/pdf   two pages per letter, the address on both, consecutive letters sometimes
//	                            alike (a pages-per-letter profile splits it)
//	rotated      PDFBuilder     pages stored with /Rotate 90, 180 or 270 and drawn to display upright, a logo
//	                            image, landscape continuation pages (portrait media turned 90)
//	postscript   Ghostscript    Times-Roman in a custom encoding, Helvetica, Courier; white and render mode 3
//	                            references; kept as PostScript too
//	truetype     Ghostscript    TrueType fonts (DejaVu, Liberation) embedded by pdfwrite; kept as PostScript too
//	letterhead   Chromium       a banner, a logo image, two-column body, CID TrueType fonts (Identity-H)
//
// XPS copies of plain and form documents keep their layouts (forms become
// Canvas elements with transforms). Non-conforming layouts:
//
//	nc_leading   internal/pdf   pages without an address before the first letter (HoldNoAddressBefore)
//	nc_scan      PDFBuilder     the window shows an image only (HoldScan)
//	nc_unreadable PDFBuilder    the address in a Type 3 font without ToUnicode, glyphs named for nothing
//	                            (HoldUnreadable)
//	nc_edge      internal/pdf   the address starts 10 mm left of the window, past the tolerance
//	                            (HoldWindowEdge)
var Layouts = []string{"plain", "statement", "form", "fixed_pages", "rotated", "postscript", "truetype",
	"letterhead", "nc_leading", "nc_scan", "nc_unreadable", "nc_edge"}

// letter is a letter being made: its pages and its manifest entry (page
// numbers filled in when it is placed in a document).
type letter struct {
	pages []page
	m     Letter
}

// gen makes letters from one random source.
type gen struct {
	r      *rand.Rand
	serial int
	made   map[string]int // letters made so far by layout
}

// style says what a producer can draw for a layout.
type style struct {
	layout    string
	fonts     []font // fonts the window text may be set in
	invisible bool   // render mode 3 (or transparent) text can be drawn
}

// estWidth is a generous estimate of the width of s in f at size points:
// Helvetica's metrics, widened for the fonts that are wider.
func estWidth(f font, s string, size float64) float64 {
	switch f {
	case mono:
		return float64(len([]rune(s))) * 0.6 * size
	case sansBold:
		return pdf.HelveticaBold.Width(s, size) * 1.02
	}
	w := pdf.Helvetica.Width(s, size)
	switch f {
	case serif:
		w *= 1.08
	case dejavu:
		w *= 1.17
	case dejavuSerif:
		w *= 1.25
	case cipher:
		w = float64(len([]rune(s))) * 0.6 * size
	}
	return w
}

// textBox is a generous box around a line of text.
func textBox(t text) Rect {
	return Rect{t.X, t.Y - 0.95*t.Size, t.X + estWidth(t.Font, t.S, t.Size), t.Y + 0.3*t.Size}
}

func (r Rect) intersects(o Rect) bool {
	return r.X0 < o.X1 && o.X0 < r.X1 && r.Y0 < o.Y1 && o.Y0 < r.Y1
}

func (r Rect) inside(o Rect) bool {
	return r.X0 >= o.X0 && r.X1 <= o.X1 && r.Y0 >= o.Y0 && r.Y1 <= o.Y1
}

// windowText sets a recipient's window lines in font f: where in the
// window (or, with offset, partly outside it but within the tolerance),
// at what size. It fills the letter's manifest fields.
func (g *gen) windowText(rc recipient, f font, offset bool, l *Letter) []text {
	type line struct {
		s   string
		ink ink
	}
	var lines []line
	add := func(prefix, v string, k ink) {
		if v != "" {
			lines = append(lines, line{prefix + v, k})
		}
	}
	add("ref:", rc.Ref, rc.RefInk)
	add("email:", rc.Email, rc.ChannelInk)
	add("fax:", rc.Fax, rc.ChannelInk)
	add("sms:", rc.SMS, rc.ChannelInk)
	for _, a := range rc.Address {
		lines = append(lines, line{a, black})
	}
	l.Address, l.Verdict = rc.Address, rc.Verdict
	l.Reference, l.Email, l.Fax, l.SMS = rc.Ref, rc.Email, rc.Fax, rc.SMS
	if rc.refStyle != "" {
		l.Features = append(l.Features, rc.refStyle)
	}
	if rc.channelMode != "" {
		l.Features = append(l.Features, rc.channelMode)
	}
	l.Font = fontNames[f]
	inner := Rect{Zone.X0 + 1.2*MM, Zone.Y0 + 1.2*MM, Zone.X1 - 1.2*MM, Zone.Y1 - 1.2*MM}
	for _, size := range []float64{10, 9.5, 9, 8.5, 8, 7.5, 7} {
		if g.r.IntN(3) == 0 && size == 10 {
			size = 11
		}
		pitch := size * (1.15 + 0.05*float64(g.r.IntN(3)))
		width := 0.0
		for _, ln := range lines {
			width = max(width, estWidth(f, ln.s, size))
		}
		height := 0.95*size + float64(len(lines)-1)*pitch + 0.3*size
		xMax, topMax := inner.X1-width, inner.Y1-height
		if xMax < inner.X0 || topMax < inner.Y0 {
			continue
		}
		// In the window proper: 2 to 15 mm in, 1 to 10 mm down.
		x := min(xMax, (22+13*g.r.Float64())*MM)
		top := min(topMax, (51+9*g.r.Float64())*MM)
		if offset {
			// Outside the window, within the tolerance: left, top or bottom.
			switch g.r.IntN(3) {
			case 0:
				x = inner.X0
			case 1:
				top = inner.Y0
			default:
				top = topMax
			}
			if x < 20*MM || top < 50*MM || top+height > 88*MM {
				l.Features = append(l.Features, "offset")
			}
		}
		x, top = round2(x), round2(top)
		var out []text
		y := top + 0.95*size
		for _, ln := range lines {
			out = append(out, text{X: x, Y: round2(y), Font: f, Size: size, S: ln.s, Ink: ln.ink})
			y += pitch
		}
		l.BlockX, l.BlockY, l.BlockSize = x, out[0].Y, size
		return out
	}
	panic(layoutBug(fmt.Sprintf("window lines do not fit: %v", lines)))
}

func round2(v float64) float64 { return float64(int(v*100+0.5)) / 100 }

// Words for body text: nothing in them reads as an address.
var bodyWords = strings.Fields(`thank you for your account this statement shows the charges and payments
since your last bill please pay the amount due by the date shown above you can pay online by phone or at
any post office if you have already paid please disregard this notice our customer service team is
available on weekdays to help with any questions about your service usage was higher this period than
the same period last year we have updated our terms and conditions which are available on our website
your next reading is scheduled for the coming quarter energy saving tips are included with this letter`)

// bodyLines sets paragraphs of body text in a column from y0 to y1.
func (g *gen) bodyLines(p *page, x, w, y0, y1 float64, f font, size float64) {
	pitch := size * 1.3
	var b strings.Builder
	for y := y0 + size; y < y1; y += pitch {
		if g.r.IntN(7) == 0 {
			y += pitch // a paragraph break
		}
		b.Reset()
		for {
			word := bodyWords[g.r.IntN(len(bodyWords))]
			if b.Len() > 0 && estWidth(f, b.String()+" "+word, size) > w {
				break
			}
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(word)
		}
		s := b.String()
		p.Texts = append(p.Texts, text{X: x, Y: round2(y), Font: f, Size: size, S: strings.ToUpper(s[:1]) + s[1:]})
	}
}

// body fills the page below the window zone with text in one or two
// columns (the letterhead and statement layouts draw their own).
func (g *gen) body(p *page, y0 float64, cols int, f font, size float64) {
	left, right := 20*MM, p.W-20*MM
	y1 := p.H - 25*MM
	if cols == 1 {
		g.bodyLines(p, left, right-left, y0, y1, f, size)
		return
	}
	cw := (right - left - 8*MM) / 2
	g.bodyLines(p, left, cw, y0, y1, f, size)
	g.bodyLines(p, left+cw+8*MM, cw, y0, y1, f, size)
}

// table sets rows of a statement's transactions from y0 to y1.
func (g *gen) table(p *page, y0, y1 float64, size float64) {
	items := []string{"Service charge", "Usage peak", "Usage off-peak", "Payment received - thank you", "Late fee waived", "Supply charge", "Discount", "Adjustment"}
	x := 20 * MM
	for y := y0 + size; y < y1; y += size * 1.4 {
		amount := fmt.Sprintf("%d.%02d", g.r.IntN(900), g.r.IntN(100))
		row := fmt.Sprintf("%02d/%02d/2026  %-30s %10s", 1+g.r.IntN(28), 1+g.r.IntN(12), pick(g.r, items), amount)
		if p.W > p.H {
			row += fmt.Sprintf("   %-22s %10s", pick(g.r, items), fmt.Sprintf("%d.%02d", g.r.IntN(900), g.r.IntN(100)))
		}
		p.Texts = append(p.Texts, text{X: x, Y: round2(y), Font: mono, Size: size, S: row})
	}
}

// sender is the letter's sender, for letterheads and return addresses.
var senders = []struct{ name, ret string }{
	{"Example Utilities Pty Ltd", "If undelivered return to PO Box 1234 SYDNEY NSW 2001"},
	{"Harbourside Water", "Return address: Locked Bag 7, PARRAMATTA NSW 2124"},
	{"Southern Energy Co", "If undeliverable please return to GPO Box 99 MELBOURNE VIC 3001"},
	{"Tasman Insurance Ltd", "Returns: PO Box 410, HOBART TAS 7001"},
}

// letterhead draws a sender's header: a banner or a plain name, a logo,
// a return address just above the zone.
func (g *gen) letterhead(p *page, banner, logo, ret bool, l *Letter) {
	s := pick(g.r, senders)
	if banner {
		p.Boxes = append(p.Boxes, box{X: 0, Y: 0, W: p.W, H: 28 * MM, Grey: 0.3})
		p.Texts = append(p.Texts, text{X: 20 * MM, Y: 17 * MM, Font: sansBold, Size: 16, S: s.name, Ink: white})
	} else {
		p.Texts = append(p.Texts, text{X: 20 * MM, Y: 20 * MM, Font: sansBold, Size: 14, S: s.name})
	}
	if logo {
		p.Boxes = append(p.Boxes, box{X: 150 * MM, Y: 6 * MM, W: 40 * MM, H: 20 * MM, Image: logoImage})
		addFeature(l, "logo")
	}
	if ret {
		p.Texts = append(p.Texts, text{X: 20 * MM, Y: 42 * MM, Font: sans, Size: 7, S: s.ret})
		addFeature(l, "return_address")
	}
}

// infoBlock draws the date and account lines right of the window, level
// with it.
func (g *gen) infoBlock(p *page, account string, pageNo, pages int, l *Letter) {
	lines := []string{fmt.Sprintf("Date: %d March 2026", 1+g.r.IntN(28)), "Account: " + account,
		fmt.Sprintf("Page %d of %d", pageNo, pages)}
	for i, s := range lines {
		p.Texts = append(p.Texts, text{X: 128 * MM, Y: (56 + 6*float64(i)) * MM, Font: sans, Size: 9, S: s})
	}
	addFeature(l, "info_block")
}

// continuation draws a continuation page's header and footer.
func continuation(p *page, account string, pageNo, pages int) {
	p.Texts = append(p.Texts,
		text{X: 20 * MM, Y: 18 * MM, Font: sansBold, Size: 11, S: "Account " + account + " (continued)"},
		text{X: 20 * MM, Y: p.H - 12*MM, Font: sans, Size: 8, S: fmt.Sprintf("Page %d of %d", pageNo, pages)})
}

func addFeature(l *Letter, f string) {
	if !slices.Contains(l.Features, f) {
		l.Features = append(l.Features, f)
	}
}

func (g *gen) account() string { return fmt.Sprintf("%04d %04d", g.r.IntN(10000), g.r.IntN(10000)) }

// recipient draws the next letter's recipient, different from prev.
func (g *gen) recipient(st style, prev []string) recipient {
	g.serial++
	for {
		rc := newRecipient(g.r, g.serial, g.made[st.layout], st.invisible)
		if !slices.Equal(rc.Address, prev) {
			return rc
		}
	}
}

// makeLetter makes one letter of a conforming layout with n pages. The
// first letters of a layout have its features: a statement repeating its
// address, one with a landscape page, a block outside the window within
// the tolerance.
func (g *gen) makeLetter(st style, rc recipient, n int) letter {
	k := g.made[st.layout]
	g.made[st.layout]++
	l := Letter{Layout: st.layout}
	f := pick(g.r, st.fonts)
	if k < len(st.fonts) {
		f = st.fonts[k]
	}
	offset := g.r.IntN(5) == 0 || k == 2
	if (st.layout == "statement" || st.layout == "rotated" || st.layout == "postscript") && k < 2 {
		n = max(n, 3)
	}
	window := g.windowText(rc, f, offset, &l)
	acct := g.account()
	pages := make([]page, n)
	for i := range pages {
		pages[i] = page{W: a4W, H: a4H}
	}
	first := &pages[0]
	first.Texts = append(first.Texts, window...)
	switch st.layout {
	case "plain":
		g.letterhead(first, false, false, g.r.IntN(2) == 0, &l)
		if g.r.IntN(2) == 0 {
			g.infoBlock(first, acct, 1, n, &l)
		}
		g.body(first, 105*MM, 1, pick(g.r, []font{sans, mono}), 10)
	case "form":
		form := 1 + g.serial%2
		for i := range first.Texts {
			first.Texts[i].Form = form
		}
		addFeature(&l, [...]string{"", "form", "nested_form"}[form])
		g.letterhead(first, false, false, true, &l)
		g.body(first, 105*MM, 1, sans, 10)
	case "statement":
		g.letterhead(first, g.r.IntN(2) == 0, false, true, &l)
		g.infoBlock(first, acct, 1, n, &l)
		first.Texts = append(first.Texts, text{X: 20 * MM, Y: 108 * MM, Font: sansBold, Size: 12, S: "Statement of account"})
		g.table(first, 114*MM, a4H-25*MM, 9)
	case "fixed_pages":
		g.letterhead(first, false, false, false, &l)
		g.body(first, 105*MM, 1, sans, 10)
	case "rotated", "postscript", "truetype":
		g.letterhead(first, g.r.IntN(2) == 0, st.layout != "truetype", g.r.IntN(2) == 0, &l)
		if g.r.IntN(2) == 0 {
			g.infoBlock(first, acct, 1, n, &l)
		}
		bodyFont := sans
		if st.layout == "truetype" {
			bodyFont = dejavuSerif
		} else if g.r.IntN(2) == 0 {
			bodyFont = serif
		}
		g.body(first, 105*MM, 1+g.r.IntN(2), bodyFont, 10)
	case "letterhead":
		g.letterhead(first, true, true, true, &l)
		g.infoBlock(first, acct, 1, n, &l)
		g.body(first, 105*MM, 2, pick(g.r, []font{serif, sans, dejavuSerif}), 10)
		addFeature(&l, "columns")
	default:
		panic(layoutBug("no layout " + st.layout))
	}
	repeat := n > 1 && (st.layout == "fixed_pages" || (st.layout == "statement" && (g.r.IntN(3) == 0 || k == 0) && k != 1))
	if repeat && st.layout != "fixed_pages" {
		addFeature(&l, "repeat_address")
	}
	for i := 1; i < n; i++ {
		p := &pages[i]
		landscape := (st.layout == "statement" || st.layout == "rotated" || st.layout == "postscript") && (g.r.IntN(6) == 0 || k == 1 && i == 1)
		if landscape && !repeat {
			p.W, p.H = a4H, a4W
			addFeature(&l, "landscape_page")
		}
		continuation(p, acct, i+1, n)
		if repeat {
			for _, t := range window {
				if t.Ink == black && slices.Contains(rc.Address, t.S) {
					p.Texts = append(p.Texts, t)
				}
			}
		}
		switch st.layout {
		case "statement":
			g.table(p, 105*MM, p.H-20*MM, 9)
		case "letterhead":
			g.body(p, 105*MM, 2, sans, 10)
		default:
			g.body(p, 105*MM, 1, sans, 10)
		}
	}
	return letter{pages: pages, m: l}
}

// layoutBug is a mistake of this package's layouts (never of its
// caller's): plan recovers it as an error.
type layoutBug string

func (b layoutBug) Error() string { return "corpus: layout bug: " + string(b) }

// checkPages fails when a layout put something other than a letter's
// window lines in the C4 zone: a bug in this package, not in a reader.
func checkPages(ls []letter) error {
	for _, lt := range ls {
		for i, p := range lt.pages {
			for _, t := range p.Texts {
				b := textBox(t)
				if !b.intersects(ZoneC4) {
					continue
				}
				if (i == 0 || slices.Contains(lt.m.Address, t.S)) && (lt.m.Hold != "" || b.inside(Zone)) {
					continue
				}
				return layoutBug(fmt.Sprintf("%s page %d: %q at %.1f,%.1f mm is in the zone", lt.m.Layout, i+1, t.S, t.X/MM, t.Y/MM))
			}
			for _, bx := range p.Boxes {
				if (Rect{bx.X, bx.Y, bx.X + bx.W, bx.Y + bx.H}).intersects(ZoneC4) && lt.m.Hold != HoldScan {
					return layoutBug(fmt.Sprintf("%s page %d: a box in the zone", lt.m.Layout, i+1))
				}
			}
		}
	}
	return nil
}

// leadingPage is a page with no address: a print run's cover sheet.
func (g *gen) leadingPage() page {
	p := page{W: a4W, H: a4H}
	p.Texts = append(p.Texts, text{X: 20 * MM, Y: 20 * MM, Font: sansBold, Size: 14, S: "Print run summary"})
	g.body(&p, 105*MM, 1, sans, 10)
	return p
}

// makeNonConforming makes a letter the auto processor must hold.
func (g *gen) makeNonConforming(layout string, prev []string) letter {
	st := style{layout: layout, fonts: []font{sans}}
	rc := g.recipient(st, prev)
	rc.Ref, rc.Email, rc.Fax, rc.SMS, rc.refStyle, rc.channelMode = "", "", "", "", "", ""
	l := Letter{Layout: layout}
	n := 1 + g.r.IntN(2)
	pages := make([]page, n)
	for i := range pages {
		pages[i] = page{W: a4W, H: a4H}
	}
	first := &pages[0]
	g.letterhead(first, false, false, true, &l)
	switch layout {
	case "nc_scan":
		l.Hold, l.Font, l.Address = HoldScan, "(image)", []string{}
		first.Boxes = append(first.Boxes, box{X: 22 * MM, Y: 52 * MM, W: 90 * MM, H: 34 * MM, Image: scanImage})
	case "nc_unreadable":
		l.Hold = HoldUnreadable
		first.Texts = append(first.Texts, g.windowText(rc, cipher, false, &l)...)
	case "nc_edge":
		l.Hold = HoldWindowEdge
		window := g.windowText(rc, sans, false, &l)
		for i := range window {
			window[i].X = 10 * MM // 7 mm past the tolerance
		}
		l.BlockX = 10 * MM
		first.Texts = append(first.Texts, window...)
	default:
		panic(layoutBug("no layout " + layout))
	}
	g.body(first, 105*MM, 1, sans, 10)
	for i := 1; i < n; i++ {
		continuation(&pages[i], g.account(), i+1, n)
		g.body(&pages[i], 105*MM, 1, sans, 10)
	}
	return letter{pages: pages, m: l}
}

func abs(v float64) float64 { return max(v, -v) }
