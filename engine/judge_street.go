package engine

import (
	"bytes"
	"strings"
)

// judgeStreet judges a street address whose locality is confirmed and has
// street data (group g). ok is false when the street level has nothing to
// say (an incomplete group without the street): the locality verdict
// stands.
func (e *Engine) judgeStreet(s *scratch, p *parse, l *Locality, groups []uint32, detail bool) (Result, bool) {
	pm := &s.pm
	unitLine := s.readPremise(p, pm)
	// Where several groups share the locality, the best outcome counts.
	g := groups[0]
	m := e.matchStreet(s, pm, g, p.postcode)
	for _, og := range groups[1:] {
		if om := e.matchStreet(s, pm, og, p.postcode); outcomeRank[om.outcome] > outcomeRank[m.outcome] {
			m, g = om, og
		}
	}
	st := e.ref.streets
	// "RIVERSIDE TOWER 10 JONES ST": a building's name before the number
	// on the street line. Read so only when the line as written names no
	// street and the reading finds the address.
	var buildingWords []byte
	if m.outcome == streetNotFound {
		// each number after a word in turn: "BIG 4 PARK BEACH HOL PARK 1
		// OCEAN PDE" names its building with a number of its own
		for from := 0; buildingWords == nil; {
			alt := *pm
			blo, bhi, ok := s.buildingBeforeNumber(p, &alt, from)
			if !ok {
				break
			}
			for _, og := range groups {
				// streetMatched: a street without address points (street
				// level data) holds the number read
				if am := e.matchStreet(s, &alt, og, p.postcode); am.outcome == premiseMatched || am.outcome == addrPostcodeWrong || am.outcome == streetMatched {
					*pm, m, g = alt, am, og
					buildingWords = s.phrase(blo, bhi-1)
					break
				}
			}
			from = bhi + 1
		}
	}
	// No number, but a line above names a building of the street: the
	// building gives the number ("BELCONNEN TOWERS" / "BENJAMIN WAY").
	var viaBuilding uint32
	sugPM := pm
	if m.outcome == streetMatched && pm.numFirst == nil && pm.lot == nil && m.street >= 0 {
		if bid, k, u, ok := e.buildingLine(s, p, unitLine, m.street); ok {
			written := *pm
			s.setPremiseNumber(pm, st, st.points[k])
			if pm.flatNum == nil && u.flatNum != nil {
				pm.flatType, pm.flatNum = u.flatType, u.flatNum
			}
			if pm.levelType == "" && u.levelType != "" {
				pm.levelType, pm.levelNum = u.levelType, u.levelNum
			}
			if bm := e.matchStreet(s, pm, g, p.postcode); bm.street == m.street && outcomeRank[bm.outcome] >= outcomeRank[numberNotFound] {
				m, viaBuilding = bm, bid
				// the suggestion keeps the units where they were written
				sp := written
				sp.numFirst, sp.numLast, sp.lot = pm.numFirst, pm.numLast, pm.lot
				sugPM = &sp
			} else {
				*pm = written
			}
		}
	}
	var r Result
	switch m.outcome {
	case streetNone:
		return Result{}, false
	case streetMatched, premiseMatched:
		r = Result{Status: StatusMatched, Nation: "AUS"}
	default:
		r = Result{Status: StatusUnmatched, Nation: "AUS"}
	}
	if !detail {
		return r, true
	}
	d := e.detail(s, p)
	r.Detail = d
	d.Locality = l.Name
	if m.street >= 0 {
		d.ReferenceID = st.streets[m.street].pid
	}
	if m.outcome == premiseMatched && m.base >= 0 {
		if pid := st.pidString(m.base); pid != "" {
			d.ReferenceID = pid // the address's own record
		}
	}
	if m.typeFix {
		d.Faults = append(d.Faults, FaultStreetType)
		d.Suggestion = e.premiseLines(s, p, unitLine, sugPM, st.streets[m.street].name, "", l.Name, p.postcode)
	}
	if buildingWords != nil {
		pm.fill(s, d) // the street as read past the building's name
		d.Building = string(buildingWords)
	}
	if viaBuilding != 0 {
		d.Faults = append(d.Faults, FaultNumberMissing)
		d.Suggestion = e.premiseLines(s, p, unitLine, sugPM, st.streets[m.street].name, "", l.Name, p.postcode)
		d.setBuilding(st.strs[viaBuilding])
	} else if m.base >= 0 {
		if b := st.points[m.base].building; b != 0 {
			if bid, _, _, ok := e.buildingLine(s, p, unitLine, m.street); ok && bid == b {
				d.setBuilding(st.strs[b])
			}
		}
	}
	switch m.outcome {
	case streetMatched:
		d.Granularity = GranularityStreet
	case premiseMatched:
		d.Granularity = GranularityPremise
	case streetNotFound:
		d.Faults = append(d.Faults, FaultStreetUnknown)
		s.skey = s.streetKey(s.skey[:0], pm)
		var ids []uint32
		for _, og := range groups {
			ids = append(ids, st.similarStreets(og, string(s.skey), 1)...)
		}
		if alt, pc, ok := e.elsewhere(s, pm, l); ok {
			// the same address in the locality of that name under another postcode
			d.Suggestion = e.premiseLines(s, p, unitLine, pm, alt, "", l.Name, pc)
		} else if len(ids) > 0 {
			d.Suggestion = e.premiseLines(s, p, unitLine, pm, st.streets[ids[0]].name, "", l.Name, p.postcode)
		}
	case numberNotFound:
		d.Faults = append(d.Faults, FaultNumberUnknown)
		d.Granularity = GranularityStreet
		if pm.numFirst != nil {
			d.NearestNumbers = st.nearestNumbers(m.street, pm.numFirst)
		}
	case unitNotFound:
		d.Faults = append(d.Faults, FaultUnitUnknown)
		d.Granularity = GranularityStreet
		base := st.points[m.base]
		num := numberString(base.first)
		if base.last != 0 {
			num += "-" + numberString(base.last)
		}
		d.Suggestion = e.premiseLines(s, p, unitLine, nil, st.streets[m.street].name, num, l.Name, p.postcode)
	case addrPostcodeWrong:
		d.Faults = append(d.Faults, FaultAddressPostcode)
		d.Granularity = GranularityPremise
		d.Suggestion = e.premiseLines(s, p, unitLine, sugPM, st.streets[m.street].name, "", l.Name, m.pc)
	}
	return r, true
}

