package engine

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/lodge-mail/lodge/data"
)

// State is an index into data.States.
type State uint8

// NoState is the State of an address that names none.
const NoState State = 0xff

// StateAbbr returns the abbreviation of s ("NSW"), or "" for NoState.
func (s State) String() string {
	if int(s) < len(data.States) {
		return data.States[s].Abbr
	}
	return ""
}

// stateByAbbr finds a state by abbreviation ("NSW", "OT").
func stateByAbbr(abbr string) State {
	for i := range data.States {
		if data.States[i].Abbr == abbr {
			return State(i)
		}
	}
	return NoState
}

// Source is a bit set of the reference sources that gave a fact.
type Source uint8

const (
	SourceGNAF     Source = 1 << iota // G-NAF locality list or a G-NAF release
	SourceGeoNames                    // GeoNames postal codes
)

func (s Source) String() string {
	var parts []string
	if s&SourceGNAF != 0 {
		parts = append(parts, "gnaf")
	}
	if s&SourceGeoNames != 0 {
		parts = append(parts, "geonames")
	}
	return strings.Join(parts, ",")
}

// Locality is one (locality, state, postcode) triple of the reference.
type Locality struct {
	Name     string // as printed, upper case: "ST KILDA"
	Key      string // canonical lookup key (CanonicalLocality of Name)
	State    State
	Postcode uint16
	Count    uint32 // G-NAF addresses: ranks candidates
	Sources  Source
	// BoxOnly is set for names that exist only as PO box or large volume
	// receiver delivery points ("BRISBANE GPO BOXES", "SYDNEY" 2001).
	BoxOnly  bool
	Lat, Lon float32
	PID      string // G-NAF locality PID when known
}

// Country is a country lodge recognises on an address's last line.
type Country struct {
	Alpha3 string
	Name   string
	Names  []string // every name it was added with, Name first
	Former bool     // withdrawn from ISO 3166-1
	// Translated are its names in other languages that the index holds
	// (AddCountryTranslations)
	Translated []string
}

// Reference is the compact in-memory form of the reference index: what the
// engine judges addresses against. It is immutable once built and safe for
// concurrent use.
type Reference struct {
	localities []Locality
	byKey      map[string][]uint32 // canonical locality name → localities
	byPostcode [10000][]uint32     // postcode → its localities
	// stateCodes[pc] has bit s set when state s accepts postcode pc: the
	// state's allocated ranges plus every pairing a source gives.
	stateCodes [10000]uint16
	countries  []Country
	countryKey map[string]uint16   // normalised name → countries index
	alpha3     map[string]uint16   // current countries by alpha-3 code → countries index
	world      map[string]string   // worldNames(), or buildWorld with the index's translations
	nzByPC     map[uint16][]string // New Zealand postcode → canonical place and region names
	australia  map[string]bool     // normalised names of Australia ("AUSTRALIA", "AUS", "AU")
	territory  map[string]int      // normalised external territory name → data.ExternalTerritories index
	// Corrector finds fuzzy candidates; nil uses the built-in scan.
	corrector Corrector
	facts     Facts
	// gnafPostcodes is set when G-NAF's postcode counts are loaded; then
	// pcHasAddresses tells delivery postcodes from box-only ones.
	gnafPostcodes bool
	pcAddresses   [10000]int32
	// streets is the street and premise level, nil when none is loaded;
	// locGroups[id] are the street groups of locality id: usually one;
	// several where names collide (a locality named like another's alias).
	streets   *Streets
	locGroups [][]uint32
}

// Facts describes a reference for logs and metrics.
type Facts struct {
	Localities int
	Postcodes  int
	Countries  int
	NZPlaces   int
	// Street and premise level (zero without it).
	StreetGroups int
	Streets      int
	Points       int
}

// Facts returns counts describing r.
func (r *Reference) Facts() Facts { return r.facts }

// Localities returns the reference's localities; callers must not modify it.
func (r *Reference) Localities() []Locality { return r.localities }

// Locality returns the locality with the given id.
func (r *Reference) Locality(id uint32) *Locality { return &r.localities[id] }

// PostcodeAddresses returns G-NAF's address count for postcode pc, and
// whether G-NAF postcode counts are loaded at all.
func (r *Reference) PostcodeAddresses(pc uint16) (int, bool) {
	if pc >= 10000 || !r.gnafPostcodes || r.pcAddresses[pc] == 0 {
		return 0, false
	}
	return int(r.pcAddresses[pc]), true
}

