// Command gnafgen writes a synthetic G-NAF release of any size in the exact
// layout of the real one (see ../shared/docs/gnaf-format.md), so that the
// importer can be tested and timed at full scale without the real file.
//
//	go run ./bench/gnafgen -out /tmp/gnaf                       # 15.6 M addresses, folder
//	go run ./bench/gnafgen -out /tmp/gnaf -format zip           # g-naf_nov24_allstates_gda2020_psv_1017.zip
//	go run ./bench/gnafgen -out /tmp/g -addresses 100000 -list /tmp/g/addresses.csv
//
// The release holds, for each state of ACT NSW NT OT QLD SA TAS VIC WA, the
// tables STATE, LOCALITY, LOCALITY_ALIAS, STREET_LOCALITY,
// STREET_LOCALITY_ALIAS, ADDRESS_DETAIL, ADDRESS_DEFAULT_GEOCODE and
// ADDRESS_ALIAS under "G-NAF/G-NAF NOVEMBER 2024/Standard/", and the
// authority code tables (STREET_TYPE_AUT, FLAT_TYPE_AUT, LEVEL_TYPE_AUT,
// STREET_SUFFIX_AUT, LOCALITY_CLASS_AUT and a few more) under
// "Authority Code/", pipe separated with a header, columns in the documented
// order.
//
// Addresses are spread over the real localities in proportion to their
// real address counts (../shared/data/gnaf-localities/localities-au.csv):
// each locality gets floor(N*count/total) and the remainder goes one each
// to the largest fractional parts. Localities of the same name and state
// less than 10 km apart are one locality with several postcodes (MELBOURNE
// 3000 and 3004); each address carries its own row's postcode. A locality
// has about one street per 25 addresses, each with a name unique in the
// locality, drawn from built-in word lists, and a type drawn with realistic
// weights; about 1% of streets have a suffix (N S E W, sometimes paired:
// MAIN RD N and MAIN RD S). Sites along a street are houses numbered on odd
// and even sides (some with suffix letters 3A, some ranges 18-20), lots
// (LOT 16 X RD, no number) and buildings: a primary address (P) and its
// units, apartments, shops and suites (S), some on levels, some with
// building names. Aliases (ALIAS_PRINCIPAL A, linked by ADDRESS_ALIAS) are
// range starts (RA), corner blocks on a second street (ALT) and units
// without their level (LD). Retired rows (DATE_RETIRED set) appear in every
// table except STATE: they come on top of the N live addresses, never in
// -list, and never share a single-line form with a live address.
//
// Every live address has a single-line form unique in the release (and no
// retired address reads like a live one), so a matcher fed the -list can be
// held to premise granularity for every row. -list writes one CSV row per
// live address:
//
//	ADDRESS_DETAIL_PID,ADDRESS,ALIAS_PRINCIPAL,PRINCIPAL_PID,PRIMARY_SECONDARY,BUILDING_NAME,
//	FLAT_TYPE,FLAT_NUMBER,LEVEL_TYPE,LEVEL_NUMBER,LOT_NUMBER,NUMBER_FIRST,NUMBER_FIRST_SUFFIX,
//	NUMBER_LAST,STREET_NAME,STREET_TYPE,STREET_SUFFIX,LOCALITY_NAME,STATE,POSTCODE
//
// where ADDRESS is the single-line form ("UNIT 1, 19 MURRAY RD, CHRISTMAS
// ISLAND OT 6798": flat and level types by their NAME, street type by its
// abbreviation) and the other fields hold G-NAF codes (UNIT, APT, L, AVENUE,
// N); testdata/gnaf/expected.csv has the same form.
//
// Output is byte-identical for the same flags, whatever -workers. States
// are generated in parallel on -workers goroutines (default GOMAXPROCS),
// streaming: each holds one locality's streets, never the addresses. On 2
// cores the default 15.6 M addresses take about 20 s as a folder (2.9 GB;
// the disk is the limit) and about 30 s of CPU as a ZIP (680 MB).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

type config struct {
	out         string
	addresses   int
	seed        uint64
	format      string // folder, zip or both
	month       string
	list        string
	aliasesFrac float64
	retiredFrac float64
	localities  string
	codes       string
	workers     int
	crlf        bool
	progress    time.Duration
	stderr      io.Writer
}

