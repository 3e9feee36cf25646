package engine

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Streets is the street and premise level of a Reference: the streets of
// localities and the address points on them, in compact sorted tables. It
// is built by a StreetsBuilder (from a G-NAF release or a list of address
// points), stored by package index with MarshalBinary, and attached to a
// Reference with AttachStreets. Immutable once built; safe for concurrent
// use.
//
// Streets belong to groups: a G-NAF locality (by its PID) or a named place
// of an address list. Locality triples of the reference are linked to a
// group; an address whose locality is linked is judged at street and
// premise level. A group is complete when its source lists every street
// and address of the place (G-NAF): there, a street or number that is not
// in the table makes the address unmatched. In an incomplete group (an
// address list that covers only some streets) a street that is not found
// leaves the verdict at locality granularity.
type Streets struct {
	groupKeys []string // group key ("gnaf:LOC1234", "list:ST KILDA|VIC")
	complete  []bool   // per group
	groupLo   []uint32 // group g's entries are entries[groupLo[g]:groupLo[g+1]]
	entries   []streetEntry
	streets   []street
	points    []point
	strs      []string          // interned unit, level and lot strings; strs[0] == ""
	strID     map[string]uint32 // strs → index
	links     []streetLink      // locality triples → group
	// pids are the address points' own identifiers (G-NAF
	// ADDRESS_DETAIL_PID), parallel to points; empty when no source gave
	// any. Each is packed as prefix index<<56 | number (see packPID);
	// 0 for none.
	pids       []uint64
	pidPrefix  []string         // "GANSW|9": letters and digit count
	pidPrefixI map[string]uint8 // builder only
}

// streetEntry is one way of writing a street: its own name or an alias.
type streetEntry struct {
	key    string // canonical "NAME|TYPE|SUFFIX"
	street uint32
}

type street struct {
	group  uint32
	name   string // as printed: "CAPTAIN COOK DR N"
	pid    string // source's street id, when it has one
	lo, hi uint32 // points[lo:hi], sorted by (first, last, flat, level, lot)
}

// point is one address on a street. Numbers are encoded as number<<8 |
// suffix letter (A=1 ... Z=26); 0 means none. flat, level, lot and
// building (its name) are interned strings (0 for none). postcode is the
// address's own postcode (0 when the source gives none).
type point struct {
	first, last uint32
	flat, level uint32
	lot         uint32
	building    uint32
	postcode    uint16
}

type streetLink struct {
	group    uint32
	name     string
	state    State
	postcode uint16
}

// Facts returns how many groups, streets and address points s holds.
func (s *Streets) Facts() (groups, streets, points int) {
	return len(s.groupKeys), len(s.streets), len(s.points)
}

// PointSpec is an address point as a source gives it.
type PointSpec struct {
	NumberFirst string // "18", "455A"; "" for a lot address
	NumberLast  string // "20" of 18-20
	FlatNumber  string // "12", "G01"
	LevelType   string // level type code or word ("L", "LEVEL", "G")
	LevelNumber string
	Lot         string
	Building    string // the building's name ("BELCONNEN TOWERS")
	Postcode    string
	// PID is the address's own identifier ("GANSW717138653"); kept when
	// it is letters followed by up to 16 digits.
	PID string
	// Alias marks an alias address: where it is the same point as a
	// principal one, the principal's PID is kept.
	Alias bool
}

// StreetsBuilder assembles Streets. Not safe for concurrent use.
type StreetsBuilder struct {
	s       *Streets
	groupOf map[string]uint32
	keyOf   map[string]uint32 // group|key → street
	pts     []builderPoint
	aliases []streetEntryG
	err     error
	scratch []byte
}

// builderPoint is a point as the builder collects it: 40 bytes, for it
// holds every address of a release at once. pid's top bit marks an alias
// address (see aliasBit).
type builderPoint struct {
	street uint32
	point
	pid uint64
}

// aliasBit marks a builderPoint's pid as an alias address's; packed PIDs
// leave it free (at most 127 prefixes).
const aliasBit = 1 << 63

type streetEntryG struct {
	group uint32
	streetEntry
}

