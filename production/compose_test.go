package production

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/internal/testdoc"
	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/internal/testdoc/readback"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/internal/tests3"
	"github.com/lodge-mail/lodge/pipeline"
)

// setup is a way production is set up: the tests of a Producer run over
// each (eachSetup).
type setup struct {
	name string
	// blobs makes the object store (nil: none) and says where it keeps
	// bytes on this machine (for the tests that look for a password in
	// every file). With a store, a test mailing's documents are only in
	// it: their Path names no file, so that production must read them by
	// their key.
	blobs func(t *testing.T) (blob.Store, []string)
}

var setups = []setup{
	// one node: documents at their Path, batches and letters' PDFs in
	// the hot and work folders only
	{name: "disk"},
	// the object store on the local disk
	{name: "local", blobs: func(t *testing.T) (blob.Store, []string) {
		s, err := blob.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s, []string{s.Root()}
	}},
	// S3 (a real versitygw, its own bucket), as several nodes share it
	{name: "s3", blobs: func(t *testing.T) (blob.Store, []string) {
		s, cache := newS3(t, tests3.NewBucket(t))
		return s, []string{cache, tests3.Shared(t).Root()}
	}},
}

// newS3 returns a node's store of a bucket of the test server (each
// node its own cache), and its cache.
func newS3(t *testing.T, bucket string) (*blob.S3, string) {
	t.Helper()
	srv := tests3.Shared(t)
	cache := t.TempDir()
	s, err := blob.NewS3(context.Background(), blob.S3Config{Bucket: bucket, Endpoint: srv.Endpoint(),
		AccessKey: srv.AccessKey(), SecretKey: srv.SecretKey(), CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	return s, cache
}

func TestMain(m *testing.M) { tests3.Main(m) }

// eachSetup runs test once in each setup, as a subtest of its name.
func eachSetup(t *testing.T, test func(t *testing.T, s setup)) {
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) { test(t, s) })
	}
}

// producer returns a Producer of a new data folder in the setup.
func (s setup) producer(t *testing.T) *Producer {
	t.Helper()
	p, _ := s.node(t)
	return p
}

// node returns a Producer of a new data folder in the setup, and the
// folders where its object store keeps bytes on this machine.
func (s setup) node(t *testing.T) (*Producer, []string) {
	t.Helper()
	testenv.Tool(t, "pdftotext")
	cfg := Config{DataDir: t.TempDir()}
	var dirs []string
	if s.blobs != nil {
		cfg.Blobs, dirs = s.blobs(t)
	}
	p, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p, dirs
}

// mailing is a test mailing: its documents are written in dir, or, when
// blobs is set, put into it.
type mailing struct {
	t       *testing.T
	dir     string
	blobs   blob.Store
	m       pipeline.Mailing
	letters []*pipeline.Letter
}

// newMailing returns a mailing whose documents are where p reads them:
// in the object store when p has one.
func newMailing(t *testing.T, p *Producer, epid string, prod pipeline.Production) *mailing {
	return &mailing{t: t, dir: t.TempDir(), blobs: p.cfg.Blobs, m: pipeline.Mailing{EPID: epid, Account: "ABC12345", Production: prod}}
}

// doc adds a PDF document of the pages given.
func (ml *mailing) doc(name string, pages ...mailpdf.Page) {
	ml.m.Files = append(ml.m.Files, ml.put(writeDoc(ml.t, ml.dir, name, pages...)))
}

// file adds a document of another kind.
func (ml *mailing) file(name, kind string, data []byte, pages int) {
	path := filepath.Join(ml.dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		ml.t.Fatal(err)
	}
	ml.m.Files = append(ml.m.Files, ml.put(pipeline.File{Name: name, Kind: kind, Path: path, Pages: pages}))
}

// put returns f, a document written at its Path, as the mailing keeps it:
// as it is, or, with an object store, put into it under the key Blob (as
// upload keeps documents: blobs/<epid>/...) with a Path that names no
// file (the node that took the upload is another).
func (ml *mailing) put(f pipeline.File) pipeline.File {
	ml.t.Helper()
	if ml.blobs == nil {
		return f
	}
	f.Blob = "blobs/" + ml.m.EPID + "/" + f.Name
	ml.write(f, nil)
	f.Path = filepath.Join(ml.dir, "on-another-node", f.Name)
	return f
}