// buildingLine finds a line above the street line, other than a unit
// line, that names a building of street id, after unit designators of its
// own ("UNIT 12 BELCONNEN TOWERS"). It returns the building's interned
// name, a point of the building (its primary address when the reference
// has one) and the units the line gave.
func (e *Engine) buildingLine(s *scratch, p *parse, unitLines uint8, id int32) (bid uint32, k int32, u premise, ok bool) {
	st := e.ref.streets
	above := p.tailStart
	if p.delivery >= 0 {
		above = p.delivery
	}
	sr := &st.streets[id]
	for c := above - 1; c >= 0 && c >= above-3; c-- {
		lo, hi := int(s.ctok[c][0]), int(s.ctok[c][1])
		if unitLines&(1<<c) != 0 || lo >= hi {
			continue
		}
		u = premise{streetType: -1, suffix: -1}
		from := s.readUnitPrefix(&u, lo, hi)
		if from >= hi {
			continue
		}
		b, known := st.strID[string(s.phrase(from, hi-1))]
		if !known || b == 0 {
			continue
		}
		k = -1
		for i := sr.lo; i < sr.hi; i++ {
			if pt := &st.points[i]; pt.building == b {
				if k < 0 || (pt.flat == 0 && pt.level == 0) {
					k = int32(i)
				}
				if pt.flat == 0 && pt.level == 0 {
					break
				}
			}
		}
		if k >= 0 {
			return b, k, u, true
		}
	}
	return 0, -1, premise{}, false
}

// setPremiseNumber writes the number (or the lot) of pt into pm, in s's
// own buffer.
func (s *scratch) setPremiseNumber(pm *premise, st *Streets, pt point) {
	if pt.first == 0 {
		s.bnum = append(s.bnum[:0], st.strs[pt.lot]...)
		pm.lot = s.bnum
		return
	}
	s.bnum = appendNumber(s.bnum[:0], pt.first)
	n := len(s.bnum)
	if pt.last != 0 {
		s.bnum = appendNumber(s.bnum, pt.last)
		pm.numLast = s.bnum[n:]
	}
	pm.numFirst = s.bnum[:n:n]
}

// setBuilding records the building named and takes its line out of the
// recipients.
func (d *Detail) setBuilding(name string) {
	d.Building = name
	for i, r := range d.Recipients {
		if strings.HasSuffix(r, name) {
			d.Recipients = append(d.Recipients[:i], d.Recipients[i+1:]...)
			break
		}
	}
}

// premiseLines writes the address corrected: the lines above the delivery
// line as written (but a unit line, folded into the street line), then the
// street line with the units of pm (none when pm is nil), the number
// (num, or pm's) and the street as printed, then the locality line.
func (e *Engine) premiseLines(s *scratch, p *parse, unitLines uint8, pm *premise, streetName, num, locality string, pc uint16) []string {
	var out []string
	above := p.tailStart
	if p.delivery >= 0 {
		above = p.delivery
	}
	for c := 0; c < above; c++ {
		if unitLines&(1<<c) == 0 && !s.tailOnly(c) {
			out = append(out, string(s.comp(c)))
		}
	}
	var b strings.Builder
	if pm != nil {
		if pm.flatNum != nil {
			b.WriteString(pm.flatType + " " + string(pm.flatNum) + " ")
		}
		if pm.levelType != "" {
			b.WriteString(pm.levelType)
			if pm.levelNum != nil {
				b.WriteString(" " + string(pm.levelNum))
			}
			b.WriteByte(' ')
		}
		if pm.lot != nil && pm.numFirst == nil {
			b.WriteString("LOT " + string(pm.lot) + " ")
		}
		if num == "" && pm.numFirst != nil {
			num = string(pm.numFirst)
			if pm.numLast != nil {
				num += "-" + string(pm.numLast)
			}
		}
	}
	if num != "" {
		b.WriteString(num + " ")
	}
	b.WriteString(streetName)
	out = append(out, b.String())
	st := p.state.String()
	out = append(out, locality+" "+st+" "+itoa4(pc))
	return out
}

