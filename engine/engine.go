// Package engine parses, normalises and judges Australian postal addresses.
//
// An Engine gives each address one of four verdicts (see
// ../shared/docs/address-check.md): matched, unmatched, invalid or
// international, with the ISO 3166-1 alpha-3 code of the nation and, for
// invalid addresses, a message saying what is wrong. It judges against a
// Reference: compact in-memory tables that package index builds from the
// reference sources. The engine does no I/O.
//
// Promises:
//   - Check never panics and runs in time linear in its input; inputs of any
//     size, shape or encoding get a verdict.
//   - Case, spacing, punctuation, diacritics, dash and apostrophe variants and
//     the usual abbreviations never change a verdict: verdicts are computed
//     from the normalised form only.
//   - No allocation on the hot path beyond the result (its message).
//   - Nothing of the caller's input is retained: cached verdicts are keyed by
//     a hash of the normalised address and hold only strings the engine made;
//     the cache's admission filter keeps 32 bits of a hash of recently seen
//     addresses.
//   - The verdict cache never costs much more than it saves: an address
//     enters it when seen twice, and it is skipped while too few lookups hit
//     (see verdictCache).
//   - An Engine is safe for concurrent use.
package engine

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/lodge-mail/lodge/data"
)

// Status is a verdict.
type Status uint8

const (
	StatusInvalid Status = iota + 1
	StatusUnmatched
	StatusMatched
	StatusInternational
)

var statusNames = [...]string{"", "invalid", "unmatched", "matched", "international"}

// String returns the verdict as the wire format spells it.
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return ""
}

// Statuses lists every verdict in a stable order.
var Statuses = []Status{StatusMatched, StatusUnmatched, StatusInvalid, StatusInternational}

// Result is the verdict on one address.
type Result struct {
	Status  Status
	Nation  string  // ISO 3166-1 alpha-3; "AUS" for domestic addresses, "" when unknown
	Message string  // what is wrong, for invalid addresses
	Detail  *Detail // only when asked for
}

// Granularity is how deep an address was confirmed.
type Granularity string

const (
	GranularityPremise  Granularity = "premise"
	GranularityStreet   Granularity = "street"
	GranularityLocality Granularity = "locality"
	GranularityPostal   Granularity = "postal"
)

// Fault codes explain why an address is not matched.
const (
	FaultComponentCount   = "COMPONENT_COUNT"
	FaultComponentLength  = "COMPONENT_TOO_LONG"
	FaultBadEncoding      = "BAD_ENCODING"
	FaultControlChars     = "CONTROL_CHARACTERS"
	FaultNoPostcode       = "NO_POSTCODE"
	FaultPostcodeFormat   = "POSTCODE_FORMAT"
	FaultNoState          = "NO_STATE"
	FaultPostcodeState    = "POSTCODE_NOT_IN_STATE"
	FaultNoLocality       = "NO_LOCALITY"
	FaultNoDeliveryLine   = "NO_STREET_OR_POSTAL_LINE"
	FaultLocalityUnknown  = "LOCALITY_NOT_FOUND"
	FaultLocalityPostcode = "LOCALITY_POSTCODE_MISMATCH"
	FaultLocalityState    = "LOCALITY_STATE_MISMATCH"
	FaultLocalitySpelling = "LOCALITY_MISSPELT"
	FaultBoxPostcode      = "POSTCODE_FOR_BOXES_ONLY"
	FaultAmbiguous        = "AMBIGUOUS"
	FaultTrailingText     = "TEXT_AFTER_POSTCODE"
	FaultStreetUnknown    = "STREET_NOT_FOUND"
	FaultStreetType       = "STREET_TYPE_MISSING"
	FaultNumberUnknown    = "NUMBER_NOT_FOUND"
	FaultUnitUnknown      = "UNIT_NOT_FOUND"
	FaultAddressPostcode  = "ADDRESS_POSTCODE_MISMATCH"
	FaultNumberMissing    = "NUMBER_MISSING"
	FaultPostalService    = "POSTAL_SERVICE_NOT_OFFERED"
)

// Config tunes an Engine. The zero value is the documented default.
type Config struct {
	// CacheEntries is how many verdicts the cache holds: 0 means 500,000;
	// a negative value turns the cache off. An address's verdict enters
	// the cache when the address is seen a second time, and the cache is
	// consulted only while enough lookups hit to pay for it.
	CacheEntries int64
}

// Engine judges addresses. It is safe for concurrent use.
type Engine struct {
	ref   *Reference
	cache *verdictCache
	live  *live // set by NewLive: checks go to its current generation (reload.go)
}

// New returns an Engine judging against ref.
func New(ref *Reference, cfg Config) (*Engine, error) {
	if ref == nil {
		return nil, fmt.Errorf("engine: nil reference")
	}
	e := &Engine{ref: ref}
	if cfg.CacheEntries >= 0 {
		n := cfg.CacheEntries
		if n == 0 {
			n = 500_000
		}
		c, err := newVerdictCache(n)
		if err != nil {
			return nil, err
		}
		e.cache = c
	}
	return e, nil
}

// Close releases the cache.
func (e *Engine) Close() {
	if e.live != nil {
		e.live.close()
		return
	}
	if e.cache != nil {
		e.cache.close()
	}
}

