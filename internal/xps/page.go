package xps

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/lodge-mail/lodge/internal/pagetext"
)

// pageState is what PageText keeps while it reads one page; a Doc reuses
// it from page to page.
type pageState struct {
	d      *Doc
	w      *walker
	part   string
	p      *pagetext.Page
	zone   *pagetext.Rect
	frames []frame
	run    glyphRun
	path   pathElem
	spans  []span // the runes of a run's UnicodeString
	chars  int
	// lifted holds the page without its Glyphs' values, notes where
	// they were (lift.go); reused from page to page.
	lifted []byte
	notes  []lifted
}

type frameKind uint8

const (
	fContainer frameKind = iota // FixedPage, Canvas, mc:Fallback
	fGlyphs
	fPath
	fAlternate // mc:AlternateContent: only its Fallback is read
)

// frame is an element the reader is inside of.
type frame struct {
	kind    frameKind
	name    string // FixedPage or Canvas: its property elements are name+"."
	pm      Matrix // the parent's transform (to page points)
	m       Matrix // this element's content's transform: its own, then pm
	opacity float64
	res     map[string]*resource // resources this element declares
}

// brushKind tells what a Fill does to what it fills.
type brushKind uint8

const (
	bNone  brushKind = iota // no fill: nothing is drawn
	bSolid                  // a colour
	bImage                  // an ImageBrush: a raster image
	bOther                  // gradients, visual brushes: drawn, visible
)

type brush struct {
	kind    brushKind
	col     colour
	opacity float64
}

// invisible reports whether what the brush fills cannot be seen.
func (b brush) invisible() bool {
	return b.kind == bNone || b.opacity == 0 || b.kind == bSolid && (b.col.alpha == 0 || b.col.white)
}

type resKind uint8

const (
	rMatrix resKind = iota
	rBrush
	rGeometry
)

// resource is an entry of a resource dictionary, as far as the reader
// needs it.
type resource struct {
	kind resKind
	m    Matrix
	b    brush
	g    box
}

// glyphRun is a Glyphs element's attributes and property elements, read
// when it opens and drawn when it closes.
type glyphRun struct {
	line                      int
	originX, originY, em      float64
	fontURI, unicode, indices string
	hasIndices                bool
	// The lifted values (views of the page buffer), made strings only
	// when the run is laid out.
	liftedIx, liftedUS []byte
	sideways           bool
	rtl                bool
	fill               brush
	opacity            float64
	rt                 Matrix
}

type pathElem struct {
	fill    brush
	opacity float64
	rt      Matrix
	geom    box
}

// PageText reads page i (from 0) into p: p.Reset(), then the FixedPage's
// Width and Height in points, every character its Glyphs elements draw
// (only those whose box centre lies in zone when zone is not nil) and
// the boxes of the images its Paths fill (those meeting zone when zone is
// not nil). After an error p is empty.
func (d *Doc) PageText(i int, zone *pagetext.Rect, p *pagetext.Page) error {
	p.Reset()
	if i < 0 || i >= len(d.pages) {
		return fmt.Errorf("xps: page %d of a %d-page document", i+1, len(d.pages))
	}
	d.dl.Reset(d.lim.Timeout)
	part := d.pages[i]
	data, err := d.pkg.read(part, d.lim.MaxPartBytes, d.buf)
	if err != nil {
		return d.pageErr(i, err)
	}
	d.buf = data
	data = utf8Part(data)
	s := &d.pg
	s.d = d
	compact, notes, ok := lift(data, s.lifted, s.notes)
	s.lifted, s.notes = compact, notes
	if ok {
		err = s.readWith(p, zone, part, compact, data, notes)
	}
	if !ok || errors.Is(err, errMismatch) {
		p.Reset()
		err = s.readWith(p, zone, part, data, nil, nil)
	}
	if err != nil {
		p.Reset() // no half-read page
		return d.pageErr(i, err)
	}
	return nil
}

// readWith reads a page from data, whose lifted values (when notes is
// not nil) are in src.
func (s *pageState) readWith(p *pagetext.Page, zone *pagetext.Rect, part string, data, src []byte, notes []lifted) error {
	*s = pageState{d: s.d, part: part, p: p, zone: zone, frames: s.frames[:0], spans: s.spans[:0], lifted: s.lifted, notes: s.notes}
	s.w = newWalker(data, part, &s.d.lim, s.d.dl)
	if notes != nil {
		s.w.src, s.w.notes = src, notes
	}
	return s.read()
}

