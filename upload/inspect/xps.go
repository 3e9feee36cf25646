package inspect

import (
	"github.com/lodge-mail/lodge/internal/deadline"

	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// XPS page counts: the package is opened as a ZIP with the same checks as
// an upload (except that part names have directories and content is not
// type-checked); _rels/.rels names the FixedDocumentSequence (.fdseq)
// through its fixed-representation relationship (or, without one, the
// package's only .fdseq part is used); each DocumentReference there names
// a FixedDocument (.fdoc), whose PageContent elements are the pages.
// Interleaved parts ([0].piece ... [n].last.piece) are joined. XML is read
// with encoding/xml as a stream (no DTDs, no entity expansion), in UTF-8 or
// UTF-16.

const (
	ctPart         = "[content_types].xml"
	relsPart       = "_rels/.rels"
	fixedRepSuffix = "/fixedrepresentation"
)

// ZipIsXPS tells whether a ZIP archive is an XPS (or OpenXPS) document: it
// has a [Content_Types].xml part and a FixedDocumentSequence, named by
// _rels/.rels or with the .fdseq extension. It opens the archive with the
// default Limits and reads only the central directory and _rels/.rels.
func ZipIsXPS(r io.ReaderAt, size int64) bool {
	a, err := openZip(r, size, Limits{}, true)
	if err != nil || !a.hasPart(ctPart) {
		return false
	}
	seq, err := a.fdseq(newDeadline(DefaultTimeout))
	return err == nil && seq != ""
}

func xpsPages(r io.ReaderAt, size int64, lim Limits, dl *deadline.Deadline) (Document, error) {
	a, err := openZip(r, size, lim, true)
	if err != nil {
		return Document{}, prefixed("XPS package: ", err)
	}
	seq, err := a.fdseq(dl)
	if err != nil {
		return Document{}, err
	}
	if seq == "" {
		return Document{}, malformed("not an XPS document: no FixedDocumentSequence")
	}
	var docs []string
	err = a.elements(seq, dl, func(se xml.StartElement) error {
		if se.Name.Local != "DocumentReference" {
			return nil
		}
		if len(docs) >= lim.MaxPages {
			return limitErr("XPS document sequence has more than %d documents", lim.MaxPages)
		}
		docs = append(docs, resolvePart(seq, attr(se, "Source")))
		return nil
	})
	if err != nil {
		return Document{}, err
	}
	counted := map[string][]string{} // a FixedDocument's pages (their parts)
	var doc Document
	total := 0
	for _, fdoc := range docs {
		pages, ok := counted[fdoc]
		if !ok {
			err := a.elements(fdoc, dl, func(se xml.StartElement) error {
				if se.Name.Local == "PageContent" {
					if len(pages) >= lim.MaxPages {
						return limitErr("XPS document has more than %d pages", lim.MaxPages)
					}
					pages = append(pages, resolvePart(fdoc, attr(se, "Source")))
				}
				return nil
			})
			if err != nil {
				return Document{}, err
			}
			counted[fdoc] = pages
		}
		if total+len(pages) > lim.MaxPages {
			return Document{}, limitErr("XPS document has more than %d pages", lim.MaxPages)
		}
		for _, pg := range pages {
			w, h, err := a.fixedPageSize(pg, dl)
			if err != nil {
				return Document{}, err
			}
			doc.addPage(total, w, h)
			total++
		}
	}
	if total == 0 {
		return Document{}, malformed("XPS document has no pages")
	}
	doc.Pages = total
	return doc, nil
}

var errStop = errors.New("stop")

// fixedPageSize reads a FixedPage's Width and Height (in 1/96 inch) and
// returns them in points; zero when the page part is missing or says
// nothing (the count does not need it). Only the deadline is an error.
func (a *Archive) fixedPageSize(name string, dl *deadline.Deadline) (w, h float64, err error) {
	if !a.hasPart(name) {
		return 0, 0, nil
	}
	err = a.elements(name, dl, func(se xml.StartElement) error {
		w, _ = strconv.ParseFloat(attr(se, "Width"), 64)
		h, _ = strconv.ParseFloat(attr(se, "Height"), 64)
		return errStop // the root element is the FixedPage
	})
	if errors.Is(err, ErrLimit) {
		return 0, 0, err
	}
	return w * 72 / 96, h * 72 / 96, nil
}

// fdseq returns the name of the FixedDocumentSequence part ("" if none).
func (a *Archive) fdseq(dl *deadline.Deadline) (string, error) {
	if a.hasPart(relsPart) {
		var target string
		err := a.elements(relsPart, dl, func(se xml.StartElement) error {
			if se.Name.Local == "Relationship" && target == "" &&
				strings.HasSuffix(strings.ToLower(attr(se, "Type")), fixedRepSuffix) {
				target = resolvePart("/", attr(se, "Target")) // relative to the package root
			}
			return nil
		})
		if err != nil {
			return "", err
		}
		if target != "" {
			if !a.hasPart(target) {
				return "", malformed("XPS relationships name %q, which is not in the package", target)
			}
			return target, nil
		}
	}
	var found string
	for _, e := range a.entries {
		if strings.HasSuffix(strings.ToLower(e.Name), ".fdseq") {
			if found != "" {
				return "", malformed("XPS package has several FixedDocumentSequences and no relationship naming one")
			}
			found = e.Name
		}
	}
	return found, nil
}

func attr(se xml.StartElement, name string) string {
	for _, a := range se.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// partKey is a part name as the archive is keyed: no leading slash,
// percent-decoded (folded to lower case by foldName).
func partKey(name string) string {
	name = strings.TrimPrefix(name, "/")
	if u, err := url.PathUnescape(name); err == nil {
		name = u
	}
	return name
}

// resolvePart resolves a relative part reference against the part that
// holds it. The result has no leading slash and cannot climb above the
// package root.
func resolvePart(base, target string) string {
	if i := strings.IndexAny(target, "#?"); i >= 0 {
		target = target[:i]
	}
	if !strings.HasPrefix(target, "/") {
		target = path.Join(path.Dir("/"+strings.TrimPrefix(base, "/")), target)
	}
	return strings.TrimPrefix(path.Clean("/"+target), "/")
}

func (a *Archive) hasPart(name string) bool {
	if a.byName[foldName(name, true)] != nil {
		return true
	}
	return a.byName[foldName(name+"/[0].piece", true)] != nil
}

// part returns a reader of a part's content, joining interleaved pieces.
func (a *Archive) part(name string) (io.Reader, func(), error) {
	if e := a.byName[foldName(name, true)]; e != nil {
		r, err := a.open(e)
		if err != nil {
			return nil, nil, err
		}
		return r, func() { r.Close() }, nil
	}
	var readers []io.Reader
	var closers []io.Closer
	closeAll := func() {
		for _, c := range closers {
			c.Close()
		}
	}
	for i := 0; ; i++ {
		e := a.byName[foldName(name+"/["+strconv.Itoa(i)+"].piece", true)]
		last := false
		if e == nil {
			e = a.byName[foldName(name+"/["+strconv.Itoa(i)+"].last.piece", true)]
			last = true
		}
		if e == nil {
			closeAll()
			if i == 0 {
				return nil, nil, malformed("XPS part %q is missing", name)
			}
			return nil, nil, malformed("XPS part %q has no last piece", name)
		}
		r, err := a.open(e)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		readers, closers = append(readers, r), append(closers, r)
		if last {
			return io.MultiReader(readers...), closeAll, nil
		}
	}
}

// elements calls fn for each start element of an XML part.
func (a *Archive) elements(name string, dl *deadline.Deadline, fn func(xml.StartElement) error) error {
	r, done, err := a.part(name)
	if err != nil {
		return err
	}
	defer done()
	dec := xml.NewDecoder(utf8Reader(r))
	dec.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		switch strings.ToLower(label) {
		case "utf-8", "utf8", "utf-16", "utf16", "utf-16le", "utf-16be", "us-ascii", "ascii":
			return in, nil // utf8Reader has transcoded UTF-16 already
		}
		return nil, fmt.Errorf("encoding %q not supported", label)
	}
	for {
		if err := dl.Check(); err != nil {
			return err
		}
		tok, err := dec.RawToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				return err
			}
			return malformed("XPS part %q: %v", name, err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if err := fn(se); err != nil {
				return err
			}
		}
	}
}

