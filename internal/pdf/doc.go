// Package pdf reads the PDFs customers upload and writes the PDFs lodge
// produces (print batches, cover sheets, invoices); its Importer places
// pages of the one in the other, and PageText reads the text of a page
// with its positions (for the auto processor).
//
// # Reading
//
// Open reads a PDF whose bytes may be hostile: the contract is that no
// input panics, hangs or grows without bound. Every loop is bounded by
// Limits or by the input's size, nothing recurses without a depth limit,
// nothing allocates by a size the file declares, and Limits.Timeout is a
// deadline the reader checks as it goes (for Open, then afresh for each
// page an Importer places or PageText reads). Errors match ErrMalformed,
// ErrLimit or ErrEncrypted and say what was wrong and where.
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
// # Reading text
//
// PageText reads the characters a page draws with their boxes, in points
// from the top-left corner of the page as displayed (package pagetext),
// and the boxes of its raster images; given a zone, it keeps only the
// characters whose box's centre lies in it and the images that overlap
// it (the auto processor reads every page's envelope window so). Why our
// own: measured on this machine class, Ghostscript's txtwrite reads 144
// pages a second, poppler's pdftotext -bbox-layout about 1,150 (writing
// 56 KB of XHTML a page), ledongthuc/pdf has no widths for the standard
// fonts and pdfium in WebAssembly (go-pdfium) needs a pool that takes 4 s
// to warm. PageText reads a 1,000-page statement run, Open included, at
// about 23,000 pages a second in the window zone and 14,000 whole, on one
// core with 5 KB and 110 allocations a page, and a page of Chromium's or
// Ghostscript's in 15 to 26 µs once its fonts are loaded (go test -run X
// -bench PageText ./internal/pdf); its words and boxes match pdftotext's
// within 1 pt on the fixtures of testdata/text.
//
// The interpreter follows q and Q, cm, the text state (Tf, Tc, Tw, Tz,
// TL, Ts, Tr, Td, TD, Tm, T*) and the showing operators (Tj, TJ, ', "),
// and the fill and stroke colours in the device spaces and those like
// them (ICCBased by its /N, CalGray, CalRGB) and ExtGState alpha: text
// painted only in white or with alpha 0, or in render mode 3 or 7, is
// Invisible; nothing else hides text (clipped text, text under an image
// and optional content all count). Form XObjects are drawn in their
// /Matrix with their /Resources (else the page's); a form already being
// drawn is skipped (a cycle). Image XObjects and inline images give their
// boxes (the unit square in the CTM); an inline image's data is skipped
// by its /L or /Length, else by its size when it is not filtered, else by
// searching for EI after white space and before what looks like content;
// without one it takes the rest of the stream. Paths, shadings and marked
// content are passed over; unknown operators, and operators whose
// operands are wrong, are skipped, as readers do.
//
// Fonts are read once per document (by object number: a statement run
// shares them across its pages). Simple fonts (Type1, MMType1, TrueType,
// Type3 in its /FontMatrix) take their widths from /Widths and
// /FirstChar, else from the standard 14 fonts' own metrics by glyph name
// (those of the URW fonts Ghostscript substitutes, metric-compatible;
// also under the names word processors use, Arial, TimesNewRoman,
// CourierNew and their styles), else /MissingWidth, else 500/1000 (a font
// resource that is missing draws so, in StandardEncoding); their codes
// are glyph names by /Encoding (StandardEncoding, WinAnsiEncoding,
// MacRomanEncoding, PDFDocEncoding; the Symbol and ZapfDingbats fonts'
// own; an embedded Type 1 program's own, from its clear-text part) and
// /Differences, and glyph names are text by the Adobe Glyph List,
// uniXXXX, uXXXX to uXXXXXX, a suffixed name as its base (a.sc) and a
// ligature name as its parts (f_f_i). Composite fonts (Type0 over
// CIDFontType0 or 2) take /W, /DW, /W2 and /DW2, Identity-H and -V or an
// embedded CMap (codespace ranges of 1 to 4 bytes, cidchar, cidrange,
// usecmap of Identity or a /UseCMap stream; /WMode 1 writes vertically).
// A /ToUnicode map (bfchar, bfrange counted up or with an array, UTF-16
// with surrogate pairs, several characters a glyph) wins over the
// encoding code by code; a map that cannot be read, or that does not map
// a code (or maps it to NUL), leaves the code to the encoding, and a code
// nothing gives text to is U+FFFD: a broken map is never an error.
// Ligature characters (U+FB00 to U+FB06) are spelt out; a glyph mapped to
// no text gives no character. Boxes rise from the font descriptor's
// /Descent to its /Ascent (repaired as poppler does), Adobe's for the
// standard fonts, else -0.35 and 0.95 em.
//
// Not read: widths from embedded font programs (only /Widths and /W
// count), the built-in encodings of embedded TrueType and CFF programs
// (StandardEncoding is assumed, WinAnsiEncoding for TrueType; producers
// write /Differences or ToUnicode), predefined CMaps other than Identity
// and the Unicode ones (UniGB-UCS2-H and the like read as two-byte codes
// that are their text; the legacy CJK ones as two-byte codes with no
// text but ToUnicode's), text by CID collection (Adobe-Japan1 and the
// like without ToUnicode give U+FFFD), ZapfDingbats' characters (U+FFFD),
// Type 3 glyph procedures (not run), /ActualText.
//
// Bounds of one page's text, each an ErrLimit error for the page that
// says where (the content stream or form, and the byte): 4,194,304
// operators, form XObjects' included; 524,288 glyphs; 65,536 images; form
// XObjects drawn 16 deep; q nested 1,024 deep; an array operand of
// 262,144 elements; a CMap of 131,072 entries or 4 MiB decoded (an error
// for every page drawing with that font). More than 64 operands before an
// operator are dropped. Per document, decoded forms are kept up to 16 MiB
// and fonts up to about 64 MiB, then the caches start afresh.
// Limits.Timeout bounds each page afresh.
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