// LocalitiesIn returns the ids of the localities with postcode pc.
func (r *Reference) LocalitiesIn(pc uint16) []uint32 {
	if pc >= 10000 {
		return nil
	}
	return r.byPostcode[pc]
}

// NZPlaces returns the New Zealand place names by postcode.
func (r *Reference) NZPlaces() map[uint16][]string { return r.nzByPC }

// Countries returns the countries known, Australia included.
func (r *Reference) Countries() []Country { return r.countries }

// Corrector suggests localities for names that match none. Implementations
// are off the hot path: they run only for unmatched addresses.
type Corrector interface {
	// Similar returns ids of localities whose canonical names are close to
	// key (a canonical locality name), best first, at most limit of them.
	Similar(key string, limit int) []uint32
}

// SetCorrector installs c as the fuzzy candidate source. Call before use.
func (r *Reference) SetCorrector(c Corrector) { r.corrector = c }

// ReferenceBuilder assembles a Reference. It is not safe for concurrent use.
type ReferenceBuilder struct {
	r    *Reference
	seen map[string]uint32 // key|state|postcode → id
	nz   map[uint16]map[string]bool
}

// NewReferenceBuilder returns an empty builder.
func NewReferenceBuilder() *ReferenceBuilder {
	r := &Reference{
		byKey:      map[string][]uint32{},
		countryKey: map[string]uint16{},
		alpha3:     map[string]uint16{},
		australia:  map[string]bool{},
		territory:  map[string]int{},
		nzByPC:     map[uint16][]string{},
	}
	for i := range data.States {
		st := &data.States[i]
		for _, rg := range st.Ranges {
			for pc := rg[0]; pc <= rg[1] && pc < 10000; pc++ {
				r.stateCodes[pc] |= 1 << i
			}
		}
	}
	for i, t := range data.ExternalTerritories {
		for _, n := range append([]string{t.Name}, t.Aliases...) {
			r.territory[CanonicalLocality(n)] = i
		}
	}
	return &ReferenceBuilder{r: r, seen: map[string]uint32{}, nz: map[uint16]map[string]bool{}}
}

// ParsePostcode parses a 4-digit postcode.
func ParsePostcode(s string) (uint16, bool) {
	if len(s) != 4 {
		return 0, false
	}
	n := 0
	for i := 0; i < 4; i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return uint16(n), true
}

// AddLocality adds or merges a locality. A triple given by several sources is
// kept once with the union of its sources, the largest count and the first
// coordinates and PID given. It returns the locality's id.
func (b *ReferenceBuilder) AddLocality(l Locality) (uint32, error) {
	if int(l.State) >= len(data.States) {
		return 0, fmt.Errorf("locality %q: unknown state %d", l.Name, l.State)
	}
	if l.Postcode >= 10000 {
		return 0, fmt.Errorf("locality %q: postcode %d out of range", l.Name, l.Postcode)
	}
	key := CanonicalLocality(l.Name)
	if key == "" {
		return 0, fmt.Errorf("locality %q: empty name", l.Name)
	}
	l.Name = displayName(l.Name)
	l.Key = key
	sk := fmt.Sprintf("%s|%d|%d", key, l.State, l.Postcode)
	if id, ok := b.seen[sk]; ok {
		m := &b.r.localities[id]
		m.Sources |= l.Sources
		if l.Count > m.Count {
			m.Count = l.Count
		}
		if !l.BoxOnly {
			m.BoxOnly = false
		}
		if m.PID == "" {
			m.PID = l.PID
		}
		if m.Lat == 0 && m.Lon == 0 {
			m.Lat, m.Lon = l.Lat, l.Lon
		}
		// A G-NAF spelling wins over others.
		if l.Sources&SourceGNAF != 0 {
			m.Name = l.Name
		}
		return id, nil
	}
	id := uint32(len(b.r.localities))
	b.r.localities = append(b.r.localities, l)
	b.seen[sk] = id
	b.r.byKey[key] = append(b.r.byKey[key], id)
	b.r.byPostcode[l.Postcode] = append(b.r.byPostcode[l.Postcode], id)
	b.r.stateCodes[l.Postcode] |= 1 << l.State
	return id, nil
}

