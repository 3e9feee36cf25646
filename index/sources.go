package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/lodge-mail/lodge/data"
	"github.com/lodge-mail/lodge/internal/durable"
)

// Source kinds an index is built from.
const (
	SrcGeoNamesAU     = "geonames-au"
	SrcGeoNamesNZ     = "geonames-nz"
	SrcGNAFLocalities = "gnaf-localities"
	SrcGNAFPostcodes  = "gnaf-postcodes"
	SrcGNAFCodes      = "gnaf-codes"
	SrcISO3166        = "iso-3166-1"
	SrcISO3166Former  = "iso-3166-3"
	SrcI18nCountries  = "i18n-countries"
	// SrcISO3166Translations are iso-codes' translations of the ISO
	// 3166-1 names, one GNU gettext catalogue a language
	// (Sources.Translations).
	SrcISO3166Translations = "iso-3166-1-translations"
)

// Licence texts shown wherever data from a source is used.
const (
	AttributionGeoNames = "Postal code data from GeoNames (https://www.geonames.org), licensed under CC BY 4.0."
	AttributionGNAF     = "Incorporates or developed using G-NAF © Geoscape Australia licensed by the Commonwealth of Australia under the Open Geo-coded National Address File (G-NAF) End User Licence Agreement."
	AttributionISO      = "Country names from Debian iso-codes (LGPL-2.1-or-later)."
	AttributionI18n     = "Country aliases from i18n-iso-countries (MIT)."
)

var sourceLicence = map[string][3]string{ // licence, attribution, where to get it
	SrcGeoNamesAU:     {"CC BY 4.0", AttributionGeoNames, "https://download.geonames.org/export/zip/AU.zip"},
	SrcGeoNamesNZ:     {"CC BY 4.0", AttributionGeoNames, "https://download.geonames.org/export/zip/NZ.zip"},
	SrcGNAFLocalities: {"G-NAF EULA (CC BY 4.0 with a mail clause)", AttributionGNAF, "derived from G-NAF, https://data.gov.au (Geoscape Australia)"},
	SrcGNAFPostcodes:  {"G-NAF EULA (CC BY 4.0 with a mail clause)", AttributionGNAF, "derived from G-NAF, https://data.gov.au (Geoscape Australia)"},
	SrcGNAFCodes:      {"CC BY 4.0", "G-NAF authority code lists © Geoscape Australia, CC BY 4.0.", "Authority Code files of every G-NAF release"},
	SrcISO3166:        {"LGPL-2.1-or-later", AttributionISO, "Debian package iso-codes"},
	SrcISO3166Former:  {"LGPL-2.1-or-later", AttributionISO, "Debian package iso-codes"},
	SrcI18nCountries:  {"MIT", AttributionI18n, "npm package i18n-iso-countries"},
	SrcISO3166Translations: {"LGPL-2.1-or-later", AttributionISO,
		"Debian package iso-codes (/usr/share/locale/*/LC_MESSAGES/iso_3166-1.mo)"},
}

// Sources are the files an index is built from, by kind. Paths are absolute.
type Sources struct {
	Dir   string            // the folder they were found in
	Files map[string]string // kind → path
	// Translations are iso-codes' translations of the ISO 3166-1 names
	// (LOCALE/*/LC_MESSAGES/iso_3166-1.mo, sorted), from a reference
	// folder's iso-codes-locale/ or else the system's (SystemLocale):
	// read at build time, so that names in other languages are data of
	// the index, not of the binary. None found, none used.
	Translations []string
	// Streets are the street-level sources (a G-NAF release, address
	// lists), read after the files above.
	Streets []StreetSource
}

// candidates lists, per kind, where a reference folder may hold the file:
// the layout of lodge's shared data folder first, then flat layouts.
var candidates = map[string][]string{
	SrcGeoNamesAU:     {"geonames/AU.txt", "geonames/AU.zip", "AU.txt", "AU.zip"},
	SrcGeoNamesNZ:     {"geonames/NZ.txt", "geonames/NZ.zip", "NZ.txt", "NZ.zip"},
	SrcGNAFLocalities: {"gnaf-localities/localities-au.csv", "localities-au.csv"},
	SrcGNAFPostcodes:  {"gnaf-localities/postcodes-au.csv", "postcodes-au.csv"},
	SrcGNAFCodes:      {"gnaf-codes/gnaf_codes.csv", "gnaf_codes.csv"},
	SrcISO3166:        {"countries/iso-codes_iso_3166-1.json", "iso_3166-1.json"},
	SrcISO3166Former:  {"countries/iso-codes_iso_3166-3.json", "iso_3166-3.json"},
	SrcI18nCountries:  {"countries/i18n-iso-countries_7.14.0_en.json", "i18n-iso-countries_en.json"},
}

