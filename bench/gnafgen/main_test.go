package main

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// documented holds the column lists of ../shared/docs/gnaf-format.md,
// copied here independently of the generator's own.
var documented = map[string]string{
	"STATE":                 "STATE_PID|DATE_CREATED|DATE_RETIRED|STATE_NAME|STATE_ABBREVIATION",
	"LOCALITY":              "LOCALITY_PID|DATE_CREATED|DATE_RETIRED|LOCALITY_NAME|PRIMARY_POSTCODE|LOCALITY_CLASS_CODE|STATE_PID|GNAF_LOCALITY_PID|GNAF_RELIABILITY_CODE",
	"LOCALITY_ALIAS":        "LOCALITY_ALIAS_PID|DATE_CREATED|DATE_RETIRED|LOCALITY_PID|NAME|POSTCODE|ALIAS_TYPE_CODE|STATE_PID",
	"STREET_LOCALITY":       "STREET_LOCALITY_PID|DATE_CREATED|DATE_RETIRED|STREET_CLASS_CODE|STREET_NAME|STREET_TYPE_CODE|STREET_SUFFIX_CODE|LOCALITY_PID|GNAF_STREET_PID|GNAF_STREET_CONFIDENCE|GNAF_RELIABILITY_CODE",
	"STREET_LOCALITY_ALIAS": "STREET_LOCALITY_ALIAS_PID|DATE_CREATED|DATE_RETIRED|STREET_LOCALITY_PID|STREET_NAME|STREET_TYPE_CODE|STREET_SUFFIX_CODE|ALIAS_TYPE_CODE",
	"ADDRESS_DETAIL": "ADDRESS_DETAIL_PID|DATE_CREATED|DATE_LAST_MODIFIED|DATE_RETIRED|BUILDING_NAME|LOT_NUMBER_PREFIX|LOT_NUMBER|LOT_NUMBER_SUFFIX|FLAT_TYPE_CODE|" +
		"FLAT_NUMBER_PREFIX|FLAT_NUMBER|FLAT_NUMBER_SUFFIX|LEVEL_TYPE_CODE|LEVEL_NUMBER_PREFIX|LEVEL_NUMBER|LEVEL_NUMBER_SUFFIX|NUMBER_FIRST_PREFIX|NUMBER_FIRST|" +
		"NUMBER_FIRST_SUFFIX|NUMBER_LAST_PREFIX|NUMBER_LAST|NUMBER_LAST_SUFFIX|STREET_LOCALITY_PID|LOCATION_DESCRIPTION|LOCALITY_PID|ALIAS_PRINCIPAL|POSTCODE|" +
		"PRIVATE_STREET|LEGAL_PARCEL_ID|CONFIDENCE|ADDRESS_SITE_PID|LEVEL_GEOCODED_CODE|PROPERTY_PID|GNAF_PROPERTY_PID|PRIMARY_SECONDARY",
	"ADDRESS_DEFAULT_GEOCODE": "ADDRESS_DEFAULT_GEOCODE_PID|DATE_CREATED|DATE_RETIRED|ADDRESS_DETAIL_PID|GEOCODE_TYPE_CODE|LONGITUDE|LATITUDE",
	"ADDRESS_ALIAS":           "ADDRESS_ALIAS_PID|DATE_CREATED|DATE_RETIRED|PRINCIPAL_PID|ALIAS_PID|ALIAS_TYPE_CODE|ALIAS_COMMENT",
}

var tableNames = []string{"STATE", "LOCALITY", "LOCALITY_ALIAS", "STREET_LOCALITY", "STREET_LOCALITY_ALIAS",
	"ADDRESS_DETAIL", "ADDRESS_DEFAULT_GEOCODE", "ADDRESS_ALIAS"}

var stateAbbrs = []string{"ACT", "NSW", "NT", "OT", "QLD", "SA", "TAS", "VIC", "WA"}

var authTables = []string{"STREET_TYPE_AUT", "FLAT_TYPE_AUT", "LEVEL_TYPE_AUT", "STREET_SUFFIX_AUT", "LOCALITY_CLASS_AUT"}

// A psv is one parsed table file, read by header name.
type psv struct {
	name   string
	header []string
	idx    map[string]int
	rows   [][]string
	crlf   bool
}

