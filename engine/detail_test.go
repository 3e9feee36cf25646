package engine_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/engine"
)

// TestDetail checks the parsed components of the delivery line and the
// lines above it.
func TestDetail(t *testing.T) {
	e := newEngine(t, false)
	f := func(addr string, want engine.Detail) {
		t.Helper()
		r := e.CheckString(addr, true)
		got := *r.Detail
		// only the fields the case names are compared
		gv, wv := reflect.ValueOf(&got).Elem(), reflect.ValueOf(want)
		for i := 0; i < wv.NumField(); i++ {
			if wv.Field(i).IsZero() {
				continue
			}
			if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
				t.Errorf("%q: %s = %#v, want %#v (all: %+v)", addr, wv.Type().Field(i).Name, gv.Field(i).Interface(), wv.Field(i).Interface(), got)
			}
		}
	}
	f("Jo\n3/72 Charles St\nSt Kilda VIC 3182", engine.Detail{FlatType: "UNIT", FlatNumber: "3", NumberFirst: "72", StreetName: "CHARLES", StreetType: "STREET", Locality: "ST KILDA", State: "VIC", Postcode: "3182", Granularity: "locality"})
	f("Jo\nU 20\n25 Smith St\nFitzroy VIC 3065", engine.Detail{FlatType: "UNIT", FlatNumber: "20", NumberFirst: "25", StreetName: "SMITH", StreetType: "STREET"})
	f("Jo\nUnit 1-19 25 Smith St\nFitzroy VIC 3065", engine.Detail{FlatType: "UNIT", FlatNumber: "1-19", NumberFirst: "25", StreetName: "SMITH"})
	f("Jo\nUnit 5/10 Smith St\nFitzroy VIC 3065", engine.Detail{FlatType: "UNIT", FlatNumber: "5", NumberFirst: "10", StreetName: "SMITH"})
	f("Jo\nSuite 5/10-12 Smith St\nFitzroy VIC 3065", engine.Detail{FlatType: "SE", FlatNumber: "5", NumberFirst: "10", NumberLast: "12", StreetName: "SMITH"})
	f("Jo\nU5/10A Smith St\nFitzroy VIC 3065", engine.Detail{FlatType: "UNIT", FlatNumber: "5", NumberFirst: "10A", StreetName: "SMITH"})
	f("Jo\nShop 5/10 Smith St\nFitzroy VIC 3065", engine.Detail{FlatType: "SHOP", FlatNumber: "5", NumberFirst: "10", StreetName: "SMITH"})
	f("Jo\n18-20 Courallie Av\nHomebush West NSW 2140", engine.Detail{NumberFirst: "18", NumberLast: "20", StreetName: "COURALLIE", StreetType: "AVENUE"})
	f("Jo\n455A Smith Street North\nFitzroy VIC 3065", engine.Detail{NumberFirst: "455A", StreetName: "SMITH", StreetType: "STREET", StreetSuffix: "N"})
	f("Jo\nLot 16 Aerodrome Rd\nApplethorpe QLD 4378", engine.Detail{Lot: "16", StreetName: "AERODROME", StreetType: "ROAD"})
	f("Jo\nLevel 3, 100 George St\nSydney NSW 2000", engine.Detail{LevelType: "L", LevelNumber: "3", NumberFirst: "100", StreetName: "GEORGE"})
	f("Jo\nL3 100 George St\nSydney NSW 2000", engine.Detail{LevelType: "L", LevelNumber: "3", NumberFirst: "100"})
	f("Jo\nSuite 5 Level 2\n1 Martin Pl\nSydney NSW 2000", engine.Detail{FlatType: "SE", FlatNumber: "5", LevelType: "L", LevelNumber: "2", StreetType: "PLACE"})
	f("Jo\nPO Box 123\nMelbourne VIC 3000", engine.Detail{PostalType: "PO BOX", PostalNumber: "123", Granularity: "postal", Recipients: []string{"JO"}})
	f("Jo\nGPO Box 1234\nSydney NSW 2001", engine.Detail{PostalType: "GPO BOX", PostalNumber: "1234", Granularity: "postal"})
	f("Jo\nLocked Bag 5\nParramatta NSW 2150", engine.Detail{PostalType: "LOCKED BAG", PostalNumber: "5"})
	f("Jo\nRMB 45 Princes Hwy\nDenmark WA 6333", engine.Detail{PostalType: "RMB", PostalNumber: "45", StreetName: "PRINCES", StreetType: "HIGHWAY"})
	f("Jo Citizen\nC/- Acme Pty Ltd\n10 Jones St\nMelbourne VIC 3000", engine.Detail{Recipients: []string{"JO CITIZEN"}, CareOf: "C/- ACME PTY LTD"})
	f("Jo\nUnit 5\n10 Jones St Melbourne VIC 3000", engine.Detail{FlatNumber: "5", NumberFirst: "10", StreetName: "JONES", Locality: "MELBOURNE"})
	f("Jo\nc/- ACME Pty Ltd\n1 Martin Pl\nSydney NSW 2000", engine.Detail{CareOf: "C/- ACME PTY LTD"})
	f("Jo\nc/-ACME Pty Ltd\n1 Martin Pl\nSydney NSW 2000", engine.Detail{CareOf: "C/- ACME PTY LTD"})
	f("Jo\nc/o Acme\n1 Martin Pl\nSydney NSW 2000", engine.Detail{CareOf: "C/O ACME"})
	f("Jo\nC/O - Acme\n1 Martin Pl\nSydney NSW 2000", engine.Detail{CareOf: "C/O ACME"})
	f("Jo\nAttn Accounts\n1 Martin Pl\nSydney NSW 2000", engine.Detail{CareOf: "ATTN ACCOUNTS"})
	f("Jo\nDavis Station\nAAT 7151", engine.Detail{Recipients: []string{"JO"}, Locality: "DAVIS", State: "OT", Postcode: "7151", Granularity: "locality"})
	f("Jo\n10 Jones St\nMelbourne VIC 3000\nAustralia", engine.Detail{Locality: "MELBOURNE", State: "VIC", Postcode: "3000"})
	f("10 Downing St\nLondon SW1A 2AA\nUnited Kingdom", engine.Detail{Country: "GBR"})
	if r := e.CheckString("Jo\n10 Jones St\nMelborne VIC 3000", true); strings.Join(r.Detail.Suggestion, "|") != "JO|10 JONES ST|MELBOURNE VIC 3000" {
		t.Errorf("suggestion %q", r.Detail.Suggestion)
	}
}
