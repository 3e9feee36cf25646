package pdf

import (
	"math"
	"strconv"
)

// The lexer of content streams (and of CMaps and Type 1 font headers,
// which share their syntax). It works on bytes in memory, allocates
// nothing once its buffers have grown, and never looks beyond its data:
// every token advances, so a loop over tokens ends with the data.

type ctok uint8

const (
	ctEOF ctok = iota
	ctNum
	ctName
	ctStr
	ctOp // an operator, or another keyword (true, false, null)
	ctArrOpen
	ctArrClose
	ctDictOpen
	ctDictClose
	ctArr   // an operand: an array (its elements in contentParser.arr)
	ctOther // an operand the interpreter does not read: a dictionary, a nested array, a boolean, null
)

// maxNumber bounds the magnitude of numbers: PDF's reals are at most
// about 3.4e38, and anything larger (or a run of digits that overflows)
// is taken as the bound, so no number the lexer gives is infinite.
const maxNumber = 1e38

type clexer struct {
	data []byte
	pos  int
	// sbuf holds decoded strings and names; the current token's are
	// sbuf[s0:s1]. The caller truncates it between operators.
	sbuf   []byte
	s0, s1 int
	num    float64
	kw     []byte // an operator: a slice of data
	open   bool   // the last string ran to the end of the data unterminated
}

func (lx *clexer) reset(data []byte) {
	lx.data, lx.pos, lx.sbuf = data, 0, lx.sbuf[:0]
}

// str returns the current token's decoded bytes.
func (lx *clexer) str() []byte { return lx.sbuf[lx.s0:lx.s1] }

// regular tells the bytes that are neither white space nor delimiters.
var regular = func() (t [256]bool) {
	for i := range t {
		t[i] = isRegular(byte(i))
	}
	return t
}()

func (lx *clexer) token() ctok {
	data := lx.data
	i := lx.pos
	for i < len(data) {
		c := data[i]
		if c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0 {
			i++
			continue
		}
		if c == '%' {
			for i < len(data) && data[i] != '\n' && data[i] != '\r' {
				i++
			}
			continue
		}
		break
	}
	if i >= len(data) {
		lx.pos = i
		return ctEOF
	}
	c := data[i]
	switch {
	case c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.':
		return lx.number(i)
	case c == '/':
		return lx.name(i + 1)
	case c == '(':
		return lx.literal(i + 1)
	case c == '<':
		if i+1 < len(data) && data[i+1] == '<' {
			lx.pos = i + 2
			return ctDictOpen
		}
		return lx.hex(i + 1)
	case c == '>':
		if i+1 < len(data) && data[i+1] == '>' {
			lx.pos = i + 2
			return ctDictClose
		}
		lx.pos = i + 1
		return lx.token() // stray
	case c == '[':
		lx.pos = i + 1
		return ctArrOpen
	case c == ']':
		lx.pos = i + 1
		return ctArrClose
	case c == ')' || c == '{' || c == '}':
		lx.pos = i + 1
		return lx.token() // stray, or PostScript procedure braces
	}
	j := i + 1
	for j < len(data) && regular[data[j]] {
		j++
	}
	lx.kw = data[i:j]
	lx.pos = j
	return ctOp
}

// number reads a number leniently, as readers do: signs, digits and one
// point; what follows in the same token ("1.2.3", "5abc") is skipped. A
// token that has no digit is 0.
func (lx *clexer) number(i int) ctok {
	data := lx.data
	neg := false
	for i < len(data) && (data[i] == '-' || data[i] == '+') {
		neg = neg != (data[i] == '-')
		i++
	}
	var mant uint64
	digits, frac, exp := 0, false, 0
	dstart := i
	for ; i < len(data); i++ {
		c := data[i]
		if c >= '0' && c <= '9' {
			if digits < 18 {
				mant = mant*10 + uint64(c-'0')
				if frac {
					exp--
				}
			} else if !frac {
				exp++
			}
			digits++
			continue
		}
		if c == '.' && !frac {
			frac = true
			continue
		}
		break
	}
	end := i
	for i < len(data) && regular[data[i]] {
		i++
	}
	lx.pos = i
	var v float64
	switch {
	case exp == 0:
		v = float64(mant)
	case exp < 0 && exp >= -18:
		v = float64(mant) / pow10[-exp]
	default:
		// very long numbers: the standard library's exact reading
		s := string(data[dstart:end])
		v, _ = strconv.ParseFloat(s, 64)
	}
	if v > maxNumber || math.IsNaN(v) {
		v = maxNumber
	}
	if neg {
		v = -v
	}
	lx.num = v
	return ctNum
}

