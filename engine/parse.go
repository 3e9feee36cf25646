package engine

import (
	"strings"
	"sync"
)

// MaxComponents and MinComponents bound the lines of one address.
const (
	MinComponents = 3
	MaxComponents = 6
)

// span is a half-open byte range into scratch.buf.
type span struct{ start, end uint16 }

// token is one space-separated word of a normalised component.
type token struct {
	start, end uint16
	comp       uint8
	tail       bool // consumed as state or postcode
}

// scratch is the per-call working memory of a check. It is pooled so that
// the hot path allocates nothing; nothing in it outlives the call.
type scratch struct {
	buf   []byte // normalised components joined by '\n': also the cache key
	comps [MaxComponents]span
	ctok  [MaxComponents][2]uint16 // token index range of each component
	toks  []token
	key   []byte // canonical locality key
	skey  []byte // canonical street key
	bnum  []byte // numbers of a building found by name
	akey  []byte // a locality key with an abbreviation written out
	pm    premise
	lines [MaxComponents + 2]string
	p     parse
}

var scratchPool = sync.Pool{New: func() any {
	return &scratch{buf: make([]byte, 0, 512), toks: make([]token, 0, 64), key: make([]byte, 0, 64), skey: make([]byte, 0, 64), akey: make([]byte, 0, 64)}
}}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func putScratch(s *scratch) {
	if cap(s.buf) > 64<<10 || cap(s.toks) > 4096 {
		return // let an oversized buffer go rather than pin it
	}
	s.lines = [MaxComponents + 2]string{}
	scratchPool.Put(s)
}

func (s *scratch) word(i int) []byte { t := s.toks[i]; return s.buf[t.start:t.end] }

func (s *scratch) comp(c int) []byte { sp := s.comps[c]; return s.buf[sp.start:sp.end] }

// phrase returns the bytes of tokens i..j inclusive; they must be in one
// component, where tokens are separated by single spaces.
func (s *scratch) phrase(i, j int) []byte { return s.buf[s.toks[i].start:s.toks[j].end] }

// tokenise splits every component into tokens.
func (s *scratch) tokenise(n int) {
	s.toks = s.toks[:0]
	for c := 0; c < n; c++ {
		sp := s.comps[c]
		first := len(s.toks)
		i := int(sp.start)
		for i < int(sp.end) {
			j := i
			for j < int(sp.end) && s.buf[j] != ' ' {
				j++
			}
			if d := postalGlued(s.buf[i:j]); d > 0 {
				// "POBOX123": the postal type and its number
				s.toks = append(s.toks, token{start: uint16(i), end: uint16(i + d), comp: uint8(c)})
				i += d
			}
			s.toks = append(s.toks, token{start: uint16(i), end: uint16(j), comp: uint8(c)})
			i = j + 1
		}
		s.ctok[c] = [2]uint16{uint16(first), uint16(len(s.toks))}
	}
}

// postalGlued returns where the number starts in a word that is a postal
// delivery type with its number run on ("POBOX123", "BOX123", "PMB7"),
// or 0.
func postalGlued(w []byte) int {
	if len(w) < 3 || w[0] < 'A' || w[0] > 'Z' || w[len(w)-1] < '0' || w[len(w)-1] > '9' {
		return 0
	}
	d := 1
	for d < len(w) && w[d] >= 'A' && w[d] <= 'Z' {
		d++
	}
	if d == len(w) || !isDigits(w[d:]) || !voc.postalGlue[string(w[:d])] {
		return 0
	}
	return d
}

// deliveryKind classifies the line that carries the delivery point.
type deliveryKind uint8

const (
	deliveryNone deliveryKind = iota
	deliveryStreet
	deliveryPostal
)

