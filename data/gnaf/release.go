package gnaf

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
)

// allStates are the state and territory codes of G-NAF's file names, in
// the order a release's files are read. Files of other names are ignored.
var allStates = []string{"ACT", "NSW", "NT", "OT", "QLD", "SA", "TAS", "VIC", "WA"}

// MaxFileBytes is the largest uncompressed table file a release may
// declare. The largest real one (NSW_ADDRESS_DETAIL) is about 1 GB.
const MaxFileBytes = 64 << 30

// Options tune a Release. The zero value is fine.
type Options struct {
	// MaxRejects is how many malformed rows one iterator call skips (and
	// counts in Stats) before it gives up with an error: 0 means
	// DefaultMaxRejects, a negative value no limit.
	MaxRejects int

	// Progress, when set, is called as table files are read, with the
	// number n of uncompressed bytes of table just read (at most 256 KiB
	// at a time). Summed over an AddressDetails call it reaches
	// TotalBytes. It is called on the iterating goroutine.
	Progress func(table string, n int)
}

// A Release is an opened G-NAF release, a ZIP or a folder. Its methods may
// be called from several goroutines at once.
//
// Its iterators (StateRecords, Localities, LocalityAliases,
// StreetLocalities, StreetLocalityAliases, AddressDetails, AddressAliases,
// DefaultGeocodes) read every state's file of one table, in the order of
// States, and call fn for each live row. Retired rows (DATE_RETIRED set)
// are skipped and counted; malformed rows (the wrong number of fields, a
// control character or invalid UTF-8, a non-number where a number belongs,
// an empty identifier) are skipped and counted, the first few reasons
// kept, up to Options.MaxRejects. A file that cannot be read, lacks a
// header or a needed column, or holds a line longer than MaxLine ends the
// call with an error naming the file and line. An error from fn ends the
// call and is returned as is.
//
// fn gets the same record each time, refilled. Its strings point into the
// read buffer and are valid only until fn returns: copy (strings.Clone)
// what you keep, map keys included.
type Release struct {
	name   string
	opts   Options
	zr     *zip.ReadCloser // nil for a folder
	tables map[string][]tableFile
	auth   map[string]tableFile
	states []string
	closed atomic.Bool
}

// A tableFile is one file of a release.
type tableFile struct {
	state string // "NSW"; "" for an authority table
	table string // "ADDRESS_DETAIL", "STREET_TYPE_AUT"
	name  string // for messages: "G-NAF NOVEMBER 2024/Standard/NSW_ADDRESS_DETAIL_psv.psv"
	size  int64  // uncompressed bytes
	zf    *zip.File
	path  string // in the folder
}

// Open opens a release: the release ZIP as published, or an unzipped folder
// (the folder the ZIP was unpacked into, its G-NAF folder or the
// G-NAF <MONTH YEAR> folder). The release is the folder holding Standard/
// (and Authority Code/); a ZIP or folder holding more than one is an error.
func Open(path string) (*Release, error) { return OpenWith(path, Options{}) }

// OpenWith is Open with options.
func OpenWith(path string, o Options) (*Release, error) {
	p := path
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("gnaf: %w", err)
	}
	r := &Release{opts: o, tables: map[string][]tableFile{}, auth: map[string]tableFile{}}
	if fi.IsDir() {
		err = r.openFolder(p)
	} else {
		err = r.openZip(p)
	}
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("gnaf: %s: %w", p, err)
	}
	seen := map[string]bool{}
	for _, fs := range r.tables {
		sort.Slice(fs, func(a, b int) bool { return stateOrder(fs[a].state) < stateOrder(fs[b].state) })
		for _, f := range fs {
			seen[f.state] = true
		}
	}
	for _, s := range allStates {
		if seen[s] {
			r.states = append(r.states, s)
		}
	}
	if len(r.tables[TableAddressDetail]) == 0 {
		r.Close()
		return nil, fmt.Errorf("gnaf: %s: no ADDRESS_DETAIL files in %s/Standard", p, r.name)
	}
	return r, nil
}

func stateOrder(s string) int {
	for i, t := range allStates {
		if s == t {
			return i
		}
	}
	return len(allStates)
}

// Close releases the ZIP file. Iterating after Close is an error.
func (r *Release) Close() error {
	if r.closed.Swap(true) || r.zr == nil {
		return nil
	}
	return r.zr.Close()
}

// Name is the name of the release folder: "G-NAF NOVEMBER 2024".
func (r *Release) Name() string { return r.name }

// States returns the states the release has files for, of ACT NSW NT OT
// QLD SA TAS VIC WA, in that order: the order the iterators read them in.
func (r *Release) States() []string { return append([]string(nil), r.states...) }

// TotalBytes is the uncompressed size of the ADDRESS_DETAIL files, for
// progress against Options.Progress.
func (r *Release) TotalBytes() int64 { return r.Size(TableAddressDetail) }

