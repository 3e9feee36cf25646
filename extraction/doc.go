// Package extraction is the auto processor: it reads the letters of a
// mailing that has no metadata letters out of its documents (spec
// sections 1 and 2.1). It implements pipeline.Extractor; the pipeline's
// extract stage calls it after end_session, checks every address it
// returns with the engine, and records the letters, which from there go
// as metadata letters go (holds, production, statuses).
//
// # What it promises
//
//   - Every page of every letter document belongs to exactly one letter,
//     in document order. A letter that cannot be read as it is comes back
//     held (pipeline.HoldAddress) with the reason and its page, so that a
//     person can give it its address (correct_letter, the portal) or
//     cancel it: never dropped, never silently merged or split.
//   - The same documents give the same letters (the stage may run again
//     after a crash).
//   - Documents are read in a child process (RunChildIfRequested) bounded
//     in time (Config.Timeout plus 10 ms a page) and address space
//     (Config.Memory, 512 MiB by default), with a reduced environment
//     (internal/isolate); a document that defeats the readers costs a
//     child and holds its letters with the reason.
//
// It stores nothing itself: the letters go into the pipeline's records.
//
// # Where the address is
//
// On a letter's first page the address is the text in the window zone:
// the union of production's DL and C4 windows (x 20 mm, y 50 mm, 95 x 45
// mm from the top-left corner of the page as displayed), widened by
// Config.Tolerance (3 mm) on every side. A character counts when the
// centre of its box is in the zone, whatever its colour: white text and
// text render mode 3 count (customers hide the reference so). Characters
// are grouped into lines by baseline (within 0.3 em), each line read
// left to right with a space where the gap exceeds 0.15 em, a glyph
// drawn twice in place (fake bold) read once, and the text normalised
// (NFKC: ligatures and compatibility forms read as letters). Text at
// other angles than upright is not an address line.
//
// The zone's lines may begin with channel lines, each on its own line
// and at most once: ref:<reference>, email:<address>, fax:<number>,
// sms:<number or address> (the key in any case; the service in the field
// writes them in that order, and any order is read). They set the
// letter's reference and channels, and production paints them white
// (pipeline.Letter.Masks), so they never show through the window. The
// remaining lines, at most MaxPostalLines, are the postal address. The
// primary channel is chosen as spec 2.4 chooses it for a letter that
// names none: sms, fax, email, then postal.
//
// # Where a letter starts
//
// By default a letter starts on a page whose zone holds an address
// (two or more postal lines, or a channel line) other than the current
// letter's (compared in capitals, punctuation and spacing aside): the
// continuation pages of a statement show nothing there, or a running
// head of one line, or the same address again. A profile or the
// metadata may instead fix the pages per letter (production_options
// split_pages) or name a marker text (split_marker) that the first page
// of every letter shows anywhere on it. Pages before the first start
// make a held letter of their own.
//
// # Reading documents
//
// A document's bytes are read at its path on the node that took the
// upload (pipeline.File.Path) or, with the object store several nodes
// share (Config.Blobs), from this node's verified copy of its object
// (File.Blob, production.DocumentPath): one missing from the store holds
// its letters, any other failure of the store retries the stage.
//
// PDF is read by internal/pdf (PageText: its own content-stream
// interpreter and font tables), PostScript through the PDF that
// production makes of it with Ghostscript (once per document, shared
// with printing), and XPS by internal/xps, which reads the Glyphs
// elements of its pages directly. The choice was measured on a 5,000-page
// statement run on this project's 2-core machines: Ghostscript's txtwrite
// device read 144 pages a second; poppler's pdftotext -bbox-layout about
// 1,150, writing 56 KB of XHTML a page for the server to parse; pdfium in
// WebAssembly (go-pdfium) needs a pool that takes about 4 s to start and
// about 0.8 ms a page after; internal/pdf, which already parses every
// uploaded PDF with bounds, reads only what the zone needs (see the
// closing figures in README.md's Auto processor section and
// bench/extractbench).
package extraction
