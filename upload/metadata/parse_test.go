package metadata_test

import (
	"reflect"
	"testing"

	"github.com/lodge-mail/lodge/upload/metadata"
)

// TestParseInvalid: metadata that decodes, with exactly these problems.
func TestParseInvalid(t *testing.T) {
	f := func(name, in string, want ...string) {
		t.Helper()
		p, probs := metadata.Parse(name, []byte(in), metadata.Limits{})
		if p == nil {
			t.Errorf("%s %q: nil pack, problems %q", name, in, strs(probs))
			return
		}
		if got := strs(probs); !reflect.DeepEqual(got, want) {
			t.Errorf("%s %q:\ngot  %q\nwant %q", name, in, got, want)
		}
	}
	// JSON: unknown fields with suggestions, wrong types, duplicates.
	f("m.json", `{"letters":[{"email":"a@b.co"},{"emial":"x"},{"page_start":"3"}]}`,
		"letters[1].emial: unknown field; did you mean email?",
		"letters[2].page_start: want an integer, got string")
	f("m.json", `{"Duplex":true,"dupelx":true,"titel":"x","colour":1,"zzz":1}`,
		"Duplex: unknown field; did you mean duplex?",
		"dupelx: unknown field; did you mean duplex?",
		"titel: unknown field; did you mean title?",
		"colour: unknown field",
		"zzz: unknown field")
	f("m.json", `{"duplex":1.5,"colour_model":1.5,"title":3,"orientation":99999999999,"cust_hold":"true","confirmation_email":null}`,
		"duplex: want a boolean (true or false), got number 1.5",
		"colour_model: want an integer, got number 1.5",
		"title: want a string, got number 3",
		"orientation: integer 99999999999 is out of range",
		"cust_hold: want a boolean (true or false), got string")
	f("m.json", `{"colour_model":1e2,"orientation":-0,"department":{},"terminal":[]}`,
		"colour_model: want an integer, got number 1e2",
		"department: want a string, got object",
		"terminal: want a string, got array")
	f("m.json", `{"attachments":"a.pdf","letters":{},"production_options":[]}`,
		"attachments: want an array, got string",
		"letters: want an array, got object",
		"production_options: want an object, got array")
	f("m.json", `{"attachments":["a.pdf",1,null,["b.pdf"]]}`,
		"attachments[1]: want a string, got number 1",
		"attachments[2]: want a string, got null",
		"attachments[3]: want a string, got array")
	f("m.json", `{"title":"a","title":"b","production_options":{"aup_dlvtyp":"0","force_c":true,"force_c4":1}}`,
		"title: duplicate field",
		"production_options.aup_dlvtyp: want an integer, got string",
		"production_options.force_c: unknown field; did you mean force_c4?",
		"production_options.force_c4: want a boolean (true or false), got number 1")
	f("m.json", `{"letters":[null,3,"x",[]]}`,
		"letters[0]: want an object, got null",
		"letters[1]: want an object, got number 3",
		"letters[2]: want an object, got string",
		"letters[3]: want an object, got array")
	f("m.json", `{"letters":[{"postal":[1,{"suburb":"A","locality":"B"},{"country":"AU","postcode":"2000"},{},{"town":"X"},"a\nb"]}]}`,
		"letters[0].postal[0]: want a string or an object, got number 1",
		"letters[0].postal[1].locality: give locality or suburb, not both",
		"letters[0].postal[2]: country stands alone in its own line, apart from locality, state and postcode",
		"letters[0].postal[3]: an address part object needs locality (or suburb), state (or region), postcode or country",
		"letters[0].postal[4].town: unknown field",
		"letters[0].postal[4]: an address part object needs locality (or suburb), state (or region), postcode or country",
		"letters[0].postal[5]: a line of a postal array must not contain a line break")
	f("m.json", `{"letters":[{"postal":[{"locality":"A","postcode":2000},{"suburb":"B"},{"country":"AU"},{"country":"NZ"}]}]}`,
		"letters[0].postal[0].postcode: want a string, got number 2000",
		"letters[0].postal[1]: a second line of locality, state and postcode parts; give them together in one line",
		"letters[0].postal[3]: a second country line")
	f("m.json", `{"letters":[{"postal":7,"sms":412345678}]}`,
		"letters[0].postal: want a string or an array, got number 7",
		"letters[0].sms: want a string, got number 412345678")
	f("m.json", `{"letters":[{"custom_data":{"password":1,"a":"x","a":"y","":"z","n":null,"my key":true}}]}`,
		"letters[0].custom_data.password: want a string, got number 1",
		"letters[0].custom_data.a: duplicate field",
		`letters[0].custom_data[""]: empty key`,
		`letters[0].custom_data["my key"]: want a string, got boolean`)
	f("m.json", `{"letters":[{"files":[{"file_name":2,"page_start":true,"page_strat":1},null]}]}`,
		"letters[0].files[0].file_name: want a string, got number 2",
		"letters[0].files[0].page_start: want an integer, got boolean",
		"letters[0].files[0].page_strat: unknown field; did you mean page_start?",
		"letters[0].files[1]: want an object, got null")
	f("m.json", `{"title":"a\u0000b","letters":[{"reference":"\u0000"}]}`,
		"title: value contains a NUL character",
		"letters[0].reference: value contains a NUL character")

	// XML: the same mistakes, and the XML ones.
	f("m.xml", `<pack><letters><letter><email>a@b.co</email></letter><letter><emial>x</emial></letter><letter><page_start>x</page_start></letter></letters></pack>`,
		"letters[1].emial: unknown field; did you mean email?",
		`letters[2].page_start: want an integer, got "x"`)
	f("m.xml", `<pack><Duplex>true</Duplex><duplex>yes</duplex><colour_model>x</colour_model><title><b>x</b></title><attachments>a.pdf</attachments><letter/></pack>`,
		"Duplex: unknown field; did you mean duplex?",
		`duplex: want true or false, got "yes"`,
		`colour_model: want an integer, got "x"`,
		"title: want text, got element <b>",
		`attachments: want <attachment> elements, got text "a.pdf"`,
		"letter: unknown field; <letter> elements go inside <letters>")
	f("m.xml", `<pack><duplex/><cust_hold>TRUE</cust_hold><orientation>99999999999</orientation><colour_model>1.0</colour_model></pack>`,
		`duplex: want true or false, got ""`,
		`cust_hold: want true or false, got "TRUE"`,
		`orientation: integer "99999999999" is out of range`,
		`colour_model: want an integer, got "1.0"`)
	f("m.xml", `<pack><title>a</title><title>b</title><attachments><attachment>a.pdf</attachment><file>b.pdf</file></attachments></pack>`,
		"title: duplicate field",
		"attachments[1]: want <attachment>, got <file>")
	f("m.xml", `<pack><letters><letter><postal>x<line>y</line></postal><page_start>1.5</page_start></letter><file/></letters></pack>`,
		"letters[0].postal: text mixed with elements: give either text or child elements",
		`letters[0].page_start: want an integer, got "1.5"`,
		"letters[1]: want <letter>, got <file>")
	f("m.xml", `<pack><letters><letter><postal><line><suburb>A</suburb><locality>B</locality></line><line><country>AU</country><postcode>2000</postcode></line><line/><address>x</address></postal></letter></letters></pack>`,
		"letters[0].postal[0].locality: give locality or suburb, not both",
		"letters[0].postal[1]: country stands alone in its own line, apart from locality, state and postcode",
		"letters[0].postal[3]: want <line>, got <address>")
	f("m.xml", `<pack><letters><letter><custom_data><a>x</a><a>y</a><b><c/></b></custom_data><files><file><file_name>a.pdf</file_name><pages>1</pages></file></files></letter></letters></pack>`,
		"letters[0].custom_data.a: duplicate field",
		"letters[0].custom_data.b: want text, got element <c>",
		"letters[0].files[0].pages: unknown field")
	f("m.xml", `<pack id="1"><title lang="en">x</title><title xml:lang="en">y</title></pack>`,
		`attribute "id" is not used: give fields as child elements`,
		`title: attribute "lang" is not used: give fields as child elements`,
		"title: duplicate field")
	f("m.xml", `<pack>text<title>x</title></pack>`,
		`want child elements, got text "text"`)
	f("m.xml", `<pack><production_options>1</production_options></pack>`,
		`production_options: want child elements, got text "1"`)
}

