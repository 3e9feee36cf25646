package index

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// gnafRelease is a G-NAF release, a ZIP or an unzipped folder, read table
// by table (layout: ../shared/docs/gnaf-format.md). Only what the street
// level needs is read; rows are streamed, never held.
type gnafRelease struct {
	name  string // "G-NAF NOVEMBER 2024"
	zr    *zip.ReadCloser
	files map[string]gnafFile // "Standard/NSW_LOCALITY_psv.psv" → where
}

type gnafFile struct {
	zf   *zip.File // in a ZIP
	path string    // or on disk
	size int64     // uncompressed
}

// maxGNAFLine bounds one row of a G-NAF table; the longest real rows are
// a few hundred bytes.
const maxGNAFLine = 64 << 10

var gnafStates = []string{"ACT", "NSW", "NT", "OT", "QLD", "SA", "TAS", "VIC", "WA"}

// openGNAF opens a release ZIP or a folder at or above "Standard/".
func openGNAF(p string) (*gnafRelease, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	r := &gnafRelease{files: map[string]gnafFile{}}
	add := func(full string, f gnafFile) {
		dir, base := path.Split(full)
		dir = strings.TrimSuffix(dir, "/")
		parent := path.Base(dir)
		if parent != "Standard" && parent != "Authority Code" {
			return
		}
		key := parent + "/" + base
		if _, dup := r.files[key]; dup {
			return
		}
		r.files[key] = f
		if rel := path.Dir(dir); rel != "." && rel != "/" && r.name == "" {
			r.name = path.Base(rel)
		}
	}
	if st.IsDir() {
		err = filepath.WalkDir(p, func(fp string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".psv") {
				fi, err := d.Info()
				if err != nil {
					return err
				}
				add(filepath.ToSlash(fp), gnafFile{path: fp, size: fi.Size()})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	} else {
		zr, err := zip.OpenReader(p)
		if err != nil {
			return nil, fmt.Errorf("%s: not a G-NAF release ZIP or folder: %w", p, err)
		}
		r.zr = zr
		for _, f := range zr.File {
			if f.FileInfo().Mode().IsRegular() && strings.HasSuffix(f.Name, ".psv") {
				add(f.Name, gnafFile{zf: f, size: int64(f.UncompressedSize64)})
			}
		}
	}
	found := false
	for _, s := range gnafStates {
		if _, ok := r.files["Standard/"+s+"_LOCALITY_psv.psv"]; ok {
			found = true
		}
	}
	if !found {
		r.close()
		return nil, fmt.Errorf("%s: no G-NAF tables (Standard/{STATE}_LOCALITY_psv.psv) found", p)
	}
	if r.name == "" {
		r.name = "G-NAF"
	}
	return r, nil
}

func (r *gnafRelease) close() {
	if r.zr != nil {
		r.zr.Close()
	}
}

// size returns the uncompressed bytes of table over every state.
func (r *gnafRelease) size(table string) int64 {
	var n int64
	for _, s := range gnafStates {
		n += r.files["Standard/"+s+"_"+table+"_psv.psv"].size
	}
	return n
}

// gnafRow is one row of a table: fields by column index, valid until the
// next row.
type gnafRow struct {
	file   string
	line   int
	fields [][]byte
}

// gnafTable names the columns a reader wants; col returns a wanted
// column's index in the row (-1 when the file lacks an optional column).
type gnafTable struct {
	cols map[string]int
}

func (t *gnafTable) col(name string) int {
	if i, ok := t.cols[name]; ok {
		return i
	}
	return -1
}

// get returns field i of row ("" for -1).
func (row *gnafRow) get(i int) []byte {
	if i < 0 || i >= len(row.fields) {
		return nil
	}
	return row.fields[i]
}

// each reads table (LOCALITY, ADDRESS_DETAIL, ...) of every state, calling
// fn for each live row (DATE_RETIRED empty). required columns must be in
// every file's header. bytes, when set, is told of the bytes read.
func (r *gnafRelease) each(ctx context.Context, table string, required []string, bytesRead func(int), fn func(t *gnafTable, row *gnafRow) error) (rows, retired int, err error) {
	for _, s := range gnafStates {
		name := "Standard/" + s + "_" + table + "_psv.psv"
		f, ok := r.files[name]
		if !ok {
			continue
		}
		var rc io.ReadCloser
		if f.zf != nil {
			rc, err = f.zf.Open()
		} else {
			rc, err = os.Open(f.path)
		}
		if err != nil {
			return rows, retired, fmt.Errorf("%s: %w", name, err)
		}
		n, ret, err := readPSV(ctx, rc, name, required, bytesRead, fn)
		rc.Close()
		rows += n
		retired += ret
		if err != nil {
			return rows, retired, err
		}
	}
	return rows, retired, nil
}

// authority reads Authority_Code_<table>_psv.psv into CODE → NAME.
func (r *gnafRelease) authority(ctx context.Context, table string) (map[string]string, error) {
	name := "Authority Code/Authority_Code_" + table + "_psv.psv"
	f, ok := r.files[name]
	if !ok {
		return nil, nil
	}
	var rc io.ReadCloser
	var err error
	if f.zf != nil {
		rc, err = f.zf.Open()
	} else {
		rc, err = os.Open(f.path)
	}
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	out := map[string]string{}
	_, _, err = readPSV(ctx, rc, name, []string{"CODE", "NAME"}, nil, func(t *gnafTable, row *gnafRow) error {
		out[string(row.get(t.col("CODE")))] = string(row.get(t.col("NAME")))
		return nil
	})
	return out, err
}

var errGNAFLine = errors.New("line too long")

// readPSV streams one pipe-separated table: header first, no quoting, \n
// or \r\n line ends, columns by header name. A row with another number of
// fields than the header is an error naming file and line.
func readPSV(ctx context.Context, rd io.Reader, name string, required []string, bytesRead func(int), fn func(t *gnafTable, row *gnafRow) error) (rows, retired int, err error) {
	br := bufio.NewReaderSize(rd, 256<<10)
	t := &gnafTable{cols: map[string]int{}}
	row := &gnafRow{file: name}
	retiredCol := -1
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull || len(line) > maxGNAFLine {
			return rows, retired, fmt.Errorf("%s:%d: %w (more than %d bytes)", name, row.line+1, errGNAFLine, maxGNAFLine)
		}
		if err != nil && err != io.EOF {
			return rows, retired, fmt.Errorf("%s:%d: %w", name, row.line+1, err)
		}
		if len(line) == 0 && err == io.EOF {
			break
		}
		row.line++
		if bytesRead != nil {
			bytesRead(len(line))
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if row.line == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
			for i, h := range bytes.Split(line, []byte("|")) {
				k := strings.ToUpper(strings.TrimSpace(string(h)))
				if _, dup := t.cols[k]; dup {
					return rows, retired, fmt.Errorf("%s:1: column %s twice", name, k)
				}
				t.cols[k] = i
			}
			for _, c := range required {
				if _, ok := t.cols[c]; !ok {
					return rows, retired, fmt.Errorf("%s:1: no column %s in the header", name, c)
				}
			}
			retiredCol = t.col("DATE_RETIRED")
		} else if len(line) > 0 {
			row.fields = row.fields[:0]
			for {
				i := bytes.IndexByte(line, '|')
				if i < 0 {
					row.fields = append(row.fields, line)
					break
				}
				row.fields = append(row.fields, line[:i])
				line = line[i+1:]
			}
			if len(row.fields) != len(t.cols) {
				return rows, retired, fmt.Errorf("%s:%d: %d fields, the header has %d", name, row.line, len(row.fields), len(t.cols))
			}
			if retiredCol >= 0 && len(row.fields[retiredCol]) > 0 {
				retired++
			} else {
				rows++
				if err := fn(t, row); err != nil {
					return rows, retired, fmt.Errorf("%s:%d: %w", name, row.line, err)
				}
			}
			if rows&8191 == 0 && ctx.Err() != nil {
				return rows, retired, ctx.Err()
			}
		}
		if err == io.EOF {
			break
		}
	}
	if row.line == 0 {
		return 0, 0, fmt.Errorf("%s: empty file (no header)", name)
	}
	return rows, retired, nil
}
