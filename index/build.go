package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/blevesearch/bleve/v2"
	_ "github.com/blevesearch/bleve/v2/analysis/analyzer/simple" // the analyzer the locality index uses
	"github.com/cockroachdb/pebble/v2"
	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/data"
	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/durable"
	"github.com/lodge-mail/lodge/internal/pebblelog"
	"github.com/lodge-mail/lodge/progress"
)

// BuildOptions tune Build. The zero value builds only when the sources
// changed, logs to slog.Default and shows progress on stderr.
type BuildOptions struct {
	Force    bool // rebuild even when the current index has the same sources
	Log      *slog.Logger
	Progress progress.Options
}

// BuildResult says what Build did.
type BuildResult struct {
	Meta     Meta
	Dir      string // the index directory now current
	UpToDate bool   // nothing was built: the current index has these sources
}

// Build builds an index from src into dataDir and makes it current.
func Build(ctx context.Context, src Sources, dataDir string, o BuildOptions) (BuildResult, error) {
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	start := time.Now()
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return BuildResult{}, err
	}
	unlock, err := lockDir(dataDir)
	if err != nil {
		return BuildResult{}, err
	}
	defer unlock()

	perFile, sourceHash, err := src.hashFiles()
	if err != nil {
		return BuildResult{}, err
	}
	if !o.Force {
		if m, dir, err := readCurrentMeta(dataDir); err == nil && m.SourceHash == sourceHash && m.Format == FormatVersion {
			return BuildResult{Meta: m, Dir: dir, UpToDate: true}, nil
		}
	}
	removeStale(dataDir, "")

	stamp := time.Now().UTC().Format(stampLayout)
	final := filepath.Join(dataDir, "index-"+stamp)
	tmp := final + ".tmp"
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return BuildResult{}, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()

	ref, streets, infos, err := readSources(ctx, src, perFile, log, o.Progress)
	if err != nil {
		return BuildResult{}, err
	}
	meta := Meta{Format: FormatVersion, BuiltAt: time.Now().UTC().Format(time.RFC3339), SourceHash: sourceHash, Sources: infos}
	if err := writePebble(ctx, filepath.Join(tmp, "pebble"), ref, streets, &meta, start); err != nil {
		return BuildResult{}, err
	}
	if err := writeBleve(filepath.Join(tmp, "bleve"), ref); err != nil {
		return BuildResult{}, err
	}
	if err := syncTree(tmp); err != nil {
		return BuildResult{}, err
	}
	if err := os.Rename(tmp, final); err != nil {
		return BuildResult{}, err
	}
	if err := durable.SyncDir(dataDir); err != nil {
		return BuildResult{}, err
	}
	if err := swapCurrent(dataDir, filepath.Base(final)); err != nil {
		return BuildResult{}, err
	}
	ok = true
	removeStale(dataDir, filepath.Base(final))
	log.Info("index built", "dir", final, "localities", meta.Counts.Localities, "postcodes", meta.Counts.Postcodes,
		"countries", meta.Counts.Countries, "took", time.Since(start).Round(time.Millisecond))
	return BuildResult{Meta: meta, Dir: final}, nil
}

// lockDir takes an exclusive flock on dataDir/.build.lock; the kernel drops
// it when the process dies, so a killed build never blocks the next one.
func lockDir(dataDir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dataDir, ".build.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: another import is running (%w)", dataDir, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// removeStale deletes unfinished builds and index directories other than
// keep and the current one.
func removeStale(dataDir, keep string) {
	cur, _ := os.Readlink(filepath.Join(dataDir, "current"))
	ents, err := os.ReadDir(dataDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, "index-") || n == keep || n == filepath.Base(cur) {
			continue
		}
		os.RemoveAll(filepath.Join(dataDir, n))
	}
}

// swapCurrent points dataDir/current at dir atomically: a new symlink is
// made beside it and renamed over it.
func swapCurrent(dataDir, dir string) error {
	tmp := filepath.Join(dataDir, ".current.tmp")
	os.Remove(tmp)
	if err := os.Symlink(dir, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dataDir, "current")); err != nil {
		return err
	}
	return durable.SyncDir(dataDir)
}

