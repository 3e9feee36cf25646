package bulk

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/data"
	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/progress"
)

func state(tb testing.TB, abbr string) engine.State {
	for i := range data.States {
		if data.States[i].Abbr == abbr {
			return engine.State(i)
		}
	}
	tb.Fatalf("no state %s", abbr)
	return engine.NoState
}

// newEngine judges against a tiny reference: Smithville NSW 2987 and
// Melbourne VIC 3000, and two countries.
func newEngine(tb testing.TB) *engine.Engine {
	tb.Helper()
	b := engine.NewReferenceBuilder()
	for _, l := range []engine.Locality{
		{Name: "Smithville", State: state(tb, "NSW"), Postcode: 2987, Sources: engine.SourceGNAF},
		{Name: "Melbourne", State: state(tb, "VIC"), Postcode: 3000, Sources: engine.SourceGNAF},
	} {
		if _, err := b.AddLocality(l); err != nil {
			tb.Fatal(err)
		}
	}
	b.AddCountry("AUS", "Australia", nil, false)
	b.AddCountry("NZL", "New Zealand", nil, false)
	b.AddCountry("GBR", "United Kingdom", []string{"UK", "England"}, false)
	e, err := engine.New(b.Build(), engine.Config{CacheEntries: -1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(e.Close)
	return e
}

// addresses giving each verdict, as one string.
const (
	aMatched   = "Joe Blogs, 10 Jones St, Smithville NSW 2987"
	aUnmatched = "Joe Blogs, 10 Jones St, Smythville NSW 2987"
	aInvalid   = "Joe Blogs, 10 Jones St, Smithville NSW 3000"
	aIntl      = "Joe Blogs, 10 High St, London, UK"
)

var quiet = progress.Options{Quiet: true}

// run runs Run and checks what holds for every run: the summary adds up.
func run(t testing.TB, e *engine.Engine, in string, cfg Config) (string, Summary, error) {
	t.Helper()
	cfg.Progress = quiet
	var out bytes.Buffer
	sum, err := Run(context.Background(), e, strings.NewReader(in), &out, cfg)
	n := sum.Errors
	for _, v := range sum.ByStatus {
		n += v
	}
	if n != sum.Rows || len(sum.ByStatus) != 4 {
		t.Errorf("summary does not add up: %+v", sum)
	}
	return out.String(), sum, err
}

func readCSV(t testing.TB, s string, comma rune) [][]string {
	t.Helper()
	r := csv.NewReader(strings.NewReader(s))
	r.FieldsPerRecord = -1
	if comma != 0 {
		r.Comma = comma
	}
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("output is not CSV: %v\n%s", err, s)
	}
	return recs
}

// tally counts statuses like Summary does.
func tally(statuses []string) (map[string]int64, int64) {
	m := map[string]int64{"matched": 0, "unmatched": 0, "invalid": 0, "international": 0}
	var errs int64
	for _, s := range statuses {
		if s == "error" {
			errs++
		} else {
			m[s]++
		}
	}
	return m, errs
}

func TestCSV(t *testing.T) {
	e := newEngine(t)
	// f runs the CSV rows (joined by newlines) and checks that every output
	// row is its input row padded to the header's width, then the status
	// wanted (one per data row), and that the summary counts them.
	f := func(cfg Config, rows []string, want ...string) {
		t.Helper()
		in := strings.Join(rows, "\n") + "\n"
		out, sum, err := run(t, e, in, cfg)
		if err != nil {
			t.Fatalf("%q: %v", rows, err)
		}
		inRecs := readCSVLoose(strings.TrimPrefix(in, "\ufeff"), cfg.Comma)
		got := readCSV(t, out, cfg.Comma)
		width := len(inRecs[0])
		if !cfg.NoHeader {
			wantHead := append(slices.Clone(inRecs[0]), "status", "nation", "message")
			if !slices.Equal(got[0], wantHead) {
				t.Errorf("%q: header %q, want %q", rows, got[0], wantHead)
			}
			inRecs, got = inRecs[1:], got[1:]
		}
		if len(got) != len(want) || len(inRecs) != len(want) {
			t.Fatalf("%q: %d rows out, %d in, want %d\n%s", rows, len(got), len(inRecs), len(want), out)
		}
		var statuses []string
		for i, g := range got {
			w := max(width, len(inRecs[i]))
			if len(g) != w+3 {
				t.Errorf("%q row %d: %d fields, want %d: %q", rows, i, len(g), w+3, g)
				continue
			}
			padded := append(slices.Clone(inRecs[i]), make([]string, w-len(inRecs[i]))...)
			if want[i] != "error" && !slices.Equal(g[:w], padded) {
				t.Errorf("%q row %d: input written as %q", rows, i, g[:w])
			}
			if g[w] != want[i] {
				t.Errorf("%q row %d: status %q (%q), want %q", rows, i, g[w], g[w+2], want[i])
			}
			if (g[w] == "invalid" || g[w] == "error") != (g[w+2] != "") {
				t.Errorf("%q row %d: %s with message %q", rows, i, g[w], g[w+2])
			}
			statuses = append(statuses, g[w])
		}
		m, errs := tally(statuses)
		if sum.Rows != int64(len(want)) || sum.Errors != errs || !maps(sum.ByStatus, m) {
			t.Errorf("%q: summary %+v, rows say %v and %d errors", rows, sum, m, errs)
		}
	}
	m, u, inv, intl, bad := "matched", "unmatched", "invalid", "international", "error"
	byName := Config{Columns: []string{"name", "street", "town"}}
	q := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

	// header and columns by name, in any order and case
	f(byName, []string{"id,name,street,town,note", "1,Joe Blogs,10 Jones St,Smithville NSW 2987,x"}, m)
	f(byName, []string{"id,town,street,name", "1,Smithville NSW 2987,10 Jones St,Joe Blogs"}, m)
	f(Config{Columns: []string{"Name", " STREET ", "Town"}}, []string{"id,name,street,town", "1,Joe Blogs,10 Jones St,Smithville NSW 2987"}, m)
	f(byName, []string{"name,street,town", "Joe Blogs,10 Jones St,Smythville NSW 2987", "Joe Blogs,10 Jones St,Smithville NSW 3000",
		"Joe Blogs,\"10 High St, London\",UK", "Joe Blogs,10 Jones St,Melbourne VIC 3000"}, u, inv, intl, m)
	// short rows are padded, long rows keep their fields
	f(byName, []string{"id,name,street,town", "1,Joe Blogs,10 Jones St", "2,Joe Blogs,10 Jones St,Melbourne VIC 3000,extra,more"}, inv, m)
	// by index, with and without a header
	f(Config{Columns: []string{"2", "3", "4"}, NoHeader: true}, []string{"1,Joe Blogs,10 Jones St,Smithville NSW 2987", "2,Joe Blogs,10 Jones St,Smithville NSW 3000"}, m, inv)
	f(Config{Columns: []string{"2", "3", "4"}}, []string{"a,b,c,d", "1,Joe Blogs,10 Jones St,Smithville NSW 2987"}, m)
	f(Config{Columns: []string{"2", "4", "5", "6"}, NoHeader: true}, []string{"x,Joe Blogs,y,10 Jones St,Smithville,NSW 2987"}, m)
	// every column
	f(Config{}, []string{"name,street,town", "Joe Blogs,10 Jones St,Smithville NSW 2987", "Joe Blogs,10 Jones St"}, m, inv)
	f(Config{NoHeader: true}, []string{"Joe Blogs,10 Jones St,Smithville,NSW,2987"}, m)
	// one field: split as a string address; several: each field split at newlines
	f(Config{}, []string{"address", q(aMatched), q(aUnmatched), q(aIntl), q("Joe Blogs\n10 Jones St\nSmithville NSW 2987")}, m, u, intl, m)
	f(Config{Columns: []string{"address"}}, []string{"id,address", "1," + q(aMatched)}, m)
	f(Config{Columns: []string{"who", "where"}}, []string{"who,where", "Joe Blogs," + q("10 Jones St\r\nSmithville NSW 2987")}, m)
	// another separator
	f(Config{Comma: ';', Columns: []string{"name", "street", "town"}}, []string{"name;street;town", "Joe Blogs;U 2, 10 Jones St;Smithville NSW 2987"}, m)
	f(Config{Comma: '\t'}, []string{"name\tstreet\ttown", "Joe Blogs\t10 Jones St\tSmithville NSW 2987"}, m)
	// bad rows do not stop the run
	f(byName, []string{"id,name,street,town", `1,Joe "Blogs",10 Jones St,Smithville NSW 2987`, "2,Joe Blogs,10 Jones St,Smithville NSW 2987"}, bad, m)
	f(byName, []string{"id,name,street,town", `1,"Joe" Blogs,10 Jones St,Smithville NSW 2987`, "2,Joe Blogs,10 Jones St,Melbourne VIC 3000", `3,"x`}, bad, m, bad)
	// a byte order mark and CRLF line ends
	f(byName, []string{"\ufeffname,street,town\r", "Joe Blogs,10 Jones St,Smithville NSW 2987\r"}, m)
}

// readCSVLoose reads records as Run does, keeping going after a fault.
func readCSVLoose(s string, comma rune) [][]string {
	r := csv.NewReader(strings.NewReader(s))
	r.FieldsPerRecord = -1
	if comma != 0 {
		r.Comma = comma
	}
	var recs [][]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return recs
		}
		recs = append(recs, rec)
	}
}

