package index_test

import (
	"archive/zip"
	"context"
	"encoding/csv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/engine"
	. "github.com/lodge-mail/lodge/index"
	"github.com/lodge-mail/lodge/internal/testref"
)

func gnafFixture(t *testing.T) string {
	t.Helper()
	root, err := testref.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "testdata", "gnaf")
}

// zipFolder zips dir's G-NAF folder as the real release ZIP holds it.
func zipFolder(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "g-naf_nov24_allstates_gda2020_psv_1017.zip")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	err = filepath.WalkDir(filepath.Join(dir, "G-NAF"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return out
}

func expectedAddresses(t *testing.T) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(gnafFixture(t), "expected.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows[1:]
}

func buildWithStreets(t *testing.T, streets ...StreetSource) *Index {
	t.Helper()
	src := sharedSources(t)
	src.Streets = streets
	dataDir := t.TempDir()
	res, err := Build(context.Background(), src, dataDir, quiet)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Open(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if f := ix.Ref.Facts(); f.Points != res.Meta.Counts.AddressPoints || f.Streets != res.Meta.Counts.Streets {
		t.Fatalf("loaded %+v, built %+v", f, res.Meta.Counts)
	}
	return ix
}

// TestImportGNAFFixture: the hand-written release, as a folder and as a
// ZIP, gives the same index, in which every live address is matched at
// premise granularity and retired rows are gone.
func TestImportGNAFFixture(t *testing.T) {
	dir := gnafFixture(t)
	var counts []Counts
	for _, p := range []string{dir, zipFolder(t, dir)} {
		ix := buildWithStreets(t, StreetSource{Kind: StreetsGNAF, Path: p, Complete: true})
		counts = append(counts, ix.Meta.Counts)
		if !strings.Contains(strings.Join(ix.Meta.Attributions(), "\n"), "Geoscape") {
			t.Errorf("no G-NAF attribution: %q", ix.Meta.Attributions())
		}
		e, err := engine.New(ix.Ref, engine.Config{CacheEntries: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		for _, row := range expectedAddresses(t) {
			lines := append([]string{"Jo Citizen"}, strings.Split(row[1], ", ")...)
			if len(lines) > engine.MaxComponents {
				lines = lines[1:]
			}
			r := e.Check(lines, true)
			if r.Status != engine.StatusMatched || r.Detail.Granularity != engine.GranularityPremise {
				t.Errorf("%s: %q: %s %+v", p, lines, r.Status, r.Detail)
			}
		}
		f := func(status string, fault string, lines ...string) {
			t.Helper()
			r := e.Check(lines, true)
			if r.Status.String() != status || (fault != "" && !slices.Contains(r.Detail.Faults, fault)) {
				t.Errorf("%q: %s %+v, want %s %s", lines, r.Status, r.Detail, status, fault)
			}
		}
		f("unmatched", engine.FaultNumberUnknown, "Jo", "12 Macpherson St", "O'Connor ACT 2602")       // retired address
		f("unmatched", engine.FaultStreetUnknown, "Jo", "3 Lathlain St", "Belconnen ACT 2617")         // retired street
		f("unmatched", engine.FaultUnitUnknown, "Jo", "Unit 2", "116 Glossop St", "St Marys NSW 2760") // retired unit
		f("matched", "", "Jo", "5 Queen St N", "Saint Marys NSW 2760")                                 // locality alias
		f("matched", "", "Jo", "455 Captain Cook Rd", "Woolooware NSW 2230")                           // street alias
		f("matched", "", "Jo", "45 Coulter Dr", "Belconnen ACT 2615")                                  // the address's own postcode
		f("unmatched", engine.FaultAddressPostcode, "Jo", "45 Coulter Dr", "Belconnen ACT 2617")
		f("unmatched", "", "Jo", "12 Bringelly Rd", "Kingswood NSW 2340") // the other KINGSWOOD
	}
	if counts[0] != counts[1] {
		t.Errorf("folder %+v, zip %+v", counts[0], counts[1])
	}
	if counts[0].AddressPoints == 0 || counts[0].Streets == 0 {
		t.Errorf("counts %+v", counts[0])
	}
}

// TestImportBrisbane: Brisbane's street list (no numbers) is a street
// level of its suburbs: listed streets match at street granularity, others
// keep the locality verdict (the list is not complete).
func TestImportBrisbane(t *testing.T) {
	dir, err := testref.DataDir()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "brisbane", "properties-tidy.csv")
	ix := buildWithStreets(t, StreetSource{Kind: StreetsCSV, Path: p, State: "QLD", Licence: "CC BY 4.0", Attribution: "© Brisbane City Council 2018"})
	if f := ix.Ref.Facts(); f.Streets < 2000 || f.StreetGroups < 50 || f.Points != 0 {
		t.Errorf("facts %+v", f)
	}
	e, err := engine.New(ix.Ref, engine.Config{CacheEntries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// every street+suburb pair of the list
	f, _ := os.Open(p)
	defer f.Close()
	r := csv.NewReader(f)
	head, _ := r.Read()
	if !slices.Equal(head, []string{"distance", "street_name", "street_type", "suburb", "postcode", "ward_name", "long", "lat"}) {
		t.Fatalf("header %q", head)
	}
	n := 0
	seen := map[string]bool{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		k := strings.Join(rec[1:5], "|")
		if seen[k] {
			continue
		}
		seen[k] = true
		street := "12 " + rec[1] + " " + rec[2]
		if rec[2] == "NA" {
			// the list's placeholder for no type ("THE ESPLANADE"), which
			// no address writes
			street = "12 " + rec[1]
		}
		lines := []string{"Jo Citizen", street, rec[3] + " QLD " + rec[4]}
		res := e.Check(lines, true)
		if res.Status != engine.StatusMatched || res.Detail.Granularity != engine.GranularityStreet {
			t.Errorf("%q: %s %+v", lines, res.Status, res.Detail)
			if n++; n > 10 {
				t.FailNow()
			}
		}
	}
	if len(seen) < 2800 {
		t.Errorf("%d street+suburb pairs", len(seen))
	}
	res := e.Check([]string{"Jo", "12 Nosuchname St", "Bowen Hills QLD 4006"}, true)
	if res.Status != engine.StatusMatched || res.Detail.Granularity != engine.GranularityLocality {
		t.Errorf("unlisted street: %s %+v", res.Status, res.Detail)
	}
	if !strings.Contains(strings.Join(ix.Meta.Attributions(), "\n"), "Brisbane City Council") {
		t.Errorf("attributions %q", ix.Meta.Attributions())
	}
}

// TestImportOpenAddresses: an OpenAddresses CSV, complete for its places.
func TestImportOpenAddresses(t *testing.T) {
	p := filepath.Join(t.TempDir(), "oa.csv")
	os.WriteFile(p, []byte("LON,LAT,NUMBER,STREET,UNIT,CITY,DISTRICT,REGION,POSTCODE,ID,HASH\n"+
		"144.98,-37.86,72,CHARLES STREET,,ST KILDA,,VIC,3182,1,aa\n"+
		"144.98,-37.86,72,CHARLES STREET,3,ST KILDA,,VIC,3182,2,ab\n"+
		"144.98,-37.86,5,\"HERBERT STREET\",,ST KILDA,,VIC,3182,3,ac\n"+
		"bad row\n"+
		"144.98,-37.86,7,HERBERT STREET,,ST KILDA,,XX,3182,4,ad\n"), 0o644)
	ix := buildWithStreets(t, StreetSource{Kind: StreetsOpenAddresses, Path: p, Complete: true})
	e, err := engine.New(ix.Ref, engine.Config{CacheEntries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	f := func(status string, gran engine.Granularity, lines ...string) {
		t.Helper()
		r := e.Check(lines, true)
		if r.Status.String() != status || r.Detail.Granularity != gran {
			t.Errorf("%q: %s %+v, want %s %s", lines, r.Status, r.Detail, status, gran)
		}
	}
	f("matched", engine.GranularityPremise, "Jo", "3/72 Charles St", "St Kilda VIC 3182")
	f("matched", engine.GranularityPremise, "Jo", "5 Herbert Street", "St Kilda VIC 3182")
	f("unmatched", engine.GranularityStreet, "Jo", "7 Herbert St", "St Kilda VIC 3182")
	f("unmatched", "", "Jo", "7 Barkly St", "St Kilda VIC 3182")
}

// TestStreetSourceChecks: bad street sources are refused before a build.
func TestStreetSourceChecks(t *testing.T) {
	f := func(ss StreetSource, want string) {
		t.Helper()
		if err := CheckStreetSource(ss); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", ss, err, want)
		}
	}
	dir := t.TempDir()
	f(StreetSource{Kind: "shapefile", Path: dir}, "unknown kind")
	f(StreetSource{Kind: StreetsCSV, Path: filepath.Join(dir, "none.csv")}, "no such file")
	f(StreetSource{Kind: StreetsCSV, Path: dir, State: "XYZ"}, "unknown state")
	f(StreetSource{Kind: StreetsCSV, Path: dir, Columns: map[string]string{"colour": "C"}}, "unknown column field")
	// a folder with no G-NAF tables
	src := sharedSources(t)
	src.Streets = []StreetSource{{Kind: StreetsGNAF, Path: dir}}
	if _, err := Build(context.Background(), src, t.TempDir(), quiet); err == nil || !strings.Contains(err.Error(), "not a G-NAF release") {
		t.Errorf("empty release folder: %v", err)
	}
	// remembered sources round trip
	saved := AddStreetSource(nil, StreetSource{Kind: StreetsCSV, Path: "/a.csv"})
	saved = AddStreetSource(saved, StreetSource{Kind: StreetsGNAF, Path: "/g1"})
	saved = AddStreetSource(saved, StreetSource{Kind: StreetsGNAF, Path: "/g2"})
	if err := SaveStreetSources(dir, saved); err != nil {
		t.Fatal(err)
	}
	back, err := LoadStreetSources(dir)
	if err != nil || len(back) != 2 || back[0].Path != "/g2" || back[1].Path != "/a.csv" {
		t.Errorf("saved %+v, loaded %+v %v", saved, back, err)
	}
}
