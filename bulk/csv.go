package bulk

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/lodge-mail/lodge/engine"
)

// verdictColumns follow the input columns of every CSV row.
var verdictColumns = []string{"status", "nation", "message"}

// detailColumns follow them with Config.Detail.
var detailColumns = []struct {
	name string
	get  func(*engine.Detail) string
}{
	{"detail_granularity", func(d *engine.Detail) string { return string(d.Granularity) }},
	{"detail_reference_id", func(d *engine.Detail) string { return d.ReferenceID }},
	{"detail_suggestion", func(d *engine.Detail) string { return strings.Join(d.Suggestion, ", ") }},
	{"detail_faults", func(d *engine.Detail) string { return strings.Join(d.Faults, ";") }},
	{"detail_recipients", func(d *engine.Detail) string { return strings.Join(d.Recipients, ", ") }},
	{"detail_care_of", func(d *engine.Detail) string { return d.CareOf }},
	{"detail_building", func(d *engine.Detail) string { return d.Building }},
	{"detail_flat_type", func(d *engine.Detail) string { return d.FlatType }},
	{"detail_flat_number", func(d *engine.Detail) string { return d.FlatNumber }},
	{"detail_level_type", func(d *engine.Detail) string { return d.LevelType }},
	{"detail_level_number", func(d *engine.Detail) string { return d.LevelNumber }},
	{"detail_lot", func(d *engine.Detail) string { return d.Lot }},
	{"detail_number_first", func(d *engine.Detail) string { return d.NumberFirst }},
	{"detail_number_last", func(d *engine.Detail) string { return d.NumberLast }},
	{"detail_street_name", func(d *engine.Detail) string { return d.StreetName }},
	{"detail_street_type", func(d *engine.Detail) string { return d.StreetType }},
	{"detail_street_suffix", func(d *engine.Detail) string { return d.StreetSuffix }},
	{"detail_postal_type", func(d *engine.Detail) string { return d.PostalType }},
	{"detail_postal_number", func(d *engine.Detail) string { return d.PostalNumber }},
	{"detail_locality", func(d *engine.Detail) string { return d.Locality }},
	{"detail_state", func(d *engine.Detail) string { return d.State }},
	{"detail_postcode", func(d *engine.Detail) string { return d.Postcode }},
	{"detail_country", func(d *engine.Detail) string { return d.Country }},
}

// errTooLong is what limitReader gives encoding/csv for a record past
// MaxRowBytes.
var errTooLong = errors.New("bulk: record too long")

// csvSlack covers what encoding/csv's bufio.Reader reads ahead of the
// record it parses.
const csvSlack = 4096

// limitReader feeds encoding/csv, refusing to give it more than
// MaxRowBytes (plus its read-ahead) past the start of the current record,
// and calls stall before a read that may block.
type limitReader struct {
	src      *bufio.Reader
	pos      int64 // bytes given to the current csv.Reader
	mark     int64 // the csv.Reader's InputOffset at the current record
	newlines int64 // '\n' given in all
	stall    func()
}

func (l *limitReader) Read(p []byte) (int, error) {
	allowed := l.mark + MaxRowBytes + csvSlack - l.pos
	if allowed <= 0 {
		return 0, errTooLong
	}
	if int64(len(p)) > allowed {
		p = p[:allowed]
	}
	if l.stall != nil && l.src.Buffered() == 0 {
		l.stall()
	}
	n, err := l.src.Read(p)
	l.pos += int64(n)
	l.newlines += int64(bytes.Count(p[:n], []byte{'\n'}))
	return n, err
}

type csvSource struct {
	lim      *limitReader
	cr       *csv.Reader
	comma    rune
	lineBase int64 // lines read by earlier csv.Readers
	width    int   // header width, or the first row's; -1 until known
	eof      bool
}

func (s *csvSource) newReader() {
	s.lineBase = s.lim.newlines
	s.lim.pos, s.lim.mark = 0, 0
	s.cr = csv.NewReader(s.lim)
	s.cr.Comma = s.comma
	s.cr.FieldsPerRecord = -1
	s.cr.LazyQuotes = false // a stray quote is an error row, not a guess
}

