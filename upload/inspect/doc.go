// Package inspect checks uploaded files before lodge keeps them: what type
// they are, whether an archive is safe to unpack, and how many pages a
// document has. Its inputs are hostile by assumption: a file may lie in
// its name, its headers and its declared sizes, and may be built to
// exhaust memory, time or stack. The contract is
// ../shared/spec/mail-upload-address-check.md sections 1, 4.2 and 7:
// documents are PDF, PostScript or XPS, metadata JSON or XML, any of them
// possibly inside a ZIP; names carry no paths; a rejected type is 403.
//
// # What it promises
//
//   - Types are told by content, not only by extension: CheckType accepts
//     a file only when its extension is one of pdf, ps, xps, json, xml,
//     zip and its content (Sniff) is of that kind. ZipIsXPS tells an XPS
//     package from another ZIP.
//   - OpenZip validates a whole ZIP archive (central directory, every local
//     header, the first bytes of every entry) before anything is
//     extracted, and refuses paths, links, encryption, overlapping entries,
//     nested archives, too many or too large entries and high compression
//     ratios. Extract and ExtractTo never trust a declared size: inflated
//     bytes are counted and an entry that produces more than it declared
//     fails at once, so memory and disk use is bounded by Limits whatever
//     the archive says.
//   - Inspect (and Pages) counts pages: for PDF by walking the page tree
//     (see below), for PostScript by running it in Ghostscript, for XPS
//     from the FixedDocumentSequence and its FixedDocuments. It returns an
//     error, never a guess: a document with no page count is an error. It
//     also tells which pages are not A4 (Document.NotA4): a PDF page's
//     /CropBox within its /MediaBox, a PostScript page's /PageSize, an XPS
//     FixedPage's Width and Height; A4 within 2 mm, either way round.
//   - No input panics, hangs or grows without bound: every loop is bounded
//     by Limits or by the input's size, nothing recurses without a depth
//     limit, nothing allocates by a size the file declares, and
//     Limits.Timeout is a deadline the parsers check as they go. Pages
//     recovers from panics (bugs) and returns them as errors.
//   - InspectIsolated (and PagesIsolated) goes further: it counts in a
//     child process with a hard timeout, memory cap and stack limit, so
//     even a bug that escapes those bounds costs only the child.
//
// Every error matches one of ErrType, ErrNoExtension, ErrUnsafe,
// ErrLimit, ErrMalformed, ErrEncrypted, ErrBusy, ErrNoGhostscript
// (errors.Is) and has a message fit for the client that sent the file
// (ErrBusy and ErrNoGhostscript are the server's, not the file's).
//
// # Limits
//
// Limits' zero value means the defaults:
//
//	MaxEntries     1,000      entries in a ZIP upload (XPS: + 2×MaxPages parts)
//	MaxEntryBytes  100 MiB    uncompressed size of one entry
//	MaxTotalBytes  1 GiB      uncompressed size of all entries
//	MaxRatio       100        uncompressed:compressed, per entry and overall,
//	                          for sizes above 1 MiB
//	MaxPDFObjects  1,000,000  objects in a PDF
//	MaxPages       100,000    pages in a document
//	Timeout        10 s       one inspection
//	MaxMemory      512 MiB    the isolated child
//	MaxDepth       256        PDF page tree levels
//	MaxChildren    GOMAXPROCS inspection processes at once, process-wide
//	ChildWait      15 s       wait for one of them before ErrBusy
//	Ghostscript    "gs"       the program that runs PostScript (in PATH)
//
// Fixed internal bounds: a ZIP central directory is at most 64 MiB. The
// PDF reader (internal/pdf) has its own: a PDF object has at most
// 1,048,576 tokens and nests arrays and dictionaries at most 100 deep; a
// decoded cross-reference or object stream is at most 64 MiB and all
// decoded streams of one document at most 1 GiB; predictor rows at most 1
// MiB; a PDF has at most 1,024 cross-reference sections; and inspect asks
// it to keep only the first 1 KiB of each PDF string.
// In process these bound memory to a few hundred MiB in the worst case (a
// million-token object, a full cross-reference table, a decoded stream and
// the object stream cache at once); PagesIsolated bounds it hard.
//
// # PDF
//
// PDFs are read by internal/pdf's Reader (its package doc tells what it
// reads and repairs, and how it opens encrypted documents), with
// MaxPDFObjects, MaxPages, MaxDepth and Timeout as its limits: pages are
// the leaves of the page tree, walked without recursion (a node reached
// twice is an error, "page tree has a cycle" when it is its own ancestor;
// /Count is not trusted). A document with an owner password only is
// counted; one that needs a user password (or an unknown handler, a broken
// /Encrypt) is refused with ErrEncrypted "encrypted: opening it needs a
// password": nobody could print it. The reader's errors keep their
// messages and map to ErrMalformed, ErrLimit and ErrEncrypted.
//
// # PostScript and XPS
//
// PostScript is a program: its pages are the pages it prints. Ghostscript
// runs it through internal/sandbox (clean environment, address-space and
// CPU limits of MaxMemory and Timeout, its process group killed at the
// deadline), with -dSAFER (no file access but the document), the null page
// device, A4 for pages that ask for no size, and an EndPage procedure that
// prints each page and its size, with a token random per run; the
// document runs inside "stopped", so that its error is reported
// ("PostScript error /undefined in foo after 1 page: it cannot be
// printed", ErrMalformed). A program still running at Timeout is an
// ErrLimit error ("PostScript did not finish within 10s: a program that
// never ends?"), as is one that prints more than MaxPages pages; one that
// prints none is ErrMalformed. Ghostscript missing is ErrNoGhostscript. The
// DSC comments ("%%Pages: N", "%%Page:") are read only as a hint for
// messages: a file without them is counted all the same, and one whose
// comments lie is counted by what it prints. Ghostscript takes one of the
// MaxChildren slots (in a PagesIsolated child it runs as the child's own
// child, under the child's slot).
//
// An XPS document is opened with OpenZip's checks (part names may have
// directories), its _rels/.rels names the FixedDocumentSequence, whose
// DocumentReferences name FixedDocuments, whose PageContent elements are
// counted; each page's FixedPage part is read up to its root element for
// its Width and Height. XML is streamed with encoding/xml (no entity
// expansion).
//
// # Isolation
//
// InspectIsolated re-executes the current binary (os.Executable) with the
// environment variable LODGE_INSPECT_CHILD=1 and the arguments
// "lodge-inspect-child <kind> <path>"; the limits travel as JSON in
// LODGE_INSPECT_LIMITS. cmd/lodge/main.go must call
// inspect.RunChildIfRequested() as the first statement of main, and a
// test binary that uses PagesIsolated must call it first in TestMain. In
// the child, RunChildIfRequested sets the stack limit (debug.SetMaxStack,
// 64 MiB) and on Linux RLIMIT_AS (the address space at start plus
// MaxMemory; the parent sets GOMEMLIMIT to three quarters of MaxMemory),
// arms a watchdog that exits after Timeout should the parent be gone,
// inspects the document with Inspect and prints one JSON line:
//
//	{"pages":3,"not_a4":[{"first":0,"last":2,"w":216,"h":279}],"not_a4_pages":3}
//	{"error":"PDF page tree has a cycle (object 3 is its own ancestor)","categories":["malformed"]}
//
// The child's environment holds only the Go runtime's variables and PATH
// (to find Ghostscript). The parent kills the child, with its process
// group (Ghostscript), when its context is done or Timeout passes and
// turns a crash, a kill or a missing answer into an ErrLimit error
// "document could not be inspected: ...". ZIP checks and type sniffing run
// in process: they are simple, bounded loops over the central directory.
//
// Every process this package starts (a child, Ghostscript) holds one of
// MaxChildren process-wide slots while it lives (AcquireChild), so a burst
// of requests cannot start one each: a caller past them waits up to
// ChildWait, or until its context is done, and then gets ErrBusy.
package inspect