// NewStreetsBuilder returns an empty builder.
func NewStreetsBuilder() *StreetsBuilder {
	return &StreetsBuilder{
		s:       &Streets{strs: []string{""}, strID: map[string]uint32{"": 0}},
		groupOf: map[string]uint32{},
		keyOf:   map[string]uint32{},
	}
}

// Group returns the group with key, adding it; complete marks a source
// that lists every street and address of the place.
func (b *StreetsBuilder) Group(key string, complete bool) uint32 {
	if g, ok := b.groupOf[key]; ok {
		b.s.complete[g] = b.s.complete[g] || complete
		return g
	}
	g := uint32(len(b.s.groupKeys))
	b.groupOf[key] = g
	b.s.groupKeys = append(b.s.groupKeys, key)
	b.s.complete = append(b.s.complete, complete)
	return g
}

// Link links the locality triple (name, state, postcode) to group g.
func (b *StreetsBuilder) Link(g uint32, name, state, postcode string) error {
	st := stateByAbbr(strings.ToUpper(strings.TrimSpace(state)))
	pc, ok := ParsePostcode(strings.TrimSpace(postcode))
	if st == NoState || !ok {
		return fmt.Errorf("streets: locality %q %q %q: bad state or postcode", name, state, postcode)
	}
	key := CanonicalLocality(name)
	if key == "" {
		return fmt.Errorf("streets: empty locality name")
	}
	b.s.links = append(b.s.links, streetLink{group: g, name: key, state: st, postcode: pc})
	return nil
}

// StreetKey returns the canonical key of a street: its normalised name
// (SAINT as ST, MOUNT as MT), its type in full and its suffix as a code,
// separated by '|'. typ and suffix may be codes, abbreviations or words;
// a type lodge does not know is kept as the last word of the name, as the
// parser reads it. ok is false for an empty or unreadable name.
func StreetKey(name, typ, suffix string) (string, bool) {
	k, ok := streetKeyBytes(nil, name, typ, suffix)
	return string(k), ok
}

func streetKeyBytes(dst []byte, name, typ, suffix string) ([]byte, bool) {
	nb, issue := normalise(nil, strings.TrimSpace(name))
	if issue != normOK || len(nb) == 0 {
		return dst, false
	}
	if t := strings.TrimSpace(typ); t == "" || strings.EqualFold(t, "NULL") || strings.EqualFold(t, "NA") || strings.EqualFold(t, "N/A") {
		// No type: G-NAF leaves STREET_TYPE_CODE empty, or writes its
		// code lists' placeholder NULL (other lists NA or N/A: Brisbane's
		// "THE DRIVE"), for a street whose name is the whole street
		// ("KINGSWAY"), and some sources put the type in
		// the name ("SMITH STREET NORTH", "THE ESPLANADE"). Split the
		// name as the parser reads a street line, so that "THE
		// ESPLANADE" with no type and "THE" of type ESPLANADE are one
		// key, and "KINGSWAY" stays "KINGSWAY" with no type.
		typ = ""
		words := strings.Fields(string(nb))
		n := len(words)
		if n >= 3 && strings.TrimSpace(suffix) == "" {
			if _, ok := voc.streetSuffix.lookup([]byte(words[n-1])); ok {
				if _, ok := voc.streetTypes.lookup([]byte(words[n-2])); ok {
					nb, typ, suffix = []byte(strings.Join(words[:n-2], " ")), words[n-2], words[n-1]
				}
			}
		}
		if typ == "" && n >= 2 {
			if _, ok := voc.streetTypes.lookup([]byte(words[n-1])); ok {
				nb, typ = []byte(strings.Join(words[:n-1], " ")), words[n-1]
			}
		}
	}
	dst = canonicalLocalityBytes(dst, nb)
	tb, _ := normalise(nil, strings.TrimSpace(typ))
	tfull := ""
	if len(tb) > 0 {
		if idx, ok := voc.streetTypes.lookup(tb); ok {
			tfull = voc.streetTypeFull(idx)
		} else {
			dst = append(dst, ' ')
			dst = append(dst, tb...)
		}
	}
	sb, _ := normalise(nil, strings.TrimSpace(suffix))
	sabbr := ""
	if len(sb) > 0 {
		if idx, ok := voc.streetSuffix.lookup(sb); ok {
			sabbr = voc.suffixAbbr(idx)
		} else {
			dst = append(dst, ' ')
			dst = append(dst, sb...)
		}
	}
	dst = append(dst, '|')
	dst = append(dst, tfull...)
	dst = append(dst, '|')
	dst = append(dst, sabbr...)
	return dst, true
}