func (s *pageState) read() error {
	w := s.w
	root, err := w.root("FixedPage")
	if err != nil {
		return err
	}
	var size [2]float64
	for j, a := range []string{"Width", "Height"} {
		v, ok := root.get(a)
		if !ok {
			return w.errorf("FixedPage has no %s", a)
		}
		if size[j], err = parseNum(v); err != nil || size[j] <= 0 || size[j] > 1e6 {
			return w.errorf("FixedPage %s %q is not a page size", a, v)
		}
	}
	s.p.Width, s.p.Height = size[0]*ptPerUnit, size[1]*ptPerUnit
	page := Matrix{A: ptPerUnit, D: ptPerUnit}
	s.frames = append(s.frames, frame{kind: fContainer, name: "FixedPage", pm: page, m: page, opacity: 1})
	for {
		e, _, err := w.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if e == nil {
			if err := s.end(); err != nil {
				return err
			}
			continue
		}
		if err := s.start(e); err != nil {
			return err
		}
	}
}

func (s *pageState) top() *frame { return &s.frames[len(s.frames)-1] }

// end closes the innermost frame, drawing a Glyphs or Path.
func (s *pageState) end() error {
	f := s.frames[len(s.frames)-1]
	s.frames = s.frames[:len(s.frames)-1]
	switch f.kind {
	case fGlyphs:
		return s.drawGlyphs(&s.frames[len(s.frames)-1])
	case fPath:
		s.drawPath(&s.frames[len(s.frames)-1])
	}
	return nil
}

// start handles an element opening inside the innermost frame.
func (s *pageState) start(e *elem) error {
	w := s.w
	top := s.top()
	if e.kind == nsCompat {
		switch {
		case e.local == "AlternateContent" && top.kind == fContainer:
			s.frames = append(s.frames, frame{kind: fAlternate, pm: top.m, m: top.m, opacity: top.opacity})
			return nil
		case e.local == "Fallback" && top.kind == fAlternate:
			s.frames = append(s.frames, frame{kind: fContainer, name: "Fallback", pm: top.m, m: top.m, opacity: top.opacity})
			return nil
		}
		return w.skip()
	}
	if e.kind != nsFixed || top.kind == fAlternate {
		return w.skip()
	}
	switch top.kind {
	case fGlyphs:
		switch e.local {
		case "Glyphs.RenderTransform":
			m, err := s.transformProperty()
			s.run.rt = m
			return err
		case "Glyphs.Fill":
			b, err := s.brushProperty()
			s.run.fill = b
			return err
		}
		return w.skip()
	case fPath:
		switch e.local {
		case "Path.RenderTransform":
			m, err := s.transformProperty()
			s.path.rt = m
			return err
		case "Path.Fill":
			b, err := s.brushProperty()
			s.path.fill = b
			return err
		case "Path.Data":
			return s.geometryProperty(&s.path.geom)
		}
		return w.skip()
	}
	// A container: FixedPage, Canvas, a Fallback.
	if strings.HasPrefix(e.local, top.name) && len(e.local) > len(top.name) && e.local[len(top.name)] == '.' {
		switch e.local[len(top.name)+1:] {
		case "Resources":
			return s.resourcesProperty(top)
		case "RenderTransform":
			if top.name != "Canvas" {
				return w.skip()
			}
			m, err := s.transformProperty()
			if err != nil {
				return err
			}
			top.m = m.then(top.pm)
			return nil
		}
		return w.skip()
	}
	switch e.local {
	case "Canvas":
		f := frame{kind: fContainer, name: "Canvas", pm: top.m, m: top.m, opacity: top.opacity}
		for _, a := range e.attr {
			if a.Name.Space != "" {
				continue
			}
			switch a.Name.Local {
			case "RenderTransform":
				m, err := s.matrixAttr(a.Value)
				if err != nil {
					return w.errorf("Canvas RenderTransform: %v", err)
				}
				f.m = m.then(f.pm)
			case "Opacity":
				o, err := parseNum(a.Value)
				if err != nil {
					return w.errorf("Canvas Opacity: %v", err)
				}
				f.opacity *= clamp01(o)
			}
		}
		s.frames = append(s.frames, f)
		return nil
	case "Glyphs":
		return s.startGlyphs(e, top)
	case "Path":
		return s.startPath(e, top)
	}
	return w.skip()
}