func (p *psv) get(row []string, col string) string {
	i, ok := p.idx[col]
	if !ok {
		panic(p.name + ": no column " + col)
	}
	return row[i]
}

func (p *psv) live(row []string) bool { return p.get(row, "DATE_RETIRED") == "" }

// readPSV parses a pipe-separated file with a header; rows end with \n or \r\n.
func readPSV(t *testing.T, fsys fs.FS, name string) *psv {
	t.Helper()
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		t.Fatalf("%s: empty or last line unterminated", name)
	}
	p := &psv{name: name, idx: map[string]int{}, crlf: bytes.Contains(data, []byte("\r\n"))}
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		f := strings.Split(strings.TrimSuffix(line, "\r"), "|")
		if i == 0 {
			p.header = f
			for j, h := range f {
				if _, dup := p.idx[h]; dup {
					t.Fatalf("%s: column %s twice", name, h)
				}
				p.idx[h] = j
			}
			continue
		}
		if len(f) != len(p.header) {
			t.Fatalf("%s:%d: %d fields, header has %d", name, i+1, len(f), len(p.header))
		}
		p.rows = append(p.rows, f)
	}
	return p
}

// A gnaf is a release read back: tables["NSW"]["ADDRESS_DETAIL"] and auth["STREET_TYPE_AUT"].
type gnaf struct {
	tables map[string]map[string]*psv
	auth   map[string]*psv
}

func readRelease(t *testing.T, fsys fs.FS) *gnaf {
	t.Helper()
	g := &gnaf{tables: map[string]map[string]*psv{}, auth: map[string]*psv{}}
	for _, st := range stateAbbrs {
		g.tables[st] = map[string]*psv{}
		for _, tb := range tableNames {
			g.tables[st][tb] = readPSV(t, fsys, "Standard/"+st+"_"+tb+"_psv.psv")
		}
	}
	ents, err := fs.ReadDir(fsys, "Authority Code")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		name := strings.TrimSuffix(strings.TrimPrefix(e.Name(), "Authority_Code_"), "_psv.psv")
		g.auth[name] = readPSV(t, fsys, "Authority Code/"+e.Name())
	}
	for _, a := range authTables {
		if g.auth[a] == nil {
			t.Fatalf("no Authority_Code_%s_psv.psv", a)
		}
	}
	return g
}

// authMap returns CODE -> NAME of an authority table.
func (g *gnaf) authMap(table string) map[string]string {
	m := map[string]string{}
	p := g.auth[table]
	for _, r := range p.rows {
		m[p.get(r, "CODE")] = p.get(r, "NAME")
	}
	return m
}