// Reference returns the reference e judges against.
func (e *Engine) Reference() *Reference {
	if e.live != nil {
		return e.live.reference()
	}
	return e.ref
}

// CacheStats returns cache hits and misses so far (zero without a cache).
// A check for which the cache stepped aside (see verdictCache: its hit
// ratio too low to pay) is neither.
func (e *Engine) CacheStats() (hits, misses uint64) {
	if e.live != nil {
		return e.live.cacheStats()
	}
	if e.cache == nil {
		return 0, 0
	}
	return e.cache.stats()
}

// SplitLines splits an address given as one string into its components:
// on newlines ("\r\n" too) when it has any, else on commas. It appends to
// dst and returns it; the components alias s.
func SplitLines(dst []string, s string) []string {
	sep := byte(',')
	if strings.IndexByte(s, '\n') >= 0 {
		sep = '\n'
	}
	for {
		i := strings.IndexByte(s, sep)
		if i < 0 {
			return append(dst, strings.TrimSuffix(s, "\r"))
		}
		dst = append(dst, strings.TrimSuffix(s[:i], "\r"))
		s = s[i+1:]
	}
}

// CheckString judges an address written as one string (see SplitLines).
func (e *Engine) CheckString(addr string, detail bool) Result {
	var arr [MaxComponents + 2]string
	return e.Check(SplitLines(arr[:0], addr), detail)
}

// Check judges an address given as its components (lines).
func (e *Engine) Check(lines []string, detail bool) Result {
	if e.live != nil {
		return e.live.check(lines, detail)
	}
	s := getScratch()
	defer putScratch(s)
	n, r, ok := s.load(lines, e.ref.australia)
	if !ok {
		if detail {
			r.Detail = &Detail{Faults: []string{faultOf(r)}}
		}
		return r
	}
	if detail || e.cache == nil {
		return e.judge(s, n, detail)
	}
	l, r, ok := e.cache.get(s.buf)
	if ok {
		return r
	}
	r = e.judge(s, n, false)
	e.cache.set(l, s.buf, r)
	return r
}

// faultOf gives the fault code behind a load failure's result.
func faultOf(r Result) string {
	switch {
	case strings.HasPrefix(r.Message, "an address needs"):
		return FaultComponentCount
	case strings.Contains(r.Message, "longer than"):
		return FaultComponentLength
	case strings.Contains(r.Message, "UTF-8"):
		return FaultBadEncoding
	default:
		return FaultControlChars
	}
}

// load trims and counts the components and normalises them into s.buf,
// each followed by '\n'. It reports an invalid verdict when the count, a
// length, the encoding or a control character is wrong. A last line naming
// Australia (a key of australia) past the sixth does not count: judge
// drops it anyway, so six lines and "AUSTRALIA" are six lines.
func (s *scratch) load(lines []string, australia map[string]bool) (int, Result, bool) {
	s.buf = s.buf[:0]
	n := 0
	for _, l := range lines {
		if n >= MaxComponents {
			// keep counting for the message, without normalising
			if strings.TrimSpace(l) != "" {
				n++
			}
			continue
		}
		start := len(s.buf)
		var issue normIssue
		s.buf, issue = normalise(s.buf, l)
		if issue == normOK && len(s.buf) == start && strings.TrimSpace(l) == "" {
			continue // blank (a line of punctuation counts, empty once normalised)
		}
		n++
		switch issue {
		case normTooLong:
			return 0, invalid(fmt.Sprintf("line %d is longer than %d characters", n, MaxComponentRunes)), false
		case normBadUTF8:
			return 0, invalid(fmt.Sprintf("line %d is not valid UTF-8 text", n)), false
		case normControl:
			return 0, invalid(fmt.Sprintf("line %d contains control characters", n)), false
		}
		s.comps[n-1] = span{uint16(start), uint16(len(s.buf))}
		s.buf = append(s.buf, '\n')
	}
	if n > MaxComponents && s.lastIsAustralia(lines, australia) {
		n-- // the first six lines are loaded; the country line is not
	}
	if n < MinComponents || n > MaxComponents {
		return 0, invalid(fmt.Sprintf("an address needs %d to %d lines, this one has %d", MinComponents, MaxComponents, n)), false
	}
	return n, Result{}, true
}

// lastIsAustralia reports whether the last non-blank line names
// Australia. It normalises into s.akey and s.key, allocating nothing once
// the pooled buffers have grown.
func (s *scratch) lastIsAustralia(lines []string, australia map[string]bool) bool {
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) == "" {
			continue
		}
		var issue normIssue
		s.akey, issue = normalise(s.akey[:0], lines[i])
		if issue != normOK {
			return false
		}
		s.key = canonicalLocalityBytes(s.key[:0], s.akey)
		return australia[string(s.key)]
	}
	return false
}

func invalid(msg string) Result {
	return Result{Status: StatusInvalid, Nation: "AUS", Message: msg}
}

