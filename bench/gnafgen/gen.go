package main

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
)

// Column lists, in file order, exactly as documented.
var (
	colsState    = []string{"STATE_PID", "DATE_CREATED", "DATE_RETIRED", "STATE_NAME", "STATE_ABBREVIATION"}
	colsLocality = []string{"LOCALITY_PID", "DATE_CREATED", "DATE_RETIRED", "LOCALITY_NAME", "PRIMARY_POSTCODE",
		"LOCALITY_CLASS_CODE", "STATE_PID", "GNAF_LOCALITY_PID", "GNAF_RELIABILITY_CODE"}
	colsLocalityAlias = []string{"LOCALITY_ALIAS_PID", "DATE_CREATED", "DATE_RETIRED", "LOCALITY_PID", "NAME",
		"POSTCODE", "ALIAS_TYPE_CODE", "STATE_PID"}
	colsStreet = []string{"STREET_LOCALITY_PID", "DATE_CREATED", "DATE_RETIRED", "STREET_CLASS_CODE",
		"STREET_NAME", "STREET_TYPE_CODE", "STREET_SUFFIX_CODE", "LOCALITY_PID", "GNAF_STREET_PID",
		"GNAF_STREET_CONFIDENCE", "GNAF_RELIABILITY_CODE"}
	colsStreetAlias = []string{"STREET_LOCALITY_ALIAS_PID", "DATE_CREATED", "DATE_RETIRED",
		"STREET_LOCALITY_PID", "STREET_NAME", "STREET_TYPE_CODE", "STREET_SUFFIX_CODE", "ALIAS_TYPE_CODE"}
	colsAddress = []string{"ADDRESS_DETAIL_PID", "DATE_CREATED", "DATE_LAST_MODIFIED", "DATE_RETIRED",
		"BUILDING_NAME", "LOT_NUMBER_PREFIX", "LOT_NUMBER", "LOT_NUMBER_SUFFIX", "FLAT_TYPE_CODE",
		"FLAT_NUMBER_PREFIX", "FLAT_NUMBER", "FLAT_NUMBER_SUFFIX", "LEVEL_TYPE_CODE", "LEVEL_NUMBER_PREFIX",
		"LEVEL_NUMBER", "LEVEL_NUMBER_SUFFIX", "NUMBER_FIRST_PREFIX", "NUMBER_FIRST", "NUMBER_FIRST_SUFFIX",
		"NUMBER_LAST_PREFIX", "NUMBER_LAST", "NUMBER_LAST_SUFFIX", "STREET_LOCALITY_PID",
		"LOCATION_DESCRIPTION", "LOCALITY_PID", "ALIAS_PRINCIPAL", "POSTCODE", "PRIVATE_STREET",
		"LEGAL_PARCEL_ID", "CONFIDENCE", "ADDRESS_SITE_PID", "LEVEL_GEOCODED_CODE", "PROPERTY_PID",
		"GNAF_PROPERTY_PID", "PRIMARY_SECONDARY"}
	colsGeocode = []string{"ADDRESS_DEFAULT_GEOCODE_PID", "DATE_CREATED", "DATE_RETIRED", "ADDRESS_DETAIL_PID",
		"GEOCODE_TYPE_CODE", "LONGITUDE", "LATITUDE"}
	colsAddressAlias = []string{"ADDRESS_ALIAS_PID", "DATE_CREATED", "DATE_RETIRED", "PRINCIPAL_PID",
		"ALIAS_PID", "ALIAS_TYPE_CODE", "ALIAS_COMMENT"}
	colsAuth = []string{"CODE", "NAME", "DESCRIPTION"}

	// colsList is the header of the -list CSV (and testdata/gnaf/expected.csv).
	colsList = []string{"ADDRESS_DETAIL_PID", "ADDRESS", "ALIAS_PRINCIPAL", "PRINCIPAL_PID",
		"PRIMARY_SECONDARY", "BUILDING_NAME", "FLAT_TYPE", "FLAT_NUMBER", "LEVEL_TYPE", "LEVEL_NUMBER",
		"LOT_NUMBER", "NUMBER_FIRST", "NUMBER_FIRST_SUFFIX", "NUMBER_LAST", "STREET_NAME", "STREET_TYPE",
		"STREET_SUFFIX", "LOCALITY_NAME", "STATE", "POSTCODE"}
)

// The tables written per state, in the order of stateGen.out.
var stateTables = []struct {
	name string
	cols []string
}{
	{"STATE", colsState}, {"LOCALITY", colsLocality}, {"LOCALITY_ALIAS", colsLocalityAlias},
	{"STREET_LOCALITY", colsStreet}, {"STREET_LOCALITY_ALIAS", colsStreetAlias},
	{"ADDRESS_DETAIL", colsAddress}, {"ADDRESS_DEFAULT_GEOCODE", colsGeocode},
	{"ADDRESS_ALIAS", colsAddressAlias},
}

