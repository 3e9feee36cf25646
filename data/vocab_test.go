package data

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"
)

// gnafCodesPath is the G-NAF authority code list, relative to this package.
const gnafCodesPath = "../../shared/data/gnaf-codes/gnaf_codes.csv"

// notStreetTypes are G-NAF street type codes we leave out of StreetTypes on
// purpose, with the reason.
var notStreetTypes = map[string]string{
	"NULL": "G-NAF's placeholder for a street without a type, not a type",
}

var vocabTables = []struct {
	name  string
	terms []Term
}{
	{"StreetTypes", StreetTypes},
	{"FlatTypes", FlatTypes},
	{"LevelTypes", LevelTypes},
	{"StreetSuffixes", StreetSuffixes},
	{"PostalDeliveryTypes", PostalDeliveryTypes},
}

// badSpelling says what is wrong with s as a vocabulary value, or "".
func badSpelling(s string) string {
	if s == "" {
		return "empty"
	}
	if strings.TrimSpace(s) != s {
		return "leading or trailing space"
	}
	if strings.Contains(s, "  ") {
		return "double space"
	}
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ' || c == '/' || c == '-') {
			return "character " + string(c) + " is not A-Z, 0-9, space, '/' or '-'"
		}
	}
	return ""
}

func TestVocabSpellingsWellFormed(t *testing.T) {
	f := func(table string, terms []Term) {
		t.Helper()
		for i, term := range terms {
			if why := badSpelling(term.Full); why != "" {
				t.Errorf("%s[%d] Full %q: %s", table, i, term.Full, why)
			}
			if term.Abbr != "" {
				if why := badSpelling(term.Abbr); why != "" {
					t.Errorf("%s[%d] %s: Abbr %q: %s", table, i, term.Full, term.Abbr, why)
				}
			}
			seen := map[string]bool{term.Full: true, term.Abbr: true}
			for _, o := range term.Other {
				if why := badSpelling(o); why != "" {
					t.Errorf("%s[%d] %s: Other %q: %s", table, i, term.Full, o, why)
				}
				if seen[o] {
					t.Errorf("%s[%d] %s: Other %q repeats a spelling of the same term", table, i, term.Full, o)
				}
				seen[o] = true
			}
		}
	}
	for _, tb := range vocabTables {
		f(tb.name, tb.terms)
	}
}

func TestVocabNoSharedSpellings(t *testing.T) {
	f := func(table string, terms []Term) {
		t.Helper()
		owners := map[string][]string{}
		for _, term := range terms {
			for _, s := range term.Spellings() {
				owners[s] = append(owners[s], term.Full)
			}
		}
		var clashes []string
		for s, fulls := range owners {
			if len(fulls) > 1 {
				clashes = append(clashes, s+" ("+strings.Join(fulls, ", ")+")")
			}
		}
		if len(clashes) > 0 {
			sort.Strings(clashes)
			t.Errorf("%s: spellings shared by more than one term:\n\t%s", table, strings.Join(clashes, "\n\t"))
		}
	}
	for _, tb := range vocabTables {
		f(tb.name, tb.terms)
	}
}

func TestVocabCounts(t *testing.T) {
	f := func(table string, got, lo, hi int) {
		t.Helper()
		if got < lo || got > hi {
			t.Errorf("%s has %d terms, want %d..%d", table, got, lo, hi)
		}
	}
	f("StreetTypes", len(StreetTypes), 260, 400)
	f("FlatTypes", len(FlatTypes), 53, 53)
	f("LevelTypes", len(LevelTypes), 14, 14)
	f("StreetSuffixes", len(StreetSuffixes), 19, 19)
	f("PostalDeliveryTypes", len(PostalDeliveryTypes), 12, 12)
}

// find returns the term of terms that has spelling s, or nil.
func find(terms []Term, s string) *Term {
	for i := range terms {
		if slices.Contains(terms[i].Spellings(), s) {
			return &terms[i]
		}
	}
	return nil
}