// syncTree fsyncs every file and directory under root.
func syncTree(root string) error {
	return filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return f.Sync()
	})
}

// readSources reads and merges every source into a Reference.
func readSources(ctx context.Context, src Sources, perFile map[string]string, log *slog.Logger, po progress.Options) (*engine.Reference, *engine.Streets, []SourceInfo, error) {
	b := engine.NewReferenceBuilder()
	var infos []SourceInfo
	rows := map[string]int{}
	bar := progress.Start("import", "rows", 0, po)
	defer bar.Finish()

	open := func(kind string) (*os.File, error) {
		return os.Open(src.Files[kind])
	}
	count := func(kind string) {
		rows[kind]++
		bar.Add(1)
	}
	checkCtx := func() error { return ctx.Err() }

	// G-NAF postcode counts first: they tell box-only postcodes apart.
	gnafPC := map[uint16]int{}
	if p := src.Files[SrcGNAFPostcodes]; p != "" {
		f, err := open(SrcGNAFPostcodes)
		if err != nil {
			return nil, nil, nil, err
		}
		err = data.ReadGNAFPostcodes(f, p, func(r *data.GNAFPostcode) error {
			pc, ok := engine.ParsePostcode(r.Postcode)
			if !ok {
				return fmt.Errorf("%s: postcode %q is not 4 digits", p, r.Postcode)
			}
			gnafPC[pc] += r.Count
			b.AddPostcodeAddresses(pc, r.Count)
			count(SrcGNAFPostcodes)
			return nil
		})
		f.Close()
		if err != nil {
			return nil, nil, nil, err
		}
	}
	if p := src.Files[SrcGNAFLocalities]; p != "" {
		f, err := open(SrcGNAFLocalities)
		if err != nil {
			return nil, nil, nil, err
		}
		err = data.ReadGNAFLocalities(f, p, func(r *data.GNAFLocality) error {
			if rows[SrcGNAFLocalities]%4096 == 0 {
				if err := checkCtx(); err != nil {
					return err
				}
			}
			st := stateOf(r.State)
			if st == engine.NoState {
				return fmt.Errorf("%s: locality %q: unknown state %q", p, r.Locality, r.State)
			}
			pc, ok := engine.ParsePostcode(r.Postcode)
			if !ok {
				return fmt.Errorf("%s: locality %q: postcode %q is not 4 digits", p, r.Locality, r.Postcode)
			}
			if _, err := b.AddLocality(engine.Locality{Name: r.Locality, State: st, Postcode: pc, Count: uint32(max(r.Count, 0)),
				Sources: engine.SourceGNAF, Lat: float32(r.Lat), Lon: float32(r.Lon)}); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if len(src.Files[SrcGNAFPostcodes]) == 0 {
				b.AddPostcodeAddresses(pc, r.Count)
				gnafPC[pc] += r.Count
			}
			count(SrcGNAFLocalities)
			return nil
		})
		f.Close()
		if err != nil {
			return nil, nil, nil, err
		}
	}
	gnafLoaded := len(gnafPC) > 0
	for _, kind := range []string{SrcGeoNamesAU, SrcGeoNamesNZ} {
		p := src.Files[kind]
		if p == "" {
			continue
		}
		fn := func(r *data.GeoNamesRow) error {
			if rows[kind]%4096 == 0 {
				if err := checkCtx(); err != nil {
					return err
				}
			}
			pc, ok := engine.ParsePostcode(r.Postcode)
			if !ok {
				return fmt.Errorf("%s: place %q: postcode %q is not 4 digits", p, r.Place, r.Postcode)
			}
			count(kind)
			if kind == SrcGeoNamesNZ {
				b.AddNZPlace(pc, r.Place)
				b.AddNZPlace(pc, r.StateName)
				if r.Admin2 != "" {
					b.AddNZPlace(pc, r.Admin2)
				}
				return nil
			}
			st := stateOf(r.StateCode)
			if st == engine.NoState {
				return fmt.Errorf("%s: place %q: unknown state %q", p, r.Place, r.StateCode)
			}
			l := engine.Locality{Name: r.Place, State: st, Postcode: pc, Sources: engine.SourceGeoNames,
				Lat: float32(r.Lat), Lon: float32(r.Lon), BoxOnly: gnafLoaded && gnafPC[pc] == 0}
			if _, err := b.AddLocality(l); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			// "Home Island Cocos (Keeling) Islands": also the bare locality
			if base := stripTerritory(r.Place); base != "" {
				l.Name = base
				if _, err := b.AddLocality(l); err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
			}
			return nil
		}
		var err error
		if strings.HasSuffix(strings.ToLower(p), ".zip") {
			var f *os.File
			if f, err = os.Open(p); err != nil {
				return nil, nil, nil, err
			}
			st, _ := f.Stat()
			err = data.ReadGeoNamesZip(f, st.Size(), p, fn)
			f.Close()
		} else {
			var f *os.File
			if f, err = os.Open(p); err != nil {
				return nil, nil, nil, err
			}
			err = data.ReadGeoNames(f, p, fn)
			f.Close()
		}
		if err != nil {
			return nil, nil, nil, err
		}
	}

	cs := data.NewCountrySet()
	for _, kind := range []string{SrcISO3166, SrcISO3166Former, SrcI18nCountries} {
		p := src.Files[kind]
		if p == "" {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			return nil, nil, nil, err
		}
		before := cs.Entries()
		if kind == SrcI18nCountries {
			err = cs.ReadI18nCountries(f, p)
		} else {
			err = cs.ReadISO3166(f, p)
		}
		f.Close()
		if err != nil {
			return nil, nil, nil, err
		}
		rows[kind] = cs.Entries() - before
	}
	if len(src.Translations) > 0 {
		before := cs.Entries()
		for _, p := range src.Translations {
			f, err := os.Open(p)
			if err != nil {
				return nil, nil, nil, err
			}
			err = cs.ReadISOTranslations(f, p)
			f.Close()
			if err != nil {
				return nil, nil, nil, err
			}
		}
		rows[SrcISO3166Translations] = cs.Entries() - before
	}
	countries := cs.Countries()
	for _, c := range countries {
		b.AddCountry(c.Alpha3, c.Name, c.Names, c.Former)
		b.AddCountryTranslations(c.Alpha3, c.Translated)
	}

	if p := src.Files[SrcGNAFCodes]; p != "" {
		f, err := os.Open(p)
		if err != nil {
			return nil, nil, nil, err
		}
		missing, err := checkCodes(f, p, func() { count(SrcGNAFCodes) })
		f.Close()
		if err != nil {
			return nil, nil, nil, err
		}
		if len(missing) > 0 {
			log.Warn("G-NAF codes our vocabularies do not know", "codes", strings.Join(missing, ", "))
		}
	}

	for _, kind := range src.Kinds() {
		lic := sourceLicence[kind]
		infos = append(infos, SourceInfo{Name: kind, Path: src.Files[kind], SHA256: perFile[kind], Rows: rows[kind],
			Licence: lic[0], Attribution: lic[1], Origin: lic[2]})
	}
	if n := len(src.Translations); n > 0 {
		lic := sourceLicence[SrcISO3166Translations]
		infos = append(infos, SourceInfo{Name: SrcISO3166Translations,
			Path:   fmt.Sprintf("%s (%d languages)", filepath.Dir(filepath.Dir(filepath.Dir(src.Translations[0]))), n),
			SHA256: perFile[SrcISO3166Translations], Rows: rows[SrcISO3166Translations],
			Licence: lic[0], Attribution: lic[1], Origin: lic[2]})
	}
	bar.Finish()
	var streets *engine.Streets
	if len(src.Streets) > 0 {
		var sinfos []SourceInfo
		var err error
		if streets, sinfos, err = readStreets(ctx, src.Streets, b, perFile, log, po); err != nil {
			return nil, nil, nil, err
		}
		infos = append(infos, sinfos...)
	}
	ref := b.Build()
	if streets != nil {
		if n := ref.AttachStreets(streets); n > 0 {
			log.Warn("street groups linked to localities the reference lacks", "links", n)
		}
	}
	return ref, streets, infos, nil
}

