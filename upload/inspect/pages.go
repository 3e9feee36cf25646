package inspect

import "io"

// Pages counts the pages of a PDF, PostScript or XPS document in this
// process. It is bounded by lim (zero fields are defaults): objects,
// pages, page tree depth, entry sizes, and lim.Timeout as a cooperative
// deadline the parsers check as they go. It never recurses without a
// depth limit, and a panic (a bug) becomes an ErrMalformed error instead
// of crashing the caller. What it cannot bound is memory beyond the
// limits it checks and a stack overflow in the runtime; callers that
// cannot accept that risk use PagesIsolated.
//
// A document with no pages is an error (ErrMalformed).
func Pages(kind Kind, r io.ReaderAt, size int64, lim Limits) (n int, err error) {
	defer func() {
		if p := recover(); p != nil {
			n, err = 0, malformed("the %s could not be inspected (internal error: %v)", kind.label(), p)
		}
	}()
	return pages(kind, r, size, lim)
}

// pages is Pages without the recover, for tests and fuzzing: a panic here
// is a bug to find, not to hide.
func pages(kind Kind, r io.ReaderAt, size int64, lim Limits) (int, error) {
	lim = lim.WithDefaults()
	dl := newDeadline(lim.Timeout)
	if size < 0 {
		return 0, malformed("negative size")
	}
	switch kind {
	case PDF:
		return pdfPages(r, size, lim, dl)
	case PostScript:
		return psPages(r, size, lim, dl)
	case XPS:
		return xpsPages(r, size, lim, dl)
	}
	return 0, typeErr("pages are counted for PDF, PostScript and XPS documents, not %s", kind.label())
}
