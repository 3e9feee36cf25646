package xps

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/lodge-mail/lodge/internal/deadline"
)

// Namespaces the reader knows. Elements of any other namespace are
// skipped with everything inside them.
const (
	nsMC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
)

// nsKind is what an element's namespace is to the reader.
type nsKind uint8

const (
	nsOther    nsKind = iota
	nsFixed           // XPS 1.0 or OpenXPS: the document markup
	nsCompat          // markup compatibility (mc:AlternateContent)
	nsRelation        // OPC relationships
)

func kindOf(uri string) nsKind {
	switch uri {
	case nsXPS, nsOpenXPS:
		return nsFixed
	case nsMC:
		return nsCompat
	case nsRels:
		return nsRelation
	}
	return nsOther
}

// walker streams an XML part token by token with encoding/xml (no DTD,
// no entity expansion: encoding/xml knows only the five predefined
// entities), bounding depth and element count and checking the deadline.
type walker struct {
	dec   *xml.Decoder
	part  string
	lim   *Limits
	dl    *deadline.Deadline
	depth int
	elems int
	// ns holds the namespace bindings in scope, innermost last; marks[d]
	// is len(ns) when the element at depth d opened.
	ns    []nsBind
	marks []int
	names []xml.Name // the open elements, to match end tags
	cur   elem
	// Lifting (see lift.go): src is the page before lifting, notes what
	// lift took from its Glyphs, glyphs how many Glyphs tags the walker
	// has seen; note is the current Glyphs element's (nil without).
	src    []byte
	notes  []lifted
	glyphs int
	note   *lifted
}

// errMismatch: the Decoder did not see a page as lift did; it is read
// again without lifting.
var errMismatch = errors.New("xps: lifted values do not match the page")

type nsBind struct{ prefix, uri string }

// elem is a start element with its namespace resolved.
type elem struct {
	ns    string
	kind  nsKind
	local string
	attr  []xml.Attr
}

func (e *elem) get(name string) (string, bool) {
	for _, a := range e.attr {
		if a.Name.Local == name && a.Name.Space == "" {
			return a.Value, true
		}
	}
	return "", false
}

// key returns the element's x:Key (any prefix).
func (e *elem) key() string {
	for _, a := range e.attr {
		if a.Name.Local == "Key" && a.Name.Space != "" && a.Name.Space != "xmlns" {
			return a.Value
		}
	}
	return ""
}

func newWalker(data []byte, part string, lim *Limits, dl *deadline.Deadline) *walker {
	dec := xml.NewDecoder(bytes.NewReader(utf8Part(data)))
	dec.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		switch strings.ToLower(label) {
		case "utf-8", "utf8", "utf-16", "utf16", "utf-16le", "utf-16be", "us-ascii", "ascii":
			return in, nil // utf8Part transcoded UTF-16 already
		}
		return nil, fmt.Errorf("encoding %q is not supported", label)
	}
	return &walker{dec: dec, part: part, lim: lim, dl: dl, marks: make([]int, 0, 32), names: make([]xml.Name, 0, 32)}
}

// errorf returns a malformed error located at the walker's line.
func (w *walker) errorf(format string, args ...any) error {
	line, _ := w.dec.InputPos()
	return malformed("%s line %d: %s", w.part, line, fmt.Sprintf(format, args...))
}

// next returns the next start element (e != nil), or an end element
// (e == nil, end true), or io.EOF at the end of the part.
func (w *walker) next() (e *elem, end bool, err error) {
	for {
		if err := w.dl.Check(); err != nil {
			return nil, false, err
		}
		tok, err := w.dec.RawToken()
		if err == io.EOF {
			if w.depth != 0 {
				return nil, false, w.errorf("the part ends inside an element")
			}
			if w.notes != nil && w.glyphs != len(w.notes) {
				return nil, false, errMismatch
			}
			return nil, false, io.EOF
		}
		if err != nil {
			return nil, false, malformed("%s: %v", w.part, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			w.elems++
			if w.elems > w.lim.MaxElements {
				return nil, false, limitErr("%s has more than %d elements", w.part, w.lim.MaxElements)
			}
			if w.depth >= w.lim.MaxDepth {
				return nil, false, limitErr("%s nests elements more than %d deep", w.part, w.lim.MaxDepth)
			}
			w.depth++
			w.marks = append(w.marks, len(w.ns))
			w.names = append(w.names, t.Name)
			for _, a := range t.Attr {
				switch {
				case a.Name.Space == "" && a.Name.Local == "xmlns":
					w.ns = append(w.ns, nsBind{"", a.Value})
				case a.Name.Space == "xmlns":
					w.ns = append(w.ns, nsBind{a.Name.Local, a.Value})
				}
			}
			uri := w.lookup(t.Name.Space)
			w.cur = elem{ns: uri, kind: kindOf(uri), local: t.Name.Local, attr: t.Attr}
			if w.notes != nil && t.Name.Local == "Glyphs" {
				if err := w.checkNote(); err != nil {
					return nil, false, err
				}
			}
			return &w.cur, false, nil
		case xml.EndElement:
			if w.depth == 0 {
				return nil, false, w.errorf("</%s> closes nothing", t.Name.Local)
			}
			if open := w.names[len(w.names)-1]; open != t.Name {
				return nil, false, w.errorf("</%s> closes <%s>", qname(t.Name), qname(open))
			}
			w.depth--
			w.ns = w.ns[:w.marks[len(w.marks)-1]]
			w.marks = w.marks[:len(w.marks)-1]
			w.names = w.names[:len(w.names)-1]
			return nil, true, nil
		}
	}
}

func qname(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// checkNote matches the Glyphs element just read with lift's note of
// it: the Decoder must see an empty value wherever lift took one.
func (w *walker) checkNote() error {
	if w.glyphs >= len(w.notes) {
		return errMismatch
	}
	w.note = &w.notes[w.glyphs]
	w.glyphs++
	ix, us := false, false
	for _, a := range w.cur.attr {
		if a.Name.Space != "" {
			continue
		}
		switch a.Name.Local {
		case "Indices":
			ix = a.Value == ""
		case "UnicodeString":
			us = a.Value == ""
		}
	}
	if w.note.hasIx && !ix || w.note.hasUS && !us {
		return errMismatch
	}
	return nil
}

func (w *walker) lookup(prefix string) string {
	if prefix == "xml" {
		return "http://www.w3.org/XML/1998/namespace"
	}
	for i := len(w.ns) - 1; i >= 0; i-- {
		if w.ns[i].prefix == prefix {
			return w.ns[i].uri
		}
	}
	return ""
}

// skip consumes the rest of the element just started.
func (w *walker) skip() error {
	d := w.depth
	for w.depth >= d {
		if _, _, err := w.next(); err != nil {
			if err == io.EOF {
				return w.errorf("the part ends inside an element")
			}
			return err
		}
	}
	return nil
}

// root reads the root element, which must be local in the fixed
// document namespaces.
func (w *walker) root(local string) (*elem, error) {
	e, _, err := w.next()
	if err == io.EOF {
		return nil, malformed("%s is empty: no %s", w.part, local)
	}
	if err != nil {
		return nil, err
	}
	if e == nil || e.local != local || e.kind != nsFixed {
		name := "nothing"
		if e != nil {
			name = e.local
			if e.kind != nsFixed {
				name += fmt.Sprintf(" of namespace %q", e.ns)
			}
		}
		return nil, malformed("%s: root element is %s, not an XPS %s", w.part, name, local)
	}
	return e, nil
}