// parse is the structural reading of an address: where its tail (locality,
// state, postcode) and its delivery line are.
type parse struct {
	n           int // components
	state       State
	stateTok    int // first token of the state phrase, -1 when none
	pcTok       int // postcode token, -1 when none
	postcode    uint16
	pcOK        bool // 4 digits
	tailStart   int  // first component of the tail (locality included)
	locTok      [2]int
	locWhole    int // component holding the whole locality, -1 when the locality is tokens of a tail line
	territory   int // component naming an external territory above a locality, -1
	delivery    int // component of the delivery line, -1 when none
	deliveryK   deliveryKind
	streetSplit int // tokens [streetLo, streetSplit) of the locality line are a street, -1 when not split
	streetLo    int
}

// isDigits reports whether b is all ASCII digits.
func isDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// findState finds the last state phrase among tokens [lo,hi) that sits at
// an edge of its component or beside a postcode-like token, returning its
// first and last token.
func (s *scratch) findState(lo, hi int) (State, int, int) {
	for j := hi - 1; j >= lo; j-- {
		for w := voc.states.maxWords; w >= 1; w-- {
			i := j - w + 1
			if i < lo {
				continue
			}
			idx, ok := voc.states.lookup(s.phrase(i, j))
			if !ok {
				continue
			}
			atEdge := i == lo || j == hi-1
			beside := (j+1 < hi && isDigits(s.word(j+1))) || (i > lo && isDigits(s.word(i-1)))
			if !atEdge && !beside {
				continue
			}
			// "VICTORIA ST" is a street, not a state.
			if j+1 < hi {
				if _, st := voc.streetTypes.lookup(s.word(j + 1)); st {
					continue
				}
			}
			return State(idx), i, j
		}
	}
	return NoState, -1, -1
}

// findPostcode finds a postcode-like token (all digits) among tokens
// [lo,hi): alone, last, next to the state, or first when the state ends the
// component.
//
// Of several such tokens a four-digit one wins: in "2000 NSW 12 GEORGE ST
// SYDNEY" the 12 beside the state is the street's number.
func (s *scratch) findPostcode(lo, hi, stFirst, stLast int) int {
	found := -1
	for j := hi - 1; j >= lo; j-- {
		if s.toks[j].tail || !isDigits(s.word(j)) {
			continue
		}
		if hi-lo == 1 || j == hi-1 || (stFirst >= 0 && (j == stLast+1 || j == stFirst-1)) ||
			(j == lo && stLast == hi-1) {
			if isPostcodeWord(s.word(j)) {
				return j
			}
			if j < hi-1 && s.streetTypeAfter(j+2, hi) {
				continue // "NSW 12 GEORGE ST SYDNEY": a street's number, the postcode missing
			}
			if found < 0 {
				found = j
			}
		}
	}
	return found
}

// streetTypeAfter reports whether a street type word is among tokens
// [k,hi) with a word before it.
func (s *scratch) streetTypeAfter(k, hi int) bool {
	for ; k < hi; k++ {
		if _, ok := voc.streetTypes.lookup(s.word(k)); ok && hasLetter(s.word(k-1)) {
			return true
		}
	}
	return false
}

// leadingPostcode reports whether tokens [lo,hi) are a four-digit token
// not yet taken followed by a name that is no street: "2000 SYDNEY", read
// as postcode and locality when the state is on another line of the tail.
// "2000 GEORGE ST" is a street number and street.
func (s *scratch) leadingPostcode(lo, hi int) bool {
	if hi <= lo || s.toks[lo].tail || !isPostcodeWord(s.word(lo)) {
		return false
	}
	return s.nameLine(lo+1, hi) && s.classifyLine(lo+1, hi) == deliveryNone
}

// nameLine reports whether tokens [lo,hi) could be a locality name on a
// line of its own: no number and no postal delivery type. A street type
// word does not rule it out (BOX HILL, CHRISTMAS ISLAND).
func (s *scratch) nameLine(lo, hi int) bool {
	if s.classifyLine(lo, hi) == deliveryPostal {
		return false
	}
	for k := lo; k < hi; k++ {
		if isNumberish(s.word(k)) {
			return false
		}
	}
	return true
}

