package index_test

import (
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/engine"
	. "github.com/lodge-mail/lodge/index"
	"github.com/lodge-mail/lodge/internal/testref"
)

// TestGNAFRoundTrip generates a release of 100,000 addresses with
// bench/gnafgen, imports it, and checks that every generated address is
// matched at premise granularity and that perturbed copies get the
// expected verdicts and suggestions.
func TestGNAFRoundTrip(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	root, err := testref.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	list := filepath.Join(out, "list.csv")
	cmd := exec.Command("go", "run", "./bench/gnafgen", "-out", out, "-addresses", fmt.Sprint(n), "-format", "zip", "-list", list, "-progress", "0")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gnafgen: %v\n%s", err, b)
	}
	zips, _ := filepath.Glob(filepath.Join(out, "*.zip"))
	if len(zips) != 1 {
		t.Fatalf("gnafgen wrote %q", zips)
	}
	ix := buildWithStreets(t, StreetSource{Kind: StreetsGNAF, Path: zips[0], Complete: true})
	if ix.Meta.Counts.AddressPoints < n*9/10 {
		t.Errorf("%d address points from %d addresses", ix.Meta.Counts.AddressPoints, n)
	}
	e, err := engine.New(ix.Ref, engine.Config{CacheEntries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	f, err := os.Open(list)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	get := func(r []string, c string) string { return r[col[c]] }
	split := func(a string) []string {
		lines := append([]string{"Jo Citizen"}, strings.Split(a, ", ")...)
		if len(lines) > engine.MaxComponents {
			lines = lines[len(lines)-engine.MaxComponents:]
		}
		return lines
	}
	fails := 0
	fail := func(format string, args ...any) {
		t.Helper()
		if fails++; fails <= 20 {
			t.Errorf(format, args...)
		}
	}
	perturbed, buildings := 0, 0
	for i, r := range rows[1:] {
		lines := split(get(r, "ADDRESS"))
		res := e.Check(lines, true)
		if res.Status != engine.StatusMatched || res.Detail.Granularity != engine.GranularityPremise {
			fail("%q: %s %s %v", lines, res.Status, res.Detail.Granularity, res.Detail.Faults)
			continue
		}
		if get(r, "ALIAS_PRINCIPAL") == "P" && res.Detail.ReferenceID != get(r, "ADDRESS_DETAIL_PID") {
			fail("%q: reference %q, want its own %s", lines, res.Detail.ReferenceID, get(r, "ADDRESS_DETAIL_PID"))
		}
		// the building named instead of the number: matched, the number
		// given back in the suggestion
		if b := get(r, "BUILDING_NAME"); b != "" && get(r, "NUMBER_FIRST") != "" && get(r, "FLAT_NUMBER") == "" && get(r, "LEVEL_TYPE") == "" && get(r, "LEVEL_NUMBER") == "" {
			buildings++
			street := get(r, "STREET_NAME") + " " + get(r, "STREET_TYPE") + " " + get(r, "STREET_SUFFIX")
			tail := get(r, "LOCALITY_NAME") + " " + get(r, "STATE") + " " + get(r, "POSTCODE")
			res := e.Check([]string{"Jo", b, street, tail}, true)
			d := res.Detail
			if res.Status != engine.StatusMatched || !slices.Contains(d.Faults, engine.FaultNumberMissing) || len(d.Suggestion) < 2 ||
				!strings.HasPrefix(d.Suggestion[len(d.Suggestion)-2], get(r, "NUMBER_FIRST")) || d.Building != b {
				fail("%s, %s: %s %v building %q suggestion %q, want number %s", b, street, res.Status, d.Faults, d.Building, d.Suggestion, get(r, "NUMBER_FIRST"))
			}
			// the name before the number on the street line
			line := b + " " + get(r, "NUMBER_FIRST") + get(r, "NUMBER_FIRST_SUFFIX") + " " + street
			if res := e.Check([]string{"Jo", line, tail}, true); res.Status != engine.StatusMatched || res.Detail.Granularity != engine.GranularityPremise || res.Detail.Building != b {
				fail("%q: %s %s %v building %q", line, res.Status, res.Detail.Granularity, res.Detail.Faults, res.Detail.Building)
			}
		}
		if i%97 != 0 || get(r, "NUMBER_FIRST") == "" || get(r, "NUMBER_LAST") != "" {
			continue
		}
		perturbed++
		street := get(r, "STREET_NAME") + " " + get(r, "STREET_TYPE")
		if s := get(r, "STREET_SUFFIX"); s != "" {
			street += " " + s
		}
		tail := get(r, "LOCALITY_NAME") + " " + get(r, "STATE") + " " + get(r, "POSTCODE")
		num := get(r, "NUMBER_FIRST") + get(r, "NUMBER_FIRST_SUFFIX")
		want := func(status, fault string, lines ...string) *engine.Detail {
			t.Helper()
			res := e.Check(lines, true)
			if res.Status.String() != status || !slices.Contains(res.Detail.Faults, fault) {
				fail("%q: %s %v, want %s %s", lines, res.Status, res.Detail.Faults, status, fault)
			}
			return res.Detail
		}
		// a number not on the street
		d := want("unmatched", engine.FaultNumberUnknown, "Jo", "99999 "+street, tail)
		if len(d.NearestNumbers) == 0 {
			fail("99999 %s: no nearest numbers", street)
		}
		// a unit not in the building: the base address is the suggestion
		d = want("unmatched", engine.FaultUnitUnknown, "Jo", "Unit 9999", num+" "+street, tail)
		if len(d.Suggestion) < 2 || !strings.HasPrefix(d.Suggestion[len(d.Suggestion)-2], num+" "+get(r, "STREET_NAME")+" ") {
			fail("unit 9999 at %s %s: suggestion %q", num, street, d.Suggestion)
		}
		// the street type swapped
		other := "ROAD"
		if get(r, "STREET_TYPE") == "ROAD" {
			other = "STREET"
		}
		if res := e.Check([]string{"Jo", num + " " + get(r, "STREET_NAME") + " " + other, tail}, true); res.Status == engine.StatusUnmatched {
			if !slices.Contains(res.Detail.Faults, engine.FaultStreetUnknown) || len(res.Detail.Suggestion) < 2 ||
				!strings.HasPrefix(res.Detail.Suggestion[len(res.Detail.Suggestion)-2], num+" "+get(r, "STREET_NAME")+" ") {
				fail("%s %s %s: %v suggestion %q", num, get(r, "STREET_NAME"), other, res.Detail.Faults, res.Detail.Suggestion)
			}
		} else if res.Status != engine.StatusMatched { // the locality may have both
			fail("%s %s %s: %s", num, get(r, "STREET_NAME"), other, res.Status)
		}
		// a one-letter typo in the street name (names of 5 letters or more)
		if name := get(r, "STREET_NAME"); len(name) >= 5 && !strings.Contains(name, " ") {
			typo := name[:2] + name[3:]
			d = want("unmatched", engine.FaultStreetUnknown, "Jo", num+" "+typo+" "+get(r, "STREET_TYPE")+" "+get(r, "STREET_SUFFIX"), tail)
			if len(d.Suggestion) < 2 || !strings.Contains(d.Suggestion[len(d.Suggestion)-2], name) {
				fail("typo %s for %s: suggestion %q", typo, name, d.Suggestion)
			}
		}
		// a postcode of another state is invalid; another postcode of the
		// state is unmatched, with the locality's postcode suggested
		wrong := "0800"
		if get(r, "STATE") == "NT" {
			wrong = "2000"
		}
		want("invalid", engine.FaultPostcodeState, "Jo", num+" "+street, get(r, "LOCALITY_NAME")+" "+get(r, "STATE")+" "+wrong)
		if res := e.Check([]string{"Jo", num + " " + street, get(r, "LOCALITY_NAME") + " " + get(r, "STATE") + " " + nearPostcode(get(r, "POSTCODE"))}, true); res.Status == engine.StatusUnmatched {
			if sug := strings.Join(res.Detail.Suggestion, " / "); !strings.Contains(sug, get(r, "POSTCODE")) && !strings.Contains(sug, get(r, "LOCALITY_NAME")) {
				fail("%s in %s: suggestion %q", get(r, "LOCALITY_NAME"), nearPostcode(get(r, "POSTCODE")), sug)
			}
		}
	}
	if perturbed < 100 && !testing.Short() {
		t.Errorf("only %d perturbed cases", perturbed)
	}
	t.Logf("%d addresses, %d perturbed, %d named by their building without a number", len(rows)-1, perturbed, buildings)
	if buildings < 10 && !testing.Short() {
		t.Errorf("only %d buildings named without a number", buildings)
	}
	if fails > 0 {
		t.Errorf("%d failures in all", fails)
	}
}

// nearPostcode returns a postcode next to pc.
func nearPostcode(pc string) string {
	var n int
	fmt.Sscanf(pc, "%d", &n)
	if n%10 == 9 {
		n--
	} else {
		n++
	}
	return fmt.Sprintf("%04d", n)
}
