package engine

import (
	"strings"
	"unsafe"
)

// maxEdits is how many edits a misspelt name of n bytes may carry and
// still be corrected: short names are easy to confuse.
func maxEdits(n int) int {
	switch {
	case n <= 4:
		return 1
	default:
		return 2
	}
}

// editDistance is the optimal string alignment distance (Levenshtein with
// transpositions) between a and b, giving up with limit+1 once it exceeds
// limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return limit + 1
	}
	var rows [3][65]int
	prev2, prev, cur := &rows[0], &rows[1], &rows[2]
	for j := 0; j <= len(b); j++ {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			best = min(best, v)
		}
		if best > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// candidate is a locality that could be what the address meant.
type candidate struct {
	id    uint32
	dist  int
	fault string
}

// suggest explains an unmatched locality and, when there is one clear
// candidate, writes the corrected address lines to d.Suggestion.
func (e *Engine) suggest(s *scratch, p *parse, d *Detail) {
	ref := e.ref
	key := string(s.localityKey(p))
	var best []candidate
	consider := func(c candidate) {
		if len(best) == 0 || c.dist < best[0].dist {
			best = append(best[:0], c)
			return
		}
		if c.dist == best[0].dist {
			for _, b := range best {
				if b.id == c.id {
					return
				}
			}
			best = append(best, c)
		}
	}
	// 1. the name exists, with another postcode or state
	if ids := ref.byKey[key]; len(ids) > 0 {
		var sameState, samePC []uint32
		for _, id := range ids {
			l := &ref.localities[id]
			if l.State == p.state {
				sameState = append(sameState, id)
			} else if l.Postcode == p.postcode {
				samePC = append(samePC, id)
			}
		}
		if p.deliveryK == deliveryStreet {
			// a street address cannot be at a box-only postcode
			sameState = dropBoxOnly(ref, sameState)
			samePC = dropBoxOnly(ref, samePC)
		}
		switch {
		case len(sameState) > 0:
			for _, id := range sameState {
				consider(candidate{id: id, fault: FaultLocalityPostcode})
			}
		case len(samePC) > 0:
			for _, id := range samePC {
				consider(candidate{id: id, fault: FaultLocalityState})
			}
		}
	}
	// A New Zealand place with its own postcode ("AUCKLAND 1010") under an
	// Australian state is no misspelling of an Australian one.
	nz := len(best) == 0 && e.isNewZealand(s, p)
	key = string(s.localityKey(p)) // isNewZealand reuses s.key
	// 2. a misspelling of a locality with this postcode
	if len(best) == 0 && !nz {
		for _, id := range ref.byPostcode[p.postcode] {
			l := &ref.localities[id]
			lim := maxEdits(len(key))
			if dist := editDistance(key, l.Key, lim); dist <= lim && dist > 0 {
				consider(candidate{id: id, dist: dist, fault: FaultLocalitySpelling})
			}
		}
		if len(best) > 1 {
			// prefer the pairing in the stated state
			var inState []candidate
			for _, c := range best {
				if ref.localities[c.id].State == p.state {
					inState = append(inState, c)
				}
			}
			if len(inState) > 0 {
				best = inState
			}
		}
	}
	// 3. a misspelling anywhere in the state
	if len(best) == 0 && !nz {
		lim := maxEdits(len(key))
		var ids []uint32
		if ref.corrector != nil {
			ids = ref.corrector.Similar(key, 20)
		} else {
			ids = ref.scanSimilar(key, p.state, lim)
		}
		for _, id := range ids {
			l := &ref.localities[id]
			if l.State != p.state {
				continue
			}
			if dist := editDistance(key, l.Key, lim); dist <= lim {
				consider(candidate{id: id, dist: dist, fault: FaultLocalitySpelling})
			}
		}
		best = preferPostcodeNear(best, ref, p.postcode)
	}
	if len(best) > 1 && ref.streets != nil && p.deliveryK == deliveryStreet {
		// The street level tells which of them has this address.
		var pm premise
		s.readPremise(p, &pm)
		var hit []candidate
		for _, c := range best {
			for _, g := range ref.locGroups[c.id] {
				if e.matchStreet(s, &pm, g, ref.localities[c.id].Postcode).outcome == premiseMatched {
					hit = append(hit, c)
					break
				}
			}
		}
		if len(hit) > 0 {
			best = hit
		}
	}
	switch len(best) {
	case 0:
		d.Faults = append(d.Faults, FaultLocalityUnknown)
	case 1:
		d.Faults = append(d.Faults, best[0].fault)
		d.Suggestion = e.suggestionLines(s, p, &ref.localities[best[0].id])
	default:
		d.Faults = append(d.Faults, best[0].fault, FaultAmbiguous)
	}
}

// dropBoxOnly removes box-only localities from ids unless all are.
func dropBoxOnly(ref *Reference, ids []uint32) []uint32 {
	var out []uint32
	for _, id := range ids {
		if !ref.localities[id].BoxOnly && !ref.boxOnly(ref.localities[id].Postcode) {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return ids
	}
	return out
}

// preferPostcodeNear keeps, among equally close candidates, the one whose
// postcode is nearest the given one when exactly one is nearest.
func preferPostcodeNear(best []candidate, ref *Reference, pc uint16) []candidate {
	if len(best) < 2 {
		return best
	}
	bestGap, n := 1<<30, 0
	var keep candidate
	for _, c := range best {
		gap := int(ref.localities[c.id].Postcode) - int(pc)
		if gap < 0 {
			gap = -gap
		}
		if gap < bestGap {
			bestGap, n, keep = gap, 1, c
		} else if gap == bestGap {
			n++
		}
	}
	if n == 1 && bestGap <= 10 {
		return []candidate{keep}
	}
	return best
}

// scanSimilar is the built-in fuzzy candidate source: every locality of
// the state within lim edits of key.
func (r *Reference) scanSimilar(key string, st State, lim int) []uint32 {
	var out []uint32
	for i := range r.localities {
		l := &r.localities[i]
		if l.State != st {
			continue
		}
		if editDistance(key, l.Key, lim) <= lim {
			out = append(out, uint32(i))
		}
	}
	return out
}

// suggestionLines writes the address with its locality line corrected.
func (e *Engine) suggestionLines(s *scratch, p *parse, l *Locality) []string {
	var out []string
	for c := 0; c < p.n && c < p.tailStart; c++ {
		if !s.tailOnly(c) {
			out = append(out, string(s.comp(c)))
		}
	}
	if p.streetSplit >= 0 && p.delivery >= 0 {
		out = append(out, string(s.buf[s.toks[p.streetLo].start:s.toks[p.streetSplit-1].end]))
	}
	st := l.State.String()
	if p.state.String() == "JBT" {
		st = "JBT"
	}
	out = append(out, strings.Join([]string{l.Name, st, itoa4(l.Postcode)}, " "))
	return out
}

// bytesString views b as a string without copying, for comparing a key
// built in the scratch buffer; the string must not outlive b's contents
// as they are.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