// tailLine decides whether a line above the last, where the state (tokens
// si..sj, -1 when none) or the postcode (token pj) was found, belongs to
// the tail. A line that does not read as a delivery line does. A postal
// delivery line never does ("PO BOX 7000" above "HOBART TAS"). A line that
// reads as a street line does when its words before or after the state and
// postcode are none ("2000 NSW", "NEW SOUTH WALES") or a name without a
// number ("WAGGA WAGGA NEW SOUTH WALES", "BOX HILL 3128"). A number left
// over keeps it a street line ("1 VICTORIA" has no state), and so does a
// street after a leading number ("2000 GEORGE ST" has no postcode; the
// cost is that "3128 BOX HILL" is not read as postcode and locality).
// pure reports that the line holds nothing but the state and postcode.
func (s *scratch) tailLine(lo, hi, si, sj, pj int) (pure, ok bool) {
	taken := func(k int) bool { return k == pj || (si >= 0 && k >= si && k <= sj) }
	rlo, rhi := lo, hi
	for rlo < rhi && taken(rlo) {
		rlo++
	}
	for rhi > rlo && taken(rhi-1) {
		rhi--
	}
	pure = rlo == rhi
	switch s.classifyLine(lo, hi) {
	case deliveryNone:
		return pure, true
	case deliveryPostal:
		return false, false
	}
	for k := rlo; k < rhi; k++ {
		if taken(k) {
			return false, false // a state or postcode inside a street line
		}
	}
	if pj == lo && s.classifyLine(rlo, rhi) != deliveryNone {
		return false, false // "2000 GEORGE ST": the number of a street line
	}
	return pure, s.nameLine(rlo, rhi)
}

// stateEndsDeliveryLine reports whether line c, whose tokens si..sj are a
// state, is a street or postal delivery line (perhaps with its locality)
// ending with that state, above a last line holding the postcode alone:
// "10 JONES ST MELBOURNE VIC" / "3000", "PO BOX 12 HOBART TAS" / "7001".
// The line is then read as "10 JONES ST MELBOURNE" / "VIC 3000" is.
// tailLine refuses it, for a number left beside a state in a street line
// is usually no postcode; here the postcode is already found below.
func (s *scratch) stateEndsDeliveryLine(p *parse, c, lo, hi, si, sj, pj int) bool {
	if si <= lo || sj != hi-1 || pj >= 0 || p.pcTok < 0 || c+1 != p.n-1 {
		return false
	}
	if int(s.toks[p.pcTok].comp) != c+1 || s.ctok[c+1][1]-s.ctok[c+1][0] != 1 {
		return false // the postcode shares its line: not this layout
	}
	return s.classifyLine(lo, si) != deliveryNone
}

