package inspect

import "io"

// Pages counts the pages of a PDF, PostScript or XPS document in this
// process: Inspect's count.
func Pages(kind Kind, r io.ReaderAt, size int64, lim Limits) (int, error) {
	d, err := Inspect(kind, r, size, lim)
	return d.Pages, err
}

// Inspect counts the pages of a PDF, PostScript or XPS document in this
// process, and tells which are not A4. It is bounded by lim (zero fields
// are defaults): objects, pages, page tree depth, entry sizes, and
// lim.Timeout as a cooperative deadline the parsers check as they go.
// It never recurses without a depth limit, and a panic (a bug) becomes an
// ErrMalformed error instead of crashing the caller. What it cannot bound
// is memory beyond the limits it checks and a stack overflow in the
// runtime; callers that cannot accept that risk use InspectIsolated.
// PostScript is run by Ghostscript in the sandbox, which holds one of the
// lim.MaxChildren slots (AcquireChild).
//
// A document with no pages is an error (ErrMalformed).
func Inspect(kind Kind, r io.ReaderAt, size int64, lim Limits) (d Document, err error) {
	defer func() {
		if p := recover(); p != nil {
			d, err = Document{}, malformed("the %s could not be inspected (internal error: %v)", kind.label(), p)
		}
	}()
	return inspect(kind, r, size, lim)
}

// pages is Inspect's count without the recover, for tests and fuzzing: a
// panic here is a bug to find, not to hide.
func pages(kind Kind, r io.ReaderAt, size int64, lim Limits) (int, error) {
	d, err := inspect(kind, r, size, lim)
	return d.Pages, err
}

func inspect(kind Kind, r io.ReaderAt, size int64, lim Limits) (Document, error) {
	lim = lim.WithDefaults()
	dl := newDeadline(lim.Timeout)
	if size < 0 {
		return Document{}, malformed("negative size")
	}
	switch kind {
	case PDF:
		return pdfPages(r, size, lim, dl)
	case PostScript:
		return psPages(r, size, lim, dl)
	case XPS:
		return xpsPages(r, size, lim, dl)
	}
	return Document{}, typeErr("pages are counted for PDF, PostScript and XPS documents, not %s", kind.label())
}
