// Package production turns postal letters into print: it checks each
// letter before the cancellation window ends (Inspect: its documents as
// PDF, the address in its envelope window, its pages, sheets, envelope,
// postage and price), and writes print batches into the hot folder
// (Compose). It implements pipeline.Producer; the pipeline decides when.
//
// # What it reads
//
// Uploaded documents, through sandboxed programs (internal/sandbox):
// PostScript is turned into PDF by Ghostscript's pdfwrite, XPS by
// libgxps's xpstopdf, once per document, into <WorkDir>/converted/<epid>/;
// the text in the envelope window of each letter's first page is read by
// poppler's pdftotext (crop to the union of the DL and C4 windows plus
// WindowTolerance). A document a converter refuses, or whose window shows
// another address, holds its letters with the reason; a window that shows
// nothing makes the letter unaddressed: its address is printed there (or
// on a cover sheet, a profile setting, where the window area is not clear).
//
// # What it writes
//
// Each batch is a folder in the hot folder (default <data-dir>/print/
// outbox/<batch>/), written in the work folder, synced, and renamed into
// place whole, so the print room never sees half a batch.
package production