// judge computes the verdict of the loaded address.
func (e *Engine) judge(s *scratch, n int, detail bool) Result {
	ref := e.ref
	p := &s.p
	*p = parse{n: n}
	s.tokenise(n)

	// A last line naming Australia is dropped. One naming another country
	// makes the address international, unless the lines above end in an
	// Australian state and postcode and the country line is a locality
	// there (DENMARK under WA 6333) or an external territory (NORFOLK
	// ISLAND under NSW 2899): then it is the locality line.
	last := s.comp(n - 1)
	s.key = canonicalLocalityBytes(s.key[:0], last)
	ci, aus, isCountry := ref.countryOf(s.key)
	if lo, hi := int(s.ctok[n-1][0]), int(s.ctok[n-1][1]); !isCountry && hi > lo && !isPostcodeWord(s.word(hi-1)) {
		// "BAVARIA GERMANY", "75001 FRANCE", "LONDON SW1A 2AA UNITED
		// KINGDOM": the country ends the last line. Never a whole
		// Australian locality name (NEW ITALY, SCOTLAND ISLAND).
		ci, isCountry = e.countryEndsLine(s, n-1)
	}
	if aus {
		p.n--
	} else if isCountry {
		q := parse{n: n - 1}
		s.parseTail(&q)
		s.clearTail()
		ti, terr := ref.territory[string(s.key)]
		if !terr {
			// "COCOS IS": a territory by a name the country tables give
			ti, terr = territoryByCode(ref.countries[ci].Alpha3)
		}
		domestic := q.stateTok >= 0 && q.pcTok >= 0 && q.pcOK && ref.stateCodes[q.postcode]&(1<<q.state) != 0 &&
			(terr || ref.hasAnyState(s.key, q.postcode))
		// "CASEY STATION" / "7151" / "ANTARCTICA": a territory after
		// its own postcode is domestic without a state too
		domestic = domestic || (terr && q.stateTok < 0 && q.pcTok >= 0 && q.pcOK && territoryHas(ti, q.postcode))
		if !domestic {
			return e.international(ref.countries[ci].Alpha3, s, detail)
		}
	} else if lo, hi := int(s.ctok[n-1][0]), int(s.ctok[n-1][1]); hi-lo >= 2 && isPostcodeWord(s.word(hi-2)) {
		// "SYDNEY NSW 2000 AUSTRALIA": the country after the postcode, on
		// the same line, is dropped as a line of its own would be
		s.key = canonicalLocalityBytes(s.key[:0], s.word(hi-1))
		if ref.australia[string(s.key)] {
			s.toks = s.toks[:hi-1]
			s.ctok[n-1][1] = uint16(hi - 1)
			s.comps[n-1].end = s.toks[hi-2].end
		}
	}
	s.parseTail(p)
	e.leadingTail(s, p) // "NSW 2000" / "1 GEORGE ST" / "SYDNEY"
	e.territoryState(s, p)

	if p.stateTok < 0 && p.pcTok >= 0 && p.pcOK {
		if e.isNewZealand(s, p) {
			return e.international("NZL", s, detail)
		}
	}
	e.resolveTerritory(s, p)
	if msg, fault := e.checkForm(s, p); msg != "" {
		r := invalid(msg)
		if detail {
			r.Detail = e.detail(s, p)
			r.Detail.Faults = append(r.Detail.Faults, fault)
		}
		return r
	}
	return e.matchLocality(s, p, detail)
}

// countryEndsLine finds a country named by the last words of line c
// after other words ("BAVARIA GERMANY", "75001 FRANCE"), the longest such
// name first; Australia and a line that is an Australian locality's name
// are not.
func (e *Engine) countryEndsLine(s *scratch, c int) (int, bool) {
	lo, hi := int(s.ctok[c][0]), int(s.ctok[c][1])
	if hi-lo < 2 || len(e.ref.byKey[string(s.key)]) > 0 || stateSpelling(string(s.key)) {
		return 0, false // "NEW SOUTH WALES" is no Wales
	}
	for i := lo; i < hi; i++ {
		if isPostcodeWord(s.word(i)) {
			if st, _, _ := s.findState(lo, hi); st != NoState {
				return 0, false // "NSW 2372 BOLIVIA": a locality with its state and postcode
			}
			break
		}
	}
	if w := s.word(hi - 1); isDigits(w) && len(w) != 4 {
		// "SINGAPORE 048616", "MONACO 98000": the country before its
		// postal code (four digits may be an Australian postcode)
		s.akey = s.akey[:0]
		for k := lo; k < hi-1; k++ {
			if k > lo {
				s.akey = append(s.akey, ' ')
			}
			s.akey = canonicalLocalityBytes(s.akey, s.word(k))
		}
		if len(e.ref.byKey[string(s.akey)]) == 0 {
			if ci, aus, ok := e.ref.countryOf(s.akey); ok && !aus {
				return ci, true
			}
		}
		return 0, false
	}
	for i := lo + 1; i < hi; i++ {
		if i == hi-1 && string(s.word(i)) == "ISLAND" {
			break // Iceland's own name (ISLAND) is the English word that ends "REUNION ISLAND"
		}
		s.akey = s.akey[:0]
		for k := i; k < hi; k++ {
			if k > i {
				s.akey = append(s.akey, ' ')
			}
			s.akey = canonicalLocalityBytes(s.akey, s.word(k))
		}
		if ci, aus, ok := e.ref.countryOf(s.akey); ok && !aus {
			return ci, true
		}
	}
	return 0, false
}

