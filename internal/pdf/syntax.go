package pdf

import (
	"io"
	"strconv"

	"github.com/lodge-mail/lodge/internal/deadline"
)

// This file is the PDF syntax layer: a random-access cursor, a lexer and
// an object parser. None of it recurses without a depth limit, every token
// counts against a budget, and nothing allocates by a size the file
// declares.

// PDF objects.
type (
	object    = any
	pdfName   string
	pdfString string // at most Limits.MaxStringBytes bytes are kept
	ref       struct{ num, gen int64 }
	dict      map[pdfName]object
	array     []object
	stream    struct {
		dict dict
		off  int64 // where the data starts
		num  int64 // object number and generation: messages, decryption
		gen  int64
	}
)

const (
	cursorWindow   = 32 << 10
	maxTokenBytes  = 64 << 10 // names, numbers, keywords
	maxNesting     = 100      // arrays and dictionaries inside each other
	maxObjectToken = 1 << 20  // tokens in one object (a Kids array of 100,000 pages is 300,000)
)

// cursor reads a file through a window, so that seeking is free and
// reading byte by byte is cheap. When r is nil the window is the whole
// data.
type cursor struct {
	r    io.ReaderAt
	size int64
	buf  []byte
	off  int64 // file offset of buf[0]
	pos  int64
	err  error // a read error or the deadline; the cursor then acts as at EOF
	dl   *deadline.Deadline
}

func newCursor(r io.ReaderAt, size int64, dl *deadline.Deadline) *cursor {
	return &cursor{r: r, size: size, dl: dl}
}

func bytesCursor(b []byte, dl *deadline.Deadline) *cursor {
	return &cursor{buf: b, size: int64(len(b)), dl: dl}
}

func (c *cursor) peek() (byte, bool) {
	if i := c.pos - c.off; i >= 0 && i < int64(len(c.buf)) {
		return c.buf[i], true
	}
	if c.r == nil || c.err != nil || c.pos < 0 || c.pos >= c.size {
		return 0, false
	}
	if err := c.dl.Now(); err != nil {
		c.err = err
		return 0, false
	}
	if c.buf == nil {
		c.buf = make([]byte, cursorWindow)
	}
	// Reading on: a large window. After a seek (objects are usually
	// small and scattered): a small one.
	w := int64(cursorWindow)
	if c.pos != c.off+int64(len(c.buf)) {
		w = 4 << 10
	}
	n := min(w, c.size-c.pos)
	c.buf = c.buf[:n]
	m, err := c.r.ReadAt(c.buf, c.pos)
	c.buf, c.off = c.buf[:m], c.pos
	if m == 0 {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		c.err = malformed("reading the PDF at offset %d: %v", c.pos, err)
		return 0, false
	}
	return c.buf[0], true
}

func (c *cursor) next() (byte, bool) {
	b, ok := c.peek()
	if ok {
		c.pos++
	}
	return b, ok
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tInt
	tReal
	tName
	tString
	tKeyword
	tArrayOpen
	tArrayClose
	tDictOpen
	tDictClose
)