func maps(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestCSVErrorRows(t *testing.T) {
	e := newEngine(t)
	in := "id,name,street,town\n1,Joe \"Blogs\",10 Jones St,Smithville NSW 2987\n2,Joe Blogs,10 Jones St,Smithville NSW 2987\n"
	out, sum, err := run(t, e, in, Config{Columns: []string{"name", "street", "town"}})
	if err != nil {
		t.Fatal(err)
	}
	recs := readCSV(t, out, 0)
	want := []string{"1", "", "", "", "error", "", `line 2, column 7: bare " in non-quoted-field`}
	if !slices.Equal(recs[1], want) {
		t.Errorf("error row %q, want %q", recs[1], want)
	}
	if sum.Errors != 1 || sum.ByStatus["matched"] != 1 {
		t.Errorf("summary %+v", sum)
	}
}

func TestCSVDetail(t *testing.T) {
	e := newEngine(t)
	out, _, err := run(t, e, "name,street,town\nJoe Blogs,10 Jones St,Smithville NSW 2987\nx,y\n", Config{Detail: true})
	if err != nil {
		t.Fatal(err)
	}
	recs := readCSV(t, out, 0)
	if len(recs) != 3 || len(recs[0]) != 6+len(detailColumns) || len(recs[1]) != len(recs[0]) || len(recs[2]) != len(recs[0]) {
		t.Fatalf("detail output:\n%s", out)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for k, v := range map[string]string{"status": "matched", "detail_locality": "SMITHVILLE", "detail_state": "NSW",
		"detail_postcode": "2987", "detail_street_name": "JONES", "detail_street_type": "STREET", "detail_number_first": "10",
		"detail_granularity": "locality", "detail_recipients": "JOE BLOGS"} {
		if recs[1][col[k]] != v {
			t.Errorf("%s = %q, want %q", k, recs[1][col[k]], v)
		}
	}
	if recs[2][col["status"]] != "invalid" || recs[2][col["detail_faults"]] != "COMPONENT_COUNT" {
		t.Errorf("invalid row %q", recs[2])
	}
}

func TestJSONL(t *testing.T) {
	e := newEngine(t)
	// f runs the lines and compares the output lines exactly.
	f := func(cfg Config, in string, want ...string) {
		t.Helper()
		out, sum, err := run(t, e, in, cfg)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if out == "" {
			got = nil
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q:\ngot  %q\nwant %q", in, got, want)
		}
		var statuses []string
		for _, g := range got {
			var v struct{ Status string }
			if err := json.Unmarshal([]byte(g), &v); err != nil {
				t.Errorf("output line %q: %v", g, err)
			}
			statuses = append(statuses, v.Status)
		}
		m, errs := tally(statuses)
		if sum.Rows != int64(len(want)) || sum.Errors != errs || !maps(sum.ByStatus, m) {
			t.Errorf("%q: summary %+v, rows say %v and %d errors", in, sum, m, errs)
		}
	}
	ok := `"status":"matched","nation":"AUS"`
	j := Config{Format: "jsonl"}

	// "address" as a string and as an array, other fields kept as written
	f(Config{}, `{"id":7,"address":"`+aMatched+`"}`, `{"id":7,"address":"`+aMatched+`",`+ok+`}`)
	f(Config{}, `{ "address" : ["Joe Blogs", "10 Jones St", "Smithville NSW 2987"], "x": {"y": [1, 2.5e3, null]} }  `,
		`{ "address" : ["Joe Blogs", "10 Jones St", "Smithville NSW 2987"], "x": {"y": [1, 2.5e3, null]},`+ok+`}`)
	f(Config{}, `{"address":"`+aUnmatched+`"}`+"\r\n\n  \n"+`{"address":"`+aIntl+`"}`,
		`{"address":"`+aUnmatched+`","status":"unmatched","nation":"AUS"}`, `{"address":"`+aIntl+`","status":"international","nation":"GBR"}`)
	// lines that are the address themselves
	f(Config{}, `["Joe Blogs","10 Jones St","Smithville NSW 2987"]`, `{"address":["Joe Blogs","10 Jones St","Smithville NSW 2987"],`+ok+`}`)
	f(j, `"`+aMatched+`"`, `{"address":"`+aMatched+`",`+ok+`}`)
	f(j, `"Joe Blogs\n10 Jones St\nSmithville NSW 2987"`, `{"address":"Joe Blogs\n10 Jones St\nSmithville NSW 2987",`+ok+`}`)
	// without "address": every string field in order
	f(Config{}, `{"n":1,"name":"Joe Blogs","street":"10 Jones St","town":"Smithville NSW 2987","ok":true}`,
		`{"n":1,"name":"Joe Blogs","street":"10 Jones St","town":"Smithville NSW 2987","ok":true,`+ok+`}`)
	f(Config{}, `{"only":"`+aMatched+`"}`, `{"only":"`+aMatched+`",`+ok+`}`)
	f(Config{}, `{}`, `{"status":"invalid","nation":"AUS","message":"an address needs 3 to 6 lines, this one has 0"}`)
	// named fields: numbers as written, missing and null as empty
	f(Config{Columns: []string{"name", "street", "town", "state", "pc"}},
		`{"pc":2987,"state":"NSW","town":"Smithville","street":"10 Jones St","unit":null,"name":"Joe Blogs"}`,
		`{"pc":2987,"state":"NSW","town":"Smithville","street":"10 Jones St","unit":null,"name":"Joe Blogs",`+ok+`}`)
	f(Config{Columns: []string{"name", "unit", "street", "town"}}, `{"name":"Joe Blogs","unit":null,"street":"10 Jones St","town":"Smithville NSW 2987"}`,
		`{"name":"Joe Blogs","unit":null,"street":"10 Jones St","town":"Smithville NSW 2987",`+ok+`}`)
	f(Config{Columns: []string{"addr"}}, `{"addr":"`+aMatched+`","address":"x"}`, `{"addr":"`+aMatched+`","address":"x",`+ok+`}`)
	f(Config{Columns: []string{"addr"}}, `{"addr":["Joe Blogs","10 Jones St","Smithville NSW 2987"]}`, `{"addr":["Joe Blogs","10 Jones St","Smithville NSW 2987"],`+ok+`}`)
	// the input's own verdict fields give way; escapes in keys count
	f(Config{}, `{"status":"old","address":"`+aMatched+`","n\u0061tion":"X","message":"m","detail":1}`,
		`{"address":"`+aMatched+`","detail":1,`+ok+`}`)
	// ... and so do keys that differ from them only by case, which
	// case-insensitive decoders (Go, PowerShell) would read as theirs
	f(Config{}, `{"Status":"old","address":"`+aMatched+`","NATION":"X","Message":"m","Detail":1,"ſtatus":2,"statuses":3}`,
		`{"address":"`+aMatched+`","Detail":1,"statuses":3,`+ok+`}`)
	out, _, err := run(t, e, `{"address":"`+aMatched+`","DETAIL":1,"deTail":2,"detaiL":null}`, Config{Detail: true})
	if keys, err2 := topKeys([]byte(out)); err != nil || err2 != nil || !slices.Equal(keys, []string{"address", "status", "nation", "detail"}) {
		t.Errorf("detail with DETAIL keys: %s (%v, %v)", out, err, err2)
	}
	// the fields given way are not address lines either: lodge check
	// reads its own output as it read the input
	f(Config{}, `{"name":"Joe Blogs","street":"10 Jones St","town":"Smithville NSW 2987","Status":"x","nation":"AUS","message":"an old verdict"}`,
		`{"name":"Joe Blogs","street":"10 Jones St","town":"Smithville NSW 2987",`+ok+`}`)
	// detail
	out, _, err = run(t, e, `{"address":"`+aMatched+`","detail":"mine"}`, Config{Detail: true})
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Address string
		Status  string
		Detail  *engine.Detail
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Status != "matched" || v.Detail == nil || v.Detail.Locality != "SMITHVILLE" || strings.Contains(out, "mine") {
		t.Errorf("detail output %s (%v)", out, err)
	}
}

func TestJSONLErrorRows(t *testing.T) {
	e := newEngine(t)
	f := func(in string, want ...string) {
		t.Helper()
		out, sum, err := run(t, e, in, Config{Format: "jsonl"})
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if !slices.Equal(got, want) {
			t.Errorf("%q:\ngot  %q\nwant %q", in, got, want)
		}
		errs := int64(strings.Count(out, `"status":"error"`))
		if sum.Errors != errs || sum.Rows != int64(len(want)) {
			t.Errorf("%q: summary %+v", in, sum)
		}
	}
	ok := `{"address":"` + aMatched + `","status":"matched","nation":"AUS"}`
	good := `{"address":"` + aMatched + `"}`
	errMsg := func(msg string) string { return `"status":"error","nation":"","message":"` + msg + `"}` }

	f(`{"address": "x"`+"\n"+good, `{"input":"{\"address\": \"x\"",`+errMsg(`line 1 is not valid JSON`), ok)
	f(good+"\n"+`{"a":1}{}`+"\n"+good, ok, `{"input":"{\"a\":1}{}",`+errMsg(`line 2 is not valid JSON`), ok)
	f("42\n"+good+"\nnull", `{"address":42,`+errMsg(`line 1: a JSON number is not an address`), ok, `{"address":null,`+errMsg(`line 3: a JSON null is not an address`))
	f(`{"id":1,"address":{"a":1}}`, `{"id":1,"address":{"a":1},`+errMsg(`line 1: field \"address\" is a JSON object, not a string or an array of strings`))
	f(`["a",["b"]]`, `{"address":["a",["b"]],`+errMsg(`line 1: address: line 2 is not a string`))
	f(strings.Repeat("[", 100)+strings.Repeat("]", 100), `{"input":"`+strings.Repeat("[", 100)+strings.Repeat("]", 100)+`",`+errMsg(`line 1: JSON nested deeper than 64 levels`))
	f("\n\n{\"x\":\"\xff\"\n", `{"input":"{\"x\":\"\ufffd\"",`+errMsg(`line 3 is not valid JSON`))
	// over-long lines are skipped to their end
	long := `{"address":"` + strings.Repeat("a", MaxRowBytes) + `"}`
	f(good+"\n"+long+"\n"+good, ok, `{`+errMsg(fmt.Sprintf("line 2 is longer than %d bytes", MaxRowBytes)), ok)
	f(good+"\n"+long, ok, `{`+errMsg(fmt.Sprintf("line 2 is longer than %d bytes", MaxRowBytes)))
	f(strings.Repeat(" ", MaxRowBytes-len(good))+good+"\r\n"+good, ok, ok) // exactly the limit
	// named fields absent
	out, _, err := run(t, e, `{"a":1}`, Config{Columns: []string{"street", "town"}})
	if err != nil || out != `{"a":1,`+errMsg(`line 1: none of the fields \"street\", \"town\" is in this object`)+"\n" {
		t.Errorf("no named field: %s (%v)", out, err)
	}
}

func TestCSVLongRecords(t *testing.T) {
	e := newEngine(t)
	head := "name,street,town,pad\n"
	good := "Joe Blogs,10 Jones St,Smithville NSW 2987,\n"
	f := func(in string, want ...string) {
		t.Helper()
		out, sum, err := run(t, e, in, Config{Columns: []string{"name", "street", "town"}})
		if err != nil {
			t.Fatalf("%v", err)
		}
		recs := readCSV(t, out, 0)[1:]
		var got []string
		for _, r := range recs {
			got = append(got, r[4]+" "+r[6])
		}
		if !slices.Equal(got, want) {
			t.Errorf("got %.300q, want %.300q", got, want)
		}
		if sum.Rows != int64(len(want)) {
			t.Errorf("summary %+v", sum)
		}
	}
	// a record at the limit (line end included) is read, one byte more is not
	exact := strings.TrimSuffix(good, "\n") + strings.Repeat("x", MaxRowBytes-len(good)) + "\n"
	f(head+exact+good, "matched ", "matched ")
	f(head+good+"x"+exact+good, "matched ", fmt.Sprintf("error line 3: record longer than %d bytes", MaxRowBytes), "matched ")
	// far longer: reading resumes after the line where the limit was reached
	big := strings.Repeat("x", MaxRowBytes+10_000)
	f(head+good+"a,b,c,"+big+"\n"+good, "matched ", fmt.Sprintf("error line 3: record longer than %d bytes (a quote not closed?); skipped to the end of this line", MaxRowBytes), "matched ")
	f(head+good+"a,b,c,\""+big+"\"\n"+good, "matched ", fmt.Sprintf("error line 3: record longer than %d bytes (a quote not closed?); skipped to the end of this line", MaxRowBytes), "matched ")
	// a quote not closed: the lines up to the limit are the error row
	out, sum, err := run(t, e, head+good+"a,b,\"c\n"+strings.Repeat(good, 30_000), Config{})
	recs := readCSV(t, out, 0)
	var n int
	if err != nil || len(recs) < 3 || recs[1][4] != "matched" || recs[2][4] != "error" {
		t.Fatalf("unclosed quote: %v %.500q", err, recs)
	}
	if _, err := fmt.Sscanf(recs[2][6], "line %d:", &n); err != nil || n < 3+MaxRowBytes/len(good) || n > 4+(MaxRowBytes+csvSlack)/len(good) {
		t.Errorf("unclosed quote: %q", recs[2][6])
	}
	if len(recs) != 3+(30_003-n) || // header, row 2, the error row, the lines after it
		sum.Rows != int64(len(recs)-1) || sum.ByStatus["matched"] != sum.Rows-1 {
		t.Errorf("unclosed quote ending line %d: %d rows, summary %+v", n, len(recs)-1, sum)
	}
	// a quote never closed before the end
	f(head+good+"a,\"b\n"+good+good, "matched ", `error lines 3 to 5, column 44: extraneous or missing " in quoted-field`)
}

func TestConfigErrors(t *testing.T) {
	e := newEngine(t)
	f := func(cfg Config, in, want string) {
		t.Helper()
		out, _, err := run(t, e, in, cfg)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: error %v, want %q", cfg.Columns, err, want)
		}
		if out != "" {
			t.Errorf("%+v: wrote %q before failing", cfg.Columns, out)
		}
	}
	in := "id,name,street,town\n1,Joe Blogs,10 Jones St,Smithville NSW 2987\n"
	f(Config{Columns: []string{"name", "suburb"}}, in, `column "suburb" is not in the CSV header; its columns are 1 "id", 2 "name", 3 "street", 4 "town"`)
	f(Config{Columns: []string{"5"}}, in, `column 5: the CSV header has 4 columns`)
	f(Config{Columns: []string{"0"}}, in, `indexes start at 1`)
	f(Config{Columns: []string{"name"}, NoHeader: true}, in, `without a header row, name columns by 1-based index`)
	f(Config{Columns: []string{""}}, in, `empty column name`)
	f(Config{Format: "xml"}, in, `unknown format "xml"`)
	f(Config{Comma: '"'}, in, `cannot separate`)
	f(Config{}, "a,\"b\"c\n", `reading the CSV header`)
}

func TestEmptyInput(t *testing.T) {
	e := newEngine(t)
	for _, in := range []string{"", "\n\n", "\ufeff", "\ufeff\r\n"} {
		for _, cfg := range []Config{{}, {NoHeader: true}, {Format: "jsonl"}, {Columns: []string{"x"}}} {
			out, sum, err := run(t, e, in, cfg)
			if err != nil || sum.Rows != 0 || out != "" {
				t.Errorf("%q %+v: %q %+v %v", in, cfg, out, sum, err)
			}
		}
	}
}

// stutter gives its input in pieces of random size, so that the reader
// often finds nothing buffered and sends short chunks.
type stutter struct {
	s   string
	rnd *rand.Rand
}

func (r *stutter) Read(p []byte) (int, error) {
	if len(r.s) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.s), 1+r.rnd.IntN(3000))
	copy(p, r.s[:n])
	r.s = r.s[n:]
	return n, nil
}

