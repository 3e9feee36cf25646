// Package data reads the reference sources lodge builds its index from and
// holds the small vocabularies we maintain ourselves.
//
// Readers stream: each calls a function once per record and keeps no more
// than one line in memory, so a reader's memory does not grow with its input.
// Readers never panic on malformed input; they return an error naming the
// source and line. Limits: a line may be at most MaxLine bytes.
//
// Sources and their formats:
//   - GeoNames postal codes (AU.txt, NZ.txt, or the AU.zip/NZ.zip they ship
//     in): tab separated, no header, twelve columns.
//   - The G-NAF locality list (localities-au.csv) and postcode list
//     (postcodes-au.csv): CSV with a header.
//   - The G-NAF authority code lists (gnaf_codes.csv): table,code,label,uri.
//   - Country names: ISO 3166 from Debian's iso-codes JSON and English names
//     with aliases from i18n-iso-countries, merged with our own aliases;
//     iso-codes' translations of them (iso_3166-1.mo of each language).
//
// The vocabularies (street types, flat and level types, street suffixes,
// postal delivery types, states and their postcode ranges, external
// territories, country aliases and variants) are our own tables in Go
// source. Country names in every language i18n-iso-countries (MIT) holds
// are compiled in from countries/i18n-iso-countries.tsv, which
// countries/gen writes from that package. Debian iso-codes' translations
// (LGPL-2.1-or-later, GNU gettext catalogues: ReadMO) are read when an
// index is built, from the system's iso-codes (package index), never
// compiled in.
package data

// MaxLine is the longest line a reader accepts, in bytes.
const MaxLine = 64 << 10