// SystemISOCodes is where Debian's iso-codes package keeps its JSON; used
// for country names when a reference folder has none.
var SystemISOCodes = "/usr/share/iso-codes/json"

// SystemLocale is where Debian's iso-codes package keeps its translations
// (*/LC_MESSAGES/iso_3166-1.mo); used when a reference folder has no
// iso-codes-locale/.
var SystemLocale = "/usr/share/locale"

// translationsIn lists the iso_3166-1 catalogues of a locale folder,
// sorted; only regular files.
func translationsIn(locale string) []string {
	ps, _ := filepath.Glob(filepath.Join(locale, "*", "LC_MESSAGES", "iso_3166-1.mo"))
	out := ps[:0]
	for _, p := range ps {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// ErrNoSources means a folder holds no usable reference source.
var ErrNoSources = errors.New("no reference sources (GeoNames AU.txt/AU.zip or G-NAF localities-au.csv)")

// FindSources looks for reference files in dir. It needs at least the
// GeoNames AU file or the G-NAF locality list; country names come from dir
// or, failing that, from the system's iso-codes.
func FindSources(dir string) (Sources, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Sources{}, err
	}
	s := Sources{Dir: abs, Files: map[string]string{}}
	for kind, rels := range candidates {
		for _, rel := range rels {
			p := filepath.Join(abs, rel)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				s.Files[kind] = p
				break
			}
		}
		if _, ok := s.Files[kind]; !ok && (kind == SrcISO3166 || kind == SrcISO3166Former) {
			p := filepath.Join(SystemISOCodes, strings.TrimPrefix(filepath.Base(rels[1]), ""))
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				s.Files[kind] = p
			}
		}
	}
	if s.Translations = translationsIn(filepath.Join(abs, "iso-codes-locale")); len(s.Translations) == 0 {
		s.Translations = translationsIn(SystemLocale)
	}
	if s.Files[SrcGeoNamesAU] == "" && s.Files[SrcGNAFLocalities] == "" {
		return s, fmt.Errorf("%s: %w", abs, ErrNoSources)
	}
	if s.Files[SrcISO3166] == "" {
		return s, fmt.Errorf("%s: no country names: want countries/iso-codes_iso_3166-1.json there or %s/iso_3166-1.json (Debian package iso-codes)", abs, SystemISOCodes)
	}
	return s, nil
}

// Kinds returns the kinds present, sorted.
func (s Sources) Kinds() []string {
	var k []string
	for kind := range s.Files {
		k = append(k, kind)
	}
	sort.Strings(k)
	return k
}

// hashFiles returns the SHA-256 of each file and one hash over all of them
// (with their kinds), which tells whether an index is up to date.
func (s Sources) hashFiles() (map[string]string, string, error) {
	per := map[string]string{}
	all := sha256.New()
	fmt.Fprintf(all, "format %d\n", FormatVersion)
	for _, kind := range s.Kinds() {
		f, err := os.Open(s.Files[kind])
		if err != nil {
			return nil, "", err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", s.Files[kind], err)
		}
		sum := hex.EncodeToString(h.Sum(nil))
		per[kind] = sum
		fmt.Fprintf(all, "%s %s\n", kind, sum)
	}
	if len(s.Translations) > 0 {
		h := sha256.New()
		for _, p := range s.Translations {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, "", err
			}
			fmt.Fprintf(h, "%s %d\n", filepath.Base(filepath.Dir(filepath.Dir(p))), len(b))
			h.Write(b)
		}
		sum := hex.EncodeToString(h.Sum(nil))
		per[SrcISO3166Translations] = sum
		fmt.Fprintf(all, "%s %s\n", SrcISO3166Translations, sum)
	}
	for _, ss := range s.Streets {
		id, err := ss.identity()
		if err != nil {
			return nil, "", err
		}
		per[ss.name()] = id
		fmt.Fprintf(all, "%s %s\n", ss.name(), id)
	}
	return per, hex.EncodeToString(all.Sum(nil)), nil
}