func (s *pageState) startGlyphs(e *elem, top *frame) error {
	w := s.w
	line, _ := w.dec.InputPos()
	r := glyphRun{line: line, opacity: top.opacity, rt: Identity}
	var haveX, haveY, haveEm bool
	if n := w.note; n != nil {
		w.note = nil
		if n.hasIx {
			r.liftedIx, r.hasIndices = w.src[n.indices[0]:n.indices[1]], true
		}
		if n.hasUS {
			r.liftedUS = w.src[n.unicode[0]:n.unicode[1]]
		}
	}
	for _, a := range e.attr {
		if a.Name.Space != "" {
			continue
		}
		var err error
		switch a.Name.Local {
		case "OriginX":
			r.originX, err = parseNum(a.Value)
			haveX = true
		case "OriginY":
			r.originY, err = parseNum(a.Value)
			haveY = true
		case "FontRenderingEmSize":
			r.em, err = parseNum(a.Value)
			if err == nil && r.em < 0 {
				err = fmt.Errorf("%q is negative", a.Value)
			}
			haveEm = true
		case "FontUri":
			r.fontURI = a.Value
		case "UnicodeString":
			if r.liftedUS == nil {
				r.unicode = a.Value
			}
		case "Indices":
			if r.liftedIx == nil {
				r.indices, r.hasIndices = a.Value, true
			}
		case "IsSideways":
			r.sideways = a.Value == "true"
		case "BidiLevel":
			var v float64
			if v, err = parseNum(a.Value); err == nil && (v < 0 || v > 61 || v != math.Trunc(v)) {
				err = fmt.Errorf("%q is not a level from 0 to 61", a.Value)
			}
			r.rtl = int(v)%2 == 1
		case "Fill":
			r.fill, err = s.brushAttr(a.Value)
		case "Opacity":
			var o float64
			o, err = parseNum(a.Value)
			r.opacity *= clamp01(o)
		case "RenderTransform":
			r.rt, err = s.matrixAttr(a.Value)
		}
		if err != nil {
			return w.errorf("Glyphs %s: %v", a.Name.Local, err)
		}
	}
	if !haveX || !haveY || !haveEm {
		return w.errorf("Glyphs needs OriginX, OriginY and FontRenderingEmSize")
	}
	s.run = r
	s.frames = append(s.frames, frame{kind: fGlyphs, pm: top.m, m: top.m, opacity: top.opacity})
	return nil
}

func (s *pageState) startPath(e *elem, top *frame) error {
	w := s.w
	pe := pathElem{opacity: top.opacity, rt: Identity}
	for _, a := range e.attr {
		if a.Name.Space != "" {
			continue
		}
		var err error
		switch a.Name.Local {
		case "Fill":
			pe.fill, err = s.brushAttr(a.Value)
		case "Opacity":
			var o float64
			o, err = parseNum(a.Value)
			pe.opacity *= clamp01(o)
		case "RenderTransform":
			pe.rt, err = s.matrixAttr(a.Value)
		case "Data":
			if key, ok := staticResource(a.Value); ok {
				var r *resource
				if r, err = s.lookup(key, rGeometry); err == nil {
					pe.geom = r.g
				}
			} else {
				pe.geom, err = pathBounds(a.Value)
			}
		}
		if err != nil {
			return w.errorf("Path %s: %v", a.Name.Local, err)
		}
	}
	s.path = pe
	s.frames = append(s.frames, frame{kind: fPath, pm: top.m, m: top.m, opacity: top.opacity})
	return nil
}

// drawPath adds the box of an image a Path fills.
func (s *pageState) drawPath(parent *frame) {
	pe := &s.path
	if pe.fill.kind != bImage || !pe.geom.ok {
		return
	}
	b := pe.geom.through(pe.rt.then(parent.m))
	if !finite(b.x0) || !finite(b.y0) || !finite(b.x1) || !finite(b.y1) {
		return
	}
	r := pagetext.Rect{X0: b.x0, Y0: b.y0, X1: b.x1, Y1: b.y1}
	if s.zone != nil && !r.Intersects(*s.zone) {
		return
	}
	s.p.Images = append(s.p.Images, r)
}

// staticResource returns the key of "{StaticResource key}".
func staticResource(v string) (string, bool) {
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, "{") {
		return "", false
	}
	rest, ok := strings.CutPrefix(v, "{StaticResource")
	if !ok || !strings.HasSuffix(rest, "}") {
		return "", false
	}
	return strings.TrimSpace(rest[:len(rest)-1]), true
}

