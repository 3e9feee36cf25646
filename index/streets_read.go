package index

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/lodge-mail/lodge/data/gnaf"
	"github.com/lodge-mail/lodge/data/points"
	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/progress"
)

// Licence texts of the street sources lodge knows.
const (
	licenceGNAF = "G-NAF EULA (CC BY 4.0 with a mail clause)"
)

// PointFields are the fields of an address point list (StreetSource.Columns).
var PointFields = []string{"number", "street", "street_type", "unit", "building", "locality", "state", "postcode", "lat", "lon", "id"}

// CheckStreetSource checks a street source before an import uses it.
func CheckStreetSource(ss StreetSource) error {
	switch ss.Kind {
	case StreetsGNAF, StreetsOpenAddresses, StreetsCSV:
	default:
		return fmt.Errorf("street source %s: unknown kind %q", ss.Path, ss.Kind)
	}
	if _, err := os.Stat(ss.Path); err != nil {
		return fmt.Errorf("street source: %w", err)
	}
	if ss.State != "" && stateOf(ss.State) == engine.NoState {
		return fmt.Errorf("street source %s: unknown state %q", ss.Path, ss.State)
	}
	for k := range ss.Columns {
		if !slices.Contains(PointFields, k) {
			return fmt.Errorf("street source %s: unknown column field %q (want one of %s)", ss.Path, k, strings.Join(PointFields, ", "))
		}
	}
	return nil
}

// readStreets reads the street sources into a street table, adding to b
// the locality triples they name (G-NAF localities and their aliases, and
// every postcode their addresses carry).
func readStreets(ctx context.Context, srcs []StreetSource, b *engine.ReferenceBuilder, perFile map[string]string, log *slog.Logger, po progress.Options) (*engine.Streets, []SourceInfo, error) {
	sb := engine.NewStreetsBuilder()
	var infos []SourceInfo
	for _, ss := range srcs {
		if err := CheckStreetSource(ss); err != nil {
			return nil, nil, err
		}
		var info SourceInfo
		var err error
		if ss.Kind == StreetsGNAF {
			info, err = readGNAFRelease(ctx, ss, b, sb, log, po)
		} else {
			info, err = readPointList(ctx, ss, b, sb, log, po)
		}
		if err != nil {
			return nil, nil, err
		}
		info.Name, info.Path = ss.name(), ss.Path
		infos = append(infos, info)
	}
	return sb.Build(), infos, nil
}

// gnafLocality is what the importer keeps of a G-NAF locality.
type gnafLocality struct {
	name, state string
	postcode    string
	aliases     []string
	group       uint32
	pcs         []string // postcodes linked
}

// numberText writes a G-NAF number field with its prefix and suffix.
func numberText(prefix string, n int32, suffix string) string {
	if n == gnaf.Null {
		return ""
	}
	return prefix + strconv.Itoa(int(n)) + suffix
}