// Size is the uncompressed size of a table's files.
func (r *Release) Size(table string) int64 {
	var n int64
	for _, f := range r.tables[table] {
		n += f.size
	}
	if f, ok := r.auth[authName(table)]; ok {
		n += f.size
	}
	return n
}

// addFile records a file of the release dir, given its path below it
// ("Standard/NSW_LOCALITY_psv.psv"); files of other names are ignored.
func (r *Release) addFile(rel string, size int64, zf *zip.File, osPath string) error {
	dir, base := path.Split(rel)
	dir = strings.ToUpper(strings.TrimSuffix(dir, "/"))
	ub := strings.ToUpper(base)
	if !strings.HasSuffix(ub, "_PSV.PSV") {
		return nil
	}
	stem := strings.TrimSuffix(ub, "_PSV.PSV")
	f := tableFile{name: r.name + "/" + rel, size: size, zf: zf, path: osPath}
	if size < 0 || size > MaxFileBytes {
		return fmt.Errorf("%s: declared size %d bytes is beyond the %d bytes allowed", f.name, size, int64(MaxFileBytes))
	}
	switch dir {
	case "STANDARD":
		state, table, ok := strings.Cut(stem, "_")
		if !ok || stateOrder(state) == len(allStates) {
			return nil
		}
		f.state, f.table = state, table
		for _, g := range r.tables[table] {
			if g.state == state {
				return fmt.Errorf("%s and %s are the same table", g.name, f.name)
			}
		}
		r.tables[table] = append(r.tables[table], f)
	case "AUTHORITY CODE":
		table, ok := strings.CutPrefix(stem, "AUTHORITY_CODE_")
		if !ok {
			return nil
		}
		if g, dup := r.auth[table]; dup {
			return fmt.Errorf("%s and %s are the same table", g.name, f.name)
		}
		f.table = table
		r.auth[table] = f
	}
	return nil
}