func TestVocabKnownSpellings(t *testing.T) {
	f := func(terms []Term, spelling, full, abbr string) {
		t.Helper()
		term := find(terms, spelling)
		switch {
		case term == nil:
			t.Errorf("%q: no term", spelling)
		case term.Full != full || term.Abbr != abbr:
			t.Errorf("%q: got %q/%q, want %q/%q", spelling, term.Full, term.Abbr, full, abbr)
		}
	}
	f(StreetTypes, "AVENUE", "AVENUE", "AV")
	f(StreetTypes, "AVE", "AVENUE", "AV")
	f(StreetTypes, "ST", "STREET", "ST")
	f(StreetTypes, "RD", "ROAD", "RD")
	f(StreetTypes, "ESP", "ESPLANADE", "ESP")
	f(StreetTypes, "PDE", "PARADE", "PDE")
	f(StreetTypes, "TERR", "TERRACE", "TCE")
	f(StreetTypes, "CRES", "CRESCENT", "CR")
	f(StreetTypes, "CRESC", "CRESCENT", "CR")
	f(StreetTypes, "CL", "CLOSE", "CL")
	f(StreetTypes, "CRT", "COURT", "CT")
	f(StreetTypes, "PLC", "PLACE", "PL")
	f(StreetTypes, "DR", "DRIVE", "DR")
	f(StreetTypes, "HWAY", "HIGHWAY", "HWY")
	f(StreetTypes, "BLVD", "BOULEVARD", "BVD")
	f(StreetTypes, "CCT", "CIRCUIT", "CCT")
	f(StreetTypes, "GR", "GROVE", "GR")
	f(StreetTypes, "LANE", "LANE", "LANE")
	f(StreetTypes, "WAY", "WAY", "WAY")
	f(StreetTypes, "CSAC", "CUL-DE-SAC", "CSAC")
	f(FlatTypes, "U", "UNIT", "UNIT")
	f(FlatTypes, "APPT", "APARTMENT", "APT")
	f(FlatTypes, "STE", "SUITE", "SE")
	f(FlatTypes, "VILLA", "VILLA", "VLLA")
	f(FlatTypes, "TOWNHOUSE", "TOWNHOUSE", "TNHS")
	f(FlatTypes, "OFFICE", "OFFICE", "OFFC")
	f(FlatTypes, "LOT", "LOT", "LOT")
	f(LevelTypes, "GROUND FLOOR", "GROUND", "G")
	f(LevelTypes, "LVL", "LEVEL", "L")
	f(LevelTypes, "MEZZ", "MEZZANINE", "M")
	f(LevelTypes, "UPPER GROUND FLOOR", "UPPER GROUND", "UG")
	f(LevelTypes, "SB", "SUB-BASEMENT", "SB")
	f(StreetSuffixes, "NORTH EAST", "NORTH EAST", "NE")
	f(StreetSuffixes, "OFF", "OFF", "OF")
	f(PostalDeliveryTypes, "POST OFFICE BOX", "PO BOX", "")
	f(PostalDeliveryTypes, "LMB", "LOCKED BAG", "")
	f(PostalDeliveryTypes, "C/- POST OFFICE", "CARE PO", "")
	f(PostalDeliveryTypes, "ROADSIDE MAIL BOX", "RMB", "")
}

