package production

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/lodge-mail/lodge/internal/pdf"
	"github.com/lodge-mail/lodge/pipeline"
)

// The sheet code: a Data Matrix in the bottom-left corner of every sheet's
// front, outside the address window, carrying "EPID/letter/sheet/sheets"
// so that an inserter can prove no sheet is lost or swapped.
const (
	codeX      = 6 * mm // from the left edge
	codeY      = 6 * mm // from the bottom edge
	codeModule = 0.42 * mm
)

// SheetCode is the text of the code on a letter's sheet (1-based of n).
func SheetCode(epid string, letter, sheet, n int) string {
	return epid + "/" + strconv.Itoa(letter) + "/" + strconv.Itoa(sheet) + "/" + strconv.Itoa(n)
}

// Compose implements pipeline.Producer: the batch's PDF (every letter's
// sheets in order: cover sheet where asked, background behind the pages,
// the address in the window of unaddressed letters, a blank back after an
// odd page in duplex, the sheet code on each front, greys for mono), its
// manifests and lodgement summary, handed over into the hot folder.
//
// With an object store (Config.Blobs) the batch's files are also put into
// it (print/<batch>/...: publishBatch) before Compose returns, so that
// every node reads them (Batches) once the mailroom records the batch
// ready.
func (p *Producer) Compose(ctx context.Context, m *pipeline.Mailing, b *pipeline.Batch, letters []pipeline.Letter) (string, error) {
	man, lod := manifest(m, b, letters)
	dir, err := p.handOver(b, man, lod, func(path string) error { return p.writeBatchPDF(ctx, path, m, b, letters) })
	if err != nil {
		return "", err
	}
	if err := p.publishBatch(ctx, b.ID, dir); err != nil {
		return "", err
	}
	return dir, nil
}

var _ pipeline.Producer = (*Producer)(nil)

// source is an open document of a batch: its PDF and the importer of its
// pages into the batch.
type source struct {
	f   *os.File
	imp *pdf.Importer
}

// composer writes one batch PDF.
type composer struct {
	p       *Producer
	ctx     context.Context
	m       *pipeline.Mailing
	w       *pdf.Writer
	sources map[string]*source
	c       pdf.Content
}

