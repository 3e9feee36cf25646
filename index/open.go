package index

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/cockroachdb/pebble/v2"
	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/pebblelog"
)

// Index is an opened reference index: its meta record, the in-memory
// Reference the engine judges against, and the bleve index behind fuzzy
// suggestions.
type Index struct {
	Meta     Meta
	Dir      string
	Ref      *engine.Reference
	LoadTime time.Duration
	bleve    bleve.Index
	once     sync.Once
}

// Open loads the current index of dataDir into memory (OpenDir).
func Open(dataDir string) (*Index, error) {
	dir, err := currentDir(dataDir)
	if err != nil {
		return nil, err
	}
	return OpenDir(dir)
}

// OpenDir loads the index directory dir (an index-<stamp> directory) into
// memory. The pebble store is read once and closed; the bleve index stays
// open for suggestions.
func OpenDir(dir string) (*Index, error) {
	start := time.Now()
	db, err := pebble.Open(filepath.Join(dir, "pebble"), &pebble.Options{ReadOnly: true, Logger: pebblelog.Quiet{}})
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", dir, err)
	}
	defer db.Close()
	meta, err := getMeta(db)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	b := engine.NewReferenceBuilder()
	if err := scan(db, prefixPC, func(k, v []byte) error {
		pc, err := strconv.Atoi(string(k[len(prefixPC):]))
		if err != nil {
			return err
		}
		var rec PostcodeRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return err
		}
		b.AddPostcodeAddresses(uint16(pc), rec.Addresses)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("%s: postcodes: %w", dir, err)
	}
	if err := scan(db, prefixLoc, func(k, v []byte) error {
		var rec LocalityRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return err
		}
		st := stateOf(rec.State)
		pc, ok := engine.ParsePostcode(rec.Postcode)
		if st == engine.NoState || !ok {
			return fmt.Errorf("locality %q: bad state %q or postcode %q", rec.Name, rec.State, rec.Postcode)
		}
		var src engine.Source
		for _, s := range strings.Split(rec.Sources, ",") {
			switch s {
			case "gnaf":
				src |= engine.SourceGNAF
			case "geonames":
				src |= engine.SourceGeoNames
			}
		}
		_, err := b.AddLocality(engine.Locality{Name: rec.Name, State: st, Postcode: pc, Count: rec.Count, Sources: src,
			BoxOnly: rec.BoxOnly, Lat: rec.Lat, Lon: rec.Lon, PID: rec.PID})
		return err
	}); err != nil {
		return nil, fmt.Errorf("%s: localities: %w", dir, err)
	}
	if err := scan(db, prefixNZ, func(k, v []byte) error {
		pc, err := strconv.Atoi(string(k[len(prefixNZ):]))
		if err != nil {
			return err
		}
		var names []string
		if err := json.Unmarshal(v, &names); err != nil {
			return err
		}
		for _, n := range names {
			b.AddNZPlace(uint16(pc), n)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("%s: new zealand: %w", dir, err)
	}
	if err := scan(db, prefixCountry, func(k, v []byte) error {
		var rec CountryRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return err
		}
		if len(rec.Names) == 0 {
			return fmt.Errorf("country %s without names", rec.Alpha3)
		}
		b.AddCountry(rec.Alpha3, rec.Name, rec.Names[1:], rec.Former)
		b.AddCountryTranslations(rec.Alpha3, rec.Translated)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("%s: countries: %w", dir, err)
	}
	ref := b.Build()
	if ref.Facts().Localities != meta.Counts.Localities {
		return nil, fmt.Errorf("%s: %d localities stored, meta says %d", dir, ref.Facts().Localities, meta.Counts.Localities)
	}
	// Sized from the last chunk's number up front: appending 4 MiB at a
	// time to a growing slice copied the table over and over (seconds at
	// full scale).
	blob := make([]byte, 0, streetsCap(db))
	if err := scan(db, prefixStreets, func(k, v []byte) error {
		blob = append(blob, v...)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("%s: streets: %w", dir, err)
	}
	if len(blob) > 0 {
		streets, err := engine.UnmarshalStreets(blob)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		blob = nil
		ref.AttachStreets(streets)
		if f := ref.Facts(); f.Points != meta.Counts.AddressPoints || f.Streets != meta.Counts.Streets {
			return nil, fmt.Errorf("%s: %d streets and %d address points stored, meta says %d and %d", dir, f.Streets, f.Points, meta.Counts.Streets, meta.Counts.AddressPoints)
		}
	}
	ix := &Index{Meta: meta, Dir: dir, Ref: ref}
	bi, err := bleve.OpenUsing(filepath.Join(dir, "bleve"), map[string]interface{}{"read_only": true})
	if err != nil {
		slog.Warn("fuzzy index unavailable, suggestions use a scan", "dir", dir, "err", err)
	} else {
		ix.bleve = bi
		ref.SetCorrector(&bleveCorrector{idx: bi})
	}
	ix.LoadTime = time.Since(start)
	return ix, nil
}

// Close releases the bleve index. It is idempotent.
func (ix *Index) Close() error {
	var err error
	ix.once.Do(func() {
		if ix.bleve != nil {
			err = ix.bleve.Close()
		}
	})
	return err
}

// Attributions returns the attribution texts the licences of the index's
// sources require, each once.
func (m Meta) Attributions() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range m.Sources {
		if s.Attribution != "" && !seen[s.Attribution] {
			seen[s.Attribution] = true
			out = append(out, s.Attribution)
		}
	}
	return out
}

// streetsCap returns an upper bound of the street table's size: as many
// chunks as the last chunk's number says, each streetChunk bytes at most
// (0 when there is none or its key is not a chunk's).
func streetsCap(db *pebble.DB) int {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte(prefixStreets), UpperBound: prefixEnd(prefixStreets)})
	if err != nil {
		return 0
	}
	defer it.Close()
	if !it.Last() {
		return 0
	}
	n, err := strconv.Atoi(string(it.Key()[len(prefixStreets):]))
	if err != nil || n < 0 || n >= 1<<20 { // 4 TiB: not a table this program wrote
		return 0
	}
	return (n + 1) * streetChunk
}

func scan(db *pebble.DB, prefix string, fn func(k, v []byte) error) error {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte(prefix), UpperBound: prefixEnd(prefix)})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			it.Close()
			return fmt.Errorf("%s: %w", it.Key(), err)
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return err
	}
	return it.Close()
}

// bleveCorrector finds fuzzy locality candidates with bleve: every word of
// the name within two edits (bleve's fuzziness), all words required.
type bleveCorrector struct {
	idx bleve.Index
}

func (c *bleveCorrector) Similar(key string, limit int) []uint32 {
	if key == "" || len(key) > 200 {
		return nil
	}
	q := bleve.NewMatchQuery(key)
	q.SetField("name")
	q.SetFuzziness(2)
	q.SetOperator(1) // and
	req := bleve.NewSearchRequestOptions(q, limit, 0, false)
	res, err := c.idx.Search(req)
	if err != nil {
		return nil
	}
	out := make([]uint32, 0, len(res.Hits))
	for _, h := range res.Hits {
		id, err := strconv.ParseUint(h.ID, 16, 32)
		if err == nil {
			out = append(out, uint32(id))
		}
	}
	return out
}