// readGNAFRelease reads a G-NAF release: localities and their aliases
// become locality triples (one per postcode their addresses use), streets
// and street aliases the streets of each locality's group, and every live
// address (principal and alias) a point. Strings from package gnaf are
// valid only during its callbacks: whatever is kept is cloned.
func readGNAFRelease(ctx context.Context, ss StreetSource, b *engine.ReferenceBuilder, sb *engine.StreetsBuilder, log *slog.Logger, po progress.Options) (SourceInfo, error) {
	var bar *progress.Bar
	var pending int64
	rel, err := gnaf.OpenWith(ss.Path, gnaf.Options{Progress: func(table string, n int) {
		if table == gnaf.TableAddressDetail && bar != nil {
			if pending += int64(n); pending >= 1<<20 {
				bar.Add(pending)
				pending = 0
			}
		}
	}})
	if err != nil {
		return SourceInfo{}, err
	}
	defer rel.Close()
	info := SourceInfo{Licence: licenceGNAF, Attribution: AttributionGNAF, Origin: rel.Name() + " release, https://data.gov.au (Geoscape Australia)"}
	if log != nil {
		log.Info("reading G-NAF release", "name", rel.Name(), "path", ss.Path, "address_bytes", rel.TotalBytes())
	}
	var retired, rejected int64
	var reasons []string
	count := func(st gnaf.Stats) {
		retired += st.Retired
		rejected += st.Rejected
		if len(reasons) < 10 {
			reasons = append(reasons, st.Reasons...)
		}
	}
	statePID := map[string]string{"1": "NSW", "2": "VIC", "3": "QLD", "4": "SA", "5": "WA", "6": "TAS", "7": "NT", "8": "ACT", "9": "OT"}
	st, err := rel.StateRecords(func(r *gnaf.State) error {
		statePID[strings.Clone(r.PID)] = strings.Clone(r.Abbreviation)
		return nil
	})
	if err != nil {
		return info, err
	}
	count(st)

	locs := map[string]*gnafLocality{}
	link := func(l *gnafLocality, pid, pc string) error {
		if pc == "" || slices.Contains(l.pcs, pc) {
			return nil
		}
		st := stateOf(l.state)
		n, ok := engine.ParsePostcode(pc)
		if st == engine.NoState || !ok {
			return fmt.Errorf("locality %s: state %q or postcode %q unusable", pid, l.state, pc)
		}
		l.pcs = append(l.pcs, strings.Clone(pc))
		// the principal name last: a G-NAF spelling added later wins,
		// and the locality must print as itself, not as an alias
		for _, name := range append(append([]string{}, l.aliases...), l.name) {
			if _, err := b.AddLocality(engine.Locality{Name: name, State: st, Postcode: n, Sources: engine.SourceGNAF, PID: pid}); err != nil {
				return err
			}
			if err := sb.Link(l.group, name, l.state, pc); err != nil {
				return err
			}
		}
		return nil
	}
	st, err = rel.Localities(func(r *gnaf.Locality) error {
		state, ok := statePID[r.StatePID]
		if !ok || stateOf(state) == engine.NoState {
			state = r.State // the file's own state
		}
		pid := strings.Clone(r.PID)
		locs[pid] = &gnafLocality{name: strings.Clone(r.Name), state: state, postcode: strings.Clone(r.PrimaryPostcode), group: sb.Group("gnaf:"+pid, true)}
		return nil
	})
	if err != nil {
		return info, err
	}
	count(st)
	nLoc := st.Rows
	st, err = rel.LocalityAliases(func(r *gnaf.LocalityAlias) error {
		if l := locs[r.LocalityPID]; l != nil {
			l.aliases = append(l.aliases, strings.Clone(r.Name))
		}
		return nil
	})
	if err != nil {
		return info, err
	}
	count(st)
	for pid, l := range locs {
		if err := link(l, pid, l.postcode); err != nil {
			return info, err
		}
	}

	streets := map[string]uint32{}
	st, err = rel.StreetLocalities(func(r *gnaf.StreetLocality) error {
		l := locs[r.LocalityPID]
		if l == nil {
			return nil // a street of a retired locality
		}
		pid := strings.Clone(r.PID)
		id, err := sb.Street(l.group, r.Name, r.TypeCode, r.SuffixCode, pid)
		if err != nil {
			return err
		}
		streets[pid] = id
		return nil
	})
	if err != nil {
		return info, err
	}
	count(st)
	nStreets := st.Rows
	st, err = rel.StreetLocalityAliases(func(r *gnaf.StreetLocalityAlias) error {
		id, ok := streets[r.StreetLocalityPID]
		if !ok {
			return nil
		}
		return sb.Alias(id, r.Name, r.TypeCode, r.SuffixCode)
	})
	if err != nil {
		return info, err
	}
	count(st)

	bar = progress.Start("G-NAF addresses", "bytes", rel.TotalBytes(), po)
	defer bar.Finish()
	noStreet, bad, rows := 0, 0, 0
	var firstBad error
	st, err = rel.AddressDetails(func(a *gnaf.Address) error {
		if rows++; rows&8191 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		id, ok := streets[a.StreetLocalityPID]
		if !ok {
			noStreet++
			return nil
		}
		if l := locs[a.LocalityPID]; l != nil && a.Postcode != "" && a.Postcode != l.postcode {
			if err := link(l, strings.Clone(a.LocalityPID), a.Postcode); err != nil {
				return err
			}
		}
		err := sb.Point(id, engine.PointSpec{
			NumberFirst: numberText("", a.NumberFirst, a.NumberFirstSuffix),
			NumberLast:  numberText("", a.NumberLast, a.NumberLastSuffix),
			FlatNumber:  numberText(a.FlatNumberPrefix, a.FlatNumber, a.FlatNumberSuffix),
			LevelType:   a.LevelTypeCode,
			LevelNumber: numberText(a.LevelNumberPrefix, a.LevelNumber, a.LevelNumberSuffix),
			Lot:         a.LotNumberPrefix + a.LotNumber + a.LotNumberSuffix,
			Building:    a.BuildingName,
			Postcode:    a.Postcode,
			PID:         a.PID,
			Alias:       a.AliasPrincipal == 'A',
		})
		if err != nil {
			// one unusable row is counted, not fatal: G-NAF has odd rows
			bad++
			if firstBad == nil {
				firstBad = fmt.Errorf("address %s: %w", a.PID, err)
			}
		}
		return nil
	})
	bar.Add(pending)
	if err != nil {
		return info, err
	}
	count(st)
	info.Rows = int(st.Rows)
	if log != nil {
		log.Info("G-NAF release read", "localities", nLoc, "streets", nStreets, "addresses", st.Rows,
			"retired_rows_skipped", retired, "malformed_rows_skipped", rejected, "addresses_without_street", noStreet, "unusable_addresses", bad)
		if len(reasons) > 0 {
			log.Warn("malformed G-NAF rows skipped", "count", rejected, "first", strings.Join(reasons, "; "))
		}
		if firstBad != nil {
			log.Warn("unusable G-NAF addresses skipped", "count", bad, "first", firstBad)
		}
	}
	return info, nil
}

