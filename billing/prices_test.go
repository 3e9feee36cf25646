package billing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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

func TestPricesFiles(t *testing.T) {
	dir := t.TempDir()
	p := Prices{Dir: dir}
	// no file: the default is written for the operator to edit
	tab, err := p.For("ABC12345")
	if err != nil || tab.Postage["regular"]["DL"] != 170 {
		t.Fatalf("%+v %v", tab, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "prices.json")); err != nil {
		t.Fatal("the default table was not written")
	}
	// an account's own table
	own := `{"currency":"AUD","sheet":{"mono":1,"colour":2},"duplex_sheet":{"mono":3,"colour":4},"envelope":{"DL":5,"C4":6},
	"postage":{"regular":{"DL":7,"C4":8},"priority":{"DL":9,"C4":10}},"email":1,"sms_part":1,"fax_page":1}`
	os.MkdirAll(filepath.Join(dir, "prices"), 0o755)
	os.WriteFile(filepath.Join(dir, "prices", "ABC12345.json"), []byte(own), 0o644)
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
		os.WriteFile(filepath.Join(dir, "prices", "BAD00001.json"), []byte(body), 0o644)
		_, err := p.For("BAD00001")
		if err == nil || !strings.Contains(err.Error(), "BAD00001.json") || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v, want %q", body, err, want)
		}
	}
	bad(`{`, "price table")
	bad(strings.Replace(own, `"envelope"`, `"envelop"`, 1), "envelop")
	bad(strings.Replace(own, `"C4":8`, `"C5":8`, 1), "postage.regular.C4 is missing")
	bad(strings.Replace(own, `"mono":1,`, `"mono":-1,`, 1), "sheet.mono is negative")
	bad(`[]`, "price table")
}
