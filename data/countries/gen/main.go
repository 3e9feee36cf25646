// Command gen writes the country name tables of package data from the two
// public sources that hold country names in many languages:
//
//	i18n-iso-countries.tsv  npm package i18n-iso-countries (langs/*.json), MIT
//	iso-codes.tsv           Debian package iso-codes: iso_3166-1.json and the
//	                        translations /usr/share/locale/*/LC_MESSAGES/iso_3166-1.mo,
//	                        LGPL-2.1-or-later
//
// Each table has one line per ISO 3166-1 country: its alpha-3 code, a tab,
// and its names in every language the source holds, tab separated, each
// name once (names the engine reads alike, after its normalisation, count
// once). A name the English lists already give (iso_3166-1.json and
// i18n-iso-countries' en.json, which lodge reads when it builds its index)
// is left out, and so is a name that two countries share in different
// languages: it says nothing. iso-codes.tsv leaves out what
// i18n-iso-countries.tsv holds.
//
// Rerun it from the repository root after updating either source:
//
//	npm install --prefix /tmp/i18n --no-save i18n-iso-countries@7.14.0
//	apt-get install -y iso-codes
//	go run ./data/countries/gen -i18n /tmp/i18n/node_modules/i18n-iso-countries
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/lodge-mail/lodge/engine"
)

func main() {
	i18nDir := flag.String("i18n", "", "folder of the npm package i18n-iso-countries (holding package.json and langs/)")
	isoJSON := flag.String("iso-json", "/usr/share/iso-codes/json/iso_3166-1.json", "iso-codes' iso_3166-1.json")
	locale := flag.String("locale", "/usr/share/locale", "folder of the iso-codes translations (*/LC_MESSAGES/iso_3166-1.mo)")
	out := flag.String("out", "data/countries", "folder the tables are written to")
	flag.Parse()
	if *i18nDir == "" {
		log.Fatal("gen: -i18n is required")
	}
	if err := run(*i18nDir, *isoJSON, *locale, *out); err != nil {
		log.Fatal(err)
	}
}

type isoEntry struct {
	Alpha2       string `json:"alpha_2"`
	Alpha3       string `json:"alpha_3"`
	Name         string `json:"name"`
	OfficialName string `json:"official_name"`
	CommonName   string `json:"common_name"`
}

// table collects names per alpha-3 code.
type table struct {
	names map[string][]string        // alpha-3 → names in order found
	keys  map[string]map[string]bool // canonical key → alpha-3 codes naming it
	seen  map[string]map[string]bool // alpha-3 → keys it has
}

func newTable() *table {
	return &table{names: map[string][]string{}, keys: map[string]map[string]bool{}, seen: map[string]map[string]bool{}}
}

func (t *table) add(a3, name string) {
	name = strings.Join(strings.Fields(name), " ")
	k := engine.CanonicalLocality(name)
	if k == "" {
		return
	}
	if t.keys[k] == nil {
		t.keys[k] = map[string]bool{}
	}
	t.keys[k][a3] = true
	if t.seen[a3] == nil {
		t.seen[a3] = map[string]bool{}
	}
	if !t.seen[a3][k] {
		t.seen[a3][k] = true
		t.names[a3] = append(t.names[a3], name)
	}
}

