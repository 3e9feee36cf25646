package metadata_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/lodge-mail/lodge/upload/metadata"
)

// fuzzLimits are small so that the fuzzer reaches every limit.
var fuzzLimits = metadata.Limits{MaxBytes: 1 << 20, MaxDepth: 8, MaxLetters: 20, MaxStringBytes: 512, MaxValues: 60, MaxProblems: 30}

var fuzzFiles = metadata.Files{
	{Name: "a.pdf", Pages: 3}, {Name: "b.pdf"}, {Name: "m.json", Kind: "json"}, {Name: "p.pdf", Portal: true, Pages: 1},
}

func seed(f *testing.F, ext string, extra ...string) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*"+ext))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

// FuzzParseJSON: Parse never panics, reports a problem for anything that
// is not valid, and a pack without problems survives a round trip.
func FuzzParseJSON(f *testing.F) {
	seed(f, ".json", `{"letters":[{"postal":[{"suburb":"A","state":"B"},"x"],"custom_data":{"a":"b"}}]}`,
		`{"a":`, `[[[[[[[[[[]]]]]]]]]]`, "\xef\xbb\xbf{}", `{"title":"\ud800\u0000"}`, `{"letters":[{},{},{},{}]}`, `{"x":1,"x":2}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, probs := metadata.Parse("m.json", data, fuzzLimits)
		check(t, data, p, probs)
		if len(probs) == 0 && !json.Valid(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))) {
			t.Fatalf("%q: invalid JSON accepted", data)
		}
	})
}

// FuzzParseXML: as FuzzParseJSON, for XML.
func FuzzParseXML(f *testing.F) {
	seed(f, ".xml", `<pack><letters><letter><postal><line><suburb>A</suburb></line></postal></letter></letters></pack>`,
		`<pack>`, `<!DOCTYPE x><pack/>`, `<pack/><pack/>`, `<?xml version="1.0" encoding="latin1"?><pack><title>`+"\xe9"+`</title></pack>`,
		`<pack xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><title xsi:nil="true"/></pack>`, `<pack><title><![CDATA[x]]></title></pack>`,
		// UTF-16: odd, a lone surrogate, BOM and declaration at odds, no BOM
		bomLE+le("<pack/>")+"x", bomBE+be("<pack><title>")+"\xd8\x00<\x00", bomLE+le(`<?xml version="1.0" encoding="utf-8"?><pack/>`),
		be(`<?xml version="1.0" encoding="UTF-16"?><pack><title>😀</title></pack>`), le("<pack/>"))
	if paths, _ := filepath.Glob(filepath.Join("testdata", "utf16", "*.xml")); len(paths) > 0 {
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, probs := metadata.Parse("m.xml", data, fuzzLimits)
		check(t, data, p, probs)
		if len(probs) == 0 {
			if err := wellFormed(data); err != nil {
				t.Fatalf("%q: accepted, but %v", data, err)
			}
		}
	})
}

// FuzzParseXMLUTF16: a UTF-8 XML file and the same text in UTF-16 (with
// a byte order mark, either order) give the same pack and the same
// problems, whatever the text.
func FuzzParseXMLUTF16(f *testing.F) {
	seed(f, ".xml", `<pack><letters><letter><postal><line>Chloë 😀</line></postal></letter></letters></pack>`,
		"<pack>\n<title>a</title>\n<x/>\n", `<pack><title>&#xD800;</title></pack>`, "<pack><title>\uFFFE\U0010FFFF</title></pack>")
	f.Fuzz(func(t *testing.T, data []byte) {
		// The declaration would have to change with the encoding; NUL
		// bytes make UTF-8 text look like UTF-16 (and are refused).
		if !utf8.Valid(data) || bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) || bytes.Contains(data, []byte("<?xml")) ||
			bytes.IndexByte(data, 0) >= 0 || 2+4*len(data) > fuzzLimits.MaxBytes {
			return
		}
		want, wantProbs := metadata.Parse("m.xml", data, fuzzLimits)
		for _, in := range []string{bomLE + le(string(data)), bomBE + be(string(data))} {
			got, probs := metadata.Parse("m.xml", []byte(in), fuzzLimits)
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(probs, wantProbs) {
				t.Fatalf("%q in UTF-16 %q: %s %q; in UTF-8: %s %q", data, in[:2], dump(got), strs(probs), dump(want), strs(wantProbs))
			}
		}
	})
}

func check(t *testing.T, data []byte, p *metadata.Pack, probs []metadata.Problem) {
	t.Helper()
	if p == nil && len(probs) == 0 {
		t.Fatalf("%q: no pack and no problem", data)
	}
	if len(probs) > fuzzLimits.MaxProblems+1 {
		t.Fatalf("%q: %d problems", data, len(probs))
	}
	for _, pr := range probs {
		if pr.Message == "" {
			t.Fatalf("%q: empty problem message at %q", data, pr.Path)
		}
	}
	if p == nil {
		return
	}
	if len(p.Letters) > fuzzLimits.MaxLetters {
		t.Fatalf("%q: %d letters", data, len(p.Letters))
	}
	// Validation and planning take anything Parse returns.
	plan, vprobs := p.Plan(fuzzFiles)
	if plan != nil && metadata.HasErrors(vprobs) {
		t.Fatalf("%q: a plan despite errors", data)
	}
	if len(probs) > 0 {
		return
	}
	again, probs2 := metadata.Parse("again.json", encodeJSON(p), fuzzLimits)
	if len(probs2) > 0 || !reflect.DeepEqual(stripRaw(p), stripRaw(again)) {
		t.Fatalf("%q: round trip:\n%s\n%s\n%q", data, dump(stripRaw(p)), dump(stripRaw(again)), strs(probs2))
	}
}