// stateOf maps a source's state code to the engine's state.
func stateOf(code string) engine.State {
	for i, s := range data.States {
		if s.Abbr == strings.ToUpper(strings.TrimSpace(code)) {
			return engine.State(i)
		}
	}
	return engine.NoState
}

// stripTerritory returns a place name without a trailing external territory
// name ("Home Island Cocos (Keeling) Islands" → "Home Island"), or "" when
// it has none.
func stripTerritory(place string) string {
	up := strings.ToUpper(place)
	for _, t := range data.ExternalTerritories {
		for _, n := range append([]string{t.Name}, t.Aliases...) {
			if strings.HasSuffix(up, " "+n) {
				return strings.TrimSpace(place[:len(place)-len(n)])
			}
		}
	}
	return ""
}

// checkCodes reads the G-NAF authority codes and returns the street type,
// flat type and street suffix codes that our vocabularies lack.
func checkCodes(r io.Reader, name string, tick func()) ([]string, error) {
	known := func(terms []data.Term, code string) bool {
		for _, t := range terms {
			for _, s := range t.Spellings() {
				if s == code {
					return true
				}
			}
		}
		return false
	}
	var missing []string
	err := data.ReadCodes(r, name, func(c *data.Code) error {
		tick()
		code := strings.ToUpper(c.Code)
		if code == "NULL" || code == "" {
			return nil // the code lists' placeholder for "none"
		}
		switch c.Table {
		case "Street":
			if !known(data.StreetTypes, code) {
				missing = append(missing, "street type "+code)
			}
		case "Flat":
			if !known(data.FlatTypes, code) {
				missing = append(missing, "flat type "+code)
			}
		case "StreetSuffix":
			if !known(data.StreetSuffixes, code) {
				missing = append(missing, "street suffix "+code)
			}
		}
		return nil
	})
	return missing, err
}

