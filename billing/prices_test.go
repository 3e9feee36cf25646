package billing

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/datafiles"
	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/pgdb"
)

func TestMain(m *testing.M) { testpg.Main(m) }

func TestPostalPrice(t *testing.T) {
	tab := DefaultTable
	f := func(sheets int, duplex, colour bool, env, postage string, want int64) {
		t.Helper()
		got, err := tab.Postal(sheets, duplex, colour, env, postage)
		if err != nil || got != want {
			t.Fatalf("Postal(%d, %v, %v, %s, %s) = %d, %v; want %d", sheets, duplex, colour, env, postage, got, err, want)
		}
	}
	f(1, false, false, "DL", "regular", 12+6+170)
	f(3, true, false, "DL", "priority", 3*15+6+270)
	f(6, false, true, "C4", "regular", 6*40+20+350)
	f(2, true, true, "C4", "priority", 2*55+20+510)
	if _, err := tab.Postal(1, false, false, "B4", "regular"); err == nil {
		t.Fatal("an unknown envelope was priced")
	}
}

// pricesBackend is where price tables are kept: node returns the Prices of
// another node over the same tables each time it is called; write puts a
// table's raw bytes there as the operator does, read reads them.
type pricesBackend struct {
	name string
	new  func(t *testing.T) (node func() Prices, raw datafiles.Files)
}

var pricesBackends = []pricesBackend{
	{"dir", func(t *testing.T) (func() Prices, datafiles.Files) {
		dir := t.TempDir()
		return func() Prices { return Prices{Dir: dir} }, datafiles.Dir(dir)
	}},
	{"postgres", func(t *testing.T) (func() Prices, datafiles.Files) {
		url := testpg.NewDatabase(t)
		node := func() datafiles.Files {
			db, err := pgdb.Open(context.Background(), pgdb.Config{URL: url})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(db.Close)
			// no cache: a table written on one node is read on the other at
			// once (datafiles' tests cover the cache)
			f, err := datafiles.NewPostgres(db, datafiles.Options{CacheFor: -1})
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		return func() Prices { return Prices{Files: node()} }, node()
	}},
}

func TestPricesFiles(t *testing.T) {
	for _, b := range pricesBackends {
		t.Run(b.name, func(t *testing.T) {
			node, raw := b.new(t)
			testPricesFiles(t, node(), raw)
		})
	}
}

func testPricesFiles(t *testing.T, p Prices, raw datafiles.Files) {
	write := func(name, body string) {
		t.Helper()
		if err := raw.Write(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// no file: the default is written for the operator to edit
	tab, err := p.For("ABC12345")
	if err != nil || tab.Postage["regular"]["DL"] != 170 {
		t.Fatalf("%+v %v", tab, err)
	}
	if b, err := raw.Read("prices.json", maxTableBytes); err != nil || !strings.Contains(string(b), `"regular": {`) {
		t.Fatalf("the default table was not written: %v", err)
	}
	// an account's own table
	own := `{"currency":"AUD","sheet":{"mono":1,"colour":2},"duplex_sheet":{"mono":3,"colour":4},"envelope":{"DL":5,"C4":6},
	"postage":{"regular":{"DL":7,"C4":8},"priority":{"DL":9,"C4":10}},"email":1,"sms_part":1,"fax_page":1}`
	write("prices/ABC12345.json", own)
	if tab, err = p.For("ABC12345"); err != nil || tab.Postage["priority"]["C4"] != 10 {
		t.Fatalf("own table: %+v %v", tab, err)
	}
	if tab, _ = p.For("XYZ99999"); tab.Postage["priority"]["C4"] != 510 {
		t.Fatal("another account got the first one's table")
	}
	if tab, _ = p.For("../prices"); tab.Postage["priority"]["C4"] != 510 {
		t.Fatal("an account code with a path was read as a file")
	}
	// broken tables: a located error, never a zero price
	bad := func(body, want string) {
		t.Helper()
		write("prices/BAD00001.json", body)
		_, err := p.For("BAD00001")
		if err == nil || !strings.Contains(err.Error(), "BAD00001.json") || !strings.Contains(err.Error(), want) {
			t.Fatalf("%.40s: %v, want %q", body, err, want)
		}
	}
	bad(`{`, "price table")
	bad(strings.Replace(own, `"envelope"`, `"envelop"`, 1), "envelop")
	bad(strings.Replace(own, `"C4":8`, `"C5":8`, 1), "postage.regular.C4 is missing")
	bad(strings.Replace(own, `"mono":1,`, `"mono":-1,`, 1), "sheet.mono is negative")
	bad(`[]`, "price table")
	if d, ok := raw.(datafiles.Dir); ok { // the database holds no file this large
		os.WriteFile(d.Where("prices/BAD00001.json"), []byte(own+strings.Repeat(" ", maxTableBytes)), 0o644)
		if _, err := p.For("BAD00001"); err == nil || !strings.Contains(err.Error(), "not a file of at most 1048576 bytes") {
			t.Fatalf("a large table: %v", err)
		}
	}
	// a broken default table is an error too, not the placeholders
	write("prices.json", `{"currency":"AUD"}`)
	if _, err := p.For("XYZ99999"); err == nil || !strings.Contains(err.Error(), "prices.json") {
		t.Fatalf("a broken default table: %v", err)
	}
}

// TestPricesTwoNodes: the default table is made once whichever nodes ask
// at once; a table the operator changes is the one every node reads.
func TestPricesTwoNodes(t *testing.T) {
	for _, b := range pricesBackends {
		t.Run(b.name, func(t *testing.T) {
			node, raw := b.new(t)
			nodes := []Prices{node(), node()}
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if tab, err := nodes[i%2].For("ABC12345"); err != nil || tab.Postage["regular"]["DL"] != 170 {
						t.Errorf("%+v %v", tab, err)
					}
				}()
			}
			wg.Wait()
			own := strings.Replace(`{"currency":"AUD","sheet":{"mono":1,"colour":2},"duplex_sheet":{"mono":3,"colour":4},"envelope":{"DL":5,"C4":6},
	"postage":{"regular":{"DL":7,"C4":8},"priority":{"DL":9,"C4":10}},"email":1,"sms_part":1,"fax_page":1}`, "\n", "", 1)
			if err := raw.Write("prices.json", []byte(own), 0o644); err != nil {
				t.Fatal(err)
			}
			for i, p := range nodes {
				if tab, err := p.For("ABC12345"); err != nil || tab.Postage["regular"]["DL"] != 7 {
					t.Fatalf("node %d after the edit: %+v %v", i, tab, err)
				}
			}
		})
	}
}

func TestParseTable(t *testing.T) {
	b, _ := json.Marshal(DefaultTable)
	if tab, err := ParseTable(b); err != nil || tab.Email != DefaultTable.Email {
		t.Fatalf("%+v %v", tab, err)
	}
	f := func(body, want string) {
		t.Helper()
		if _, err := ParseTable([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40s: %v, want %q", body, err, want)
		}
	}
	f(``, "EOF")
	f(`{"currency":"AUD"}`, "envelope.DL is missing")
	f(`{"prices":1}`, "prices")
	f(strings.Repeat(" ", maxTableBytes+1), "more than")
}
