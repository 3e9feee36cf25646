package engine_test

import (
	"testing"

	"github.com/lodge-mail/lodge/engine"
)

// TestCountryTranslations: an index's translations of country names
// (AddCountryTranslations) name the country on a last line, except a name
// two countries share and the name of an Australian locality, which stays
// the locality's; without
// them, the compiled-in names still do.
func TestCountryTranslations(t *testing.T) {
	build := func(translated bool) *engine.Engine {
		b := engine.NewReferenceBuilder()
		for _, l := range []struct{ name, state, pc string }{{"MELBOURNE", "VIC", "3000"}, {"GERMANIO", "QLD", "4000"}} {
			st, _ := engine.StateByAbbr(l.state)
			pc, _ := engine.ParsePostcode(l.pc)
			if _, err := b.AddLocality(engine.Locality{Name: l.name, State: st, Postcode: pc, Sources: engine.SourceGNAF}); err != nil {
				t.Fatal(err)
			}
		}
		b.AddCountry("DEU", "Germany", nil, false)
		b.AddCountry("AUT", "Austria", nil, false)
		b.AddCountry("NLD", "Netherlands", nil, false)
		if translated {
			b.AddCountryTranslations("DEU", []string{"Germanio", "Federacia Respubliko Germanio", "Gemeinsam"})
			b.AddCountryTranslations("AUT", []string{"Aŭstrio", "Gemeinsam"})
			b.AddCountryTranslations("NLD", []string{"Nederlando"})
		}
		e, err := engine.New(b.Build(), engine.Config{CacheEntries: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Close)
		return e
	}
	on, off := build(true), build(false)
	f := func(e *engine.Engine, lines []string, want string) {
		t.Helper()
		r := e.Check(lines, false)
		if got := r.Status.String() + " " + r.Nation; got != want {
			t.Errorf("%q: %s, want %s", lines, got, want)
		}
	}
	f(on, []string{"Jo", "1 Main St", "Berlin", "Germanio"}, "invalid AUS") // an Australian locality's name
	f(on, []string{"Jo", "1 Main St", "Berlin", "Federacia Respubliko Germanio"}, "international DEU")
	f(on, []string{"Jo", "1 Main St", "Wien", "Aŭstrio"}, "international AUT")
	f(on, []string{"Jo", "1 Main St", "Amsterdam", "Nederlando"}, "international NLD")
	f(on, []string{"Jo", "1 Main St", "Wien", "Gemeinsam"}, "invalid AUS") // two countries: neither
	f(on, []string{"Jo", "1 Main St", "Germanio QLD 4000"}, "matched AUS")
	f(off, []string{"Jo", "1 Main St", "Amsterdam", "Nederlando"}, "invalid AUS")
	f(off, []string{"Jo", "1 Main St", "Berlin", "Deutschland"}, "international DEU") // compiled in
}
