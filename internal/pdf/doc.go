// Package pdf reads the PDFs customers upload and writes the PDFs lodge
// produces (print batches, cover sheets, invoices); its Importer places
// pages of the one in the other.
//
// # Reading
//
// Open reads a PDF whose bytes may be hostile: the contract is that no
// input panics, hangs or grows without bound. Every loop is bounded by
// Limits or by the input's size, nothing recurses without a depth limit,
// nothing allocates by a size the file declares, and Limits.Timeout is a
// deadline the reader checks as it goes (for Open, then afresh for each
// page an Importer places). Errors match ErrMalformed, ErrLimit or
// ErrEncrypted and say what was wrong and where.
//
// The reader implements the lexer and object syntax; startxref;
// cross-reference tables and streams (/W, /Index, /Prev chains with cycle
// protection, hybrid /XRefStm); object streams (/ObjStm); stream filters
// FlateDecode (zlib or raw), ASCIIHexDecode and ASCII85Decode with PNG
// (all five row filters) and TIFF predictors; /Length trusted only when
// "endstream" follows it, otherwise found by searching, so a 2 GB /Length
// costs nothing. When the cross-reference data is missing or wrong (bad
// startxref, an entry that points at the wrong object, a missing /Root),
// the table is rebuilt by scanning the file for "N G obj" headers, later
// definitions winning, and indexing the object streams found; the trailer
// is then the last one naming a catalog, else the last cross-reference
// stream dictionary, else the last /Type /Catalog object. Offsets are also
// tried relative to a %PDF- header that follows junk (HeaderWindow).
//
// Open walks the page tree from /Root /Pages once, without recursion, and
// indexes its leaves with the attributes they inherit (/MediaBox,
// /CropBox, /Rotate, /Resources): a node reached twice is an error ("page
// tree has a cycle" when it is its own ancestor), as is a tree deeper than
// MaxDepth or with more than MaxPages leaves. /Count is not trusted; a
// tree with no leaves is an error that quotes it. Nodes are told by /Type,
// or without one by whether they have /Kids. NumPages and Page (box,
// rotation, user unit) answer from the index.
//
// Encrypted PDFs (/Encrypt in the trailer) are opened as a reader opens
// them, with the empty user password of the standard security handler:
// revisions 2 to 4 (algorithm 2, RC4 and MD5, checked against /U with
// algorithm 4 or 5; /V 4 crypt filters V2 and AESV2) and 5 and 6
// (SHA-256, algorithm 2.B; AESV3). A document with an owner password only
// opens so (Encrypted reports it): its object streams, strings and
// streams are decrypted as they are read, so what an Importer copies is
// plain. One that needs a user password is refused with ErrEncrypted
// "encrypted: opening it needs a password", as is any other handler
// (certificates), algorithm or broken /Encrypt dictionary: nobody could
// print it.
//
// Fixed bounds: an object has at most 1,048,576 tokens and nests arrays
// and dictionaries at most 100 deep; a decoded stream held in memory
// (cross-reference, object and content streams, an encrypted stream being
// copied) is at most 64 MiB; all streams decoded by Open, or for one
// imported page, at most 1 GiB; predictor rows at most 1 MiB; at most
// 1,024 cross-reference sections; references followed at most 8 deep.
// Strings are kept whole unless Limits.MaxStringBytes says otherwise.
// Not supported: LZWDecode, RunLengthDecode and image filters on
// cross-reference, object or content-array streams (a single content
// stream and every other stream are copied as stored, whatever their
// filters); streams in external files; repairing a page tree (missing
// kids are an error, not skipped).
//
// # Importing
//
// An Importer places a page of a Reader in a Writer as a form XObject:
// its content (one stream copied as stored, any filter; several decoded
// and joined), its resources and transparency group, with every object
// they name copied once per Importer, strings and reals as read. What is
// not copied: annotations (links, and the appearance of form fields
// filled in a viewer and not flattened, which therefore do not print),
// the document's optional content settings (layers hidden in a viewer
// print), and pages reached from resources (null in the copy).
//
// # Writing
//
// Why our own: composition must reach 1,000 pages a second on two cores
// with bounded memory. pdfcpu v0.11.1 (the library the field suggests)
// took 265 s and 519 MB to put a letterhead behind the pages of a
// 20,000-page statement run on this machine class (75 pages/s), because
// it loads and rewrites the whole document per operation. Writer instead
// streams: each object is written once, as it is made, and only object
// offsets (8 bytes each) stay in memory; Importer copies each source
// object once and keeps only its number. The same statement run composed
// by package production with them (letterhead behind every page, a Data
// Matrix on every sheet, greys for mono) took 1.2 to 1.8 s and 32 to 39
// MB here (11,000 to 17,000 pages/s; go run ./bench/statementrun), about
// what qpdf takes only to copy those pages into a new file.
//
// What it writes: PDF 1.7 with a classic cross-reference table; pages of
// any size; content streams Flate-compressed; the standard fonts
// Helvetica, Helvetica-Bold and Courier in WinAnsiEncoding (not embedded:
// every reader has them; metrics in metrics_gen.go); Data Matrix symbols
// as filled rectangles (no images, crisp at any resolution); blend modes
// through ExtGStates (Saturation turns colour pages grey).
//
// Concurrency: a Reader, a Writer, an Importer and a Content belong to
// one goroutine.
package pdf

//go:generate go run genmetrics.go
