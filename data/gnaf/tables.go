package gnaf

import (
	"fmt"
	"io"
	"math"
	"strconv"
)

// Table names, as in the file names of a release.
const (
	TableState               = "STATE"
	TableLocality            = "LOCALITY"
	TableLocalityAlias       = "LOCALITY_ALIAS"
	TableStreetLocality      = "STREET_LOCALITY"
	TableStreetLocalityAlias = "STREET_LOCALITY_ALIAS"
	TableAddressDetail       = "ADDRESS_DETAIL"
	TableAddressAlias        = "ADDRESS_ALIAS"
	TableAddressGeocode      = "ADDRESS_DEFAULT_GEOCODE"
)

// Null is the value of a numeric field that is empty in the file.
const Null = math.MinInt32

// State is a row of the STATE table.
type State struct {
	State        string // the state of the file the row is in: "NSW"
	PID          string // STATE_PID: "1"
	Name         string // STATE_NAME: "NEW SOUTH WALES"
	Abbreviation string // STATE_ABBREVIATION: "NSW"
}

// Locality is a row of the LOCALITY table: a suburb or town.
type Locality struct {
	State           string // the state of the file: "VIC"
	PID             string // LOCALITY_PID
	Name            string // LOCALITY_NAME: "ST KILDA"
	PrimaryPostcode string // PRIMARY_POSTCODE; addresses may have others
	ClassCode       string // LOCALITY_CLASS_CODE (LOCALITY_CLASS_AUT): "G" gazetted
	StatePID        string // STATE_PID
}

// LocalityAlias is a row of the LOCALITY_ALIAS table: another name of a
// locality ("SAINT KILDA" for ST KILDA).
type LocalityAlias struct {
	State         string
	PID           string // LOCALITY_ALIAS_PID
	LocalityPID   string // the locality it names
	Name          string // NAME
	Postcode      string // POSTCODE
	AliasTypeCode string // ALIAS_TYPE_CODE (LOCALITY_ALIAS_TYPE_AUT): "SYN"
	StatePID      string
}

// StreetLocality is a row of the STREET_LOCALITY table: one street within
// one locality.
type StreetLocality struct {
	State       string
	PID         string // STREET_LOCALITY_PID
	ClassCode   string // STREET_CLASS_CODE: "C" confirmed
	Name        string // STREET_NAME: "CAPTAIN COOK"
	TypeCode    string // STREET_TYPE_CODE, a STREET_TYPE_AUT code: "DRIVE"
	SuffixCode  string // STREET_SUFFIX_CODE, a STREET_SUFFIX_AUT code: "N"
	LocalityPID string
}

// StreetLocalityAlias is a row of the STREET_LOCALITY_ALIAS table: another
// name of a street.
type StreetLocalityAlias struct {
	State             string
	PID               string // STREET_LOCALITY_ALIAS_PID
	StreetLocalityPID string // the street it names
	Name              string // STREET_NAME
	TypeCode          string // STREET_TYPE_CODE
	SuffixCode        string // STREET_SUFFIX_CODE
	AliasTypeCode     string // ALIAS_TYPE_CODE (STREET_LOCALITY_ALIAS_TYPE_AUT)
}

// Address is a row of the ADDRESS_DETAIL table. Numbers that G-NAF stores
// as numbers are parsed; they are Null when empty. Prefixes and suffixes
// are letters ("455A" is NumberFirst 455, NumberFirstSuffix "A"). LotNumber
// is text: G-NAF allows letters in it.
type Address struct {
	State             string
	PID               string // ADDRESS_DETAIL_PID: "GANSW717138653"
	BuildingName      string
	LotNumberPrefix   string
	LotNumber         string
	LotNumberSuffix   string
	FlatTypeCode      string // FLAT_TYPE_AUT code: "UNIT", "APT", "SE"
	FlatNumberPrefix  string
	FlatNumber        int32
	FlatNumberSuffix  string
	LevelTypeCode     string // LEVEL_TYPE_AUT code: "L", "G", "PTHS"
	LevelNumberPrefix string
	LevelNumber       int32
	LevelNumberSuffix string
	NumberFirstPrefix string
	NumberFirst       int32
	NumberFirstSuffix string
	NumberLastPrefix  string
	NumberLast        int32 // the end of a range 18-20; Null for one number
	NumberLastSuffix  string
	StreetLocalityPID string
	LocalityPID       string
	Postcode          string // may differ from the locality's PrimaryPostcode
	AliasPrincipal    byte   // 'P' principal, 'A' alias of a principal address
	PrimarySecondary  byte   // 'P' primary (a building, a lot), 'S' secondary (a unit in it), 0 neither
	Confidence        int32  // -1..2: how many contributing sources agree; Null when empty
	AddressSitePID    string
}

