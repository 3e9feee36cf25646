// Command gen writes the country name table of package data from the
// public source that holds country names in many languages under a
// permissive licence:
//
//	i18n-iso-countries.tsv  npm package i18n-iso-countries (langs/*.json), MIT
//
// The table has one line per ISO 3166-1 country: its alpha-3 code, a tab,
// and its names in every language the source holds, tab separated, each
// name once (names the engine reads alike, after its normalisation, count
// once). A name the English lists already give (iso_3166-1.json and
// i18n-iso-countries' en.json, which lodge reads when it builds its index)
// is left out, and so is a name that two countries share in different
// languages: it says nothing.
//
// Debian iso-codes' translations (LGPL-2.1-or-later) are not compiled in:
// lodge reads them from the system when it builds an index (package
// index, Sources.Translations).
//
// Rerun it from the repository root after updating the source:
//
//	npm install --prefix /tmp/i18n --no-save i18n-iso-countries@7.14.0
//	apt-get install -y iso-codes
//	go run ./data/countries/gen -i18n /tmp/i18n/node_modules/i18n-iso-countries
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
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
	out := flag.String("out", "data/countries", "folder the tables are written to")
	flag.Parse()
	if *i18nDir == "" {
		log.Fatal("gen: -i18n is required")
	}
	if err := run(*i18nDir, *isoJSON, *out); err != nil {
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

func run(i18nDir, isoJSON, out string) error {
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

	ambiguous := func(k string) bool {
		codes := map[string]bool{}
		for a3 := range i18n.keys[k] {
			codes[a3] = true
		}
		return len(codes) > 1
	}
	write := func(name string, t *table, header []string) (int, error) {
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
				if english[k] || ambiguous(k) || strings.ContainsAny(nm, "\t\n") {
					continue
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
	})
	if err != nil {
		return err
	}
	fmt.Printf("gen: %d names from i18n-iso-countries (%d languages)\n", n1, len(i18nLangs))
	return nil
}