// AddPostcodeAddresses records that G-NAF holds count street addresses
// with postcode pc. Once any postcode is recorded, a street address with a
// postcode G-NAF has no addresses for is not matched: such postcodes serve
// PO boxes and large volume receivers only.
func (b *ReferenceBuilder) AddPostcodeAddresses(pc uint16, count int) {
	if pc >= 10000 {
		return
	}
	b.r.gnafPostcodes = true
	if count > 0 {
		b.r.pcAddresses[pc] += int32(min(count, 1<<30))
	}
}

// AddNZPlace records a New Zealand postcode with a place (suburb) or region
// name, so that New Zealand addresses written without a country line are
// recognised.
func (b *ReferenceBuilder) AddNZPlace(postcode uint16, name string) {
	key := CanonicalLocality(name)
	if key == "" || postcode >= 10000 {
		return
	}
	m := b.nz[postcode]
	if m == nil {
		m = map[string]bool{}
		b.nz[postcode] = m
	}
	m[key] = true
}

// AddCountry adds a country with all its names; former marks a code
// withdrawn from ISO 3166-1. Names of Australia itself ("AUS" included)
// mark a last line that is dropped before a domestic check. When names
// collide, Build gives them to current countries' own names first, then
// to their aliases, then to withdrawn countries.
func (b *ReferenceBuilder) AddCountry(alpha3, name string, names []string, former bool) {
	alpha3 = strings.ToUpper(alpha3)
	b.r.countries = append(b.r.countries, Country{Alpha3: alpha3, Name: name, Names: append([]string{name}, names...), Former: former})
}

// AddCountryTranslations adds a country's names in other languages (an
// index's translations of ISO 3166-1, read when it was built). Like the
// names of package data's table, they name the country only on a last
// line that is no Australian locality's name, and a name two countries
// share names neither.
// The country must have been added (AddCountry) before; the names go to
// the last country added with that code.
func (b *ReferenceBuilder) AddCountryTranslations(alpha3 string, names []string) {
	alpha3 = strings.ToUpper(alpha3)
	for i := len(b.r.countries) - 1; i >= 0; i-- {
		if c := &b.r.countries[i]; c.Alpha3 == alpha3 {
			c.Translated = append(c.Translated, names...)
			return
		}
	}
}

// indexCountries fills the country lookups from the added countries.
func (r *Reference) indexCountries() {
	claim := func(n string, idx int) {
		if k := canonicalCountry(n); k != "" {
			if _, dup := r.countryKey[k]; !dup {
				r.countryKey[k] = uint16(idx)
			}
		}
	}
	for _, c := range r.countries {
		if c.Alpha3 == "AUS" {
			for _, n := range append(c.Names, c.Alpha3) {
				if k := canonicalCountry(n); k != "" {
					r.australia[k] = true
				}
			}
		}
	}
	for i, c := range r.countries { // current countries' own names and codes
		if c.Alpha3 != "AUS" && !c.Former {
			claim(c.Name, i)
			claim(c.Alpha3, i)
			if _, dup := r.alpha3[c.Alpha3]; !dup {
				r.alpha3[c.Alpha3] = uint16(i)
			}
		}
	}
	for i, c := range r.countries { // their aliases
		if c.Alpha3 != "AUS" && !c.Former {
			for _, n := range c.Names[1:] {
				claim(n, i)
			}
		}
	}
	// external territories by the names people give them
	for _, t := range data.ExternalTerritories {
		for i, c := range r.countries {
			if c.Alpha3 == t.Alpha3 && c.Alpha3 != "AUS" && !c.Former {
				for _, n := range append([]string{t.Name}, t.Aliases...) {
					claim(n, i)
				}
			}
		}
	}
	for i, c := range r.countries { // withdrawn countries last
		if c.Former {
			for _, n := range append(c.Names, c.Alpha3) {
				claim(n, i)
			}
		}
	}
}

