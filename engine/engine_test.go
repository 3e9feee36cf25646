package engine_test

import (
	"os"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/testref"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testref.Cleanup()
	os.Exit(code)
}

func newEngine(tb testing.TB, cache bool) *engine.Engine {
	tb.Helper()
	ix := testref.Index(tb)
	cfg := engine.Config{}
	if !cache {
		cfg.CacheEntries = -1
	}
	e, err := engine.New(ix.Ref, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(e.Close)
	return e
}

// TestVerdicts is the table of verdicts: one line per case, the address as
// lines, the status and nation expected and, for invalid addresses, a
// fragment the message must contain.
func TestVerdicts(t *testing.T) {
	e := newEngine(t, false)
	f := func(status, nation, msg string, lines ...string) {
		t.Helper()
		r := e.Check(lines, false)
		if r.Status.String() != status || r.Nation != nation {
			d := e.Check(lines, true).Detail
			t.Errorf("%q: got %s %s %q, want %s %s (detail %+v)", lines, r.Status, r.Nation, r.Message, status, nation, d)
			return
		}
		if msg != "" && !strings.Contains(r.Message, msg) {
			t.Errorf("%q: message %q lacks %q", lines, r.Message, msg)
		}
		if status != "invalid" && r.Message != "" {
			t.Errorf("%q: %s with message %q", lines, status, r.Message)
		}
	}
	m, u, inv, intl := "matched", "unmatched", "invalid", "international"

	// matched at locality granularity
	f(m, "AUS", "", "Joe Blogs", "10 Jones St", "Melbourne VIC 3000")
	f(m, "AUS", "", "JOE BLOGS", "75 SHORTLAND ESP", "NEWCASTLE NSW 2300")
	f(m, "AUS", "", "Joe Blogs", "3/72 Charles St", "St Kilda VIC 3182")
	f(m, "AUS", "", "Joe Blogs", "U 20, 25 Smith St", "Fitzroy VIC 3065")
	f(m, "AUS", "", "Joe Blogs", "U 20", "25 Smith St", "Fitzroy VIC 3065")
	f(m, "AUS", "", "Joe Blogs", "Unit 1-19 25 Smith St", "Fitzroy VIC 3065")
	f(m, "AUS", "", "Joe Blogs", "Lot 16 Aerodrome Rd", "Applethorpe QLD 4378")
	f(m, "AUS", "", "Joe Blogs", "18-20 Courallie Av", "Homebush West NSW 2140")
	f(m, "AUS", "", "Joe Blogs", "455A Smith St", "Fitzroy VIC 3065")
	f(m, "AUS", "", "Joe Blogs", "Level 3", "100 George St", "Sydney NSW 2000")
	f(m, "AUS", "", "Joe Blogs", "Rosehill Apartments", "3 Randwick Rd", "Emerald QLD 4720")
	// the tail split and ordered every way
	f(m, "AUS", "", "Joe Blogs", "10 Jones St", "Melbourne", "VIC 3000")
	f(m, "AUS", "", "Joe Blogs", "10 Jones St", "Melbourne", "VIC", "3000")
	f(m, "AUS", "", "Joe Blogs", "10 Jones St", "VIC 3000 Melbourne")
	f(m, "AUS", "", "Joe Blogs", "10 Jones St", "Melbourne 3000 VIC")
	f(m, "AUS", "", "Joe Blogs", "10 Jones St", "Melbourne VIC", "3000")
	f(m, "AUS", "", "Joe Blogs", "10 Jones St", "VIC 3000", "Melbourne")
	f(m, "AUS", "", "Joe Blogs", "10 Jones St", "Melbourne Victoria 3000")
	f(m, "AUS", "", "Joe Blogs", "Unit 5", "10 Jones St Melbourne VIC 3000")
	f(m, "AUS", "", "Joe Blogs", "10 Jones St", "Melbourne VIC 3000", "Australia")
	f(m, "AUS", "", "Joe Blogs", "10 Jones St", "Melbourne VIC 3000", "AUS")
	// case, spacing, punctuation and Unicode never change a verdict
	f(m, "AUS", "", "joe blogs", "10 jones street", "melbourne vic 3000")
	f(m, "AUS", "", "Joe  Blogs", "10\u00a0Jones\u00a0St.", "  Melbourne,  VIC   3000 ")
	f(m, "AUS", "", "Joe Blogs", "18\u201320 Courallie Ave", "Homebush West NSW 2140")
	f(m, "AUS", "", "Mr O\u2019Connor", "1 Smith St", "O\u2019Connor ACT 2602")
	f(m, "AUS", "", "Mr O'Connor", "1 Smith St", "OCONNOR ACT 2602")
	f(m, "AUS", "", "Joe Blogs", "1 Smith St", "Saint Kilda VIC 3182")
	f(m, "AUS", "", "Joe Blogs", "1 Smith St", "Mount Isa QLD 4825")
	f(m, "AUS", "", "Joe Blogs", "1 Smith St", "Mt Isa QLD 4825")
	f(m, "AUS", "", "Joe Blogs", "1 Smith St", "Ｍｅｌｂｏｕｒｎｅ VIC 3000")
	f(m, "AUS", "", "Zoë Blogs", "1 Smith St", "Melbourne VIC 3000")
	// postal delivery types
	f(m, "AUS", "", "Joe Blogs", "PO Box 123", "Melbourne VIC 3000")
	f(m, "AUS", "", "Joe Blogs", "P.O. Box 123", "Melbourne VIC 3000")
	f(m, "AUS", "", "Joe Blogs", "POB 123", "Melbourne VIC 3000")
	f(m, "AUS", "", "Joe Blogs", "GPO Box 1234", "Sydney NSW 2001")
	f(m, "AUS", "", "Joe Blogs", "Locked Bag 5", "Parramatta NSW 2150")
	f(m, "AUS", "", "Joe Blogs", "Private Bag 7", "Alice Springs NT 0870")
	f(m, "AUS", "", "Joe Blogs", "RMB 1234", "Denmark WA 6333")
	f(m, "AUS", "", "Joe Blogs", "RSD 45", "Mount Gambier SA 5290")
	f(m, "AUS", "", "Joe Blogs", "RMS 12", "Toowoomba QLD 4350")
	f(m, "AUS", "", "Joe Blogs", "CMB 9", "Roma QLD 4455")
	f(m, "AUS", "", "Joe Blogs", "CMA 9", "Roma QLD 4455")
	f(m, "AUS", "", "Joe Blogs", "CPA 9", "Roma QLD 4455")
	f(m, "AUS", "", "Joe Blogs", "Care PO", "Roma QLD 4455")
	f(m, "AUS", "", "Joe Blogs", "MS 123", "Toowoomba QLD 4350")
	// localities named like countries are domestic
	f(m, "AUS", "", "Joe Blogs", "1 Strickland St", "Denmark WA 6333")
	f(m, "AUS", "", "Joe Blogs", "1 Strickland St", "Denmark", "WA 6333")
	f(m, "AUS", "", "Joe Blogs", "1 Main Rd", "Congo NSW 2537")
	f(m, "AUS", "", "Joe Blogs", "1 Main Rd", "Bolivia NSW 2372")
	f(m, "AUS", "", "Joe Blogs", "1 Main Rd", "Egypt QLD 4344")
	f(m, "AUS", "", "Joe Blogs", "1 Main Rd", "Mexico QLD 4728")
	f(m, "AUS", "", "Joe Blogs", "1 Main Rd", "Norway NSW 2787")
	f(m, "AUS", "", "Joe Blogs", "1 Main Rd", "Timor VIC 3465")
	f(m, "AUS", "", "Joe Blogs", "1 Main Rd", "Saint Helena VIC 3088")
	// external territories with an Australian state or postcode
	f(m, "AUS", "", "Joe Blogs", "1 Murray Rd", "Christmas Island WA 6798")
	f(m, "AUS", "", "Joe Blogs", "1 Murray Rd", "Christmas Island OT 6798")
	f(m, "AUS", "", "Joe Blogs", "PO Box 1", "Home Island WA 6799")
	f(m, "AUS", "", "Joe Blogs", "PO Box 1", "Home Island", "Cocos (Keeling) Islands WA 6799")
	f(m, "AUS", "", "Joe Blogs", "1 Taylors Rd", "Norfolk Island NSW 2899")
	f(m, "AUS", "", "Joe Blogs", "1 Taylors Rd", "Norfolk Island OT 2899")
	// postcodes spanning two states
	f(m, "AUS", "", "Joe Blogs", "1 Main St", "Barooga NSW 3644")
	f(m, "AUS", "", "Joe Blogs", "1 Main St", "Barooga VIC 3644")
	f(m, "AUS", "", "Joe Blogs", "1 Main St", "Jervis Bay NSW 2540")
	f(m, "AUS", "", "Joe Blogs", "1 Main St", "Jervis Bay ACT 2540")
	f(m, "AUS", "", "Joe Blogs", "1 Main St", "Jervis Bay JBT 2540")
	// sources disagree: each pairing a source gives is accepted
	f(m, "AUS", "", "Joe Blogs", "1 Main St", "Derrimut VIC 3030")
	f(m, "AUS", "", "Joe Blogs", "1 Main St", "Derrimut VIC 3026")

	// unmatched
	f(u, "AUS", "", "Joe Blogs", "10 Jones St", "Smithville NSW 2987")
	f(u, "AUS", "", "Joe Blogs", "10 Jones St", "Melborne VIC 3000")
	f(u, "AUS", "", "Joe Blogs", "10 Jones St", "Melbourne VIC 3011")
	f(u, "AUS", "", "Joe Blogs", "10 Jones St", "Melbourne VIC 3001")
	f(u, "AUS", "", "Joe Blogs", "10 Jones St", "Sydney NSW 2001")

	// invalid
	f(inv, "AUS", "3 to 6 lines, this one has 2", "10 Jones St", "Melbourne VIC 3000")
	f(inv, "AUS", "3 to 6 lines, this one has 7", "a", "b", "c", "d", "e", "10 Jones St", "Melbourne VIC 3000")
	f(inv, "AUS", "no postcode", "Joe Blogs", "10 Jones St", "Melbourne VIC")
	f(inv, "AUS", "not 4 digits", "Joe Blogs", "10 Jones St", "Melbourne VIC 30000")
	f(inv, "AUS", "did you mean 0800", "Joe Blogs", "10 Jones St", "Darwin NT 800")
	f(inv, "AUS", "no state", "Joe Blogs", "10 Jones St", "Melbourne 3000")
	f(inv, "AUS", "postcode 3000 is in VIC, not NSW", "Joe Blogs", "10 Jones St", "Melbourne NSW 3000")
	f(inv, "AUS", "no street or postal delivery line", "Joe Blogs", "Somebody Else", "Melbourne VIC 3000")
	f(inv, "AUS", "longer than 100", "Joe Blogs", strings.Repeat("x", 101), "Melbourne VIC 3000")
	f(inv, "AUS", "control characters", "Joe\x00Blogs", "10 Jones St", "Melbourne VIC 3000")
	f(inv, "AUS", "UTF-8", "Joe \xff Blogs", "10 Jones St", "Melbourne VIC 3000")

	// international
	f(intl, "GBR", "", "10 Downing St", "London SW1A 2AA", "United Kingdom")
	f(intl, "GBR", "", "10 Downing St", "London SW1A 2AA", "UK")
	f(intl, "GBR", "", "10 Downing St", "London SW1A 2AA", "England")
	f(intl, "USA", "", "1600 Pennsylvania Ave NW", "Washington DC 20500", "USA")
	f(intl, "DNK", "", "Strandvejen 1", "2900 Hellerup", "Denmark")
	f(intl, "NZL", "", "Jo Bloggs", "1 Queen Street", "Auckland 1010", "New Zealand")
	f(intl, "NZL", "", "Jo Bloggs", "12 Rata St", "Blockhouse Bay", "Auckland 0600")
	f(intl, "NFK", "", "Jo Bloggs", "Taylors Rd", "Norfolk Island")
	f(intl, "SAU", "", "Jo Bloggs", "King Fahd Rd", "Riyadh 12345", "Saudi Arabia")
}

func TestStringForms(t *testing.T) {
	e := newEngine(t, false)
	f := func(addr, status string) {
		t.Helper()
		if r := e.CheckString(addr, false); r.Status.String() != status {
			t.Errorf("%q: got %s (%s), want %s", addr, r.Status, r.Message, status)
		}
	}
	f("Joe Blogs\n10 Jones St\nMelbourne VIC 3000", "matched")
	f("Joe Blogs\r\n10 Jones St\r\nMelbourne VIC 3000\r\n", "matched")
	f("Joe Blogs, 10 Jones St, Melbourne VIC 3000", "matched")
	f("Joe Blogs, 10 Jones St, Melbourne, VIC, 3000", "matched")
	f("Joe Blogs,,10 Jones St,, Melbourne VIC 3000", "matched")
	f("Joe Blogs\n10 Jones St, Melbourne VIC 3000", "invalid")
	f("", "invalid")
}

func TestSuggestion(t *testing.T) {
	e := newEngine(t, false)
	f := func(want string, fault string, lines ...string) {
		t.Helper()
		r := e.Check(lines, true)
		if r.Status != engine.StatusUnmatched {
			t.Fatalf("%q: %s, want unmatched", lines, r.Status)
		}
		got := strings.Join(r.Detail.Suggestion, " | ")
		if got != want {
			t.Errorf("%q: suggestion %q, want %q (faults %v)", lines, got, want, r.Detail.Faults)
		}
		if !contains(r.Detail.Faults, fault) {
			t.Errorf("%q: faults %v lack %s", lines, r.Detail.Faults, fault)
		}
	}
	f("JOE BLOGS | 10 JONES ST | MELBOURNE VIC 3000", engine.FaultLocalitySpelling, "Joe Blogs", "10 Jones St", "Melborne VIC 3000")
	f("JOE BLOGS | 1 MAIN ST | WODONGA VIC 3690", engine.FaultLocalityPostcode, "Joe Blogs", "1 Main St", "Wodonga VIC 3691")
	f("", engine.FaultLocalityUnknown, "Joe Blogs", "10 Jones St", "Smithville NSW 2987")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