// wellFormed reads data with encoding/xml alone: no error, no DTD. UTF-16
// (XML 1.0 appendix F: a byte order mark, or '<' or white space in two
// bytes, one of them zero) is decoded with unicode/utf16 first and must
// hold no lone surrogate.
func wellFormed(data []byte) error {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var order binary.ByteOrder
	switch {
	case bytes.HasPrefix(data, []byte(bomLE)):
		order, data = binary.LittleEndian, data[2:]
	case bytes.HasPrefix(data, []byte(bomBE)):
		order, data = binary.BigEndian, data[2:]
	case len(data) >= 2 && data[1] == 0 && bytes.IndexByte([]byte("< \t\r\n"), data[0]) >= 0:
		order = binary.LittleEndian
	case len(data) >= 2 && data[0] == 0 && bytes.IndexByte([]byte("< \t\r\n"), data[1]) >= 0:
		order = binary.BigEndian
	}
	if order != nil {
		if len(data)%2 != 0 {
			return errors.New("UTF-16 of an odd number of bytes")
		}
		u := make([]uint16, len(data)/2)
		for i := range u {
			u[i] = order.Uint16(data[2*i:])
		}
		runes := utf16.Decode(u)
		if !slices.Equal(utf16.Encode(runes), u) {
			return errors.New("a lone surrogate")
		}
		data = []byte(string(runes))
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = func(string, io.Reader) (io.Reader, error) { return bytes.NewReader(nil), nil }
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if _, ok := tok.(xml.Directive); ok {
			return errors.New("a directive")
		}
	}
}

// encodeJSON writes a pack back as JSON metadata.
func encodeJSON(p *metadata.Pack) []byte {
	m := map[string]any{}
	put := func(k string, v any) {
		if !reflect.ValueOf(v).IsNil() {
			m[k] = v
		}
	}
	put("duplex", p.Duplex)
	put("colour_model", p.ColourModel)
	put("title", p.Title)
	put("customer_email", p.CustomerEmail)
	put("confirmation_email", p.ConfirmationEmail)
	put("department", p.Department)
	put("purchase_order", p.PurchaseOrder)
	put("profile", p.Profile)
	put("terminal", p.Terminal)
	put("cust_hold", p.CustHold)
	put("orientation", p.Orientation)
	if p.AttachmentsSet {
		m["attachments"] = append([]string{}, p.Attachments...)
	}
	if o := p.ProductionOptions; o != nil {
		po := map[string]any{}
		if o.AupDlvtyp != nil {
			po["aup_dlvtyp"] = *o.AupDlvtyp
		}
		if o.ForceC4 != nil {
			po["force_c4"] = *o.ForceC4
		}
		m["production_options"] = po
	}
	put("template", p.Template)
	put("sms_from", p.SMSFrom)
	put("email_from", p.EmailFrom)
	put("email_subj", p.EmailSubj)
	var letters []any
	for _, l := range p.Letters {
		lm := map[string]any{}
		for k, v := range map[string]string{"email": l.Email, "fax": l.Fax, "sms": l.SMS, "primary": l.Primary, "reference": l.Reference, "file_name": l.FileName} {
			if v != "" {
				lm[k] = v
			}
		}
		if l.PageStart != nil {
			lm["page_start"] = *l.PageStart
		}
		if l.PageEnd != nil {
			lm["page_end"] = *l.PageEnd
		}
		if l.CustomData != nil {
			lm["custom_data"] = l.CustomData
		}
		if l.Postal != nil {
			var lines []any
			for i, line := range l.Postal.Lines {
				var item any = line
				for _, pp := range l.Postal.Parts {
					if pp.Line != i {
						continue
					}
					parts := map[string]string{}
					for k, v := range map[string]string{"locality": pp.Locality, "state": pp.State, "postcode": pp.Postcode, "country": pp.Country} {
						if v != "" {
							parts[k] = v
						}
					}
					item = parts
				}
				lines = append(lines, item)
			}
			lm["postal"] = lines
		}
		if l.Files != nil {
			files := []any{}
			for _, fe := range l.Files {
				fm := map[string]any{}
				if fe.FileName != "" {
					fm["file_name"] = fe.FileName
				}
				if fe.PageStart != nil {
					fm["page_start"] = *fe.PageStart
				}
				if fe.PageEnd != nil {
					fm["page_end"] = *fe.PageEnd
				}
				files = append(files, fm)
			}
			lm["files"] = files
		}
		letters = append(letters, lm)
	}
	if letters != nil {
		m["letters"] = letters
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}