func TestOrder(t *testing.T) {
	e := newEngine(t)
	addrs := []string{aMatched, aUnmatched, aInvalid, aIntl}
	want := []string{"matched", "unmatched", "invalid", "international"}
	const n = 10_000
	var csvIn, jsonIn strings.Builder
	csvIn.WriteString("n,address,pad\n")
	for i := range n {
		fmt.Fprintf(&csvIn, "%d,%q,%s\n", i, addrs[i%7%4], strings.Repeat("p", i%50))
		fmt.Fprintf(&jsonIn, `{"n":%d,"address":%q}`+"\n", i, addrs[i%7%4])
	}
	for _, tc := range []struct {
		name string
		in   string
		r    func(string) io.Reader
	}{
		{"csv", csvIn.String(), func(s string) io.Reader { return strings.NewReader(s) }},
		{"csv-stutter", csvIn.String(), func(s string) io.Reader { return &stutter{s, rand.New(rand.NewPCG(1, 2))} }},
		{"jsonl", jsonIn.String(), func(s string) io.Reader { return strings.NewReader(s) }},
		{"jsonl-stutter", jsonIn.String(), func(s string) io.Reader { return &stutter{s, rand.New(rand.NewPCG(3, 4))} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			sum, err := Run(context.Background(), e, tc.r(tc.in), &out, Config{Workers: 4, Columns: []string{"address"}, Progress: quiet})
			if err != nil {
				t.Fatal(err)
			}
			var rows [][2]string // n, status
			if strings.HasPrefix(tc.name, "csv") {
				for _, r := range readCSV(t, out.String(), 0)[1:] {
					rows = append(rows, [2]string{r[0], r[3]})
				}
			} else {
				for l := range strings.Lines(out.String()) {
					var v struct {
						N      int
						Status string
					}
					if err := json.Unmarshal([]byte(l), &v); err != nil {
						t.Fatal(err)
					}
					rows = append(rows, [2]string{strconv.Itoa(v.N), v.Status})
				}
			}
			if len(rows) != n || sum.Rows != n {
				t.Fatalf("%d rows out, summary %d, want %d", len(rows), sum.Rows, n)
			}
			var statuses []string
			for i, r := range rows {
				if r[0] != strconv.Itoa(i) || r[1] != want[i%7%4] {
					t.Fatalf("row %d is %q, want %d %s", i, r, i, want[i%7%4])
				}
				statuses = append(statuses, r[1])
			}
			m, errs := tally(statuses)
			if !maps(sum.ByStatus, m) || sum.Errors != errs {
				t.Errorf("summary %+v, rows say %v", sum, m)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe to read while Run writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestCancel(t *testing.T) {
	e := newEngine(t)
	// cancelled before the start
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	if _, err := Run(ctx, e, strings.NewReader("a,b,c\n1,2,3\n"), &out, Config{Progress: quiet}); !errors.Is(err, context.Canceled) || out.Len() != 0 {
		t.Errorf("cancelled first: %v, wrote %q", err, out.String())
	}

	// cancelled while the input blocks: the rows read so far are written, in
	// order, and Run returns at once
	for _, format := range []string{"csv", "jsonl"} {
		pr, pw := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		var sout syncBuffer
		type result struct {
			sum Summary
			err error
		}
		res := make(chan result, 1)
		go func() {
			sum, err := Run(ctx, e, pr, &sout, Config{Format: format, Workers: 3, Progress: quiet})
			res <- result{sum, err}
		}()
		const n = 1500
		var in strings.Builder
		if format == "csv" {
			in.WriteString("n,name,street,town\n")
		}
		for i := range n {
			if format == "csv" {
				fmt.Fprintf(&in, "%d,Joe Blogs,10 Jones St,Smithville NSW 2987\n", i)
			} else {
				fmt.Fprintf(&in, `{"n":"%d","address":%q}`+"\n", i, aMatched)
			}
		}
		go pw.Write([]byte(in.String()))
		wantLines := n
		if format == "csv" {
			wantLines++
		}
		deadline := time.Now().Add(10 * time.Second)
		for strings.Count(sout.String(), "\n") < wantLines && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		cancel()
		select {
		case r := <-res:
			if !errors.Is(r.err, context.Canceled) {
				t.Errorf("%s: Run returned %v, want context.Canceled", format, r.err)
			}
			got := sout.String()
			if strings.Count(got, "\n") != wantLines || r.sum.Rows != n {
				t.Errorf("%s: %d lines written, summary %d rows, want %d", format, strings.Count(got, "\n"), r.sum.Rows, n)
			}
			prev := -1
			for i := 0; i < n; i += 100 {
				at := strings.Index(got, fmt.Sprintf("\n%d,Joe", i))
				if format == "jsonl" {
					at = strings.Index(got, fmt.Sprintf(`{"n":"%d",`, i))
				}
				if at <= prev {
					t.Errorf("%s: row %d missing or out of order", format, i)
				}
				prev = at
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Run did not return after cancel", format)
		}
		pr.Close()
	}
}

func TestSummaryString(t *testing.T) {
	s := Summary{Rows: 4, Errors: 1, Elapsed: 2 * time.Second,
		ByStatus: map[string]int64{"matched": 2, "unmatched": 1, "invalid": 0, "international": 0}}
	got := s.String()
	for _, want := range []string{"checked 4 rows in 2s (2 rows/s)", "matched", "50.0%", "unmatched", "25.0%", "international", "0.0%", "error"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary %q lacks %q", got, want)
		}
	}
	if strings.HasSuffix(got, "\n") {
		t.Errorf("summary ends with a newline: %q", got)
	}
	_ = Summary{}.String() // no division by zero
}

// failWriter fails after n bytes.
type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n -= len(p); w.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestWriteError(t *testing.T) {
	e := newEngine(t)
	var in strings.Builder
	in.WriteString("name,street,town\n")
	for range 5000 {
		in.WriteString("Joe Blogs,10 Jones St,Smithville NSW 2987\n")
	}
	_, err := Run(context.Background(), e, strings.NewReader(in.String()), &failWriter{n: 100}, Config{Progress: quiet})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("write error: %v", err)
	}
}

// errReader fails after its input.
type errReader struct{ r io.Reader }

func (r errReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err == io.EOF {
		return n, errors.New("connection reset")
	}
	return n, err
}

func TestReadError(t *testing.T) {
	e := newEngine(t)
	for _, in := range []string{"name,street,town\nJoe Blogs,10 Jones St,Smithville NSW 2987\n", `{"address":"` + aMatched + `"}` + "\n"} {
		var out bytes.Buffer
		sum, err := Run(context.Background(), e, errReader{strings.NewReader(in)}, &out, Config{Progress: quiet})
		if err == nil || !strings.Contains(err.Error(), "connection reset") || sum.Rows != 1 || !strings.Contains(out.String(), "matched") {
			t.Errorf("%q: %v, %+v, %q", in, err, sum, out.String())
		}
	}
}

func BenchmarkRunCSV(b *testing.B) {
	e := newEngine(b)
	var in strings.Builder
	in.WriteString("id,name,street,town\n")
	const n = 20_000
	for i := range n {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&in, "%d,Joe Blogs %d,%d Jones St,Smithville NSW 2987\n", i, i, i%300)
		case 1:
			fmt.Fprintf(&in, "%d,Unit %d,%d Smith Rd,Smythville NSW 2987\n", i, i%40, i%300)
		case 2:
			fmt.Fprintf(&in, "%d,PO Box %d,,Melbourne VIC 3000\n", i, i)
		default:
			fmt.Fprintf(&in, "%d,Ann Lee,%d High St,\"London, UK\"\n", i, i)
		}
	}
	s := in.String()
	b.SetBytes(int64(len(s)))
	start, runs := time.Now(), 0
	for b.Loop() {
		runs++
		if _, err := Run(context.Background(), e, strings.NewReader(s), io.Discard, Config{Columns: []string{"name", "street", "town"}, Progress: quiet}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(runs)/time.Since(start).Seconds(), "addresses/s")
}
