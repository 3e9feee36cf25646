package engine

import (
	"bytes"
	"strings"

	"github.com/lodge-mail/lodge/data"
)

// Detail is the parsed address and how it was judged: the "detail" object
// of an addr_check result. Strings are in normalised (upper case) form;
// types are printed as G-NAF prints them (street type in full, flat, level
// and suffix types as codes). Empty fields are omitted.
type Detail struct {
	Recipients   []string    `json:"recipients,omitempty"`
	CareOf       string      `json:"care_of,omitempty"`
	Building     string      `json:"building,omitempty"`
	FlatType     string      `json:"flat_type,omitempty"`
	FlatNumber   string      `json:"flat_number,omitempty"`
	LevelType    string      `json:"level_type,omitempty"`
	LevelNumber  string      `json:"level_number,omitempty"`
	Lot          string      `json:"lot,omitempty"`
	NumberFirst  string      `json:"number_first,omitempty"`
	NumberLast   string      `json:"number_last,omitempty"`
	StreetName   string      `json:"street_name,omitempty"`
	StreetType   string      `json:"street_type,omitempty"`
	StreetSuffix string      `json:"street_suffix,omitempty"`
	PostalType   string      `json:"postal_type,omitempty"`
	PostalNumber string      `json:"postal_number,omitempty"`
	Locality     string      `json:"locality,omitempty"`
	State        string      `json:"state,omitempty"`
	Postcode     string      `json:"postcode,omitempty"`
	Country      string      `json:"country,omitempty"`
	Granularity  Granularity `json:"granularity,omitempty"`
	ReferenceID  string      `json:"reference_id,omitempty"`
	Suggestion   []string    `json:"suggestion,omitempty"`
	// NearestNumbers are the street's real house numbers nearest to one
	// that is not there (fault NUMBER_NOT_FOUND).
	NearestNumbers []string `json:"nearest_numbers,omitempty"`
	Faults         []string `json:"faults,omitempty"`
}

