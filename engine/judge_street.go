package engine

import "strings"

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
	if m.typeFix {
		d.Faults = append(d.Faults, FaultStreetType)
		d.Suggestion = e.premiseLines(s, p, unitLine, pm, st.streets[m.street].name, "", l.Name, p.postcode)
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
		d.Suggestion = e.premiseLines(s, p, unitLine, pm, st.streets[m.street].name, "", l.Name, m.pc)
	}
	return r, true
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
		if unitLines&(1<<c) == 0 {
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