// gnafCodes reads the G-NAF code list, grouped by table and then by label.
func gnafCodes(t *testing.T) map[string]map[string][]Code {
	t.Helper()
	fh, err := os.Open(gnafCodesPath)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s not present", gnafCodesPath)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	byTable := map[string]map[string][]Code{}
	err = ReadCodes(fh, gnafCodesPath, func(c *Code) error {
		if byTable[c.Table] == nil {
			byTable[c.Table] = map[string][]Code{}
		}
		byTable[c.Table][c.Label] = append(byTable[c.Table][c.Label], *c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return byTable
}

func TestStreetTypesCoverGNAF(t *testing.T) {
	byLabel := gnafCodes(t)["Street"]
	if len(byLabel) == 0 {
		t.Fatal("no Street rows in the G-NAF code list")
	}
	// f checks one G-NAF street type: its codes must all be spellings of
	// one term whose Full is the label's word and whose Abbr is one of the
	// codes. A label with two codes is exactly Full and Abbr; a third code
	// (AVE, CRES) is an Other.
	f := func(label string, codes []string) {
		t.Helper()
		full := strings.ToUpper(label)
		if why, ok := notStreetTypes[full]; ok {
			if term := find(StreetTypes, full); term != nil {
				t.Errorf("street type %s is listed as left out (%s) but is in StreetTypes", full, why)
			}
			return
		}
		term := find(StreetTypes, full)
		if term == nil {
			t.Errorf("G-NAF street type %s (codes %v): no StreetTypes term", label, codes)
			return
		}
		if term.Full != full {
			t.Errorf("G-NAF street type %s: term has Full %q, want %q", label, term.Full, full)
		}
		for _, c := range codes {
			if owner := find(StreetTypes, c); owner != term {
				got := "no term"
				if owner != nil {
					got = owner.Full
				}
				t.Errorf("G-NAF street type %s: code %s maps to %s, want %s", label, c, got, term.Full)
			}
		}
		if !slices.Contains(codes, term.Abbr) {
			t.Errorf("G-NAF street type %s: Abbr %q is not one of G-NAF's codes %v", label, term.Abbr, codes)
		}
		if len(codes) == 2 && term.Abbr == term.Full {
			t.Errorf("G-NAF street type %s: codes %v, but Abbr is the full word", label, codes)
		}
	}
	labels := make([]string, 0, len(byLabel))
	for l := range byLabel {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	for _, l := range labels {
		var codes []string
		for _, c := range byLabel[l] {
			codes = append(codes, strings.ToUpper(c.Code))
		}
		f(l, codes)
	}
}

func TestFlatTypesMatchGNAF(t *testing.T) {
	byLabel := gnafCodes(t)["Flat"]
	if len(byLabel) == 0 {
		t.Fatal("no Flat rows in the G-NAF code list")
	}
	known := map[string]bool{}
	f := func(code, label string) {
		t.Helper()
		known[code] = true
		for _, term := range FlatTypes {
			if term.Abbr == code {
				if want := strings.ToUpper(label); term.Full != want {
					t.Errorf("flat type %s: Full %q, want %q", code, term.Full, want)
				}
				return
			}
		}
		t.Errorf("G-NAF flat type %s (%s) is no FlatTypes Abbr", code, label)
	}
	for l, cs := range byLabel {
		for _, c := range cs {
			f(strings.ToUpper(c.Code), l)
		}
	}
	for _, term := range FlatTypes {
		if !known[term.Abbr] {
			t.Errorf("FlatTypes %s: Abbr %q is not a G-NAF flat code", term.Full, term.Abbr)
		}
	}
}

func TestStreetSuffixesMatchGNAF(t *testing.T) {
	byLabel := gnafCodes(t)["StreetSuffix"]
	if len(byLabel) == 0 {
		t.Fatal("no StreetSuffix rows in the G-NAF code list")
	}
	known := map[string]bool{}
	// f checks one suffix: the CSV's code is the full word and its URI ends
	// with the abbreviation.
	f := func(full, abbr string) {
		t.Helper()
		known[full] = true
		term := find(StreetSuffixes, full)
		switch {
		case term == nil:
			t.Errorf("G-NAF street suffix %s (%s): no StreetSuffixes term", full, abbr)
		case term.Full != full || term.Abbr != abbr:
			t.Errorf("G-NAF street suffix %s/%s: term is %s/%s", full, abbr, term.Full, term.Abbr)
		}
	}
	for _, cs := range byLabel {
		for _, c := range cs {
			f(strings.ToUpper(c.Code), strings.ToUpper(path.Base(c.URI)))
		}
	}
	for _, term := range StreetSuffixes {
		if !known[term.Full] {
			t.Errorf("StreetSuffixes %s is not a G-NAF street suffix", term.Full)
		}
	}
}