const (
	tState = iota
	tLocality
	tLocalityAlias
	tStreet
	tStreetAlias
	tAddress
	tGeocode
	tAddressAlias
	nTables
)

// generator holds what every state shares.
type generator struct {
	cfg     *config
	codes   *codes
	pool    *namePool
	types   []string
	typeCum []float64
	dates   []string // one per day from 2004-04-29 to shortly before the release
	rl      *release
	done    atomic.Int64 // live addresses written, for progress
}

// stateGen writes one state's tables. It holds no address beyond the one
// being written; the streets of the current locality are its only state.
type stateGen struct {
	*generator
	st      stateInfo
	r       *rand.Rand
	locs    []*locality
	retired []*locality // retired localities of the state
	names   map[string]bool
	out     [nTables]*sink
	list    *sink

	addrNum, streetNum, geoNum, aliasNum, siteNum, streetAliasNum, locAliasNum int64

	accAddr, accGeo, accStreet, accStreetAlias, accLocAlias, accAddrAlias float64
	live, retiredRows, aliases, streetCount                               int64
	pending                                                               int64

	// current locality
	loc     *locality
	row     *locRow
	dens    density
	streets []*street
	used    map[string]bool
	scan    int
}

type density struct {
	rural               bool
	big                 bool
	pLot, pBldg, pRange float64
	radiusKm            float64
	pSuffixLetters      float64
}

type street struct {
	pid, name, typ, abbr, suffix string
	next                         [2]int // next odd and even house numbers
	rural                        bool
	lot                          int
	plan                         int
	quota                        int
	lat, lon, dlat, dlon         float64
}

type addr struct {
	pid       string
	building  string
	lot       int
	flatType  string
	flatNum   int
	levelType string
	levelNum  int // 0: none
	num       int // 0: none
	numSuffix byte
	numLast   int
	st        *street
	alias     bool
	principal string
	ps        byte
	site      int64
	lat, lon  float64
	retired   bool
	geoType   string
}

func newStateGen(g *generator, st stateInfo, locs, retired []*locality) *stateGen {
	s := &stateGen{generator: g, st: st, locs: locs, retired: retired,
		r:     rand.New(rand.NewPCG(g.cfg.seed, uint64(st.pid)*0x9e3779b97f4a7c15)),
		names: map[string]bool{}, used: map[string]bool{}}
	for _, l := range locs {
		s.names[l.name] = true
	}
	s.addrNum = 700000000
	s.streetNum = 1000000
	s.accAddr = s.r.Float64()
	s.accGeo = s.r.Float64()
	s.accStreet = s.r.Float64()
	s.accStreetAlias, s.accLocAlias, s.accAddrAlias = 1, 1, 1 // the first alias of each kind brings a retired one
	return s
}

