package data

import (
	_ "embed"
	"strings"
)

// The country names in every language that i18n-iso-countries (MIT)
// holds, beyond the English ones the index is built from: see
// countries/gen, which writes the file, and its header for source, licence
// and languages. The translations of Debian's iso-codes (LGPL-2.1-or-later)
// are not compiled in: an index reads them from the system's iso-codes
// when it is built (package index, ReadISOTranslations).
//
//go:embed countries/i18n-iso-countries.tsv
var i18nCountryNames string

// CountryNamesInLanguages calls fn for every country name of the
// multilingual table, with the country's ISO 3166-1 alpha-3 code. The
// table leaves out the English names, and names two countries share.
func CountryNamesInLanguages(fn func(alpha3, name string)) {
	for line := range strings.Lines(i18nCountryNames) {
		line = strings.TrimSuffix(line, "\n")
		if line == "" || line[0] == '#' {
			continue
		}
		a3, names, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		for n := range strings.SplitSeq(names, "\t") {
			fn(a3, n)
		}
	}
}

// CountryVariant is a set of names we add for a country, by alpha-3 code:
// what people write on an address's last line that no source spells.
type CountryVariant struct {
	Alpha3 string
	Names  []string
}

// CountryVariants are common English variants, transliterated native
// names, and islands and territories written in a country's place (the
// Caribbean and the Pacific above all). Like the multilingual tables they
// are read by the engine itself, so an index built before they were added
// knows them too.
var CountryVariants = []CountryVariant{
	{"RUS", []string{"Rossiya", "Rossija", "Russian Fed"}},
	{"CHN", []string{"Zhongguo", "People's Republic of China", "China PR", "PR China"}},
	{"IND", []string{"Bharat", "Hindustan"}},
	{"GEO", []string{"Sakartvelo"}},
	{"ARM", []string{"Hayastan"}},
	{"KOR", []string{"Hanguk", "Daehan Minguk", "Korea South", "Korea Republic", "Korea Rep", "S Korea"}},
	{"PRK", []string{"Korea North", "Korea DPR", "N Korea"}},
	{"THA", []string{"Prathet Thai", "Muang Thai", "Siam"}},
	{"PHL", []string{"Pilipinas", "Filipinas", "Philippine Islands"}},
	{"BTN", []string{"Druk Yul"}},
	{"EGY", []string{"Misr", "Masr"}},
	{"NLD", []string{"Nederland", "Netherlands Holland", "Kingdom of the Netherlands"}},
	{"CZE", []string{"Czech Rep", "Cesko", "Ceska Republika"}},
	{"DOM", []string{"Dominican Rep"}},
	{"CAF", []string{"Central African Rep"}},
	{"BIH", []string{"Bosnia", "Bosnia Herzegovina", "Bosnia-Hercegovina"}},
	{"TTO", []string{"Trinidad", "Tobago"}},
	{"ATG", []string{"Antigua", "Barbuda"}},
	{"KNA", []string{"St Kitts", "Saint Kitts", "Nevis", "St Kitts-Nevis", "St Christopher and Nevis"}},
	{"VCT", []string{"St Vincent", "Saint Vincent", "The Grenadines", "Bequia", "Mustique"}},
	{"STP", []string{"Sao Tome", "Principe"}},
	{"GNB", []string{"Guinea Bissau"}},
	{"USA", []string{"United States", "Hawaii", "Alaska", "Puerto Rico USA", "U S A"}},
	{"GBR", []string{"United Kingdom of Great Britain", "Great Britain and Northern Ireland", "UK GB", "N Ireland"}},
	{"ZAF", []string{"RSA", "Republic of South Africa"}},
	{"IRL", []string{"Ireland Republic", "Irish Republic", "Eire Ireland"}},
	{"ARE", []string{"United Arab Emirate", "Dubai", "Abu Dhabi"}},
	// the Caribbean
	{"BES", []string{"Bonaire", "Sint Eustatius", "Saba", "Caribbean Netherlands", "BES Islands", "Statia"}},
	{"SXM", []string{"Sint Maarten", "St Maarten", "Sint Maarten Dutch Part"}},
	{"MAF", []string{"Saint Martin", "St Martin", "Saint-Martin", "St Martin French Part"}},
	{"BLM", []string{"St Barts", "St Barths", "Saint Barts", "Saint-Barthelemy", "St Barthelemy"}},
	{"CUW", []string{"Curacao", "Korsou"}},
	{"ABW", []string{"Aruba"}},
	{"VGB", []string{"Tortola", "Virgin Gorda", "Jost Van Dyke", "Anegada", "BVI", "Virgin Islands British", "Virgin Islands UK"}},
	{"VIR", []string{"St Thomas USVI", "St Croix", "St John USVI", "USVI", "Virgin Islands US", "US Virgin Islands"}},
	{"CYM", []string{"Grand Cayman", "Cayman Brac", "Little Cayman", "Caymans", "Cayman"}},
	{"TCA", []string{"Turks and Caicos", "Turks & Caicos", "Providenciales", "Grand Turk", "TCI"}},
	{"BHS", []string{"Bahamas", "The Bahamas", "Commonwealth of the Bahamas", "Nassau Bahamas", "Grand Bahama", "Eleuthera"}},
	{"GLP", []string{"Guadeloupe", "Marie-Galante"}},
	{"MTQ", []string{"Martinique"}},
	{"AIA", []string{"Anguilla"}},
	{"MSR", []string{"Montserrat"}},
	{"PRI", []string{"Puerto Rico", "Porto Rico", "Boriken"}},
	{"LCA", []string{"St Lucia"}},
	{"GRD", []string{"Carriacou"}},
	{"BRB", []string{"Barbados"}},
	{"JAM", []string{"Jamaica"}},
	// the Pacific
	{"PYF", []string{"Tahiti", "Moorea", "Bora Bora", "Polynesie Francaise", "Society Islands", "Marquesas Islands"}},
	{"COK", []string{"Rarotonga", "Aitutaki", "Cook Islands"}},
	{"NIU", []string{"Niue", "Niue Island"}},
	{"TKL", []string{"Tokelau"}},
	{"PCN", []string{"Pitcairn", "Pitcairn Island", "Pitcairn Islands"}},
	{"WLF", []string{"Wallis", "Futuna", "Wallis and Futuna", "Wallis et Futuna"}},
	{"NCL", []string{"New Caledonia", "Nouvelle Caledonie", "Noumea New Caledonia"}},
	{"GUM", []string{"Guam", "Guahan"}},
	{"MNP", []string{"Saipan", "Tinian", "CNMI", "Northern Marianas", "Commonwealth of the Northern Mariana Islands"}},
	{"FSM", []string{"Pohnpei", "Chuuk", "Yap", "Kosrae", "Federated States of Micronesia", "FSM"}},
	{"MHL", []string{"Majuro", "Marshall Islands", "Republic of the Marshall Islands", "RMI"}},
	{"PLW", []string{"Palau", "Belau", "Koror"}},
	{"KIR", []string{"Kiribati", "Tarawa", "Kiritimati", "Christmas Island Kiribati"}},
	{"TUV", []string{"Tuvalu", "Funafuti"}},
	{"NRU", []string{"Nauru", "Republic of Nauru"}},
	{"VUT", []string{"Vanuatu", "Efate", "Espiritu Santo", "Port Vila Vanuatu"}},
	{"SLB", []string{"Solomon Islands", "Solomons", "Guadalcanal", "Honiara Solomon Islands"}},
	{"FJI", []string{"Fiji", "Fiji Islands", "Viti Levu", "Vanua Levu", "Viti"}},
	{"TON", []string{"Tonga", "Tongatapu", "Vavau", "Kingdom of Tonga"}},
	{"WSM", []string{"Samoa", "Western Samoa", "Upolu", "Savaii"}},
	{"ASM", []string{"American Samoa", "Tutuila", "Pago Pago American Samoa"}},
	{"PNG", []string{"Papua New Guinea", "Bougainville", "New Britain", "New Ireland"}},
	{"UMI", []string{"Wake Island", "Midway Atoll", "Johnston Atoll"}},
	{"CHL", []string{"Easter Island", "Rapa Nui", "Isla de Pascua"}},
	{"ECU", []string{"Galapagos", "Galapagos Islands"}},
	// elsewhere
	{"PRT", []string{"Azores", "Madeira", "Acores"}},
	{"ESP", []string{"Canary Islands", "Islas Canarias", "Tenerife", "Gran Canaria", "Balearic Islands", "Mallorca", "Majorca", "Ibiza"}},
	{"GGY", []string{"Alderney", "Sark"}},
	{"TZA", []string{"Zanzibar"}},
	{"DNK", []string{"Kingdom of Denmark"}},
	{"FRO", []string{"Faroes", "Faroe Islands", "Foroyar"}},
	{"GRL", []string{"Kalaallit Nunaat"}},
	{"SJM", []string{"Svalbard", "Jan Mayen", "Spitsbergen"}},
	{"SHN", []string{"Ascension Island", "Tristan da Cunha"}},
	{"IOT", []string{"Diego Garcia", "Chagos Islands"}},
	{"LAO", []string{"Lao PDR", "Laos PDR"}},
	{"HKG", []string{"Hong Kong China", "Hong Kong SAR"}},
	{"MAC", []string{"Macao SAR", "Macau SAR", "Macao SAR China", "Macau SAR China", "Macao China", "Macau China"}},
	{"JEY", []string{"Jersey Channel Islands"}},
	{"GGY", []string{"Guernsey Channel Islands"}},
	{"ALB", []string{"Shqiperia", "Shqiperi"}},
	{"THA", []string{"ประเทศไทย"}},
	{"PNG", []string{"Papua Niugini"}},
	{"REU", []string{"Reunion Island", "Ile de la Reunion"}},
	{"GUF", []string{"Guyane", "Guyane Francaise"}},
	{"MKD", []string{"Former Yugoslav Republic of Macedonia", "FYROM"}},
	{"KHM", []string{"Kampuchea"}},
	{"LKA", []string{"Ceylon"}},
	{"ESH", []string{"Sahrawi Arab Democratic Republic"}},
	{"PSE", []string{"Palestinian Territories", "Palestinian Territory", "Occupied Palestinian Territory", "Gaza", "Gaza Strip", "West Bank"}},
}
