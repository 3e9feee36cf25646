package inspect

import (
	"errors"

	"github.com/lodge-mail/lodge/internal/caterr"
)

// Error categories. Every error this package returns matches at least one
// of them with errors.Is, so a caller can map it to a status code without
// parsing messages; the message itself says what was wrong and is safe to
// show to the client that sent the file.
var (
	// ErrType: the file's extension is not accepted, or its content is not
	// what the extension says.
	ErrType = errors.New("file type rejected")
	// ErrNoExtension: the file name has no extension. It also matches
	// ErrType. (The spec answers this with 500; see section 4.2.)
	ErrNoExtension = errors.New("file name has no extension")
	// ErrUnsafe: an archive was refused because unpacking it could harm
	// the server or the files around it: paths in names, links, encrypted
	// entries, overlapping entries, nested archives, a lying header.
	ErrUnsafe = errors.New("archive refused")
	// ErrLimit: a limit in Limits was exceeded (entries, sizes, ratio,
	// pages, objects, depth, time, memory), or the isolated inspector was
	// killed for exceeding one.
	ErrLimit = errors.New("limit exceeded")
	// ErrMalformed: the document or archive is broken beyond what the
	// inspector repairs.
	ErrMalformed = errors.New("malformed document")
	// ErrEncrypted: an encrypted ZIP entry, or a PDF that does not open
	// with the empty user password (it needs a password, or uses an
	// unknown or broken security handler).
	ErrEncrypted = errors.New("encrypted")
	// ErrBusy: the inspection did not start because Limits.MaxChildren
	// inspection processes were running and none finished within
	// Limits.ChildWait. Nothing is wrong with the document: a server
	// answers 503 with Retry-After.
	ErrBusy = errors.New("busy")
	// ErrNoGhostscript: PostScript cannot be counted because Ghostscript
	// (Limits.Ghostscript) is not installed. Nothing is wrong with the
	// document: the server's operator must install it.
	ErrNoGhostscript = errors.New("cannot run Ghostscript")
)

// Error is the concrete type of the errors this package returns. Its
// message does not repeat the category; Unwrap gives the categories.
type Error = caterr.Error

func newErr(cats []error, format string, args ...any) error {
	return caterr.New(cats, format, args...)
}

func typeErr(format string, args ...any) error {
	return newErr([]error{ErrType}, format, args...)
}
func unsafeErr(format string, args ...any) error {
	return newErr([]error{ErrUnsafe}, format, args...)
}
func limitErr(format string, args ...any) error {
	return newErr([]error{ErrLimit}, format, args...)
}
func malformed(format string, args ...any) error {
	return newErr([]error{ErrMalformed}, format, args...)
}

// prefixed returns err with its message prefixed, keeping its categories.
func prefixed(prefix string, err error) error { return caterr.Prefixed(prefix, err, ErrMalformed) }

// categoryNames maps categories to the names the isolated child uses on
// the wire.
var categoryNames = []struct {
	name string
	err  error
}{
	{"type", ErrType}, {"noext", ErrNoExtension}, {"unsafe", ErrUnsafe},
	{"limit", ErrLimit}, {"malformed", ErrMalformed}, {"encrypted", ErrEncrypted},
	{"busy", ErrBusy}, {"noghostscript", ErrNoGhostscript},
}

func categoriesOf(err error) []string {
	var names []string
	for _, c := range categoryNames {
		if errors.Is(err, c.err) {
			names = append(names, c.name)
		}
	}
	return names
}

func errorFromWire(msg string, names []string) error {
	var cats []error
	for _, n := range names {
		for _, c := range categoryNames {
			if c.name == n {
				cats = append(cats, c.err)
			}
		}
	}
	if len(cats) == 0 {
		cats = []error{ErrMalformed}
	}
	return newErr(cats, "%s", msg)
}
