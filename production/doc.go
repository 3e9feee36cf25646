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
//
// Its batch.pdf holds every letter's pages in print order, all A4, each a
// page of its document copied by internal/pdf's Importer (not rasterised:
// each font and image of a document is copied once per batch, and a page
// several letters share, once): an A4 page as it is (within 3 mm), any
// other size scaled to fit and centred, a landscape page turned a quarter
// counter-clockwise (its top on the sheet's left). Then, per letter: an
// address cover sheet first where Inspect asked for one; the background
// document's first page (the letterhead) behind the letter's first page,
// or behind all its pages (BackgroundPages "all"), never behind
// attachments, which follow the letter's pages in their order; the
// address of an unaddressed letter set in its envelope's window on white
// (Helvetica 10 pt, smaller down to 6 pt for a long line); in duplex, a
// blank back after an odd page count, so that each letter starts on a
// front; on the front of every sheet, 6 mm from the bottom-left corner
// (outside any window), a Data Matrix on white reading
// "EPID/letter/sheet/sheets" (SheetCode); and for a mono batch, a mid grey
// over each page in the Saturation blend mode, which keeps every colour's
// luminosity and drops its hue. A letter whose pages or sheets come out
// other than Inspect counted fails the batch (its documents changed).
//
// # Letters delivered electronically
//
// LetterPDF (letterpdf.go) writes the PDF an email attaches or a link
// serves: the letter's pages as they are (each at its own size, no sheet
// code, letterhead or greys; masks painted as in print), attachments
// after, once, into <WorkDir>/letters/<epid>/<idx>.pdf (with an object
// store, into letters/<epid>/<idx>.pdf there: see below). With a password
// qpdf encrypts it (AES-256, revision 6; the password reaches qpdf on a
// memfd as its standard input, never on a command line or disk), and
// only the encrypted file is kept. RemoveLetterPDFs deletes a mailing's.
//
// # Sending to a printer
//
// Printer (printer.go) implements pipeline.Printer over IPP
// (internal/ipp): a ready batch's batch.pdf is sent as a job named after
// the batch, sides set for duplex or simplex, and the printer's jobs are
// looked up by that name. The hot folder keeps the batch either way.
//
// # Several nodes: the object store
//
// Without Config.Blobs (one node, the default) everything above is on
// this node's disk. With the object store several nodes share
// (blobs.go), any node does any stage and serves anything made:
//
//   - A document is read by its key (pipeline.File.Blob) from this
//     node's verified copy of the object (DocumentPath, which the auto
//     processor uses too); File.Path is valid only on the node that took
//     the upload. An object missing from the store holds its letters; a
//     store that fails is the server's problem: the stage is retried,
//     never the letter held. Conversions of PostScript and XPS stay in
//     each node's work folder (made again from the document on another
//     node: the same pages).
//   - Compose writes the batch folder into this node's hot folder as
//     above, then puts batch.pdf, manifest.csv, lodgement.json and,
//     last, manifest.json under print/<batch>/ in the store, each
//     durably, before it returns: the mailroom records the batch ready
//     only then. A batch whose manifest.json is there already (put
//     before a crash, or by another node that composed it from the same
//     records) is not put again. Batches reads a batch's files from the
//     store for the operator view and the Printer (and, with
//     Config.PresignExpiry, gives presigned URLs of them); without a
//     store it reads the batch's folder in the hot folder of the node
//     that composed it (Batch.Dir). The hot folder keeps the batch on the
//     node that composed it either way; the store's print/ objects are
//     not removed by lodge.
//   - A letter's PDF for email and links is the object
//     letters/<epid>/<idx>.pdf: made in the work folder (encrypted
//     there), put, and the local file removed; every node then returns
//     this node's copy of the object, whatever password it is asked
//     with (LetterPDF says what two nodes making it at once give).
//     RemoveLetterPDFs deletes the objects.
package production