// parseTail finds the state, postcode and locality among the last
// components (at most three), however the client split or ordered them:
// "SYDNEY NSW 2000", "2000 NSW" / "SYDNEY", "2000" / "SYDNEY" / "NSW",
// "NSW" / "2000 SYDNEY" and every other order read the same.
func (s *scratch) parseTail(p *parse) {
	n := p.n
	p.state, p.stateTok, p.pcTok = NoState, -1, -1
	p.tailStart, p.locWhole, p.territory, p.streetSplit, p.delivery = n, -1, -1, -1, -1
	p.locTok = [2]int{-1, -1}
	// gap is a line above the last with neither state nor postcode (the
	// locality between them, "2000" / "SYDNEY" / "NSW"): part of the tail
	// only when the line above it holds nothing but the missing state or
	// postcode.
	gap := -1
	for c := n - 1; c >= 0 && c >= n-3; c-- {
		lo, hi := int(s.ctok[c][0]), int(s.ctok[c][1])
		// what this line would give, marked only once it is taken as a
		// tail line
		si, sj := -1, -1
		var st State
		if p.stateTok < 0 {
			st, si, sj = s.findState(lo, hi)
		}
		pj := -1
		if p.pcTok < 0 {
			pj = s.findPostcode(lo, hi, si, sj)
			if pj >= 0 && c < n-1 && si < 0 && !isPostcodeWord(s.word(pj)) {
				// "INVALIDENSTR 1" / "10115 BERLIN": above the last line,
				// a number without a state beside it is a postcode only
				// when it has four digits
				pj = -1
			}
			if pj < 0 && si < 0 && p.stateTok >= 0 && s.leadingPostcode(lo, hi) {
				// "2000 SYDNEY" above or below the state's line
				pj = lo
			}
		}
		if si < 0 && pj < 0 {
			if c == n-1 {
				p.tailStart = c
				continue
			}
			if gap >= 0 || !s.nameLine(lo, hi) {
				break // a line with neither ends the tail
			}
			gap = c
			continue
		}
		if c < n-1 {
			pure, ok := s.tailLine(lo, hi, si, sj, pj)
			if !ok && s.stateEndsDeliveryLine(p, c, lo, hi, si, sj, pj) {
				ok = true // "10 JONES ST MELBOURNE VIC" / "3000"
			}
			if !ok || (gap >= 0 && !pure) {
				break // "PO BOX 5" above "HOBART TAS": its number is no postcode
			}
		}
		if si >= 0 {
			p.state, p.stateTok = st, si
			for k := si; k <= sj; k++ {
				s.toks[k].tail = true
			}
		}
		if pj >= 0 {
			p.pcTok = pj
			s.toks[pj].tail = true
		}
		p.tailStart, gap = c, -1
		if p.stateTok >= 0 && p.pcTok >= 0 {
			break
		}
	}
	if p.pcTok < 0 && p.stateTok >= 0 {
		// "NSW" / "2000 SYDNEY": a postcode first on a line below the
		// state's, which was read before the state was found
		sc := int(s.toks[p.stateTok].comp)
		for c := n - 1; c > sc; c-- {
			if lo, hi := int(s.ctok[c][0]), int(s.ctok[c][1]); s.leadingPostcode(lo, hi) {
				p.pcTok = lo
				s.toks[lo].tail = true
				break
			}
		}
	}
	if p.pcTok >= 0 {
		w := s.word(p.pcTok)
		p.pcOK = len(w) == 4
		if p.pcOK {
			p.postcode, _ = ParsePostcode(string(w))
		}
	}
	if p.tailStart == n {
		return
	}
	// Leftover words of the tail lines are the locality.
	first, last := -1, -1
	for k := int(s.ctok[p.tailStart][0]); k < int(s.ctok[n-1][1]); k++ {
		if !s.toks[k].tail {
			if first < 0 {
				first = k
			}
			last = k
		}
	}
	if first >= 0 {
		p.locTok = [2]int{first, last}
		return
	}
	if p.tailStart > 0 {
		p.tailStart--
		p.locWhole = p.tailStart
		c := p.tailStart
		p.locTok = [2]int{int(s.ctok[c][0]), int(s.ctok[c][1]) - 1}
	}
}

// leadingStatePostcode finds a line above the tail that holds a state
// and a four-digit postcode and nothing else: an address written with its
// state and postcode first.
func (s *scratch) leadingStatePostcode(p *parse) (int, bool) {
	for c := 0; c < p.tailStart && c < p.n; c++ {
		lo, hi := int(s.ctok[c][0]), int(s.ctok[c][1])
		st, si, sj := s.findState(lo, hi)
		if st == NoState {
			continue
		}
		pj := -1
		if sj+1 < hi && isPostcodeWord(s.word(sj+1)) {
			pj = sj + 1
		} else if si-1 >= lo && isPostcodeWord(s.word(si-1)) {
			pj = si - 1
		}
		if pj >= 0 && min(si, pj) == lo && max(sj, pj) == hi-1 {
			return c, true
		}
	}
	return -1, false
}