// printedStreet writes a street key as a street line prints it: "CAPTAIN
// COOK DR N".
func printedStreet(key, written string) string {
	name, rest, _ := strings.Cut(key, "|")
	typ, suf, _ := strings.Cut(rest, "|")
	out := name
	// the source's spelling (MOUNT, not the key's MT) when it has the
	// same words
	if w, issue := normalise(nil, strings.TrimSpace(written)); issue == normOK && strings.Count(string(w), " ") == strings.Count(name, " ") &&
		!strings.ContainsAny(string(w), "-/") {
		out = string(w)
	}
	if typ != "" {
		out += " " + voc.streetTypeAbbrOf(typ)
	}
	if suf != "" {
		out += " " + suf
	}
	return out
}

// Street adds the street (name, type, suffix) to group g, or finds it
// there, and returns its index. pid is the source's id for it ("" when
// none).
func (b *StreetsBuilder) Street(g uint32, name, typ, suffix, pid string) (uint32, error) {
	key, ok := StreetKey(name, typ, suffix)
	if !ok {
		return 0, fmt.Errorf("streets: street %q %q %q: no name", name, typ, suffix)
	}
	gk := strconv.FormatUint(uint64(g), 10) + "#" + key
	if id, ok := b.keyOf[gk]; ok {
		return id, nil
	}
	id := uint32(len(b.s.streets))
	b.s.streets = append(b.s.streets, street{group: g, name: printedStreet(key, name), pid: pid})
	b.keyOf[gk] = id
	b.aliases = append(b.aliases, streetEntryG{g, streetEntry{key: key, street: id}})
	return id, nil
}

// Alias adds another way of writing street id (a G-NAF street alias).
func (b *StreetsBuilder) Alias(id uint32, name, typ, suffix string) error {
	if int(id) >= len(b.s.streets) {
		return fmt.Errorf("streets: alias of unknown street %d", id)
	}
	key, ok := StreetKey(name, typ, suffix)
	if !ok {
		return fmt.Errorf("streets: alias %q %q %q: no name", name, typ, suffix)
	}
	g := b.s.streets[id].group
	gk := strconv.FormatUint(uint64(g), 10) + "#" + key
	if _, dup := b.keyOf[gk]; dup {
		return nil // the name is already a street of its own: it wins
	}
	b.keyOf[gk] = id
	b.aliases = append(b.aliases, streetEntryG{g, streetEntry{key: key, street: id}})
	return nil
}

// intern returns the id of the normalised string v.
func (b *StreetsBuilder) intern(v string) uint32 {
	if v == "" {
		return 0
	}
	if id, ok := b.s.strID[v]; ok {
		return id
	}
	id := uint32(len(b.s.strs))
	b.s.strs = append(b.s.strs, v)
	b.s.strID[v] = id
	return id
}

// Point adds an address point to street id.
func (b *StreetsBuilder) Point(id uint32, ps PointSpec) error {
	if int(id) >= len(b.s.streets) {
		return fmt.Errorf("streets: point on unknown street %d", id)
	}
	var pt point
	var ok bool
	if ps.NumberFirst != "" {
		if pt.first, ok = encodeNumber([]byte(normaliseField(ps.NumberFirst))); !ok {
			return fmt.Errorf("streets: number %q: not a house number", ps.NumberFirst)
		}
	}
	if ps.NumberLast != "" {
		if pt.last, ok = encodeNumber([]byte(normaliseField(ps.NumberLast))); !ok {
			return fmt.Errorf("streets: number %q: not a house number", ps.NumberLast)
		}
	}
	pt.flat = b.intern(normaliseField(ps.FlatNumber))
	if lt := normaliseField(ps.LevelType); lt != "" {
		code := lt
		if idx, ok := voc.levelTypes.lookup([]byte(lt)); ok {
			code = voc.levelCode(idx)
		}
		pt.level = b.intern(code + normaliseField(ps.LevelNumber))
	} else if ln := normaliseField(ps.LevelNumber); ln != "" {
		pt.level = b.intern("L" + ln)
	}
	pt.lot = b.intern(normaliseField(ps.Lot))
	pt.building = b.intern(normaliseField(ps.Building))
	if pt.first == 0 && pt.lot == 0 {
		return fmt.Errorf("streets: point with neither number nor lot")
	}
	if ps.Postcode != "" {
		pc, ok := ParsePostcode(strings.TrimSpace(ps.Postcode))
		if !ok {
			return fmt.Errorf("streets: postcode %q", ps.Postcode)
		}
		pt.postcode = pc
	}
	pid := b.packPID(ps.PID)
	if ps.Alias {
		pid |= aliasBit
	}
	b.pts = append(b.pts, builderPoint{street: id, point: pt, pid: pid})
	return nil
}