// resolveTerritory handles an external territory written on its own line
// between locality and state ("HOME ISLAND" / "COCOS (KEELING) ISLANDS" /
// "WA 6799"): when the territory line is not itself a locality there and
// the line above it is, the line above is the locality.
func (e *Engine) resolveTerritory(s *scratch, p *parse) {
	if p.tailStart < 1 || p.locTok[0] < 0 || p.stateTok < 0 || !p.pcOK {
		return
	}
	key := s.localityKey(p)
	if _, terr := e.ref.territory[string(key)]; !terr || e.ref.has(key, p.state, p.postcode) {
		return
	}
	c := p.tailStart - 1
	s.key = canonicalLocalityBytes(s.key[:0], s.comp(c))
	if _, ok := e.ref.find(s.key, p.state, p.postcode); ok {
		p.territory, p.locWhole, p.tailStart = int(s.toks[p.locTok[0]].comp), c, c
		p.locTok = [2]int{int(s.ctok[c][0]), int(s.ctok[c][1]) - 1}
	}
}

// antarcticPostcode is the postcode of the Antarctic and sub-Antarctic
// bases (Australian Antarctic Territory, Heard Island, Macquarie Island).
// They have no streets: the base is the delivery point.
const antarcticPostcode = 7151

// stateOT is G-NAF's Other Territories, the state an external territory
// written in the state's place reads as.
var stateOT = stateByAbbr("OT")

// territoryByCode finds the external territory whose country code is
// alpha3.
func territoryByCode(alpha3 string) (int, bool) {
	for i, t := range data.ExternalTerritories {
		if t.Alpha3 == alpha3 && alpha3 != "AUS" {
			return i, true
		}
	}
	return 0, false
}

// territoryHas reports whether external territory ti takes postcode pc.
func territoryHas(ti int, pc uint16) bool {
	for _, t := range data.ExternalTerritories[ti].Postcodes {
		if t == pc {
			return true
		}
	}
	return false
}

// territoryState reads an external territory written where the state
// belongs, before or after its own postcode ("DAVIS STATION" / "AAT 7151",
// "CASEY STATION ANTARCTICA 7151", "HOME ISLAND" / "COCOS ISLANDS 6799"),
// as the Other Territories state: the words before it, or else the line
// above, are the locality. A territory that is itself a locality with
// that postcode ("CHRISTMAS ISLAND 6798") is the locality, and the address
// still has no state.
func (e *Engine) territoryState(s *scratch, p *parse) {
	if p.stateTok >= 0 || p.pcTok < 0 || !p.pcOK || p.locTok[0] < 0 || stateOT == NoState {
		return
	}
	if e.ref.hasAnyState(s.localityKey(p), p.postcode) {
		return
	}
	lo, hi := p.locTok[0], p.locTok[1]
	c := s.toks[hi].comp
	for i := lo; i <= hi; i++ { // the longest name ending the locality words, on their last line
		if s.toks[i].comp != c || s.toks[i].tail {
			continue
		}
		s.key = s.key[:0]
		for k := i; k <= hi; k++ {
			if s.toks[k].tail {
				continue
			}
			if len(s.key) > 0 {
				s.key = append(s.key, ' ')
			}
			s.key = canonicalLocalityBytes(s.key, s.word(k))
		}
		ti, ok := e.ref.territory[string(s.key)]
		if !ok || !territoryHas(ti, p.postcode) {
			continue
		}
		// the locality: the words left before the territory, else the
		// line above the tail when it reads as a name
		first, last := -1, -1
		for k := int(s.ctok[p.tailStart][0]); k < i; k++ {
			if !s.toks[k].tail {
				if first < 0 {
					first = k
				}
				last = k
			}
		}
		locWhole, tailStart := -1, p.tailStart
		if first < 0 {
			above := p.tailStart - 1
			if above < 0 || !s.nameLine(int(s.ctok[above][0]), int(s.ctok[above][1])) {
				return
			}
			locWhole, tailStart = above, above
			first, last = int(s.ctok[above][0]), int(s.ctok[above][1])-1
		}
		for k := i; k <= hi; k++ {
			s.toks[k].tail = true
		}
		p.state, p.stateTok = stateOT, i
		p.locTok, p.locWhole, p.tailStart = [2]int{first, last}, locWhole, tailStart
		return
	}
}

// clearTail forgets the tail marks a trial parse left on the tokens.
func (s *scratch) clearTail() {
	for i := range s.toks {
		s.toks[i].tail = false
	}
}

func (e *Engine) international(alpha3 string, s *scratch, detail bool) Result {
	r := Result{Status: StatusInternational, Nation: alpha3}
	if detail {
		r.Detail = &Detail{Country: alpha3}
		for c := 0; c < s.p.n && c < MaxComponents; c++ {
			r.Detail.Recipients = append(r.Detail.Recipients, string(s.comp(c)))
		}
	}
	return r
}

// isNewZealand reports whether an address without an Australian state has
// a New Zealand postcode with one of its place names in the tail lines.
func (e *Engine) isNewZealand(s *scratch, p *parse) bool {
	names := e.ref.nzByPC[p.postcode]
	if len(names) == 0 {
		return false
	}
	// the leftover words of the postcode line, and each whole line above it
	has := func(b []byte) bool {
		for _, n := range names {
			if n == string(b) {
				return true
			}
		}
		return false
	}
	if has(s.localityKey(p)) {
		return true
	}
	pcComp := int(s.toks[p.pcTok].comp)
	for c := pcComp - 1; c >= 0 && c >= pcComp-2; c-- {
		s.key = canonicalLocalityBytes(s.key[:0], s.comp(c))
		if has(s.key) {
			return true
		}
	}
	return false
}