func (g *stateGen) run(listPath string) error {
	for i, t := range stateTables {
		s, err := g.rl.create("Standard/"+g.st.abbr+"_"+t.name+"_psv.psv", t.cols)
		if err != nil {
			return err
		}
		g.out[i] = s
	}
	if listPath != "" {
		s, err := newFileSink(listPath)
		if err != nil {
			return err
		}
		g.list = s
	}
	g.out[tState].row(strconv.Itoa(g.st.pid), "2016-08-01", "", g.st.name, g.st.abbr)
	for _, l := range g.locs {
		g.locality(l)
	}
	for _, l := range g.retired {
		c, ret := g.retiredDates()
		g.out[tLocality].row(l.pid, c, ret, l.name, l.rows[0].postcode, "G", strconv.Itoa(g.st.pid), l.gnafPID, "5")
		g.retiredRows++
	}
	g.done.Add(g.pending)
	g.pending = 0
	var first error
	for _, s := range g.out {
		if err := s.close(); err != nil && first == nil {
			first = err
		}
	}
	if g.list != nil {
		if err := g.list.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Dates.

func (g *stateGen) liveDates() (created, modified string) {
	c := g.r.IntN(len(g.dates))
	return g.dates[c], g.dates[c+g.r.IntN(len(g.dates)-c)]
}

func (g *stateGen) created() string { return g.dates[g.r.IntN(len(g.dates))] }

func (g *stateGen) retiredDates() (created, retired string) {
	n := len(g.dates)
	ret := n - 1 - g.r.IntN(min(900, n-1))
	return g.dates[g.r.IntN(ret)], g.dates[ret]
}

// retire reports whether a retired row is due, advancing acc by frac.
func (g *stateGen) retire(acc *float64, times float64) bool {
	f := g.cfg.retiredFrac
	if f <= 0 {
		return false
	}
	*acc += f * times
	if *acc >= 1 {
		*acc -= math.Floor(*acc)
		return true
	}
	return false
}

// retireFirst is retire for the small tables: the first candidate always
// brings a retired row (the accumulator starts at 1).
func (g *stateGen) retireFirst(acc *float64) bool {
	if g.cfg.retiredFrac <= 0 {
		return false
	}
	if *acc >= 1 {
		*acc -= 1
		return true
	}
	*acc += g.cfg.retiredFrac
	return false
}

// Localities.

func densityOf(realCount int) density {
	d := density{pRange: 0.025, pSuffixLetters: 0.03}
	switch {
	case realCount < 400:
		d.rural, d.pLot, d.pBldg, d.pRange, d.radiusKm = true, 0.15, 0.004, 0.005, 4
	case realCount < 2000:
		d.pLot, d.pBldg, d.radiusKm = 0.04, 0.025, 2
	case realCount < 8000:
		d.pLot, d.pBldg = 0.006, 0.05
	case realCount < 20000:
		d.pLot, d.pBldg, d.big = 0.003, 0.09, true
	default:
		d.pLot, d.pBldg, d.big = 0.001, 0.16, true
	}
	if d.radiusKm == 0 {
		d.radiusKm = 0.6 + 0.012*math.Sqrt(float64(realCount))
	}
	return d
}

func (g *stateGen) locality(l *locality) {
	g.loc = l
	clear(g.used)
	g.scan = 0
	g.dens = densityOf(l.realCount)
	g.out[tLocality].row(l.pid, g.created(), "", l.name, l.rows[0].postcode, "G",
		strconv.Itoa(g.st.pid), l.gnafPID, "5")
	g.localityAliases(l)
	for _, row := range l.rows {
		g.row = row
		g.genRow(row)
	}
}

var synonymPrefixes = [][2]string{{"MOUNT ", "MT "}, {"ST ", "SAINT "}, {"PORT ", "PT "}, {"FORT ", "FT "}}

func (g *stateGen) localityAliases(l *locality) {
	f := g.cfg.aliasesFrac
	if f <= 0 {
		return
	}
	name, typ := "", ""
	for _, p := range synonymPrefixes {
		if strings.HasPrefix(l.name, p[0]) {
			if g.r.Float64() < min(1, 10*f) {
				name, typ = p[1]+l.name[len(p[0]):], "SYN"
			}
			break
		}
	}
	if name == "" && g.r.Float64() < f {
		// A neighbouring locality's name (spatially related).
		best := math.Inf(1)
		for _, o := range g.locs {
			if o.name == l.name {
				continue
			}
			if d := distKm(l.lat, l.lon, o.lat, o.lon); d < best {
				best, name, typ = d, o.name, "SR"
			}
		}
	}
	if name == "" {
		return
	}
	g.locAlias(l, name, typ, "")
	if g.retireFirst(&g.accLocAlias) {
		c, ret := g.retiredDates()
		g.locAliasNum++
		g.out[tLocalityAlias].row(g.numPID(g.locAliasNum, 1e6), c, ret, l.pid, g.historicName(), l.rows[0].postcode,
			"SYN", strconv.Itoa(g.st.pid))
		g.retiredRows++
	}
}

func (g *stateGen) locAlias(l *locality, name, typ, retired string) {
	g.locAliasNum++
	g.out[tLocalityAlias].row(g.numPID(g.locAliasNum, 1e6), g.created(), retired, l.pid, name, l.rows[0].postcode,
		typ, strconv.Itoa(g.st.pid))
}

// historicName returns a made-up former place name unused in the state.
func (g *stateGen) historicName() string {
	for {
		var n string
		if g.r.IntN(2) == 0 {
			s := surnames[g.r.IntN(len(surnames))]
			if !strings.HasSuffix(s, "S") {
				s += "S"
			}
			n = s + " " + historicNouns[g.r.IntN(len(historicNouns))]
		} else {
			n = places[g.r.IntN(len(places))] + " " + historicNouns[g.r.IntN(len(historicNouns))]
		}
		if !g.names[n] {
			g.names[n] = true
			return n
		}
	}
}

func (g *stateGen) numPID(n int64, scale float64) string {
	return strconv.FormatInt(int64(g.st.pid)*int64(scale)+n, 10)
}

// Streets.

func (g *stateGen) genRow(row *locRow) {
	n := max(1, int(math.Round(float64(row.scaled)/25)))
	g.streets = g.streets[:0]
	for len(g.streets) < n {
		s := g.newStreet(row, "", "", "")
		if s.suffix != "" && len(g.streets) < n && g.r.IntN(2) == 0 {
			if opp, ok := oppositeSuffix[s.suffix]; ok {
				g.newStreet(row, s.name, s.typ, opp)
			}
		}
	}
	for range n {
		if g.retire(&g.accStreet, 1) {
			g.retiredStreet(row)
		}
	}
	// Street lengths: lognormal weights, shares by largest remainder.
	ws := make([]float64, len(g.streets))
	var sum float64
	for i := range ws {
		ws[i] = math.Exp(0.9 * g.r.NormFloat64())
		sum += ws[i]
	}
	type rem struct {
		f float64
		i int
	}
	rems := make([]rem, len(g.streets))
	left := row.scaled
	for i, s := range g.streets {
		x := float64(row.scaled) * ws[i] / sum
		s.quota = int(x)
		left -= s.quota
		rems[i] = rem{x - float64(s.quota), i}
	}
	sort.Slice(rems, func(a, b int) bool {
		if rems[a].f != rems[b].f {
			return rems[a].f > rems[b].f
		}
		return rems[a].i < rems[b].i
	})
	for k := 0; k < left; k++ {
		g.streets[rems[k%len(rems)].i].quota++
	}
	for _, s := range g.streets {
		for s.quota > 0 {
			s.quota -= g.site(s, s.quota)
		}
	}
}

var oppositeSuffix = map[string]string{"N": "S", "S": "N", "E": "W", "W": "E"}
var rareSuffixes = []string{"EX", "UP", "LR", "CN"}

// newStreet makes a street of the current locality and writes its
// STREET_LOCALITY row; name, typ and suffix are drawn unless given.
func (g *stateGen) newStreet(row *locRow, name, typ, suffix string) *street {
	r := g.r
	if name == "" {
		x := r.Float64() * g.typeCum[len(g.typeCum)-1]
		typ = g.types[sort.SearchFloat64s(g.typeCum, x)]
		if typ == "HIGHWAY" {
			for try := 0; try < 8 && name == ""; try++ {
				if h := highways[r.IntN(len(highways))]; !g.used[h] {
					g.used[h], name = true, h
				}
			}
			if name == "" {
				typ = "ROAD"
			}
		}
		if name == "" {
			name = g.pool.pick(r, g.used, &g.scan)
		}
		if x := r.Float64(); x < 0.012 {
			if x < 0.010 {
				suffix = []string{"N", "S", "E", "W"}[r.IntN(4)]
			} else {
				suffix = rareSuffixes[r.IntN(len(rareSuffixes))]
			}
		}
	}
	s := &street{name: name, typ: typ, abbr: g.codes.streetAbbr[typ], suffix: suffix, rural: g.dens.rural,
		lot: 1 + r.IntN(300), plan: 10000 + r.IntN(990000)}
	if s.rural {
		s.next = [2]int{1 + 2*r.IntN(60), 2 + 2*r.IntN(60)}
	} else {
		s.next = [2]int{1, 2}
	}
	// Position: an origin within the locality's radius, a direction, and
	// about 4.5 m of frontage per house number.
	ang := r.Float64() * 2 * math.Pi
	rad := g.dens.radiusKm * math.Sqrt(r.Float64()) / 111.2
	coslat := math.Cos(g.loc.lat * math.Pi / 180)
	s.lat = row.lat + rad*math.Cos(ang)
	s.lon = row.lon + rad*math.Sin(ang)/coslat
	dir := r.Float64() * 2 * math.Pi
	s.dlat = 0.00004 * math.Cos(dir)
	s.dlon = 0.00004 * math.Sin(dir) / coslat
	g.streetNum += 1 + int64(r.IntN(3))
	s.pid = g.st.abbr + strconv.FormatInt(g.streetNum, 10)
	g.streetCount++
	g.out[tStreet].row(s.pid, g.created(), "", "C", s.name, s.typ, s.suffix, g.loc.pid,
		g.numPID(g.streetCount, 1e7), "2", "4")
	g.streets = append(g.streets, s)
	if f := g.cfg.aliasesFrac; f > 0 && r.Float64() < f {
		g.streetAlias(s)
	}
	return s
}

var variantTypes = []string{"ROAD", "STREET", "AVENUE", "LANE", "DRIVE"}

func (g *stateGen) streetAlias(s *street) {
	name, typ, kind := s.name, s.typ, "ALT"
	switch {
	case strings.HasPrefix(s.name, "SAINT "):
		name, kind = "ST "+s.name[len("SAINT "):], "SYN"
	case g.r.IntN(2) == 0:
		for typ == s.typ {
			typ = variantTypes[g.r.IntN(len(variantTypes))]
		}
	default:
		name = g.pool.pick(g.r, g.used, &g.scan) // a former name
	}
	g.streetAliasNum++
	g.out[tStreetAlias].row(g.numPID(g.streetAliasNum, 1e8), g.created(), "", s.pid, name, typ, s.suffix, kind)
	if g.retireFirst(&g.accStreetAlias) {
		c, ret := g.retiredDates()
		g.streetAliasNum++
		g.out[tStreetAlias].row(g.numPID(g.streetAliasNum, 1e8), c, ret, s.pid,
			g.pool.pick(g.r, g.used, &g.scan), s.typ, s.suffix, "ALT")
		g.retiredRows++
	}
}

// retiredStreet writes a retired street with a name of its own and one or
// two retired addresses on it.
func (g *stateGen) retiredStreet(row *locRow) {
	r := g.r
	s := &street{name: g.pool.pick(r, g.used, &g.scan), typ: "STREET", abbr: g.codes.streetAbbr["STREET"],
		next: [2]int{1, 2}, plan: 10000 + r.IntN(990000), lat: row.lat, lon: row.lon}
	if r.IntN(2) == 0 {
		s.typ, s.abbr = "ROAD", g.codes.streetAbbr["ROAD"]
	}
	g.streetNum += 1 + int64(r.IntN(3))
	s.pid = g.st.abbr + strconv.FormatInt(g.streetNum, 10)
	g.streetCount++
	c, ret := g.retiredDates()
	g.out[tStreet].row(s.pid, c, ret, "C", s.name, s.typ, "", g.loc.pid, g.numPID(g.streetCount, 1e7), "2", "4")
	g.retiredRows++
	for k := 1 + r.IntN(2); k > 0; k-- {
		a := g.house(s)
		a.retired = true
		g.emit(&a)
	}
}

// take returns the next house number on a side of the street.
func (s *street) take(r *rand.Rand) int {
	side := r.IntN(2)
	n := s.next[side]
	if s.rural {
		s.next[side] += 2 * (1 + r.IntN(30))
	} else {
		s.next[side] += 2
	}
	return n
}

// house returns a numbered address at the next number of s.
func (g *stateGen) house(s *street) addr {
	a := addr{st: s, num: s.take(g.r)}
	g.place(&a, float64(a.num))
	return a
}

func (g *stateGen) place(a *addr, pos float64) {
	s := a.st
	side := float64(int(pos)%2)*2 - 1
	a.lat = s.lat + s.dlat*pos + side*3*s.dlon
	a.lon = s.lon + s.dlon*pos - side*3*s.dlat
}

// Sites: a house, a lot or a building with its units. site writes between
// one and budget live addresses and returns how many.
func (g *stateGen) site(s *street, budget int) int {
	x := g.r.Float64()
	var used int
	switch d := g.dens; {
	case x < d.pLot:
		used = g.lotSite(s)
	case budget >= 2 && x < d.pLot+d.pBldg:
		return g.building(s, budget) // retires units of its own
	default:
		used = g.houseSite(s, budget)
	}
	if g.retire(&g.accAddr, float64(used)) {
		a := g.house(s)
		a.retired = true
		g.emit(&a)
	}
	return used
}

func (g *stateGen) lotSite(s *street) int {
	a := addr{st: s, lot: s.lot}
	s.lot += 1 + g.r.IntN(3)
	g.place(&a, float64(a.lot*3))
	if g.dens.rural && g.r.Float64() < 0.05 {
		a.building = g.ruralName()
	}
	g.emit(&a)
	return 1
}

func (g *stateGen) houseSite(s *street, budget int) int {
	r := g.r
	a := g.house(s)
	if r.Float64() < g.dens.pRange {
		a.numLast = a.num + 2
		s.next[a.num%2] += 2
	}
	if g.dens.rural && r.Float64() < 0.03 {
		a.building = g.ruralName()
	}
	g.emit(&a)
	used := 1
	if a.numLast == 0 && used < budget && r.Float64() < g.dens.pSuffixLetters {
		for l := byte('A'); l <= 'C' && used < budget; l++ {
			b := a
			b.building, b.numSuffix, b.site = "", l, 0
			g.emit(&b)
			used++
			if r.IntN(3) > 0 {
				break
			}
		}
	}
	if used < budget && g.wantAlias() {
		if a.numLast != 0 {
			// The first number of a range, as an alias of the range.
			b := a
			b.numLast, b.building = 0, ""
			g.aliasOf(&a, &b, "RA")
			used++
		} else if len(g.streets) > 1 {
			// A corner block: also numbered on another street.
			o := g.streets[r.IntN(len(g.streets))]
			for o == s {
				o = g.streets[r.IntN(len(g.streets))]
			}
			b := g.house(o)
			b.lat, b.lon, b.site = a.lat, a.lon, a.site
			g.aliasOf(&a, &b, "ALT")
			used++
		}
	}
	return used
}

// wantAlias decides whether an eligible principal gets an alias, steering
// the share of aliases among live addresses to -aliases-frac.
func (g *stateGen) wantAlias() bool {
	f := g.cfg.aliasesFrac
	if f <= 0 {
		return false
	}
	return float64(g.aliases) < f*float64(g.live+1) && g.r.Float64() < min(1, 15*f)
}

// aliasOf writes b as an alias of the already written principal a.
func (g *stateGen) aliasOf(a, b *addr, typ string) {
	b.alias, b.principal = true, a.pid
	g.emit(b)
	g.aliases++
	g.aliasNum++
	g.out[tAddressAlias].row(g.numPID(g.aliasNum, 1e9), g.created(), "", a.pid, b.pid, typ, "")
	if g.retireFirst(&g.accAddrAlias) {
		// A former alias: retired, with its link.
		c := g.house(a.st)
		c.alias, c.principal, c.retired = true, a.pid, true
		g.emit(&c)
		cr, ret := g.retiredDates()
		g.aliasNum++
		g.out[tAddressAlias].row(g.numPID(g.aliasNum, 1e9), cr, ret, a.pid, c.pid, "SYN", "")
		g.retiredRows++
	}
}

func (g *stateGen) building(s *street, budget int) int {
	r := g.r
	p := g.house(s)
	g.siteNum++
	p.site = g.siteNum
	commercial := r.Float64() < 0.12
	size := 2 + r.IntN(5)
	if x := r.Float64(); g.dens.big && x < 0.12 {
		size = 31 + r.IntN(250)
	} else if x < 0.30 {
		size = 7 + r.IntN(24)
	}
	k := min(size, budget-1)
	pName := 0.06
	if commercial {
		pName = 0.4
	} else if size > 30 {
		pName = 0.5
	}
	if r.Float64() < pName {
		p.building = g.buildingName(commercial)
	}
	p.ps = 'P'
	g.emit(&p)
	used := 1
	unit := func(ft string, flat int, lt string, level int) {
		u := p
		u.ps, u.flatType, u.flatNum, u.levelType, u.levelNum, u.geoType = 'S', ft, flat, lt, level, "BC"
		g.emit(&u)
		used++
		if lt == "L" && used < budget && g.wantAlias() {
			// Level duplication: the same unit without its level.
			b := u
			b.levelType, b.levelNum = "", 0
			g.aliasOf(&u, &b, "LD")
			used++
		}
	}
	maxFlat := 0
	if commercial {
		shops := min(max(1, k/2), 40)
		lt := ""
		if r.IntN(2) == 0 {
			lt = "G"
		}
		for i := 1; i <= shops && used < budget; i++ {
			unit("SHOP", i, lt, 0)
			maxFlat = i
		}
		for level := 1; used < budget && used <= k; level++ {
			if r.Float64() < 0.3 {
				// A whole floor: LEVEL 2, 10 X ST.
				u := p
				u.ps, u.levelType, u.levelNum, u.geoType = 'S', "L", level, "BC"
				g.emit(&u)
				used++
			}
			suites := 2 + r.IntN(5)
			for j := 1; j <= suites && used < budget && used <= k; j++ {
				unit("SE", level*100+j, "L", level)
				maxFlat = level*100 + j
			}
		}
	} else {
		ft := "UNIT"
		if size > 30 && r.Float64() < 0.6 || r.Float64() < 0.08 {
			ft = "APT"
		}
		leveled := size >= 7 && r.Float64() < 0.4
		perLevel := 4 + r.IntN(7)
		for i := 0; used < budget && used <= k; i++ {
			if leveled {
				level := 1 + i/perLevel
				maxFlat = level*100 + i%perLevel + 1
				unit(ft, maxFlat, "L", level)
			} else {
				maxFlat = i + 1
				unit(ft, maxFlat, "", 0)
			}
		}
	}
	if g.retire(&g.accAddr, float64(used)) {
		u := p
		u.ps, u.flatType, u.flatNum, u.retired, u.geoType = 'S', "UNIT", maxFlat+1, true, "BC"
		g.emit(&u)
	}
	return used
}

func (g *stateGen) buildingName(commercial bool) string {
	r := g.r
	var w string
	switch r.IntN(3) {
	case 0:
		w = places[r.IntN(len(places))]
	case 1:
		w = surnames[r.IntN(len(surnames))]
	default:
		w = trees[r.IntN(len(trees))]
	}
	if commercial {
		return w + " " + commercialNouns[r.IntN(len(commercialNouns))]
	}
	return w + " " + buildingNouns[r.IntN(len(buildingNouns))]
}

func (g *stateGen) ruralName() string {
	r := g.r
	w := aboriginal[r.IntN(len(aboriginal))]
	if r.IntN(2) == 0 {
		w = places[r.IntN(len(places))]
	}
	return w + " " + ruralNouns[r.IntN(len(ruralNouns))]
}

// Rows.

var confidences = [...]string{"2", "2", "2", "2", "2", "2", "2", "2", "2", "2", "2", "1", "1", "1", "1", "1", "0", "0", "0", "-1"}
var geocodeTypes = [...]string{"PC", "PC", "PC", "PC", "PC", "PC", "FCS", "FCS", "FCS", "PAPS"}

// emit writes a's ADDRESS_DETAIL and ADDRESS_DEFAULT_GEOCODE rows and, when
// it is live, its -list row. It sets a.pid.
func (g *stateGen) emit(a *addr) {
	r := g.r
	g.addrNum += 1 + int64(r.IntN(3))
	var pb [24]byte
	pid := append(append(append(pb[:0], "GA"...), g.st.pid3...), strconv.FormatInt(g.addrNum, 10)...)
	a.pid = string(pid)
	var created, modified, retired string
	if a.retired {
		created, retired = g.retiredDates()
		modified = retired
		g.retiredRows++
	} else {
		created, modified = g.liveDates()
	}
	if a.site == 0 {
		g.siteNum++
		a.site = g.siteNum
	}
	s := a.st
	out := g.out[tAddress]
	b := out.buf
	b = append(b, a.pid...)
	b = append(b, '|')
	b = append(b, created...)
	b = append(b, '|')
	b = append(b, modified...)
	b = append(b, '|')
	b = append(b, retired...)
	b = append(b, '|')
	b = append(b, a.building...)
	b = append(b, "||"...) // LOT_NUMBER_PREFIX
	b = appendNum(b, a.lot)
	b = append(b, "||"...) // LOT_NUMBER_SUFFIX
	b = append(b, a.flatType...)
	b = append(b, "||"...) // FLAT_NUMBER_PREFIX
	b = appendNum(b, a.flatNum)
	b = append(b, "||"...) // FLAT_NUMBER_SUFFIX
	b = append(b, a.levelType...)
	b = append(b, "||"...) // LEVEL_NUMBER_PREFIX
	b = appendNum(b, a.levelNum)
	b = append(b, "|||"...) // LEVEL_NUMBER_SUFFIX, NUMBER_FIRST_PREFIX
	b = appendNum(b, a.num)
	b = append(b, '|')
	if a.numSuffix != 0 {
		b = append(b, a.numSuffix)
	}
	b = append(b, "||"...) // NUMBER_LAST_PREFIX
	b = appendNum(b, a.numLast)
	b = append(b, "||"...) // NUMBER_LAST_SUFFIX
	b = append(b, s.pid...)
	b = append(b, "||"...) // LOCATION_DESCRIPTION
	b = append(b, g.loc.pid...)
	b = append(b, '|')
	if a.alias {
		b = append(b, 'A')
	} else {
		b = append(b, 'P')
	}
	b = append(b, '|')
	b = append(b, g.row.postcode...)
	b = append(b, "||"...) // PRIVATE_STREET
	b = g.appendParcel(b, a)
	b = append(b, '|')
	b = append(b, confidences[r.IntN(len(confidences))]...)
	b = append(b, '|')
	b = strconv.AppendInt(b, int64(g.st.pid)*1e9+400000000+a.site, 10)
	b = append(b, "|7|||"...) // LEVEL_GEOCODED_CODE, PROPERTY_PID, GNAF_PROPERTY_PID
	if a.ps != 0 {
		b = append(b, a.ps)
	}
	out.buf = b
	out.end()

	geo := g.out[tGeocode]
	gt := a.geoType
	if gt == "" {
		gt = geocodeTypes[r.IntN(len(geocodeTypes))]
	}
	g.geocode(geo, a, created, retired, gt, a.lat, a.lon)
	if a.retired {
		return
	}
	if g.retire(&g.accGeo, 1) {
		// A superseded geocode of a live address.
		c, ret := g.retiredDates()
		g.geocode(geo, a, c, ret, "PC", a.lat+0.0001, a.lon-0.0001)
		g.retiredRows++
	}
	g.live++
	if g.pending++; g.pending >= 8192 {
		g.done.Add(g.pending)
		g.pending = 0
	}
	if g.list != nil {
		g.listRow(a)
	}
}

func (g *stateGen) geocode(out *sink, a *addr, created, retired, typ string, lat, lon float64) {
	g.geoNum++
	b := strconv.AppendInt(out.buf, int64(g.st.pid)*1e9+g.geoNum, 10)
	b = append(b, '|')
	b = append(b, created...)
	b = append(b, '|')
	b = append(b, retired...)
	b = append(b, '|')
	b = append(b, a.pid...)
	b = append(b, '|')
	b = append(b, typ...)
	b = append(b, '|')
	b = appendFixed8(b, lon)
	b = append(b, '|')
	b = appendFixed8(b, lat)
	out.buf = b
	out.end()
}

// appendParcel appends a legal parcel id in the state's style for primary
// addresses, houses and lots; units get none.
func (g *stateGen) appendParcel(b []byte, a *addr) []byte {
	if a.ps == 'S' {
		return b
	}
	lot := a.lot
	if lot == 0 {
		lot = 1 + (a.num/2)%400
	}
	plan := a.st.plan
	switch g.st.abbr {
	case "VIC":
		b = strconv.AppendInt(b, int64(lot), 10)
		b = append(b, `\PS`...)
	case "QLD":
		b = strconv.AppendInt(b, int64(lot), 10)
		b = append(b, "RP"...)
	case "SA":
		b = append(b, "D"...)
		b = strconv.AppendInt(b, int64(plan), 10)
		b = append(b, "/A"...)
		return strconv.AppendInt(b, int64(lot), 10)
	case "ACT":
		b = append(b, "BLOCK "...)
		b = strconv.AppendInt(b, int64(lot), 10)
		b = append(b, " SECTION "...)
		return strconv.AppendInt(b, int64(plan%200+1), 10)
	default:
		b = strconv.AppendInt(b, int64(lot), 10)
		b = append(b, "/DP"...)
	}
	return strconv.AppendInt(b, int64(plan), 10)
}

func appendNum(b []byte, n int) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendInt(b, int64(n), 10)
}

// appendFixed8 appends v with eight decimals, as G-NAF writes coordinates.
func appendFixed8(b []byte, v float64) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	x := int64(v*1e8 + 0.5)
	b = strconv.AppendInt(b, x/1e8, 10)
	f := x % 1e8
	var t [9]byte
	t[0] = '.'
	for i := 8; i >= 1; i-- {
		t[i] = byte('0' + f%10)
		f /= 10
	}
	return append(b, t[:]...)
}