// packPID packs an identifier of letters and up to 16 digits ("GANSW" and
// "717138653") as the index of its letters and digit count among the
// builder's prefixes (at most 127) and its number; 0 when it has another
// form or the prefixes are used up.
func (b *StreetsBuilder) packPID(pid string) uint64 {
	i := 0
	for i < len(pid) && (pid[i] >= 'A' && pid[i] <= 'Z' || pid[i] == '_') { // "GAOT_718543101"
		i++
	}
	digits := len(pid) - i
	if i == 0 || i > 16 || digits == 0 || digits > 16 {
		return 0
	}
	var n uint64
	for _, c := range pid[i:] {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + uint64(c-'0')
	}
	if n >= 1<<56 {
		return 0
	}
	key := pid[:i] + "|" + strconv.Itoa(digits)
	s := b.s
	if s.pidPrefixI == nil {
		s.pidPrefixI = map[string]uint8{}
	}
	idx, ok := s.pidPrefixI[key]
	if !ok {
		if len(s.pidPrefix) >= 127 {
			return 0
		}
		s.pidPrefix = append(s.pidPrefix, key)
		idx = uint8(len(s.pidPrefix)) // from 1: 0 is no PID
		s.pidPrefixI[key] = idx
	}
	return uint64(idx)<<56 | n
}

// pidString returns the identifier of point i, or "".
func (s *Streets) pidString(i int32) string {
	if int(i) >= len(s.pids) || i < 0 || s.pids[i] == 0 {
		return ""
	}
	v := s.pids[i]
	idx := int(v >> 56)
	if idx == 0 || idx > len(s.pidPrefix) {
		return ""
	}
	letters, digits, _ := strings.Cut(s.pidPrefix[idx-1], "|")
	d, _ := strconv.Atoi(digits)
	num := strconv.FormatUint(v&(1<<56-1), 10)
	for len(num) < d {
		num = "0" + num
	}
	return letters + num
}

// normaliseField normalises a short field ("12A", "g01") as the engine
// normalises address text; "" when unreadable.
func normaliseField(v string) string {
	v = strings.TrimSpace(v)
	if v == "" {
		return ""
	}
	b, issue := normalise(nil, v)
	if issue != normOK {
		return ""
	}
	return string(bytes.TrimPrefix(b, []byte("#")))
}

// encodeNumber encodes a house number "455", "455A" (a letter prefix such
// as "A12" is dropped) as number<<8 | suffix letter.
func encodeNumber(b []byte) (uint32, bool) {
	i := 0
	for i < len(b) && b[i] >= 'A' && b[i] <= 'Z' {
		i++
	}
	n := uint32(0)
	j := i
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		if j-i >= 7 {
			return 0, false
		}
		n = n*10 + uint32(b[j]-'0')
		j++
	}
	if j == i {
		return 0, false
	}
	var suf uint32
	if j < len(b) {
		if b[j] < 'A' || b[j] > 'Z' || j+1 != len(b) {
			return 0, false
		}
		suf = uint32(b[j]-'A') + 1
	}
	return n<<8 | suf, true
}

// appendNumber appends numberString(v) to dst.
func appendNumber(dst []byte, v uint32) []byte {
	dst = strconv.AppendUint(dst, uint64(v>>8), 10)
	if suf := v & 0xff; suf != 0 {
		dst = append(dst, byte('A'+suf-1))
	}
	return dst
}