// check verifies the referential structure of a release and returns its
// live addresses in -list form (keyed by PID) and the single-line forms of
// its retired addresses.
func check(t *testing.T, g *gnaf) (live map[string][]string, retired []string) {
	t.Helper()
	streetTypes, flatTypes := g.authMap("STREET_TYPE_AUT"), g.authMap("FLAT_TYPE_AUT")
	levelTypes, suffixes := g.authMap("LEVEL_TYPE_AUT"), g.authMap("STREET_SUFFIX_AUT")
	for _, a := range g.auth {
		if strings.Join(a.header, "|") != "CODE|NAME|DESCRIPTION" {
			t.Errorf("%s: header %v", a.name, a.header)
		}
	}
	// PIDs are unique per table across states.
	for _, tb := range tableNames {
		seen := map[string]string{}
		for _, st := range stateAbbrs {
			p := g.tables[st][tb]
			key := strings.Split(documented[tb], "|")[0]
			for _, r := range p.rows {
				if pid := p.get(r, key); pid == "" {
					t.Errorf("%s: empty PID", p.name)
				} else if prev, dup := seen[pid]; dup {
					t.Errorf("%s: PID %s also in %s", p.name, pid, prev)
				} else {
					seen[pid] = p.name
				}
			}
		}
	}
	live = map[string][]string{}
	for _, st := range stateAbbrs {
		tb := g.tables[st]
		stateAbbr := map[string]string{}
		for _, r := range tb["STATE"].rows {
			if tb["STATE"].live(r) {
				stateAbbr[tb["STATE"].get(r, "STATE_PID")] = tb["STATE"].get(r, "STATE_ABBREVIATION")
			}
		}
		if len(tb["STATE"].rows) > 0 && len(stateAbbr) != 1 {
			t.Errorf("%s_STATE: want one live row, have %d", st, len(stateAbbr))
		}
		index := func(table, col string) map[string][]string {
			p, m := tb[table], map[string][]string{}
			for _, r := range p.rows {
				m[p.get(r, col)] = r
			}
			return m
		}
		locs, streets, addrs := index("LOCALITY", "LOCALITY_PID"), index("STREET_LOCALITY", "STREET_LOCALITY_PID"),
			index("ADDRESS_DETAIL", "ADDRESS_DETAIL_PID")
		lp, sp, ap := tb["LOCALITY"], tb["STREET_LOCALITY"], tb["ADDRESS_DETAIL"]
		for _, r := range lp.rows {
			if abbr := stateAbbr[lp.get(r, "STATE_PID")]; abbr != st {
				t.Errorf("%s: locality %s in state %q", lp.name, lp.get(r, "LOCALITY_NAME"), abbr)
			}
		}
		// ref reports a missing or, for a live row, retired target.
		ref := func(p *psv, r []string, col string, target map[string][]string, tp *psv) []string {
			t.Helper()
			x, ok := target[p.get(r, col)]
			if !ok {
				t.Errorf("%s: %s %q not in %s", p.name, col, p.get(r, col), tp.name)
				return nil
			}
			if p.live(r) && !tp.live(x) {
				t.Errorf("%s: live row refers to retired %s %q", p.name, col, p.get(r, col))
			}
			return x
		}
		for _, r := range sp.rows {
			ref(sp, r, "LOCALITY_PID", locs, lp)
			if _, ok := streetTypes[sp.get(r, "STREET_TYPE_CODE")]; !ok {
				t.Errorf("%s: street type %q not in STREET_TYPE_AUT", sp.name, sp.get(r, "STREET_TYPE_CODE"))
			}
			if s := sp.get(r, "STREET_SUFFIX_CODE"); s != "" && suffixes[s] == "" {
				t.Errorf("%s: suffix %q not in STREET_SUFFIX_AUT", sp.name, s)
			}
		}
		for _, r := range tb["LOCALITY_ALIAS"].rows {
			ref(tb["LOCALITY_ALIAS"], r, "LOCALITY_PID", locs, lp)
		}
		for _, r := range tb["STREET_LOCALITY_ALIAS"].rows {
			ref(tb["STREET_LOCALITY_ALIAS"], r, "STREET_LOCALITY_PID", streets, sp)
		}
		geocoded := map[string]int{}
		gp := tb["ADDRESS_DEFAULT_GEOCODE"]
		for _, r := range gp.rows {
			ref(gp, r, "ADDRESS_DETAIL_PID", addrs, ap)
			if gp.live(r) {
				geocoded[gp.get(r, "ADDRESS_DETAIL_PID")]++
			}
		}
		principal := map[string]string{}
		aap := tb["ADDRESS_ALIAS"]
		for _, r := range aap.rows {
			p := ref(aap, r, "PRINCIPAL_PID", addrs, ap)
			a := ref(aap, r, "ALIAS_PID", addrs, ap)
			if p == nil || a == nil {
				continue
			}
			if ap.get(p, "ALIAS_PRINCIPAL") != "P" || ap.get(a, "ALIAS_PRINCIPAL") != "A" {
				t.Errorf("%s: %s -> %s is not principal -> alias", aap.name, ap.get(p, "ADDRESS_DETAIL_PID"), ap.get(a, "ADDRESS_DETAIL_PID"))
			}
			if aap.live(r) {
				principal[aap.get(r, "ALIAS_PID")] = aap.get(r, "PRINCIPAL_PID")
			}
		}
		for _, r := range ap.rows {
			pid := ap.get(r, "ADDRESS_DETAIL_PID")
			s := ref(ap, r, "STREET_LOCALITY_PID", streets, sp)
			l := ref(ap, r, "LOCALITY_PID", locs, lp)
			if s == nil || l == nil {
				continue
			}
			if sp.get(s, "LOCALITY_PID") != ap.get(r, "LOCALITY_PID") {
				t.Errorf("%s: %s: street and address in different localities", ap.name, pid)
			}
			get := func(c string) string { return ap.get(r, c) }
			num := func(c string) string { return get(c+"_PREFIX") + get(c) + get(c+"_SUFFIX") }
			var parts []string
			if ft := get("FLAT_TYPE_CODE"); ft != "" {
				if flatTypes[ft] == "" {
					t.Errorf("%s: %s: flat type %q not in FLAT_TYPE_AUT", ap.name, pid, ft)
				}
				parts = append(parts, flatTypes[ft]+" "+num("FLAT_NUMBER"))
			}
			if lt := get("LEVEL_TYPE_CODE"); lt != "" {
				if levelTypes[lt] == "" {
					t.Errorf("%s: %s: level type %q not in LEVEL_TYPE_AUT", ap.name, pid, lt)
				}
				parts = append(parts, strings.TrimSpace(levelTypes[lt]+" "+num("LEVEL_NUMBER")))
			}
			if b := get("BUILDING_NAME"); b != "" {
				parts = append(parts, b)
			}
			var n string
			if get("NUMBER_FIRST") != "" {
				n = num("NUMBER_FIRST")
				if get("NUMBER_LAST") != "" {
					n += "-" + num("NUMBER_LAST")
				}
			} else if get("LOT_NUMBER") != "" {
				n = "LOT " + num("LOT_NUMBER")
			} else {
				t.Errorf("%s: %s: neither NUMBER_FIRST nor LOT_NUMBER", ap.name, pid)
			}
			street := sp.get(s, "STREET_NAME") + " " + streetTypes[sp.get(s, "STREET_TYPE_CODE")]
			if sfx := sp.get(s, "STREET_SUFFIX_CODE"); sfx != "" {
				street += " " + sfx
			}
			parts = append(parts, n+" "+street)
			line := strings.Join(parts, ", ") + ", " + lp.get(l, "LOCALITY_NAME") + " " + st + " " + get("POSTCODE")
			if !ap.live(r) {
				retired = append(retired, line)
				continue
			}
			if geocoded[pid] != 1 {
				t.Errorf("%s: %s has %d live geocodes", ap.name, pid, geocoded[pid])
			}
			ps := get("ALIAS_PRINCIPAL")
			if ps != "P" && ps != "A" {
				t.Errorf("%s: %s: ALIAS_PRINCIPAL %q", ap.name, pid, ps)
			}
			if (ps == "A") != (principal[pid] != "") {
				t.Errorf("%s: %s: ALIAS_PRINCIPAL %s but principal %q", ap.name, pid, ps, principal[pid])
			}
			live[pid] = []string{pid, line, ps, principal[pid], get("PRIMARY_SECONDARY"), get("BUILDING_NAME"),
				get("FLAT_TYPE_CODE"), num("FLAT_NUMBER"), get("LEVEL_TYPE_CODE"), num("LEVEL_NUMBER"), num("LOT_NUMBER"),
				get("NUMBER_FIRST_PREFIX") + get("NUMBER_FIRST"), get("NUMBER_FIRST_SUFFIX"), num("NUMBER_LAST"),
				sp.get(s, "STREET_NAME"), sp.get(s, "STREET_TYPE_CODE"), sp.get(s, "STREET_SUFFIX_CODE"),
				lp.get(l, "LOCALITY_NAME"), st, get("POSTCODE")}
		}
	}
	// Every live address reads differently, and no retired one reads like a live one.
	lines := map[string]string{}
	for pid, r := range live {
		if prev, dup := lines[r[1]]; dup {
			t.Errorf("%s and %s are both %q", prev, pid, r[1])
		}
		lines[r[1]] = pid
	}
	for _, l := range retired {
		if pid, dup := lines[l]; dup {
			t.Errorf("retired address %q reads like live %s", l, pid)
		}
	}
	return live, retired
}

