package data

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/segmentio/encoding/json"
)

// Country is a country with every name an address may give it.
type Country struct {
	Alpha2 string   // "GB"
	Alpha3 string   // "GBR"; the code lodge reports as nation
	Name   string   // preferred English name, "United Kingdom"
	Names  []string // every name and alias, including Name, as the sources spell them
	Former bool     // withdrawn from ISO 3166-1 (ISO 3166-3)
	// Translated are the country's names in other languages
	// (ReadISOTranslations), those Names holds left out.
	Translated []string
}

// maxCountryFile bounds the size of a country JSON file we decode.
const maxCountryFile = 16 << 20

func decodeLimited(r io.Reader, name string, v any) error {
	b, err := io.ReadAll(io.LimitReader(r, maxCountryFile+1))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > maxCountryFile {
		return fmt.Errorf("%s: larger than %d bytes", name, maxCountryFile)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// CountrySet merges country names from several sources, keyed by alpha-2.
type CountrySet struct {
	byAlpha2 map[string]*Country
	byMsgid  map[string]string // an ISO 3166-1 English name → its alpha-2, for ReadISOTranslations
	entries  int               // source entries used, for Entries
}

// Entries returns how many source entries the readers have used so far
// (a caller reading several files counts each by the difference).
func (s *CountrySet) Entries() int { return s.entries }

// NewCountrySet returns a set holding our own aliases (CountryAliases) only
// for the codes that a source later adds.
func NewCountrySet() *CountrySet {
	return &CountrySet{byAlpha2: map[string]*Country{}, byMsgid: map[string]string{}}
}

func (s *CountrySet) add(a2, a3, name string, former bool, names ...string) {
	a2 = strings.ToUpper(a2)
	c := s.byAlpha2[a2]
	if c == nil {
		c = &Country{Alpha2: a2, Alpha3: strings.ToUpper(a3), Name: name, Former: former}
		s.byAlpha2[a2] = c
	}
	if c.Alpha3 == "" {
		c.Alpha3 = strings.ToUpper(a3)
	}
	if c.Former && !former {
		// A current country takes precedence over a withdrawn code that shared its alpha-2.
		c.Alpha3, c.Name, c.Former = strings.ToUpper(a3), name, false
	}
	for _, n := range append([]string{name}, names...) {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		c.Names = appendUnique(c.Names, n)
		// "Korea, Republic of" is also written "Republic of Korea".
		if i := strings.Index(n, ", "); i > 0 {
			head, tail := n[:i], n[i+2:]
			if strings.HasSuffix(tail, " of") || strings.HasSuffix(tail, " of the") {
				c.Names = appendUnique(c.Names, tail+" "+head)
				c.Names = appendUnique(c.Names, head)
			}
		}
	}
}

func appendUnique(list []string, s string) []string {
	if containsFold(list, s) {
		return list
	}
	return append(list, s)
}

// ReadISO3166 adds the countries of Debian iso-codes' iso_3166-1.json or
// iso_3166-3.json (withdrawn codes, marked Former).
func (s *CountrySet) ReadISO3166(r io.Reader, name string) error {
	var doc map[string][]struct {
		Alpha2       string `json:"alpha_2"`
		Alpha3       string `json:"alpha_3"`
		Name         string `json:"name"`
		OfficialName string `json:"official_name"`
		CommonName   string `json:"common_name"`
		Withdrawn    string `json:"withdrawal_date"`
	}
	if err := decodeLimited(r, name, &doc); err != nil {
		return err
	}
	n := 0
	for key, list := range doc {
		if key != "3166-1" && key != "3166-3" {
			continue
		}
		for _, c := range list {
			if len(c.Alpha2) != 2 || len(c.Alpha3) != 3 || c.Name == "" {
				return fmt.Errorf("%s: entry %q lacks alpha_2, alpha_3 or name", name, c.Name)
			}
			former := key == "3166-3"
			if former {
				if _, ok := s.byAlpha2[strings.ToUpper(c.Alpha2)]; ok {
					// The alpha-2 was reassigned to a current country; keep the
					// former name under its own alpha-3 instead.
					s.add("~"+c.Alpha3, c.Alpha3, c.Name, true)
					n++
					continue
				}
			}
			preferred := c.Name
			if c.CommonName != "" {
				preferred = c.CommonName
			}
			s.add(c.Alpha2, c.Alpha3, preferred, former, c.Name, c.OfficialName)
			if !former {
				for _, id := range []string{c.Name, c.OfficialName, c.CommonName} {
					if id != "" {
						s.byMsgid[id] = strings.ToUpper(c.Alpha2)
					}
				}
			}
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("%s: no countries (want a \"3166-1\" or \"3166-3\" list)", name)
	}
	s.entries += n
	return nil
}

// ReadI18nCountries adds the names of an i18n-iso-countries locale file
// ({"locale":"en","countries":{"GB":["United Kingdom","UK",...],...}}).
func (s *CountrySet) ReadI18nCountries(r io.Reader, name string) error {
	var doc struct {
		Countries map[string]json.RawMessage `json:"countries"`
	}
	if err := decodeLimited(r, name, &doc); err != nil {
		return err
	}
	if len(doc.Countries) == 0 {
		return fmt.Errorf("%s: no countries", name)
	}
	for a2, raw := range doc.Countries {
		var names []string
		var one string
		if err := json.Unmarshal(raw, &one); err == nil {
			names = []string{one}
		} else if err := json.Unmarshal(raw, &names); err != nil {
			return fmt.Errorf("%s: %s: want a string or an array of strings", name, a2)
		}
		if len(names) == 0 {
			continue
		}
		c := s.byAlpha2[strings.ToUpper(a2)]
		if c == nil {
			// i18n-iso-countries knows no alpha-3; only names for codes an
			// ISO list already gave are kept.
			continue
		}
		s.add(a2, c.Alpha3, c.Name, c.Former, names...)
		s.entries++
	}
	return nil
}

// ReadISOTranslations adds the names of one translation of iso-codes'
// ISO 3166-1 list: a GNU gettext catalogue (iso_3166-1.mo of a language,
// see ReadMO) whose msgids are the English names iso_3166-1.json gives,
// read before it with ReadISO3166. A translation of a name no ISO list
// read gave is ignored, and so is one the country's names hold already.
func (s *CountrySet) ReadISOTranslations(r io.Reader, name string) error {
	return ReadMO(r, name, func(msgid, msgstr string) {
		c := s.byAlpha2[s.byMsgid[msgid]]
		if c == nil {
			return
		}
		msgstr = strings.Join(strings.Fields(msgstr), " ")
		if msgstr == "" || containsFold(c.Names, msgstr) || containsFold(c.Translated, msgstr) {
			return
		}
		c.Translated = append(c.Translated, msgstr)
		s.entries++
	})
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// Countries returns the merged countries, each with our own aliases added:
// current countries sorted by alpha-3, then withdrawn ones.
func (s *CountrySet) Countries() []Country {
	for _, a := range CountryAliases {
		if c := s.byAlpha2[a.Alpha2]; c != nil {
			s.add(a.Alpha2, c.Alpha3, c.Name, c.Former, a.Names...)
		}
	}
	out := make([]Country, 0, len(s.byAlpha2))
	for _, c := range s.byAlpha2 {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Former != out[j].Former {
			return !out[i].Former // current countries first: they win shared names
		}
		if out[i].Alpha3 != out[j].Alpha3 {
			return out[i].Alpha3 < out[j].Alpha3
		}
		return out[i].Alpha2 < out[j].Alpha2
	})
	return out
}

// CountryAlias is a set of names we add to a country: what people write on
// the last line of an address that the ISO lists do not spell.
type CountryAlias struct {
	Alpha2 string
	Names  []string
}

// CountryAliases are our own additions to the ISO names.
var CountryAliases = []CountryAlias{
	{"GB", []string{"UK", "U.K.", "United Kingdom", "Great Britain", "Britain", "England", "Scotland", "Wales", "Northern Ireland", "GB", "G.B."}},
	{"US", []string{"USA", "U.S.A.", "US", "U.S.", "United States", "United States of America", "America"}},
	{"NZ", []string{"NZ", "N.Z.", "New Zealand", "Aotearoa", "Aotearoa New Zealand"}},
	{"AE", []string{"UAE", "U.A.E.", "Emirates"}},
	{"PG", []string{"PNG", "P.N.G."}},
	{"NL", []string{"Holland", "The Netherlands"}},
	{"CN", []string{"PRC", "P.R. China", "Mainland China"}},
	{"KR", []string{"South Korea", "Korea", "Republic of Korea", "ROK"}},
	{"KP", []string{"North Korea", "DPRK"}},
	{"HK", []string{"Hong Kong", "Hong Kong SAR", "HKSAR"}},
	{"MO", []string{"Macau", "Macao", "Macao SAR"}},
	{"TW", []string{"Taiwan", "Republic of China", "ROC"}},
	{"VN", []string{"Vietnam", "Viet Nam"}},
	{"RU", []string{"Russia"}},
	{"SY", []string{"Syria"}},
	{"LA", []string{"Laos"}},
	{"MM", []string{"Burma", "Myanmar"}},
	{"TL", []string{"East Timor", "Timor Leste", "Timor-Leste"}},
	{"CI", []string{"Ivory Coast", "Cote d'Ivoire"}},
	{"CV", []string{"Cape Verde", "Cabo Verde"}},
	{"SZ", []string{"Swaziland", "Eswatini"}},
	{"CZ", []string{"Czech Republic", "Czechia"}},
	{"VA", []string{"Vatican", "Vatican City", "Holy See"}},
	{"MK", []string{"Macedonia", "North Macedonia"}},
	{"FM", []string{"Micronesia"}},
	{"BN", []string{"Brunei"}},
	{"BO", []string{"Bolivia"}},
	{"VE", []string{"Venezuela"}},
	{"IR", []string{"Iran", "Persia"}},
	{"TZ", []string{"Tanzania"}},
	{"MD", []string{"Moldova"}},
	{"PS", []string{"Palestine"}},
	{"FK", []string{"Falkland Islands", "Falklands"}},
	{"VG", []string{"British Virgin Islands"}},
	{"VI", []string{"US Virgin Islands", "U.S. Virgin Islands"}},
	{"SA", []string{"KSA", "Saudi Arabia"}},
	{"TR", []string{"Turkey", "Turkiye"}},
	{"DE", []string{"Deutschland"}},
	{"FR", []string{"France"}},
	{"IE", []string{"Eire", "Republic of Ireland"}},
	{"CH", []string{"Switzerland", "Schweiz", "Suisse"}},
	{"ES", []string{"Espana"}},
	{"IT", []string{"Italia"}},
	{"CD", []string{"DRC", "DR Congo", "D.R. Congo", "Democratic Republic of Congo", "Congo-Kinshasa", "Zaire"}},
	{"CG", []string{"Congo-Brazzaville", "Republic of Congo"}},
	{"SG", []string{"Singapore", "Republic of Singapore"}},
	{"JP", []string{"Nippon", "Nihon"}},
	{"BR", []string{"Brasil"}},
	{"MX", []string{"Mexico", "Estados Unidos Mexicanos"}},
	{"NO", []string{"Norge"}},
	{"SE", []string{"Sverige"}},
	{"DK", []string{"Danmark"}},
	{"FI", []string{"Suomi"}},
	{"GR", []string{"Hellas"}},
	{"AT", []string{"Osterreich"}},
	{"BE", []string{"Belgique", "Belgie"}},
	{"AU", []string{"Australia", "AUS", "AU", "Aust", "Commonwealth of Australia"}},
}