// write replaces a document's bytes with data (nil: those at its Path).
func (ml *mailing) write(f pipeline.File, data []byte) {
	ml.t.Helper()
	if ml.blobs == nil {
		if err := os.WriteFile(f.Path, data, 0o644); err != nil {
			ml.t.Fatal(err)
		}
		return
	}
	if data == nil {
		var err error
		if data, err = os.ReadFile(f.Path); err != nil {
			ml.t.Fatal(err)
		}
	}
	if _, err := ml.blobs.Put(context.Background(), f.Blob, bytes.NewReader(data), int64(len(data))); err != nil {
		ml.t.Fatal(err)
	}
}

// remove deletes a document's bytes.
func (ml *mailing) remove(f pipeline.File) {
	ml.t.Helper()
	var err error
	if ml.blobs == nil {
		err = os.Remove(f.Path)
	} else {
		err = ml.blobs.Delete(context.Background(), f.Blob)
	}
	if err != nil {
		ml.t.Fatal(err)
	}
}

// letter adds a letter to postal; parts are "file:first-last" (0-based
// pages; "-" alone to the end), an attachment's prefixed with "+".
func (ml *mailing) letter(postal []string, parts ...string) {
	l := &pipeline.Letter{EPID: ml.m.EPID, Idx: len(ml.letters), Status: pipeline.Received, Channels: []string{"postal"}, Postal: postal, Received: time.Now()}
	for _, p := range parts {
		var d pipeline.DocPart
		if strings.HasPrefix(p, "+") {
			d.Attachment, p = true, p[1:]
		}
		name, rng, _ := strings.Cut(p, ":")
		d.File, d.PageEnd = name, -1
		if rng != "" && rng != "-" {
			if _, err := fmt.Sscanf(rng, "%d-%d", &d.PageStart, &d.PageEnd); err != nil {
				ml.t.Fatalf("part %q: %v", p, err)
			}
		}
		l.Documents = append(l.Documents, d)
	}
	ml.letters = append(ml.letters, l)
}

// batch is a composed batch read back.
type batch struct {
	t       *testing.T
	pdf     string
	man     Manifest
	letters []pipeline.Letter
	sizes   [][2]float64
}

