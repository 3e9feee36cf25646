package production

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/pdf"
	"github.com/lodge-mail/lodge/internal/testdoc"
	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/internal/testdoc/readback"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/pipeline"
)

// emailMailing is a mailing of two letters: letter 0 takes pages 1-2 of
// a.pdf (A4, then US Letter landscape), the PostScript document's second
// page and the attachment; letter 1 takes page 3 of a.pdf, whose window
// shows lines for lodge that its Masks cover.
func emailMailing(t *testing.T, p *Producer) *mailing {
	ml := newMailing(t, p, "EPIDELEC", pipeline.Production{})
	ml.doc("a.pdf",
		mailpdf.Page{Address: mailpdf.Address(0), Text: "First page of letter zero"},
		mailpdf.Page{W: mailpdf.LetterH, H: mailpdf.LetterW, Text: "Landscape page of letter zero", Colour: true},
		mailpdf.Page{Address: []string{"ref:INV-1", "Jo Citizen", "1 Main St", "SYDNEY NSW 2000"}, Text: "Letter one"})
	ml.file("b.ps", "ps", testdoc.RichPostScript(), 3)
	ml.doc("terms.pdf", mailpdf.Page{Text: "Terms and conditions"})
	ml.letter(nil, "a.pdf:0-1", "b.ps:1-1", "+terms.pdf")
	ml.letter(nil, "a.pdf:2-2")
	// the ref: line: the first address line, 55 mm from the top, 25 mm in
	ml.letters[1].Masks = []pipeline.Area{{X: 24, Y: 51, W: 60, H: 5}}
	return ml
}

// TestLetterPDF: a letter's pages as they are (sizes, order, attachments
// last, PostScript converted), no sheet code, masks painted; written once
// and reused, whatever a later call asks.
func TestLetterPDF(t *testing.T) { eachSetup(t, testLetterPDF) }