type token struct {
	kind tokKind
	i    int64
	f    float64
	s    string
	pos  int64 // offset of the token's first byte
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

func isRegular(c byte) bool { return !isSpace(c) && !isDelim(c) }

// parser turns bytes into tokens and objects.
type parser struct {
	c       *cursor
	dl      *deadline.Deadline
	back    []token // pushed-back tokens, last is next
	budget  int     // tokens left for the current object
	tmp     []byte
	keepStr int // bytes of each string kept; 0: all
}

func newParser(c *cursor, dl *deadline.Deadline, keepStr int) *parser {
	return &parser{c: c, dl: dl, budget: maxObjectToken, keepStr: keepStr}
}

// keep appends a byte of a string unless the string is already as long
// as the parser keeps them.
func (p *parser) keep(c byte) {
	if p.keepStr == 0 || len(p.tmp) < p.keepStr {
		p.tmp = append(p.tmp, c)
	}
}

func (p *parser) seek(pos int64) {
	p.c.pos = pos
	p.back = p.back[:0]
	p.budget = maxObjectToken
}

func (p *parser) unread(t token) { p.back = append(p.back, t) }

func (p *parser) errAt(pos int64, format string, args ...any) error {
	if p.c.err != nil {
		return p.c.err
	}
	return malformed("PDF syntax error at offset %d: "+format, append([]any{pos}, args...)...)
}

// skipSpace skips white space and comments.
func (p *parser) skipSpace() {
	for {
		b, ok := p.c.peek()
		if !ok {
			return
		}
		switch {
		case isSpace(b):
			p.c.pos++
		case b == '%':
			for {
				b, ok := p.c.next()
				if !ok || b == '\n' || b == '\r' {
					break
				}
			}
		default:
			return
		}
	}
}

func (p *parser) next() (token, error) {
	if n := len(p.back); n > 0 {
		t := p.back[n-1]
		p.back = p.back[:n-1]
		return t, nil
	}
	p.budget--
	if p.budget < 0 {
		return token{}, limitErr("a PDF object at offset %d has more than %d tokens", p.c.pos, maxObjectToken)
	}
	if err := p.dl.Check(); err != nil {
		return token{}, err
	}
	p.skipSpace()
	start := p.c.pos
	b, ok := p.c.next()
	if !ok {
		if p.c.err != nil {
			return token{}, p.c.err
		}
		return token{kind: tEOF, pos: start}, nil
	}
	switch b {
	case '[':
		return token{kind: tArrayOpen, pos: start}, nil
	case ']':
		return token{kind: tArrayClose, pos: start}, nil
	case '{', '}', ')':
		return token{kind: tKeyword, s: string(b), pos: start}, nil
	case '<':
		if c, _ := p.c.peek(); c == '<' {
			p.c.pos++
			return token{kind: tDictOpen, pos: start}, nil
		}
		return p.hexString(start)
	case '>':
		if c, _ := p.c.peek(); c == '>' {
			p.c.pos++
			return token{kind: tDictClose, pos: start}, nil
		}
		return token{kind: tKeyword, s: ">", pos: start}, nil
	case '(':
		return p.literalString(start)
	case '/':
		return p.name(start)
	}
	p.tmp = append(p.tmp[:0], b)
	for {
		c, ok := p.c.peek()
		if !ok || !isRegular(c) {
			break
		}
		p.c.pos++
		if len(p.tmp) >= maxTokenBytes {
			return token{}, p.errAt(start, "token longer than %d bytes", maxTokenBytes)
		}
		p.tmp = append(p.tmp, c)
	}
	return classify(p.tmp, start), nil
}

// classify makes a regular token a number or a keyword.
func classify(b []byte, pos int64) token {
	i, digits, dot, sign := 0, 0, false, false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		i, sign = 1, true
	}
	_ = sign
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return token{kind: tKeyword, s: string(b), pos: pos}
		}
	}
	if digits == 0 {
		return token{kind: tKeyword, s: string(b), pos: pos}
	}
	if !dot && digits <= 18 {
		v, err := strconv.ParseInt(string(b), 10, 64)
		if err == nil {
			return token{kind: tInt, i: v, pos: pos}
		}
	}
	f, _ := strconv.ParseFloat(string(b), 64)
	return token{kind: tReal, f: f, pos: pos}
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func (p *parser) name(start int64) (token, error) {
	p.tmp = p.tmp[:0]
	for {
		c, ok := p.c.peek()
		if !ok || !isRegular(c) {
			break
		}
		p.c.pos++
		if c == '#' {
			// #xx escapes; a lone # stays as it is.
			save := p.c.pos
			h, ok1 := p.c.next()
			l, ok2 := p.c.next()
			hv, okh := unhex(h)
			lv, okl := unhex(l)
			if ok1 && ok2 && okh && okl {
				c = hv<<4 | lv
			} else {
				p.c.pos = save
			}
		}
		if len(p.tmp) >= maxTokenBytes {
			return token{}, p.errAt(start, "name longer than %d bytes", maxTokenBytes)
		}
		p.tmp = append(p.tmp, c)
	}
	return token{kind: tName, s: string(p.tmp), pos: start}, nil
}

func (p *parser) literalString(start int64) (token, error) {
	p.tmp = p.tmp[:0]
	keep := p.keep
	depth := 1
	for {
		c, ok := p.c.next()
		if !ok {
			return token{}, p.errAt(start, "unterminated string")
		}
		switch c {
		case '\\':
			e, ok := p.c.next()
			if !ok {
				return token{}, p.errAt(start, "unterminated string")
			}
			switch e {
			case 'n':
				keep('\n')
			case 'r':
				keep('\r')
			case 't':
				keep('\t')
			case 'b':
				keep('\b')
			case 'f':
				keep('\f')
			case '\r':
				if n, _ := p.c.peek(); n == '\n' {
					p.c.pos++
				}
			case '\n':
			default:
				if e >= '0' && e <= '7' {
					v := e - '0'
					for range 2 {
						d, ok := p.c.peek()
						if !ok || d < '0' || d > '7' {
							break
						}
						p.c.pos++
						v = v<<3 | (d - '0')
					}
					keep(v)
				} else {
					keep(e)
				}
			}
		case '(':
			depth++
			keep(c)
		case ')':
			depth--
			if depth == 0 {
				return token{kind: tString, s: string(p.tmp), pos: start}, nil
			}
			keep(c)
		default:
			keep(c)
		}
	}
}

