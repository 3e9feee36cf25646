// Package caterr makes errors with two audiences: a message for the person
// who sent the input (what was wrong, where; it does not repeat the
// category) and categories for the program (errors.Is against a package's
// sentinel errors, so that a caller maps an error to a status code
// without parsing messages). upload/inspect and internal/pdf use it.
package caterr

import (
	"errors"
	"fmt"
)

// Error is a message with categories; Unwrap gives the categories.
type Error struct {
	msg  string
	cats []error
}

func (e *Error) Error() string   { return e.msg }
func (e *Error) Unwrap() []error { return e.cats }

// New returns an error with the formatted message and the categories.
func New(cats []error, format string, args ...any) error {
	return &Error{msg: fmt.Sprintf(format, args...), cats: cats}
}

// Prefixed returns err with its message prefixed, keeping its categories;
// an error of another type gets the category other (and still matches
// itself).
func Prefixed(prefix string, err, other error) error {
	var e *Error
	if errors.As(err, &e) {
		return &Error{msg: prefix + e.msg, cats: e.cats}
	}
	return &Error{msg: prefix + err.Error(), cats: []error{other, err}}
}

// Map returns err's message with new categories: to[i] for each from[i]
// that err matches, or other when it matches none.
func Map(err error, from, to []error, other error) error {
	var cats []error
	for i, c := range from {
		if errors.Is(err, c) {
			cats = append(cats, to[i])
		}
	}
	if len(cats) == 0 {
		cats = []error{other}
	}
	return &Error{msg: err.Error(), cats: cats}
}
