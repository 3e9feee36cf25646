package index

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/progress"
)

// Licence texts of the street sources lodge knows.
const (
	licenceGNAF = "G-NAF EULA (CC BY 4.0 with a mail clause)"
)

// PointFields are the fields of an address point list (StreetSource.Columns).
var PointFields = []string{"number", "street", "street_type", "unit", "locality", "state", "postcode", "lat", "lon", "id"}

// pointHeaders are the usual header names of each field, tried in order
// (case-insensitive) when Columns does not name one. The first of each is
// the OpenAddresses header.
var pointHeaders = map[string][]string{
	"number":      {"NUMBER", "HOUSE_NUMBER", "HOUSENUMBER", "STREET_NUMBER", "NUMBER_FIRST"},
	"street":      {"STREET", "STREET_NAME", "STREETNAME", "ROAD"},
	"street_type": {"STREET_TYPE", "STREETTYPE", "STREET_TYPE_CODE"},
	"unit":        {"UNIT", "FLAT", "FLAT_NUMBER", "UNIT_NUMBER"},
	"locality":    {"CITY", "SUBURB", "LOCALITY", "LOCALITY_NAME", "TOWN"},
	"state":       {"REGION", "STATE", "STATE_ABBREVIATION"},
	"postcode":    {"POSTCODE", "POSTAL_CODE", "ZIP"},
	"lat":         {"LAT", "LATITUDE"},
	"lon":         {"LON", "LONG", "LONGITUDE", "LNG"},
	"id":          {"ID", "PID", "ADDRESS_DETAIL_PID"},
}

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
		if _, ok := pointHeaders[k]; !ok {
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

// readGNAFRelease reads a G-NAF release: localities and their aliases
// become locality triples (one per postcode their addresses use), streets
// and street aliases the streets of each locality's group, and every live
// address (principal and alias) a point.
func readGNAFRelease(ctx context.Context, ss StreetSource, b *engine.ReferenceBuilder, sb *engine.StreetsBuilder, log *slog.Logger, po progress.Options) (SourceInfo, error) {
	rel, err := openGNAF(ss.Path)
	if err != nil {
		return SourceInfo{}, err
	}
	defer rel.close()
	info := SourceInfo{Licence: licenceGNAF, Attribution: AttributionGNAF, Origin: rel.name + " release, https://data.gov.au (Geoscape Australia)"}
	if log != nil {
		log.Info("reading G-NAF release", "name", rel.name, "path", ss.Path, "address_bytes", rel.size("ADDRESS_DETAIL"))
	}

	statePID := map[string]string{"1": "NSW", "2": "VIC", "3": "QLD", "4": "SA", "5": "WA", "6": "TAS", "7": "NT", "8": "ACT", "9": "OT"}
	if _, _, err := rel.each(ctx, "STATE", []string{"STATE_PID", "STATE_ABBREVIATION"}, nil, func(t *gnafTable, row *gnafRow) error {
		statePID[string(row.get(t.col("STATE_PID")))] = string(row.get(t.col("STATE_ABBREVIATION")))
		return nil
	}); err != nil {
		return info, err
	}

	locs := map[string]*gnafLocality{}
	link := func(l *gnafLocality, pid, pc string) error {
		if pc == "" {
			return nil
		}
		for _, p := range l.pcs {
			if p == pc {
				return nil
			}
		}
		st := stateOf(l.state)
		n, ok := engine.ParsePostcode(pc)
		if st == engine.NoState || !ok {
			return fmt.Errorf("locality %s: state %q or postcode %q unusable", pid, l.state, pc)
		}
		l.pcs = append(l.pcs, pc)
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
	nLoc, retLoc, err := rel.each(ctx, "LOCALITY", []string{"LOCALITY_PID", "LOCALITY_NAME", "PRIMARY_POSTCODE", "STATE_PID"}, nil, func(t *gnafTable, row *gnafRow) error {
		pid := string(row.get(t.col("LOCALITY_PID")))
		st, ok := statePID[string(row.get(t.col("STATE_PID")))]
		if !ok || stateOf(st) == engine.NoState {
			return fmt.Errorf("locality %s: unknown STATE_PID %q", pid, row.get(t.col("STATE_PID")))
		}
		locs[pid] = &gnafLocality{name: string(row.get(t.col("LOCALITY_NAME"))), state: st,
			postcode: string(row.get(t.col("PRIMARY_POSTCODE"))), group: sb.Group("gnaf:"+pid, true)}
		return nil
	})
	if err != nil {
		return info, err
	}
	_, _, err = rel.each(ctx, "LOCALITY_ALIAS", []string{"LOCALITY_PID", "NAME"}, nil, func(t *gnafTable, row *gnafRow) error {
		if l := locs[string(row.get(t.col("LOCALITY_PID")))]; l != nil {
			l.aliases = append(l.aliases, string(row.get(t.col("NAME"))))
		}
		return nil
	})
	if err != nil {
		return info, err
	}
	for pid, l := range locs {
		if err := link(l, pid, l.postcode); err != nil {
			return info, err
		}
	}

	streets := map[string]uint32{}
	nStreets, retStreets, err := rel.each(ctx, "STREET_LOCALITY", []string{"STREET_LOCALITY_PID", "STREET_NAME", "STREET_TYPE_CODE", "STREET_SUFFIX_CODE", "LOCALITY_PID"}, nil,
		func(t *gnafTable, row *gnafRow) error {
			l := locs[string(row.get(t.col("LOCALITY_PID")))]
			if l == nil {
				return nil // a street of a retired locality
			}
			pid := string(row.get(t.col("STREET_LOCALITY_PID")))
			id, err := sb.Street(l.group, string(row.get(t.col("STREET_NAME"))), string(row.get(t.col("STREET_TYPE_CODE"))),
				string(row.get(t.col("STREET_SUFFIX_CODE"))), pid)
			if err != nil {
				return err
			}
			streets[pid] = id
			return nil
		})
	if err != nil {
		return info, err
	}
	_, _, err = rel.each(ctx, "STREET_LOCALITY_ALIAS", []string{"STREET_LOCALITY_PID", "STREET_NAME", "STREET_TYPE_CODE", "STREET_SUFFIX_CODE"}, nil,
		func(t *gnafTable, row *gnafRow) error {
			id, ok := streets[string(row.get(t.col("STREET_LOCALITY_PID")))]
			if !ok {
				return nil
			}
			return sb.Alias(id, string(row.get(t.col("STREET_NAME"))), string(row.get(t.col("STREET_TYPE_CODE"))), string(row.get(t.col("STREET_SUFFIX_CODE"))))
		})
	if err != nil {
		return info, err
	}

	bar := progress.Start("G-NAF addresses", "bytes", rel.size("ADDRESS_DETAIL"), po)
	defer bar.Finish()
	var pending int64
	noStreet, bad := 0, 0
	var firstBad error
	cat := func(row *gnafRow, cols ...int) string {
		var s string
		for _, c := range cols {
			s += string(row.get(c))
		}
		return s
	}
	var cols struct {
		street, loc, pc, lotP, lot, lotS, flatP, flat, flatS, levelT, levelP, level, levelS, first, firstS, last, lastS int
	}
	var colsOf *gnafTable
	nAddr, retAddr, err := rel.each(ctx, "ADDRESS_DETAIL", []string{"STREET_LOCALITY_PID", "LOCALITY_PID", "NUMBER_FIRST", "NUMBER_LAST", "FLAT_NUMBER", "LEVEL_TYPE_CODE", "LEVEL_NUMBER", "LOT_NUMBER", "POSTCODE"},
		func(n int) {
			pending += int64(n)
			if pending > 1<<20 {
				bar.Add(pending)
				pending = 0
			}
		},
		func(t *gnafTable, row *gnafRow) error {
			if colsOf != t {
				colsOf = t
				cols.street, cols.loc, cols.pc = t.col("STREET_LOCALITY_PID"), t.col("LOCALITY_PID"), t.col("POSTCODE")
				cols.lotP, cols.lot, cols.lotS = t.col("LOT_NUMBER_PREFIX"), t.col("LOT_NUMBER"), t.col("LOT_NUMBER_SUFFIX")
				cols.flatP, cols.flat, cols.flatS = t.col("FLAT_NUMBER_PREFIX"), t.col("FLAT_NUMBER"), t.col("FLAT_NUMBER_SUFFIX")
				cols.levelT, cols.levelP, cols.level, cols.levelS = t.col("LEVEL_TYPE_CODE"), t.col("LEVEL_NUMBER_PREFIX"), t.col("LEVEL_NUMBER"), t.col("LEVEL_NUMBER_SUFFIX")
				cols.first, cols.firstS = t.col("NUMBER_FIRST"), t.col("NUMBER_FIRST_SUFFIX")
				cols.last, cols.lastS = t.col("NUMBER_LAST"), t.col("NUMBER_LAST_SUFFIX")
			}
			id, ok := streets[string(row.get(cols.street))]
			if !ok {
				noStreet++
				return nil
			}
			pc := string(row.get(cols.pc))
			if l := locs[string(row.get(cols.loc))]; l != nil && pc != "" && pc != l.postcode {
				if err := link(l, string(row.get(cols.loc)), pc); err != nil {
					return err
				}
			}
			err := sb.Point(id, engine.PointSpec{
				NumberFirst: cat(row, cols.first, cols.firstS),
				NumberLast:  cat(row, cols.last, cols.lastS),
				FlatNumber:  cat(row, cols.flatP, cols.flat, cols.flatS),
				LevelType:   string(row.get(cols.levelT)),
				LevelNumber: cat(row, cols.levelP, cols.level, cols.levelS),
				Lot:         cat(row, cols.lotP, cols.lot, cols.lotS),
				Postcode:    pc,
			})
			if err != nil {
				// one unusable row is counted, not fatal: G-NAF has odd rows
				bad++
				if firstBad == nil {
					firstBad = fmt.Errorf("%s:%d: %w", row.file, row.line, err)
				}
			}
			return nil
		})
	bar.Add(pending)
	if err != nil {
		return info, err
	}
	info.Rows = nAddr
	if log != nil {
		log.Info("G-NAF release read", "localities", nLoc, "streets", nStreets, "addresses", nAddr,
			"retired_rows_skipped", retLoc+retStreets+retAddr, "addresses_without_street", noStreet, "unusable_addresses", bad)
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
	r := csv.NewReader(cr)
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	head, err := r.Read()
	if err != nil {
		return info, fmt.Errorf("%s: header: %w", ss.Path, err)
	}
	col := map[string]int{}
	for field, names := range pointHeaders {
		if want, ok := ss.Columns[field]; ok {
			names = []string{want}
		}
		col[field] = -1
		for _, n := range names {
			for i, h := range head {
				if strings.EqualFold(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")), n) {
					col[field] = i
					break
				}
			}
			if col[field] >= 0 {
				break
			}
		}
		if _, named := ss.Columns[field]; named && col[field] < 0 {
			return info, fmt.Errorf("%s: no column %q (for %s) in the header", ss.Path, ss.Columns[field], field)
		}
	}
	for _, need := range []string{"street", "locality", "postcode"} {
		if col[need] < 0 {
			return info, fmt.Errorf("%s: no %s column (tried %s; name it with -columns %s=HEADER)", ss.Path, need, strings.Join(pointHeaders[need], ", "), need)
		}
	}
	if col["state"] < 0 && ss.State == "" {
		return info, fmt.Errorf("%s: no state column: give the list's state with -state", ss.Path)
	}
	get := func(rec []string, field string) string {
		if i := col[field]; i >= 0 && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	type place struct{ name, state string }
	groups := map[place]uint32{}
	linked := map[string]bool{}
	rows, skipped := 0, 0
	var firstSkip error
	skip := func(line int, err error) {
		skipped++
		if firstSkip == nil {
			firstSkip = fmt.Errorf("%s:%d: %w", ss.Path, line, err)
		}
	}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				skip(line, err)
				continue
			}
			return info, fmt.Errorf("%s:%d: %w", ss.Path, line, err)
		}
		if rows&8191 == 0 && ctx.Err() != nil {
			return info, ctx.Err()
		}
		rows++
		state := strings.ToUpper(get(rec, "state"))
		if state == "" {
			state = ss.State
		}
		st := stateOf(state)
		locName, pc := get(rec, "locality"), get(rec, "postcode")
		pcN, ok := engine.ParsePostcode(pc)
		if st == engine.NoState || !ok || locName == "" || get(rec, "street") == "" {
			skip(line, fmt.Errorf("unusable state %q, postcode %q, locality %q or street", state, pc, locName))
			continue
		}
		key := place{engine.CanonicalLocality(locName), st.String()}
		g, ok := groups[key]
		if !ok {
			g = sb.Group("list:"+ss.Path+":"+key.name+"|"+key.state, ss.Complete)
			groups[key] = g
		}
		if lk := fmt.Sprint(g, "|", pc); !linked[lk] {
			linked[lk] = true
			if _, err := b.AddLocality(engine.Locality{Name: locName, State: st, Postcode: pcN}); err != nil {
				skip(line, err)
				continue
			}
			if err := sb.Link(g, locName, st.String(), pc); err != nil {
				skip(line, err)
				continue
			}
		}
		id, err := sb.Street(g, get(rec, "street"), get(rec, "street_type"), "", "")
		if err != nil {
			skip(line, err)
			continue
		}
		if num := get(rec, "number"); num != "" {
			first, last, _ := strings.Cut(num, "-")
			if err := sb.Point(id, engine.PointSpec{NumberFirst: first, NumberLast: last, FlatNumber: get(rec, "unit"), Postcode: pc}); err != nil {
				skip(line, err)
			}
		}
	}
	info.Rows = rows
	if log != nil {
		log.Info("address list read", "path", ss.Path, "rows", rows, "places", len(groups), "skipped", skipped)
		if firstSkip != nil {
			log.Warn("unusable rows skipped", "count", skipped, "first", firstSkip)
		}
	}
	return info, nil
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
