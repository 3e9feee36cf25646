package engine

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzNormalise: normalising never panics, its output holds only the
// canonical alphabet, and normalising twice changes nothing.
func FuzzNormalise(f *testing.F) {
	for _, s := range []string{"", "  3/72 Charles St. ", "O\u2019Connor", "18 \u2013 20", "P.O. Box 5", "Ｍｅｌｂ",
		"Zoë", "a\u0301", "\xff\xfe", "x\x00y", "C/- PO", " - / - ", "\u00a0\u2009", strings.Repeat("ab ", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once, issue := normalise(nil, s)
		if issue != normOK {
			return
		}
		if !utf8.Valid(once) {
			t.Fatalf("%q: output %q is not UTF-8", s, once)
		}
		for i, c := range once {
			ok := c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ' || c == '-' || c == '/' || c == '&' || c == '#' || c >= 0x80
			if !ok {
				t.Fatalf("%q: output %q has %q at %d", s, once, c, i)
			}
		}
		if len(once) > 0 && (once[0] == ' ' || once[len(once)-1] == ' ' || strings.Contains(string(once), "  ")) {
			t.Fatalf("%q: output %q has stray spaces", s, once)
		}
		twice, issue := normalise(nil, string(once))
		if issue != normOK && issue != normTooLong {
			t.Fatalf("%q: renormalising %q: issue %d", s, once, issue)
		}
		if issue == normOK && string(twice) != string(once) {
			t.Fatalf("%q: normalise not idempotent: %q then %q", s, once, twice)
		}
		// the canonical locality key is idempotent too
		k1 := canonicalLocalityBytes(nil, once)
		if k2 := canonicalLocalityBytes(nil, k1); string(k1) != string(k2) {
			t.Fatalf("%q: canonical key not idempotent: %q then %q", s, k1, k2)
		}
	})
}