// TestParseFatal: files that cannot be read at all give a nil pack.
func TestParseFatal(t *testing.T) {
	f := func(name, in string, want ...string) {
		t.Helper()
		p, probs := metadata.Parse(name, []byte(in), metadata.Limits{})
		if p != nil {
			t.Errorf("%s %q: got a pack, want nil", name, in)
		}
		if got := strs(probs); !reflect.DeepEqual(got, want) {
			t.Errorf("%s %q:\ngot  %q\nwant %q", name, in, got, want)
		}
	}
	f("m.json", `[1]`, "the root must be a JSON object, got array")
	f("m.json", `"x"`, "the root must be a JSON object, got string")
	f("m.json", `null`, "the root must be a JSON object, got null")
	f("m.json", `{"a":1,}`, "invalid JSON at line 1, column 8: invalid character '}' looking for beginning of object key string")
	f("m.json", "{\n  \"a\": tru\n}", "invalid JSON at line 2, column 11: invalid character '\\n' in literal true (expecting 'e')")
	f("m.json", `{} {}`, "invalid JSON at line 1, column 4: invalid character '{' after top-level value")
	f("m.json", `{"a":"b"`, "invalid JSON at line 1, column 9: unexpected end of JSON input")
	f("m.json", "{\"a\":\"\xff\"}", "invalid UTF-8 at line 1, column 7: JSON metadata must be UTF-8 (RFC 7159)")
	f("m.json", "{\"a\":\"\x00\"}", "invalid JSON at line 1, column 7: invalid character '\\x00' in string literal")
	f("m.json", "\x00{}", "invalid JSON at line 1, column 1: invalid character '\\x00' looking for beginning of value")
	f("m.json", "", "empty metadata file")
	f("m.json", "  \n", "empty metadata file")
	f("m.json", "\xfe\xff\x00{", "UTF-16 is not supported for JSON: JSON metadata must be UTF-8 (RFC 8259)")
	f("m.xml", `<pack/><pack/>`, "a second root element <pack>: a metadata file has exactly one root")
	f("m.xml", `<pack/>tail`, "text after the root element")
	f("m.xml", `head<pack/>`, "text before the root element")
	f("m.xml", `<mailing/>`, "the root element must be <pack>, got <mailing>")
	f("m.xml", ``, "no root element")
	f("m.xml", `<!-- only a comment -->`, "no root element")
	f("m.xml", `<pack xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:nil="true"/>`, "the root element <pack> is nil")
	f("m.xml", `<pack>`, "invalid XML at line 1: unexpected EOF")
	f("m.xml", `<pack></letters>`, "invalid XML at line 1: element <pack> closed by </letters>")
	f("m.xml", `<pack><title>&lol;</title></pack>`, "invalid XML at line 1: invalid character entity &lol;")
	f("m.xml", "<pack><title>a\x00b</title></pack>", "invalid XML at line 1: illegal character code U+0000")
	f("m.xml", "<pack>\n<title>a\xffb</title></pack>", "invalid XML at line 2: invalid UTF-8: XML metadata must be UTF-8 or declare its encoding")
	f("m.xml", `<?xml version="1.0" encoding="UTF-16"?><pack/>`, `line 1: the declaration names encoding "UTF-16", but the file is not UTF-16 (no byte order mark, and its first character is one byte): save it as UTF-16 with a byte order mark, or declare the encoding it has`)
	f("m.xml", `<?xml version="1.0" encoding="KOI8-R"?><pack/>`, `line 1: encoding "KOI8-R" is not supported: use UTF-8 or UTF-16 (ISO-8859-1, Windows-1252 and US-ASCII are also read when declared)`)
	f("m.xml", `<?xml version="1.1"?><pack/>`, `invalid XML: unsupported version "1.1"; only version 1.0 is supported`)
	f("m.xml", `<pack/><?xml version="1.0"?>`, "line 1: the XML declaration <?xml …?> must come first")
	f("m.xml", `<!DOCTYPE pack SYSTEM "file:///etc/passwd"><pack/>`,
		"line 1: a document type declaration (<!DOCTYPE …>) is not accepted: metadata needs no DTD or entities")
	f("m.txt", "hello", `"m.txt" is neither JSON (.json) nor XML (.xml)`)
	f("m.txt", "", "empty metadata file")
}

