package main

import (
	"encoding/csv"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// states in G-NAF file order, with their STATE_PID and the three-character
// form used inside address PIDs (GANT_703855807).
var states = []stateInfo{
	{"ACT", 8, "AUSTRALIAN CAPITAL TERRITORY", "ACT"},
	{"NSW", 1, "NEW SOUTH WALES", "NSW"},
	{"NT", 7, "NORTHERN TERRITORY", "NT_"},
	{"OT", 9, "OTHER TERRITORIES", "OT_"},
	{"QLD", 3, "QUEENSLAND", "QLD"},
	{"SA", 4, "SOUTH AUSTRALIA", "SA_"},
	{"TAS", 6, "TASMANIA", "TAS"},
	{"VIC", 2, "VICTORIA", "VIC"},
	{"WA", 5, "WESTERN AUSTRALIA", "WA_"},
}

type stateInfo struct {
	abbr string
	pid  int
	name string
	pid3 string
}

// A locRow is one line of localities-au.csv: a locality name in a state
// with one postcode and its real address count.
type locRow struct {
	name     string // upper case, as G-NAF spells it
	state    string
	postcode string
	count    int // real count
	lat, lon float64
	index    int // line order in the file
	scaled   int // addresses to generate (live, non-retired)
}

// A locality is what G-NAF calls one: rows of the same name and state that
// lie within mergeKm of each other (MELBOURNE 3000 and 3004) become one
// locality with several postcodes; same-named places far apart (KINGSWOOD
// NSW 2747 and 2340) stay separate localities.
type locality struct {
	pid       string
	gnafPID   string
	name      string
	state     string
	rows      []*locRow // largest real count first: rows[0].postcode is PRIMARY_POSTCODE
	realCount int
	lat, lon  float64
}

const mergeKm = 10

func loadLocalities(path string) ([]*locRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(strings.ToLower(h))] = i
	}
	for _, need := range []string{"locality", "state", "postcode", "count", "latitude", "longitude"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("%s: no column %q", path, need)
		}
	}
	var rows []*locRow
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		n, err1 := strconv.Atoi(rec[col["count"]])
		lat, err2 := strconv.ParseFloat(rec[col["latitude"]], 64)
		lon, err3 := strconv.ParseFloat(rec[col["longitude"]], 64)
		if err1 != nil || err2 != nil || err3 != nil || n < 0 {
			return nil, fmt.Errorf("%s:%d: bad count or coordinates", path, line)
		}
		rows = append(rows, &locRow{
			name:     strings.ToUpper(strings.TrimSpace(rec[col["locality"]])),
			state:    strings.ToUpper(strings.TrimSpace(rec[col["state"]])),
			postcode: strings.TrimSpace(rec[col["postcode"]]),
			count:    n, lat: lat, lon: lon, index: len(rows),
		})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no localities", path)
	}
	return rows, nil
}

// scale sets every row's scaled count so that they sum to n: each row gets
// floor(n*count/total), and the remainder goes one each to the rows with the
// largest fractional parts (ties to the earlier row).
func scale(rows []*locRow, n int) {
	var total int64
	for _, r := range rows {
		total += int64(r.count)
	}
	if total == 0 {
		return
	}
	type frac struct {
		rem int64
		i   int
	}
	fr := make([]frac, len(rows))
	left := int64(n)
	for i, r := range rows {
		// n*count can exceed int64 only past 10^13 addresses.
		p := int64(n) * int64(r.count)
		r.scaled = int(p / total)
		left -= int64(r.scaled)
		fr[i] = frac{p % total, i}
	}
	sort.Slice(fr, func(a, b int) bool {
		if fr[a].rem != fr[b].rem {
			return fr[a].rem > fr[b].rem
		}
		return fr[a].i < fr[b].i
	})
	for k := int64(0); k < left; k++ {
		rows[fr[k].i].scaled++
	}
}

func distKm(lat1, lon1, lat2, lon2 float64) float64 {
	dy := (lat2 - lat1) * 111.2
	dx := (lon2 - lon1) * 111.2 * math.Cos((lat1+lat2)/2*math.Pi/180)
	return math.Hypot(dx, dy)
}

// groupLocalities turns rows into localities per state, in file order of
// each locality's first row, with unique locality PIDs.
func groupLocalities(rows []*locRow) map[string][]*locality {
	type key struct{ name, state string }
	groups := map[key][]*locality{}
	out := map[string][]*locality{}
	for _, r := range rows {
		k := key{r.name, r.state}
		var into *locality
		for _, l := range groups[k] {
			if distKm(l.rows[0].lat, l.rows[0].lon, r.lat, r.lon) <= mergeKm {
				into = l
				break
			}
		}
		if into == nil {
			into = &locality{name: r.name, state: r.state}
			groups[k] = append(groups[k], into)
			out[r.state] = append(out[r.state], into)
		}
		into.rows = append(into.rows, r)
	}
	seen := map[string]bool{}
	gnaf := 250000000
	for _, st := range states {
		for _, l := range out[st.abbr] {
			sort.SliceStable(l.rows, func(a, b int) bool { return l.rows[a].count > l.rows[b].count })
			var w float64
			for _, r := range l.rows {
				l.realCount += r.count
				w += float64(r.count) + 1e-9
				l.lat += r.lat * (float64(r.count) + 1e-9)
				l.lon += r.lon * (float64(r.count) + 1e-9)
			}
			l.lat /= w
			l.lon /= w
			l.pid = localityPID(seen, l.state+"|"+l.name+"|"+l.rows[0].postcode)
			gnaf += 1 + int(hash64(l.pid)%7)
			l.gnafPID = strconv.Itoa(gnaf)
		}
	}
	return out
}