// statesOf lists the states accepting postcode pc, as "VIC" or "NSW or ACT".
func (e *Engine) statesOf(pc uint16) string {
	var b strings.Builder
	bits := e.ref.stateCodes[pc]
	k := 0
	for i := 0; i < 16; i++ {
		if bits&(1<<i) == 0 || State(i).String() == "JBT" {
			continue
		}
		if k > 0 {
			b.WriteString(" or ")
		}
		b.WriteString(State(i).String())
		k++
	}
	return b.String()
}

// checkForm finds what is wrong as written, whatever the reference says:
// postcode, state and the lines a deliverable address needs.
func (e *Engine) checkForm(s *scratch, p *parse) (string, string) {
	if p.n > 0 {
		// a line after a complete tail that is not a country
		if p.tailStart < p.n && p.pcTok >= 0 && p.stateTok >= 0 {
			lastTail := max(int(s.toks[p.pcTok].comp), int(s.toks[p.stateTok].comp))
			if lastTail < p.n-1 && p.locWhole < 0 && p.locTok[0] >= 0 && int(s.toks[p.locTok[0]].comp) <= lastTail &&
				int(s.toks[p.locTok[1]].comp) > lastTail {
				return fmt.Sprintf("unexpected text after the postcode: %q is not a country lodge knows", s.comp(p.n-1)), FaultTrailingText
			}
		}
	}
	if p.pcTok < 0 {
		if p.stateTok < 0 {
			if c, ok := s.leadingStatePostcode(p); ok {
				// "NSW 2000" / "12 GEORGE ST" / "SYDNEY"
				return fmt.Sprintf("the state and postcode (%s) are on line %d, above the street and locality: an Australian address ends with its locality, state and postcode", s.comp(c), c+1), FaultNoPostcode
			}
			return "no state and postcode in the last lines" + s.foreignCode(p), FaultNoPostcode
		}
		return "no postcode: an Australian address ends with its state and 4-digit postcode" + s.foreignCode(p), FaultNoPostcode
	}
	pcw := s.word(p.pcTok)
	if !p.pcOK {
		msg := fmt.Sprintf("postcode %s is not 4 digits", pcw)
		switch {
		case len(pcw) == 3:
			// only a postcode of the state written: "SYDNEY NSW 200" is
			// no 0200 (ACT)
			if pc, ok := ParsePostcode("0" + string(pcw)); ok && e.ref.stateCodes[pc] != 0 &&
				(p.stateTok < 0 || e.ref.stateCodes[pc]&(1<<p.state) != 0) {
				msg += fmt.Sprintf("; did you mean 0%s?", pcw)
			}
		case len(pcw) == 5 && p.stateTok >= 0 && p.state.String() == "WA":
			// "SEATTLE WA 98101": Washington's abbreviation and a ZIP code
			msg += " (if this is a United States address, WA for Washington, end it with its country)"
		case len(pcw) > 4 && p.stateTok < 0:
			msg += ": a foreign address ends with its country"
		}
		return msg, FaultPostcodeFormat
	}
	if p.stateTok < 0 {
		if sts := e.statesOf(p.postcode); sts != "" {
			return fmt.Sprintf("no state: postcode %s is in %s", pcw, sts), FaultNoState
		}
		return "no state", FaultNoState
	}
	if e.ref.stateCodes[p.postcode]&(1<<p.state) == 0 {
		if e.isNewZealand(s, p) && !e.ref.hasAnyState(s.localityKey(p), p.postcode) {
			// "WELLINGTON 6011" / "VIC": no Australian state's postcode
			return fmt.Sprintf("%s %s is a New Zealand locality and postcode, not %s: a New Zealand address ends with NEW ZEALAND", s.localityKey(p), pcw, p.state), FaultPostcodeState
		}
		if sts := e.statesOf(p.postcode); sts != "" {
			return fmt.Sprintf("postcode %s is in %s, not %s", pcw, sts, p.state), FaultPostcodeState
		}
		return fmt.Sprintf("postcode %s is not an Australian postcode", pcw), FaultPostcodeState
	}
	if p.locTok[0] < 0 || len(s.localityKey(p)) == 0 {
		return "no locality (suburb or town) before the state and postcode", FaultNoLocality
	}
	if !e.findDelivery(s, p) && p.postcode != antarcticPostcode {
		// an Antarctic base needs no street line: it has none
		if lo, hi := p.locTok[0], p.locTok[1]; s.toks[lo].comp == s.toks[hi].comp && isNumberish(s.word(lo)) && s.classifyLine(lo, hi+1) != deliveryNone {
			// "10 JONES ST" / "VIC 3000": the street is there, the locality not
			return fmt.Sprintf("no locality (suburb or town) before the state and postcode: line %d (%s) reads as a street", s.toks[lo].comp+1, s.phrase(lo, hi)), FaultNoLocality
		}
		if lo, hi := p.locTok[0], p.locTok[1]; s.toks[lo].comp != s.toks[hi].comp {
			// "NSW 2000" / "SYDNEY" / "12 GEORGE ST": the street is last
			c := int(s.toks[hi].comp)
			if l := int(s.ctok[c][0]); l <= hi && s.classifyLine(l, int(s.ctok[c][1])) != deliveryNone {
				return fmt.Sprintf("the street or postal delivery line (%s) is line %d, below the locality: an Australian address ends with its locality, state and postcode", s.comp(c), c+1), FaultNoDeliveryLine
			}
		}
		msg := "no street or postal delivery line above the locality"
		if c := p.tailStart - 1; c >= 0 && s.nameLine(int(s.ctok[c][0]), int(s.ctok[c][1])) {
			// "KINGSWAY" where the street level does not know the street
			// by that name alone, or no street level is loaded
			msg += fmt.Sprintf(": line %d (%s) reads as a name, not a street; write the street with its number", c+1, s.comp(c))
		}
		return msg, FaultNoDeliveryLine
	}
	return "", ""
}

