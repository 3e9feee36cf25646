package bulk

import (
	"bytes"
	"context"
	"encoding/csv"
	stdjson "encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"
)

var statusNames = []string{"matched", "unmatched", "invalid", "international", "error"}

// checkTally compares the statuses written with the summary.
func checkTally(t *testing.T, statuses []string, sum Summary) {
	t.Helper()
	for _, s := range statuses {
		if !slices.Contains(statusNames, s) {
			t.Fatalf("status %q written", s)
		}
	}
	m, errs := tally(statuses)
	if int64(len(statuses)) != sum.Rows || errs != sum.Errors || !maps(m, sum.ByStatus) {
		t.Fatalf("%d rows written, statuses %v and %d errors; summary %+v", len(statuses), m, errs, sum)
	}
}

// FuzzRunCSV feeds arbitrary bytes as CSV: Run must not panic, must write
// one row per input record (as encoding/csv counts them, going on after a
// fault) and count them right.
func FuzzRunCSV(f *testing.F) {
	f.Add([]byte("name,street,town\nJoe Blogs,10 Jones St,Smithville NSW 2987\n"), uint8(0))
	f.Add([]byte("a,b\n1,\"2\n3\",4\n\"x\n"), uint8(1))
	f.Add([]byte("\ufeffa;b\r\nJoe \"Blogs\";x\r\n\r\n;;;\n"), uint8(6))
	f.Add([]byte("\"\"\"\n,\n\"a\"b,c\n"), uint8(3))
	f.Add([]byte("x\n\"Joe Blogs\n10 Jones St\nSmithville NSW 2987\"\n"), uint8(4))
	e := newEngine(f)
	f.Fuzz(func(t *testing.T, in []byte, mode uint8) {
		cfg := Config{Format: "csv", Workers: 2, Progress: quiet, NoHeader: mode&1 != 0, Detail: mode&2 != 0}
		if mode&4 != 0 {
			cfg.Comma = ';'
		}
		if mode&8 != 0 {
			cfg.Columns = []string{"2", "1"}
		}
		var out bytes.Buffer
		sum, err := Run(context.Background(), e, bytes.NewReader(in), &out, cfg)

		// the records encoding/csv sees, the header aside
		in = bytes.TrimPrefix(in, []byte("\ufeff"))
		r := csv.NewReader(bytes.NewReader(in))
		r.FieldsPerRecord, r.Comma = -1, ','
		if cfg.Comma != 0 {
			r.Comma = cfg.Comma
		}
		records := 0
		for {
			if _, err := r.Read(); err == io.EOF {
				break
			}
			records++
		}
		if err != nil {
			// only a header that cannot be read fails a run here
			if cfg.NoHeader || out.Len() != 0 || sum.Rows != 0 {
				t.Fatalf("%v, with %d rows and %q written", err, sum.Rows, out.String())
			}
			return
		}
		if !cfg.NoHeader && records > 0 {
			records--
		}
		if sum.Rows != int64(records) {
			t.Fatalf("%d rows counted, encoding/csv reads %d", sum.Rows, records)
		}

		r = csv.NewReader(&out)
		r.FieldsPerRecord, r.Comma = -1, ','
		if cfg.Comma != 0 {
			r.Comma = cfg.Comma
		}
		outRecs, err := r.ReadAll()
		if err != nil {
			t.Fatalf("output is not CSV: %v", err)
		}
		if !cfg.NoHeader && len(outRecs) > 0 {
			outRecs = outRecs[1:]
		}
		verdict := len(verdictColumns)
		if cfg.Detail {
			verdict += len(detailColumns)
		}
		var statuses []string
		for _, rec := range outRecs {
			if len(rec) < verdict {
				t.Fatalf("row %q has no verdict", rec)
			}
			statuses = append(statuses, rec[len(rec)-verdict])
		}
		checkTally(t, statuses, sum)
	})
}