// AddressAlias is a row of the ADDRESS_ALIAS table: it links an alias
// address (ALIAS_PRINCIPAL A) to its principal.
type AddressAlias struct {
	State         string
	PID           string // ADDRESS_ALIAS_PID
	PrincipalPID  string // ADDRESS_DETAIL_PID of the principal
	AliasPID      string // ADDRESS_DETAIL_PID of the alias
	AliasTypeCode string // ADDRESS_ALIAS_TYPE_AUT: "RA" range, "ALT", "LD" level dropped
	Comment       string // ALIAS_COMMENT
}

// Geocode is a row of the ADDRESS_DEFAULT_GEOCODE table: the point of one
// address. Lon and Lat are NaN when empty.
type Geocode struct {
	State      string
	PID        string // ADDRESS_DEFAULT_GEOCODE_PID
	AddressPID string // ADDRESS_DETAIL_PID
	TypeCode   string // GEOCODE_TYPE_CODE (GEOCODE_TYPE_AUT): "PC" property centroid
	Lon, Lat   float64
}

// A spec says how to read one table: the columns it needs (the first is
// DATE_RETIRED for the tables that have it) and how a row fills a record.
// fill returns why the row is bad, or "".
type spec[T any] struct {
	table   string
	cols    []string
	retired bool // cols[0] is DATE_RETIRED
	fill    func(rec *T, state string, p *psv) string
}

var stateSpec = spec[State]{
	table: TableState, retired: true,
	cols: []string{"DATE_RETIRED", "STATE_PID", "STATE_NAME", "STATE_ABBREVIATION"},
	fill: func(r *State, state string, p *psv) string {
		*r = State{State: state, PID: p.field(1), Name: p.field(2), Abbreviation: p.field(3)}
		return need(r.PID, "STATE_PID")
	},
}

var localitySpec = spec[Locality]{
	table: TableLocality, retired: true,
	cols: []string{"DATE_RETIRED", "LOCALITY_PID", "LOCALITY_NAME", "PRIMARY_POSTCODE", "LOCALITY_CLASS_CODE", "STATE_PID"},
	fill: func(r *Locality, state string, p *psv) string {
		*r = Locality{State: state, PID: p.field(1), Name: p.field(2), PrimaryPostcode: p.field(3),
			ClassCode: p.field(4), StatePID: p.field(5)}
		return need(r.PID, "LOCALITY_PID") + need(r.Name, "LOCALITY_NAME")
	},
}

var localityAliasSpec = spec[LocalityAlias]{
	table: TableLocalityAlias, retired: true,
	cols: []string{"DATE_RETIRED", "LOCALITY_ALIAS_PID", "LOCALITY_PID", "NAME", "POSTCODE", "ALIAS_TYPE_CODE", "STATE_PID"},
	fill: func(r *LocalityAlias, state string, p *psv) string {
		*r = LocalityAlias{State: state, PID: p.field(1), LocalityPID: p.field(2), Name: p.field(3),
			Postcode: p.field(4), AliasTypeCode: p.field(5), StatePID: p.field(6)}
		return need(r.LocalityPID, "LOCALITY_PID") + need(r.Name, "NAME")
	},
}

