package production

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/lodge-mail/lodge/pipeline"
)

// previewSlots bounds the previews made at once: each reads the letter's
// documents and writes a PDF, work a busy portal must not let crowd out
// production.
const previewSlots = 2

var previewSem = make(chan struct{}, previewSlots)

// ErrPreviewBusy says previewSlots previews are being made: ask again.
var ErrPreviewBusy = errors.New("too many previews are being made: try again in a moment")

// PreviewPDF makes a preview of a letter for its customer (the portal)
// and returns it as an open file, already unlinked, with its size: the
// caller reads it and closes it, and nothing stays on disk.
//
// A postal letter whose pages the check stage has counted is shown as it
// will print: A4 sheets with the background, the masks, the address set
// in the window when the letter's document has none (a corrected or
// unaddressed letter), the sheet codes, greys for mono; the print batch
// adds nothing else to its pages. Any other letter (electronic, or not
// yet checked) is shown as LetterPDF makes it, its pages as they are with
// the masks painted, but never encrypted and never cached: LetterPDF's
// file is the send's, and the first call decides its password.
//
// The letter's documents must still be kept (not purged). A problem of
// them is a DocumentError; at most previewSlots previews are made at
// once, ErrPreviewBusy past that.
func (p *Producer) PreviewPDF(ctx context.Context, m *pipeline.Mailing, l *pipeline.Letter) (*os.File, int64, error) {
	select {
	case previewSem <- struct{}{}:
		defer func() { <-previewSem }()
	default:
		return nil, 0, ErrPreviewBusy
	}
	if m.Purged {
		return nil, 0, &docError{"the mailing's documents are no longer kept (the preview period has passed)"}
	}
	dir := filepath.Join(p.cfg.WorkDir, "previews")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, 0, err
	}
	f, err := os.CreateTemp(dir, "preview-*.pdf")
	if err != nil {
		return nil, 0, err
	}
	path := f.Name()
	f.Close()
	defer os.Remove(path)
	if l.IsPostal() && l.Pages > 0 {
		b := pipeline.Batch{EPID: m.EPID, Account: m.Account, Envelope: l.Envelope, Postage: l.Postage,
			Colour: m.Production.Colour, Duplex: m.Production.Duplex, Stock: m.Production.Stock, Letters: []int{l.Idx}}
		err = p.writeBatchPDF(ctx, path, m, &b, []pipeline.Letter{*l})
		var le *pipeline.LetterError
		if errors.As(err, &le) {
			err = &docError{le.Err.Error()}
		}
	} else {
		_, err = p.writeLetterPDF(ctx, path, m, l)
	}
	if err != nil {
		return nil, 0, err
	}
	out, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	fi, err := out.Stat()
	if err != nil {
		out.Close()
		return nil, 0, err
	}
	// unlinked by the deferred Remove; the open file stays readable
	return out, fi.Size(), nil
}
