package delivery

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/lodge-mail/lodge/delivery/links"
	"github.com/lodge-mail/lodge/pipeline"
)

// LinkStore is what the signed links serve and record (links.Store):
// letters' PDFs, as the send made them, and their openings, in the
// mailroom's records.
type LinkStore struct {
	Mailroom *pipeline.Mailroom
	// PDF is production.Producer.LetterPDF: the PDF made for the send
	// is found again (with the password it was encrypted with; the
	// record no longer holds it).
	PDF func(ctx context.Context, m *pipeline.Mailing, l *pipeline.Letter, password string) (string, error)
	// Existing is production.Producer.ExistingLetterPDF: the PDF made
	// before, without making one (an error wrapping fs.ErrNotExist when
	// there is none).
	Existing      func(ctx context.Context, epid string, idx int) (string, error)
	DocumentError func(error) bool
}

// LetterPDF returns the path of a letter's PDF.
func (s LinkStore) LetterPDF(ctx context.Context, epid string, idx int) (string, error) {
	st := s.Mailroom.Store()
	m, err := st.Mailing(epid)
	if errors.Is(err, pipeline.ErrNotFound) {
		return "", links.ErrNotFound
	}
	if err != nil {
		return "", err
	}
	ls, err := st.Letters(epid, idx, 1)
	if err != nil {
		return "", err
	}
	if len(ls) == 0 || ls[0].Idx != idx || len(ls[0].Documents) == 0 || ls[0].Status == pipeline.Cancelled || m.Purged {
		return "", links.ErrNotFound
	}
	l := &ls[0]
	if l.Send != nil && !l.Send.Done.IsZero() {
		// sent: the PDF the send made (encrypted with a password the
		// record no longer holds); never made again without it
		path, err := s.Existing(ctx, m.EPID, l.Idx)
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%w: %w", links.ErrNotFound, err)
		}
		return path, err
	}
	path, err := s.PDF(ctx, &m, l, l.CustomData["password"])
	if err != nil && s.DocumentError != nil && s.DocumentError(err) {
		return "", links.ErrNotFound // its documents cannot make one: asking again will not help
	}
	return path, err
}

// Opened records an opening.
func (s LinkStore) Opened(epid string, idx int, kind string, at time.Time) error {
	return s.Mailroom.Opened(epid, idx, kind, at)
}