var streetLocalitySpec = spec[StreetLocality]{
	table: TableStreetLocality, retired: true,
	cols: []string{"DATE_RETIRED", "STREET_LOCALITY_PID", "STREET_CLASS_CODE", "STREET_NAME", "STREET_TYPE_CODE",
		"STREET_SUFFIX_CODE", "LOCALITY_PID"},
	fill: func(r *StreetLocality, state string, p *psv) string {
		*r = StreetLocality{State: state, PID: p.field(1), ClassCode: p.field(2), Name: p.field(3),
			TypeCode: p.field(4), SuffixCode: p.field(5), LocalityPID: p.field(6)}
		return need(r.PID, "STREET_LOCALITY_PID") + need(r.Name, "STREET_NAME") + need(r.LocalityPID, "LOCALITY_PID")
	},
}

var streetLocalityAliasSpec = spec[StreetLocalityAlias]{
	table: TableStreetLocalityAlias, retired: true,
	cols: []string{"DATE_RETIRED", "STREET_LOCALITY_ALIAS_PID", "STREET_LOCALITY_PID", "STREET_NAME",
		"STREET_TYPE_CODE", "STREET_SUFFIX_CODE", "ALIAS_TYPE_CODE"},
	fill: func(r *StreetLocalityAlias, state string, p *psv) string {
		*r = StreetLocalityAlias{State: state, PID: p.field(1), StreetLocalityPID: p.field(2), Name: p.field(3),
			TypeCode: p.field(4), SuffixCode: p.field(5), AliasTypeCode: p.field(6)}
		return need(r.StreetLocalityPID, "STREET_LOCALITY_PID") + need(r.Name, "STREET_NAME")
	},
}

// Columns of ADDRESS_DETAIL, in addressSpec.cols order.
const (
	adRetired = iota
	adPID
	adBuilding
	adLotPrefix
	adLot
	adLotSuffix
	adFlatType
	adFlatPrefix
	adFlat
	adFlatSuffix
	adLevelType
	adLevelPrefix
	adLevel
	adLevelSuffix
	adFirstPrefix
	adFirst
	adFirstSuffix
	adLastPrefix
	adLast
	adLastSuffix
	adStreet
	adLocality
	adAliasPrincipal
	adPostcode
	adConfidence
	adSite
	adPrimarySecondary
)

var addressSpec = spec[Address]{
	table: TableAddressDetail, retired: true,
	cols: []string{
		adRetired: "DATE_RETIRED", adPID: "ADDRESS_DETAIL_PID", adBuilding: "BUILDING_NAME",
		adLotPrefix: "LOT_NUMBER_PREFIX", adLot: "LOT_NUMBER", adLotSuffix: "LOT_NUMBER_SUFFIX",
		adFlatType: "FLAT_TYPE_CODE", adFlatPrefix: "FLAT_NUMBER_PREFIX", adFlat: "FLAT_NUMBER", adFlatSuffix: "FLAT_NUMBER_SUFFIX",
		adLevelType: "LEVEL_TYPE_CODE", adLevelPrefix: "LEVEL_NUMBER_PREFIX", adLevel: "LEVEL_NUMBER", adLevelSuffix: "LEVEL_NUMBER_SUFFIX",
		adFirstPrefix: "NUMBER_FIRST_PREFIX", adFirst: "NUMBER_FIRST", adFirstSuffix: "NUMBER_FIRST_SUFFIX",
		adLastPrefix: "NUMBER_LAST_PREFIX", adLast: "NUMBER_LAST", adLastSuffix: "NUMBER_LAST_SUFFIX",
		adStreet: "STREET_LOCALITY_PID", adLocality: "LOCALITY_PID", adAliasPrincipal: "ALIAS_PRINCIPAL",
		adPostcode: "POSTCODE", adConfidence: "CONFIDENCE", adSite: "ADDRESS_SITE_PID",
		adPrimarySecondary: "PRIMARY_SECONDARY",
	},
	fill: fillAddress,
}