func hash64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// localityPID returns a G-NAF style locality PID ("loc" and 12 hex digits,
// as in releases since 2021) derived from key, unique within seen.
func localityPID(seen map[string]bool, key string) string {
	for i := 0; ; i++ {
		k := key
		if i > 0 {
			k += "#" + strconv.Itoa(i)
		}
		pid := fmt.Sprintf("loc%012x", hash64(k)&(1<<48-1))
		if !seen[pid] {
			seen[pid] = true
			return pid
		}
	}
}

// An authRow is one row of an authority code table.
type authRow struct{ code, name, desc string }

// codes holds the authority code tables, read from gnaf_codes.csv (and the
// level types, which it lacks, from the standard G-NAF list).
type codes struct {
	tables map[string][]authRow // table name (STREET_TYPE_AUT ...) -> rows sorted by code

	streetAbbr map[string]string // STREET_TYPE code (full word) -> abbreviation
	flatName   map[string]string
	levelName  map[string]string
	suffixName map[string]string // short code -> full word
}

var levelTypes = []authRow{
	{"B", "BASEMENT", "BASEMENT"}, {"FL", "FLOOR", "FLOOR"}, {"G", "GROUND", "GROUND"},
	{"L", "LEVEL", "LEVEL"}, {"LG", "LOWER GROUND", "LOWER GROUND"}, {"M", "MEZZANINE", "MEZZANINE"},
	{"OD", "OBSERVATION DECK", "OBSERVATION DECK"}, {"P", "PARKING", "PARKING"},
	{"PDM", "PODIUM", "PODIUM"}, {"PLF", "PLATFORM", "PLATFORM"}, {"PTHS", "PENTHOUSE", "PENTHOUSE"},
	{"RT", "ROOFTOP", "ROOFTOP"}, {"SB", "SUB-BASEMENT", "SUB-BASEMENT"},
	{"UG", "UPPER GROUND", "UPPER GROUND"},
}

func loadCodes(path string) (*codes, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) < 2 || len(recs[0]) < 4 || recs[0][0] != "table" {
		return nil, fmt.Errorf("%s: want a table,code,label,uri header", path)
	}
	c := &codes{tables: map[string][]authRow{}, streetAbbr: map[string]string{},
		flatName: map[string]string{}, levelName: map[string]string{}, suffixName: map[string]string{}}
	streetLabels := map[string][]string{}
	var streetOrder []string
	add := func(table string, r authRow) { c.tables[table] = append(c.tables[table], r) }
	for _, rec := range recs[1:] {
		table, code, label, uri := rec[0], strings.TrimSpace(rec[1]), strings.TrimSpace(rec[2]), strings.TrimSpace(rec[3])
		up := strings.ToUpper(label)
		switch table {
		case "Street":
			if _, ok := streetLabels[up]; !ok {
				streetOrder = append(streetOrder, up)
			}
			streetLabels[up] = append(streetLabels[up], code)
		case "Flat":
			add("FLAT_TYPE_AUT", authRow{code, up, up})
			c.flatName[code] = up
		case "StreetSuffix":
			short := uri[strings.LastIndexAny(uri, "/#")+1:]
			add("STREET_SUFFIX_AUT", authRow{short, code, up})
			c.suffixName[short] = code
		case "Locality":
			add("LOCALITY_CLASS_AUT", authRow{code, up, up})
		case "Alias":
			add("ADDRESS_ALIAS_TYPE_AUT", authRow{code, up, up})
		case "Geocode":
			add("GEOCODE_TYPE_AUT", authRow{code, up, up})
		case "GeocodeReliability":
			add("GEOCODE_RELIABILITY_AUT", authRow{code, up, up})
		case "Address":
			add("ADDRESS_TYPE_AUT", authRow{code, up, up})
		case "StreetConfirmation":
			add("STREET_CLASS_AUT", authRow{code[:1], up, up})
		case "PrimarySecondaryJoin":
			add("PS_JOIN_TYPE_AUT", authRow{code, up, up})
		case "MeshBlockMatch":
			add("MB_MATCH_CODE_AUT", authRow{code, up, up})
		}
	}
	for _, label := range streetOrder {
		cs := streetLabels[label]
		full := ""
		for _, x := range cs {
			if x == label {
				full = x
			}
		}
		if full == "" { // no code spells the label: take the longest
			for _, x := range cs {
				if len(x) > len(full) || len(x) == len(full) && x < full {
					full = x
				}
			}
		}
		abbr := full
		for _, x := range cs {
			if x != full && (abbr == full || len(x) < len(abbr) || len(x) == len(abbr) && x < abbr) {
				abbr = x
			}
		}
		if _, dup := c.streetAbbr[full]; dup {
			continue
		}
		c.streetAbbr[full] = abbr
		add("STREET_TYPE_AUT", authRow{full, abbr, label})
	}
	for _, r := range levelTypes {
		add("LEVEL_TYPE_AUT", r)
		c.levelName[r.code] = r.name
	}
	add("LOCALITY_ALIAS_TYPE_AUT", authRow{"SR", "SPATIALLY RELATED", "SPATIALLY RELATED"})
	add("LOCALITY_ALIAS_TYPE_AUT", authRow{"SYN", "SYNONYM", "SYNONYM"})
	add("STREET_LOCALITY_ALIAS_TYPE_AUT", authRow{"ALT", "ALTERNATIVE", "ALTERNATIVE"})
	add("STREET_LOCALITY_ALIAS_TYPE_AUT", authRow{"SYN", "SYNONYM", "SYNONYM"})
	for t, rows := range c.tables {
		sort.Slice(rows, func(a, b int) bool { return rows[a].code < rows[b].code })
		c.tables[t] = rows
	}
	for _, need := range []string{"STREET", "ROAD", "AVENUE"} {
		if _, ok := c.streetAbbr[need]; !ok {
			return nil, fmt.Errorf("%s: street type %s missing", path, need)
		}
	}
	for _, need := range []string{"UNIT", "APT", "SHOP", "SE"} {
		if _, ok := c.flatName[need]; !ok {
			return nil, fmt.Errorf("%s: flat type %s missing", path, need)
		}
	}
	for _, need := range []string{"N", "S", "E", "W"} {
		if _, ok := c.suffixName[need]; !ok {
			return nil, fmt.Errorf("%s: street suffix %s missing", path, need)
		}
	}
	return c, nil
}