// FuzzRunJSONL feeds arbitrary bytes as JSON lines: Run must not panic,
// must write one JSON object per non-blank line and count them right.
func FuzzRunJSONL(f *testing.F) {
	f.Add([]byte(`{"address":"Joe Blogs, 10 Jones St, Smithville NSW 2987"}`+"\n"), uint8(0))
	f.Add([]byte(`["a","b",1]`+"\n\n"+`"x, y, z"`+"\r\n"+`{"status":1,"status":2}`), uint8(1))
	f.Add([]byte(`{"a":"x","b":"y","c":"z"} {}`+"\n"+`{`+"\n"+`nul`), uint8(2))
	f.Add([]byte(`{"street":["10 Jones St"],"town":"Smithville NSW 2987","name":7}`), uint8(3))
	f.Add([]byte(`{"Status":"x","NATION":1,"mEssage":null,"Detail":{},"ſtatus":"y","address":"a, b, c"}`), uint8(1))
	f.Add([]byte(`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["x"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`), uint8(0))
	e := newEngine(f)
	f.Fuzz(func(t *testing.T, in []byte, mode uint8) {
		cfg := Config{Format: "jsonl", Workers: 2, Progress: quiet, Detail: mode&1 != 0}
		if mode&2 != 0 {
			cfg.Columns = []string{"name", "street", "town"}
		}
		var out bytes.Buffer
		sum, err := Run(context.Background(), e, bytes.NewReader(in), &out, cfg)
		if err != nil {
			t.Fatal(err)
		}
		rows := 0
		for l := range bytes.Lines(bytes.TrimPrefix(in, []byte("\ufeff"))) {
			if len(bytes.TrimSpace(l)) > 0 {
				rows++
			}
		}
		if sum.Rows != int64(rows) {
			t.Fatalf("%d rows counted, %d lines", sum.Rows, rows)
		}
		// the input's own top-level keys, line by line
		var inKeys []map[string]bool
		for l := range bytes.Lines(bytes.TrimPrefix(in, []byte("\ufeff"))) {
			if len(bytes.TrimSpace(l)) == 0 {
				continue
			}
			m := map[string]bool{}
			keys, _ := topKeys(l)
			for _, k := range keys {
				m[k] = true
			}
			inKeys = append(inKeys, m)
		}
		var statuses []string
		i := 0
		for l := range bytes.Lines(out.Bytes()) {
			var v struct {
				Status string `json:"status"`
			}
			if !bytes.HasSuffix(l, []byte("\n")) || bytes.Count(l, []byte("\n")) != 1 {
				t.Fatalf("output line %q", l)
			}
			if err := json.Unmarshal(l, &v); err != nil {
				t.Fatalf("output line %q: %v", l, err)
			}
			keys, err := topKeys(l)
			if err != nil {
				t.Fatalf("output line %q: %v", l, err)
			}
			// No two keys are equal ignoring case, but for two that the
			// input line itself holds (kept as given).
			for a := range keys {
				for b := range a {
					if strings.EqualFold(keys[a], keys[b]) && !(i < len(inKeys) && inKeys[i][keys[a]] && inKeys[i][keys[b]]) {
						t.Fatalf("output line %q: keys %q and %q are equal ignoring case", l, keys[b], keys[a])
					}
				}
			}
			statuses = append(statuses, v.Status)
			i++
		}
		checkTally(t, statuses, sum)
	})
}

// topKeys returns the decoded keys of a JSON object's top level, in order.
func topKeys(line []byte) ([]string, error) {
	d := stdjson.NewDecoder(bytes.NewReader(line))
	if tok, err := d.Token(); err != nil || tok != stdjson.Delim('{') {
		return nil, fmt.Errorf("not an object (%v)", err)
	}
	var keys []string
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return keys, err
		}
		keys = append(keys, tok.(string))
		var skip stdjson.RawMessage
		if err := d.Decode(&skip); err != nil {
			return keys, err
		}
	}
	return keys, nil
}