// open returns the importer of a mailing's document, opening it (as a PDF
// made once, for PostScript and XPS) the first time.
func (k *composer) open(name string) (*pdf.Importer, error) {
	if s := k.sources[name]; s != nil {
		return s.imp, nil
	}
	f, ok := k.m.File(name)
	if !ok {
		return nil, fmt.Errorf("document %s is not part of mailing %s", name, k.m.EPID)
	}
	path, err := k.p.pdfOf(k.ctx, k.m, f)
	if err != nil {
		return nil, err
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	doc, err := pdf.Open(fh, fi.Size(), pdf.Limits{})
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s := &source{f: fh, imp: k.w.Importer(doc)}
	k.sources[name] = s
	return s.imp, nil
}

func (p *Producer) writeBatchPDF(ctx context.Context, path string, m *pipeline.Mailing, b *pipeline.Batch, letters []pipeline.Letter) error {
	out, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	defer out.Close()
	k := &composer{p: p, ctx: ctx, m: m, w: pdf.NewWriter(out), sources: map[string]*source{}}
	defer func() {
		for _, s := range k.sources {
			s.f.Close()
		}
	}()
	var background *pdf.Form
	if bg := m.Production.Background; bg != "" {
		imp, err := k.open(bg)
		if err != nil {
			return fmt.Errorf("background %s: %w", bg, err)
		}
		f, err := imp.Page(0)
		if err != nil {
			return fmt.Errorf("background %s: %w", bg, err)
		}
		background = &f
	}
	for li := range letters {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := k.letter(b, &letters[li], background); err != nil {
			if ctx.Err() != nil || k.w.Err() != nil || isStoreError(err) {
				return fmt.Errorf("letter %d: %w", letters[li].Idx, err) // ours, not the letter's
			}
			// the letter's documents cannot be read: the mailroom holds it
			// and composes the batch without it
			return &pipeline.LetterError{Idx: letters[li].Idx, Err: err}
		}
	}
	if err := k.w.Close(); err != nil {
		return err
	}
	return out.Close()
}

// letter writes one letter's pages.
func (k *composer) letter(b *pipeline.Batch, l *pipeline.Letter, background *pdf.Form) error {
	lp, err := plan(k.m, l)
	if err != nil {
		return err
	}
	env := k.p.cfg.envelope(l.Envelope)
	c := &k.c
	pages, sheet := 0, 0 // pages of this letter written; its current sheet
	finish := func(colour bool) {
		if !b.Duplex || pages%2 == 0 {
			sheet++
			sheetCode(c, k.m.EPID, l.Idx, sheet, l.Sheets)
		}
		if colour && !b.Colour {
			greys(c)
		}
		k.w.AddPage(a4W, a4H, c)
		c.Reset()
		pages++
	}
	if l.CoverSheet {
		address(c, env, l.Postal)
		finish(false)
	}
	first := true
	for _, part := range lp.parts {
		imp, err := k.open(part.file.Name)
		if err != nil {
			return err
		}
		for pg := part.first; pg <= part.last; pg++ {
			f, err := imp.Page(pg)
			if err != nil {
				return fmt.Errorf("%s page %d: %w", part.file.Name, pg+1, err)
			}
			if !b.Colour {
				paper(c) // the backdrop the greys blend with
			}
			if background != nil && !part.attachment && (first || k.m.Production.BackgroundPages == "all") {
				place(c, *background)
			}
			place(c, f)
			if first && len(l.Masks) > 0 {
				masks(c, f, l.Masks)
			}
			if first && l.Unaddressed && !l.CoverSheet {
				address(c, env, l.Postal)
			}
			first = false
			finish(true)
		}
	}
	if b.Duplex && pages%2 == 1 {
		// the next letter starts on a front: a blank back
		k.w.AddPage(a4W, a4H, c)
	}
	if pages != l.Pages || sheet != l.Sheets {
		return fmt.Errorf("its documents changed: pages %d and sheets %d as composed, %d and %d as checked", pages, sheet, l.Pages, l.Sheets)
	}
	return k.w.Err()
}

// place draws a page form on an A4 page: centred, turned a quarter
// (counter-clockwise) when it is landscape, and scaled to fit when it is
// not A4 (a page within a4Tol of A4 is drawn at its size).
func place(c *pdf.Content, f pdf.Form) {
	w, h := f.W, f.H
	if !(w > 0 && h > 0) {
		return
	}
	turn := w > h*1.05 // landscape on a portrait sheet
	if turn {
		w, h = h, w
	}
	s := 1.0
	if math.Abs(w-a4W) > a4Tol || math.Abs(h-a4H) > a4Tol {
		s = min(a4W/w, a4H/h)
	}
	dx, dy := (a4W-w*s)/2, (a4H-h*s)/2
	c.Save()
	if turn {
		// the form's x runs up the sheet: its top edge on the left
		c.Transform(0, s, -s, 0, dx+w*s, dy)
	} else {
		c.Transform(s, 0, 0, s, dx, dy)
	}
	c.Form(f.Ref)
	c.Restore()
}

// masks paints white the areas of a letter's first page that are not for
// print (the auto processor's ref:, email:, fax: and sms: lines), where
// place put the page: in the page form's own space, so that a page
// scaled or turned to fit the sheet has the same areas masked. Each area
// grows by half a point: anti-aliased edges of the glyphs go too.
func masks(c *pdf.Content, f pdf.Form, areas []pipeline.Area) {
	w, h := f.W, f.H
	if !(w > 0 && h > 0) {
		return
	}
	c.Save()
	turn := w > h*1.05
	bw, bh := w, h
	if turn {
		bw, bh = h, w
	}
	s := 1.0
	if math.Abs(bw-a4W) > a4Tol || math.Abs(bh-a4H) > a4Tol {
		s = min(a4W/bw, a4H/bh)
	}
	dx, dy := (a4W-bw*s)/2, (a4H-bh*s)/2
	if turn {
		c.Transform(0, s, -s, 0, dx+bw*s, dy)
	} else {
		c.Transform(s, 0, 0, s, dx, dy)
	}
	whiteAreas(c, h, areas)
	c.Restore()
}

// whiteAreas paints areas white on a page of height h drawn at the
// origin (areas are in millimetres from the top-left corner), each grown
// by half a point.
func whiteAreas(c *pdf.Content, h float64, areas []pipeline.Area) {
	c.Gray(1)
	for _, a := range areas {
		c.Rect(a.X*mm-0.5, h-(a.Y+a.H)*mm-0.5, a.W*mm+1, a.H*mm+1)
	}
	c.Fill()
}

// Address text in the window: 10 pt, smaller (down to minFont) when a
// line would not fit the window's width.
const (
	windowMargin = 4 * mm
	minFont      = 6.0
)

// address sets a letter's postal address inside an envelope's window, on
// white.
func address(c *pdf.Content, env Envelope, lines []string) {
	win := env.Window
	size := fontSz
	room := win.W*mm - 2*windowMargin
	for _, line := range lines {
		if w := pdf.Helvetica.Width(line, size); w > room {
			size = max(minFont, size*room/w)
		}
	}
	x := win.X*mm + windowMargin
	y := a4H - win.Y*mm - windowMargin - size
	c.Save()
	c.Gray(1)
	c.Rect(win.X*mm, a4H-(win.Y+win.H)*mm, win.W*mm, win.H*mm)
	c.Fill()
	c.Gray(0)
	for _, line := range lines {
		c.Text(pdf.Helvetica, size, x, y, line)
		y -= size * 1.25
	}
	c.Restore()
}

// sheetCode draws the sheet's Data Matrix (on white, whatever the page
// has there).
func sheetCode(c *pdf.Content, epid string, letter, sheet, n int) {
	c.DataMatrix(SheetCode(epid, letter, sheet, n), codeX, codeY, codeModule)
}

// paper paints the page white: the opaque backdrop greys needs. Where
// nothing is painted the backdrop is transparent, and a renderer blends
// the grey with nothing (poppler shows it as mid grey).
func paper(c *pdf.Content) {
	c.Save()
	c.Gray(1)
	c.Rect(0, 0, a4W, a4H)
	c.Fill()
	c.Restore()
}

// greys turns everything painted on the page so far into greys of the
// same luminosity: a mid grey painted over it with the Saturation blend
// mode takes every colour's saturation to zero. The page must have been
// painted white first (paper).
func greys(c *pdf.Content) {
	c.Save()
	c.Blend(pdf.Saturation)
	c.Gray(0.5)
	c.Rect(0, 0, a4W, a4H)
	c.Fill()
	c.Restore()
}