func (s *csvSource) pad(n int) int {
	if s.width > n {
		return s.width - n
	}
	return 0
}

// skipLine drops the rest of the physical line after an over-long record.
func (s *csvSource) skipLine() error {
	for {
		b, err := s.lim.src.ReadSlice('\n')
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil:
			s.lim.newlines++
			return nil
		case io.EOF:
			if len(b) > 0 {
				s.lim.newlines++ // the last line, unterminated
			}
			return nil
		default:
			return fmt.Errorf("bulk: reading input: %w", err)
		}
	}
}

func (s *csvSource) next() (row, []byte, error) {
	if s.eof {
		return row{}, nil, io.EOF
	}
	rec, err := s.cr.Read()
	off := s.cr.InputOffset()
	switch {
	case err == io.EOF:
		s.eof = true
		return row{}, nil, io.EOF
	case errors.Is(err, errTooLong):
		if err := s.skipLine(); err != nil {
			return row{}, nil, err
		}
		r := row{line: s.lim.newlines, pad: s.pad(0),
			err: fmt.Sprintf("line %d: record longer than %d bytes (a quote not closed?); skipped to the end of this line", s.lim.newlines, MaxRowBytes)}
		s.newReader()
		return r, nil, nil
	case err != nil:
		var pe *csv.ParseError
		if !errors.As(err, &pe) {
			return row{}, nil, fmt.Errorf("bulk: reading input: %w", err)
		}
		s.lim.mark = off
		start, end := s.lineBase+int64(pe.StartLine), s.lineBase+int64(pe.Line)
		msg := fmt.Sprintf("line %d, column %d: %v", end, pe.Column, pe.Err)
		if start != end {
			msg = fmt.Sprintf("lines %d to %d, column %d: %v", start, end, pe.Column, pe.Err)
		}
		return row{fields: rec, pad: s.pad(len(rec)), line: start, err: msg}, nil, nil
	}
	size := off - s.lim.mark
	s.lim.mark = off
	line, _ := s.cr.FieldPos(0)
	if size > MaxRowBytes {
		return row{pad: s.pad(0), line: s.lineBase + int64(line),
			err: fmt.Sprintf("line %d: record longer than %d bytes", s.lineBase+int64(line), MaxRowBytes)}, nil, nil
	}
	if s.width < 0 {
		s.width = len(rec)
	}
	return row{fields: rec, pad: s.pad(len(rec)), line: s.lineBase + int64(line)}, nil, nil
}

func openCSV(br *bufio.Reader, cfg Config, stall func()) setup {
	comma := cfg.Comma
	if comma == 0 {
		comma = ','
	}
	s := &csvSource{lim: &limitReader{src: br, stall: stall}, comma: comma, width: -1}
	s.newReader()
	var header []string
	if !cfg.NoHeader {
		rec, err := s.cr.Read()
		switch {
		case err == io.EOF:
			s.eof = true // empty input: no header, no rows
		case errors.Is(err, errTooLong):
			return setup{err: fmt.Errorf("bulk: the CSV header is longer than %d bytes", MaxRowBytes)}
		case err != nil:
			return setup{err: fmt.Errorf("bulk: reading the CSV header: %w", err)}
		default:
			header = rec
			s.width = len(rec)
			s.lim.mark = s.cr.InputOffset()
		}
	}
	cols, err := resolveColumns(cfg.Columns, header, !cfg.NoHeader)
	if err != nil && !s.eof {
		return setup{err: err}
	}
	su := setup{src: s}
	if header != nil {
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		w.Comma = comma
		h := append(append([]string(nil), header...), verdictColumns...)
		if cfg.Detail {
			for _, d := range detailColumns {
				h = append(h, d.name)
			}
		}
		w.Write(h)
		w.Flush()
		su.header = b.Bytes()
	}
	su.newJ = func(e *engine.Engine) judge {
		j := &csvJudge{e: e, cols: cols, detail: cfg.Detail}
		j.w = csv.NewWriter(&j.tgt)
		j.w.Comma = comma
		return j
	}
	return su
}

