package caterr

import (
	"errors"
	"io/fs"
	"testing"
)

func TestCategories(t *testing.T) {
	a, b, c := errors.New("a"), errors.New("b"), errors.New("c")
	err := New([]error{a, b}, "object %d is missing", 7)
	if err.Error() != "object 7 is missing" || !errors.Is(err, a) || !errors.Is(err, b) || errors.Is(err, c) {
		t.Fatalf("New: %v", err)
	}
	p := Prefixed("page tree: ", err, c)
	if p.Error() != "page tree: object 7 is missing" || !errors.Is(p, a) || errors.Is(p, c) {
		t.Fatalf("Prefixed: %v", p)
	}
	p = Prefixed("reading: ", fs.ErrNotExist, c)
	if p.Error() != "reading: file does not exist" || !errors.Is(p, c) || !errors.Is(p, fs.ErrNotExist) {
		t.Fatalf("Prefixed of another error: %v", p)
	}
	m := Map(err, []error{b, c}, []error{fs.ErrExist, fs.ErrClosed}, fs.ErrInvalid)
	if m.Error() != err.Error() || !errors.Is(m, fs.ErrExist) || errors.Is(m, fs.ErrClosed) || errors.Is(m, fs.ErrInvalid) || errors.Is(m, a) {
		t.Fatalf("Map: %v", m)
	}
	if m := Map(err, []error{c}, []error{fs.ErrClosed}, fs.ErrInvalid); !errors.Is(m, fs.ErrInvalid) {
		t.Fatalf("Map without a match: %v", m)
	}
}