// detail reads every component of the parsed address into a Detail.
func (e *Engine) detail(s *scratch, p *parse) *Detail {
	d := &Detail{}
	if p.stateTok >= 0 {
		d.State = p.state.String()
	}
	if p.pcTok >= 0 {
		d.Postcode = string(s.word(p.pcTok))
	}
	if p.locTok[0] >= 0 {
		var b strings.Builder
		for k := p.locTok[0]; k <= p.locTok[1]; k++ {
			if s.toks[k].tail {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.Write(s.word(k))
		}
		d.Locality = b.String()
	}
	var pm premise
	unitLine := s.readPremise(p, &pm)
	if p.delivery >= 0 && p.deliveryK == deliveryPostal {
		lo, hi := s.deliveryRange(p)
		s.readPostal(d, &pm, lo, hi)
	}
	pm.fill(s, d)
	above := p.tailStart
	if p.delivery >= 0 {
		above = p.delivery
	}
	for c := 0; c < above; c++ {
		line := string(s.comp(c))
		switch {
		case unitLine&(1<<c) != 0, s.tailOnly(c):
		case isCareOf(line):
			d.CareOf = careOfDisplay(line)
		default:
			d.Recipients = append(d.Recipients, line)
		}
	}
	return d
}

// premise is a delivery line read into its parts. Its byte slices alias
// scratch.buf: reading one allocates nothing.
type premise struct {
	flatType, levelType string // codes, from the vocabulary tables
	flatNum, levelNum   []byte
	lot                 []byte
	numFirst, numLast   []byte
	nameLo, nameHi      int // token range of the street name; empty when nameLo == nameHi
	streetType, suffix  int // indexes into data.StreetTypes and data.StreetSuffixes, -1 when none
	hasStreet           bool
}

// deliveryRange returns the token range of the delivery line.
func (s *scratch) deliveryRange(p *parse) (int, int) {
	lo, hi := int(s.ctok[p.delivery][0]), int(s.ctok[p.delivery][1])
	if p.streetSplit >= 0 {
		lo, hi = p.streetLo, p.streetSplit
	}
	return lo, hi
}

// readPremise reads the street delivery line, and the lines above it that
// hold only units and levels ("UNIT 12" / "LEVEL 3" / "BELCONNEN TOWERS" /
// "1 BENJAMIN WAY"), into pm. It returns the set of those unit lines (bit
// c for component c).
func (s *scratch) readPremise(p *parse, pm *premise) uint8 {
	*pm = premise{streetType: -1, suffix: -1}
	var unitLines uint8
	above := p.tailStart
	if p.delivery >= 0 {
		above = p.delivery
	}
	for c := above - 1; c >= 0 && c >= above-3; c-- {
		var u premise
		if !s.readUnitLine(&u, int(s.ctok[c][0]), int(s.ctok[c][1])) {
			continue
		}
		unitLines |= 1 << c
		if pm.flatType == "" && u.flatType != "" {
			pm.flatType, pm.flatNum = u.flatType, u.flatNum
		}
		if pm.levelType == "" && u.levelType != "" {
			pm.levelType, pm.levelNum = u.levelType, u.levelNum
		}
		if pm.lot == nil {
			pm.lot = u.lot
		}
	}
	if p.delivery >= 0 && p.deliveryK == deliveryStreet {
		lo, hi := s.deliveryRange(p)
		s.readStreet(pm, lo, hi)
	}
	return unitLines
}

// fill copies pm into d's fields.
func (pm *premise) fill(s *scratch, d *Detail) {
	d.FlatType, d.FlatNumber = pm.flatType, string(pm.flatNum)
	d.LevelType, d.LevelNumber = pm.levelType, string(pm.levelNum)
	d.Lot = string(pm.lot)
	d.NumberFirst, d.NumberLast = string(pm.numFirst), string(pm.numLast)
	if pm.nameHi > pm.nameLo {
		d.StreetName = string(s.buf[s.toks[pm.nameLo].start:s.toks[pm.nameHi-1].end])
	}
	if pm.streetType >= 0 {
		d.StreetType = data.StreetTypes[pm.streetType].Full
	}
	if pm.suffix >= 0 {
		d.StreetSuffix = data.StreetSuffixes[pm.suffix].Abbr
	}
}

// isCareOf reports whether a line names who the mail is in the care of.
func isCareOf(line string) bool {
	for _, p := range []string{"C/-", "C/O ", "CARE OF ", "ATTN ", "ATTENTION ", "C/O"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// careOfDisplay writes a care-of line as people read it: the normalised
// form joins "C/-" to the name ("C/-ACME PTY LTD"), the echo has a space
// after the marker ("C/- ACME PTY LTD", "C/O ACME").
func careOfDisplay(line string) string {
	for _, p := range []string{"C/-", "C/O"} {
		if rest, ok := strings.CutPrefix(line, p); ok && rest != "" && rest[0] != ' ' {
			if rest = strings.TrimLeft(rest, "-/"); rest != "" { // "C/O-ACME" from "c/o - Acme"
				return p + " " + rest
			}
		}
	}
	return line
}

// readPostal reads "PO BOX 123" (and "RMB 45 SMITH RD") into d and pm.
func (s *scratch) readPostal(d *Detail, pm *premise, lo, hi int) {
	for w := min(voc.postal.maxWords, hi-lo); w >= 1; w-- {
		if idx, ok := voc.postal.lookup(s.phrase(lo, lo+w-1)); ok {
			d.PostalType = data.PostalDeliveryTypes[idx].Full
			lo += w
			break
		}
	}
	if lo < hi && isNumberish(s.word(lo)) {
		d.PostalNumber = strings.TrimPrefix(string(s.word(lo)), "#")
		lo++
	}
	if lo < hi {
		s.readStreet(pm, lo, hi)
	}
}

// readUnitLine reads a line holding only flat and level ("UNIT 20",
// "LEVEL 3", "SUITE 2 LEVEL 5"); it reports false, changing nothing, when
// the line holds anything else.
func (s *scratch) readUnitLine(pm *premise, lo, hi int) bool {
	var t premise
	k := s.readUnitPrefix(&t, lo, hi)
	if k != hi || k == lo {
		return false
	}
	if t.flatType != "" {
		pm.flatType, pm.flatNum = t.flatType, t.flatNum
	}
	if t.levelType != "" {
		pm.levelType, pm.levelNum = t.levelType, t.levelNum
	}
	if t.lot != nil {
		pm.lot = t.lot
	}
	return true
}

// readUnitPrefix reads flat, level and lot designators from token lo on and
// returns the index of the first token it did not use.
func (s *scratch) readUnitPrefix(pm *premise, lo, hi int) int {
	k := lo
	for k < hi {
		w := s.word(k)
		if string(w) == "LOT" && k+1 < hi && isNumberish(s.word(k+1)) {
			pm.lot = s.word(k + 1)
			k += 2
			continue
		}
		if w[0] == '#' && len(w) > 1 {
			pm.flatType, pm.flatNum = "UNIT", w[1:]
			k++
			continue
		}
		if n, idx, ok := s.lookupAt(&voc.flatTypes, k, hi); ok {
			if k+n < hi && isNumberish(s.word(k+n)) {
				pm.flatType, pm.flatNum = data.FlatTypes[idx].Abbr, bytes.TrimPrefix(s.word(k+n), []byte("#"))
				k += n + 1
				continue
			}
		}
		if n, idx, ok := s.lookupAt(&voc.levelTypes, k, hi); ok {
			code := data.LevelTypes[idx].Abbr
			numberless := code == "G" || code == "LG" || code == "UG" || code == "B" || code == "M" || code == "RT" || code == "PTHS"
			if k+n < hi && isNumberish(s.word(k+n)) && !(k+n+1 < hi && isNumberish(s.word(k+n+1)) && code == "G") &&
				// "SHOP 1 GROUND 14 BARRETT ST": a number between a level
				// that needs none and the street's name is the street's
				!(numberless && k+n+1 < hi && !isNumberish(s.word(k+n+1)) &&
					!(s.isUnitWord(k+n+1) && k+n+2 < hi && isNumberish(s.word(k+n+2)))) {
				pm.levelType, pm.levelNum = code, s.word(k+n)
				k += n + 1
				continue
			}
			if numberless {
				pm.levelType = code
				k += n
				continue
			}
		}
		// glued forms: U20, L3, APT5, LOT68
		if j := firstDigit(w); j > 0 && j < len(w) {
			if string(w[:j]) == "LOT" {
				pm.lot = w[j:]
				k++
				continue
			}
			if idx, ok := voc.flatTypes.lookup(w[:j]); ok {
				pm.flatType, pm.flatNum = data.FlatTypes[idx].Abbr, w[j:]
				k++
				continue
			}
			if idx, ok := voc.levelTypes.lookup(w[:j]); ok {
				pm.levelType, pm.levelNum = data.LevelTypes[idx].Abbr, w[j:]
				k++
				continue
			}
		}
		break
	}
	return k
}

func firstDigit(b []byte) int {
	for i, c := range b {
		if c >= '0' && c <= '9' {
			return i
		}
	}
	return -1
}

// lookupAt finds the longest phrase of ph starting at token k.
func (s *scratch) lookupAt(ph *phrases, k, hi int) (int, uint16, bool) {
	for w := min(ph.maxWords, hi-k); w >= 1; w-- {
		if int(s.toks[k+w-1].comp) != int(s.toks[k].comp) {
			continue
		}
		if idx, ok := ph.lookup(s.phrase(k, k+w-1)); ok {
			return w, idx, true
		}
	}
	return 0, 0, false
}

// readStreet reads "[unit] [number] NAME [TYPE] [SUFFIX]".
func (s *scratch) readStreet(pm *premise, lo, hi int) {
	pm.hasStreet = true
	k := s.readUnitPrefix(pm, lo, hi)
	if i := bytes.IndexByte(pm.flatNum, '/'); i > 0 && i < len(pm.flatNum)-1 && !(k < hi && isNumberish(s.word(k))) {
		// "UNIT 5/10 SMITH ST", "U5/10A SMITH ST": flat 5 at number 10
		num := pm.flatNum[i+1:]
		pm.flatNum = pm.flatNum[:i]
		if j := bytes.IndexByte(num, '-'); j > 0 {
			pm.numFirst, pm.numLast = num[:j], num[j+1:]
		} else {
			pm.numFirst = num
		}
	}
	if k < hi && isNumberish(s.word(k)) && k+1 < hi {
		num := s.word(k)
		if i := bytes.IndexByte(num, '/'); i > 0 {
			// 3/72: flat 3 at number 72
			if pm.flatType == "" {
				pm.flatType = "UNIT"
			}
			pm.flatNum, num = num[:i], num[i+1:]
		}
		if i := bytes.IndexByte(num, '-'); i > 0 {
			pm.numFirst, pm.numLast = num[:i], num[i+1:]
		} else {
			pm.numFirst = num
		}
		k++
		// "UNIT 1-19 25 SMITH ST": a second number is the street number
		if k < hi && isNumberish(s.word(k)) && k+1 < hi && pm.flatType == "" {
			pm.flatType, pm.flatNum = "UNIT", num
			pm.numFirst, pm.numLast = s.word(k), nil
			k++
		}
	}
	if k >= hi {
		return
	}
	if first, ok := s.cornerStreet(k, hi); ok {
		// the first street of a corner: its own type ("CNR KING ST &
		// QUEEN ST"), else the plural's ("CNR GEORGE AND MARKET STREETS")
		and := first + 1
		for string(s.word(and)) != "AND" && string(s.word(and)) != "&" {
			and++
		}
		pm.nameLo, pm.nameHi = first, and
		if and-first >= 2 {
			if idx, ok := voc.streetTypes.lookup(s.word(and - 1)); ok {
				pm.nameHi, pm.streetType = and-1, int(idx)
				return
			}
		}
		if full, ok := pluralTypes[string(s.word(hi-1))]; ok {
			idx, _ := voc.streetTypes.lookup([]byte(full))
			pm.streetType = int(idx)
		} else if idx, ok := voc.streetTypes.lookup(s.word(hi - 1)); ok {
			pm.streetType = int(idx)
		}
		return
	}
	// The street type is the last type word with a name before it; at most
	// one suffix follows it. "SMITH STREET NORTH": NORTH is a suffix here,
	// though G-NAF also knows NORTH as a street type.
	end := hi
	typ, suffix := -1, -1
	if hi-k >= 3 {
		if n, si, ok := s.lookupAt(&voc.streetSuffix, hi-1, hi); ok && n == 1 {
			if _, isType := voc.streetTypes.lookup(s.word(hi - 2)); isType {
				typ, suffix = hi-2, int(si)
			}
		}
	}
	if typ < 0 && hi-k >= 2 {
		if _, isType := voc.streetTypes.lookup(s.word(hi - 1)); isType {
			typ = hi - 1
		}
	}
	if typ >= 0 {
		idx, _ := voc.streetTypes.lookup(s.word(typ))
		pm.streetType = int(idx)
		pm.suffix = suffix
		end = typ
	}
	pm.nameLo, pm.nameHi = k, end
}