// readList reads a -list CSV (or expected.csv) keyed by PID.
func readList(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(recs[0], ","), "ADDRESS_DETAIL_PID,ADDRESS,ALIAS_PRINCIPAL,PRINCIPAL_PID,PRIMARY_SECONDARY,"+
		"BUILDING_NAME,FLAT_TYPE,FLAT_NUMBER,LEVEL_TYPE,LEVEL_NUMBER,LOT_NUMBER,NUMBER_FIRST,NUMBER_FIRST_SUFFIX,NUMBER_LAST,"+
		"STREET_NAME,STREET_TYPE,STREET_SUFFIX,LOCALITY_NAME,STATE,POSTCODE"; got != want {
		t.Fatalf("%s: header %s", path, got)
	}
	m := map[string][]string{}
	for _, r := range recs[1:] {
		if _, dup := m[r[0]]; dup {
			t.Errorf("%s: %s twice", path, r[0])
		}
		m[r[0]] = r
	}
	return m
}

func compareList(t *testing.T, list, want map[string][]string) {
	t.Helper()
	for pid, w := range want {
		if got, ok := list[pid]; !ok {
			t.Errorf("live %s (%s) not in the list", pid, w[1])
		} else if strings.Join(got, "\x00") != strings.Join(w, "\x00") {
			t.Errorf("list row\n  %q\nwant\n  %q", got, w)
		}
	}
	for pid, r := range list {
		if _, ok := want[pid]; !ok {
			t.Errorf("list row %s (%s) is no live address", pid, r[1])
		}
	}
}

