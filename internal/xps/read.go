package xps

import (
	"fmt"
	"io"
	"strings"

	"github.com/lodge-mail/lodge/internal/deadline"
)

// Doc is an XPS document opened by Open: its pages, and what reading them
// keeps (fonts, resource dictionaries, a buffer). A Doc belongs to one
// goroutine.
type Doc struct {
	pkg   *pkg
	lim   Limits
	dl    *deadline.Deadline
	pages []string // FixedPage part names, in order
	buf   []byte

	fonts     map[string]*fontEntry // by part name and fragment
	fontBytes int64
	dicts     map[string]*dictEntry // remote resource dictionaries by part name

	pg pageState // scratch of PageText, reused
}

type fontEntry struct {
	font *Font
	err  error // the font's part is missing or broken (said once per page that needs it)
}

type dictEntry struct {
	res map[string]*resource
	err error
}

// relsPart holds the package's relationships: the one whose type ends
// with relFixedRep (in XPS 1.0 and OpenXPS) names the root
// FixedDocumentSequence.
const relsPart = "_rels/.rels"

// Open reads an XPS package's structure: the FixedDocumentSequence that
// _rels/.rels names (or, without such a relationship, the package's only
// .fdseq part), its FixedDocuments and their pages. Pages are read by
// PageText.
func Open(r io.ReaderAt, size int64, lim Limits) (*Doc, error) {
	lim = lim.WithDefaults()
	dl := deadline.New(lim.Timeout, limitErr("XPS document not read within %v", lim.Timeout))
	p, err := openPackage(r, size, lim)
	if err != nil {
		return nil, err
	}
	d := &Doc{pkg: p, lim: lim, dl: dl, fonts: map[string]*fontEntry{}, dicts: map[string]*dictEntry{}}
	seq, err := d.rootSequence()
	if err != nil {
		return nil, err
	}
	docs, err := d.references(seq, "FixedDocumentSequence", "DocumentReference", lim.MaxPages)
	if err != nil {
		return nil, err
	}
	read := map[string][]string{} // a FixedDocument named twice counts twice, read once
	for _, fdoc := range docs {
		if partKey(fdoc) == partKey(seq) {
			return nil, malformed("%s names itself as a FixedDocument", seq)
		}
		pages, ok := read[partKey(fdoc)]
		if !ok {
			if pages, err = d.references(fdoc, "FixedDocument", "PageContent", lim.MaxPages); err != nil {
				return nil, err
			}
			for _, pg := range pages {
				if k := partKey(pg); k == partKey(fdoc) || k == partKey(seq) {
					return nil, malformed("%s names %s as a page", fdoc, pg)
				}
				if !p.has(pg) {
					return nil, malformed("%s names page %s, which is not in the package", fdoc, pg)
				}
			}
			read[partKey(fdoc)] = pages
		}
		if len(d.pages)+len(pages) > lim.MaxPages {
			return nil, limitErr("document has more than %d pages", lim.MaxPages)
		}
		d.pages = append(d.pages, pages...)
	}
	if len(d.pages) == 0 {
		return nil, malformed("%s: the document has no pages", seq)
	}
	return d, nil
}

// NumPages is the number of pages of the document.
func (d *Doc) NumPages() int { return len(d.pages) }

// PagePart is the part name of page i's FixedPage (for messages).
func (d *Doc) PagePart(i int) string {
	if i < 0 || i >= len(d.pages) {
		return ""
	}
	return d.pages[i]
}

// rootSequence finds the FixedDocumentSequence part.
func (d *Doc) rootSequence() (string, error) {
	if d.pkg.has(relsPart) {
		data, err := d.pkg.read(relsPart, d.lim.MaxPartBytes, d.buf)
		if err != nil {
			return "", err
		}
		d.buf = data
		w := newWalker(data, relsPart, &d.lim, d.dl)
		var target string
		for {
			e, _, err := w.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return "", err
			}
			if e == nil || e.local != "Relationship" || target != "" {
				continue
			}
			typ, _ := e.get("Type")
			if !strings.HasSuffix(strings.ToLower(typ), relFixedRep) {
				continue
			}
			t, _ := e.get("Target")
			name, _, err := resolve("/", t)
			if err != nil {
				return "", w.errorf("the fixed representation relationship: %v", err)
			}
			target = name
		}
		if target != "" {
			if !d.pkg.has(target) {
				return "", malformed("%s names %s as the FixedDocumentSequence, which is not in the package", relsPart, target)
			}
			return target, nil
		}
	}
	var found string
	for k, f := range d.pkg.parts {
		if strings.HasSuffix(k, ".fdseq") {
			if found != "" {
				return "", malformed("package has several FixedDocumentSequences and no relationship naming one")
			}
			found = f.Name
		}
	}
	if found == "" {
		return "", malformed("not an XPS document: no FixedDocumentSequence")
	}
	return found, nil
}

// references reads a part whose root element is root and returns the
// parts its child elements named child point to (Source attributes,
// resolved against the part), at most max of them.
func (d *Doc) references(part, root, child string, max int) ([]string, error) {
	data, err := d.pkg.read(part, d.lim.MaxPartBytes, d.buf)
	if err != nil {
		return nil, err
	}
	d.buf = data
	w := newWalker(data, part, &d.lim, d.dl)
	if _, err := w.root(root); err != nil {
		return nil, err
	}
	var out []string
	for {
		e, _, err := w.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if e == nil {
			continue
		}
		if e.local != child || e.kind != nsFixed || w.depth != 2 {
			if err := w.skip(); err != nil {
				return nil, err
			}
			continue
		}
		src, ok := e.get("Source")
		if !ok {
			return nil, w.errorf("%s has no Source", child)
		}
		name, _, err := resolve(part, src)
		if err != nil {
			return nil, w.errorf("%s Source: %v", child, err)
		}
		if len(out) >= max {
			return nil, limitErr("%s names more than %d parts", part, max)
		}
		out = append(out, name)
	}
}

func (d *Doc) pageErr(i int, err error) error {
	return prefixed(fmt.Sprintf("page %d: ", i+1), err)
}