// leadingTail reads an address written with its state and postcode on a
// line of their own above the street ("NSW 2000" / "1 GEORGE ST" /
// "SYDNEY"), as some forms print it: the state and postcode are that
// line's and the locality is the last line, a name. The address is then
// judged as if written the usual way ("1 GEORGE ST" / "SYDNEY NSW 2000"),
// as it is when the street and locality share a line below the state and
// postcode. parseTail finds no state or postcode in that layout, or, when
// the street has no number ("ACT 2600" / "PARLIAMENT DRIVE" /
// "CANBERRA"), takes the street line for the locality's first line. It
// reports false, changing nothing, for any other layout ("NSW 2000" /
// "SYDNEY" / "1 GEORGE ST"): checkForm then says where the lines are.
func (e *Engine) leadingTail(s *scratch, p *parse) bool {
	last := p.n - 1
	c := -1
	switch {
	case p.pcTok < 0 && p.stateTok < 0:
		lc, ok := s.leadingStatePostcode(p)
		if !ok {
			return false
		}
		c = lc
	case p.pcOK && p.stateTok >= 0 && p.tailStart == last-2 && int(s.toks[p.stateTok].comp) == p.tailStart &&
		int(s.toks[p.pcTok].comp) == p.tailStart && s.tailOnly(p.tailStart):
		if s.classifyLine(int(s.ctok[last-1][0]), int(s.ctok[last-1][1])) == deliveryNone ||
			e.ref.has(s.localityKey(p), p.state, p.postcode) {
			return false // "2000 NSW" / "NORTH" / "SYDNEY": the two lines are the locality
		}
		c = p.tailStart
	default:
		return false
	}
	if c >= last-1 {
		return false
	}
	// the last line is a name: no street ("PARLIAMENT DRIVE") unless a
	// locality's ("HOMEBUSH WEST", "CHRISTMAS ISLAND")
	lo, hi := int(s.ctok[last][0]), int(s.ctok[last][1])
	if hi <= lo || !s.nameLine(lo, hi) {
		return false
	}
	if s.classifyLine(lo, hi) != deliveryNone {
		if s.key = canonicalLocalityBytes(s.key[:0], s.comp(last)); len(e.ref.byKey[string(s.key)]) == 0 {
			return false
		}
	}
	if p.stateTok < 0 {
		slo, shi := int(s.ctok[c][0]), int(s.ctok[c][1])
		st, si, sj := s.findState(slo, shi)
		pj := sj + 1
		if pj >= shi {
			pj = si - 1
		}
		for k := slo; k < shi; k++ {
			s.toks[k].tail = true
		}
		p.state, p.stateTok, p.pcTok, p.pcOK = st, si, pj, true
		p.postcode, _ = ParsePostcode(string(s.word(pj)))
	}
	p.tailStart, p.locWhole, p.locTok = last, last, [2]int{lo, hi - 1}
	return true
}

// tailOnly reports whether line c holds nothing but tail tokens (a state
// and postcode): no recipient, and no line of a corrected address.
func (s *scratch) tailOnly(c int) bool {
	lo, hi := int(s.ctok[c][0]), int(s.ctok[c][1])
	for k := lo; k < hi; k++ {
		if !s.toks[k].tail {
			return false
		}
	}
	return hi > lo
}

// localityKey writes the canonical key of the locality tokens to s.key.
func (s *scratch) localityKey(p *parse) []byte {
	s.key = s.key[:0]
	if p.locTok[0] < 0 {
		return s.key
	}
	for k := p.locTok[0]; k <= p.locTok[1]; k++ {
		if s.toks[k].tail {
			continue
		}
		if len(s.key) > 0 {
			s.key = append(s.key, ' ')
		}
		s.key = canonicalLocalityBytes(s.key, s.word(k))
	}
	return s.key
}

// isNumberish reports whether a token starts like a street number: a digit,
// or one letter followed by a digit ("A12"), or '#'.
func isNumberish(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if b[0] >= '0' && b[0] <= '9' {
		return true
	}
	return len(b) > 1 && (b[0] == '#' || (b[0] >= 'A' && b[0] <= 'Z' && b[1] >= '0' && b[1] <= '9'))
}

func hasLetter(b []byte) bool {
	for _, c := range b {
		if (c >= 'A' && c <= 'Z') || c >= 0x80 {
			return true
		}
	}
	return false
}

