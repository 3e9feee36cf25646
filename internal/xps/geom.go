package xps

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// maxNumber bounds every number the reader takes from a part: no page
// is a million kilometres wide, and a bound keeps products finite enough
// to check.
const maxNumber = 1e9

// parseNum parses an XPS number (decimal, optional sign, fraction and
// exponent; no NaN, Inf, hex or underscores), at most maxNumber in size.
func parseNum(s string) (float64, error) {
	if v, ok := fastNum(s); ok {
		return v, nil
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty number")
	}
	digits := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' || c == '+' || c == '-' || c == 'e' || c == 'E':
		default:
			return 0, fmt.Errorf("%q is not a number", s)
		}
	}
	if digits == 0 {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if math.Abs(v) > maxNumber {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return v, nil
}

// fastNum parses the numbers producers write most ("63.18", "-12",
// "0.5"): at most 15 digits, at most 15 of them after the point. The
// result is exactly strconv.ParseFloat's: an integer below 2^53 divided
// by an exact power of ten is correctly rounded.
func fastNum(s string) (float64, bool) {
	if len(s) == 0 || len(s) > 17 {
		return 0, false
	}
	neg := false
	i := 0
	if s[0] == '-' {
		neg, i = true, 1
	}
	var mant uint64
	digits, frac := 0, -1
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			mant = mant*10 + uint64(c-'0')
			digits++
			if frac >= 0 {
				frac++
			}
		case c == '.' && frac < 0:
			frac = 0
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 15 {
		return 0, false
	}
	v := float64(mant)
	if frac > 0 {
		v /= pow10[frac]
	}
	if neg {
		v = -v
	}
	return v, math.Abs(v) <= maxNumber
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// numbers splits s at commas and white space and parses each number
// into out; it fails unless there are exactly len(out).
func numbers(s string, out []float64) error {
	n := 0
	for len(s) > 0 {
		i := strings.IndexFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' })
		var f string
		if i < 0 {
			f, s = s, ""
		} else {
			f, s = s[:i], s[i+1:]
		}
		if f == "" {
			continue
		}
		if n == len(out) {
			return fmt.Errorf("more than %d numbers", len(out))
		}
		v, err := parseNum(f)
		if err != nil {
			return err
		}
		out[n] = v
		n++
	}
	if n != len(out) {
		return fmt.Errorf("%d numbers, not %d", n, len(out))
	}
	return nil
}

// parseMatrix parses "m11,m12,m21,m22,dx,dy".
func parseMatrix(s string) (Matrix, error) {
	var v [6]float64
	if err := numbers(s, v[:]); err != nil {
		return Matrix{}, fmt.Errorf("matrix %q: %v", s, err)
	}
	return Matrix{v[0], v[1], v[2], v[3], v[4], v[5]}, nil
}

// then returns the transform that applies m, then n.
func (m Matrix) then(n Matrix) Matrix {
	return Matrix{
		A: n.A*m.A + n.C*m.B,
		B: n.B*m.A + n.D*m.B,
		C: n.A*m.C + n.C*m.D,
		D: n.B*m.C + n.D*m.D,
		E: n.A*m.E + n.C*m.F + n.E,
		F: n.B*m.E + n.D*m.F + n.F,
	}
}

func (m Matrix) apply(x, y float64) (float64, float64) {
	return m.A*x + m.C*y + m.E, m.B*x + m.D*y + m.F
}

// axisAligned reports whether m keeps horizontal lines horizontal (no
// rotation or shear).
func (m Matrix) axisAligned() bool { return m.B == 0 && m.C == 0 }

// dir is the quarter turn nearest the direction m gives the x axis.
func (m Matrix) dir() int {
	if math.Abs(m.A) >= math.Abs(m.B) {
		if m.A >= 0 {
			return 0
		}
		return 2
	}
	if m.B > 0 {
		return 1
	}
	return 3
}

// box is an axis-aligned rectangle being grown point by point.
type box struct {
	x0, y0, x1, y1 float64
	ok             bool
}

func (b *box) add(x, y float64) {
	if !b.ok {
		b.x0, b.y0, b.x1, b.y1, b.ok = x, y, x, y, true
		return
	}
	b.x0, b.x1 = min(b.x0, x), max(b.x1, x)
	b.y0, b.y1 = min(b.y0, y), max(b.y1, y)
}

// through returns b's corners through m, bounded.
func (b box) through(m Matrix) box {
	if !b.ok {
		return b
	}
	if m.axisAligned() {
		x0, y0 := m.apply(b.x0, b.y0)
		x1, y1 := m.apply(b.x1, b.y1)
		return box{min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1), true}
	}
	var o box
	o.add(m.apply(b.x0, b.y0))
	o.add(m.apply(b.x1, b.y0))
	o.add(m.apply(b.x0, b.y1))
	o.add(m.apply(b.x1, b.y1))
	return o
}

// finite reports whether a coordinate is usable on a page.
func finite(v float64) bool { return !math.IsNaN(v) && math.Abs(v) <= 1e12 }

// colour is a brush or colour as far as visibility goes.
type colour struct {
	alpha float64 // 0 to 1
	white bool
}

// parseColour parses an XPS colour: #RRGGBB, #AARRGGBB, sc#R,G,B or
// sc#A,R,G,B (scRGB), or ContextColor uri A,C1,... (alpha first).
func parseColour(s string) (colour, error) {
	s = strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(s, "#"):
		h := s[1:]
		if len(h) != 6 && len(h) != 8 {
			return colour{}, fmt.Errorf("colour %q is not #RRGGBB or #AARRGGBB", s)
		}
		v, err := strconv.ParseUint(h, 16, 32)
		if err != nil {
			return colour{}, fmt.Errorf("colour %q is not hexadecimal", s)
		}
		a := uint64(0xFF)
		if len(h) == 8 {
			a = v >> 24
		}
		return colour{alpha: float64(a) / 255, white: v&0xFFFFFF == 0xFFFFFF}, nil
	case strings.HasPrefix(s, "sc#"):
		var v [4]float64
		if err := numbers(s[3:], v[:]); err == nil {
			return colour{alpha: clamp01(v[0]), white: v[1] >= 1 && v[2] >= 1 && v[3] >= 1}, nil
		}
		if err := numbers(s[3:], v[:3]); err != nil {
			return colour{}, fmt.Errorf("colour %q: %v", s, err)
		}
		return colour{alpha: 1, white: v[0] >= 1 && v[1] >= 1 && v[2] >= 1}, nil
	case strings.HasPrefix(s, "ContextColor "):
		f := strings.Fields(s)
		if len(f) < 3 {
			return colour{}, fmt.Errorf("colour %q has no values", s)
		}
		a, err := parseNum(strings.SplitN(strings.Join(f[2:], ""), ",", 2)[0])
		if err != nil {
			return colour{}, fmt.Errorf("colour %q: %v", s, err)
		}
		return colour{alpha: clamp01(a)}, nil
	}
	return colour{}, fmt.Errorf("colour %q is not an XPS colour", s)
}

