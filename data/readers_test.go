package data

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadGeoNames(t *testing.T) {
	f := func(in string, rows int, wantErr string) {
		t.Helper()
		n := 0
		err := ReadGeoNames(strings.NewReader(in), "test", func(r *GeoNamesRow) error {
			n++
			if r.Country == "" || r.Postcode == "" || r.Place == "" {
				t.Errorf("%q: empty fields in %+v", in, r)
			}
			return nil
		})
		if (err == nil) != (wantErr == "") || (err != nil && !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%q: error %v, want %q", in, err, wantErr)
		}
		if n != rows {
			t.Errorf("%q: %d rows, want %d", in, n, rows)
		}
	}
	row := "AU\t2000\tSydney\tNew South Wales\tNSW\tSYDNEY\t\t\t\t-33.87\t151.21\t4"
	f("", 0, "")
	f(row, 1, "")
	f(row+"\r\n"+row+"\n\n", 2, "")
	f(row+"\nAU\t2000\tSydney\n", 1, "test:2: 3 columns")
	f("AU\t2000\tSydney\tNSW\tNSW\t\t\t\t\tnorth\t151\t4", 0, "latitude")
	f("AU\t2000\tSydney\tNSW\tNSW\t\t\t\t\t-33\t151\tgood", 0, "accuracy")
	f("AU\t\tSydney\tNSW\tNSW\t\t\t\t\t-33\t151\t4", 0, "must not be empty")
	f(strings.Repeat("x", MaxLine+1), 0, "too long")
	f("\x00\x00\x00", 0, "columns")
}

func TestReadGNAFLocalities(t *testing.T) {
	f := func(in string, rows int, wantErr string) {
		t.Helper()
		n := 0
		err := ReadGNAFLocalities(strings.NewReader(in), "loc.csv", func(r *GNAFLocality) error { n++; return nil })
		if (err == nil) != (wantErr == "") || (err != nil && !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("%q: error %v, want %q", in, err, wantErr)
		}
		if n != rows {
			t.Errorf("%q: %d rows, want %d", in, n, rows)
		}
	}
	hdr := "locality,state,postcode,count,latitude,longitude\n"
	f(hdr+"Melbourne,VIC,3000,117844,-37.8,144.9\n", 1, "")
	f("postcode,state,locality\n3000,vic,Melbourne\n", 1, "")
	f("\ufeff"+hdr+"Melbourne,VIC,3000,1,-37,144\n", 1, "")
	f("", 0, "empty file")
	f("a,b\n", 0, "lacks column")
	f(hdr+"Melbourne,VIC,3000,many,-37,144\n", 0, "count")
	f(hdr+",VIC,3000,1,-37,144\n", 0, "must not be empty")
	f(hdr+"\"Melbourne,VIC,3000\n", 0, "loc.csv")
}

func TestCountrySet(t *testing.T) {
	cs := NewCountrySet()
	iso := `{"3166-1":[{"alpha_2":"KR","alpha_3":"KOR","name":"Korea, Republic of","common_name":"South Korea"},
	{"alpha_2":"GB","alpha_3":"GBR","name":"United Kingdom","official_name":"United Kingdom of Great Britain and Northern Ireland"}]}`
	if err := cs.ReadISO3166(strings.NewReader(iso), "iso"); err != nil {
		t.Fatal(err)
	}
	if err := cs.ReadI18nCountries(strings.NewReader(`{"countries":{"GB":["United Kingdom","UK"],"KR":"South Korea","ZZ":"Nowhere"}}`), "i18n"); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range cs.Countries() {
		got[c.Alpha3] = strings.Join(c.Names, "|")
	}
	f := func(a3, name string) {
		t.Helper()
		if !strings.Contains("|"+got[a3]+"|", "|"+name+"|") {
			t.Errorf("%s names %q lack %q", a3, got[a3], name)
		}
	}
	f("KOR", "Republic of Korea")
	f("KOR", "Korea, Republic of")
	f("KOR", "South Korea")
	f("GBR", "UK")
	f("GBR", "England")
	f("GBR", "United Kingdom of Great Britain and Northern Ireland")
	if len(got) != 2 {
		t.Errorf("countries %v: ZZ has no ISO entry and must not appear", got)
	}
	bad := func(in, want string) {
		t.Helper()
		err := NewCountrySet().ReadISO3166(strings.NewReader(in), "iso")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	bad(`{}`, "no countries")
	bad(`{"3166-1":[{"alpha_2":"X"}]}`, "lacks")
	bad(`[`, "iso")
	bad(strings.Repeat(" ", maxCountryFile+1), "larger than")
}

func FuzzReadGeoNames(f *testing.F) {
	f.Add([]byte("AU\t2000\tSydney\tNew South Wales\tNSW\tSYDNEY\t\t\t\t-33.87\t151.21\t4\n"))
	f.Add([]byte("\t\t\t\t\t\t\t\t\t\t\t\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ReadGeoNames(bytes.NewReader(b), "fuzz", func(r *GeoNamesRow) error {
			if r.Country == "" || r.Postcode == "" || r.Place == "" {
				t.Fatalf("row with empty key fields: %+v", r)
			}
			return nil
		})
		ReadGeoNamesZip(bytes.NewReader(b), int64(len(b)), "fuzz", func(*GeoNamesRow) error { return nil })
	})
}

func FuzzReadCSV(f *testing.F) {
	f.Add([]byte("locality,state,postcode,count,latitude,longitude\nMelbourne,VIC,3000,1,-37,144\n"))
	f.Add([]byte("table,code,label,uri\nStreet,AV,Avenue,x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		stop := errors.New("stop")
		ReadGNAFLocalities(bytes.NewReader(b), "fuzz", func(*GNAFLocality) error { return nil })
		ReadGNAFPostcodes(bytes.NewReader(b), "fuzz", func(*GNAFPostcode) error { return nil })
		ReadCodes(bytes.NewReader(b), "fuzz", func(*Code) error { return stop })
		cs := NewCountrySet()
		cs.ReadISO3166(bytes.NewReader(b), "fuzz")
		cs.ReadI18nCountries(io.LimitReader(bytes.NewReader(b), 1<<20), "fuzz")
		cs.Countries()
	})
}
