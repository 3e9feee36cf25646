package inspect

import (
	"time"

	"github.com/lodge-mail/lodge/internal/deadline"
)

// Limits bound what inspecting one file may cost. The zero value of every
// field means its default (the constants below); there is no "unlimited".
type Limits struct {
	// MaxEntries is the most entries (files and directories) a ZIP
	// upload may hold. XPS packages may hold MaxEntries + 2×MaxPages parts:
	// every page is a part, often with a relationships part of its own.
	MaxEntries int
	// MaxEntryBytes is the largest uncompressed size of one entry.
	MaxEntryBytes int64
	// MaxTotalBytes is the largest uncompressed size of all entries.
	MaxTotalBytes int64
	// MaxRatio is the largest uncompressed/compressed size ratio, for each
	// entry and for the archive as a whole. It is applied to entries (and
	// archives) whose uncompressed size exceeds ratioFloor (1 MiB): below
	// that nothing can amplify enough to matter, and small text files
	// legitimately compress very well.
	MaxRatio int64
	// MaxPDFObjects is the most objects (cross-reference entries) a PDF
	// may have.
	MaxPDFObjects int
	// MaxPages is the most pages a document may have.
	MaxPages int
	// Timeout bounds the time one inspection may take. In process it is a
	// cooperative deadline the parsers check as they go; PagesIsolated
	// kills the child process when it passes.
	Timeout time.Duration
	// MaxMemory bounds the memory of the isolated child (PagesIsolated):
	// its GOMEMLIMIT and, on Linux, its address space beyond what it had
	// at start (RLIMIT_AS).
	MaxMemory int64
	// MaxDepth is the deepest a PDF page tree may nest.
	MaxDepth int
	// MaxChildren bounds the inspection processes (PagesIsolated's
	// children, Ghostscript) running at once in this process, whoever
	// started them; the default is GOMAXPROCS. See AcquireChild.
	MaxChildren int
	// ChildWait is how long a caller waits for one of the MaxChildren
	// slots before it gets ErrBusy.
	ChildWait time.Duration
	// Ghostscript is the program that runs PostScript to count its pages
	// (default "gs", looked up in PATH).
	Ghostscript string
}

// Defaults, used for zero fields of Limits.
const (
	DefaultMaxEntries    = 1000
	DefaultMaxEntryBytes = 100 << 20
	DefaultMaxTotalBytes = 1 << 30
	DefaultMaxRatio      = 100
	DefaultMaxPDFObjects = 1_000_000
	DefaultMaxPages      = 100_000
	DefaultTimeout       = 10 * time.Second
	DefaultMaxMemory     = 512 << 20
	DefaultMaxDepth      = 256
	DefaultChildWait     = 15 * time.Second
)

// ratioFloor: the compression ratio is checked for entries and archives
// larger than this.
const ratioFloor = 1 << 20

// WithDefaults returns l with every zero (or negative) field set to its
// default.
func (l Limits) WithDefaults() Limits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxEntryBytes <= 0 {
		l.MaxEntryBytes = DefaultMaxEntryBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = DefaultMaxRatio
	}
	if l.MaxPDFObjects <= 0 {
		l.MaxPDFObjects = DefaultMaxPDFObjects
	}
	if l.MaxPages <= 0 {
		l.MaxPages = DefaultMaxPages
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxMemory <= 0 {
		l.MaxMemory = DefaultMaxMemory
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxChildren <= 0 {
		l.MaxChildren = defaultMaxChildren()
	}
	if l.ChildWait <= 0 {
		l.ChildWait = DefaultChildWait
	}
	if l.Ghostscript == "" {
		l.Ghostscript = "gs"
	}
	return l
}

// newDeadline returns the cooperative deadline of one inspection (see
// internal/deadline): the parsers check it as they go.
func newDeadline(d time.Duration) *deadline.Deadline {
	return deadline.New(d, limitErr("inspection took longer than %v", d))
}