// classifyLine says whether tokens [lo,hi) read as a postal delivery line
// or a street line.
func (s *scratch) classifyLine(lo, hi int) deliveryKind {
	if hi <= lo {
		return deliveryNone
	}
	// postal: a delivery type phrase at the start, a number after it unless
	// the type needs none (CARE PO)
	for w := min(voc.postal.maxWords, hi-lo); w >= 1; w-- {
		if idx, ok := voc.postal.lookup(s.phrase(lo, lo+w-1)); ok {
			if lo+w < hi && isNumberish(s.word(lo+w)) {
				return deliveryPostal
			}
			if lo+w == hi && postalNeedsNoNumber(idx) {
				return deliveryPostal
			}
		}
	}
	// street: a number followed by a word, LOT n, or a name then a type
	for k := lo; k < hi; k++ {
		w := s.word(k)
		// a unit word after a number is a street's name when no number
		// follows it ("23 HALL RD", "35 WARD ST")
		if isNumberish(w) && k+1 < hi && hasLetter(s.word(k+1)) && !(s.isUnitWord(k+1) && (k+2 >= hi || isNumberish(s.word(k+2)))) {
			// "UNIT 5" alone is not a street; "5 SMITH ST" is
			if k == lo || !s.isUnitWord(k-1) || k+2 < hi {
				return deliveryStreet
			}
		}
	}
	for k := lo + 1; k < hi; k++ {
		if _, ok := voc.streetTypes.lookup(s.word(k)); ok && hasLetter(s.word(k-1)) {
			if k == hi-1 || k == hi-2 {
				return deliveryStreet
			}
		}
	}
	if _, ok := s.cornerStreet(lo, hi); ok {
		return deliveryStreet
	}
	return deliveryNone
}

// pluralTypes are the street types written in the plural after two street
// names: "CNR GEORGE AND MARKET STREETS".
var pluralTypes = map[string]string{
	"STREETS": "STREET", "STS": "STREET", "ROADS": "ROAD", "RDS": "ROAD",
	"AVENUES": "AVENUE", "AVES": "AVENUE", "AVS": "AVENUE", "DRIVES": "DRIVE",
	"HIGHWAYS": "HIGHWAY", "HWYS": "HIGHWAY", "PARADES": "PARADE", "TERRACES": "TERRACE",
	"LANES": "LANE", "PLACES": "PLACE", "CRESCENTS": "CRESCENT",
}

// cornerStreet reads a corner address, "CNR GEORGE AND MARKET STREETS",
// "CORNER OF FLINDERS & SWANSTON STS", "CNR KING ST & QUEEN ST": the line
// is a street line, and its first street is the one read (the words after
// the corner word up to AND or &); it returns the first street's name's
// first token and whether the line is one.
func (s *scratch) cornerStreet(lo, hi int) (int, bool) {
	if hi-lo < 4 {
		return 0, false
	}
	if w := string(s.word(lo)); w != "CNR" && w != "CORNER" && w != "CRNR" {
		return 0, false
	}
	k := lo + 1
	if string(s.word(k)) == "OF" {
		k++
	}
	for j := k + 1; j < hi-1; j++ {
		if w := string(s.word(j)); w == "AND" || w == "&" {
			last := s.word(hi - 1)
			if _, plural := pluralTypes[string(last)]; plural {
				return k, true
			}
			if _, ok := voc.streetTypes.lookup(last); ok {
				return k, true
			}
			return 0, false
		}
	}
	return 0, false
}

// isUnitWord reports whether token k is a flat or level type word.
func (s *scratch) isUnitWord(k int) bool {
	w := s.word(k)
	if _, ok := voc.flatTypes.lookup(w); ok {
		return true
	}
	_, ok := voc.levelTypes.lookup(w)
	return ok
}

// postalNeedsNoNumber reports whether the postal delivery type may stand
// without a number (CARE PO, poste restante style).
func postalNeedsNoNumber(idx uint16) bool {
	return strings.HasPrefix(postalFull(idx), "CARE")
}

// isPostcodeWord reports whether w is four digits.
func isPostcodeWord(w []byte) bool {
	if len(w) != 4 {
		return false
	}
	for _, c := range w {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
