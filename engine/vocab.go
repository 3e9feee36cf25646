package engine

import (
	"strings"

	"github.com/lodge-mail/lodge/data"
)

// phrases maps the normalised spellings of one vocabulary to the index of
// their term. Lookups take a normalised byte slice: Go's map lookup with
// string(b) does not allocate.
type phrases struct {
	m        map[string]uint16
	maxWords int
}

func newPhrases(terms []data.Term) phrases {
	p := phrases{m: map[string]uint16{}}
	for i, t := range terms {
		for _, s := range t.Spellings() {
			p.add(s, uint16(i))
		}
	}
	return p
}

func (p *phrases) add(spelling string, idx uint16) {
	buf, issue := normalise(nil, strings.TrimSpace(spelling))
	if issue != normOK || len(buf) == 0 {
		return
	}
	k := string(buf)
	if _, dup := p.m[k]; dup {
		return
	}
	p.m[k] = idx
	if w := strings.Count(k, " ") + 1; w > p.maxWords {
		p.maxWords = w
	}
}

func (p *phrases) lookup(b []byte) (uint16, bool) {
	i, ok := p.m[string(b)]
	return i, ok
}

// vocab holds the lookup tables built once from package data.
type vocab struct {
	streetTypes  phrases
	streetSuffix phrases
	flatTypes    phrases
	levelTypes   phrases
	postal       phrases
	states       phrases // index into data.States
	ordinalLevel map[string]bool
	// postalGlue holds the one-word postal spellings a number may be
	// glued to ("POBOX123", "PO BOX123", "LOCKEDBAG5", "PMB7"): tokenise
	// splits the number off.
	postalGlue map[string]bool
}

var voc = buildVocab()

func buildVocab() *vocab {
	v := &vocab{
		streetTypes:  newPhrases(data.StreetTypes),
		streetSuffix: newPhrases(data.StreetSuffixes),
		flatTypes:    newPhrases(data.FlatTypes),
		levelTypes:   newPhrases(data.LevelTypes),
		postal:       newPhrases(data.PostalDeliveryTypes),
		states:       phrases{m: map[string]uint16{}},
	}
	for i, s := range data.States {
		v.states.add(s.Abbr, uint16(i))
		// "N.S.W." and "W.A." normalise to letters with spaces between
		v.states.add(strings.Join(strings.Split(s.Abbr, ""), " "), uint16(i))
		v.states.add(s.Name, uint16(i))
		for _, a := range s.Aliases {
			v.states.add(a, uint16(i))
		}
	}
	// Postal delivery types written run together or hyphenated
	// ("POBox", "Lockedbag", "GPOBox", "Private-Bag"), and the words a
	// number is glued to.
	v.postalGlue = map[string]bool{}
	for i, t := range data.PostalDeliveryTypes {
		for _, sp := range t.Spellings() {
			words := strings.Fields(sp)
			if len(words) > 1 && !strings.ContainsAny(sp, "/") {
				v.postal.add(strings.Join(words, ""), uint16(i))
				v.postal.add(strings.Join(words, "-"), uint16(i))
				v.postalGlue[words[len(words)-1]] = true
				v.postalGlue[strings.Join(words, "")] = true
			} else if len(words) == 1 && len(sp) >= 3 {
				v.postalGlue[sp] = true // POB, PMB, LMB, RMB, RSD ...
			}
		}
	}
	// Postal spellings people write that are not Australia Post's: dotted
	// initials ("R.M.B.", "P.O.B.", "L.M.B."), which normalise to letters
	// with spaces between; "NO" or "NUMBER" between the type and its
	// number ("PO BOX NO 45", "LOCKED BAG NO 3"); "BOX" and "P/O BOX" for
	// a PO box.
	for i, t := range data.PostalDeliveryTypes {
		for _, sp := range t.Spellings() {
			if len(sp) >= 3 && strings.Trim(sp, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" {
				v.postal.add(strings.Join(strings.Split(sp, ""), " "), uint16(i))
			}
			if !postalNeedsNoNumber(uint16(i)) {
				v.postal.add(sp+" NO", uint16(i))
				v.postal.add(sp+" NUMBER", uint16(i))
			}
		}
	}
	if pb, ok := v.postal.lookup([]byte("PO BOX")); ok {
		for _, s := range []string{"BOX", "P/O BOX", "BOX NO"} {
			v.postal.add(s, pb)
		}
	}
	// Flat shorthands people write that are not G-NAF spellings.
	if u, ok := v.flatTypes.lookup([]byte("UNIT")); ok {
		for _, s := range []string{"U", "UNIT NO", "UNIT NUMBER", "#"} {
			v.flatTypes.add(s, u)
		}
	}
	return v
}

func postalFull(idx uint16) string { return data.PostalDeliveryTypes[idx].Full }

func (v *vocab) streetTypeFull(idx uint16) string { return data.StreetTypes[idx].Full }

func (v *vocab) suffixAbbr(idx uint16) string {
	if a := data.StreetSuffixes[idx].Abbr; a != "" {
		return a
	}
	return data.StreetSuffixes[idx].Full
}

func (v *vocab) levelCode(idx uint16) string {
	if a := data.LevelTypes[idx].Abbr; a != "" {
		return a
	}
	return data.LevelTypes[idx].Full
}

// streetTypeAbbrOf returns the printed abbreviation of a street type given
// in full ("AVENUE" → "AV").
func (v *vocab) streetTypeAbbrOf(full string) string {
	if idx, ok := v.streetTypes.lookup([]byte(full)); ok && data.StreetTypes[idx].Abbr != "" {
		return data.StreetTypes[idx].Abbr
	}
	return full
}