// writePebble writes the reference's records, then the meta record, and
// syncs.
func writePebble(ctx context.Context, dir string, ref *engine.Reference, streets *engine.Streets, meta *Meta, start time.Time) error {
	db, err := pebble.Open(dir, &pebble.Options{Logger: pebblelog.Quiet{}})
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	closed := false
	defer func() {
		if !closed {
			db.Close()
		}
	}()
	batch := db.NewBatch()
	put := func(k []byte, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := batch.Set(k, b, nil); err != nil {
			return err
		}
		if batch.Len() > 4<<20 {
			if err := batch.Commit(pebble.NoSync); err != nil {
				return err
			}
			batch = db.NewBatch()
		}
		return nil
	}
	locs := ref.Localities()
	for i := range locs {
		if i%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		l := &locs[i]
		rec := LocalityRecord{Name: l.Name, State: l.State.String(), Postcode: fmt.Sprintf("%04d", l.Postcode), Count: l.Count,
			Sources: l.Sources.String(), BoxOnly: l.BoxOnly, Lat: l.Lat, Lon: l.Lon, PID: l.PID}
		if err := put(locKey(uint32(i)), rec); err != nil {
			return err
		}
	}
	pcs := 0
	for pc := uint16(0); pc < 10000; pc++ {
		if n, ok := ref.PostcodeAddresses(pc); ok {
			if err := put(pcKey(pc), PostcodeRecord{Addresses: n}); err != nil {
				return err
			}
		}
		if len(ref.LocalitiesIn(pc)) > 0 {
			pcs++
		}
	}
	nz := ref.NZPlaces()
	for pc, names := range nz {
		if err := put(nzKey(pc), names); err != nil {
			return err
		}
	}
	cs := ref.Countries()
	for i, c := range cs {
		if err := put(countryKey(i), CountryRecord{Alpha3: c.Alpha3, Name: c.Name, Names: c.Names, Former: c.Former, Translated: c.Translated}); err != nil {
			return err
		}
	}
	meta.Counts = Counts{Localities: len(locs), Postcodes: pcs, Countries: len(cs), NZPostcodes: len(nz)}
	if streets != nil {
		blob, err := streets.MarshalBinary()
		if err != nil {
			return err
		}
		for i := 0; len(blob) > 0; i++ {
			n := min(len(blob), streetChunk)
			if err := batch.Set(streetsKey(i), blob[:n], nil); err != nil {
				return err
			}
			blob = blob[n:]
			if batch.Len() > 4<<20 {
				if err := batch.Commit(pebble.NoSync); err != nil {
					return err
				}
				batch = db.NewBatch()
			}
		}
		meta.Counts.StreetGroups, meta.Counts.Streets, meta.Counts.AddressPoints = streets.Facts()
	}
	meta.BuildMS = time.Since(start).Milliseconds()
	if err := put(keyMeta, meta); err != nil {
		return err
	}
	if err := batch.Commit(pebble.Sync); err != nil {
		return err
	}
	if err := db.Flush(); err != nil {
		return err
	}
	closed = true
	return db.Close()
}