// lookup finds a resource by key in the frames' dictionaries, innermost
// first.
func (s *pageState) lookup(key string, kind resKind) (*resource, error) {
	for i := len(s.frames) - 1; i >= 0; i-- {
		if r := s.frames[i].res[key]; r != nil {
			if r.kind != kind {
				return nil, fmt.Errorf("StaticResource %q is not a %s", key, [...]string{"transform", "brush", "geometry"}[kind])
			}
			return r, nil
		}
	}
	return nil, fmt.Errorf("StaticResource %q is not defined", key)
}

func (s *pageState) matrixAttr(v string) (Matrix, error) {
	if key, ok := staticResource(v); ok {
		r, err := s.lookup(key, rMatrix)
		if err != nil {
			return Matrix{}, err
		}
		return r.m, nil
	}
	return parseMatrix(v)
}

func (s *pageState) brushAttr(v string) (brush, error) {
	if key, ok := staticResource(v); ok {
		r, err := s.lookup(key, rBrush)
		if err != nil {
			return brush{}, err
		}
		return r.b, nil
	}
	c, err := parseColour(v)
	return brush{kind: bSolid, col: c, opacity: 1}, err
}

// transformProperty reads a X.RenderTransform property element: one
// MatrixTransform.
func (s *pageState) transformProperty() (Matrix, error) {
	m := Identity
	err := s.children(func(e *elem) error {
		if e.kind == nsFixed && e.local == "MatrixTransform" {
			r, err := s.resourceElem(e)
			if err == nil {
				m = r.m
			}
			return err
		}
		return s.w.skip()
	})
	return m, err
}

// brushProperty reads a X.Fill property element: one brush.
func (s *pageState) brushProperty() (brush, error) {
	b := brush{kind: bNone}
	err := s.children(func(e *elem) error {
		if e.kind != nsFixed {
			return s.w.skip()
		}
		r, err := s.resourceElem(e)
		if err == nil && r != nil && r.kind == rBrush {
			b = r.b
		}
		return err
	})
	return b, err
}

// geometryProperty reads a Path.Data property element: one
// PathGeometry, whose bounds it adds to g.
func (s *pageState) geometryProperty(g *box) error {
	return s.children(func(e *elem) error {
		if e.kind != nsFixed || e.local != "PathGeometry" {
			return s.w.skip()
		}
		r, err := s.resourceElem(e)
		if err == nil && r != nil {
			*g = r.g
		}
		return err
	})
}

// children calls fn for each child element of the element just opened,
// and returns when it closes; fn must consume the child's content.
func (s *pageState) children(fn func(*elem) error) error {
	w := s.w
	d := w.depth
	for {
		e, _, err := w.next()
		if err == io.EOF {
			return w.errorf("the part ends inside an element")
		}
		if err != nil {
			return err
		}
		if e == nil {
			if w.depth < d {
				return nil
			}
			continue
		}
		if err := fn(e); err != nil {
			return err
		}
	}
}

// resourcesProperty reads FixedPage.Resources or Canvas.Resources into
// the frame's dictionary.
func (s *pageState) resourcesProperty(f *frame) error {
	if f.res == nil {
		f.res = map[string]*resource{}
	}
	return s.children(func(e *elem) error {
		if e.kind != nsFixed || e.local != "ResourceDictionary" {
			return s.w.skip()
		}
		if src, ok := e.get("Source"); ok {
			dict, err := s.d.remoteDictionary(s.part, src)
			if err != nil {
				return s.w.errorf("ResourceDictionary Source: %v", err)
			}
			for k, r := range dict {
				f.res[k] = r
			}
			return s.w.skip()
		}
		return readDictionary(s, f.res)
	})
}

// readDictionary reads the entries of the ResourceDictionary element
// just opened into res.
func readDictionary(s *pageState, res map[string]*resource) error {
	return s.children(func(e *elem) error {
		key := e.key()
		if e.kind != nsFixed || key == "" {
			return s.w.skip()
		}
		r, err := s.resourceElem(e)
		if err != nil {
			return err
		}
		if r != nil {
			if len(res) >= maxResources {
				return limitErr("%s: a resource dictionary has more than %d entries", s.part, maxResources)
			}
			res[key] = r
		}
		return nil
	})
}