func numberString(v uint32) string {
	s := strconv.FormatUint(uint64(v>>8), 10)
	if suf := v & 0xff; suf != 0 {
		s += string(rune('A' + suf - 1))
	}
	return s
}

// Build returns the finished Streets. The builder must not be used after.
func (b *StreetsBuilder) Build() *Streets {
	s := b.s
	sort.Slice(b.pts, func(i, j int) bool {
		x, y := &b.pts[i], &b.pts[j]
		if x.street != y.street {
			return x.street < y.street
		}
		if x.point != y.point {
			return x.point.less(&y.point)
		}
		// the same point twice: the principal address's PID first (the
		// alias bit sorts aliases last)
		return x.pid < y.pid
	})
	s.points = make([]point, 0, len(b.pts))
	withPIDs := len(s.pidPrefix) > 0
	if withPIDs {
		s.pids = make([]uint64, 0, len(b.pts))
	}
	k := 0
	for id := range s.streets {
		s.streets[id].lo = uint32(len(s.points))
		for k < len(b.pts) && b.pts[k].street == uint32(id) {
			if n := len(s.points); n == int(s.streets[id].lo) || s.points[n-1] != b.pts[k].point {
				s.points = append(s.points, b.pts[k].point)
				if withPIDs {
					s.pids = append(s.pids, b.pts[k].pid&^aliasBit)
				}
			}
			k++
		}
		s.streets[id].hi = uint32(len(s.points))
	}
	s.pidPrefixI = nil
	b.pts = nil
	sort.Slice(b.aliases, func(i, j int) bool {
		x, y := &b.aliases[i], &b.aliases[j]
		if x.group != y.group {
			return x.group < y.group
		}
		return x.key < y.key
	})
	s.entries = make([]streetEntry, len(b.aliases))
	s.groupLo = make([]uint32, len(s.groupKeys)+1)
	for i, a := range b.aliases {
		s.entries[i] = a.streetEntry
	}
	g := 0
	for i := 0; i <= len(b.aliases); i++ {
		for g < len(s.groupKeys) && (i == len(b.aliases) || uint32(g) < b.aliases[i].group) {
			g++
			s.groupLo[g] = uint32(i)
		}
	}
	b.aliases = nil
	b.s = nil
	return s
}

func (p *point) less(q *point) bool {
	if p.first != q.first {
		return p.first < q.first
	}
	if p.last != q.last {
		return p.last < q.last
	}
	if p.flat != q.flat {
		return p.flat < q.flat
	}
	if p.level != q.level {
		return p.level < q.level
	}
	if p.lot != q.lot {
		return p.lot < q.lot
	}
	if p.building != q.building {
		return p.building < q.building
	}
	return p.postcode < q.postcode
}

// AttachStreets links the streets to r's localities. Call it once, before
// r is used. Links naming a locality r does not hold are skipped and
// counted.
func (r *Reference) AttachStreets(s *Streets) (skipped int) {
	r.streets = s
	r.locGroups = make([][]uint32, len(r.localities))
	for _, l := range s.links {
		id, ok := r.find([]byte(l.name), l.state, l.postcode)
		if !ok {
			skipped++
			continue
		}
		if !slices.Contains(r.locGroups[id], l.group) {
			r.locGroups[id] = append(r.locGroups[id], l.group)
		}
	}
	g, st, pt := s.Facts()
	r.facts.StreetGroups, r.facts.Streets, r.facts.Points = g, st, pt
	return skipped
}

// ---- judging

// streetOutcome is what the street level says about an address.
type streetOutcome uint8

const (
	streetNone        streetOutcome = iota // no street data for it: judge by locality
	streetMatched                          // the street exists (no numbers known, or none given)
	premiseMatched                         // the address exists
	streetNotFound                         // a complete group lacks the street
	numberNotFound                         // the street lacks the number
	unitNotFound                           // the building lacks the unit
	addrPostcodeWrong                      // the address exists under another postcode
)

// streetMatch is the outcome with what detail needs.
type streetMatch struct {
	outcome streetOutcome
	street  int32 // index, -1 when none
	base    int32 // a point with the number, for suggestions; -1
	typeFix bool  // the street was found without the type written
	pc      uint16
}