func testLetterPDF(t *testing.T, s setup) {
	testenv.Tool(t, "gs")
	p := s.producer(t)
	ml := emailMailing(t, p)
	ctx := context.Background()
	path, err := p.LetterPDF(ctx, &ml.m, ml.letters[0], "")
	if err != nil {
		t.Fatal(err)
	}
	// in the work folder, or the store's file of letters/EPIDELEC/0.pdf
	wantPath := filepath.Join(p.cfg.WorkDir, "letters", "EPIDELEC", "0.pdf")
	if p.cfg.Blobs != nil {
		if wantPath, err = p.cfg.Blobs.LocalPath(ctx, "letters/EPIDELEC/0.pdf"); err != nil {
			t.Fatal(err)
		}
	}
	if path != wantPath {
		t.Fatalf("path %s, want %s", path, wantPath)
	}
	readback.Check(t, path)
	sizes := readback.Sizes(t, path)
	want := [][2]float64{{595.276, 841.89}, {792, 612}, {595, 842}, {595.276, 841.89}}
	if len(sizes) != len(want) {
		t.Fatalf("sizes %v, want %v", sizes, want)
	}
	for i := range want {
		if d := sizes[i][0] - want[i][0] + sizes[i][1] - want[i][1]; d > 0.01 || d < -0.01 {
			t.Errorf("page %d: %v, want %v", i+1, sizes[i], want[i])
		}
	}
	for i, text := range []string{"First page of letter zero", "Landscape page of letter zero", "Page two: an image below", "Terms and conditions"} {
		if got := readback.Text(t, path, i+1); !strings.Contains(got, text) {
			t.Errorf("page %d: %q, want %q", i+1, got, text)
		}
	}
	if got := readback.Text(t, path, 1); !strings.Contains(got, "Customer 0") {
		t.Errorf("page 1 lost its address: %q", got)
	}
	// no sheet code: the corner compose prints it in is blank
	img := readback.RenderArea(t, path, 1, 72, 0, 841.89-30*mm, 30*mm, 30*mm)
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			if r, g, b := readback.Pixel(img, x, y); r < 250 || g < 250 || b < 250 {
				t.Fatalf("ink at (%d, %d) where print has its sheet code", x, y)
			}
		}
	}

	// masks: the ref: line is painted over (its text stays in the file,
	// as in print), the address stays
	path1, err := p.LetterPDF(ctx, &ml.m, ml.letters[1], "")
	if err != nil {
		t.Fatal(err)
	}
	ink := func(y float64) int { // dark pixels in a band 5 mm high at y mm from the top
		img := readback.RenderArea(t, path1, 1, 150, 20*mm, y*mm, 80*mm, 5*mm)
		n := 0
		for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
			for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
				if r, _, _ := readback.Pixel(img, x, y); r < 128 {
					n++
				}
			}
		}
		return n
	}
	if masked, name := ink(51), ink(55.5); masked != 0 || name == 0 {
		t.Errorf("dark pixels: %d on the masked ref: line, %d on the name line below", masked, name)
	}
	if got := readback.Text(t, path1, 1); !strings.Contains(got, "Jo Citizen") || !strings.Contains(got, "Letter one") {
		t.Errorf("masked page reads %q", got)
	}

	if got, err := p.ExistingLetterPDF(ctx, "EPIDELEC", 0); err != nil || got != path {
		t.Fatalf("ExistingLetterPDF of a letter made: %s %v", got, err)
	}
	for _, bad := range []struct {
		epid string
		idx  int
	}{{"EPIDELEC", 5}, {"OTHER", 0}, {"", 0}, {"..", 0}, {"EPIDELEC/../EPIDELEC", 0}, {"EPIDELEC", -1}} {
		if got, err := p.ExistingLetterPDF(ctx, bad.epid, bad.idx); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("ExistingLetterPDF(%q, %d): %s %v", bad.epid, bad.idx, got, err)
		}
	}
	// written once: a second call, with a password now, gives the same
	// file unchanged
	before, _ := os.ReadFile(path)
	again, err := p.LetterPDF(ctx, &ml.m, ml.letters[0], "late password")
	if err != nil || again != path {
		t.Fatalf("again: %s %v", again, err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("the letter's PDF changed")
	}
	// what a crash leaves (temporary files) is written over
	dir := filepath.Join(p.cfg.WorkDir, "letters", "EPIDELEC")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"2.pdf.plain.tmp", "2.pdf.tmp"} {
		os.WriteFile(filepath.Join(dir, name), []byte("half"), 0o640)
	}
	ml.letter(nil, "terms.pdf")
	path2, err := p.LetterPDF(ctx, &ml.m, ml.letters[2], "pw")
	if err != nil {
		t.Fatal(err)
	}
	checkEncrypted(t, path2, "pw")
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	keys := storeKeys(t, p.cfg.Blobs, "")
	if p.cfg.Blobs == nil && len(names) != 3 || p.cfg.Blobs != nil && (len(names) != 0 || !slices.Equal(keys, []string{
		"blobs/EPIDELEC/a.pdf", "blobs/EPIDELEC/b.ps", "blobs/EPIDELEC/terms.pdf",
		"letters/EPIDELEC/0.pdf", "letters/EPIDELEC/1.pdf", "letters/EPIDELEC/2.pdf"})) {
		t.Fatalf("left in the work folder: %q; in the object store: %q", names, keys)
	}
	for _, bad := range []string{"", ".", "..", "../x", "a/b"} {
		if err := p.RemoveLetterPDFs(bad); err == nil {
			t.Fatalf("RemoveLetterPDFs(%q) took it", bad)
		}
	}
	if err := p.RemoveLetterPDFs("EPIDELEC"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s after RemoveLetterPDFs: %v", dir, err)
	}
	if keys := storeKeys(t, p.cfg.Blobs, "letters/"); len(keys) != 0 {
		t.Fatalf("in the object store after RemoveLetterPDFs: %q", keys)
	}
	if got, err := p.ExistingLetterPDF(ctx, "EPIDELEC", 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ExistingLetterPDF after RemoveLetterPDFs: %s %v", got, err)
	}
}

// TestLetterPDFPassword: a password encrypts the PDF with AES-256,
// revision 6: qpdf and Ghostscript open it with the password and not
// without; the password is in no file of the work folder (or of the
// object store).
func TestLetterPDFPassword(t *testing.T) { eachSetup(t, testLetterPDFPassword) }

func testLetterPDFPassword(t *testing.T, s setup) {
	testenv.Tool(t, "qpdf")
	testenv.Tool(t, "gs")
	ctx := context.Background()
	for _, pw := range []string{"s3cret", "pässwörd mit Ümlauten ✓", "--looks-like-an-option", `"quoted" \ {json}`, strings.Repeat("x", pdf.MaxPasswordBytes)} {
		p, dirs := s.node(t)
		ml := emailMailing(t, p)
		path, err := p.LetterPDF(ctx, &ml.m, ml.letters[0], pw)
		if err != nil {
			t.Fatalf("%q: %v", pw, err)
		}
		checkEncrypted(t, path, pw)
		for _, dir := range append(dirs, p.cfg.WorkDir) {
			filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if data, _ := os.ReadFile(path); bytes.Contains(data, []byte(pw)) {
						t.Errorf("%q: the password is in %s", pw, path)
					}
				}
				return nil
			})
		}
	}
}

