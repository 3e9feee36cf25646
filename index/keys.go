package index

import "fmt"

// FormatVersion is the on-disk format this package writes and reads.
const FormatVersion = 1

const keyPrefix = "lodge/v1/"

var (
	keyMeta       = []byte(keyPrefix + "meta")
	prefixLoc     = keyPrefix + "loc/"
	prefixPC      = keyPrefix + "pc/"
	prefixNZ      = keyPrefix + "nz/"
	prefixCountry = keyPrefix + "country/"
	prefixStreets = keyPrefix + "streets/"
)

func locKey(id uint32) []byte { return []byte(fmt.Sprintf("%s%08x", prefixLoc, id)) }
func pcKey(pc uint16) []byte  { return []byte(fmt.Sprintf("%s%04d", prefixPC, pc)) }
func nzKey(pc uint16) []byte  { return []byte(fmt.Sprintf("%s%04d", prefixNZ, pc)) }
func countryKey(i int) []byte { return []byte(fmt.Sprintf("%s%04d", prefixCountry, i)) }
func streetsKey(i int) []byte { return []byte(fmt.Sprintf("%s%06d", prefixStreets, i)) }

// streetChunk is the size of the pieces the street table is stored in.
const streetChunk = 4 << 20

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p string) []byte {
	b := []byte(p)
	b[len(b)-1]++
	return b
}

// Meta describes a built index.
type Meta struct {
	Format     int          `json:"format"`
	BuiltAt    string       `json:"built_at"` // RFC 3339
	SourceHash string       `json:"source_hash"`
	Sources    []SourceInfo `json:"sources"`
	Counts     Counts       `json:"counts"`
	BuildMS    int64        `json:"build_ms"`
}

// Counts are the record counts of an index.
type Counts struct {
	Localities  int `json:"localities"`
	Postcodes   int `json:"postcodes"`
	Countries   int `json:"countries"`
	NZPostcodes int `json:"nz_postcodes"`
	// Street and premise level.
	StreetGroups  int `json:"street_groups,omitempty"`
	Streets       int `json:"streets,omitempty"`
	AddressPoints int `json:"address_points,omitempty"`
}

// SourceInfo records one source file an index was built from.
type SourceInfo struct {
	Name        string `json:"name"` // "geonames-au", "gnaf-localities", ...
	Path        string `json:"path"`
	SHA256      string `json:"sha256"`
	Rows        int    `json:"rows"`
	Licence     string `json:"licence"`
	Attribution string `json:"attribution"`
	Origin      string `json:"origin"` // where the user gets it
}

// LocalityRecord is one locality triple as stored.
type LocalityRecord struct {
	Name     string  `json:"name"`
	State    string  `json:"state"`
	Postcode string  `json:"postcode"`
	Count    uint32  `json:"count,omitempty"`
	Sources  string  `json:"sources"` // "gnaf,geonames"
	BoxOnly  bool    `json:"box_only,omitempty"`
	Lat      float32 `json:"lat,omitempty"`
	Lon      float32 `json:"lon,omitempty"`
	PID      string  `json:"pid,omitempty"`
}

// PostcodeRecord is what G-NAF says of a postcode.
type PostcodeRecord struct {
	Addresses int `json:"addresses"`
}

// CountryRecord is a country and its names.
type CountryRecord struct {
	Alpha2 string   `json:"alpha2"`
	Alpha3 string   `json:"alpha3"`
	Name   string   `json:"name"`
	Names  []string `json:"names"`
	Former bool     `json:"former,omitempty"`
	// Translated are its names in other languages (iso-codes'
	// translations, SrcISO3166Translations); an index built without them
	// has none.
	Translated []string `json:"translated,omitempty"`
}
