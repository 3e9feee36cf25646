package gnaf

import (
	"archive/zip"
	"encoding/csv"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/lodge-mail/lodge/internal/testenv"
)

// fixtures returns testdata/gnaf.
func fixtures(t testing.TB) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "testdata", "gnaf")
}

// zipFolder zips dir into a file in a temporary folder, entries named as
// below dir with the prefix, directories included, as in the real ZIP.
func zipFolder(t testing.TB, dir, prefix string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "g-naf_test.zip")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := prefix + filepath.ToSlash(rel)
		if d.IsDir() {
			_, err := zw.Create(name + "/")
			return err
		}
		w, err := zw.Create(name)
		if err != nil {
			return err
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(w, src)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// release is everything a Release gives, copied, in a form to compare.
type release struct {
	name     string
	states   []string
	total    int64
	progress int64
	stats    map[string]Stats
	records  map[string][]string // table → every record, formatted
	list     map[string][]string // ADDRESS_DETAIL_PID → the row gnafgen -list writes
	auth     map[string]map[string]AuthorityCode
}

func readRelease(t testing.TB, path string) *release {
	t.Helper()
	var mu sync.Mutex
	progress := map[string]int64{}
	r, err := OpenWith(path, Options{Progress: func(table string, n int) {
		mu.Lock()
		progress[table] += int64(n)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := &release{name: r.Name(), states: r.States(), total: r.TotalBytes(), stats: map[string]Stats{},
		records: map[string][]string{}, auth: map[string]map[string]AuthorityCode{}}
	add := func(table string, st Stats, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		out.stats[table] = st
	}
	rec := func(table string, v any) error {
		out.records[table] = append(out.records[table], fmt.Sprintf("%+v", v))
		return nil
	}
	states := map[string]string{}
	st, err := r.StateRecords(func(s *State) error {
		states[strings.Clone(s.PID)] = strings.Clone(s.Abbreviation)
		return rec(TableState, *s)
	})
	add(TableState, st, err)
	locs := map[string]Locality{}
	st, err = r.Localities(func(l *Locality) error {
		c := clone(*l) // the strings of *l are valid only during the call
		locs[c.PID] = c
		return rec(TableLocality, *l)
	})
	add(TableLocality, st, err)
	st, err = r.LocalityAliases(func(l *LocalityAlias) error { return rec(TableLocalityAlias, *l) })
	add(TableLocalityAlias, st, err)
	streets := map[string]StreetLocality{}
	st, err = r.StreetLocalities(func(s *StreetLocality) error {
		c := clone(*s)
		streets[c.PID] = c
		return rec(TableStreetLocality, *s)
	})
	add(TableStreetLocality, st, err)
	st, err = r.StreetLocalityAliases(func(s *StreetLocalityAlias) error { return rec(TableStreetLocalityAlias, *s) })
	add(TableStreetLocalityAlias, st, err)
	principal := map[string]string{}
	st, err = r.AddressAliases(func(a *AddressAlias) error {
		principal[strings.Clone(a.AliasPID)] = strings.Clone(a.PrincipalPID)
		return rec(TableAddressAlias, *a)
	})
	add(TableAddressAlias, st, err)
	st, err = r.DefaultGeocodes(func(g *Geocode) error { return rec(TableAddressGeocode, *g) })
	add(TableAddressGeocode, st, err)
	var addrs []Address
	st, err = r.AddressDetails(func(a *Address) error {
		addrs = append(addrs, clone(*a))
		return rec(TableAddressDetail, *a)
	})
	add(TableAddressDetail, st, err)
	for _, tb := range r.AuthorityTables() {
		m, st, err := r.Authority(tb)
		add(tb, st, err)
		out.auth[tb] = m
	}
	mu.Lock()
	out.progress = progress[TableAddressDetail]
	mu.Unlock()

	// The rows of expected.csv (gnafgen -list), from the records.
	out.list = map[string][]string{}
	num := func(prefix string, n int32, suffix string) string {
		if n == Null {
			return prefix + suffix
		}
		return prefix + strconv.Itoa(int(n)) + suffix
	}
	ps := func(b byte) string {
		if b == 0 {
			return ""
		}
		return string(b)
	}
	for _, a := range addrs {
		s, l := streets[a.StreetLocalityPID], locs[a.LocalityPID]
		var parts []string
		if a.FlatTypeCode != "" {
			parts = append(parts, out.auth["FLAT_TYPE_AUT"][a.FlatTypeCode].Name+" "+num(a.FlatNumberPrefix, a.FlatNumber, a.FlatNumberSuffix))
		}
		if a.LevelTypeCode != "" {
			parts = append(parts, strings.TrimSpace(out.auth["LEVEL_TYPE_AUT"][a.LevelTypeCode].Name+" "+num(a.LevelNumberPrefix, a.LevelNumber, a.LevelNumberSuffix)))
		}
		if a.BuildingName != "" {
			parts = append(parts, a.BuildingName)
		}
		n := "LOT " + a.LotNumberPrefix + a.LotNumber + a.LotNumberSuffix
		if a.NumberFirst != Null {
			n = num(a.NumberFirstPrefix, a.NumberFirst, a.NumberFirstSuffix)
			if a.NumberLast != Null {
				n += "-" + num(a.NumberLastPrefix, a.NumberLast, a.NumberLastSuffix)
			}
		}
		street := s.Name + " " + out.auth["STREET_TYPE_AUT"][s.TypeCode].Name
		if s.SuffixCode != "" {
			street += " " + s.SuffixCode
		}
		parts = append(parts, n+" "+street)
		state := states[l.StatePID]
		line := strings.Join(parts, ", ") + ", " + l.Name + " " + state + " " + a.Postcode
		out.list[a.PID] = []string{a.PID, line, ps(a.AliasPrincipal), principal[a.PID], ps(a.PrimarySecondary), a.BuildingName,
			a.FlatTypeCode, num(a.FlatNumberPrefix, a.FlatNumber, a.FlatNumberSuffix), a.LevelTypeCode,
			num(a.LevelNumberPrefix, a.LevelNumber, a.LevelNumberSuffix), a.LotNumberPrefix + a.LotNumber + a.LotNumberSuffix,
			num(a.NumberFirstPrefix, a.NumberFirst, ""), a.NumberFirstSuffix, num(a.NumberLastPrefix, a.NumberLast, a.NumberLastSuffix),
			s.Name, s.TypeCode, s.SuffixCode, l.Name, a.State, a.Postcode}
	}
	return out
}

// clone copies the strings of a record out of the read buffer.
func clone[T any](v T) T {
	rv := reflect.ValueOf(&v).Elem()
	for i := 0; i < rv.NumField(); i++ {
		if f := rv.Field(i); f.Kind() == reflect.String {
			f.SetString(strings.Clone(f.String()))
		}
	}
	return v
}

func readList(t testing.TB, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]string{}
	for _, r := range rows[1:] {
		m[r[0]] = r
	}
	return m
}

func compareList(t *testing.T, got, want map[string][]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d addresses, want %d", len(got), len(want))
	}
	bad := 0
	for pid, w := range want {
		if g := got[pid]; !reflect.DeepEqual(g, w) && bad < 10 {
			bad++
			t.Errorf("%s:\n got %q\nwant %q", pid, g, w)
		}
	}
}

func TestFixtures(t *testing.T) {
	dir := fixtures(t)
	want := readList(t, filepath.Join(dir, "expected.csv"))
	forms := map[string]string{
		"root":    dir,
		"G-NAF":   filepath.Join(dir, "G-NAF"),
		"release": filepath.Join(dir, "G-NAF", "G-NAF NOVEMBER 2024"),
		"zip":     zipFolder(t, filepath.Join(dir, "G-NAF"), "G-NAF/"),
	}
	var first *release
	for _, form := range []string{"root", "G-NAF", "release", "zip"} {
		got := readRelease(t, forms[form])
		if got.name != "G-NAF NOVEMBER 2024" {
			t.Errorf("%s: name %q", form, got.name)
		}
		if s := strings.Join(got.states, " "); s != "ACT NSW NT OT QLD SA TAS VIC WA" {
			t.Errorf("%s: states %s", form, s)
		}
		counts := map[string][2]int64{
			TableState: {9, 1}, TableLocality: {21, 5}, TableLocalityAlias: {5, 5}, TableStreetLocality: {29, 5},
			TableStreetLocalityAlias: {3, 4}, TableAddressDetail: {47, 11}, TableAddressGeocode: {47, 12}, TableAddressAlias: {3, 1},
		}
		for tb, c := range counts {
			st := got.stats[tb]
			if st.Rows != c[0] || st.Retired != c[1] || st.Rejected != 0 || st.Files != 9 {
				t.Errorf("%s: %s: %+v, want %d rows, %d retired, none rejected, 9 files", form, tb, st, c[0], c[1])
			}
		}
		compareList(t, got.list, want)
		if got.total != got.progress || got.total == 0 {
			t.Errorf("%s: progress reported %d bytes of ADDRESS_DETAIL, TotalBytes %d", form, got.progress, got.total)
		}
		if first == nil {
			first = got
			continue
		}
		if !reflect.DeepEqual(got, first) {
			for tb := range first.records {
				if !reflect.DeepEqual(got.records[tb], first.records[tb]) {
					t.Errorf("%s and %s differ in %s", form, "root", tb)
				}
			}
			t.Errorf("%s reads differently from root", form)
		}
	}

	// Spot checks, by name from the README.
	has := func(table, s string) {
		t.Helper()
		for _, r := range first.records[table] {
			if strings.Contains(r, s) {
				return
			}
		}
		t.Errorf("%s: no record with %q", table, s)
	}
	hasNot := func(table, s string) {
		t.Helper()
		for _, r := range first.records[table] {
			if strings.Contains(r, s) {
				t.Errorf("%s: retired %q read: %s", table, s, r)
			}
		}
	}
	has(TableState, "Abbreviation:OT}")
	hasNot(TableState, "JBT")
	for _, l := range []string{"GINNINDERRA", "SOUTH ST MARYS", "FLYING FISH COVE", "CHEVRON ISLAND", "TANTI"} {
		hasNot(TableLocality, "Name:"+l+" ")
	}
	has(TableLocality, "Name:O'CONNOR ")
	has(TableLocality, "Name:MOUNT COOT-THA ")
	for _, l := range []string{"OCONNOR", "SAINT MARYS", "DRUMSITE", "MT COOT-THA", "SAINT KILDA"} {
		has(TableLocalityAlias, "Name:"+l+" ")
	}
	for _, l := range []string{"JAMISON", "SOUTH CREEK", "SILVER CITY", "ELKHORN", "SCHNAPPER POINT"} {
		hasNot(TableLocalityAlias, "Name:"+l+" ")
	}
	hasNot(TableStreetLocality, "Name:LATHLAIN ")
	hasNot(TableStreetLocality, "Name:TANTI ")
	has(TableStreetLocalityAlias, "Name:CAPTAIN COOK TypeCode:ROAD")
	hasNot(TableStreetLocalityAlias, "Name:MARTINS ")
	has(TableAddressGeocode, "TypeCode:PC Lon:151.0653217 Lat:-33.8622904")
	hasNot(TableAddressAlias, "GANSW717138655")
	if n := len(first.records[TableAddressGeocode]); n != 47 {
		t.Errorf("%d geocodes", n)
	}
	for _, r := range first.records[TableAddressDetail] {
		if strings.ContainsAny(r, "\r\n|") {
			t.Errorf("line end or pipe in %s", r)
		}
	}

	// Authority tables.
	f := func(table, code, name string) {
		t.Helper()
		if got := first.auth[table][code].Name; got != name {
			t.Errorf("%s %s: name %q, want %q", table, code, got, name)
		}
	}
	f("STREET_TYPE_AUT", "AVENUE", "AV")
	f("STREET_TYPE_AUT", "ESPLANADE", "ESP")
	f("FLAT_TYPE_AUT", "SE", "SUITE")
	f("FLAT_TYPE_AUT", "APT", "APARTMENT")
	f("LEVEL_TYPE_AUT", "G", "GROUND")
	f("LEVEL_TYPE_AUT", "PTHS", "PENTHOUSE")
	f("STREET_SUFFIX_AUT", "N", "NORTH")
	if len(first.auth) != 9 || len(first.auth["STREET_TYPE_AUT"]) != 17 || len(first.auth["LEVEL_TYPE_AUT"]) != 14 {
		t.Errorf("authority tables: %d, street types %d, level types %d", len(first.auth), len(first.auth["STREET_TYPE_AUT"]), len(first.auth["LEVEL_TYPE_AUT"]))
	}
}

// TestFixtureFields checks one record of each kind field by field.
func TestFixtureFields(t *testing.T) {
	r, err := Open(fixtures(t))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	addrs := map[string]Address{}
	if _, err := r.AddressDetails(func(a *Address) error { c := clone(*a); addrs[c.PID] = c; return nil }); err != nil {
		t.Fatal(err)
	}
	f := func(pid string, want Address) {
		t.Helper()
		want.PID = pid
		if got := addrs[pid]; got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", pid, got, want)
		}
	}
	// UNIT 12, LEVEL 3, BELCONNEN TOWERS, 1 BENJAMIN WAY, BELCONNEN ACT 2617
	a := addrs["GAACT714845002"]
	f("GAACT714845002", Address{State: "ACT", BuildingName: "BELCONNEN TOWERS", FlatTypeCode: "UNIT", FlatNumber: 12,
		LevelTypeCode: "L", LevelNumber: 3, NumberFirst: 1, NumberLast: Null, StreetLocalityPID: a.StreetLocalityPID,
		LocalityPID: a.LocalityPID, Postcode: "2617", AliasPrincipal: 'P', PrimarySecondary: 'S', Confidence: a.Confidence,
		AddressSitePID: a.AddressSitePID})
	if a.StreetLocalityPID == "" || a.LocalityPID == "" || a.AddressSitePID == "" || a.Confidence == Null {
		t.Errorf("GAACT714845002: %+v", a)
	}
	// LOT 16 AERODROME RD, APPLETHORPE QLD 4378, in the file with its columns reversed.
	a = addrs["GAQLD425001601"]
	f("GAQLD425001601", Address{State: "QLD", LotNumber: "16", FlatNumber: Null, LevelNumber: Null, NumberFirst: Null,
		NumberLast: Null, StreetLocalityPID: "QLD3100201", LocalityPID: "loc06ecf5fe32b3", Postcode: "4378",
		AliasPrincipal: 'P', Confidence: 2, AddressSitePID: "425101001"})
	// 455A CAPTAIN COOK DR and 18-20 COURALLIE AV
	if a := addrs["GANSW721651323"]; a.NumberFirst != 455 || a.NumberFirstSuffix != "A" || a.NumberLast != Null {
		t.Errorf("455A: %+v", a)
	}
	if a := addrs["GANSW717138653"]; a.NumberFirst != 18 || a.NumberLast != 20 || a.PrimarySecondary != 0 {
		t.Errorf("18-20: %+v", a)
	}
	// CRLF file: the last column is read without the \r.
	if a := addrs["GAVIC421900105"]; a.PrimarySecondary != 'S' || a.FlatNumber != 1203 || a.LevelNumber != 12 {
		t.Errorf("VIC (CRLF): %+v", a)
	}
}

// TestGenerated reads a release written by bench/gnafgen, with \r\n line
// ends, as a folder and as a ZIP, against the list of addresses it wrote.
func TestGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go run ./bench/gnafgen")
	}
	dir := generate(t, t.TempDir(), 20000, "-crlf")
	want := readList(t, filepath.Join(dir, "list.csv"))
	folder := readRelease(t, filepath.Join(dir, "G-NAF"))
	compareList(t, folder.list, want)
	zipped := readRelease(t, filepath.Join(dir, "g-naf_nov24_allstates_gda2020_psv_1017.zip"))
	if !reflect.DeepEqual(folder, zipped) {
		t.Errorf("folder and ZIP read differently")
	}
	st := folder.stats[TableAddressDetail]
	if st.Rows != 20000 || st.Retired == 0 || st.Rejected != 0 {
		t.Errorf("ADDRESS_DETAIL: %+v", st)
	}
	if folder.total != folder.progress {
		t.Errorf("progress %d, TotalBytes %d", folder.progress, folder.total)
	}
}

