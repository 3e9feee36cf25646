package production

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"

	"github.com/lodge-mail/lodge/internal/pdf"
	"github.com/lodge-mail/lodge/internal/sandbox"
	"github.com/lodge-mail/lodge/pipeline"
)

// Producer makes postal letters: pipeline.Producer.
type Producer struct {
	cfg Config
	log *slog.Logger
}

// New returns a Producer, making its folders.
func New(cfg Config, log *slog.Logger) (*Producer, error) {
	cfg = cfg.withDefaults()
	if log == nil {
		log = slog.Default()
	}
	for _, d := range []string{cfg.HotFolder, cfg.WorkDir} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, err
		}
	}
	return &Producer{cfg: cfg, log: log}, nil
}

// Config returns the producer's configuration with defaults applied.
func (p *Producer) Config() Config { return p.cfg }

// letterPlan is where a letter's pages come from.
type letterPlan struct {
	parts []partPlan
	pages int
}

type partPlan struct {
	file       pipeline.File
	first      int // 0-based page of file
	last       int
	attachment bool
}

// plan resolves a letter's document parts against its mailing's files.
func plan(m *pipeline.Mailing, l *pipeline.Letter) (letterPlan, error) {
	var lp letterPlan
	for _, d := range l.Documents {
		f, ok := m.File(d.File)
		if !ok {
			return lp, &docError{fmt.Sprintf("the document %s is not part of the mailing", d.File)}
		}
		last := d.PageEnd
		if last < 0 {
			last = f.Pages - 1
		}
		if d.PageStart < 0 || last < d.PageStart || last >= f.Pages {
			return lp, &docError{fmt.Sprintf("%s has no pages %d to %d (it has %d)", d.File, d.PageStart+1, last+1, f.Pages)}
		}
		lp.parts = append(lp.parts, partPlan{file: f, first: d.PageStart, last: last, attachment: d.Attachment})
		lp.pages += last - d.PageStart + 1
	}
	if lp.pages == 0 {
		return lp, &docError{"the letter has no pages to print"}
	}
	return lp, nil
}

// sheets is how many sheets pages take: in duplex each letter starts on a
// front side, so a blank back follows an odd page count.
func sheets(pages int, duplex bool) int {
	if duplex {
		return (pages + 1) / 2
	}
	return pages
}

var postcodeRE = regexp.MustCompile(`\b(\d{4})\b`)

// postcode finds an Australian postcode on an address's last lines, for
// the batch's sort order ("9999" when there is none: sorted last).
func postcode(lines []string) string {
	for i := len(lines) - 1; i >= 0 && i >= len(lines)-2; i-- {
		if m := postcodeRE.FindAllString(lines[i], -1); len(m) > 0 {
			return m[len(m)-1]
		}
	}
	return "9999"
}

// Inspect implements pipeline.Producer: for each postal letter, its pages,
// sheets, envelope, postage, postcode and price, after checking that the
// envelope window of its first page shows its address (or is clear, when
// the address is printed there). A letter that cannot be produced is held
// with the reason.
func (p *Producer) Inspect(ctx context.Context, m *pipeline.Mailing, letters []*pipeline.Letter) error {
	table, err := p.cfg.Prices.For(m.Account)
	if err != nil {
		return err
	}
	type firstPage struct {
		letter *pipeline.Letter
		plan   letterPlan
		page   int
	}
	byFile := map[string][]firstPage{} // PDF path → letters whose first page is in it
	pdfs := map[string]string{}        // document name → PDF path
	hold := func(l *pipeline.Letter, kind, reason string) { l.HoldFor(l.Received, kind, reason) }
	for _, l := range letters {
		lp, err := plan(m, l)
		if err != nil {
			var de *docError
			if errors.As(err, &de) {
				hold(l, pipeline.HoldDocument, de.msg)
				continue
			}
			return err
		}
		ok := true
		for _, part := range lp.parts {
			if _, done := pdfs[part.file.Name]; done {
				continue
			}
			path, err := p.pdfOf(ctx, m, part.file)
			if err == nil {
				err = readable(path, part.file)
			}
			var de *docError
			switch {
			case errors.As(err, &de):
				hold(l, pipeline.HoldDocument, de.msg)
				ok = false
			case err != nil:
				return err
			default:
				pdfs[part.file.Name] = path
			}
			if !ok {
				break
			}
		}
		if !ok {
			continue
		}
		for _, part := range lp.parts {
			if _, conv := pdfs[part.file.Name]; !conv {
				hold(l, pipeline.HoldDocument, part.file.Name+" could not be converted to PDF for printing")
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		first := lp.parts[0]
		path := pdfs[first.file.Name]
		byFile[path] = append(byFile[path], firstPage{letter: l, plan: lp, page: first.first})
	}
	for path, fps := range byFile {
		lo, hi := fps[0].page, fps[0].page
		for _, fp := range fps {
			lo, hi = min(lo, fp.page), max(hi, fp.page)
		}
		// the envelope is not known before the window is read (a cover
		// sheet adds a page), so the area of both windows is read
		texts, err := p.windowTexts(ctx, path, lo, hi, p.cfg.DL.Window.Union(p.cfg.C4.Window).Grow(p.cfg.WindowTolerance))
		if errors.Is(err, sandbox.ErrMissing) {
			return err // the server's fault: the stage is retried
		}
		if err != nil {
			for _, fp := range fps {
				hold(fp.letter, pipeline.HoldDocument, "its first page could not be read: "+err.Error())
			}
			continue
		}
		for _, fp := range fps {
			l := fp.letter
			l.Pages = fp.plan.pages
			v := windowVerdict(texts[fp.page-lo], l.Postal)
			if l.Unaddressed && !l.CoverSheet {
				v = "clear" // a corrected address: set in the window over what it shows
			}
			switch {
			case v == "":
			case v == "clear":
				l.Unaddressed = true
			case m.Production.CoverSheet && !looksLikeAddress(v):
				// not clear, but no address either: the address goes on a
				// cover sheet (another recipient's address is held below)
				l.Unaddressed, l.CoverSheet = true, true
				l.Pages++
			default:
				hold(l, pipeline.HoldWindow, fmt.Sprintf("the envelope window of page %d of %s shows %q, not the letter's address %q: correct the address (correct_letter) or cancel the letter",
					fp.page+1, fp.plan.parts[0].file.Name, v, strings.Join(l.Postal, " / ")))
				continue
			}
			l.Sheets = sheets(l.Pages, m.Production.Duplex)
			l.Envelope = p.cfg.DL.Name
			if m.Production.ForceC4 || l.Sheets > p.cfg.MaxDLSheets {
				l.Envelope = p.cfg.C4.Name
			}
			l.Postage = m.Production.Postage
			if l.Postage == "" {
				l.Postage = "regular"
			}
			l.Postcode = postcode(l.Postal)
			price, err := table.Postal(l.Sheets, m.Production.Duplex, m.Production.Colour, l.Envelope, l.Postage)
			if err != nil {
				return err
			}
			l.Price = price
		}
	}
	return nil
}

// readable checks that production's own reader opens a document's PDF and
// finds its pages, so that a letter whose document it cannot read is held
// now, not found at composition.
func readable(path string, f pipeline.File) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return err
	}
	doc, err := pdf.Open(fh, fi.Size(), pdf.Limits{})
	if err != nil {
		return &docError{fmt.Sprintf("%s cannot be read for printing: %v", f.Name, err)}
	}
	if n := doc.NumPages(); n < f.Pages {
		return &docError{fmt.Sprintf("%s has %d pages for printing, %d when it was uploaded", f.Name, n, f.Pages)}
	}
	return nil
}