// readPointList reads an OpenAddresses-style CSV or a CSV of address
// points with named columns. Rows without a street are skipped; rows
// without a number make the street known at street level only.
func readPointList(ctx context.Context, ss StreetSource, b *engine.ReferenceBuilder, sb *engine.StreetsBuilder, log *slog.Logger, po progress.Options) (SourceInfo, error) {
	f, err := os.Open(ss.Path)
	if err != nil {
		return SourceInfo{}, err
	}
	defer f.Close()
	fi, _ := f.Stat()
	info := SourceInfo{Licence: ss.Licence, Attribution: ss.Attribution, Origin: "address list " + ss.Path}
	if info.Licence == "" {
		info.Licence = "as its owner licenses it (not recorded)"
	}
	bar := progress.Start("address points", "bytes", fi.Size(), po)
	defer bar.Finish()
	cr := &countingReader{r: f, bar: bar}

	type place struct{ name, state string }
	groups := map[place]uint32{}
	linked := map[string]bool{}
	rows, skipped := 0, 0
	var firstSkip error
	skip := func(p *points.Point, err error) {
		skipped++
		if firstSkip == nil {
			firstSkip = fmt.Errorf("%s: row %d (id %q): %w", ss.Path, rows, p.ID, err)
		}
	}
	fn := func(p *points.Point) error {
		if rows++; rows&8191 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		state := strings.ToUpper(p.State)
		if state == "" {
			state = ss.State
		}
		st := stateOf(state)
		pcN, ok := engine.ParsePostcode(p.Postcode)
		if st == engine.NoState || !ok || p.Locality == "" || p.Street == "" {
			skip(p, fmt.Errorf("unusable state %q, postcode %q, locality %q or street", state, p.Postcode, p.Locality))
			return nil
		}
		key := place{engine.CanonicalLocality(p.Locality), st.String()}
		g, ok := groups[key]
		if !ok {
			g = sb.Group("list:"+ss.Path+":"+key.name+"|"+key.state, ss.Complete)
			groups[key] = g
		}
		if lk := fmt.Sprint(g, "|", p.Postcode); !linked[lk] {
			linked[lk] = true
			if _, err := b.AddLocality(engine.Locality{Name: strings.Clone(p.Locality), State: st, Postcode: pcN}); err != nil {
				skip(p, err)
				return nil
			}
			if err := sb.Link(g, p.Locality, st.String(), p.Postcode); err != nil {
				skip(p, err)
				return nil
			}
		}
		id, err := sb.Street(g, p.Street, p.StreetType, "", "")
		if err != nil {
			skip(p, err)
			return nil
		}
		if p.Number != "" {
			first, last, _ := strings.Cut(p.Number, "-")
			if err := sb.Point(id, engine.PointSpec{NumberFirst: first, NumberLast: last, FlatNumber: unitNumber(p.Unit), Building: p.Building, Postcode: p.Postcode, PID: p.ID}); err != nil {
				skip(p, err)
			}
		}
		return nil
	}
	var st points.Stats
	if ss.Kind == StreetsOpenAddresses {
		st, err = points.ReadOpenAddresses(cr, ss.Path, fn)
	} else {
		var cols points.Columns
		c := ss.Columns
		cols.Number, cols.Street, cols.StreetType, cols.Unit = c["number"], c["street"], c["street_type"], c["unit"]
		cols.Locality, cols.State, cols.Postcode = c["locality"], c["state"], c["postcode"]
		cols.Lat, cols.Lon, cols.ID, cols.Building = c["lat"], c["lon"], c["id"], c["building"]
		st, err = points.ReadCSV(cr, ss.Path, cols, fn)
	}
	if err != nil {
		return info, err
	}
	info.Rows = rows
	if log != nil {
		log.Info("address list read", "path", ss.Path, "rows", rows, "places", len(groups), "skipped", skipped, "malformed", st.Rejected)
		if firstSkip != nil {
			log.Warn("unusable rows skipped", "count", skipped, "first", firstSkip)
		}
		if len(st.Reasons) > 0 {
			log.Warn("malformed rows skipped", "count", st.Rejected, "first", strings.Join(st.Reasons, "; "))
		}
	}
	return info, nil
}

// unitNumber reads a list's unit field ("UNIT 3", "3", "APT 3B") as the
// flat number.
func unitNumber(u string) string {
	f := strings.Fields(u)
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}

// countingReader tells a progress bar of the bytes read.
type countingReader struct {
	r   io.Reader
	bar *progress.Bar
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.bar.Add(int64(n))
	return n, err
}