// resolveColumns turns Config.Columns into 0-based field indexes; nil
// means every field.
func resolveColumns(cols, header []string, hasHeader bool) ([]int, error) {
	if len(cols) == 0 {
		return nil, nil
	}
	idx := make([]int, 0, len(cols))
next:
	for _, c := range cols {
		if hasHeader {
			for i, h := range header {
				if h == c {
					idx = append(idx, i)
					continue next
				}
			}
			t := strings.TrimSpace(c)
			for i, h := range header {
				if strings.EqualFold(strings.TrimSpace(h), t) {
					idx = append(idx, i)
					continue next
				}
			}
		}
		n, err := strconv.Atoi(strings.TrimSpace(c))
		switch {
		case err != nil && !hasHeader:
			return nil, fmt.Errorf("bulk: column %q: without a header row, name columns by 1-based index", c)
		case err != nil:
			return nil, fmt.Errorf("bulk: column %q is not in the CSV header; its columns are %s", c, listColumns(header))
		case n < 1:
			return nil, fmt.Errorf("bulk: column %q: indexes start at 1", c)
		case hasHeader && n > len(header):
			return nil, fmt.Errorf("bulk: column %d: the CSV header has %d columns: %s", n, len(header), listColumns(header))
		}
		idx = append(idx, n-1)
	}
	return idx, nil
}

// listColumns lists header names with their indexes for a message.
func listColumns(header []string) string {
	var b strings.Builder
	for i, h := range header {
		if i == 50 {
			fmt.Fprintf(&b, ", … (%d more)", len(header)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if len(h) > 60 {
			h = h[:60] + "…"
		}
		fmt.Fprintf(&b, "%d %q", i+1, h)
	}
	return b.String()
}

// target lets one csv.Writer write into each chunk's buffer in turn.
type target struct{ b *bytes.Buffer }

func (t *target) Write(p []byte) (int, error) { return t.b.Write(p) }

type csvJudge struct {
	e      *engine.Engine
	cols   []int
	detail bool
	tgt    target
	w      *csv.Writer
	lines  []string
	rec    []string
}

func (j *csvJudge) process(ctx context.Context, c *chunk) {
	j.tgt.b = &c.out
	defer j.w.Flush()
	for i := range c.rows {
		if ctx.Err() != nil {
			return
		}
		r := &c.rows[i]
		rec := append(j.rec[:0], r.fields...)
		for range r.pad {
			rec = append(rec, "")
		}
		res, msg := engine.Result{}, r.err
		if msg == "" {
			res = j.e.Check(j.address(r.fields), j.detail)
			clear(j.lines) // hold no row past its judging
			if res.Status.String() == "" {
				msg = fmt.Sprintf("line %d: the engine gave no verdict", r.line)
			}
		}
		if msg != "" {
			rec = append(rec, statusError, "", msg)
			if j.detail {
				for range detailColumns {
					rec = append(rec, "")
				}
			}
			c.counts[0]++
		} else {
			rec = append(rec, res.Status.String(), res.Nation, res.Message)
			if j.detail {
				for _, d := range detailColumns {
					v := ""
					if res.Detail != nil {
						v = d.get(res.Detail)
					}
					rec = append(rec, v)
				}
			}
			c.counts[statusIndex(res)]++
		}
		j.w.Write(rec) // into a bytes.Buffer: cannot fail
		c.n++
		clear(rec)
		j.rec = rec[:0]
	}
	c.complete = true
}

// address returns the address lines of a record.
func (j *csvJudge) address(f []string) []string {
	lines := j.lines[:0]
	switch {
	case j.cols == nil && len(f) == 1:
		lines = engine.SplitLines(lines, f[0])
	case j.cols == nil:
		for _, s := range f {
			lines = splitNewlines(lines, s)
		}
	case len(j.cols) == 1:
		lines = engine.SplitLines(lines, field(f, j.cols[0]))
	default:
		for _, k := range j.cols {
			lines = splitNewlines(lines, field(f, k))
		}
	}
	j.lines = lines
	return lines
}

func field(f []string, k int) string {
	if k < len(f) {
		return f[k]
	}
	return ""
}