// generate runs bench/gnafgen to write a release of n addresses, as a
// folder and a ZIP, and a list of its addresses (list.csv), into dir.
func generate(t testing.TB, dir string, n int, flags ...string) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"run", "./bench/gnafgen", "-out", dir, "-addresses", strconv.Itoa(n), "-format", "both",
		"-progress", "0", "-list", filepath.Join(dir, "list.csv")}, flags...)
	if out, err := runGo(root, args...); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return dir
}

func TestAuthority(t *testing.T) {
	r, err := Open(fixtures(t))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f := func(table string, n int, wantErr string) {
		t.Helper()
		m, _, err := r.Authority(table)
		if (err == nil) != (wantErr == "") || (err != nil && !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%s: error %v, want %q", table, err, wantErr)
		}
		if len(m) != n {
			t.Errorf("%s: %d codes, want %d", table, len(m), n)
		}
	}
	f("STREET_TYPE_AUT", 17, "")
	f("street_type", 17, "")
	f("FLAT_TYPE", 7, "")
	f("MB_MATCH_CODE_AUT", 0, "no authority code table MB_MATCH_CODE_AUT")
	if got := strings.Join(r.AuthorityTables(), " "); !strings.Contains(got, "LOCALITY_CLASS_AUT") {
		t.Errorf("AuthorityTables: %s", got)
	}
	if r.Size(TableLocality) == 0 || r.Size("STREET_TYPE_AUT") == 0 || r.Size("NOTHING") != 0 {
		t.Errorf("Size")
	}
}