// countryOf finds the country a last line's canonical key names: by the
// names the reference was built with (English names, codes and aliases
// first, withdrawn countries last), then by the names of every language
// and the variants of package data, which are never an Australian
// locality's name. "THE BAHAMAS" reads as BAHAMAS. A name inverted at a
// comma the way lists sort them, its article or title after the name
// ("BAHAMAS, THE", "CONGO, DEMOCRATIC REPUBLIC OF THE", "SUDAN, SOUTH"),
// reads as written the other way round; "&" reads as AND, "IS" as
// ISLANDS and dotted initials as one word ("ST PIERRE & MIQUELON",
// "COOK IS", "P.R.C."). aus reports a name of Australia itself.
func (r *Reference) countryOf(key []byte) (ci int, aus, ok bool) {
	if ci, aus, ok = r.countryInverted(key); ok || len(key) == 0 || (key[len(key)-1] >= '0' && key[len(key)-1] <= '9') {
		return ci, aus, ok
	}
	var buf [128]byte
	alt, changed := countryAltForm(buf[:0], key, "ISLANDS")
	if !changed {
		return 0, false, false
	}
	if ci, aus, ok = r.countryInverted(alt); ok {
		return ci, aus, ok
	}
	if bytes.Contains(alt, []byte("ISLANDS")) {
		alt, _ = countryAltForm(buf[:0], key, "ISLAND") // "CHRISTMAS IS"
		return r.countryInverted(alt)
	}
	return 0, false, false
}

// countryInverted is countryOf for a name as written or inverted at a
// comma.
func (r *Reference) countryInverted(key []byte) (ci int, aus, ok bool) {
	if ci, aus, ok = r.countryByName(key); ok {
		return ci, aus, ok
	}
	last := key[bytes.LastIndexByte(key, ' ')+1:]
	switch string(last) {
	case "THE", "OF", "NORTH", "SOUTH", "EAST", "WEST", "WESTERN":
	default:
		return 0, false, false
	}
	// the title moved back before the name: every split, the shortest
	// name first
	var buf [128]byte
	for i := 0; i < len(key); i++ {
		if key[i] != ' ' {
			continue
		}
		b := append(append(append(buf[:0], key[i+1:]...), ' '), key[:i]...)
		if ci, aus, ok = r.countryByName(b); ok {
			return ci, aus, ok
		}
	}
	return 0, false, false
}

// countryAltForm appends to dst the key with the shorthand of country
// names written out: "&" as AND, "IS", "ISL" and "ISLDS" as islands
// (ISLANDS or ISLAND), a run
// of single letters as one word ("P R C" for P.R.C.); changed reports a
// difference.
func countryAltForm(dst, key []byte, islands string) (_ []byte, changed bool) {
	single := func(w []byte) bool { return len(w) == 1 && w[0] >= 'A' && w[0] <= 'Z' }
	prevSingle := false
	for i := 0; i < len(key); {
		j := i
		for j < len(key) && key[j] != ' ' {
			j++
		}
		w := key[i:j]
		i = j + 1
		if prevSingle && single(w) {
			dst = append(dst, w...) // joined to the letter before
			changed = true
			continue
		}
		if len(dst) > 0 {
			dst = append(dst, ' ')
		}
		prevSingle = single(w)
		switch string(w) {
		case "&":
			dst, changed = append(dst, "AND"...), true
		case "IS", "ISL", "ISLDS":
			dst, changed = append(dst, islands...), true
		default:
			dst = append(dst, w...)
		}
	}
	return dst, changed
}

// countryByName is countryOf for a name in its written order.
func (r *Reference) countryByName(key []byte) (ci int, aus, ok bool) {
	for range 2 {
		if r.australia[string(key)] {
			return 0, true, true
		}
		if ci, ok := r.countryKey[string(key)]; ok {
			return int(ci), false, true
		}
		if len(key) == 0 || (key[len(key)-1] >= '0' && key[len(key)-1] <= '9') {
			break // "MELBOURNE VIC 3000": no country's name ends in a digit
		}
		if a3, ok := r.world[string(key)]; ok && len(r.byKey[string(key)]) == 0 {
			if a3 == "AUS" {
				return 0, true, true
			}
			if ci, ok := r.alpha3[a3]; ok {
				return int(ci), false, true
			}
		}
		rest, the := bytes.CutPrefix(key, []byte("THE "))
		if !the {
			break
		}
		key = rest
	}
	return 0, false, false
}

// worldNames maps the canonical keys of the country names of every
// language that package data's table holds, and of our variants, to
// alpha-3 codes; built once, on first use, and shared by every Reference
// built without translations (AddCountryTranslations).
var worldNames = sync.OnceValue(func() map[string]string { return buildWorld(nil) })

