package production

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/internal/testdoc/readback"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/pipeline"
)

// previewFile copies a preview out (it is unlinked) for the readers.
func previewFile(t *testing.T, p *Producer, m *pipeline.Mailing, l *pipeline.Letter) string {
	t.Helper()
	f, size, err := p.PreviewPDF(context.Background(), m, l)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := os.Stat(f.Name()); !os.IsNotExist(err) {
		t.Fatalf("the preview %s is still on disk: %v", f.Name(), err)
	}
	data, err := io.ReadAll(f)
	if err != nil || int64(len(data)) != size {
		t.Fatalf("read %d bytes of %d: %v", len(data), size, err)
	}
	path := filepath.Join(t.TempDir(), "preview.pdf")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	readback.Check(t, path)
	return path
}

// TestPreviewPDF: a checked postal letter previews as it prints (A4,
// sheet code, the corrected address in the window); an electronic letter
// as its pages are, masks painted, without deciding the send's PDF.
func TestPreviewPDF(t *testing.T) { eachSetup(t, testPreviewPDF) }

func testPreviewPDF(t *testing.T, s setup) {
	testenv.Tool(t, "gs")
	p := s.producer(t)

	t.Run("postal letter as printed", func(t *testing.T) {
		ml := newMailing(t, p, "E-PRV1", pipeline.Production{})
		ml.doc("notice.pdf", mailpdf.Page{Address: mailpdf.Address(0), Text: "Preview body"}, mailpdf.Page{Text: "Page two"})
		ml.letter(mailpdf.Address(0), "notice.pdf")
		ml.m.Letters = 1
		if err := p.Inspect(context.Background(), &ml.m, ml.letters); err != nil {
			t.Fatal(err)
		}
		l := ml.letters[0]
		if l.Status != pipeline.Received || l.Pages != 2 {
			t.Fatalf("inspected: %s %q, %d pages", l.Status, l.HoldReason, l.Pages)
		}
		path := previewFile(t, p, &ml.m, l)
		sizes := readback.Sizes(t, path)
		if len(sizes) != 2 {
			t.Fatalf("%d pages, want 2", len(sizes))
		}
		for i, s := range sizes {
			if d := s[0] - a4W + s[1] - a4H; d > 0.2 || d < -0.2 {
				t.Errorf("page %d is %v, not A4", i+1, s)
			}
		}
		if got := readback.Text(t, path, 1); !strings.Contains(got, "Preview body") || !strings.Contains(got, "Customer 0") {
			t.Errorf("page 1 reads %q", got)
		}
		code := readback.DataMatrix(t, readback.RenderArea(t, path, 1, 300, 0, a4H-30*mm, 30*mm, 30*mm))
		if want := SheetCode("E-PRV1", 0, 1, 2); code != want {
			t.Errorf("sheet code %q, want %q", code, want)
		}

		// corrected: the new address is set in the window over the old
		l.Postal, l.Unaddressed = []string{"Pat Corrected", "10 Jones St", "ULTIMO NSW 2007"}, true
		path = previewFile(t, p, &ml.m, l)
		if got := readback.Text(t, path, 1); !strings.Contains(got, "Pat Corrected") {
			t.Errorf("the corrected address is not on the preview: %q", got)
		}
	})

	t.Run("electronic letter not cached", func(t *testing.T) {
		ml := emailMailing(t, p)
		l := ml.letters[1]
		path := previewFile(t, p, &ml.m, l)
		if got := readback.Text(t, path, 1); !strings.Contains(got, "Letter one") {
			t.Errorf("preview reads %q", got)
		}
		if got, err := p.ExistingLetterPDF(context.Background(), ml.m.EPID, l.Idx); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the preview left the send's PDF %s (%v)", got, err)
		}
		// the send after a preview still encrypts with its password
		sent, err := p.LetterPDF(context.Background(), &ml.m, l, "the password")
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(sent)
		if !strings.Contains(string(data), "/Encrypt") {
			t.Fatal("the send's PDF made after a preview is not encrypted")
		}
	})

	t.Run("refusals", func(t *testing.T) {
		ml := newMailing(t, p, "E-PRV2", pipeline.Production{})
		ml.doc("notice.pdf", mailpdf.Page{Text: "x"})
		ml.letter(mailpdf.Address(1), "notice.pdf")
		ml.m.Purged = true
		if _, _, err := p.PreviewPDF(context.Background(), &ml.m, ml.letters[0]); !DocumentError(err) {
			t.Errorf("purged mailing: %v, want a document error", err)
		}
		ml.m.Purged = false
		ml.letters[0].Documents[0].File = "missing.pdf"
		if _, _, err := p.PreviewPDF(context.Background(), &ml.m, ml.letters[0]); !DocumentError(err) {
			t.Errorf("missing document: %v, want a document error", err)
		}
		entries, _ := os.ReadDir(filepath.Join(p.cfg.WorkDir, "previews"))
		if len(entries) != 0 {
			t.Errorf("previews left on disk: %v", entries)
		}
	})
}