var pow10 = func() (t [19]float64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

func (lx *clexer) name(i int) ctok {
	data := lx.data
	lx.s0 = len(lx.sbuf)
	for i < len(data) && regular[data[i]] {
		c := data[i]
		i++
		if c == '#' && i+1 < len(data) {
			h, ok1 := unhex(data[i])
			l, ok2 := unhex(data[i+1])
			if ok1 && ok2 {
				c = h<<4 | l
				i += 2
			}
		}
		lx.sbuf = append(lx.sbuf, c)
	}
	lx.s1 = len(lx.sbuf)
	lx.pos = i
	return ctName
}

// literal reads a (string) to its balancing parenthesis or the end of the
// data.
func (lx *clexer) literal(i int) ctok {
	data := lx.data
	lx.s0, lx.open = len(lx.sbuf), false
	depth := 1
	for i < len(data) {
		// the run of ordinary bytes at once
		j := i
		for j < len(data) && data[j] != '(' && data[j] != ')' && data[j] != '\\' && data[j] != '\r' {
			j++
		}
		lx.sbuf = append(lx.sbuf, data[i:j]...)
		i = j
		if i >= len(data) {
			break
		}
		c := data[i]
		i++
		switch c {
		case '(':
			depth++
			lx.sbuf = append(lx.sbuf, c)
			continue
		case ')':
			depth--
			if depth == 0 {
				lx.s1, lx.pos = len(lx.sbuf), i
				return ctStr
			}
			lx.sbuf = append(lx.sbuf, c)
			continue
		case '\r': // an end of line in a string is a line feed
			if i < len(data) && data[i] == '\n' {
				i++
			}
			lx.sbuf = append(lx.sbuf, '\n')
			continue
		}
		// a backslash
		if i >= len(data) {
			break
		}
		e := data[i]
		i++
		switch e {
		case 'n':
			e = '\n'
		case 'r':
			e = '\r'
		case 't':
			e = '\t'
		case 'b':
			e = '\b'
		case 'f':
			e = '\f'
		case '\r':
			if i < len(data) && data[i] == '\n' {
				i++
			}
			continue
		case '\n':
			continue
		default:
			if e >= '0' && e <= '7' {
				v := e - '0'
				for k := 0; k < 2 && i < len(data) && data[i] >= '0' && data[i] <= '7'; k++ {
					v = v<<3 | (data[i] - '0')
					i++
				}
				e = v
			}
		}
		lx.sbuf = append(lx.sbuf, e)
	}
	lx.s1, lx.pos, lx.open = len(lx.sbuf), len(data), true // unterminated: the rest
	return ctStr
}

// hex reads a <hex string>; bytes that are not hex digits are skipped.
func (lx *clexer) hex(i int) ctok {
	data := lx.data
	lx.s0, lx.open = len(lx.sbuf), true
	var hi byte
	half := false
	for i < len(data) {
		c := data[i]
		i++
		if c == '>' {
			lx.open = false
			break
		}
		v, ok := unhex(c)
		if !ok {
			continue
		}
		if half {
			lx.sbuf = append(lx.sbuf, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
	}
	if half {
		lx.sbuf = append(lx.sbuf, hi<<4)
	}
	lx.s1, lx.pos = len(lx.sbuf), i
	return ctStr
}

// operand is an operand of a content stream operator.
type operand struct {
	kind   ctok    // ctNum, ctName, ctStr, ctArr or ctOther
	num    float64 // ctNum
	s0, s1 int32   // ctName, ctStr: in the lexer's sbuf; ctArr: in arr
}

const (
	maxOperands   = 64      // operands kept before an operator (sc takes at most 33)
	maxArrayElems = 1 << 18 // elements of one array operand (a TJ)
	maxSkipDepth  = 64      // dictionaries and arrays nested in operands
)

// contentParser reads a content stream operator by operator.
type contentParser struct {
	lx       clexer
	ops      []operand
	arr      []operand
	tooLarge bool // an array operand had more than maxArrayElems elements
}

func (p *contentParser) reset(data []byte) {
	p.lx.reset(data)
	p.ops, p.arr, p.tooLarge = p.ops[:0], p.arr[:0], false
}

// next reads operands up to the next operator and returns it (a slice of
// the data), or ok false at the end of the data. More than maxOperands
// operands before one operator are dropped, the oldest first by
// whole batches.
func (p *contentParser) next() (op []byte, ok bool) {
	p.ops, p.arr, p.lx.sbuf = p.ops[:0], p.arr[:0], p.lx.sbuf[:0]
	for {
		t := p.lx.token()
		var o operand
		switch t {
		case ctEOF:
			return nil, false
		case ctOp:
			kw := p.lx.kw
			if len(kw) <= 5 && (string(kw) == "true" || string(kw) == "false" || string(kw) == "null") {
				o.kind = ctOther
				break
			}
			return kw, true
		case ctNum:
			o = operand{kind: ctNum, num: p.lx.num}
		case ctName, ctStr:
			o = operand{kind: t, s0: int32(p.lx.s0), s1: int32(p.lx.s1)}
		case ctArrOpen:
			o = p.array()
		case ctDictOpen:
			p.skip()
			o.kind = ctOther
		default:
			continue // a stray closing bracket
		}
		if len(p.ops) == maxOperands {
			p.ops = p.ops[:0]
		}
		p.ops = append(p.ops, o)
	}
}

// array reads the elements of an array operand into arr: numbers,
// strings and names; nested arrays and dictionaries are ctOther.
func (p *contentParser) array() operand {
	start := len(p.arr)
	for {
		var e operand
		switch t := p.lx.token(); t {
		case ctEOF, ctArrClose:
			return operand{kind: ctArr, s0: int32(start), s1: int32(len(p.arr))}
		case ctNum:
			e = operand{kind: ctNum, num: p.lx.num}
		case ctName, ctStr:
			e = operand{kind: t, s0: int32(p.lx.s0), s1: int32(p.lx.s1)}
		case ctArrOpen, ctDictOpen:
			p.skip()
			e.kind = ctOther
		case ctOp:
			// an operator inside an array: the array is broken; it ends
			// here and the operator is read again
			p.lx.pos -= len(p.lx.kw)
			return operand{kind: ctArr, s0: int32(start), s1: int32(len(p.arr))}
		default:
			continue
		}
		if len(p.arr)-start >= maxArrayElems {
			p.tooLarge = true
			continue
		}
		p.arr = append(p.arr, e)
	}
}

// skip passes over the rest of a dictionary or array whose opening token
// was read, nested ones included (at most maxSkipDepth deep: deeper
// openings are taken as closed at once).
func (p *contentParser) skip() {
	depth := 1
	for depth > 0 {
		switch p.lx.token() {
		case ctEOF:
			return
		case ctArrOpen, ctDictOpen:
			if depth < maxSkipDepth {
				depth++
			}
		case ctArrClose, ctDictClose:
			depth--
		}
	}
}

// num returns operand i from the end (1 is the last) as a number.
func (p *contentParser) num(i int) (float64, bool) {
	if i > len(p.ops) {
		return 0, false
	}
	o := p.ops[len(p.ops)-i]
	return o.num, o.kind == ctNum
}

// nums fills vs with the last len(vs) operands, which must be numbers.
func (p *contentParser) nums(vs []float64) bool {
	n := len(vs)
	if n > len(p.ops) {
		return false
	}
	for i, o := range p.ops[len(p.ops)-n:] {
		if o.kind != ctNum {
			return false
		}
		vs[i] = o.num
	}
	return true
}

// bytesOf returns an operand's bytes (a name or a string).
func (p *contentParser) bytesOf(o operand) []byte { return p.lx.sbuf[o.s0:o.s1] }

// last returns the last operand, if it is of kind k.
func (p *contentParser) last(k ctok) (operand, bool) {
	if len(p.ops) == 0 || p.ops[len(p.ops)-1].kind != k {
		return operand{}, false
	}
	return p.ops[len(p.ops)-1], true
}