// foreignCode says, for an address without a postcode, that a postal
// code of another form on its last line ("98109-4607", "75001") belongs to
// another country; "" when there is none.
func (s *scratch) foreignCode(p *parse) string {
	if p.n < 1 {
		return ""
	}
	for k := int(s.ctok[p.n-1][0]); k < int(s.ctok[p.n-1][1]); k++ {
		w := s.word(k)
		num, ext, _ := bytes.Cut(w, []byte("-"))
		if isDigits(num) && len(num) >= 5 && (len(ext) == 0 || isDigits(ext)) {
			return fmt.Sprintf("; %s is no Australian postcode: a foreign address ends with its country", w)
		}
	}
	return ""
}

// findDelivery finds the street or postal delivery line: the nearest line
// above the locality that reads as one, or the front of the locality line
// when a client wrote street and locality on one line.
func (e *Engine) findDelivery(s *scratch, p *parse) bool {
	p.delivery = -1
	above := -1
	for c := p.tailStart - 1; c >= 0; c-- {
		if k := s.classifyLine(int(s.ctok[c][0]), int(s.ctok[c][1])); k != deliveryNone {
			above = c
			p.deliveryK = k
			break
		}
	}
	if above < 0 {
		// "ESPLANADE", "BROADWAY": a street type standing alone as the
		// street's name; "KINGSWAY", "THE KINGSWAY": a street the street
		// level knows by that name alone, without a type; when no other
		// line is the delivery line
		for c := p.tailStart - 1; c >= 0; c-- {
			lo, hi := int(s.ctok[c][0]), int(s.ctok[c][1])
			if hi == lo+1 {
				if _, ok := voc.streetTypes.lookup(s.word(lo)); ok {
					above, p.deliveryK = c, deliveryStreet
					break
				}
			}
			if e.knownStreet(s, p, lo, hi, s.localityKey(p)) {
				above, p.deliveryK = c, deliveryStreet
				break
			}
		}
	}
	if split := e.streetLocalitySplit(s, p, above); split >= 0 {
		lo := p.locTok[0]
		p.streetLo, p.streetSplit = lo, split
		p.delivery = int(s.toks[lo].comp)
		if p.deliveryK = s.classifyLine(lo, split); p.deliveryK == deliveryNone {
			p.deliveryK = deliveryStreet // a street known by its name alone
		}
		p.locTok[0], p.locWhole = split, -1
		return true
	}
	p.delivery = above
	return above >= 0
}

// streetLocalitySplit finds where the street ends on a line that holds a
// street and then the locality ("10 JONES ST SMITHVILLE", "UNIT 2 10
// JONES ST MELBOURNE", "RIVERSIDE TOWER 10 JONES ST", "JONES ST
// MELBOURNE"), returning the first locality token, or -1 when the
// locality words are not read so. The street part must read as a street
// line or name a street the street level knows ("KINGSWAY GLEN WAVERLEY").
// The locality is, by preference, the longest run of final words that is
// a locality with the address's state and postcode; else the closest
// misspelling of one; else one of that name anywhere (the postcode or
// state is wrong); else, on a line that reads as a street with no
// delivery line above, the words after the last street type.
//
// A whole locality line that is a known locality is split only when no
// other line can be the delivery line: then the name is a box or large
// volume receiver's ("ST KILDA ROAD MELBOURNE" 3004, "PALLAS STREET
// MARYBOROUGH" 4650) written where a street and its locality belong.
func (e *Engine) streetLocalitySplit(s *scratch, p *parse, above int) int {
	lo, hi := p.locTok[0], p.locTok[1]
	if lo < 0 || hi <= lo || s.toks[lo].comp != s.toks[hi].comp {
		return -1
	}
	for k := lo; k <= hi; k++ {
		if s.toks[k].tail {
			return -1 // "MELBOURNE VIC 10 JONES ST": not one run of words
		}
	}
	numbered := isNumberish(s.word(lo))
	if above >= 0 && (p.locWhole >= 0 || !numbered) {
		// a delivery line above: the locality line is a locality, perhaps
		// misspelt, unless it starts with a number
		return -1
	}
	// A known locality is split only into a street and another locality
	// of this state and postcode.
	known := e.ref.has(s.localityKey(p), p.state, p.postcode)
	if known && above >= 0 {
		return -1
	}
	// 1. a locality of this state and postcode
	if k := e.namedLocalitySplit(s, p, lo, hi, true); k >= 0 || known {
		return k
	}
	// 2. a misspelling of one ("1 KINGSWAY GLEN WAVERLY" 3150: GLEN is a
	// street type too, and WAVERLY a locality of NSW)
	if k := e.misspeltLocalitySplit(s, p, lo, hi); k >= 0 {
		return k
	}
	// 3. a locality of that name anywhere (the postcode or state is wrong)
	if k := e.namedLocalitySplit(s, p, lo, hi, false); k >= 0 {
		return k
	}
	if !numbered && !e.streetLine(s, p, lo, hi+1) {
		return -1
	}
	// 4. no locality known: split after the last street type
	for k := hi - 1; k > lo; k-- {
		if _, ok := voc.streetTypes.lookup(s.word(k)); ok {
			if s.classifyLine(lo, k+1) != deliveryNone {
				return k + 1
			}
			break
		}
	}
	return -1
}