// DefaultGeoNamesURL is where GeoNames publishes its postal code files.
const DefaultGeoNamesURL = "https://download.geonames.org/export/zip/"

// ResolveOptions say where to look for reference data.
type ResolveOptions struct {
	// Reference is a folder the user named; when set, nothing else is tried.
	Reference string
	// Candidates are tried in order when Reference is empty; the default is
	// "./reference" then "../shared/data".
	Candidates []string
	// DownloadDir receives AU.zip and NZ.zip when no folder has sources.
	DownloadDir string
	// GeoNamesURL is the base URL of the GeoNames export; default
	// DefaultGeoNamesURL.
	GeoNamesURL string
	// Client downloads; default a client with a 2 minute timeout.
	Client *http.Client
	Log    *slog.Logger
}

// ResolveSources finds the reference data to build from: the named folder,
// else the first candidate folder holding sources, else GeoNames AU.zip and
// NZ.zip downloaded into DownloadDir (verified before use). It says where
// the data came from.
func ResolveSources(ctx context.Context, o ResolveOptions) (Sources, string, error) {
	if o.Reference != "" {
		s, err := FindSources(o.Reference)
		return s, "reference folder " + s.Dir + " (--reference)", err
	}
	cands := o.Candidates
	if cands == nil {
		cands = []string{"reference", filepath.Join("..", "shared", "data")}
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err != nil || !st.IsDir() {
			continue
		}
		if s, err := FindSources(c); err == nil {
			return s, "reference folder " + s.Dir, nil
		} else if !errors.Is(err, ErrNoSources) {
			return s, "", err
		}
	}
	if o.DownloadDir == "" {
		return Sources{}, "", fmt.Errorf("%w in %s, and no download folder", ErrNoSources, strings.Join(cands, ", "))
	}
	base := o.GeoNamesURL
	if base == "" {
		base = DefaultGeoNamesURL
	}
	if err := os.MkdirAll(o.DownloadDir, 0o755); err != nil {
		return Sources{}, "", err
	}
	for _, cc := range []string{"AU", "NZ"} {
		dst := filepath.Join(o.DownloadDir, cc+".zip")
		if _, err := os.Stat(dst); err == nil {
			continue // verified when it was downloaded
		}
		if err := download(ctx, o, strings.TrimSuffix(base, "/")+"/"+cc+".zip", dst, cc); err != nil {
			return Sources{}, "", err
		}
	}
	s, err := FindSources(o.DownloadDir)
	return s, "GeoNames downloads from " + base + " kept in " + s.Dir, err
}

// maxDownload bounds a downloaded archive (AU.zip is about 250 kB).
const maxDownload = 64 << 20

// download fetches url into dst through a temporary file, verifies it is a
// GeoNames archive of country cc with a plausible number of rows, syncs it
// and renames it into place.
func download(ctx context.Context, o ResolveOptions, url, dst, cc string) error {
	client := o.Client
	if client == nil {
		client = &http.Client{Timeout: 2 * time.Minute}
	}
	if o.Log != nil {
		o.Log.Info("downloading reference data", "url", url)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("download %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("download %s: %s", url, resp.Status)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*.part")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	n, err := io.Copy(tmp, io.LimitReader(resp.Body, maxDownload+1))
	if err != nil {
		return fmt.Errorf("download %s: %w", url, err)
	}
	if n > maxDownload {
		return fmt.Errorf("download %s: larger than %d bytes", url, maxDownload)
	}
	rows := 0
	err = data.ReadGeoNamesZip(tmp, n, url, func(r *data.GeoNamesRow) error {
		if r.Country != cc {
			return fmt.Errorf("download %s: row for country %q, want %s", url, r.Country, cc)
		}
		rows++
		return nil
	})
	if err != nil {
		return fmt.Errorf("verify %s: %w", url, err)
	}
	if min := map[string]int{"AU": 10000, "NZ": 1000}[cc]; rows < min {
		return fmt.Errorf("verify %s: %d rows, a complete file has over %d", url, rows, min)
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return err
	}
	if o.Log != nil {
		o.Log.Info("downloaded and verified", "file", dst, "rows", rows)
	}
	return durable.SyncDir(filepath.Dir(dst))
}