// typeWeights are street types with their approximate share of Australian
// streets; types not listed (and present in the codes) share tailWeight.
var typeWeights = []struct {
	code string
	w    float64
}{
	{"STREET", 24}, {"ROAD", 19}, {"COURT", 8}, {"AVENUE", 7}, {"DRIVE", 6.5}, {"PLACE", 5.5},
	{"CRESCENT", 4}, {"LANE", 4}, {"CLOSE", 3.5}, {"WAY", 2.5}, {"PARADE", 1.5}, {"TERRACE", 1.5},
	{"CIRCUIT", 1.5}, {"GROVE", 1.2}, {"TRACK", 0.6}, {"RISE", 0.5}, {"HIGHWAY", 0.4},
	{"BOULEVARD", 0.4}, {"LOOP", 0.4}, {"VIEW", 0.3}, {"PARKWAY", 0.2}, {"WALK", 0.2},
	{"ESPLANADE", 0.15}, {"CHASE", 0.15}, {"MEWS", 0.15}, {"GARDENS", 0.15}, {"PROMENADE", 0.1},
	{"RETREAT", 0.1}, {"GLADE", 0.1}, {"OUTLOOK", 0.1}, {"SQUARE", 0.1}, {"ENTRANCE", 0.1},
	{"RIDGE", 0.1}, {"BEND", 0.1}, {"VISTA", 0.1}, {"COVE", 0.1}, {"LINK", 0.1}, {"GLEN", 0.1},
	{"HEIGHTS", 0.05}, {"CIRCLE", 0.05}, {"ROW", 0.05}, {"ARCADE", 0.03}, {"PATHWAY", 0.05},
}

const tailWeight = 0.3

// neverDrawn are street types left out of random draws (they read as a
// direction or a placeholder) though they stay in STREET_TYPE_AUT.
var neverDrawn = map[string]bool{"NULL": true, "EAST": true, "WEST": true, "NORTH": true, "SOUTH": true}

// typeTable returns cumulative weights over street type codes.
func (c *codes) typeTable() (types []string, cum []float64) {
	listed := map[string]bool{}
	var total float64
	for _, tw := range typeWeights {
		if _, ok := c.streetAbbr[tw.code]; !ok {
			continue
		}
		listed[tw.code] = true
		total += tw.w
		types = append(types, tw.code)
		cum = append(cum, total)
	}
	var tail []string
	for _, r := range c.tables["STREET_TYPE_AUT"] {
		if !listed[r.code] && !neverDrawn[r.code] {
			tail = append(tail, r.code)
		}
	}
	for _, t := range tail {
		total += tailWeight / float64(len(tail))
		types = append(types, t)
		cum = append(cum, total)
	}
	return types, cum
}