// summary reports what generate wrote.
type summary struct {
	addresses, retired, aliases, localities, streets int64
	folder, zip                                      string
	bytes                                            int64 // uncompressed
	zipBytes                                         int64
}

func main() {
	cfg := config{stderr: os.Stderr}
	var seed int64
	flag.StringVar(&cfg.out, "out", "", "output `directory` (required): the folder G-NAF/G-NAF <MONTH>/ and/or the ZIP go there")
	flag.IntVar(&cfg.addresses, "addresses", 15600000, "live (non-retired) addresses to generate")
	flag.Int64Var(&seed, "seed", 1, "random seed: same seed and flags, same bytes")
	flag.StringVar(&cfg.format, "format", "folder", "folder, zip or both")
	flag.StringVar(&cfg.month, "month", "NOVEMBER 2024", "release month, as in the folder name")
	flag.StringVar(&cfg.list, "list", "", "also write a CSV of every live address: single-line form and components")
	flag.Float64Var(&cfg.aliasesFrac, "aliases-frac", 0.03, "share of live addresses that are aliases (ALIAS_PRINCIPAL A); also the share of localities and streets with an alias name")
	flag.Float64Var(&cfg.retiredFrac, "retired-frac", 0.005, "retired rows per live row, in every table (extra to -addresses)")
	flag.StringVar(&cfg.localities, "localities", "", "localities CSV (default ../shared/data/gnaf-localities/localities-au.csv from the repository root)")
	flag.StringVar(&cfg.codes, "codes", "", "authority codes CSV (default ../shared/data/gnaf-codes/gnaf_codes.csv from the repository root)")
	flag.IntVar(&cfg.workers, "workers", runtime.GOMAXPROCS(0), "states generated in parallel")
	flag.BoolVar(&cfg.crlf, "crlf", false, "end rows with \\r\\n instead of \\n")
	flag.DurationVar(&cfg.progress, "progress", 5*time.Second, "progress line interval on stderr (0: none)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: gnafgen -out DIR [flags]\n\nWrites a synthetic G-NAF release in the real layout.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	cfg.seed = uint64(seed)
	if cfg.out == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	start := time.Now()
	sum, err := generate(&cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gnafgen:", err)
		os.Exit(1)
	}
	el := time.Since(start)
	fmt.Fprintf(os.Stderr, "gnafgen: %s live addresses (%s aliases) and %s retired rows in %s localities, %s streets; %s written in %s (%s addresses/s)\n",
		commas(sum.addresses), commas(sum.aliases), commas(sum.retired), commas(sum.localities), commas(sum.streets),
		humanBytes(sum.bytes), el.Round(time.Millisecond), commas(int64(float64(sum.addresses)/el.Seconds())))
	if sum.folder != "" {
		fmt.Fprintf(os.Stderr, "gnafgen: folder %s\n", sum.folder)
	}
	if sum.zip != "" {
		fmt.Fprintf(os.Stderr, "gnafgen: zip %s (%s)\n", sum.zip, humanBytes(sum.zipBytes))
	}
}

var monthNames = []string{"JANUARY", "FEBRUARY", "MARCH", "APRIL", "MAY", "JUNE", "JULY", "AUGUST",
	"SEPTEMBER", "OCTOBER", "NOVEMBER", "DECEMBER"}

// parseMonth reads "NOVEMBER 2024".
func parseMonth(s string) (time.Time, error) {
	f := strings.Fields(strings.ToUpper(s))
	if len(f) == 2 {
		y, err := strconv.Atoi(f[1])
		for i, m := range monthNames {
			if m == f[0] && err == nil && y >= 2010 && y < 2100 {
				return time.Date(y, time.Month(i+1), 1, 0, 0, 0, 0, time.UTC), nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("-month %q: want a month and year like \"NOVEMBER 2024\"", s)
}

// zipName returns the release ZIP's name: g-naf_nov24_allstates_gda2020_psv_1017.zip.
func zipName(release time.Time) string {
	return fmt.Sprintf("g-naf_%s%02d_allstates_gda2020_psv_1017.zip",
		strings.ToLower(monthNames[release.Month()-1][:3]), release.Year()%100)
}

// releaseDir returns the release folder's path inside the release:
// G-NAF/G-NAF NOVEMBER 2024.
func releaseDir(release time.Time) string {
	return "G-NAF/G-NAF " + monthNames[release.Month()-1] + " " + strconv.Itoa(release.Year())
}

// repoRoot walks up from the working directory to the directory holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the working directory: give -localities and -codes")
		}
		dir = up
	}
}

func defaultPath(p *string, rel string) error {
	if *p != "" {
		return nil
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	*p = filepath.Join(root, "..", "shared", "data", filepath.FromSlash(rel))
	return nil
}

func generate(cfg *config) (*summary, error) {
	if cfg.stderr == nil {
		cfg.stderr = io.Discard
	}
	switch cfg.format {
	case "folder", "zip", "both":
	default:
		return nil, fmt.Errorf("-format %q: want folder, zip or both", cfg.format)
	}
	if cfg.addresses < 0 {
		return nil, errors.New("-addresses must not be negative")
	}
	if cfg.aliasesFrac < 0 || cfg.aliasesFrac >= 0.5 || cfg.retiredFrac < 0 || cfg.retiredFrac >= 0.5 {
		return nil, errors.New("-aliases-frac and -retired-frac must be in [0, 0.5)")
	}
	if cfg.workers < 1 {
		cfg.workers = 1
	}
	rel, err := parseMonth(cfg.month)
	if err != nil {
		return nil, err
	}
	if err := defaultPath(&cfg.localities, "gnaf-localities/localities-au.csv"); err != nil {
		return nil, err
	}
	if err := defaultPath(&cfg.codes, "gnaf-codes/gnaf_codes.csv"); err != nil {
		return nil, err
	}
	rows, err := loadLocalities(cfg.localities)
	if err != nil {
		return nil, err
	}
	cd, err := loadCodes(cfg.codes)
	if err != nil {
		return nil, err
	}
	scale(rows, cfg.addresses)
	byState := groupLocalities(rows)
	for st := range byState {
		if stateByAbbr(st) == nil {
			return nil, fmt.Errorf("%s: unknown state %q", cfg.localities, st)
		}
	}
	retired := retiredLocalities(cfg, byState)

	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return nil, err
	}
	rl := &release{prefix: releaseDir(rel) + "/", eol: "\n"}
	if cfg.crlf {
		rl.eol = "\r\n"
	}
	sum := &summary{}
	if cfg.format != "zip" {
		rl.folder = filepath.Join(cfg.out, filepath.FromSlash(releaseDir(rel)))
		sum.folder = rl.folder
	}
	if cfg.format != "folder" {
		rl.tmp, err = os.MkdirTemp(cfg.out, ".gnafgen-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(rl.tmp)
	}

	g := &generator{cfg: cfg, codes: cd, pool: newNamePool(), rl: rl}
	g.types, g.typeCum = cd.typeTable()
	first := time.Date(2004, 4, 29, 0, 0, 0, 0, time.UTC)
	for d := first; d.Before(rel.AddDate(0, 0, -14)); d = d.AddDate(0, 0, 1) {
		g.dates = append(g.dates, d.Format("2006-01-02"))
	}

	// Authority code tables.
	var tables []string
	for t := range cd.tables {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		s, err := rl.create("Authority Code/Authority_Code_"+t+"_psv.psv", colsAuth)
		if err != nil {
			return nil, err
		}
		for _, r := range cd.tables[t] {
			s.row(r.code, r.name, r.desc)
		}
		if err := s.close(); err != nil {
			return nil, err
		}
	}

	// States, largest first, on cfg.workers goroutines.
	jobs := make([]*stateGen, len(states))
	for i, st := range states {
		jobs[i] = newStateGen(g, st, byState[st.abbr], retired[st.abbr])
	}
	order := append([]*stateGen(nil), jobs...)
	sort.SliceStable(order, func(a, b int) bool { return weight(order[a]) > weight(order[b]) })
	parts := make([]string, len(jobs))
	if cfg.list != "" {
		for i, j := range jobs {
			parts[i] = cfg.list + ".part-" + j.st.abbr
		}
	}
	stop := make(chan struct{})
	var pw sync.WaitGroup
	if cfg.progress > 0 {
		pw.Add(1)
		go func() {
			defer pw.Done()
			progress(g, cfg, stop)
		}()
	}
	queue := make(chan int, len(jobs))
	for _, j := range order {
		for i := range jobs {
			if jobs[i] == j {
				queue <- i
			}
		}
	}
	close(queue)
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for range min(cfg.workers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range queue {
				errs[i] = jobs[i].run(parts[i])
			}
		}()
	}
	wg.Wait()
	close(stop)
	pw.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, j := range jobs {
		sum.addresses += j.live
		sum.retired += j.retiredRows
		sum.aliases += j.aliases
		sum.localities += int64(len(j.locs))
		sum.streets += j.streetCount
	}
	for _, s := range rl.sinks {
		sum.bytes += s.size
	}
	if rl.tmp != "" {
		sum.zip = filepath.Join(cfg.out, zipName(rel))
		if err := rl.writeZip(sum.zip, rel); err != nil {
			return nil, err
		}
		if fi, err := os.Stat(sum.zip); err == nil {
			sum.zipBytes = fi.Size()
		}
	}
	if cfg.list != "" {
		if err := joinList(cfg.list, parts); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

func stateByAbbr(abbr string) *stateInfo {
	for i := range states {
		if states[i].abbr == abbr {
			return &states[i]
		}
	}
	return nil
}

func weight(g *stateGen) int {
	n := 0
	for _, l := range g.locs {
		for _, r := range l.rows {
			n += r.scaled
		}
	}
	return n
}

// retiredLocalities makes, per state, about retiredFrac of its localities
// in retired form: former place names, unused among the state's localities.
func retiredLocalities(cfg *config, byState map[string][]*locality) map[string][]*locality {
	out := map[string][]*locality{}
	if cfg.retiredFrac <= 0 {
		return out
	}
	seen := map[string]bool{}
	for _, ls := range byState {
		for _, l := range ls {
			seen[l.pid] = true
		}
	}
	for _, st := range states {
		ls := byState[st.abbr]
		if len(ls) == 0 {
			continue
		}
		r := rand.New(rand.NewPCG(cfg.seed, 0xdead0000+uint64(st.pid)))
		g := &stateGen{st: st, r: r, names: map[string]bool{}}
		for _, l := range ls {
			g.names[l.name] = true
		}
		n := max(1, int(float64(len(ls))*cfg.retiredFrac+0.5))
		for range n {
			near := ls[r.IntN(len(ls))]
			l := &locality{name: g.historicName(), state: st.abbr,
				rows: []*locRow{{postcode: near.rows[0].postcode, state: st.abbr}}}
			l.pid = localityPID(seen, st.abbr+"|"+l.name+"|retired")
			l.gnafPID = strconv.Itoa(260000000 + int(hash64(l.pid)%10000000))
			out[st.abbr] = append(out[st.abbr], l)
		}
	}
	return out
}

// joinList writes the -list CSV: the header, then every state's part in
// state order.
func joinList(path string, parts []string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	if _, err := io.WriteString(f, strings.Join(colsList, ",")+"\n"); err != nil {
		return err
	}
	for _, p := range parts {
		pf, err := os.Open(p)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, pf)
		pf.Close()
		if err != nil {
			return err
		}
		os.Remove(p)
	}
	return nil
}

func progress(g *generator, cfg *config, stop <-chan struct{}) {
	start := time.Now()
	t := time.NewTicker(cfg.progress)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		done := g.done.Load()
		el := time.Since(start).Seconds()
		rate := float64(done) / el
		eta := "?"
		if rate > 0 {
			eta = (time.Duration(float64(int64(cfg.addresses)-done)/rate) * time.Second).Round(time.Second).String()
		}
		pct := 100.0
		if cfg.addresses > 0 {
			pct = 100 * float64(done) / float64(cfg.addresses)
		}
		fmt.Fprintf(cfg.stderr, "gnafgen: %s / %s addresses (%.1f%%), %s/s, ETA %s\n",
			commas(done), commas(int64(cfg.addresses)), pct, commas(int64(rate)), eta)
	}
}

func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%d KiB", n>>10)
	}
}