// buildWorld is worldNames with the translated names of countries too.
func buildWorld(countries []Country) map[string]string {
	m := map[string]string{}
	shared := map[string]bool{}
	add := func(a3, name string) {
		k := canonicalCountry(name)
		if k == "" || stateSpelling(k) || (len(k) < 4 && isASCII(k)) {
			return // "UC" is Australia in Vietnamese, and a word of English
		}
		if prev, ok := m[k]; ok && prev != a3 {
			shared[k] = true
		}
		m[k] = a3
	}
	data.CountryNamesInLanguages(add)
	for _, c := range countries {
		if c.Former {
			continue // a withdrawn code's names never win over a current one's
		}
		for _, n := range c.Translated {
			add(c.Alpha3, n)
		}
	}
	for k := range shared {
		delete(m, k) // names two countries share say nothing
	}
	for _, v := range data.CountryVariants {
		for _, n := range v.Names {
			if k := canonicalCountry(n); k != "" && !stateSpelling(k) {
				m[k] = v.Alpha3
			}
		}
	}
	return m
}

// stateSpelling reports whether the canonical key k spells an Australian
// state: never a country, whatever a language calls one.
func stateSpelling(k string) bool {
	_, ok := voc.states.lookup([]byte(k))
	return ok
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Build returns the finished Reference. The builder must not be used after.
func (b *ReferenceBuilder) Build() *Reference {
	r := b.r
	for _, n := range []string{"AUSTRALIA", "AUS", "AU", "AUST"} {
		r.australia[canonicalCountry(n)] = true
	}
	r.indexCountries()
	r.world = worldNames()
	for _, c := range r.countries {
		if len(c.Translated) > 0 {
			r.world = buildWorld(r.countries)
			break
		}
	}
	for k, ids := range r.byKey {
		// most addresses first: candidates are ranked by G-NAF counts
		sort.SliceStable(ids, func(i, j int) bool { return r.localities[ids[i]].Count > r.localities[ids[j]].Count })
		r.byKey[k] = ids
	}
	places := 0
	for pc, m := range b.nz {
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		sort.Strings(names)
		r.nzByPC[pc] = names
		places += len(names)
	}
	pcs := 0
	for pc := range r.byPostcode {
		if len(r.byPostcode[pc]) > 0 {
			pcs++
		}
	}
	r.facts = Facts{Localities: len(r.localities), Postcodes: pcs, Countries: len(r.countries), NZPlaces: places}
	b.r = nil
	return r
}

// CanonicalLocality returns the key a locality name is looked up by: the
// normalised name with hyphens as spaces, SAINT as ST, MOUNT as MT, NTH and
// STH as NORTH and SOUTH. Names as the reference prints them and as people
// write them map to one key.
func CanonicalLocality(name string) string {
	buf, issue := normalise(make([]byte, 0, len(name)), strings.TrimSpace(name))
	if issue != normOK {
		return ""
	}
	return string(canonicalLocalityBytes(nil, buf))
}

// canonicalLocalityBytes appends the canonical key of the normalised name
// n to dst.
func canonicalLocalityBytes(dst, n []byte) []byte {
	start := len(dst)
	for i := 0; i < len(n); {
		j := i
		for j < len(n) && n[j] != ' ' && n[j] != '-' && n[j] != '/' {
			j++
		}
		word := n[i:j]
		if len(word) > 0 {
			if len(dst) > start {
				dst = append(dst, ' ')
			}
			switch string(word) {
			case "SAINT":
				dst = append(dst, "ST"...)
			case "MOUNT":
				dst = append(dst, "MT"...)
			case "NTH":
				dst = append(dst, "NORTH"...)
			case "STH":
				dst = append(dst, "SOUTH"...)
			default:
				dst = append(dst, word...)
			}
		}
		i = j + 1
	}
	return dst
}

func canonicalCountry(name string) string {
	buf, issue := normalise(nil, strings.TrimSpace(name))
	if issue != normOK {
		return ""
	}
	return string(canonicalLocalityBytes(nil, buf))
}

// displayName returns the upper-case printed form of a reference name,
// with its apostrophes and hyphens ("O'CONNOR", "KUR-RING-GAI").
func displayName(name string) string {
	return strings.Join(strings.Fields(strings.ToUpper(name)), " ")
}

// StateByAbbr finds a state by its abbreviation ("NSW", "OT").
func StateByAbbr(abbr string) (State, bool) {
	s := stateByAbbr(abbr)
	return s, s != NoState
}