func clamp01(v float64) float64 { return max(0, min(1, v)) }

// pathBounds returns the bounds of the points of an abbreviated geometry
// ("M 0,0 L 10,0 10,10 Z", ECMA-388 §11.2.3): every end and control
// point; arcs count their end points and radii around them, which is
// enough for the box of an image.
func pathBounds(s string) (box, error) {
	var b box
	p := pathLexer{s: s}
	var cx, cy float64 // the current point
	var cmd byte
	for {
		c, ok, err := p.command()
		if err != nil {
			return b, err
		}
		if !ok {
			return b, nil
		}
		if c != 0 {
			cmd = c
		} else if cmd == 0 {
			return b, errors.New("path data does not start with a command")
		}
		rel := cmd >= 'a' && cmd <= 'z'
		pt := func() (float64, float64, error) {
			x, err := p.number()
			if err != nil {
				return 0, 0, err
			}
			y, err := p.number()
			if err != nil {
				return 0, 0, err
			}
			if rel {
				x, y = x+cx, y+cy
			}
			return x, y, nil
		}
		var n int // points of this command
		switch cmd | 0x20 {
		case 'f':
			if _, err := p.number(); err != nil {
				return b, err
			}
			cmd = 0
			continue
		case 'z':
			cmd = 0
			continue
		case 'm', 'l':
			n = 1
		case 'c':
			n = 3
		case 'q', 's':
			n = 2
		case 'h', 'v':
			v, err := p.number()
			if err != nil {
				return b, err
			}
			if cmd|0x20 == 'h' {
				if rel {
					v += cx
				}
				cx = v
			} else {
				if rel {
					v += cy
				}
				cy = v
			}
			b.add(cx, cy)
			continue
		case 'a':
			var v [5]float64
			for i := range v {
				if v[i], err = p.number(); err != nil {
					return b, err
				}
			}
			x, y, err := pt()
			if err != nil {
				return b, err
			}
			rx, ry := math.Abs(v[0]), math.Abs(v[1])
			b.add(cx, cy)
			b.add(x-rx, y-ry)
			b.add(x+rx, y+ry)
			cx, cy = x, y
			continue
		default:
			return b, fmt.Errorf("path data command %q is unknown", cmd)
		}
		for i := 0; i < n; i++ {
			x, y, err := pt()
			if err != nil {
				return b, err
			}
			b.add(x, y)
			if i == n-1 {
				cx, cy = x, y
			}
		}
		if cmd|0x20 == 'm' { // further pairs after M are lines
			if rel {
				cmd = 'l'
			} else {
				cmd = 'L'
			}
		}
	}
}

// pointsBounds adds the points of a "x,y x,y ..." list to b.
func pointsBounds(s string, b *box) error {
	p := pathLexer{s: s}
	for {
		p.space()
		if p.i >= len(p.s) {
			return nil
		}
		x, err := p.number()
		if err != nil {
			return err
		}
		y, err := p.number()
		if err != nil {
			return err
		}
		b.add(x, y)
	}
}

type pathLexer struct {
	s string
	i int
}

func (p *pathLexer) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', ',', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// command returns the next command letter, 0 when numbers follow (the
// previous command repeats), ok false at the end.
func (p *pathLexer) command() (byte, bool, error) {
	p.space()
	if p.i >= len(p.s) {
		return 0, false, nil
	}
	c := p.s[p.i]
	if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
		if c == 'e' || c == 'E' {
			return 0, false, fmt.Errorf("path data has %q where a command belongs", c)
		}
		p.i++
		return c, true, nil
	}
	return 0, true, nil
}

func (p *pathLexer) number() (float64, error) {
	p.space()
	start := p.i
	if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
		p.i++
	}
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c >= '0' && c <= '9' || c == '.' {
			p.i++
			continue
		}
		if (c == 'e' || c == 'E') && p.i+1 < len(p.s) {
			p.i++
			if p.s[p.i] == '+' || p.s[p.i] == '-' {
				p.i++
			}
			continue
		}
		break
	}
	if start == p.i {
		if p.i < len(p.s) {
			return 0, fmt.Errorf("path data has %q where a number belongs", p.s[p.i])
		}
		return 0, errors.New("path data ends where a number belongs")
	}
	return parseNum(p.s[start:p.i])
}
