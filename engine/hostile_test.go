package engine_test

import (
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/engine"
)

// FuzzCheck: any input lines get a verdict, with or without detail, never a
// panic; the detailed and plain verdicts agree.
func FuzzCheck(f *testing.F) {
	e := newEngine(f, true)
	for _, s := range []string{"Joe\n10 Jones St\nMelbourne VIC 3000", "a,b,c", "PO Box 1\nx\nSydney NSW 2001",
		"Jo\n1 Rd\nWA 6333\nDenmark", "\n\n\n", "Jo\n\xff\nMelbourne VIC 3000", "1\n2\n3\n4\n5\n6\n7",
		"Jo\nUnit 1-19 25 Smith St\nFitzroy 3065 VIC", "10 Downing St, London, UK", "VIC VIC VIC\nVIC 3000\n3000 3000",
		"Jo\n1 Main St\n2000\nSydney\nNSW", "Jo\n1 Main St\nNSW\n2000 Sydney", "Jo\n2000 NSW\nSydney\n2000 2000", "2000\nVIC\n3000 VIC 3000\nNSW",
		// issue 13's classes
		"Jo\nAcme\nUnit 2 10 Jones St Melborne VIC 3000", "Jo\n10 Jones St Melbourne\nVIC 3000", "Jo\nCnr George and Market Streets\nSydney NSW 2000",
		"Jo\nCNR & AND STS\nCNR OF AND &", "Jo\nPOBOX123\nSydney NSW 2000", "BOX1\nPMB7 POB8\nLMB9", "Jo\nEsplanade\nCairns City QLD 4870",
		"Jo\n1 Main St\nBavaria Germany", "Jo\n1 Main St\nThe The", "...\n...\n...", "Jo\nAcme\n2000 NSW 12 George St Sydney",
		"Jo\nCONDAMINE HOMESTEAD, LOT 68 ESSEX RD\nHAT HEAD NSW 2440", "Jo\nSHOP 1 GROUND 14 BARRETT ST\nBRADDON ACT 2612",
		// issue 13's leftovers
		"Jo\n10 Jones St Melbourne VIC\n3000", "Jo\nVIC 3000\n10 Jones St\nMelbourne", "Jo\nACT 2600\nParliament Drive\nCanberra",
		"Jo\nNSW 2000\nSydney\n12 George St", "Jo\nKingsway\nGlen Waverley VIC 3150", "Jo\nAcme\n1 Kingsway Glen Waverly VIC 3150",
		"VIC 3000\nVIC 3000\nVIC 3000", "3000 VIC\n1 VIC\n3000", "Jo\n10 Jones St VIC\n3000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		plain := e.CheckString(s, false)
		detail := e.CheckString(s, true)
		if plain.Status < engine.StatusInvalid || plain.Status > engine.StatusInternational {
			t.Fatalf("%q: bad status %d", s, plain.Status)
		}
		if plain.Status != detail.Status || plain.Nation != detail.Nation || plain.Message != detail.Message {
			t.Fatalf("%q: plain %+v, detailed %+v", s, plain, detail)
		}
		if detail.Detail == nil {
			t.Fatalf("%q: no detail", s)
		}
		if (plain.Status == engine.StatusInvalid) != (plain.Message != "") {
			t.Fatalf("%q: status %s with message %q", s, plain.Status, plain.Message)
		}
	})
}

// TestHostileInput: bad input gets a verdict in bounded time, never a
// panic. Time is bounded by construction (every step is linear in the
// input); the test checks the verdicts.
func TestHostileInput(t *testing.T) {
	e := newEngine(t, true)
	f := func(name string, status engine.Status, msg string, lines ...string) {
		t.Helper()
		for _, detail := range []bool{false, true} {
			r := e.Check(lines, detail)
			if r.Status != status || !strings.Contains(r.Message, msg) {
				t.Errorf("%s (detail %v): %s %q, want %s containing %q", name, detail, r.Status, r.Message, status, msg)
			}
		}
	}
	big := strings.Repeat("A", 10<<20)
	many := make([]string, 10_000)
	for i := range many {
		many[i] = "line"
	}
	f("invalid UTF-8", engine.StatusInvalid, "UTF-8", "Jo", "1 Smith St \xc3\x28", "Melbourne VIC 3000")
	f("NUL byte", engine.StatusInvalid, "control", "Jo\x00", "1 Smith St", "Melbourne VIC 3000")
	f("DEL", engine.StatusInvalid, "control", "Jo\x7f", "1 Smith St", "Melbourne VIC 3000")
	f("C1 control", engine.StatusInvalid, "control", "Jo\u0085", "1 Smith St", "Melbourne VIC 3000")
	f("bidi override", engine.StatusInvalid, "control", "Jo\u202e", "1 Smith St", "Melbourne VIC 3000")
	f("10 MB component", engine.StatusInvalid, "longer than 100", "Jo", big, "Melbourne VIC 3000")
	f("10 MB of spaces", engine.StatusMatched, "", "Jo"+strings.Repeat(" ", 10<<20), "1 Smith St", "Melbourne VIC 3000")
	f("10,000 components", engine.StatusInvalid, "this one has 10000", many...)
	f("repeated tokens", engine.StatusInvalid, "", "Jo", strings.TrimSpace(strings.Repeat("VIC ", 25)), strings.TrimSpace(strings.Repeat("3000 ", 20)))
	f("repeated states", engine.StatusInvalid, "", "Jo", "1 Smith St", strings.TrimSpace(strings.Repeat("NSW ", 25)))
	f("only punctuation", engine.StatusInvalid, "no state and postcode", "...", "---", "///")
	f("punctuation lines count", engine.StatusInvalid, "this one has 7", "...", "Jo", "Acme", "Level 2", "100 George St", "Sydney NSW 2000", "...")
	f("empty", engine.StatusInvalid, "this one has 0")
	f("100 characters exactly", engine.StatusUnmatched, "", "Jo", "1 "+strings.Repeat("X", 95)+" St", "Nowhere VIC 3000")
	f("100 with trailing spaces", engine.StatusUnmatched, "", "Jo", "1 "+strings.Repeat("X", 95)+" St   ", "Nowhere VIC 3000")
	f("101 characters", engine.StatusInvalid, "longer than 100", "Jo", "1 "+strings.Repeat("X", 96)+" St", "Nowhere VIC 3000")
	f("digits only", engine.StatusInvalid, "", "1", "2", "3")
	f("huge postcode", engine.StatusInvalid, "not 4 digits", "Jo", "1 Smith St", "Melbourne VIC "+strings.Repeat("9", 20))
	f("emoji", engine.StatusMatched, "", "Jo 😀", "1 Smith St", "Melbourne VIC 3000")
	f("zero width", engine.StatusMatched, "", "Jo", "1 Smith\u200b St", "Mel\u200bbourne VIC 3000")
}