// The -list CSV.

func (g *stateGen) listRow(a *addr) {
	out := g.list
	b := out.buf
	b = append(b, a.pid...)
	b = append(b, ',', '"')
	b = g.appendSingleLine(b, a)
	b = append(b, '"', ',')
	if a.alias {
		b = append(b, 'A', ',')
		b = append(b, a.principal...)
	} else {
		b = append(b, 'P', ',')
	}
	b = append(b, ',')
	if a.ps != 0 {
		b = append(b, a.ps)
	}
	b = append(b, ',')
	b = appendCSV(b, a.building)
	b = append(b, ',')
	b = append(b, a.flatType...)
	b = append(b, ',')
	b = appendNum(b, a.flatNum)
	b = append(b, ',')
	b = append(b, a.levelType...)
	b = append(b, ',')
	b = appendNum(b, a.levelNum)
	b = append(b, ',')
	b = appendNum(b, a.lot)
	b = append(b, ',')
	b = appendNum(b, a.num)
	b = append(b, ',')
	if a.numSuffix != 0 {
		b = append(b, a.numSuffix)
	}
	b = append(b, ',')
	b = appendNum(b, a.numLast)
	b = append(b, ',')
	b = appendCSV(b, a.st.name)
	b = append(b, ',')
	b = append(b, a.st.typ...)
	b = append(b, ',')
	b = append(b, a.st.suffix...)
	b = append(b, ',')
	b = appendCSV(b, g.loc.name)
	b = append(b, ',')
	b = append(b, g.st.abbr...)
	b = append(b, ',')
	b = append(b, g.row.postcode...)
	out.buf = b
	out.end()
}

