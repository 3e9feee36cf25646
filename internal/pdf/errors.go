package pdf

import (
	"errors"
	"time"

	"github.com/lodge-mail/lodge/internal/caterr"
)

// Error categories of the Reader. Every error Open and Importer return
// matches one of them (errors.Is); the message says what was wrong, where,
// and is fit for the person who sent the file.
var (
	// ErrMalformed: the file is broken beyond what the reader repairs.
	ErrMalformed = errors.New("malformed PDF")
	// ErrLimit: a bound of Limits, or a fixed one, was exceeded.
	ErrLimit = errors.New("PDF limit exceeded")
	// ErrEncrypted: the file does not open with the empty user password
	// (it needs a password, or uses an unknown or broken security
	// handler).
	ErrEncrypted = errors.New("encrypted PDF")
)

// Error is the concrete type of the Reader's errors. Its message does not
// repeat the category; Unwrap gives the categories.
type Error = caterr.Error

func newErr(cats []error, format string, args ...any) error {
	return caterr.New(cats, format, args...)
}

func limitErr(format string, args ...any) error {
	return newErr([]error{ErrLimit}, format, args...)
}

func malformed(format string, args ...any) error {
	return newErr([]error{ErrMalformed}, format, args...)
}

// prefixed returns err with its message prefixed, keeping its categories.
func prefixed(prefix string, err error) error { return caterr.Prefixed(prefix, err, ErrMalformed) }

// Limits bound what reading one PDF may cost. The zero value of every
// field means its default.
type Limits struct {
	// MaxObjects is the most objects (cross-reference entries) a PDF may
	// have (default 1,000,000).
	MaxObjects int
	// MaxPages is the most pages (default 100,000).
	MaxPages int
	// MaxDepth is the deepest a page tree may nest (default 256).
	MaxDepth int
	// Timeout bounds Open, and then each page an Importer places
	// (default 10 s). It is a cooperative deadline the reader checks as
	// it goes.
	Timeout time.Duration
	// MaxStringBytes is how much of each string is kept (the rest is
	// parsed and dropped); 0 keeps strings whole, as copying needs.
	MaxStringBytes int
}

// Defaults, used for zero fields of Limits.
const (
	DefaultMaxObjects = 1_000_000
	DefaultMaxPages   = 100_000
	DefaultMaxDepth   = 256
	DefaultTimeout    = 10 * time.Second
)

// WithDefaults returns l with every zero (or negative) field set to its
// default.
func (l Limits) WithDefaults() Limits {
	if l.MaxObjects <= 0 {
		l.MaxObjects = DefaultMaxObjects
	}
	if l.MaxPages <= 0 {
		l.MaxPages = DefaultMaxPages
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxStringBytes < 0 {
		l.MaxStringBytes = 0
	}
	return l
}
