package inspect

import (
	"errors"
	"io"

	"github.com/lodge-mail/lodge/internal/caterr"
	"github.com/lodge-mail/lodge/internal/deadline"
	"github.com/lodge-mail/lodge/internal/pdf"
)

// maxKeptString: the PDF reader parses strings whole but keeps only this
// much of each (page counting reads none; the encryption dictionary's are
// 48 bytes).
const maxKeptString = 1 << 10

// pdfPages counts a PDF's pages with internal/pdf's reader and tells
// which are not A4: a page's size is its crop box within its media box
// times its user unit, as the document gives it (unrotated).
func pdfPages(r io.ReaderAt, size int64, lim Limits, dl *deadline.Deadline) (Document, error) {
	rd, err := pdf.Open(r, size, pdf.Limits{MaxObjects: lim.MaxPDFObjects, MaxPages: lim.MaxPages, MaxDepth: lim.MaxDepth,
		Timeout: lim.Timeout, MaxStringBytes: maxKeptString})
	if err != nil {
		if errors.Is(err, pdf.ErrLimit) && dl.Now() != nil {
			return Document{}, dl.Now() // the inspection's own time limit
		}
		return Document{}, fromPDF(err)
	}
	var doc Document
	doc.Pages = rd.NumPages()
	for i := range doc.Pages {
		if p := rd.Page(i); p.Known {
			doc.addPage(i, (p.Box[2]-p.Box[0])*p.UserUnit, (p.Box[3]-p.Box[1])*p.UserUnit)
		}
	}
	return doc, nil
}

// fromPDF gives an error of the PDF reader this package's categories,
// keeping its message.
func fromPDF(err error) error {
	return caterr.Map(err, []error{pdf.ErrMalformed, pdf.ErrLimit, pdf.ErrEncrypted}, []error{ErrMalformed, ErrLimit, ErrEncrypted}, ErrMalformed)
}
