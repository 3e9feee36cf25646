package engine_test

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/testref"
)

// fixtureAddress is one row of testdata/gnaf/expected.csv.
type fixtureAddress map[string]string

func readFixture(t testing.TB) []fixtureAddress {
	t.Helper()
	root, err := testref.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "testdata", "gnaf", "expected.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []fixtureAddress
	for _, r := range rows[1:] {
		a := fixtureAddress{}
		for i, h := range rows[0] {
			a[h] = r[i]
		}
		out = append(out, a)
	}
	return out
}

// streetEngine builds an engine over the fixture's localities with the
// fixture's addresses as a complete street level, plus a street alias
// and an incomplete group, the way the importers do.
func streetEngine(t testing.TB, rows []fixtureAddress) *engine.Engine {
	t.Helper()
	rb := engine.NewReferenceBuilder()
	sb := engine.NewStreetsBuilder()
	for _, a := range rows {
		st, _ := engine.StateByAbbr(a["STATE"])
		pc, _ := engine.ParsePostcode(a["POSTCODE"])
		if _, err := rb.AddLocality(engine.Locality{Name: a["LOCALITY_NAME"], State: st, Postcode: pc, Sources: engine.SourceGNAF}); err != nil {
			t.Fatal(err)
		}
		gk := "test:" + a["LOCALITY_NAME"] + "|" + a["STATE"]
		if a["LOCALITY_NAME"] == "KINGSWOOD" { // two localities of that name in NSW
			gk += "|" + a["POSTCODE"]
		}
		g := sb.Group(gk, true)
		if err := sb.Link(g, a["LOCALITY_NAME"], a["STATE"], a["POSTCODE"]); err != nil {
			t.Fatal(err)
		}
		id, err := sb.Street(g, a["STREET_NAME"], a["STREET_TYPE"], a["STREET_SUFFIX"], "ST-"+a["STREET_NAME"])
		if err != nil {
			t.Fatal(err)
		}
		if err := sb.Point(id, engine.PointSpec{NumberFirst: a["NUMBER_FIRST"] + a["NUMBER_FIRST_SUFFIX"], NumberLast: a["NUMBER_LAST"],
			FlatNumber: a["FLAT_NUMBER"], LevelType: a["LEVEL_TYPE"], LevelNumber: a["LEVEL_NUMBER"], Lot: a["LOT_NUMBER"], Building: a["BUILDING_NAME"], Postcode: a["POSTCODE"],
			PID: a["ADDRESS_DETAIL_PID"], Alias: a["ALIAS_PRINCIPAL"] == "A"}); err != nil {
			t.Fatalf("%v: %v", a["ADDRESS"], err)
		}
		if a["STREET_NAME"] == "CAPTAIN COOK" {
			if err := sb.Alias(id, "CAPTAIN COOK", "ROAD", ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	// MELBOURNE's addresses in 3004 belong to MELBOURNE 3000 as well.
	st, _ := engine.StateByAbbr("VIC")
	rb.AddLocality(engine.Locality{Name: "MELBOURNE", State: st, Postcode: 3000, Sources: engine.SourceGNAF})
	sb.Link(sb.Group("test:MELBOURNE|VIC", true), "MELBOURNE", "VIC", "3000")
	// An incomplete list: only some streets of FITZROY.
	rb.AddLocality(engine.Locality{Name: "FITZROY", State: st, Postcode: 3065, Sources: engine.SourceGNAF})
	g := sb.Group("list:FITZROY|VIC", false)
	sb.Link(g, "FITZROY", "VIC", "3065")
	if _, err := sb.Street(g, "BRUNSWICK", "Street", "", ""); err != nil {
		t.Fatal(err)
	}
	streets := sb.Build()
	// Through the binary form, as the index stores it.
	blob, err := streets.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if streets, err = engine.UnmarshalStreets(blob); err != nil {
		t.Fatal(err)
	}
	return attachedEngine(t, rb, streets)
}

// attachedEngine builds rb's reference with streets attached (every link
// used) and returns an engine on it without a cache, closed with t.
func attachedEngine(t testing.TB, rb *engine.ReferenceBuilder, streets *engine.Streets) *engine.Engine {
	t.Helper()
	ref := rb.Build()
	if skipped := ref.AttachStreets(streets); skipped != 0 {
		t.Fatalf("%d links skipped", skipped)
	}
	e, err := engine.New(ref, engine.Config{CacheEntries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// TestStreetFixtureRoundTrip: every live fixture address, written as G-NAF
// prints it and split on commas, is matched at premise granularity.
func TestStreetFixtureRoundTrip(t *testing.T) {
	rows := readFixture(t)
	e := streetEngine(t, rows)
	for _, a := range rows {
		lines := append([]string{"Jo Citizen"}, strings.Split(a["ADDRESS"], ", ")...)
		if len(lines) > engine.MaxComponents {
			lines = lines[1:]
		}
		r := e.Check(lines, true)
		if r.Status != engine.StatusMatched || r.Detail.Granularity != engine.GranularityPremise {
			t.Errorf("%q: %s %+v", lines, r.Status, r.Detail)
		}
		// a principal address is found as its own record
		if a["ALIAS_PRINCIPAL"] == "P" && r.Detail.ReferenceID != a["ADDRESS_DETAIL_PID"] {
			t.Errorf("%q: reference %q, want %s", lines, r.Detail.ReferenceID, a["ADDRESS_DETAIL_PID"])
		}
	}
}

// TestBuildingDetail: a building line above a numbered street line is
// reported as the building when the reference names it so, and is no
// longer counted among the recipients.
func TestBuildingDetail(t *testing.T) {
	e := streetEngine(t, readFixture(t))
	f := func(building, recipients string, lines ...string) {
		t.Helper()
		r := e.Check(lines, true)
		if r.Status != engine.StatusMatched || r.Detail.Building != building || strings.Join(r.Detail.Recipients, " / ") != recipients {
			t.Errorf("%q: %s building %q recipients %q, want %q %q", lines, r.Status, r.Detail.Building, r.Detail.Recipients, building, recipients)
		}
	}
	f("BELCONNEN TOWERS", "JO", "Jo", "Belconnen Towers", "1 Benjamin Way", "Belconnen ACT 2617")
	f("BELCONNEN TOWERS", "JO", "Jo", "Unit 12", "Level 3", "Belconnen Towers", "1 Benjamin Way", "Belconnen ACT 2617")
	f("", "JO / ACME PTY LTD", "Jo", "Acme Pty Ltd", "1 Benjamin Way", "Belconnen ACT 2617")
	f("", "JO", "Jo", "18-20 Courallie Ave", "Homebush West NSW 2140")
	f("BELCONNEN TOWERS", "JO", "Jo", "Belconnen Towers 1 Benjamin Way", "Belconnen ACT 2617")
}

// TestStreetVerdicts: premise matching and its near misses.
func TestStreetVerdicts(t *testing.T) {
	e := streetEngine(t, readFixture(t))
	f := func(status string, gran engine.Granularity, fault string, suggestion string, lines ...string) {
		t.Helper()
		r := e.Check(lines, true)
		d := r.Detail
		if r.Status.String() != status || d.Granularity != gran || (fault == "" && len(d.Faults) > 0) ||
			(fault != "" && !slices.Contains(d.Faults, fault)) || strings.Join(d.Suggestion, " / ") != suggestion {
			t.Errorf("%q: got %s %s faults %v suggestion %q, want %s %s %s %q (detail %+v)",
				lines, r.Status, d.Granularity, d.Faults, strings.Join(d.Suggestion, " / "), status, gran, fault, suggestion, d)
		}
		if plain := e.Check(lines, false); plain.Status != r.Status {
			t.Errorf("%q: without detail %s, with %s", lines, plain.Status, r.Status)
		}
	}
	const P, S = engine.GranularityPremise, engine.GranularityStreet
	f("matched", P, "", "", "Jo", "18-20 Courallie Ave", "Homebush West NSW 2140")
	f("matched", P, "", "", "Jo", "18 Courallie Avenue", "Homebush West NSW 2140")
	f("matched", P, "", "", "Jo", "19 Courallie Av", "Homebush West NSW 2140") // inside 18-20
	f("unmatched", S, engine.FaultNumberUnknown, "", "Jo", "22 Courallie Av", "Homebush West NSW 2140")
	f("matched", P, "", "", "Jo", "455A Captain Cook Dr", "Woolooware NSW 2230")
	f("matched", P, "", "", "Jo", "455a Captain Cook Drive", "Woolooware NSW 2230")
	f("unmatched", S, engine.FaultNumberUnknown, "", "Jo", "455B Captain Cook Dr", "Woolooware NSW 2230")
	f("matched", P, "", "", "Jo", "455 Captain Cook Rd", "Woolooware NSW 2230") // street alias
	f("unmatched", "", engine.FaultStreetUnknown, "JO / 455 CAPTAIN COOK DR / WOOLOOWARE NSW 2230", "Jo", "455 Captian Cook Dr", "Woolooware NSW 2230")
	f("unmatched", "", engine.FaultStreetUnknown, "JO / 455 CAPTAIN COOK DR / WOOLOOWARE NSW 2230", "Jo", "455 Captain Cook St", "Woolooware NSW 2230")
	f("unmatched", "", engine.FaultStreetUnknown, "JO / 455 CAPTAIN COOK DR / WOOLOOWARE NSW 2230", "Jo", "455 CaptainCook Dr", "Woolooware NSW 2230")
	f("matched", P, engine.FaultStreetType, "JO / 1015 GOONOO GOONOO RD / KINGSWOOD NSW 2340", "Jo", "1015 Goonoo Goonoo", "Kingswood NSW 2340")
	f("matched", P, "", "", "Jo", "Lot 3 Goonoo Goonoo Rd", "Kingswood NSW 2340")
	f("unmatched", S, engine.FaultNumberUnknown, "", "Jo", "Lot 4 Goonoo Goonoo Rd", "Kingswood NSW 2340")
	f("unmatched", "", engine.FaultStreetUnknown, "JO / 12 BRINGELLY RD / KINGSWOOD NSW 2747", "Jo", "12 Bringelly Rd", "Kingswood NSW 2340") // in the other KINGSWOOD
	f("matched", P, "", "", "Jo", "12 Bringelly Rd", "Kingswood NSW 2747")
	f("matched", P, "", "", "Jo", "5 Queen St N", "St Marys NSW 2760")
	f("matched", P, "", "", "Jo", "5 Queen Street North", "Saint Marys NSW 2760")
	f("unmatched", "", engine.FaultStreetUnknown, "JO / 5 QUEEN ST N / ST MARYS NSW 2760", "Jo", "5 Queen St E", "St Marys NSW 2760")
	f("matched", P, "", "", "Jo", "Unit 3", "72 Charles St", "St Kilda VIC 3182")
	f("matched", P, "", "", "Jo", "3/72 Charles St", "St Kilda VIC 3182")
	f("matched", P, "", "", "Jo", "Unit 3/72 Charles St", "St Kilda VIC 3182")
	f("matched", P, "", "", "Jo", "U3/72 Charles St", "St Kilda VIC 3182")
	f("unmatched", S, engine.FaultUnitUnknown, "JO / 72 CHARLES ST / ST KILDA VIC 3182", "Jo", "9/72 Charles St", "St Kilda VIC 3182")
	f("matched", P, "", "", "Jo", "Apartment 1203", "Level 12", "431 St Kilda Rd", "Melbourne VIC 3004")
	f("matched", P, "", "", "Jo", "Unit 1203, 431 St Kilda Rd", "Melbourne VIC 3004")
	f("unmatched", S, engine.FaultUnitUnknown, "JO / 431 ST KILDA RD / MELBOURNE VIC 3004", "Jo", "Unit 1203", "Level 11", "431 St Kilda Rd", "Melbourne VIC 3004")
	f("unmatched", P, engine.FaultAddressPostcode, "JO / 431 ST KILDA RD / MELBOURNE VIC 3004", "Jo", "431 St Kilda Rd", "Melbourne VIC 3000")
	f("matched", P, "", "", "Jo", "Suite 4", "Ground", "Belconnen Towers", "1 Benjamin Way", "Belconnen ACT 2617")
	f("matched", P, "", "", "Jo", "Level 2", "75 Shortland Esp", "Newcastle NSW 2300")
	f("matched", S, "", "", "Jo", "Benjamin Way", "Belconnen ACT 2617") // no number
	// a building named instead of the number
	const towers = "JO / BELCONNEN TOWERS / 1 BENJAMIN WAY / BELCONNEN ACT 2617"
	f("matched", P, engine.FaultNumberMissing, towers, "Jo", "Belconnen Towers", "Benjamin Way", "Belconnen ACT 2617")
	f("matched", P, engine.FaultNumberMissing, "JO / UNIT 12 BELCONNEN TOWERS / 1 BENJAMIN WAY / BELCONNEN ACT 2617", "Jo", "Unit 12 Belconnen Towers", "Benjamin Way", "Belconnen ACT 2617")
	f("matched", P, engine.FaultNumberMissing, "JO / BELCONNEN TOWERS / UNIT 12 L 3 1 BENJAMIN WAY / BELCONNEN ACT 2617", "Jo", "Unit 12", "Level 3", "Belconnen Towers", "Benjamin Way", "Belconnen ACT 2617")
	f("unmatched", S, engine.FaultUnitUnknown, towers, "Jo", "Unit 99", "Belconnen Towers", "Benjamin Way", "Belconnen ACT 2617")
	f("matched", S, "", "", "Jo", "Belconnen Plaza", "Benjamin Way", "Belconnen ACT 2617") // not a building of the street
	// a building's name before the number on the street line
	f("matched", P, "", "", "Jo", "Belconnen Towers 1 Benjamin Way", "Belconnen ACT 2617")
	f("matched", P, "", "", "Jo", "Unit 12", "Belconnen Towers 1 Benjamin Way", "Belconnen ACT 2617")
	f("matched", P, "", "", "Jo", "Suite 4 Ground Belconnen Towers 1 Benjamin Way", "Belconnen ACT 2617")
	f("unmatched", "", engine.FaultStreetUnknown, "", "Jo", "Belconnen Towers 7 Nowhere Way", "Belconnen ACT 2617")
	// The incomplete list: a street it has is confirmed at street level,
	// one it lacks leaves the locality verdict.
	f("matched", S, "", "", "Jo", "10 Brunswick St", "Fitzroy VIC 3065")
	f("matched", engine.GranularityLocality, "", "", "Jo", "10 Gertrude St", "Fitzroy VIC 3065")
	// Postal addresses are not judged by streets.
	f("matched", engine.GranularityPostal, "", "", "Jo", "PO Box 5", "St Kilda VIC 3182")

	r := e.Check([]string{"Jo", "22 Courallie Av", "Homebush West NSW 2140"}, true)
	if got := strings.Join(r.Detail.NearestNumbers, ","); got != "18" {
		t.Errorf("nearest numbers %q, want 18", got)
	}
}

// TestStreetsHotPathAllocations: premise verdicts allocate nothing.
func TestStreetsHotPathAllocations(t *testing.T) {
	if testref.RaceEnabled {
		t.Skip("the race detector allocates; scripts/test runs this without it")
	}
	e := streetEngine(t, readFixture(t))
	for _, lines := range [][]string{
		{"Jo", "Unit 3", "72 Charles St", "St Kilda VIC 3182"},
		{"Jo", "22 Courallie Av", "Homebush West NSW 2140"},
		{"Jo", "455 Captian Cook Dr", "Woolooware NSW 2230"},
		// issue 13's leftovers: the state ending the street's line, the
		// state and postcode above the street, a misspelt locality after
		// the street on one line
		{"Jo", "72 Charles St St Kilda VIC", "3182"},
		{"Jo", "VIC 3182", "72 Charles St", "St Kilda"},
		{"Jo", "Acme", "22 Courallie Av Homebush Wst NSW 2140"},
	} {
		if n := testing.AllocsPerRun(200, func() { e.Check(lines, false) }); n > 0 {
			t.Errorf("%q: %.1f allocations per check", lines, n)
		}
	}
	// a street known by its name alone, without a number or a type
	ek := classStreetEngine(t, []classPoint{{number: "1", street: "KINGSWAY", locality: "GLEN WAVERLEY", state: "VIC", postcode: "3150"}})
	for _, lines := range [][]string{
		{"Jo", "Kingsway", "Glen Waverley VIC 3150"},
		{"Jo", "Acme", "Kingsway Glen Waverley VIC 3150"},
		{"Jo", "Kingsway", "Glen Waverly VIC 3150"},
	} {
		if n := testing.AllocsPerRun(200, func() { ek.Check(lines, false) }); n > 0 {
			t.Errorf("%q: %.1f allocations per check", lines, n)
		}
	}
}

// TestUnmarshalStreetsHostile: a corrupt table is an error, never a panic.
func TestUnmarshalStreetsHostile(t *testing.T) {
	sb := engine.NewStreetsBuilder()
	g := sb.Group("g", true)
	sb.Link(g, "ST KILDA", "VIC", "3182")
	id, _ := sb.Street(g, "CHARLES", "ST", "", "")
	sb.Point(id, engine.PointSpec{NumberFirst: "72", FlatNumber: "3"})
	blob, _ := sb.Build().MarshalBinary()
	for i := 0; i < len(blob); i++ {
		if _, err := engine.UnmarshalStreets(blob[:i]); err == nil {
			t.Errorf("truncated to %d bytes: no error", i)
		}
		for _, v := range []byte{0, 0x7f, 0xff} {
			b := slices.Clone(blob)
			b[i] = v
			engine.UnmarshalStreets(b) // must not panic
		}
	}
}

func FuzzUnmarshalStreets(f *testing.F) {
	sb := engine.NewStreetsBuilder()
	g := sb.Group("g", true)
	sb.Link(g, "ST KILDA", "VIC", "3182")
	id, _ := sb.Street(g, "CHARLES", "ST", "", "")
	sb.Point(id, engine.PointSpec{NumberFirst: "72", FlatNumber: "3"})
	blob, _ := sb.Build().MarshalBinary()
	f.Add(blob)
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := engine.UnmarshalStreets(b)
		if err != nil {
			return
		}
		// a table that decodes can be judged against
		rb := engine.NewReferenceBuilder()
		st, _ := engine.StateByAbbr("VIC")
		rb.AddLocality(engine.Locality{Name: "ST KILDA", State: st, Postcode: 3182})
		ref := rb.Build()
		ref.AttachStreets(s)
		e, _ := engine.New(ref, engine.Config{CacheEntries: -1})
		e.Check([]string{"Jo", "3/72 Charles St", "St Kilda VIC 3182"}, true)
		e.Check([]string{"Jo", "Lot 7 Charles St", "St Kilda VIC 3182"}, true)
	})
}

// BenchmarkPremise: exact premise verdicts against the fixture's street
// level, cache off (full-scale figures: README, "Street and premise level").
func BenchmarkPremise(b *testing.B) {
	rows := readFixture(b)
	e := streetEngine(b, rows)
	var addrs [][]string
	for _, a := range rows {
		lines := append([]string{"Jo Citizen"}, strings.Split(a["ADDRESS"], ", ")...)
		if len(lines) > engine.MaxComponents {
			lines = lines[1:]
		}
		addrs = append(addrs, lines)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Check(addrs[i%len(addrs)], false)
	}
}

// BenchmarkStreetSuggestion: misspelt street names with detail.
func BenchmarkStreetSuggestion(b *testing.B) {
	e := streetEngine(b, readFixture(b))
	lines := []string{"Jo", "455 Captian Cook Dr", "Woolooware NSW 2230"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		e.Check(lines, true)
	}
}

// TestStreetsFormats: the table reads the form it writes (version 3, with
// the points' PIDs) and version 2 (without them), which indexes built
// before PIDs were kept hold.
func TestStreetsFormats(t *testing.T) {
	build := func(pid string) *engine.Streets {
		sb := engine.NewStreetsBuilder()
		g := sb.Group("test:ST KILDA|VIC", true)
		if err := sb.Link(g, "ST KILDA", "VIC", "3182"); err != nil {
			t.Fatal(err)
		}
		id, err := sb.Street(g, "CHARLES", "STREET", "", "VICL1")
		if err != nil {
			t.Fatal(err)
		}
		if err := sb.Point(id, engine.PointSpec{NumberFirst: "72", PID: pid}); err != nil {
			t.Fatal(err)
		}
		return sb.Build()
	}
	f := func(blob []byte, wantErr string) {
		t.Helper()
		_, err := engine.UnmarshalStreets(blob)
		if (err == nil) != (wantErr == "") || (err != nil && !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%q: %v, want %q", blob, err, wantErr)
		}
	}
	plain, _ := build("").MarshalBinary()
	withPID, _ := build("GAVIC000000072").MarshalBinary()
	if !bytes.HasPrefix(plain, []byte("LSTR3\n")) || plain[len(plain)-1] != 0 {
		t.Fatalf("version 3 without PIDs ends with a zero prefix count: %q", plain)
	}
	v2 := append([]byte("LSTR2\n"), plain[6:len(plain)-1]...)
	f(plain, "")
	f(withPID, "")
	f(v2, "")
	f(append(v2, 0), "bytes after the tables")
	bad := bytes.Clone(withPID)
	bad[len(bad)-1] ^= 0x7f // the point's PID names a prefix that is not there
	f(bad, "corrupt")
}