// compose checks the mailing's letters (Inspect: none may be held) and
// composes them, in their order, as one batch; it checks what every batch
// must be: qpdf finds no error, every page is A4, and the batch has each
// letter's sheets (two pages a sheet in duplex).
func (ml *mailing) compose(p *Producer) *batch {
	t := ml.t
	t.Helper()
	ctx := context.Background()
	ml.m.Letters = len(ml.letters)
	if err := p.Inspect(ctx, &ml.m, ml.letters); err != nil {
		t.Fatal(err)
	}
	b := pipeline.Batch{ID: "B-" + ml.m.EPID, EPID: ml.m.EPID, Account: ml.m.Account, Created: time.Now(), State: pipeline.BatchComposing,
		Duplex: ml.m.Production.Duplex, Colour: ml.m.Production.Colour, Envelope: "DL", Postage: "regular"}
	var ls []pipeline.Letter
	for _, l := range ml.letters {
		if l.Status != pipeline.Received {
			t.Fatalf("letter %d: %s %s", l.Idx, l.Status, l.HoldReason)
		}
		b.Letters = append(b.Letters, l.Idx)
		b.Sheets += l.Sheets
		ls = append(ls, *l)
	}
	dir, err := p.Compose(ctx, &ml.m, &b, ls)
	if err != nil {
		t.Fatal(err)
	}
	b.Dir = dir
	bt := &batch{t: t, pdf: filepath.Join(dir, BatchPDF), letters: ls}
	if p.cfg.Blobs != nil {
		// what is read back is the store's copy, which must be the hot
		// folder's
		for _, name := range batchFiles {
			if got, want := readBatchFile(t, p.cfg.Blobs, b, name), readFile(t, filepath.Join(dir, name)); !bytes.Equal(got, want) {
				t.Fatalf("%s in the object store: %d bytes unlike the hot folder's %d", name, len(got), len(want))
			}
		}
		bt.pdf = filepath.Join(t.TempDir(), BatchPDF)
		if err := os.WriteFile(bt.pdf, readBatchFile(t, p.cfg.Blobs, b, BatchPDF), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	data := readFile(t, filepath.Join(dir, ManifestJSON))
	if err := json.Unmarshal(data, &bt.man); err != nil {
		t.Fatal(err)
	}
	readback.Check(t, bt.pdf)
	bt.sizes = readback.Sizes(t, bt.pdf)
	want := b.Sheets
	if b.Duplex {
		want *= 2
	}
	if len(bt.sizes) != want {
		t.Fatalf("%d pages, want %d (%d sheets)", len(bt.sizes), want, b.Sheets)
	}
	for i, s := range bt.sizes {
		if math.Abs(s[0]-a4W) > 0.1 || math.Abs(s[1]-a4H) > 0.1 {
			t.Errorf("page %d is %v x %v pt, not A4", i+1, s[0], s[1])
		}
	}
	return bt
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// readBatchFile reads a batch's file through Batches over the store
// (nil: the hot folder).
func readBatchFile(t *testing.T, blobs blob.Store, b pipeline.Batch, name string) []byte {
	t.Helper()
	r, size, err := Batches{Blobs: blobs}.Open(context.Background(), b, name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil || int64(len(data)) != size {
		t.Fatalf("%s of batch %s: %d bytes of %d: %v", name, b.ID, len(data), size, err)
	}
	return data
}

// page returns the batch page (1-based) of a letter's page (0-based).
func (bt *batch) page(letter, page int) int {
	for _, r := range bt.man.Letters {
		if r.Letter == letter {
			if bt.man.Duplex {
				return 2*(r.FirstSheet-1) + page + 1
			}
			return r.FirstSheet + page
		}
	}
	bt.t.Fatalf("letter %d is not in the batch", letter)
	return 0
}

// window returns the text in the DL window of a batch page.
func (bt *batch) window(page int) string {
	w := DefaultDL.Window
	return readback.TextIn(bt.t, bt.pdf, page, w.X*mm, w.Y*mm, w.W*mm, w.H*mm)
}

// code returns what the sheet code of a batch page decodes to.
func (bt *batch) code(page int) string {
	return readback.DataMatrix(bt.t, readback.RenderArea(bt.t, bt.pdf, page, 300, 0, a4H-30*mm, 30*mm, 30*mm))
}

// checkLetters checks every letter of the batch: the window of its first
// page shows its address, each of its sheets carries its code on the
// front, and in duplex a back it leaves blank is blank.
func (bt *batch) checkLetters() {
	t := bt.t
	t.Helper()
	for _, l := range bt.letters {
		first := bt.page(l.Idx, 0)
		if v := windowVerdict(bt.window(first), l.Postal); v != "" {
			t.Errorf("letter %d: the window of page %d shows %q, not its address", l.Idx, first, v)
		}
		for s := 1; s <= l.Sheets; s++ {
			front := first + s - 1
			if bt.man.Duplex {
				front = first + 2*(s-1)
			}
			if got, want := bt.code(front), SheetCode(l.EPID, l.Idx, s, l.Sheets); got != want {
				t.Errorf("letter %d sheet %d (page %d): code %q, want %q", l.Idx, s, front, got, want)
			}
		}
		if bt.man.Duplex {
			if back := first + l.Pages; l.Pages%2 == 1 {
				bt.blank(back)
			}
			if got := bt.code(first + 1); l.Pages > 1 && got != "" {
				t.Errorf("letter %d: its first back carries a code %q", l.Idx, got)
			}
		}
	}
}

// blank checks that a batch page has no text and renders white.
func (bt *batch) blank(page int) {
	bt.t.Helper()
	if txt := strings.TrimSpace(readback.Text(bt.t, bt.pdf, page)); txt != "" {
		bt.t.Errorf("page %d should be a blank back: it reads %q", page, txt)
	}
	img := readback.Render(bt.t, bt.pdf, page, 18)
	for y := 0; y < img.Bounds().Dy(); y++ {
		for x := 0; x < img.Bounds().Dx(); x++ {
			if r, g, b := readback.Pixel(img, x, y); r < 250 || g < 250 || b < 250 {
				bt.t.Errorf("page %d should be a blank back: pixel %d,%d is %d,%d,%d", page, x, y, r, g, b)
				return
			}
		}
	}
}

// texts returns the text of batch pages first to last.
func (bt *batch) texts(first, last int) []string {
	var out []string
	for p := first; p <= last; p++ {
		out = append(out, strings.TrimSpace(readback.Text(bt.t, bt.pdf, p)))
	}
	return out
}

// at returns the colour of a batch page at a point (points from the
// top-left corner), rendered at 36 dpi.
func (bt *batch) at(page int, x, y float64) [3]uint8 {
	return readback.At(readback.Render(bt.t, bt.pdf, page, 36), 36, x, y)
}

// within tells whether 8-bit values a and b differ by at most d.
func within(a, b uint8, d int) bool { return max(int(a)-int(b), int(b)-int(a)) <= d }

func isGrey(c [3]uint8) bool { return within(c[0], c[1], 2) && within(c[1], c[2], 2) }

// Colours of mailpdf.Page's Colour areas at 36 dpi, and where they are.
var (
	red  = [3]uint8{217, 26, 26}
	blue = [3]uint8{26, 51, 217}
)

func near(a, b [3]uint8) bool {
	return within(a[0], b[0], 12) && within(a[1], b[1], 12) && within(a[2], b[2], 12)
}

func letterhead(t *testing.T) []byte {
	var b bytes.Buffer
	if err := mailpdf.Letterhead(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestComposeShapes composes the postal mailing shapes of spec section 1
// and reads each batch back with qpdf, poppler and dmtxread.
func TestComposeShapes(t *testing.T) { eachSetup(t, testComposeShapes) }

func testComposeShapes(t *testing.T, s setup) {
	p := s.producer(t)
	addr := mailpdf.Address

	t.Run("single addressed letter", func(t *testing.T) {
		ml := newMailing(t, p, "E-ADDR", pipeline.Production{Colour: true})
		ml.doc("letter.pdf", mailpdf.Page{Address: addr(1), Text: "Dear Customer 1", Colour: true}, mailpdf.Page{Text: "Yours sincerely"})
		ml.letter(addr(1), "letter.pdf")
		bt := ml.compose(p)
		bt.checkLetters()
		if got := bt.texts(1, 2); !strings.Contains(got[0], "Dear Customer 1") || got[1] != "Yours sincerely" {
			t.Errorf("pages read %q", got)
		}
		if c := bt.at(1, a4W/2, 10*mm); !near(c, red) {
			t.Errorf("colour batch: the red band is %v", c)
		}
	})

	t.Run("single unaddressed letter, one recipient", func(t *testing.T) {
		ml := newMailing(t, p, "E-UN1", pipeline.Production{})
		ml.doc("notice.pdf", mailpdf.Page{Text: "Important notice"})
		ml.letter(addr(2), "notice.pdf")
		bt := ml.compose(p)
		if !bt.letters[0].Unaddressed {
			t.Fatal("the letter is not unaddressed")
		}
		bt.checkLetters()
	})

	t.Run("single unaddressed letter, several recipients", func(t *testing.T) {
		ml := newMailing(t, p, "E-UNN", pipeline.Production{Duplex: true})
		ml.doc("notice.pdf", mailpdf.Page{Text: "Meeting notice"}, mailpdf.Page{Text: "Agenda"}, mailpdf.Page{Text: "Minutes"})
		for i := range 3 {
			ml.letter(addr(10+i), "notice.pdf")
		}
		bt := ml.compose(p)
		bt.checkLetters()
		if got := bt.texts(5, 8); got[0] != "Meeting notice" && !strings.Contains(got[0], "Meeting notice") || got[3] != "" {
			t.Errorf("the second recipient's pages read %q", got)
		}
	})

	t.Run("statement run, fixed length, letterhead on all pages, duplex mono", func(t *testing.T) {
		ml := newMailing(t, p, "E-STMT", pipeline.Production{Duplex: true, Background: "letterhead.pdf", BackgroundPages: "all"})
		ml.file("letterhead.pdf", "pdf", letterhead(t), 1)
		var stmt bytes.Buffer
		if err := mailpdf.Statement(&stmt, 4, 2); err != nil {
			t.Fatal(err)
		}
		ml.file("statements.pdf", "pdf", stmt.Bytes(), 8)
		for i := range 4 {
			ml.letter(addr(i), fmt.Sprintf("statements.pdf:%d-%d", 2*i, 2*i+1))
		}
		bt := ml.compose(p)
		bt.checkLetters()
		for pg := 1; pg <= 8; pg++ {
			txt := readback.Text(t, bt.pdf, pg)
			if !strings.Contains(txt, fmt.Sprintf("Letter %d page %d of 2", (pg-1)/2, (pg-1)%2+1)) || !strings.Contains(txt, "Example Utilities") {
				t.Errorf("page %d reads %q: want the statement's text on the letterhead", pg, txt)
			}
			// the letterhead's band, grey in mono, behind every page
			if c := bt.at(pg, a4W/2, 25*mm); !isGrey(c) || c[0] > 200 || c[0] < 50 {
				t.Errorf("page %d: the letterhead band is %v, want a mid grey", pg, c)
			}
		}
	})

	t.Run("statements of varying length, duplex", func(t *testing.T) {
		ml := newMailing(t, p, "E-VAR", pipeline.Production{Duplex: true, Colour: true, Background: "letterhead.pdf", BackgroundPages: "first"})
		ml.file("letterhead.pdf", "pdf", letterhead(t), 1)
		var pages []mailpdf.Page
		for l, n := range []int{1, 2, 3} {
			for i := range n {
				pg := mailpdf.Page{Text: fmt.Sprintf("Letter %d page %d", l, i+1)}
				if i == 0 {
					pg.Address = addr(20 + l)
				}
				pages = append(pages, pg)
			}
		}
		ml.doc("statements.pdf", pages...)
		ml.letter(addr(20), "statements.pdf:0-0")
		ml.letter(addr(21), "statements.pdf:1-2")
		ml.letter(addr(22), "statements.pdf:3-5")
		bt := ml.compose(p) // 1 + 1 + 2 sheets: 8 pages, blank backs 2 and 8
		bt.checkLetters()
		if got := bt.texts(1, 8); got[1] != "" || got[7] != "" || !strings.Contains(got[6], "Letter 2 page 3") {
			t.Errorf("pages read %q", got)
		}
		// letter 1 is pages 3 and 4: the letterhead on its first only
		if c := bt.at(3, 10*mm, 25*mm); !near(c, [3]uint8(mailpdf.LetterheadRGB)) {
			t.Errorf("page 3: the letterhead band is %v", c)
		}
		if c := bt.at(4, 10*mm, 25*mm); c != [3]uint8{255, 255, 255} {
			t.Errorf("page 4: %v: the letterhead is on first pages only", c)
		}
	})

	t.Run("attachments in order, letterhead on the letter's pages", func(t *testing.T) {
		ml := newMailing(t, p, "E-ATT", pipeline.Production{Colour: true, Background: "letterhead.pdf", BackgroundPages: "all"})
		ml.file("letterhead.pdf", "pdf", letterhead(t), 1)
		ml.doc("letter.pdf", mailpdf.Page{Address: addr(30), Text: "Letter page 1", Black: true}, mailpdf.Page{Text: "Letter page 2"})
		ml.doc("terms.pdf", mailpdf.Page{Text: "Terms 1"}, mailpdf.Page{Text: "Terms 2"})
		ml.doc("brochure.pdf", mailpdf.Page{Text: "Brochure", Colour: true})
		ml.letter(addr(30), "letter.pdf", "+terms.pdf", "+brochure.pdf")
		bt := ml.compose(p)
		bt.checkLetters()
		got := bt.texts(1, 5)
		want := []string{"Letter page 1", "Letter page 2", "Terms 1", "Terms 2", "Brochure"}
		for i := range want {
			if !strings.Contains(got[i], want[i]) || strings.Contains(got[i], "Example Utilities") != (i < 2) {
				t.Errorf("page %d reads %q: want %q, on the letterhead on the letter's pages only", i+1, got[i], want[i])
			}
		}
		lhColour := [3]uint8(mailpdf.LetterheadRGB)
		if c := bt.at(1, 10*mm, 25*mm); !near(c, lhColour) {
			t.Errorf("page 1: the letterhead band is %v, want %v", c, lhColour)
		}
		if c := bt.at(1, a4W-30*mm, 22*mm); c != [3]uint8{0, 0, 0} {
			t.Errorf("page 1: the letter's black square over the band is %v: the letterhead is not behind it", c)
		}
		if c := bt.at(2, 10*mm, 25*mm); !near(c, lhColour) {
			t.Errorf("page 2: the letterhead band is %v, want %v", c, lhColour)
		}
		if c := bt.at(3, 10*mm, 25*mm); c != [3]uint8{255, 255, 255} {
			t.Errorf("page 3: %v: an attachment has no letterhead", c)
		}
		if c := bt.at(5, a4W/2, a4H/2); !near(c, blue) {
			t.Errorf("the brochure's blue is %v in a colour batch", c)
		}
	})

	t.Run("mono turns colour grey", func(t *testing.T) {
		ml := newMailing(t, p, "E-MONO", pipeline.Production{})
		ml.doc("letter.pdf", mailpdf.Page{Address: addr(40), Text: "Colour letter", Colour: true})
		ml.letter(addr(40), "letter.pdf")
		bt := ml.compose(p)
		bt.checkLetters()
		img := readback.Render(t, bt.pdf, 1, 36)
		for y := 0; y < img.Bounds().Dy(); y += 3 {
			for x := 0; x < img.Bounds().Dx(); x += 3 {
				r, g, b := readback.Pixel(img, x, y)
				if !isGrey([3]uint8{r, g, b}) {
					t.Fatalf("pixel %d,%d is %d,%d,%d: not grey", x, y, r, g, b)
				}
			}
		}
		if c := bt.at(1, a4W/2, a4H/2); c[0] > 120 {
			t.Errorf("the blue square is %v: want the blue's luminosity, a dark grey", c)
		}
		// paper where nothing is printed stays white, not the blend's grey
		if c := bt.at(1, a4W-30*mm, a4H*0.75); c != [3]uint8{255, 255, 255} {
			t.Errorf("blank paper is %v: want white", c)
		}
	})

	t.Run("landscape turned, US Letter scaled", func(t *testing.T) {
		ml := newMailing(t, p, "E-SIZE", pipeline.Production{Colour: true})
		ml.doc("letter.pdf", mailpdf.Page{Address: addr(50), Text: "A4 first page"},
			mailpdf.Page{W: a4H, H: a4W, Text: "Landscape", Colour: true},
			mailpdf.Page{W: mailpdf.LetterW, H: mailpdf.LetterH, Text: "US Letter", Colour: true})
		ml.letter(addr(50), "letter.pdf")
		bt := ml.compose(p)
		bt.checkLetters()
		// the landscape page's red top band runs down the sheet's left edge
		if c := bt.at(2, 10*mm, a4H/2); !near(c, red) {
			t.Errorf("landscape: %v at the left edge, want its top band's red", c)
		}
		if c := bt.at(2, a4W/2, 10*mm); c == red {
			t.Errorf("landscape: the band is still at the top")
		}
		// US Letter scaled by 595.28/612 and centred: white above its band
		s := a4W / mailpdf.LetterW
		top := (a4H - mailpdf.LetterH*s) / 2
		if c := bt.at(3, a4W/2, top-4); c != [3]uint8{255, 255, 255} {
			t.Errorf("US Letter: %v just above the scaled page, want white", c)
		}
		if c := bt.at(3, a4W/2, top+4); !near(c, red) {
			t.Errorf("US Letter: %v just inside its band", c)
		}
		if got := bt.texts(2, 3); !strings.Contains(got[1], "US Letter") {
			t.Errorf("pages read %q", got)
		}
	})

	t.Run("cover sheet where the window is not clear", func(t *testing.T) {
		ml := newMailing(t, p, "E-COVER", pipeline.Production{CoverSheet: true, Duplex: true})
		ml.doc("invoice.pdf", mailpdf.Page{Address: []string{"TAX INVOICE 2024-117"}, Text: "Amount due"})
		ml.letter(addr(60), "invoice.pdf")
		bt := ml.compose(p)
		if l := bt.letters[0]; !l.CoverSheet || l.Pages != 2 || l.Sheets != 1 {
			t.Fatalf("letter: cover %v, %d pages, %d sheets", l.CoverSheet, l.Pages, l.Sheets)
		}
		bt.checkLetters()
		if got := bt.texts(1, 2); !strings.Contains(got[1], "TAX INVOICE") || !strings.Contains(got[1], "Amount due") {
			t.Errorf("pages read %q: the letter follows its cover sheet untouched", got)
		}
	})

	t.Run("PostScript and XPS documents", func(t *testing.T) {
		testenv.Tool(t, "gs")
		testenv.Tool(t, "xpstopdf")
		ml := newMailing(t, p, "E-CONV", pipeline.Production{})
		ml.file("letter.ps", "ps", []byte("%!PS\n/Helvetica findfont 10 scalefont setfont\n71 640 moveto (Bo Person) show\n71 626 moveto (9 High St) show\n71 612 moveto (DARWIN NT 0800) show\n72 300 moveto (From PostScript) show showpage\n"), 1)
		ml.file("form.xps", "xps", testdoc.XPS(2), 2)
		ml.letter([]string{"Bo Person", "9 High St", "DARWIN NT 0800"}, "letter.ps", "+form.xps")
		bt := ml.compose(p)
		bt.checkLetters()
		if got := bt.texts(1, 3); !strings.Contains(got[0], "From PostScript") {
			t.Errorf("pages read %q", got)
		}
	})
}

// TestComposeErrors: a batch that cannot be composed as it was checked is
// an error naming the letter, and nothing reaches the hot folder (or the
// object store).
func TestComposeErrors(t *testing.T) { eachSetup(t, testComposeErrors) }

func testComposeErrors(t *testing.T, s setup) {
	p := s.producer(t)
	f := func(name string, change func(ml *mailing, ls []pipeline.Letter), want string) {
		t.Helper()
		ml := newMailing(t, p, "E-ERR", pipeline.Production{Duplex: true})
		ml.doc("letter.pdf", mailpdf.Page{Address: mailpdf.Address(1), Text: "Page 1"}, mailpdf.Page{Text: "Page 2"})
		ml.letter(mailpdf.Address(1), "letter.pdf")
		ml.m.Letters = 1
		if err := p.Inspect(context.Background(), &ml.m, ml.letters); err != nil {
			t.Fatal(err)
		}
		ls := []pipeline.Letter{*ml.letters[0]}
		change(ml, ls)
		b := pipeline.Batch{ID: "B-" + name, EPID: ml.m.EPID, Duplex: true, Letters: []int{0}}
		_, err := p.Compose(context.Background(), &ml.m, &b, ls)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want an error with %q", name, err, want)
		}
		if _, err := os.Stat(filepath.Join(p.cfg.HotFolder, b.ID)); err == nil {
			t.Errorf("%s: a batch folder reached the hot folder", name)
		}
		if keys := storeKeys(t, p.cfg.Blobs, "print/"); len(keys) != 0 {
			t.Errorf("%s: the object store holds %q", name, keys)
		}
	}
	f("pages", func(ml *mailing, ls []pipeline.Letter) { ls[0].Pages = 3 }, "letter 0: its documents changed: pages 2 and sheets 1 as composed, 3 and 1 as checked")
	f("sheets", func(ml *mailing, ls []pipeline.Letter) { ls[0].Sheets = 2 }, "2 and 2 as checked")
	f("missing document", func(ml *mailing, ls []pipeline.Letter) { ls[0].Documents[0].File = "gone.pdf" }, "gone.pdf is not part of the mailing")
	f("missing background", func(ml *mailing, ls []pipeline.Letter) { ml.m.Production.Background = "lh.pdf" }, "background lh.pdf")
	f("document not a PDF any more", func(ml *mailing, ls []pipeline.Letter) {
		ml.write(ml.m.Files[0], []byte("not a PDF"))
	}, "letter.pdf: not a PDF")
}

// storeKeys lists the keys of an object store under prefix (none without
// a store).
func storeKeys(t *testing.T, blobs blob.Store, prefix string) []string {
	t.Helper()
	var keys []string
	if blobs == nil {
		return nil
	}
	if err := blobs.List(context.Background(), prefix, func(info blob.Info) error {
		keys = append(keys, info.Key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}