// writeBleve indexes every locality's canonical name for fuzzy lookups.
func writeBleve(dir string, ref *engine.Reference) error {
	m := bleve.NewIndexMapping()
	m.DefaultAnalyzer = "simple"
	idx, err := bleve.New(dir, m)
	if err != nil {
		return fmt.Errorf("bleve %s: %w", dir, err)
	}
	batch := idx.NewBatch()
	for i, l := range ref.Localities() {
		if err := batch.Index(fmt.Sprintf("%08x", i), bleveDoc{Name: l.Key}); err != nil {
			idx.Close()
			return err
		}
		if batch.Size() >= 2000 {
			if err := idx.Batch(batch); err != nil {
				idx.Close()
				return err
			}
			batch = idx.NewBatch()
		}
	}
	if err := idx.Batch(batch); err != nil {
		idx.Close()
		return err
	}
	return idx.Close()
}

type bleveDoc struct {
	Name string `json:"name"`
}

// readCurrentMeta reads the meta record of the current index.
func readCurrentMeta(dataDir string) (Meta, string, error) {
	dir, err := currentDir(dataDir)
	if err != nil {
		return Meta{}, "", err
	}
	db, err := pebble.Open(filepath.Join(dir, "pebble"), &pebble.Options{ReadOnly: true, Logger: pebblelog.Quiet{}})
	if err != nil {
		return Meta{}, "", err
	}
	defer db.Close()
	m, err := getMeta(db)
	return m, dir, err
}

func getMeta(db *pebble.DB) (Meta, error) {
	v, closer, err := db.Get(keyMeta)
	if err != nil {
		if errors.Is(err, pebble.ErrNotFound) {
			return Meta{}, fmt.Errorf("index incomplete: no meta record")
		}
		return Meta{}, err
	}
	defer closer.Close()
	var m Meta
	if err := json.Unmarshal(v, &m); err != nil {
		return Meta{}, fmt.Errorf("index meta: %w", err)
	}
	if m.Format != FormatVersion {
		return m, fmt.Errorf("index format %d, this lodge reads %d: run lodge import", m.Format, FormatVersion)
	}
	return m, nil
}

// ErrNoIndex means a data directory holds no built index.
var ErrNoIndex = errors.New("no index built")

func currentDir(dataDir string) (string, error) {
	link := filepath.Join(dataDir, "current")
	target, err := os.Readlink(link)
	if err != nil {
		if os.IsNotExist(err) {
			return "", fmt.Errorf("%s: %w", dataDir, ErrNoIndex)
		}
		return "", err
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(dataDir, target)
	}
	return target, nil
}