// utf8Reader transcodes UTF-16 (told by its byte order mark) to UTF-8 and
// passes anything else through.
func utf8Reader(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	bom, _ := br.Peek(2)
	switch {
	case len(bom) == 2 && bom[0] == 0xFF && bom[1] == 0xFE:
		br.Discard(2)
		return &utf16Reader{r: br, le: true}
	case len(bom) == 2 && bom[0] == 0xFE && bom[1] == 0xFF:
		br.Discard(2)
		return &utf16Reader{r: br}
	}
	return br
}

type utf16Reader struct {
	r    *bufio.Reader
	le   bool
	out  []byte
	high rune // a pending high surrogate
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	for len(u.out) == 0 {
		var b [2]byte
		if _, err := io.ReadFull(u.r, b[:]); err != nil {
			if err == io.ErrUnexpectedEOF {
				err = io.EOF
			}
			return 0, err
		}
		c := rune(b[0])<<8 | rune(b[1])
		if u.le {
			c = rune(b[1])<<8 | rune(b[0])
		}
		switch {
		case utf16.IsSurrogate(c) && c < 0xDC00:
			u.high = c
			continue
		case utf16.IsSurrogate(c):
			c = utf16.DecodeRune(u.high, c)
			u.high = 0
		}
		u.out = utf8.AppendRune(u.out[:0], c)
	}
	n := copy(p, u.out)
	u.out = u.out[n:]
	return n, nil
}