// outcomeRank orders outcomes from least to most found.
var outcomeRank = [...]int{
	streetNone:        0,
	streetNotFound:    1,
	numberNotFound:    2,
	unitNotFound:      3,
	addrPostcodeWrong: 4,
	streetMatched:     5,
	premiseMatched:    6,
}

// elsewhere finds the premise pm in another locality of l's name and
// state (another postcode), returning the street as printed there and the
// postcode.
func (e *Engine) elsewhere(s *scratch, pm *premise, l *Locality) (string, uint16, bool) {
	ref := e.ref
	for _, id := range ref.byKey[l.Key] {
		o := &ref.localities[id]
		if o.State != l.State || o.Postcode == l.Postcode {
			continue
		}
		for _, g := range ref.locGroups[id] {
			if m := e.matchStreet(s, pm, g, o.Postcode); m.outcome == premiseMatched || m.outcome == streetMatched {
				return ref.streets.streets[m.street].name, o.Postcode, true
			}
		}
	}
	return "", 0, false
}

// buildingBeforeNumber reads the street delivery line as "[units] NAME
// NUMBER STREET" into pm (which holds the units of the lines above, kept),
// the name being a building's: it returns the name's token range. The
// number is looked for from token from on. It reports false when no house
// number (digits, an optional letter, an optional range; not an ordinal
// like 5TH), or a unit, level or lot with the number after it, follows a
// word and precedes a street name.
func (s *scratch) buildingBeforeNumber(p *parse, pm *premise, from int) (lo, hi int, ok bool) {
	if p.delivery < 0 || p.deliveryK != deliveryStreet {
		return 0, 0, false
	}
	first, last := s.deliveryRange(p)
	var units premise
	k := s.readUnitPrefix(&units, first, last)
	for j := max(k+1, from); j+1 < last; j++ {
		w := s.word(j)
		// "CONDAMINE HOMESTEAD, LOT 68 ESSEX RD", "KINGS ROW UNIT 3 22
		// ZIG ZAG ST": a lot, unit or level after the name
		var u premise
		unit := s.readUnitPrefix(&u, j, last) > j
		if !unit {
			if w[0] < '0' || w[0] > '9' {
				continue
			}
			if flat, num, ok := bytes.Cut(w, []byte("/")); ok {
				// "PARK VIEW APARTMENTS, 5/20 MAIN ST": flat 5 at number 20
				if _, ok := encodeNumber(flat); !ok {
					continue
				}
				w = num
			}
			num, rest, isRange := bytes.Cut(w, []byte("-"))
			if _, ok := encodeNumber(num); !ok {
				continue
			}
			if isRange {
				if _, ok := encodeNumber(rest); !ok {
					continue
				}
			}
		}
		above := *pm // the unit lines above the street line
		*pm = premise{streetType: -1, suffix: -1}
		s.readStreet(pm, j, last)
		if (pm.numFirst == nil && pm.lot == nil) || pm.nameHi <= pm.nameLo {
			*pm = above
			if unit {
				continue // "SKYPOINT TOWER 9 CAVILL AV": TOWER 9 is no unit here
			}
			return 0, 0, false
		}
		for _, u := range []*premise{&units, &above} {
			if pm.flatNum == nil && u.flatNum != nil {
				pm.flatType, pm.flatNum = u.flatType, u.flatNum
			}
			if pm.levelType == "" && u.levelType != "" {
				pm.levelType, pm.levelNum = u.levelType, u.levelNum
			}
			if pm.lot == nil {
				pm.lot = u.lot
			}
		}
		return k, j, true
	}
	return 0, 0, false
}

// knownStreet reports whether tokens [lo,hi) name a street, exactly as
// the street level keys it, of a locality with the address's state and
// postcode, or of the locality named locKey in that state (nil: none):
// a street that G-NAF records without a type ("KINGSWAY", "THE
// KINGSWAY") written alone, without a number. Only the whole name counts:
// "SMITH" is a recipient, though SMITH STREET is there. It writes only
// s.skey.
func (e *Engine) knownStreet(s *scratch, p *parse, lo, hi int, locKey []byte) bool {
	st := e.ref.streets
	if st == nil || hi <= lo || !p.pcOK || p.stateTok < 0 {
		return false
	}
	pm := premise{streetType: -1, suffix: -1}
	s.readStreet(&pm, lo, hi)
	if pm.nameHi <= pm.nameLo {
		return false
	}
	s.skey = s.streetKey(s.skey[:0], &pm)
	for _, ids := range [2][]uint32{e.ref.byPostcode[p.postcode], e.ref.byKey[string(locKey)]} {
		for _, id := range ids {
			if e.ref.localities[id].State != p.state {
				continue
			}
			for _, g := range e.ref.locGroups[id] {
				if _, ok := st.findEntry(g, s.skey); ok {
					return true
				}
			}
		}
	}
	return false
}