// openZip finds the release in a ZIP: the one folder with a Standard/
// folder in it.
func (r *Release) openZip(p string) error {
	zr, err := zip.OpenReader(p)
	if err != nil && !(errors.Is(err, zip.ErrInsecurePath) && zr != nil) {
		return err
	}
	r.zr = zr
	roots := map[string]bool{}
	for _, f := range zr.File {
		name := strings.TrimSuffix(strings.ReplaceAll(f.Name, `\`, "/"), "/")
		if !fs.ValidPath(name) || name == "." {
			return fmt.Errorf("unsafe entry name %q", f.Name)
		}
		if f.FileInfo().IsDir() {
			continue
		}
		dir := path.Dir(name)
		if strings.EqualFold(path.Base(dir), "Standard") {
			roots[path.Dir(dir)] = true
		}
	}
	root, err := oneRoot(roots)
	if err != nil {
		return err
	}
	if root == "." {
		r.name = strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
	} else {
		r.name = path.Base(root)
	}
	for _, f := range zr.File {
		name := strings.ReplaceAll(f.Name, `\`, "/")
		rel := name
		if root != "." {
			var ok bool
			if rel, ok = strings.CutPrefix(name, root+"/"); !ok {
				continue
			}
		}
		if strings.Count(rel, "/") != 1 || f.FileInfo().IsDir() {
			continue
		}
		if err := r.addFile(rel, int64(f.UncompressedSize64), f, ""); err != nil {
			return err
		}
	}
	return nil
}

func oneRoot(roots map[string]bool) (string, error) {
	var rs []string
	for d := range roots {
		rs = append(rs, d)
	}
	sort.Strings(rs)
	switch len(rs) {
	case 0:
		return "", errors.New("no Standard folder of table files: not a G-NAF release")
	case 1:
		return rs[0], nil
	}
	return "", fmt.Errorf("%d releases (%s): open one of them", len(rs), strings.Join(rs, ", "))
}

// openFolder finds the release folder: p or a folder up to two levels
// below it with a Standard folder in it.
func (r *Release) openFolder(p string) error {
	level := []string{p}
	var roots []string
	for depth := 0; depth < 3 && len(level) > 0 && len(roots) == 0; depth++ {
		var next []string
		for _, d := range level {
			ents, err := os.ReadDir(d)
			if err != nil {
				return err
			}
			for _, e := range ents {
				if !e.IsDir() {
					continue
				}
				if strings.EqualFold(e.Name(), "Standard") {
					roots = append(roots, d)
				} else {
					next = append(next, filepath.Join(d, e.Name()))
				}
			}
		}
		level = next
	}
	m := map[string]bool{}
	for _, d := range roots {
		m[d] = true
	}
	root, err := oneRoot(m)
	if err != nil {
		return err
	}
	r.name = filepath.Base(root)
	ents, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		files, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, f := range files {
			if !f.Type().IsRegular() {
				continue
			}
			fi, err := f.Info()
			if err != nil {
				return err
			}
			if err := r.addFile(e.Name()+"/"+f.Name(), fi.Size(), nil, filepath.Join(dir, f.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// open opens a file of the release for reading.
func (r *Release) open(f *tableFile) (io.ReadCloser, error) {
	if r.closed.Load() {
		return nil, errors.New("gnaf: release is closed")
	}
	if f.zf != nil {
		rc, err := f.zf.Open()
		if err != nil {
			return nil, fmt.Errorf("gnaf: %s: %w", f.name, err)
		}
		return newPrefetcher(rc), nil
	}
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, fmt.Errorf("gnaf: %w", err)
	}
	return fh, nil
}

func (r *Release) newReader(table string) *reader {
	rd := &reader{maxRejects: r.opts.MaxRejects}
	if rd.maxRejects == 0 {
		rd.maxRejects = DefaultMaxRejects
	}
	if pr := r.opts.Progress; pr != nil {
		rd.onRead = func(n int) { pr(table, n) }
	}
	return rd
}

// each reads every state's file of a table, in allStates order.
func each[T any](r *Release, sp *spec[T], fn func(*T) error) (Stats, error) {
	var st Stats
	files := r.tables[sp.table]
	if len(files) == 0 {
		return st, fmt.Errorf("gnaf: %s: no %s files", r.name, sp.table)
	}
	rd := r.newReader(sp.table)
	var rec T
	for i := range files {
		f := &files[i]
		rc, err := r.open(f)
		if err != nil {
			return st, err
		}
		err = readTable(rd, rc, f.name, f.state, sp, &rec, &st, fn)
		rc.Close()
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

// StateRecords reads the STATE table.
func (r *Release) StateRecords(fn func(*State) error) (Stats, error) { return each(r, &stateSpec, fn) }

// Localities reads the LOCALITY table.
func (r *Release) Localities(fn func(*Locality) error) (Stats, error) {
	return each(r, &localitySpec, fn)
}

// LocalityAliases reads the LOCALITY_ALIAS table.
func (r *Release) LocalityAliases(fn func(*LocalityAlias) error) (Stats, error) {
	return each(r, &localityAliasSpec, fn)
}

// StreetLocalities reads the STREET_LOCALITY table.
func (r *Release) StreetLocalities(fn func(*StreetLocality) error) (Stats, error) {
	return each(r, &streetLocalitySpec, fn)
}

// StreetLocalityAliases reads the STREET_LOCALITY_ALIAS table.
func (r *Release) StreetLocalityAliases(fn func(*StreetLocalityAlias) error) (Stats, error) {
	return each(r, &streetLocalityAliasSpec, fn)
}

// AddressDetails reads the ADDRESS_DETAIL table.
func (r *Release) AddressDetails(fn func(*Address) error) (Stats, error) {
	return each(r, &addressSpec, fn)
}

// AddressAliases reads the ADDRESS_ALIAS table.
func (r *Release) AddressAliases(fn func(*AddressAlias) error) (Stats, error) {
	return each(r, &addressAliasSpec, fn)
}

// DefaultGeocodes reads the ADDRESS_DEFAULT_GEOCODE table.
func (r *Release) DefaultGeocodes(fn func(*Geocode) error) (Stats, error) {
	return each(r, &geocodeSpec, fn)
}

// AuthorityTables lists the authority code tables of the release:
// "FLAT_TYPE_AUT", "STREET_TYPE_AUT" …
func (r *Release) AuthorityTables() []string {
	var ts []string
	for t := range r.auth {
		ts = append(ts, t)
	}
	sort.Strings(ts)
	return ts
}

func authName(table string) string {
	t := strings.ToUpper(table)
	if !strings.HasSuffix(t, "_AUT") {
		t += "_AUT"
	}
	return t
}

// Authority reads an authority code table ("STREET_TYPE_AUT", or
// "STREET_TYPE") into a map from code to row. Its strings are copies. A
// code that appears twice is an error; malformed rows are skipped as by the
// iterators.
func (r *Release) Authority(table string) (map[string]AuthorityCode, Stats, error) {
	var st Stats
	f, ok := r.auth[authName(table)]
	if !ok {
		return nil, st, fmt.Errorf("gnaf: %s: no authority code table %s", r.name, authName(table))
	}
	rc, err := r.open(&f)
	if err != nil {
		return nil, st, err
	}
	defer rc.Close()
	rd := r.newReader(f.table)
	codes := map[string]AuthorityCode{}
	var rec AuthorityCode
	err = readTable(rd, rc, f.name, "", &authoritySpec, &rec, &st, func(c *AuthorityCode) error {
		if _, dup := codes[c.Code]; dup {
			return fmt.Errorf("gnaf: %s:%d: code %q appears twice", f.name, rd.p.lr.line, c.Code)
		}
		codes[strings.Clone(c.Code)] = AuthorityCode{strings.Clone(c.Code), strings.Clone(c.Name), strings.Clone(c.Description)}
		return nil
	})
	if err != nil {
		return nil, st, err
	}
	return codes, st, nil
}
