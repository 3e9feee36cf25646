package data

import (
	"bytes"
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

// writeMO writes a .mo catalogue of the pairs (msgid, msgstr, ...) in the
// byte order bo, the way msgfmt lays it out: header, the two tables, then
// the strings, each NUL-terminated.
func writeMO(bo binary.ByteOrder, pairs ...string) []byte {
	n := len(pairs) / 2
	orig, trans := 28, 28+8*n
	strs := 28 + 16*n
	var body []byte
	table := make([]byte, 16*n)
	for i := 0; i < n; i++ {
		for j, s := range []string{pairs[2*i], pairs[2*i+1]} {
			at := orig + 8*i
			if j == 1 {
				at = trans + 8*i
			}
			bo.PutUint32(table[at-28:], uint32(len(s)))
			bo.PutUint32(table[at-28+4:], uint32(strs+len(body)))
			body = append(append(body, s...), 0)
		}
	}
	h := make([]byte, 28)
	bo.PutUint32(h, 0x950412de)
	bo.PutUint32(h[8:], uint32(n))
	bo.PutUint32(h[12:], uint32(orig))
	bo.PutUint32(h[16:], uint32(trans))
	return append(append(h, table...), body...)
}

func TestReadMO(t *testing.T) {
	f := func(b []byte, want string) {
		t.Helper()
		var got []string
		if err := ReadMO(bytes.NewReader(b), "t.mo", func(id, s string) { got = append(got, id+"="+s) }); err != nil {
			t.Fatalf("ReadMO: %v", err)
		}
		if g := strings.Join(got, "|"); g != want {
			t.Errorf("got %q, want %q", g, want)
		}
	}
	le, be := binary.LittleEndian, binary.BigEndian
	f(writeMO(le, "Germany", "Deutschland", "France", "Frankreich"), "Germany=Deutschland|France=Frankreich")
	f(writeMO(be, "Germany", "Deutschland"), "Germany=Deutschland")
	// the header (empty msgid) and untranslated messages are skipped
	f(writeMO(le, "", "Content-Type: text/plain; charset=UTF-8\n", "Chad", ""), "")
	// a context is dropped, and of plural forms the first is kept
	f(writeMO(le, "country\x04Georgia", "Georgien", "island\x00islands", "Insel\x00Inseln"), "Georgia=Georgien|island=Insel")
	f(writeMO(le), "")
}

// TestReadMOHostile: every malformed catalogue is refused with an error
// that names the file and the fault, and nothing is reported from it past
// the fault.
func TestReadMOHostile(t *testing.T) {
	good := writeMO(binary.LittleEndian, "Germany", "Deutschland")
	f := func(b []byte, want string) {
		t.Helper()
		err := ReadMO(bytes.NewReader(b), "t.mo", func(string, string) {})
		if err == nil || !strings.Contains(err.Error(), "t.mo") || !strings.Contains(err.Error(), want) {
			t.Errorf("err %v, want one naming t.mo and %q", err, want)
		}
	}
	patch := func(at int, v uint32) []byte {
		b := bytes.Clone(good)
		binary.LittleEndian.PutUint32(b[at:], v)
		return b
	}
	f(nil, "shorter than a .mo header")
	f(good[:27], "shorter than a .mo header")
	f(patch(0, 0x12345678), "not a .mo file")
	f(patch(4, 2<<16), "major revision 2")
	f(patch(8, 0xffffffff), "run past the end")         // a count no file holds
	f(patch(12, 0xfffffff0), "run past the end")        // the msgid table beyond the file
	f(patch(16, uint32(len(good))), "run past the end") // the msgstr table beyond the file
	f(patch(28, 0xffffffff), "msgid of")                // a string's length beyond the file
	f(patch(32, 0xfffffff0), "msgid of")                // a string's offset beyond the file
	f(patch(36+4, uint32(len(good))), "msgstr of")
	f(writeMO(binary.LittleEndian, "Germany", "Deutsch\xffland"), "not UTF-8")
	f(bytes.Repeat([]byte{0xde}, MaxMOFile+1), "larger than")
}

// TestReadISOTranslations: a translation names the country whose English
// name is its msgid; names a country holds already and msgids of no
// country are ignored.
func TestReadISOTranslations(t *testing.T) {
	cs := NewCountrySet()
	iso := `{"3166-1":[{"alpha_2":"DE","alpha_3":"DEU","name":"Germany","official_name":"Federal Republic of Germany"},
		{"alpha_2":"NL","alpha_3":"NLD","name":"Netherlands","official_name":"Kingdom of the Netherlands"}]}`
	if err := cs.ReadISO3166(strings.NewReader(iso), "iso.json"); err != nil {
		t.Fatal(err)
	}
	mo := writeMO(binary.LittleEndian, "Germany", "Germanio", "Federal Republic of Germany", "Federacia  Respubliko Germanio",
		"Netherlands", "Nederlando", "Netherlands", "netherlands", "Atlantis", "Atlantido")
	if err := cs.ReadISOTranslations(bytes.NewReader(mo), "eo.mo"); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range cs.Countries() {
		got[c.Alpha3] = strings.Join(c.Translated, "|")
	}
	if got["DEU"] != "Germanio|Federacia Respubliko Germanio" || got["NLD"] != "Nederlando" {
		t.Errorf("translated: %q", got)
	}
}

// TestReadSystemISOTranslations reads a real iso-codes catalogue, the one
// lodge import reads (scripts/test installs Debian's iso-codes).
func TestReadSystemISOTranslations(t *testing.T) {
	const isoJSON, mo = "/usr/share/iso-codes/json/iso_3166-1.json", "/usr/share/locale/de/LC_MESSAGES/iso_3166-1.mo"
	for _, p := range []string{isoJSON, mo} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("Debian iso-codes is needed (scripts/test installs it), as for building an index: %v", err)
		}
	}
	cs := NewCountrySet()
	for _, p := range []string{isoJSON, mo} {
		r, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if p == isoJSON {
			err = cs.ReadISO3166(r, p)
		} else {
			err = cs.ReadISOTranslations(r, p)
		}
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cs.Countries() {
		if c.Alpha3 == "DEU" {
			if !containsFold(c.Names, "Deutschland") && !containsFold(c.Translated, "Deutschland") {
				t.Errorf("DEU: no Deutschland in %q / %q", c.Names, c.Translated)
			}
			return
		}
	}
	t.Error("no DEU")
}

func FuzzReadMO(f *testing.F) {
	f.Add(writeMO(binary.LittleEndian, "Germany", "Deutschland"))
	f.Add(writeMO(binary.BigEndian, "a\x04b", "c\x00d"))
	f.Add([]byte("\xde\x12\x04\x95"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ReadMO(bytes.NewReader(b), "fuzz", func(id, s string) {
			if id == "" || s == "" || strings.ContainsRune(id, 0) || strings.ContainsRune(s, 0) {
				t.Fatalf("pair %q=%q", id, s)
			}
		})
		cs := NewCountrySet()
		cs.ReadISO3166(strings.NewReader(`{"3166-1":[{"alpha_2":"DE","alpha_3":"DEU","name":"Germany"}]}`), "iso")
		cs.ReadISOTranslations(bytes.NewReader(b), "fuzz")
		cs.Countries()
	})
}