// namedLocalitySplit finds, for street and locality words [lo,hi] on one
// line, the first locality token of the longest run of last words that
// is a locality (of the address's state and postcode when here is set,
// else of any) after a street line; -1 when there is none.
func (e *Engine) namedLocalitySplit(s *scratch, p *parse, lo, hi int, here bool) int {
	for k := lo + 1; k <= hi; k++ {
		s.key = s.key[:0]
		for j := k; j <= hi; j++ {
			if len(s.key) > 0 {
				s.key = append(s.key, ' ')
			}
			s.key = canonicalLocalityBytes(s.key, s.word(j))
		}
		found := false
		if here {
			found = e.ref.has(s.key, p.state, p.postcode)
		} else {
			found = len(e.ref.byKey[string(s.key)]) > 0
		}
		if found && e.streetLine(s, p, lo, k) {
			return k
		}
	}
	return -1
}

// streetLine reports whether tokens [lo,hi) read as a street or postal
// delivery line, or name a street the street level knows at the address's
// postcode (see knownStreet).
func (e *Engine) streetLine(s *scratch, p *parse, lo, hi int) bool {
	return s.classifyLine(lo, hi) != deliveryNone || e.knownStreet(s, p, lo, hi, nil)
}

// misspeltLocalitySplit finds, for street and locality words [lo,hi] on
// one line, the first locality token when the last words are a misspelling
// of a locality of the address's state and postcode and the words before
// them a street line: the closest such name, the longest of equally close
// ones; -1 when there is none.
func (e *Engine) misspeltLocalitySplit(s *scratch, p *parse, lo, hi int) int {
	if !p.pcOK || p.stateTok < 0 {
		return -1
	}
	ids := e.ref.byPostcode[p.postcode]
	best, bestDist := -1, 1<<30
	for k := lo + 1; k <= hi; k++ {
		s.key = s.key[:0]
		for j := k; j <= hi; j++ {
			if len(s.key) > 0 {
				s.key = append(s.key, ' ')
			}
			s.key = canonicalLocalityBytes(s.key, s.word(j))
		}
		key := bytesString(s.key) // s.key stays as it is while key is used
		lim := maxEdits(len(key))
		for _, id := range ids {
			l := &e.ref.localities[id]
			if l.State != p.state {
				continue
			}
			if d := editDistance(key, l.Key, lim); d <= lim && d < bestDist && e.streetLine(s, p, lo, k) {
				best, bestDist = k, d
			}
		}
	}
	return best
}

// hasAnyState reports whether the reference holds the locality key with
// postcode pc in any state.
func (r *Reference) hasAnyState(key []byte, pc uint16) bool {
	for _, id := range r.byKey[string(key)] {
		if r.localities[id].Postcode == pc {
			return true
		}
	}
	return false
}

// has reports whether the reference holds the locality key in state st
// with postcode pc.
func (r *Reference) has(key []byte, st State, pc uint16) bool {
	for _, id := range r.byKey[string(key)] {
		l := &r.localities[id]
		if l.Postcode == pc && l.State == st {
			return true
		}
	}
	return false
}

// find returns the id of the locality key in state st with postcode pc.
// The Jervis Bay Territory code accepts the pairing under any state.
func (r *Reference) find(key []byte, st State, pc uint16) (uint32, bool) {
	// Jervis Bay Territory accepts the pairing under any state, and so do
	// Other Territories for the Antarctic bases (filed under TAS)
	anyState := st.String() == "JBT" || (st == stateOT && pc == antarcticPostcode)
	for _, id := range r.byKey[string(key)] {
		l := &r.localities[id]
		if l.Postcode == pc && (l.State == st || anyState) {
			return id, true
		}
	}
	return 0, false
}

// localityAbbrev returns what an abbreviated word of a locality name may
// stand for ("PT": PORT or POINT); nil when it is not an abbreviation.
// SAINT, MOUNT, NORTH and SOUTH have canonical forms of their own (see
// canonicalLocalityBytes); these are tried only when the name as written
// is not found.
func localityAbbrev(w []byte) []string {
	switch string(w) {
	case "PT":
		return []string{"PORT", "POINT"}
	case "E":
		return []string{"EAST"}
	case "W":
		return []string{"WEST"}
	case "N":
		return []string{"NORTH"}
	case "S":
		return []string{"SOUTH"}
	case "HTS":
		return []string{"HEIGHTS"}
	case "CK", "CRK":
		return []string{"CREEK"}
	case "BCH":
		return []string{"BEACH"}
	case "PK":
		return []string{"PARK"}
	case "STN":
		return []string{"STATION"}
	case "GDNS":
		return []string{"GARDENS"}
	case "VLY":
		return []string{"VALLEY"}
	case "LK":
		return []string{"LAKE"}
	case "IS":
		return []string{"ISLAND"}
	case "HBR":
		return []string{"HARBOUR"}
	case "HD", "HDS":
		return []string{"HEADS", "HEAD"}
	case "JNC", "JCT":
		return []string{"JUNCTION"}
	case "UPR", "UP":
		return []string{"UPPER"}
	case "LWR", "LR":
		return []string{"LOWER"}
	case "FT":
		return []string{"FORT"}
	case "GLN":
		return []string{"GLEN"}
	}
	return nil
}