func testConfig(dir string, n int) *config {
	return &config{out: dir, addresses: n, seed: 42, format: "both", month: "NOVEMBER 2024",
		list: filepath.Join(dir, "list.csv"), aliasesFrac: 0.03, retiredFrac: 0.005, workers: 3}
}

const releasePath = "G-NAF/G-NAF NOVEMBER 2024"

func TestRelease(t *testing.T) {
	const n = 2000
	dir := t.TempDir()
	cfg := testConfig(dir, n)
	sum, err := generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.addresses != n {
		t.Errorf("summary: %d addresses, want %d", sum.addresses, n)
	}
	folder := os.DirFS(filepath.Join(dir, releasePath))
	zr, err := zip.OpenReader(filepath.Join(dir, "g-naf_nov24_allstates_gda2020_psv_1017.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	zipped, err := fs.Sub(zr, releasePath)
	if err != nil {
		t.Fatal(err)
	}

	// The ZIP holds exactly the folder's files, byte for byte.
	var files []string
	err = fs.WalkDir(folder, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(stateAbbrs)*len(tableNames) + len(authTables); len(files) < want {
		t.Errorf("%d files, want at least %d", len(files), want)
	}
	zipFiles := 0
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, "/") {
			zipFiles++
			if !strings.HasPrefix(f.Name, releasePath+"/") {
				t.Errorf("zip entry %s outside %s", f.Name, releasePath)
			}
		}
	}
	if zipFiles != len(files) {
		t.Errorf("zip has %d files, folder %d", zipFiles, len(files))
	}
	for _, p := range files {
		a, err1 := fs.ReadFile(folder, p)
		b, err2 := fs.ReadFile(zipped, p)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between folder and zip", p)
		}
	}

	for _, fsys := range []fs.FS{folder, zipped} {
		g := readRelease(t, fsys)
		header := func(p *psv, want string) {
			t.Helper()
			if got := strings.Join(p.header, "|"); got != want {
				t.Errorf("%s: header\n  %s\nwant\n  %s", p.name, got, want)
			}
		}
		for _, st := range stateAbbrs {
			for _, tb := range tableNames {
				header(g.tables[st][tb], documented[tb])
			}
		}
		live, retired := check(t, g)
		if len(live) != n {
			t.Errorf("%d live addresses, want %d", len(live), n)
		}
		if len(retired) == 0 {
			t.Error("no retired addresses")
		}
		compareList(t, readList(t, cfg.list), live)

		// Retired rows in every table but STATE.
		for _, tb := range tableNames[1:] {
			r := 0
			for _, st := range stateAbbrs {
				p := g.tables[st][tb]
				for _, row := range p.rows {
					if !p.live(row) {
						r++
					}
				}
			}
			if r == 0 {
				t.Errorf("no retired %s rows", tb)
			}
		}

		// Authority codes as documented.
		code := func(table, c, name string) {
			t.Helper()
			if got := g.authMap(table)[c]; got != name {
				t.Errorf("%s %s: NAME %q, want %q", table, c, got, name)
			}
		}
		code("STREET_TYPE_AUT", "AVENUE", "AV")
		code("STREET_TYPE_AUT", "STREET", "ST")
		code("STREET_TYPE_AUT", "CRESCENT", "CR")
		code("STREET_TYPE_AUT", "ESPLANADE", "ESP")
		code("FLAT_TYPE_AUT", "APT", "APARTMENT")
		code("FLAT_TYPE_AUT", "SE", "SUITE")
		code("LEVEL_TYPE_AUT", "L", "LEVEL")
		code("LEVEL_TYPE_AUT", "UG", "UPPER GROUND")
		code("STREET_SUFFIX_AUT", "N", "NORTH")
		code("STREET_SUFFIX_AUT", "EX", "EXTENSION")
		code("LOCALITY_CLASS_AUT", "G", "GAZETED")
	}

	// Per locality (name, state, postcode) the live count is the real count
	// scaled to n: floor or floor+1 of n*count/total.
	g := readRelease(t, folder)
	live, _ := check(t, g)
	got := map[string]int{}
	for _, r := range live {
		got[r[17]+"|"+r[18]+"|"+r[19]]++
	}
	rows, err := loadLocalities(cfg.localities)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, r := range rows {
		total += int64(r.count)
	}
	sumFloor := 0
	for _, r := range rows {
		k := r.name + "|" + r.state + "|" + r.postcode
		share := new(big.Rat).SetFrac64(int64(n)*int64(r.count), total)
		floor := new(big.Int).Quo(share.Num(), share.Denom()).Int64()
		sumFloor += int(floor)
		if c := got[k]; int64(c) != floor && int64(c) != floor+1 {
			t.Errorf("%s: %d addresses, share %s", k, c, share.FloatString(2))
		}
		delete(got, k)
	}
	for k, c := range got {
		t.Errorf("%d addresses in %s, which is not in the localities file", c, k)
	}
	if sumFloor > n {
		t.Errorf("floors sum to %d > %d", sumFloor, n)
	}

	// What the generator is meant to produce, present even at this size.
	kinds := map[string]int{}
	for _, r := range live {
		f := func(kind string, ok bool) {
			if ok {
				kinds[kind]++
			}
		}
		f("alias", r[2] == "A")
		f("secondary", r[4] == "S")
		f("primary", r[4] == "P")
		f("building name", r[5] != "")
		f("unit", r[6] == "UNIT")
		f("level", r[8] == "L")
		f("lot", r[10] != "" && r[11] == "")
		f("suffix letter", r[12] != "")
		f("range", r[13] != "")
		f("street suffix", r[16] != "")
	}
	for _, k := range []string{"alias", "secondary", "primary", "building name", "unit", "level", "lot", "suffix letter", "range", "street suffix"} {
		if kinds[k] == 0 {
			t.Errorf("no %s address among %d", k, n)
		}
	}
	t.Logf("kinds of the %d addresses: %v", n, kinds)
}