// findEntry finds key among group g's entries.
func (s *Streets) findEntry(g uint32, key []byte) (int, bool) {
	lo, hi := int(s.groupLo[g]), int(s.groupLo[g+1])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.entries[m].key < string(key) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < int(s.groupLo[g+1]) && s.entries[lo].key == string(key)
}

// matchStreet judges the premise pm against group g (0-based).
func (e *Engine) matchStreet(s *scratch, pm *premise, g uint32, pc uint16) streetMatch {
	st := e.ref.streets
	m := streetMatch{street: -1, base: -1}
	if !pm.hasStreet || pm.nameHi <= pm.nameLo {
		return m
	}
	s.skey = s.streetKey(s.skey[:0], pm)
	i, ok := st.findEntry(g, s.skey)
	if !ok && pm.suffix >= 0 && pm.streetType >= 0 {
		// "OLIVERS GAP MALL": MALL is a suffix and a type; GAP a type and
		// a name. Read the last word as the type.
		if ti, isType := voc.streetTypes.lookup(s.word(pm.nameHi + 1)); isType {
			alt := *pm
			alt.nameHi, alt.streetType, alt.suffix = pm.nameHi+1, int(ti), -1
			s.skey = s.streetKey(s.skey[:0], &alt)
			i, ok = st.findEntry(g, s.skey)
		}
	}
	if !ok && pm.streetType < 0 {
		// no type written: the street of that name, when there is one
		name := s.skey[:len(s.skey)-2] // drop "||"
		s.skey = append(s.skey[:len(name)], '|')
		j, _ := st.findEntry(g, s.skey)
		found := -1
		for ; j < int(st.groupLo[g+1]) && strings.HasPrefix(st.entries[j].key, string(s.skey)); j++ {
			if found >= 0 && st.entries[j].street != st.entries[found].street {
				found = -2
				break
			}
			if found == -1 {
				found = j
			}
		}
		if found >= 0 {
			i, ok, m.typeFix = found, true, true
		}
	}
	if !ok {
		if st.complete[g] {
			m.outcome = streetNotFound
		}
		return m
	}
	m.street = int32(st.entries[i].street)
	sr := &st.streets[m.street]
	pts := st.points[sr.lo:sr.hi]
	if len(pts) == 0 || (pm.numFirst == nil && pm.lot == nil) {
		m.outcome = streetMatched
		return m
	}
	if pm.numFirst == nil {
		lot, ok := st.strID[string(pm.lot)]
		if ok {
			for k := range pts {
				if pts[k].lot == lot && pts[k].first == 0 {
					m.base = int32(sr.lo) + int32(k)
					return st.checkPostcode(m, pts[k], pc)
				}
			}
		}
		m.outcome = numberNotFound
		return m
	}
	first, ok := encodeNumber(pm.numFirst)
	if !ok {
		m.outcome = numberNotFound
		return m
	}
	var last uint32
	if pm.numLast != nil {
		if last, ok = encodeNumber(pm.numLast); !ok {
			m.outcome = numberNotFound
			return m
		}
	}
	lo := sort.Search(len(pts), func(k int) bool { return pts[k].first >= first })
	hi := lo
	for hi < len(pts) && pts[hi].first == first {
		hi++
	}
	if last != 0 {
		// the exact range, else its first number alone
		for k := lo; k < hi; k++ {
			if pts[k].last == last {
				lo, hi = k, k+1
				for hi < len(pts) && pts[hi].first == first && pts[hi].last == last {
					hi++
				}
				break
			}
		}
	}
	if lo == hi {
		// a number inside a range: 19 of 17-21
		for k := range pts {
			if pts[k].last != 0 && pts[k].first < first && pts[k].last >= first && pts[k].first>>8 <= first>>8 {
				lo, hi = k, k+1
				for hi < len(pts) && pts[hi].first == pts[k].first && pts[hi].last == pts[k].last {
					hi++
				}
				break
			}
		}
	}
	if lo == hi {
		m.outcome = numberNotFound
		return m
	}
	m.base = int32(sr.lo) + int32(lo)
	if pm.flatNum == nil && pm.levelType == "" {
		return st.checkPostcode(m, pts[lo], pc)
	}
	flat, level := uint32(0), uint32(0)
	if pm.flatNum != nil {
		if flat, ok = st.strID[string(pm.flatNum)]; !ok {
			m.outcome = unitNotFound
			return m
		}
	}
	if pm.levelType != "" {
		s.skey = append(append(s.skey[:0], pm.levelType...), pm.levelNum...)
		level = st.strID[string(s.skey)] // 0 when unknown: matches no level
		if level == 0 {
			level = ^uint32(0)
		}
	}
	found := -1
	for k := lo; k < hi; k++ {
		p := &pts[k]
		if flat != 0 && p.flat != flat {
			continue
		}
		if level != 0 && p.level != 0 && p.level != level {
			continue
		}
		if level != 0 && flat == 0 && p.level != level {
			continue
		}
		if found < 0 || p.level == level {
			found = k // the record with the very level written wins
		}
		if p.level == level {
			break
		}
	}
	if found >= 0 {
		m.base = int32(sr.lo) + int32(found)
		return st.checkPostcode(m, pts[found], pc)
	}
	m.outcome = unitNotFound
	return m
}