// findExpanded finds the locality key with one abbreviated word written
// out, leaving the key found in s.akey.
func (e *Engine) findExpanded(s *scratch, key []byte, st State, pc uint16) (uint32, bool) {
	for i := 0; i < len(key); {
		j := i
		for j < len(key) && key[j] != ' ' {
			j++
		}
		for _, full := range localityAbbrev(key[i:j]) {
			s.akey = append(append(append(s.akey[:0], key[:i]...), full...), key[j:]...)
			if id, ok := e.ref.find(s.akey, st, pc); ok {
				return id, true
			}
		}
		i = j + 1
	}
	return 0, false
}

// gpoLocalities are the localities of the General Post Offices, the only
// places that offer GPO boxes, by state.
var gpoLocalities = map[string]string{
	"SYDNEY": "NSW", "MELBOURNE": "VIC", "BRISBANE": "QLD", "ADELAIDE": "SA",
	"PERTH": "WA", "HOBART": "TAS", "DARWIN": "NT", "CANBERRA": "ACT",
}

func gpoLocality(l *Locality) bool { return gpoLocalities[l.Name] == l.State.String() }

// isGPOBox reports whether p's delivery line is a GPO box.
func (s *scratch) isGPOBox(p *parse) bool {
	lo, hi := s.deliveryRange(p)
	for w := min(voc.postal.maxWords, hi-lo); w >= 1; w-- {
		if idx, ok := voc.postal.lookup(s.phrase(lo, lo+w-1)); ok {
			return data.PostalDeliveryTypes[idx].Full == "GPO BOX"
		}
	}
	return false
}

// matchLocality confirms the locality, state and postcode against the
// reference, or explains the mismatch with a suggestion.
func (e *Engine) matchLocality(s *scratch, p *parse, detail bool) Result {
	ref := e.ref
	key := s.localityKey(p)
	id, ok := ref.find(key, p.state, p.postcode)
	if !ok {
		// "PT MELBOURNE", "E MELBOURNE": abbreviations never change a verdict
		if id, ok = e.findExpanded(s, key, p.state, p.postcode); ok {
			s.key = append(s.key[:0], s.akey...)
			key = s.key
		}
	}
	if !ok && p.postcode == antarcticPostcode {
		// "DAVIS STATION", "CASEY STN": the reference names the base alone
		for _, w := range []string{" STATION", " STN"} {
			if base, cut := bytes.CutSuffix(key, []byte(w)); cut {
				if id, ok = ref.find(base, p.state, p.postcode); ok {
					key = base
					break
				}
			}
		}
	}
	if ok {
		l := &ref.localities[id]
		if p.deliveryK == deliveryStreet && ref.boxOnly(l.Postcode) {
			r := Result{Status: StatusUnmatched, Nation: "AUS"}
			if detail {
				r.Detail = e.detail(s, p)
				r.Detail.Faults = append(r.Detail.Faults, FaultBoxPostcode)
				e.suggest(s, p, r.Detail)
			}
			return r
		}
		if p.deliveryK == deliveryPostal && s.isGPOBox(p) && !gpoLocality(l) {
			// GPO boxes are at the capital cities' General Post Offices only
			r := Result{Status: StatusUnmatched, Nation: "AUS"}
			if detail {
				r.Detail = e.detail(s, p)
				r.Detail.Faults = append(r.Detail.Faults, FaultPostalService)
				r.Detail.Locality = l.Name
			}
			return r
		}
		if ref.streets != nil && p.deliveryK == deliveryStreet && len(ref.locGroups[id]) > 0 {
			if r, ok := e.judgeStreet(s, p, l, ref.locGroups[id], detail); ok {
				return r
			}
		}
		r := Result{Status: StatusMatched, Nation: "AUS"}
		if detail {
			r.Detail = e.detail(s, p)
			r.Detail.Granularity = GranularityLocality
			if p.deliveryK == deliveryPostal {
				r.Detail.Granularity = GranularityPostal
			}
			r.Detail.ReferenceID = l.PID
			r.Detail.Locality = l.Name
		}
		return r
	}
	r := Result{Status: StatusUnmatched, Nation: "AUS"}
	if detail {
		r.Detail = e.detail(s, p)
		e.suggest(s, p, r.Detail)
	}
	return r
}

// boxOnly reports whether the reference knows postcode pc only as a PO box
// or large volume receiver postcode: G-NAF is loaded and has no address in it.
func (r *Reference) boxOnly(pc uint16) bool {
	return r.gnafPostcodes && r.pcAddresses[pc] == 0
}

func itoa4(pc uint16) string {
	s := strconv.Itoa(int(pc))
	for len(s) < 4 {
		s = "0" + s
	}
	return s
}