// maxResources bounds one resource dictionary.
const maxResources = 100_000

// resourceElem reads a transform, brush or geometry element just opened
// and its content (nil for anything else, skipped).
func (s *pageState) resourceElem(e *elem) (*resource, error) {
	w := s.w
	switch e.local {
	case "MatrixTransform":
		v, _ := e.get("Matrix")
		m, err := parseMatrix(v)
		if err != nil {
			return nil, w.errorf("MatrixTransform: %v", err)
		}
		return &resource{kind: rMatrix, m: m}, w.skip()
	case "SolidColorBrush", "ImageBrush", "LinearGradientBrush", "RadialGradientBrush", "VisualBrush":
		b := brush{kind: bOther, opacity: 1}
		switch e.local {
		case "SolidColorBrush":
			v, _ := e.get("Color")
			c, err := parseColour(v)
			if err != nil {
				return nil, w.errorf("SolidColorBrush: %v", err)
			}
			b = brush{kind: bSolid, col: c, opacity: 1}
		case "ImageBrush":
			b.kind = bImage
		}
		if v, ok := e.get("Opacity"); ok {
			o, err := parseNum(v)
			if err != nil {
				return nil, w.errorf("%s Opacity: %v", e.local, err)
			}
			b.opacity = clamp01(o)
		}
		return &resource{kind: rBrush, b: b}, w.skip()
	case "PathGeometry":
		return s.pathGeometry(e)
	}
	return nil, w.skip()
}

// pathGeometry reads a PathGeometry: its Figures (abbreviated syntax) and
// PathFigure children, through its Transform.
func (s *pageState) pathGeometry(e *elem) (*resource, error) {
	w := s.w
	var g box
	m := Identity
	if v, ok := e.get("Figures"); ok {
		b, err := pathBounds(v)
		if err != nil {
			return nil, w.errorf("PathGeometry Figures: %v", err)
		}
		g = b
	}
	if v, ok := e.get("Transform"); ok {
		var err error
		if m, err = s.matrixAttr(v); err != nil {
			return nil, w.errorf("PathGeometry Transform: %v", err)
		}
	}
	var walk func(e *elem) error
	walk = func(e *elem) error {
		if e.kind != nsFixed {
			return w.skip()
		}
		switch e.local {
		case "PathGeometry.Transform":
			var err error
			m, err = s.transformProperty()
			return err
		case "PathFigure", "PolyLineSegment", "PolyBezierSegment", "PolyQuadraticBezierSegment", "ArcSegment":
			for _, name := range []string{"StartPoint", "Points", "Point"} {
				if v, ok := e.get(name); ok {
					if err := pointsBounds(v, &g); err != nil {
						return w.errorf("%s %s: %v", e.local, name, err)
					}
				}
			}
			if e.local == "PathFigure" {
				return s.children(walk)
			}
			return w.skip()
		}
		return w.skip()
	}
	if err := s.children(walk); err != nil {
		return nil, err
	}
	return &resource{kind: rGeometry, g: g.through(m)}, nil
}

// remoteDictionary reads a ResourceDictionary part (once per Doc).
func (d *Doc) remoteDictionary(base, uri string) (map[string]*resource, error) {
	name, _, err := resolve(base, uri)
	if err != nil {
		return nil, err
	}
	k := partKey(name)
	if e, ok := d.dicts[k]; ok {
		return e.res, e.err
	}
	if len(d.dicts) >= maxDictionaries {
		return nil, limitErr("the document has more than %d resource dictionary parts", maxDictionaries)
	}
	e := &dictEntry{res: map[string]*resource{}}
	d.dicts[k] = e
	data, err := d.pkg.read(name, d.lim.MaxPartBytes, nil)
	if err != nil {
		e.err = err
		return nil, err
	}
	// A dictionary part is read with a walker of its own; the page's
	// walker resumes after it.
	s := &pageState{d: d, part: name}
	s.w = newWalker(data, name, &d.lim, d.dl)
	if _, err := s.w.root("ResourceDictionary"); err != nil {
		e.err = err
		return nil, err
	}
	s.frames = []frame{{kind: fContainer, m: Identity, opacity: 1}}
	if err := readDictionary(s, e.res); err != nil {
		e.err = err
		return nil, err
	}
	return e.res, nil
}

// maxDictionaries bounds the remote resource dictionaries of a document.
const maxDictionaries = 1_000