func (p *parser) hexString(start int64) (token, error) {
	p.tmp = p.tmp[:0]
	var hi byte
	half := false
	for {
		c, ok := p.c.next()
		if !ok {
			return token{}, p.errAt(start, "unterminated hex string")
		}
		if c == '>' {
			break
		}
		v, ok := unhex(c)
		if !ok {
			if isSpace(c) {
				continue
			}
			return token{}, p.errAt(start, "bad character %q in hex string", c)
		}
		if half {
			p.keep(hi<<4 | v)
		} else {
			hi = v
		}
		half = !half
	}
	if half {
		p.keep(hi << 4)
	}
	return token{kind: tString, s: string(p.tmp), pos: start}, nil
}

// object parses one object. Indirect references (N G R) are recognised by
// looking two tokens ahead.
func (p *parser) object(depth int) (object, error) {
	t, err := p.next()
	if err != nil {
		return nil, err
	}
	return p.objectFrom(t, depth)
}

func (p *parser) objectFrom(t token, depth int) (object, error) {
	switch t.kind {
	case tInt:
		t2, err := p.next()
		if err != nil {
			return nil, err
		}
		if t2.kind == tInt {
			t3, err := p.next()
			if err != nil {
				return nil, err
			}
			if t3.kind == tKeyword && t3.s == "R" && t.i >= 0 && t2.i >= 0 {
				return ref{t.i, t2.i}, nil
			}
			p.unread(t3)
		}
		p.unread(t2)
		return t.i, nil
	case tReal:
		return t.f, nil
	case tName:
		return pdfName(t.s), nil
	case tString:
		return pdfString(t.s), nil
	case tKeyword:
		switch t.s {
		case "true":
			return true, nil
		case "false":
			return false, nil
		case "null":
			return nil, nil
		}
		return nil, p.errAt(t.pos, "unexpected %q", t.s)
	case tArrayOpen:
		if depth >= maxNesting {
			return nil, p.errAt(t.pos, "arrays and dictionaries nested deeper than %d", maxNesting)
		}
		var a array
		for {
			t, err := p.next()
			if err != nil {
				return nil, err
			}
			switch t.kind {
			case tArrayClose:
				return a, nil
			case tEOF:
				return nil, p.errAt(t.pos, "unterminated array")
			}
			o, err := p.objectFrom(t, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, o)
		}
	case tDictOpen:
		if depth >= maxNesting {
			return nil, p.errAt(t.pos, "arrays and dictionaries nested deeper than %d", maxNesting)
		}
		return p.dictBody(depth)
	case tEOF:
		return nil, p.errAt(t.pos, "unexpected end of file")
	}
	return nil, p.errAt(t.pos, "unexpected token")
}

func (p *parser) dictBody(depth int) (dict, error) {
	d := dict{}
	for {
		k, err := p.next()
		if err != nil {
			return nil, err
		}
		switch k.kind {
		case tDictClose:
			return d, nil
		case tName:
		case tEOF:
			return nil, p.errAt(k.pos, "unterminated dictionary")
		default:
			return nil, p.errAt(k.pos, "dictionary key is not a name")
		}
		v, err := p.next()
		if err != nil {
			return nil, err
		}
		if v.kind == tDictClose { // a key without a value
			d[pdfName(k.s)] = nil
			return d, nil
		}
		o, err := p.objectFrom(v, depth+1)
		if err != nil {
			return nil, err
		}
		d[pdfName(k.s)] = o
	}
}

// indirect parses "N G obj <object> [stream ...]" at pos.
func (p *parser) indirect(pos int64) (num, gen int64, o object, err error) {
	p.seek(pos)
	t1, err := p.next()
	if err != nil {
		return 0, 0, nil, err
	}
	t2, err := p.next()
	if err != nil {
		return 0, 0, nil, err
	}
	t3, err := p.next()
	if err != nil {
		return 0, 0, nil, err
	}
	if t1.kind != tInt || t2.kind != tInt || t3.kind != tKeyword || t3.s != "obj" || t1.i < 0 {
		return 0, 0, nil, p.errAt(pos, "no object header")
	}
	o, err = p.object(0)
	if err != nil {
		return 0, 0, nil, err
	}
	t, err := p.next()
	if err != nil {
		return 0, 0, nil, err
	}
	if t.kind == tKeyword && t.s == "stream" {
		d, ok := o.(dict)
		if !ok {
			return 0, 0, nil, p.errAt(t.pos, "stream without a dictionary")
		}
		// The data starts after the end of line that follows "stream"
		// (tolerating spaces before it, and a lone CR).
		p.c.pos = t.pos + int64(len("stream"))
		for {
			b, ok := p.c.peek()
			if !ok || b != ' ' && b != '\t' {
				break
			}
			p.c.pos++
		}
		if b, _ := p.c.peek(); b == '\r' {
			p.c.pos++
		}
		if b, _ := p.c.peek(); b == '\n' {
			p.c.pos++
		}
		return t1.i, t2.i, &stream{dict: d, off: p.c.pos, num: t1.i, gen: t2.i}, nil
	}
	return t1.i, t2.i, o, nil
}
