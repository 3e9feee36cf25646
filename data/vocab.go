package data

// Term is one entry of a vocabulary we maintain ourselves: the canonical full
// word, the abbreviation that G-NAF and Australia Post print, and the other
// spellings people write. All values are upper case ASCII with single spaces.
type Term struct {
	Full  string   // canonical full form, e.g. "AVENUE"
	Abbr  string   // preferred abbreviation, e.g. "AV"; empty when none
	Other []string // further spellings that mean the same, e.g. "AVE", "AVN"
}

// Spellings returns every spelling of t: Full, Abbr and Other, without blanks.
func (t Term) Spellings() []string {
	s := make([]string, 0, 2+len(t.Other))
	s = append(s, t.Full)
	if t.Abbr != "" && t.Abbr != t.Full {
		s = append(s, t.Abbr)
	}
	for _, o := range t.Other {
		if o != "" && o != t.Full && o != t.Abbr {
			s = append(s, o)
		}
	}
	return s
}