// checkEncrypted: qpdf checks the file with the password and refuses it
// without; its /Encrypt is AES-256 revision 6 (/V 5 /R 6); Ghostscript
// renders it with the password and refuses it without.
func checkEncrypted(t *testing.T, path, pw string) {
	t.Helper()
	qpdf := testenv.Tool(t, "qpdf")
	out, err := exec.Command(qpdf, "--check", "--password="+pw, path).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("No syntax or stream encoding errors")) {
		t.Fatalf("qpdf --check with the password: %v\n%s", err, out)
	}
	if out, err := exec.Command(qpdf, "--check", path).CombinedOutput(); err == nil || !bytes.Contains(out, []byte("invalid password")) {
		t.Fatalf("qpdf --check without the password: %v\n%s", err, out)
	}
	if out, err := exec.Command(qpdf, "--check", "--password=wrong"+pw, path).CombinedOutput(); err == nil {
		t.Fatalf("qpdf --check with a wrong password: %s", out)
	}
	trailer, err := exec.Command(qpdf, "--show-object=trailer", "--password="+pw, path).Output()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`/Encrypt (\d+) 0 R`).FindSubmatch(trailer)
	if m == nil {
		t.Fatalf("no /Encrypt in the trailer: %s", trailer)
	}
	enc, err := exec.Command(qpdf, "--show-object="+string(m[1]), "--password="+pw, path).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/R 6", "/V 5", "/AESV3", "/Length 256"} {
		if !bytes.Contains(enc, []byte(want)) {
			t.Errorf("/Encrypt %s has no %s", enc, want)
		}
	}
	png := filepath.Join(t.TempDir(), "p.png")
	gs := func(args ...string) error {
		return exec.Command(testenv.Tool(t, "gs"), append([]string{"-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-sDEVICE=png16m", "-r20", "-dFirstPage=1", "-dLastPage=1", "-o", png}, append(args, path)...)...).Run()
	}
	if err := gs("-sPDFPassword=" + pw); err != nil {
		t.Fatalf("gs with the password: %v", err)
	}
	if fi, err := os.Stat(png); err != nil || fi.Size() == 0 {
		t.Fatalf("gs rendered nothing with the password: %v", err)
	}
	os.Remove(png)
	gs()
	if fi, err := os.Stat(png); err == nil && fi.Size() > 0 {
		t.Fatal("gs rendered the page without the password")
	}
}

// TestLetterPDFErrors: a bad password or a document that cannot be read is
// the letter's problem (DocumentError) and leaves no file (or object).
func TestLetterPDFErrors(t *testing.T) { eachSetup(t, testLetterPDFErrors) }

func testLetterPDFErrors(t *testing.T, s setup) {
	p := s.producer(t)
	ctx := context.Background()
	f := func(name string, setup func(ml *mailing), pw, want string) {
		t.Helper()
		ml := emailMailing(t, p)
		setup(ml)
		_, err := p.LetterPDF(ctx, &ml.m, ml.letters[len(ml.letters)-1], pw)
		if err == nil || !DocumentError(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v (document error %v), want %q", name, err, DocumentError(err), want)
		}
		left, _ := filepath.Glob(filepath.Join(p.cfg.WorkDir, "letters", "EPIDELEC", "*"))
		if len(left) != 0 {
			t.Errorf("%s: left %q", name, left)
		}
		if keys := storeKeys(t, p.cfg.Blobs, "letters/"); len(keys) != 0 {
			t.Errorf("%s: left in the object store %q", name, keys)
		}
	}
	none := func(*mailing) {}
	f("1 MB password", none, strings.Repeat("p", 1<<20), "at most 127")
	f("128-byte password", none, strings.Repeat("p", 128), "at most 127")
	f("password with a line break", none, "pass\nword", "control character")
	f("password with NUL", none, "pass\x00word", "control character")
	f("password not UTF-8", none, "pass\xffword", "not UTF-8")
	f("unknown document", func(ml *mailing) { ml.letter(nil, "nope.pdf") }, "", "nope.pdf is not part of the mailing")
	f("pages beyond the end", func(ml *mailing) { ml.letter(nil, "terms.pdf:1-3") }, "", "has no pages 2 to 4")
	f("no pages", func(ml *mailing) { ml.letter(nil) }, "", "no pages")
	f("broken PDF", func(ml *mailing) {
		ml.file("junk.pdf", "pdf", []byte("%PDF-1.4\nnot really\n"), 1)
		ml.letter(nil, "junk.pdf")
	}, "", "junk.pdf")
	f("broken PostScript", func(ml *mailing) {
		ml.file("junk.ps", "ps", []byte("%!PS\nnosuchoperator\n"), 1)
		ml.letter(nil, "junk.ps")
	}, "", "junk.ps could not be converted")
	f("document gone", func(ml *mailing) {
		ml.letter(nil, "terms.pdf")
		ml.remove(ml.m.Files[2])
	}, "", "terms.pdf")
}