// TestConcurrent reads the same ZIP on several goroutines at once.
func TestConcurrent(t *testing.T) {
	r, err := Open(zipFolder(t, filepath.Join(fixtures(t), "G-NAF"), "G-NAF/"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := r.AddressDetails(func(*Address) error { return nil })
			if err != nil || st.Rows != 47 {
				t.Errorf("%+v %v", st, err)
			}
		}()
	}
	wg.Wait()
}

// TestCallbackError stops at the callback's error, returned as is, and
// leaves the release usable; Close ends it.
func TestCallbackError(t *testing.T) {
	for _, p := range []string{fixtures(t), zipFolder(t, filepath.Join(fixtures(t), "G-NAF"), "G-NAF/")} {
		r, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		stop := fmt.Errorf("stop")
		n := 0
		st, err := r.AddressDetails(func(*Address) error { n++; return stop })
		if err != stop || n != 1 || st.Rows != 1 {
			t.Errorf("%s: %v after %d rows", p, err, n)
		}
		if st, err := r.AddressDetails(func(*Address) error { return nil }); err != nil || st.Rows != 47 {
			t.Errorf("%s: again: %+v %v", p, st, err)
		}
		r.Close()
		if _, err := r.Localities(func(*Locality) error { return nil }); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("%s: after Close: %v", p, err)
		}
		if err := r.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	}
}