// TestParseValues: what decoding keeps, in both formats.
func TestParseValues(t *testing.T) {
	parse := func(name, in string) *metadata.Pack {
		t.Helper()
		p, probs := metadata.Parse(name, []byte(in), metadata.Limits{})
		if p == nil || len(probs) > 0 {
			t.Fatalf("%s %q: problems %q", name, in, strs(probs))
		}
		return p
	}
	// Unset, null and xsi:nil are all "not given"; zero values are given.
	for _, p := range []*metadata.Pack{
		parse("m.json", `{"duplex":false,"colour_model":0,"title":"","cust_hold":null,"attachments":[]}`),
		parse("m.xml", `<pack xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><duplex>false</duplex><colour_model> 0 </colour_model><title/><cust_hold xsi:nil="true"/><attachments/></pack>`),
	} {
		if p.Duplex == nil || *p.Duplex || p.ColourModel == nil || *p.ColourModel != 0 || p.Title == nil || *p.Title != "" {
			t.Errorf("zero values lost: %s", dump(p))
		}
		if p.CustHold != nil || p.Orientation != nil || p.ProductionOptions != nil {
			t.Errorf("null or absent became set: %s", dump(p))
		}
		if !p.AttachmentsSet || len(p.Attachments) != 0 || p.HasLetters() {
			t.Errorf("empty attachments: %s", dump(p))
		}
	}
	// JSON strings are kept as written; XML text is trimmed, except the
	// template, and entities, character references and CDATA are decoded.
	j := parse("m.json", `{"title":" T ","template":" Hi\n","email_subj":"\u00e9\ud83d\ude00\ud800"}`)
	if *j.Title != " T " || *j.Template != " Hi\n" || *j.EmailSubj != "é😀\ufffd" {
		t.Errorf("json strings: %s", dump(j))
	}
	x := parse("m.xml", "<pack><title>\n  A &amp; B &#x263A; <![CDATA[<x>]]>\n</title><template> Hi\r\n</template></pack>")
	if *x.Title != "A & B ☺ <x>" || *x.Template != " Hi\n" {
		t.Errorf("xml strings: %q %q", *x.Title, *x.Template)
	}
	// Legacy encodings declared in XML are converted.
	l := parse("m.xml", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><pack><title>caf\xe9</title><letters><letter><postal>Z\xfcrich</postal></letter></letters></pack>")
	if *l.Title != "café" || l.Letters[0].Postal.Raw != "Zürich" {
		t.Errorf("latin-1: %q %q", *l.Title, l.Letters[0].Postal.Raw)
	}
	w := parse("m.xml", "<?xml version='1.0' encoding='windows-1252'?><pack><title>\x93q\x94 \x80</title></pack>")
	if *w.Title != "“q” €" {
		t.Errorf("windows-1252: %q", *w.Title)
	}
	// Postal: lines as given, part objects rendered, the raw form kept.
	pj := parse("m.json", `{"letters":[{"postal":["Jo", " 1 St ", "", {"suburb":" Carlton ","state":"VIC","postcode":"3053"}, {"country":"Australia"}]}, {"postal":"A\r\n\r\n B \rC"}]}`)
	want := &metadata.Postal{
		Lines: []string{"Jo", "1 St", "Carlton VIC 3053", "Australia"},
		Raw:   `["Jo", " 1 St ", "", {"suburb":" Carlton ","state":"VIC","postcode":"3053"}, {"country":"Australia"}]`,
		Parts: []metadata.PostalParts{{Line: 2, Locality: "Carlton", State: "VIC", Postcode: "3053"}, {Line: 3, Country: "Australia"}},
	}
	if got := pj.Letters[0].Postal; !reflect.DeepEqual(got, want) {
		t.Errorf("json postal:\ngot  %s\nwant %s", dump(got), dump(want))
	}
	if got := pj.Letters[1].Postal; !reflect.DeepEqual(got.Lines, []string{"A", "B", "C"}) || got.Raw != `"A\r\n\r\n B \rC"` || got.Parts != nil {
		t.Errorf("json postal text: %s", dump(got))
	}
	px := parse("m.xml", "<pack><letters><letter><postal>\n <line>Jo</line>\n <line><suburb>Carlton</suburb><state>VIC</state><postcode>3053</postcode></line>\n</postal></letter></letters></pack>")
	if got := px.Letters[0].Postal; got.Raw != "\n <line>Jo</line>\n <line><suburb>Carlton</suburb><state>VIC</state><postcode>3053</postcode></line>\n" ||
		!reflect.DeepEqual(got.Lines, []string{"Jo", "Carlton VIC 3053"}) {
		t.Errorf("xml postal: %s", dump(got))
	}
	// An empty postal is no postal.
	e := parse("m.json", `{"letters":[{"postal":"","email":"a@b.co"},{"postal":[],"email":"a@b.co"},{"postal":[" "],"email":"a@b.co"}]}`)
	for i, l := range e.Letters {
		if l.Postal != nil {
			t.Errorf("letter %d: empty postal kept: %s", i, dump(l.Postal))
		}
	}
	// Any name: sniffed.
	if p := parse("upload", ` {"title":"x"}`); *p.Title != "x" {
		t.Error("sniffed JSON")
	}
	if p := parse("upload", `<pack><title>x</title></pack>`); *p.Title != "x" {
		t.Error("sniffed XML")
	}
	if p := parse("M.JSON", "\xef\xbb\xbf{\"title\":\"bom\"}"); *p.Title != "bom" {
		t.Error("JSON with a byte order mark")
	}
	if p := parse("m.xml", "\xef\xbb\xbf<?xml version=\"1.0\"?><pack><title>bom</title></pack>"); *p.Title != "bom" {
		t.Error("XML with a byte order mark")
	}
	if p := parse("m.xml", "\n  <?xml version=\"1.0\"?>\n<!-- c --><?pi x?><pack><title>ws</title></pack>\n<!-- after -->\n"); *p.Title != "ws" {
		t.Error("XML with white space before its declaration")
	}
}

// TestParseProfile: a profile is a pack without letters.
func TestParseProfile(t *testing.T) {
	p, probs := metadata.ParseProfile("p.json", []byte(`{"duplex":true,"profile":"x","letters":[{"email":"a@b.co"}]}`), metadata.Limits{})
	if p == nil || !*p.Duplex {
		t.Fatal("profile not read")
	}
	want := []string{"letters: a profile holds mailing attributes only, not letters", "profile: a profile cannot name another profile"}
	if got := strs(probs); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if p, probs := metadata.ParseProfile("p.xml", []byte(`<pack><duplex>true</duplex></pack>`), metadata.Limits{}); p == nil || len(probs) != 0 {
		t.Errorf("valid profile: %q", strs(probs))
	}
	if p, _ := metadata.ParseProfile("p.xml", []byte(`<pack>`), metadata.Limits{}); p != nil {
		t.Error("broken profile gave a pack")
	}
}

func TestProblemString(t *testing.T) {
	f := func(p metadata.Problem, want string) {
		t.Helper()
		if got := p.String(); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	f(metadata.Problem{Path: "letters[3].postal[1].postcode", Message: "want a string, got number 3000"}, "letters[3].postal[1].postcode: want a string, got number 3000")
	f(metadata.Problem{Message: "invalid JSON"}, "invalid JSON")
	f(metadata.Problem{Path: "letters[0]", Message: "x", Warning: true}, "letters[0]: warning: x")
	if metadata.HasErrors([]metadata.Problem{{Warning: true}}) || !metadata.HasErrors([]metadata.Problem{{Warning: true}, {}}) || metadata.HasErrors(nil) {
		t.Error("HasErrors")
	}
}

func TestHasLetters(t *testing.T) {
	f := func(in string, want bool) {
		t.Helper()
		p, _ := metadata.Parse("m.json", []byte(in), metadata.Limits{})
		if p.HasLetters() != want {
			t.Errorf("%s: HasLetters %v", in, !want)
		}
	}
	f(`{}`, false)
	f(`{"letters":null}`, false)
	f(`{"letters":[]}`, false)
	f(`{"letters":[{}]}`, true)
	if (*metadata.Pack)(nil).HasLetters() {
		t.Error("nil pack has letters")
	}
}