// checkPostcode confirms an address found against the postcode written.
func (s *Streets) checkPostcode(m streetMatch, p point, pc uint16) streetMatch {
	if p.postcode != 0 && p.postcode != pc {
		m.outcome, m.pc = addrPostcodeWrong, p.postcode
		return m
	}
	m.outcome = premiseMatched
	return m
}

// streetKey appends the canonical key of pm's street to dst.
func (s *scratch) streetKey(dst []byte, pm *premise) []byte {
	start := len(dst)
	for k := pm.nameLo; k < pm.nameHi; k++ {
		if len(dst) > start {
			dst = append(dst, ' ')
		}
		dst = canonicalLocalityBytes(dst, s.word(k))
	}
	dst = append(dst, '|')
	if pm.streetType >= 0 {
		dst = append(dst, voc.streetTypeFull(uint16(pm.streetType))...)
	}
	dst = append(dst, '|')
	if pm.suffix >= 0 {
		dst = append(dst, voc.suffixAbbr(uint16(pm.suffix))...)
	}
	return dst
}

// nearestNumbers lists up to four house numbers of street id nearest to
// the number written, in order.
func (s *Streets) nearestNumbers(id int32, numFirst []byte) []string {
	want, _ := encodeNumber(numFirst)
	sr := &s.streets[id]
	type cand struct{ n, d uint32 }
	var cs []cand
	seen := map[uint32]bool{}
	for _, p := range s.points[sr.lo:sr.hi] {
		if p.first == 0 || seen[p.first] {
			continue
		}
		seen[p.first] = true
		a, b := p.first>>8, want>>8
		d := a - b
		if b > a {
			d = b - a
		}
		cs = append(cs, cand{p.first, d})
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].n < cs[j].n
	})
	if len(cs) > 4 {
		cs = cs[:4]
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].n < cs[j].n })
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = numberString(c.n)
	}
	return out
}

// similarStreets finds the streets of group g a misspelt street key may
// have meant: the name within maxEdits, or the same letters run together
// or split, with any type; the written type preferred. Best first.
func (s *Streets) similarStreets(g uint32, key string, limit int) []uint32 {
	name, rest, _ := strings.Cut(key, "|")
	typ, _, _ := strings.Cut(rest, "|")
	squashed := strings.ReplaceAll(name, " ", "")
	lim := maxEdits(len(name))
	type cand struct {
		id    uint32
		score int
	}
	var cs []cand
	seen := map[uint32]bool{}
	for _, en := range s.entries[s.groupLo[g]:s.groupLo[g+1]] {
		en_name, en_rest, _ := strings.Cut(en.key, "|")
		en_typ, _, _ := strings.Cut(en_rest, "|")
		d := editDistance(name, en_name, lim)
		if d > lim && strings.ReplaceAll(en_name, " ", "") == squashed {
			d = 1
		}
		if d > lim {
			continue
		}
		score := d * 2
		if en_typ != typ {
			score++
		}
		if en.key == key || seen[en.street] {
			continue
		}
		seen[en.street] = true
		cs = append(cs, cand{en.street, score})
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].score < cs[j].score })
	out := make([]uint32, 0, min(limit, len(cs)))
	for i := 0; i < len(cs) && i < limit; i++ {
		out = append(out, cs[i].id)
	}
	return out
}