// TestOpenFolder checks how Open finds the release in a folder.
func TestOpenFolder(t *testing.T) {
	f := func(files []string, wantName, wantErr string) {
		t.Helper()
		dir := t.TempDir()
		hdr := strings.Join(addressSpec.cols, "|") + "\n"
		for _, p := range files {
			p = filepath.Join(dir, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(hdr), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r, err := Open(dir)
		if (err == nil) != (wantErr == "") || (err != nil && !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%v: error %v, want %q", files, err, wantErr)
		}
		if err == nil {
			if r.Name() != wantName {
				t.Errorf("%v: name %q, want %q", files, r.Name(), wantName)
			}
			r.Close()
		}
	}
	f([]string{"G-NAF/G-NAF MAY 2025/Standard/VIC_ADDRESS_DETAIL_psv.psv"}, "G-NAF MAY 2025", "")
	f([]string{"X/Standard/vic_address_detail_PSV.psv", "X/Extras/README"}, "X", "")
	f([]string{"a/b/c/Standard/VIC_ADDRESS_DETAIL_psv.psv"}, "", "no Standard folder")
	f([]string{"README"}, "", "no Standard folder")
	f([]string{"A/Standard/VIC_ADDRESS_DETAIL_psv.psv", "B/Standard/VIC_ADDRESS_DETAIL_psv.psv"}, "", "2 releases")
	f([]string{"A/Standard/VIC_LOCALITY_psv.psv"}, "", "no ADDRESS_DETAIL files")
	f([]string{"A/Standard/XX_ADDRESS_DETAIL_psv.psv"}, "", "no ADDRESS_DETAIL files")
	if _, err := Open(filepath.Join(t.TempDir(), "nothing")); err == nil {
		t.Errorf("missing path opened")
	}
	r, err := Open(filepath.Join(fixtures(t), "G-NAF"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Localities(func(*Locality) error { return nil }); err != nil {
		t.Fatal(err)
	}
	s := r.States()
	s[0] = "XX" // States returns a copy
	if r.States()[0] != "ACT" {
		t.Errorf("States not a copy")
	}
}