func fillAddress(a *Address, state string, p *psv) string {
	f := p.fields
	ix := p.ix[:adPrimarySecondary+1]
	a.State = state
	a.PID = f[ix[adPID]]
	a.BuildingName = f[ix[adBuilding]]
	a.LotNumberPrefix = f[ix[adLotPrefix]]
	a.LotNumber = f[ix[adLot]]
	a.LotNumberSuffix = f[ix[adLotSuffix]]
	a.FlatTypeCode = f[ix[adFlatType]]
	a.FlatNumberPrefix = f[ix[adFlatPrefix]]
	a.FlatNumberSuffix = f[ix[adFlatSuffix]]
	a.LevelTypeCode = f[ix[adLevelType]]
	a.LevelNumberPrefix = f[ix[adLevelPrefix]]
	a.LevelNumberSuffix = f[ix[adLevelSuffix]]
	a.NumberFirstPrefix = f[ix[adFirstPrefix]]
	a.NumberFirstSuffix = f[ix[adFirstSuffix]]
	a.NumberLastPrefix = f[ix[adLastPrefix]]
	a.NumberLastSuffix = f[ix[adLastSuffix]]
	a.StreetLocalityPID = f[ix[adStreet]]
	a.LocalityPID = f[ix[adLocality]]
	a.Postcode = f[ix[adPostcode]]
	a.AddressSitePID = f[ix[adSite]]
	var ok bool
	if a.FlatNumber, ok = number(f[ix[adFlat]]); !ok {
		return badNumber("FLAT_NUMBER", f[ix[adFlat]])
	}
	if a.LevelNumber, ok = number(f[ix[adLevel]]); !ok {
		return badNumber("LEVEL_NUMBER", f[ix[adLevel]])
	}
	if a.NumberFirst, ok = number(f[ix[adFirst]]); !ok {
		return badNumber("NUMBER_FIRST", f[ix[adFirst]])
	}
	if a.NumberLast, ok = number(f[ix[adLast]]); !ok {
		return badNumber("NUMBER_LAST", f[ix[adLast]])
	}
	s := f[ix[adConfidence]]
	if len(s) > 0 && s[0] == '-' {
		a.Confidence, ok = number(s[1:])
		a.Confidence = -a.Confidence
		ok = ok && len(s) > 1
	} else {
		a.Confidence, ok = number(s)
	}
	if !ok {
		return badNumber("CONFIDENCE", s)
	}
	switch s := f[ix[adAliasPrincipal]]; s {
	case "P", "A":
		a.AliasPrincipal = s[0]
	default:
		return fmt.Sprintf("ALIAS_PRINCIPAL %q, want P or A", s)
	}
	switch s := f[ix[adPrimarySecondary]]; s {
	case "":
		a.PrimarySecondary = 0
	case "P", "S":
		a.PrimarySecondary = s[0]
	default:
		return fmt.Sprintf("PRIMARY_SECONDARY %q, want P, S or empty", s)
	}
	if a.PID == "" {
		return "ADDRESS_DETAIL_PID is empty"
	}
	if a.LocalityPID == "" {
		return "LOCALITY_PID is empty"
	}
	return ""
}

var addressAliasSpec = spec[AddressAlias]{
	table: TableAddressAlias, retired: true,
	cols: []string{"DATE_RETIRED", "ADDRESS_ALIAS_PID", "PRINCIPAL_PID", "ALIAS_PID", "ALIAS_TYPE_CODE", "ALIAS_COMMENT"},
	fill: func(r *AddressAlias, state string, p *psv) string {
		*r = AddressAlias{State: state, PID: p.field(1), PrincipalPID: p.field(2), AliasPID: p.field(3),
			AliasTypeCode: p.field(4), Comment: p.field(5)}
		return need(r.PrincipalPID, "PRINCIPAL_PID") + need(r.AliasPID, "ALIAS_PID")
	},
}

var geocodeSpec = spec[Geocode]{
	table: TableAddressGeocode, retired: true,
	cols: []string{"DATE_RETIRED", "ADDRESS_DEFAULT_GEOCODE_PID", "ADDRESS_DETAIL_PID", "GEOCODE_TYPE_CODE", "LONGITUDE", "LATITUDE"},
	fill: func(r *Geocode, state string, p *psv) string {
		*r = Geocode{State: state, PID: p.field(1), AddressPID: p.field(2), TypeCode: p.field(3)}
		var ok bool
		if r.Lon, ok = coord(p.field(4), 180); !ok {
			return fmt.Sprintf("LONGITUDE %q is not a longitude", p.field(4))
		}
		if r.Lat, ok = coord(p.field(5), 90); !ok {
			return fmt.Sprintf("LATITUDE %q is not a latitude", p.field(5))
		}
		return need(r.AddressPID, "ADDRESS_DETAIL_PID")
	},
}