// appendSingleLine appends a's address in G-NAF's usual single-line form.
func (g *stateGen) appendSingleLine(b []byte, a *addr) []byte {
	if a.flatType != "" {
		b = append(b, g.codes.flatName[a.flatType]...)
		b = append(b, ' ')
		b = appendNum(b, a.flatNum)
		b = append(b, ", "...)
	}
	if a.levelType != "" {
		b = append(b, g.codes.levelName[a.levelType]...)
		if a.levelNum != 0 {
			b = append(b, ' ')
			b = appendNum(b, a.levelNum)
		}
		b = append(b, ", "...)
	}
	if a.building != "" {
		b = append(b, a.building...)
		b = append(b, ", "...)
	}
	if a.num != 0 {
		b = appendNum(b, a.num)
		if a.numSuffix != 0 {
			b = append(b, a.numSuffix)
		}
		if a.numLast != 0 {
			b = append(b, '-')
			b = appendNum(b, a.numLast)
		}
	} else {
		b = append(b, "LOT "...)
		b = appendNum(b, a.lot)
	}
	b = append(b, ' ')
	b = append(b, a.st.name...)
	b = append(b, ' ')
	b = append(b, a.st.abbr...)
	if a.st.suffix != "" {
		b = append(b, ' ')
		b = append(b, a.st.suffix...)
	}
	b = append(b, ", "...)
	b = append(b, g.loc.name...)
	b = append(b, ' ')
	b = append(b, g.st.abbr...)
	b = append(b, ' ')
	return append(b, g.row.postcode...)
}

// appendCSV appends s as a CSV field, quoted when it must be.
func appendCSV(b []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	b = append(b, '"')
	b = append(b, strings.ReplaceAll(s, `"`, `""`)...)
	return append(b, '"')
}