func run(i18nDir, isoJSON, locale, out string) error {
	b, err := os.ReadFile(isoJSON)
	if err != nil {
		return err
	}
	var doc map[string][]isoEntry
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %w", isoJSON, err)
	}
	a3of := map[string]string{}  // alpha-2 → alpha-3
	msgid := map[string]string{} // English name → alpha-3
	english := map[string]bool{} // canonical keys of English names
	for _, c := range doc["3166-1"] {
		a3of[c.Alpha2] = c.Alpha3
		for _, n := range []string{c.Name, c.OfficialName, c.CommonName} {
			if n != "" {
				msgid[n] = c.Alpha3
				english[engine.CanonicalLocality(n)] = true
			}
		}
	}
	if len(a3of) < 240 {
		return fmt.Errorf("%s: %d countries, want the whole of ISO 3166-1", isoJSON, len(a3of))
	}

	// i18n-iso-countries: every language file
	var pkg struct{ Version, License string }
	if b, err := os.ReadFile(filepath.Join(i18nDir, "package.json")); err != nil {
		return err
	} else if err := json.Unmarshal(b, &pkg); err != nil {
		return err
	}
	langs, err := filepath.Glob(filepath.Join(i18nDir, "langs", "*.json"))
	if err != nil || len(langs) == 0 {
		return fmt.Errorf("%s: no langs/*.json", i18nDir)
	}
	sort.Strings(langs)
	i18n := newTable()
	var i18nLangs []string
	for _, p := range langs {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var f struct {
			Locale    string                     `json:"locale"`
			Countries map[string]json.RawMessage `json:"countries"`
		}
		if err := json.Unmarshal(b, &f); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		i18nLangs = append(i18nLangs, f.Locale)
		for a2, raw := range f.Countries {
			a3 := a3of[a2]
			if a3 == "" {
				continue
			}
			var names []string
			var one string
			if json.Unmarshal(raw, &one) == nil {
				names = []string{one}
			} else if err := json.Unmarshal(raw, &names); err != nil {
				return fmt.Errorf("%s: %s: %w", p, a2, err)
			}
			for _, n := range names {
				if f.Locale == "en" {
					english[engine.CanonicalLocality(n)] = true
				}
				i18n.add(a3, n)
			}
		}
	}

	// iso-codes: every translation of iso_3166-1
	mos, err := filepath.Glob(filepath.Join(locale, "*", "LC_MESSAGES", "iso_3166-1.mo"))
	if err != nil || len(mos) == 0 {
		return fmt.Errorf("%s: no */LC_MESSAGES/iso_3166-1.mo (apt-get install iso-codes)", locale)
	}
	sort.Strings(mos)
	iso := newTable()
	var isoLangs []string
	for _, p := range mos {
		pairs, err := readMO(p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		isoLangs = append(isoLangs, filepath.Base(filepath.Dir(filepath.Dir(p))))
		for id, str := range pairs {
			if a3 := msgid[id]; a3 != "" && str != "" {
				iso.add(a3, str)
			}
		}
	}

	ambiguous := func(k string) bool {
		codes := map[string]bool{}
		for a3 := range i18n.keys[k] {
			codes[a3] = true
		}
		for a3 := range iso.keys[k] {
			codes[a3] = true
		}
		return len(codes) > 1
	}
	inI18n := map[string]bool{}
	write := func(name string, t *table, header []string, skip map[string]bool, note map[string]bool) (int, error) {
		var buf bytes.Buffer
		for _, h := range header {
			buf.WriteString("# " + h + "\n")
		}
		codes := make([]string, 0, len(t.names))
		for a3 := range t.names {
			codes = append(codes, a3)
		}
		sort.Strings(codes)
		n := 0
		for _, a3 := range codes {
			var keep []string
			for _, nm := range t.names[a3] {
				k := engine.CanonicalLocality(nm)
				if english[k] || ambiguous(k) || skip[a3+"|"+k] || strings.ContainsAny(nm, "\t\n") {
					continue
				}
				if note != nil {
					note[a3+"|"+k] = true
				}
				keep = append(keep, nm)
			}
			if len(keep) == 0 {
				continue
			}
			buf.WriteString(a3 + "\t" + strings.Join(keep, "\t") + "\n")
			n += len(keep)
		}
		return n, os.WriteFile(filepath.Join(out, name), buf.Bytes(), 0o644)
	}
	n1, err := write("i18n-iso-countries.tsv", i18n, []string{
		fmt.Sprintf("Country names from the npm package i18n-iso-countries %s (langs/*.json), licence %s:", pkg.Version, pkg.License),
		"Copyright (c) 2016 widdix GmbH. Permission is hereby granted, free of charge, to any person obtaining a copy",
		"of this software, to deal in it without restriction, subject to including the copyright and permission notice.",
		"Languages: " + strings.Join(i18nLangs, " "),
		"Written by data/countries/gen (go run ./data/countries/gen -i18n DIR); do not edit.",
		"Format: ALPHA-3, TAB, the country's names tab separated (English names and names two countries share left out).",
	}, nil, inI18n)
	if err != nil {
		return err
	}
	n2, err := write("iso-codes.tsv", iso, []string{
		"Country names translated by the Debian iso-codes project (iso_3166-1.json and */LC_MESSAGES/iso_3166-1.mo),",
		"licence LGPL-2.1-or-later: this file may be redistributed and modified under the terms of the GNU Lesser",
		"General Public License 2.1 or later (/usr/share/common-licenses/LGPL-2.1 on Debian).",
		"Languages: " + strings.Join(isoLangs, " "),
		"Written by data/countries/gen (go run ./data/countries/gen -i18n DIR); do not edit.",
		"Format: ALPHA-3, TAB, the country's names tab separated (English names, names two countries share and names",
		"i18n-iso-countries.tsv holds left out).",
	}, inI18n, nil)
	if err != nil {
		return err
	}
	fmt.Printf("gen: %d names from i18n-iso-countries (%d languages), %d more from iso-codes (%d languages)\n", n1, len(i18nLangs), n2, len(isoLangs))
	return nil
}

// readMO reads a GNU gettext .mo file: msgid → msgstr (the first plural
// form; a context prefix dropped).
func readMO(p string) (map[string]string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	if len(b) < 28 {
		return nil, io.ErrUnexpectedEOF
	}
	var bo binary.ByteOrder = binary.LittleEndian
	switch binary.LittleEndian.Uint32(b) {
	case 0x950412de:
	case 0xde120495:
		bo = binary.BigEndian
	default:
		return nil, fmt.Errorf("not a .mo file")
	}
	n, orig, trans := int(bo.Uint32(b[8:])), int(bo.Uint32(b[12:])), int(bo.Uint32(b[16:]))
	str := func(table, i int) (string, error) {
		at := table + 8*i
		if at+8 > len(b) {
			return "", io.ErrUnexpectedEOF
		}
		l, off := int(bo.Uint32(b[at:])), int(bo.Uint32(b[at+4:]))
		if off < 0 || l < 0 || off+l > len(b) {
			return "", io.ErrUnexpectedEOF
		}
		return string(b[off : off+l]), nil
	}
	out := make(map[string]string, n)
	for i := 0; i < n; i++ {
		id, err := str(orig, i)
		if err != nil {
			return nil, err
		}
		s, err := str(trans, i)
		if err != nil {
			return nil, err
		}
		if j := strings.IndexByte(id, 4); j >= 0 {
			id = id[j+1:]
		}
		id, _, _ = strings.Cut(id, "\x00")
		s, _, _ = strings.Cut(s, "\x00")
		out[id] = s
	}
	return out, nil
}