// AuthorityCode is a row of an authority code table.
type AuthorityCode struct {
	Code        string // what the Standard tables hold: "AVENUE", "UNIT", "L"
	Name        string // STREET_TYPE_AUT: the abbreviation "AV"; FLAT_TYPE_AUT and LEVEL_TYPE_AUT: the full word
	Description string
}

var authoritySpec = spec[AuthorityCode]{
	cols: []string{"CODE", "NAME", "DESCRIPTION"},
	fill: func(r *AuthorityCode, _ string, p *psv) string {
		*r = AuthorityCode{Code: p.field(0), Name: p.field(1), Description: p.field(2)}
		return need(r.Code, "CODE")
	},
}

func need(v, col string) string {
	if v == "" {
		return col + " is empty; "
	}
	return ""
}

func badNumber(col, v string) string {
	return fmt.Sprintf("%s %q is not a number", col, v)
}

// number parses an unsigned decimal of up to 9 digits; "" is Null.
func number(s string) (int32, bool) {
	if s == "" {
		return Null, true
	}
	if len(s) > 9 {
		return 0, false
	}
	var n int32
	for i := 0; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 {
			return 0, false
		}
		n = n*10 + int32(c)
	}
	return n, true
}

// coord parses a degree value within ±limit; "" is NaN.
func coord(s string, limit float64) (float64, bool) {
	if s == "" {
		return math.NaN(), true
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= -limit && v <= limit) {
		return 0, false
	}
	return v, true
}

// Stats counts what an iterator read.
type Stats struct {
	Files    int      // table files read
	Rows     int64    // rows passed to the callback
	Retired  int64    // rows skipped because DATE_RETIRED is set
	Rejected int64    // malformed rows skipped
	Reasons  []string // the first MaxReasons rejections, "file:line: why"
}

// MaxReasons is how many rejections Stats keeps the reasons of.
const MaxReasons = 10

// DefaultMaxRejects is how many malformed rows one iterator call skips
// before it gives up with an error, unless Options say otherwise.
const DefaultMaxRejects = 1000

// reader is what one iterator call uses: buffers reused across the files
// of the table.
type reader struct {
	p          psv
	buf        []byte
	maxRejects int // <0: no limit
	onRead     func(int)
}

// readTable reads one file of a table, calling fn for each live row.
func readTable[T any](rd *reader, r io.Reader, name, state string, sp *spec[T], rec *T, st *Stats, fn func(*T) error) error {
	if rd.buf == nil {
		rd.buf = make([]byte, bufSize)
	}
	p := &rd.p
	if err := p.open(r, name, sp.cols, rd.buf, rd.onRead); err != nil {
		return fmt.Errorf("gnaf: %w", err)
	}
	st.Files++
	for {
		reason, err := p.next()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("gnaf: %w", err)
		}
		if reason == "" {
			if sp.retired && p.field(0) != "" {
				st.Retired++
				continue
			}
			reason = sp.fill(rec, state, p)
		}
		if reason != "" {
			st.Rejected++
			if len(st.Reasons) < MaxReasons {
				st.Reasons = append(st.Reasons, fmt.Sprintf("%s:%d: %s", name, p.lr.line, trimReason(reason)))
			}
			if rd.maxRejects >= 0 && st.Rejected > int64(rd.maxRejects) {
				return fmt.Errorf("gnaf: %s: more than %d bad rows, giving up (first: %s)", name, rd.maxRejects, st.Reasons[0])
			}
			continue
		}
		st.Rows++
		if err := fn(rec); err != nil {
			return err
		}
	}
}

func trimReason(s string) string {
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == ';') {
		s = s[:len(s)-1]
	}
	return s
}
