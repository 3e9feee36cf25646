package xps

import (
	"errors"
	"time"

	"github.com/lodge-mail/lodge/internal/caterr"
)

// Error categories. Every error Open and PageText return matches one of
// them (errors.Is); the message names the part (and line) at fault and
// does not repeat the category.
var (
	// ErrMalformed: the package or a part is broken, or uses what this
	// reader does not support.
	ErrMalformed = errors.New("malformed XPS")
	// ErrLimit: a bound of Limits was exceeded (the deadline too).
	ErrLimit = errors.New("XPS limit exceeded")
)

// Error is the concrete type of the reader's errors; Unwrap gives the
// categories.
type Error = caterr.Error

func malformed(format string, args ...any) error {
	return caterr.New([]error{ErrMalformed}, format, args...)
}

func limitErr(format string, args ...any) error {
	return caterr.New([]error{ErrLimit}, format, args...)
}

// prefixed returns err with its message prefixed, keeping its categories
// (ErrMalformed for an error of another type).
func prefixed(prefix string, err error) error { return caterr.Prefixed(prefix, err, ErrMalformed) }

// Limits bound what reading one XPS document may cost. The zero value of
// every field means its default (see the package doc for why each is
// what it is).
type Limits struct {
	// MaxParts is the most entries the ZIP package may have
	// (default 250,000).
	MaxParts int
	// MaxPages is the most pages of the document (default 100,000).
	MaxPages int
	// MaxPartBytes is the most one XML part (a page, a FixedDocument,
	// a resource dictionary) may hold decompressed (default 32 MiB).
	MaxPartBytes int64
	// MaxFontBytes is the most one font part may hold (default 32 MiB).
	MaxFontBytes int64
	// MaxTotalBytes is the most the Doc decompresses in its life: Open
	// and every PageText together, a part read twice counting twice
	// (default 2 GiB).
	MaxTotalBytes int64
	// MaxDepth is the deepest XML elements may nest (default 256).
	MaxDepth int
	// MaxElements is the most XML elements in one part
	// (default 1,000,000).
	MaxElements int
	// MaxChars is the most characters one page may draw
	// (default 200,000).
	MaxChars int
	// Timeout bounds Open, and then each PageText call (default 10 s):
	// a cooperative deadline checked as the reader goes.
	Timeout time.Duration
}

// Defaults, used for zero (or negative) fields of Limits.
const (
	DefaultMaxParts      = 250_000
	DefaultMaxPages      = 100_000
	DefaultMaxPartBytes  = 32 << 20
	DefaultMaxFontBytes  = 32 << 20
	DefaultMaxTotalBytes = 2 << 30
	DefaultMaxDepth      = 256
	DefaultMaxElements   = 1_000_000
	DefaultMaxChars      = 200_000
	DefaultTimeout       = 10 * time.Second
)

// fontCacheBytes is how much font data a Doc keeps parsed: past it the
// cache is emptied (a document with a subset font per page reads each
// once anyway).
const fontCacheBytes = 64 << 20

// WithDefaults returns l with every zero or negative field set to its
// default.
func (l Limits) WithDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def64 := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxParts, DefaultMaxParts)
	def(&l.MaxPages, DefaultMaxPages)
	def64(&l.MaxPartBytes, DefaultMaxPartBytes)
	def64(&l.MaxFontBytes, DefaultMaxFontBytes)
	def64(&l.MaxTotalBytes, DefaultMaxTotalBytes)
	def(&l.MaxDepth, DefaultMaxDepth)
	def(&l.MaxElements, DefaultMaxElements)
	def(&l.MaxChars, DefaultMaxChars)
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	return l
}