// TestDeterministic: same seed and size, same bytes (whatever the number of
// workers); another seed, other bytes.
func TestDeterministic(t *testing.T) {
	run := func(seed uint64, workers int) map[string][]byte {
		t.Helper()
		dir := t.TempDir()
		cfg := testConfig(dir, 2000)
		cfg.seed, cfg.workers = seed, workers
		if _, err := generate(cfg); err != nil {
			t.Fatal(err)
		}
		out := map[string][]byte{}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[rel] = b
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b, c := run(7, 1), run(7, 4), run(8, 2) // the number of workers changes nothing
	if len(a) != len(b) {
		t.Fatalf("%d files, then %d", len(a), len(b))
	}
	names := make([]string, 0, len(a))
	for k := range a {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !bytes.Equal(a[k], b[k]) {
			t.Errorf("%s differs between two runs with the same seed", k)
		}
	}
	if _, ok := a["g-naf_nov24_allstates_gda2020_psv_1017.zip"]; !ok {
		t.Error("no zip")
	}
	if bytes.Equal(a["list.csv"], c["list.csv"]) {
		t.Error("seeds 7 and 8 give the same list")
	}
}

func TestScale(t *testing.T) {
	f := func(n int, counts ...int) {
		t.Helper()
		rows := make([]*locRow, len(counts))
		total := 0
		for i, c := range counts {
			rows[i] = &locRow{count: c}
			total += c
		}
		scale(rows, n)
		sum := 0
		for i, r := range rows {
			sum += r.scaled
			if floor := n * counts[i] / total; r.scaled != floor && r.scaled != floor+1 {
				t.Errorf("scale(%d, %v): row %d gets %d", n, counts, i, r.scaled)
			}
		}
		if sum != n {
			t.Errorf("scale(%d, %v) sums to %d", n, counts, sum)
		}
	}
	f(10, 1, 1, 1)
	f(0, 5, 7)
	f(7, 100, 1, 1, 1, 1)
	f(1000, 3, 3, 3, 1)
	f(15600000, 117844, 49606, 1, 0, 2)
	// The remainder goes to the largest fractions, ties to the earlier row.
	rows := []*locRow{{count: 1}, {count: 1}, {count: 1}}
	scale(rows, 2)
	if rows[0].scaled != 1 || rows[1].scaled != 1 || rows[2].scaled != 0 {
		t.Errorf("scale(2, 1 1 1) = %d %d %d, want 1 1 0", rows[0].scaled, rows[1].scaled, rows[2].scaled)
	}
}

func TestNames(t *testing.T) {
	f := func(month, zipWant, dirWant string) {
		t.Helper()
		rel, err := parseMonth(month)
		if err != nil {
			t.Fatal(err)
		}
		if got := zipName(rel); got != zipWant {
			t.Errorf("zipName(%s) = %s, want %s", month, got, zipWant)
		}
		if got := releaseDir(rel); got != dirWant {
			t.Errorf("releaseDir(%s) = %s, want %s", month, got, dirWant)
		}
	}
	f("NOVEMBER 2024", "g-naf_nov24_allstates_gda2020_psv_1017.zip", "G-NAF/G-NAF NOVEMBER 2024")
	f("february 2025", "g-naf_feb25_allstates_gda2020_psv_1017.zip", "G-NAF/G-NAF FEBRUARY 2025")
	for _, bad := range []string{"", "NOVEMBRE 2024", "NOVEMBER", "2024 NOVEMBER"} {
		if _, err := parseMonth(bad); err == nil {
			t.Errorf("parseMonth(%q) accepted", bad)
		}
	}
	// The street name pool is large and free of duplicates.
	p := newNamePool()
	seen := map[string]bool{}
	for _, n := range p.all {
		if seen[n] {
			t.Errorf("pool: %s twice", n)
		}
		seen[n] = true
	}
	if len(p.all) < 5000 {
		t.Errorf("pool has %d names", len(p.all))
	}
}

// TestFixtures checks the hand-written release in testdata/gnaf against
// its expected.csv and for the cases it is meant to exercise.
func TestFixtures(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "testdata", "gnaf")
	fsys := os.DirFS(filepath.Join(dir, filepath.FromSlash(releasePath)))
	g := readRelease(t, fsys)
	crlf, reordered := 0, 0
	for _, st := range stateAbbrs {
		for _, tb := range tableNames {
			p := g.tables[st][tb]
			if p.crlf {
				crlf++
			}
			if got := strings.Join(p.header, "|"); got != documented[tb] {
				reordered++
				a, b := append([]string(nil), p.header...), strings.Split(documented[tb], "|")
				sort.Strings(a)
				sort.Strings(b)
				if strings.Join(a, "|") != strings.Join(b, "|") {
					t.Errorf("%s: columns %s, want (in any order) %s", p.name, got, documented[tb])
				}
			}
		}
	}
	if crlf == 0 || reordered == 0 {
		t.Errorf("%d files with \\r\\n and %d with columns reordered, want some of each", crlf, reordered)
	}
	live, retired := check(t, g)
	compareList(t, readList(t, filepath.Join(dir, "expected.csv")), live)
	if len(live) < 30 || len(live) > 60 || len(retired) == 0 {
		t.Errorf("%d live and %d retired addresses", len(live), len(retired))
	}
	for _, tb := range tableNames[1:] {
		r := 0
		for _, st := range stateAbbrs {
			p := g.tables[st][tb]
			for _, row := range p.rows {
				if !p.live(row) {
					r++
				}
			}
		}
		if r == 0 {
			t.Errorf("no retired %s rows", tb)
		}
	}
	// The README lists every address.
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range live {
		if !bytes.Contains(readme, []byte(r[1])) {
			t.Errorf("README.md does not list %s", r[1])
		}
	}
	for _, l := range retired {
		if !bytes.Contains(readme, []byte(l)) {
			t.Errorf("README.md does not list retired %s", l)
		}
	}
}
