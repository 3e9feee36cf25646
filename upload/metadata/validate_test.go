package metadata_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/upload/metadata"
)

// session is a typical set of files: three documents, the metadata, a
// document whose name differs only in case, and one from the portal.
var session = metadata.Files{
	{Name: "a.pdf", Pages: 3},
	{Name: "b.pdf", Pages: 2},
	{Name: "m.json", Kind: "json"},
	{Name: "Terms.PDF", Pages: 1},
	{Name: "portal.pdf", Portal: true},
	{Name: "notes.txt"},
}

func mustParse(t *testing.T, in string) *metadata.Pack {
	t.Helper()
	p, probs := metadata.Parse("m.json", []byte(in), metadata.Limits{})
	if p == nil || len(probs) > 0 {
		t.Fatalf("%s: %q", in, strs(probs))
	}
	return p
}

// TestValidate: metadata that parses, checked against a session's files,
// with exactly these problems.
func TestValidate(t *testing.T) {
	f := func(in string, files metadata.Files, want ...string) {
		t.Helper()
		got := strs(metadata.Validate(mustParse(t, in), files))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ngot  %q\nwant %q", in, got, want)
		}
	}
	one := metadata.Files{{Name: "a.pdf", Pages: 3}}
	meta := metadata.Files{{Name: "m.json", Kind: "json"}}

	// Channels and primary.
	f(`{"letters":[{}]}`, one, "letters[0]: no delivery channel: give at least one of postal, email, fax, sms")
	f(`{"letters":[{"email":"","sms":" ","postal":""}]}`, one, "letters[0]: no delivery channel: give at least one of postal, email, fax, sms")
	f(`{"letters":[{"postal":"A","primary":"mail"}]}`, one, `letters[0].primary: want postal, email, sms or fax, got "mail"; did you mean email?`)
	f(`{"letters":[{"postal":"A","primary":"Email"}]}`, one, `letters[0].primary: want postal, email, sms or fax, got "Email"; did you mean email?`)
	f(`{"letters":[{"postal":"A","primary":"fax"}]}`, one, "letters[0].primary: fax is primary, but the letter has no fax")
	// Email addresses, mobile and fax numbers.
	f(`{"customer_email":"nobody","email_from":"a@b.c","letters":[{"email":"x@y"},{"email":"a b@c.com"},{"email":"a@-x.com"},{"email":"a@[1.2.3.4]"},{"email":"a@b.co, c@d.co"}]}`, one,
		`customer_email: "nobody" is not a valid email address`,
		`email_from: "a@b.c": the domain "b.c" has no valid top-level domain`,
		`letters[0].email: "x@y": the domain "y" has no dot`,
		`letters[1].email: "a b@c.com" is not a valid email address`,
		`letters[2].email: "a@-x.com": the domain "-x.com" is not valid`,
		`letters[3].email: "a@[1.2.3.4]": an address literal is not accepted as a domain`,
		`letters[4].email: "a@b.co, c@d.co" is not a valid email address`)
	f(`{"letters":[{"sms":"0312345678"},{"sms":"+610412345678"},{"sms":"+61 2 9876 5432"},{"sms":"61412345678"},{"sms":"+1234"},{"sms":"04-1234-567x"},{"sms":"jo@example"}]}`, one,
		`letters[0].sms: "0312345678" is neither a mobile number nor an email address: an Australian mobile number is 04 and 8 more digits`,
		`letters[1].sms: "+610412345678" is neither a mobile number nor an email address: leave out the 0 after +61`,
		`letters[2].sms: "+61 2 9876 5432" is neither a mobile number nor an email address: an Australian mobile number is +61 4 and 8 more digits`,
		`letters[3].sms: "61412345678" is neither a mobile number nor an email address: write an international number with a leading +`,
		`letters[4].sms: "+1234" is neither a mobile number nor an email address: an international number is + and 8 to 15 digits`,
		`letters[5].sms: "04-1234-567x" is neither a mobile number nor an email address: only digits, spaces, dashes, dots, parentheses and a leading + are allowed`,
		`letters[6].sms: "jo@example": the domain "example" has no dot`)
	f(`{"letters":[{"fax":"12345"},{"fax":"0412345678"},{"fax":"+61 (0)2 9876 5432"},{"fax":"+61 4 1234 5678"},{"fax":"1900 123 456"}]}`, one,
		`letters[0].fax: "12345" is not a fax number: an Australian fax number is 0, an area code (2, 3, 7 or 8) and 8 digits, or a 1300 or 1800 number`,
		`letters[1].fax: "0412345678" is not a fax number: an Australian fax number is 0, an area code (2, 3, 7 or 8) and 8 digits, or a 1300 or 1800 number`,
		`letters[2].fax: "+61 (0)2 9876 5432" is not a fax number: leave out the 0 after +61`,
		`letters[3].fax: "+61 4 1234 5678" is not a fax number: an Australian fax number is +61, an area code (2, 3, 7 or 8) and 8 digits`,
		`letters[4].fax: "1900 123 456" is not a fax number: an Australian fax number is 0, an area code (2, 3, 7 or 8) and 8 digits, or a 1300 or 1800 number`)
	// Mailing attributes.
	f(`{"sms_from":"12345678901","confirmation_email":true,"email_subj":"a\nBcc: x","colour_model":10,"orientation":-1,"production_options":{"aup_dlvtyp":2}}`, one,
		"colour_model: 10 is out of range: 0 to 9 are accepted",
		"orientation: -1 is out of range: 0 to 9 are accepted",
		"production_options.aup_dlvtyp: want 0 (priority) or 1 (regular), got 2",
		"confirmation_email: true, but no customer_email is given to send the confirmation to",
		"email_subj: must be a single line",
		`sms_from: "12345678901" has 11 characters; at most 10 are allowed`)
	f(`{"sms_from":"12345"}`, one, `sms_from: "12345" is numeric but not a mobile number replies could reach: an Australian mobile number is 04 and 8 more digits`)
	f(`{"sms_from":"ACME\tBANK"}`, one, `sms_from: "ACME\tBANK" contains control characters`)
	f(`{"sms_from":"ÄÖÜ Café 1","colour_model":9,"orientation":0,"production_options":{"aup_dlvtyp":1},"confirmation_email":false,"email_subj":"x"}`, one)
	f(`{"sms_from":"","email_from":"","customer_email":" "}`, one)
	// File names and references.
	f(`{"letters":[{"postal":"A","file_name":"bb.pdf"},{"postal":"A","file_name":"dir/a.pdf"},{"postal":"A","file_name":"..\\a.pdf"},{"postal":"A","file_name":"a"},{"postal":"A","file_name":".pdf"},{"postal":"A","file_name":"C:a.pdf"},{"postal":"A","file_name":".."}]}`, session,
		`letters[0].file_name: no document "bb.pdf" in this mailing; did you mean "b.pdf"?`,
		`letters[1].file_name: "dir/a.pdf": give a file name without a directory path`,
		`letters[2].file_name: "..\\a.pdf": give a file name without a directory path`,
		`letters[3].file_name: "a" has no extension`,
		`letters[4].file_name: ".pdf" has no name before its extension`,
		`letters[5].file_name: "C:a.pdf": give a file name without a drive`,
		`letters[6].file_name: ".." is not a file name`,
		`warning: documents "a.pdf", "b.pdf", "Terms.PDF" are uploaded but not used by any letter`)
	f(`{"attachments":["terms.pdf","m.json","notes.txt","b.pdf","b.pdf"],"letters":[{"postal":"A","file_name":"a.pdf"}]}`, session,
		`attachments[0]: no document "terms.pdf" in this mailing; did you mean "Terms.PDF"?`,
		`attachments[1]: "m.json" is a metadata file, not a document`,
		`attachments[2]: "notes.txt" is not a document (pdf, ps or xps)`,
		`attachments[4]: warning: "b.pdf" is listed twice`,
		`warning: document "Terms.PDF" is uploaded but not used by any letter`)
	// Page ranges.
	f(`{"letters":[{"postal":"A","page_start":2,"page_end":1},{"postal":"A","page_start":-1},{"postal":"A","page_end":3},{"postal":"A","page_start":3}]}`, one,
		"letters[0].page_start: 2 is after page_end 1",
		"letters[1].page_start: -1 is negative: pages are numbered from 0",
		`letters[2].page_end: 3 is beyond the last page of "a.pdf" (3 pages, numbered 0 to 2)`,
		`letters[3].page_start: 3 is beyond the last page of "a.pdf" (3 pages, numbered 0 to 2)`)
	f(`{"letters":[{"postal":"A","page_start":1}]}`, metadata.Files{{Name: "a.pdf", Pages: 1}},
		`letters[0].page_start: 1 is beyond the last page of "a.pdf" (1 page, numbered 0 to 0)`)
	f(`{"letters":[{"postal":"A","page_start":500,"page_end":900}]}`, metadata.Files{{Name: "a.pdf"}}) // page count unknown
	f(`{"letters":[{"postal":"A","files":[{"file_name":"a.pdf","page_end":5},{"file_name":"b.pdf","page_start":1,"page_end":0}],"file_name":"a.pdf","page_start":0,"page_end":1}]}`, session,
		"letters[0].file_name: give file_name or files, not both",
		"letters[0].page_start: with files, give page_start in each file entry",
		"letters[0].page_end: with files, give page_end in each file entry",
		`letters[0].files[0].page_end: 5 is beyond the last page of "a.pdf" (3 pages, numbered 0 to 2)`,
		"letters[0].files[1].page_start: 1 is after page_end 0",
		`warning: document "Terms.PDF" is uploaded but not used by any letter`)
	// Pages of a letter document that no letter takes: a statement run
	// that loses letters. Page numbers as in page_start and page_end.
	ten := metadata.Files{{Name: "s.pdf", Pages: 10}}
	letters := func(ranges ...string) string {
		var ls []string
		for _, r := range ranges {
			ls = append(ls, `{"postal":"A",`+r+`}`)
		}
		return `{"letters":[` + strings.Join(ls, ",") + `]}`
	}
	f(letters(`"page_start":0,"page_end":1`, `"page_start":7`), ten,
		`warning: "s.pdf": pages 2-6 are in no letter and will not be sent (10 pages, numbered 0 to 9, as page_start and page_end)`)
	f(letters(`"page_end":8`), ten,
		`warning: "s.pdf": page 9 is in no letter and will not be sent (10 pages, numbered 0 to 9, as page_start and page_end)`)
	f(letters(`"page_start":5,"page_end":6`, `"page_start":0,"page_end":1`, `"page_start":1,"page_end":2`), ten,
		`warning: "s.pdf": pages 3-4 and 7-9 are in no letter and will not be sent (10 pages, numbered 0 to 9, as page_start and page_end)`)
	f(letters(`"page_start":1,"page_end":1`, `"page_start":3,"page_end":4`, `"page_start":6,"page_end":7`), ten,
		`warning: "s.pdf": pages 0, 2, 5 and 8-9 are in no letter and will not be sent (10 pages, numbered 0 to 9, as page_start and page_end)`)
	var even []string
	for p := 0; p < 30; p += 2 {
		even = append(even, fmt.Sprintf(`"page_start":%d,"page_end":%d`, p, p))
	}
	f(letters(even...), metadata.Files{{Name: "s.pdf", Pages: 30}},
		`warning: "s.pdf": pages 1, 3, 5, 7, 9, 11, 13, 15, 17, 19 and 5 more pages are in no letter and will not be sent (30 pages, numbered 0 to 29, as page_start and page_end)`)
	// Covered: every page in some letter, overlaps allowed; a letter
	// without a range takes the whole document.
	f(letters(`"page_start":0,"page_end":5`, `"page_start":3`), ten)
	f(letters(`"page_start":4,"page_end":4`, `"email":"a@b.co"`), ten)
	// Not counted: an unknown page count, attachments (taking some pages
	// of an insert is a choice) and a mailing with errors.
	f(letters(`"page_start":0,"page_end":1`), metadata.Files{{Name: "s.pdf"}})
	f(`{"letters":[{"postal":"A","files":[{"file_name":"a.pdf"},{"file_name":"b.pdf","page_start":1,"page_end":1}]}]}`, session,
		`warning: document "Terms.PDF" is uploaded but not used by any letter`)
	f(letters(`"page_start":0,"page_end":1`, `"primary":"fax"`), ten, "letters[1].primary: fax is primary, but the letter has no fax")
	// Each document, in upload order.
	f(`{"letters":[{"postal":"A","file_name":"b.pdf","page_end":0},{"postal":"A","file_name":"a.pdf","page_start":1}]}`, session,
		`warning: document "Terms.PDF" is uploaded but not used by any letter`,
		`warning: "a.pdf": page 0 is in no letter and will not be sent (3 pages, numbered 0 to 2, as page_start and page_end)`,
		`warning: "b.pdf": page 1 is in no letter and will not be sent (2 pages, numbered 0 to 1, as page_start and page_end)`)

	// Rule 1: a document is a letter or an attachment, not both.
	f(`{"attachments":["a.pdf"],"letters":[{"postal":"A","file_name":"a.pdf"},{"postal":"B","files":[{"file_name":"b.pdf"},{"file_name":"a.pdf"}]}]}`, session,
		`letters[0].file_name: "a.pdf" is listed in attachments and cannot also be a letter document (rule 1 of spec 2.4)`,
		`warning: document "Terms.PDF" is uploaded but not used by any letter`)
	f(`{"letters":[{"postal":"A","files":[{"file_name":"a.pdf"},{"file_name":"b.pdf"}]},{"postal":"B","file_name":"b.pdf"},{"postal":"C","files":[{"file_name":"Terms.PDF"},{"file_name":"a.pdf"}]}]}`, session,
		`letters[1].file_name: "b.pdf" is an attachment in letters[0].files[1] and cannot also be a letter document (rule 1 of spec 2.4)`,
		`letters[2].files[1].file_name: "a.pdf" is the letter document of letters[0].files[0] and cannot also be an attachment (rule 1 of spec 2.4)`)
	// Rule 2: one document, no names needed, nothing to report.
	f(`{"letters":[{"postal":"A"},{"postal":"B","page_start":1}]}`, metadata.Files{{Name: "m.xml"}, {Name: "only.xps", Pages: 2}, {Name: "portal.pdf", Portal: true}})
	// Rule 3: several documents, none referenced: the first is used.
	f(`{"letters":[{"postal":"A"},{"email":"b@c.de"}]}`, session,
		`warning: several documents were uploaded and none is referenced as a letter file or an attachment: only the first, "a.pdf", is used; documents "b.pdf", "Terms.PDF" are ignored (rule 3 of spec 2.4)`)
	// Rule 4: several letters sharing a document is fine.
	f(`{"letters":[{"postal":"A","file_name":"b.pdf"},{"postal":"B","file_name":"b.pdf"},{"email":"c@d.com","file_name":"b.pdf"}]}`, metadata.Files{{Name: "b.pdf"}})
	// Some documents named, a letter naming none: the first, with a warning.
	f(`{"letters":[{"postal":"A","file_name":"b.pdf"},{"postal":"B"},{"postal":"C","files":[{"page_start":1}]}]}`, session,
		`letters[1]: warning: no file_name, and several documents were uploaded: the first, "a.pdf", is used`,
		`letters[2].files[0]: warning: no file_name, and several documents were uploaded: the first, "a.pdf", is used`,
		`warning: document "Terms.PDF" is uploaded but not used by any letter`)
	// Portal documents are referenced by name, never chosen by default.
	f(`{"letters":[{"postal":"A","file_name":"portal.pdf"},{"postal":"B"}]}`, metadata.Files{{Name: "a.pdf"}, {Name: "portal.pdf", Portal: true}})
	// No document: text-only messages need a template and email or sms.
	f(`{"letters":[{"sms":"0412345678"}]}`, meta, "letters[0]: no document and no template: nothing to send")
	f(`{"template":"hi","letters":[{"sms":"0412345678","postal":"x","fax":"0298765432"},{"postal":"A"},{"fax":"0298765432","email":"a@b.com"},{"email":"a@b.com","primary":"postal","postal":"x"},{"sms":"0412345678","page_start":1}]}`, meta,
		"letters[0].fax: warning: not used: the letter has no document to fax",
		"letters[0].postal: warning: not used: the letter has no document to print",
		"letters[1]: a letter without a document goes by email or sms; postal needs a document",
		"letters[2]: a letter without a document goes by email or sms; fax needs a document",
		"letters[3].primary: a letter without a document goes by email or sms; postal needs a document",
		"letters[4]: page_start or page_end given, but there is no document")
	// Passwords.
	f(`{"letters":[{"email":"a@b.com","custom_data":{"password":" "}},{"postal":"x","custom_data":{"password":"p"}},{"sms":"0412345678","custom_data":{"password":"p"}}]}`, one,
		"letters[0].custom_data.password: empty password",
		"letters[1].custom_data.password: warning: a password protects a PDF sent by email or SMS; this letter has neither")
	f(`{"letters":[{"email":"a@b.com","custom_data":{"password":"`+strings.Repeat("p", 128)+`"}},{"sms":"0412345678","custom_data":{"password":"a\nb"}},{"email":"a@b.com","custom_data":{"password":"`+strings.Repeat("ü", 63)+`"}}]}`, one,
		"letters[0].custom_data.password: the password has 128 bytes; at most 127 are used by PDF readers",
		"letters[1].custom_data.password: the password holds a control character (a line break, tab or the like) that cannot be typed")
	// Templates: the markers' syntax, each key used by the letters that
	// go by email or SMS, {{link}} only where there is a PDF.
	f(`{"template":"Dear {{name}}, {{amount}} is due: {{link}}","letters":[{"email":"a@b.com","custom_data":{"name":"Jo","amount":"$5"}},{"email":"a@b.com","custom_data":{"name":"Al"}},{"sms":"0412345678"},{"postal":"x"},{"email":"a@b.com","postal":"y","primary":"postal","custom_data":{"amount":""}}]}`, one,
		`letters[1].custom_data: no key "amount" for the template's {{amount}}`,
		`letters[2].custom_data: no key "name" for the template's {{name}}`,
		`letters[2].custom_data: no key "amount" for the template's {{amount}}`,
		`letters[4].custom_data: no key "name" for the template's {{name}}`)
	f(`{"template":"Hi {{name}}: {{link}}","letters":[{"sms":"0412345678","custom_data":{"name":"Jo"}}]}`, meta,
		"letters[0]: the template's {{link}} links to the letter's PDF, but the letter has no document")
	f(`{"template":"Hi {{first name}}","letters":[{"sms":"0412345678"}]}`, meta,
		`template: line 1, column 4: unknown marker (a marker is {{link}} or a custom_data key of letters, digits, '_', '-' and '.') "{{first name}}"`)
	f(`{"template":"Hi\n{{name","letters":[{"email":"a@b.com"}]}`, one,
		`template: line 2, column 1: marker not closed by }} on its line "{{name"`)
	f(`{"template":"{{}} and {{{{literal}}","letters":[{"email":"a@b.com"}]}`, one,
		`template: line 1, column 1: empty marker "{{}}"`)
	f(`{"template":"{{{{literal}} {{LINK}}","letters":[{"email":"a@b.com"}]}`, one)
	f(`{"template":"`+strings.Repeat("{{a}}", 10_001)+`","letters":[{"email":"a@b.com","custom_data":{"a":"x"}}]}`, one,
		`template: line 1, column 50001: more than 10000 markers (the limit) at "{{a}}"`)
	// The auto processor's split rules.
	f(`{"production_options":{"split_pages":2}}`, one)
	f(`{"production_options":{"split_marker":"Page 1 of"}}`, one)
	f(`{"production_options":{"split_pages":0,"split_marker":"ab"}}`, one,
		"production_options.split_pages: want 1 to 10000 pages per letter, got 0",
		"production_options.split_marker: a marker is 3 to 100 characters of text the first page of every letter shows",
		"production_options.split_marker: give split_pages or split_marker, not both")
	// The production extensions: a background is a document of the
	// session, never a letter's, and never reported unused.
	lh := metadata.Files{{Name: "a.pdf", Pages: 3}, {Name: "letterhead.pdf", Pages: 1}}
	f(`{"production_options":{"background":"letterhead.pdf","background_pages":"all","cover_sheet":true,"stock":"white_100gsm"},"letters":[{"postal":"A","file_name":"a.pdf"}]}`, lh)
	f(`{"production_options":{"background":"letterhead.pdf"},"letters":[{"postal":"A"}]}`, lh)
	f(`{"production_options":{"background":"nope.pdf","background_pages":"some","stock":"white paper"},"letters":[{"postal":"A","file_name":"a.pdf"}]}`, lh,
		`production_options.background_pages: want "first" or "all", got "some"`,
		`production_options.stock: a stock name is 1 to 32 letters, digits, '-' or '_'`,
		`production_options.background: no document "nope.pdf" in this mailing`,
		`warning: document "letterhead.pdf" is uploaded but not used by any letter`)
	f(`{"production_options":{"background":"letterhead.pdf"},"letters":[{"postal":"A","file_name":"letterhead.pdf"}]}`, lh,
		`letters[0].file_name: "letterhead.pdf" is the mailing's background (production_options.background): it cannot also be a letter's document or attachment`,
		`warning: document "a.pdf" is uploaded but not used by any letter`)
	f(`{"production_options":{"background":"m.json"},"letters":[{"postal":"A"}]}`, append(lh, meta...),
		`production_options.background: "m.json" is a metadata file, not a document`,
		`warning: several documents were uploaded and none is referenced as a letter file or an attachment: only the first, "a.pdf", is used; document "letterhead.pdf" is ignored (rule 3 of spec 2.4)`)
	// No letters: the auto processor's; only the attachments are checked.
	f(`{"attachments":["x.pdf"]}`, session, `attachments[0]: no document "x.pdf" in this mailing`)
	f(`{"letters":[]}`, session)
	if probs := metadata.Validate(nil, session); probs != nil {
		t.Errorf("nil pack: %q", strs(probs))
	}
}

// TestValidateManyProblems: the list is bounded, then one more entry.
func TestValidateManyProblems(t *testing.T) {
	in := `{"letters":[` + strings.TrimSuffix(strings.Repeat(`{"email":"x"},`, 3000), ",") + `]}`
	probs := metadata.Validate(mustParse(t, in), metadata.Files{{Name: "a.pdf"}})
	if len(probs) != 1001 || probs[1000].String() != "too many problems: stopped after 1000" || probs[999].Path != "letters[999].email" {
		t.Errorf("%d problems, last %q", len(probs), strs(probs[max(len(probs)-2, 0):]))
	}
}

// TestPlan: how letters resolve into documents and channels.
func TestPlan(t *testing.T) {
	f := func(in string, files metadata.Files, want ...string) {
		t.Helper()
		plan, probs := mustParse(t, in).Plan(files)
		var got []string
		for _, l := range plan {
			var docs []string
			for _, d := range l.Documents {
				s := fmt.Sprintf("%s:%d-%d", d.Name, d.PageStart, d.PageEnd)
				if d.Attachment {
					s = "+" + s
				}
				docs = append(docs, s)
			}
			if l.TextOnly {
				docs = append(docs, "text")
			}
			got = append(got, fmt.Sprintf("%d %s %s %s", l.Index, strings.Join(l.Channels, ","), strings.Join(docs, " "), l.Reference))
		}
		for _, p := range probs {
			got = append(got, p.String())
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ngot  %q\nwant %q", in, got, want)
		}
	}
	// Default channel order: sms, fax, email, postal; the primary first.
	f(`{"letters":[{"postal":"A","email":"a@b.com","fax":"0298765432","sms":"0412345678"},{"postal":"A","email":"a@b.com"},{"postal":"A","email":"a@b.com","sms":"b@c.com","primary":"postal","reference":"R"}]}`, metadata.Files{{Name: "a.pdf", Pages: 2}},
		"0 sms,fax,email,postal a.pdf:0-1 ",
		"1 email,postal a.pdf:0-1 ",
		"2 postal,sms,email a.pdf:0-1 R")
	// Attachments absent: the first file is the letter, the rest attachments.
	f(`{"letters":[{"postal":"A","files":[{"file_name":"b.pdf"},{"file_name":"a.pdf","page_start":1}]}]}`, metadata.Files{{Name: "a.pdf", Pages: 3}, {Name: "b.pdf"}},
		"0 postal b.pdf:0--1 +a.pdf:1-2 ")
	// Attachments listed: named per letter, or appended to all letters.
	f(`{"attachments":["t.pdf","x.pdf"],"letters":[{"postal":"A","files":[{"file_name":"x.pdf"},{"file_name":"a.pdf"},{"file_name":"b.pdf"}]},{"postal":"B","file_name":"a.pdf","page_end":0}]}`,
		metadata.Files{{Name: "a.pdf", Pages: 3}, {Name: "b.pdf", Pages: 1}, {Name: "t.pdf", Pages: 4}, {Name: "x.pdf"}},
		"0 postal a.pdf:0-2 b.pdf:0-0 +x.pdf:0--1 +t.pdf:0-3 ",
		"1 postal a.pdf:0-0 +t.pdf:0-3 ")
	// Only attachments uploaded: a text-only email carrying them.
	f(`{"template":"Hi","attachments":["t.pdf"],"letters":[{"email":"a@b.com"}]}`, metadata.Files{{Name: "t.pdf", Pages: 1}},
		"0 email +t.pdf:0-0 text ")
	// Rule 3's warning comes with a plan.
	f(`{"letters":[{"postal":"A"}]}`, metadata.Files{{Name: "a.pdf"}, {Name: "b.pdf"}},
		"0 postal a.pdf:0--1 ",
		`warning: several documents were uploaded and none is referenced as a letter file or an attachment: only the first, "a.pdf", is used; document "b.pdf" is ignored (rule 3 of spec 2.4)`)
	// Errors: no plan.
	f(`{"letters":[{"postal":"A","file_name":"c.pdf"}]}`, metadata.Files{{Name: "a.pdf"}},
		`letters[0].file_name: no document "c.pdf" in this mailing`,
		`warning: document "a.pdf" is uploaded but not used by any letter`)
	// No letters: no plan, the auto processor takes the mailing.
	f(`{"title":"x"}`, metadata.Files{{Name: "a.pdf"}})
}

// TestEmailAndNumbers: addresses and numbers that pass.
func TestEmailAndNumbers(t *testing.T) {
	f := func(field, value string) {
		t.Helper()
		in := fmt.Sprintf(`{"letters":[{%q:%q,"postal":"A"}]}`, field, value)
		if probs := metadata.Validate(mustParse(t, in), metadata.Files{{Name: "a.pdf"}}); len(probs) > 0 {
			t.Errorf("%s %q: %q", field, value, strs(probs))
		}
	}
	for _, e := range []string{"jo@example.com", "Jo Citizen <jo@example.com.au>", "jo.citizen+tag@mail.example.org", " jo@example.com ", "jo@xn--bcher-kva.example", "jo@bücher.example"} {
		f("email", e)
	}
	for _, m := range []string{"0412345678", "0412 345 678", "0412-345-678", "(04) 1234 5678", "+61412345678", "+61 412 345 678", "+64 21 123 4567", "+447911123456", "jo@example.com"} {
		f("sms", m)
	}
	for _, n := range []string{"0298765432", "(02) 9876 5432", "07 3123 4567", "08.9123.4567", "+61 3 9123 4567", "1300 123 456", "1800123456", "+44 20 7946 0958"} {
		f("fax", n)
	}
}

// TestApplyProfile: unset fields come from the profile, set ones stay.
func TestApplyProfile(t *testing.T) {
	prof := mustParse(t, `{"duplex":true,"colour_model":2,"title":"Profile title","customer_email":"p@x.com","confirmation_email":true,"department":"D","purchase_order":"PO","terminal":"T","cust_hold":true,"orientation":1,"attachments":["t.pdf"],"production_options":{"aup_dlvtyp":0,"force_c4":true},"template":"tpl","sms_from":"ACME","email_from":"f@x.com","email_subj":"S"}`)
	p := mustParse(t, `{"profile":"std","duplex":false,"title":"","production_options":{"force_c4":false},"letters":[{"postal":"A"}]}`)
	metadata.ApplyProfile(p, *prof)
	want := mustParse(t, `{"profile":"std","duplex":false,"colour_model":2,"title":"","customer_email":"p@x.com","confirmation_email":true,"department":"D","purchase_order":"PO","terminal":"T","cust_hold":true,"orientation":1,"attachments":["t.pdf"],"production_options":{"aup_dlvtyp":0,"force_c4":false},"template":"tpl","sms_from":"ACME","email_from":"f@x.com","email_subj":"S","letters":[{"postal":"A"}]}`)
	if !reflect.DeepEqual(stripRaw(p), stripRaw(want)) {
		t.Errorf("got  %s\nwant %s", dump(stripRaw(p)), dump(stripRaw(want)))
	}
	// No shared memory: changing the profile afterwards changes nothing.
	*prof.ColourModel, prof.Attachments[0], *prof.ProductionOptions.AupDlvtyp = 7, "u.pdf", 1
	if *p.ColourModel != 2 || p.Attachments[0] != "t.pdf" || *p.ProductionOptions.AupDlvtyp != 0 {
		t.Error("the pack shares memory with the profile")
	}
	// An attachments list, even empty, is kept; letters and the profile
	// name never come from a profile.
	q := mustParse(t, `{"attachments":[]}`)
	metadata.ApplyProfile(q, metadata.Pack{Attachments: []string{"x.pdf"}, AttachmentsSet: true, Letters: []metadata.Letter{{Email: "a@b.co"}}, Profile: prof.Template})
	if len(q.Attachments) != 0 || q.HasLetters() || q.Profile != nil {
		t.Errorf("got %s", dump(q))
	}
	// Applied in order, most specific first.
	r := &metadata.Pack{}
	one, two := 1, 2
	metadata.ApplyProfile(r, metadata.Pack{Orientation: &one})
	metadata.ApplyProfile(r, metadata.Pack{Orientation: &two, ColourModel: &two})
	if *r.Orientation != 1 || *r.ColourModel != 2 {
		t.Errorf("chain: %s", dump(r))
	}
	metadata.ApplyProfile(nil, metadata.Pack{}) // no panic
}

// TestProfileSource: a problem in an attribute a profile supplied names
// the profile, not the client's metadata file; the file's own attributes
// stay its own.
func TestProfileSource(t *testing.T) {
	const src = `profile "std" (profiles/ABC12345/std.json)`
	f := func(in, profile string, want ...string) {
		t.Helper()
		p := mustParse(t, in)
		prof := mustParse(t, profile)
		prof.Source = src
		metadata.ApplyProfile(p, *prof)
		var got []string
		for _, pr := range metadata.Validate(p, metadata.Files{{Name: "a.pdf", Pages: 3}}) {
			got = append(got, pr.In("m.json"))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s with %s:\ngot  %q\nwant %q", in, profile, got, want)
		}
	}
	letter := `"letters":[{"postal":"A"}]`
	f(`{`+letter+`}`, `{"attachments":["terms.pdf"]}`,
		src+`: attachments[0]: no document "terms.pdf" in this mailing`)
	f(`{`+letter+`}`, `{"customer_email":"bad","confirmation_email":true,"production_options":{"aup_dlvtyp":5,"force_c4":true},"colour_model":12,"sms_from":"+6100","email_subj":"a\nb","attachments":["x.pdf","x.pdf"]}`,
		src+`: colour_model: 12 is out of range: 0 to 9 are accepted`,
		src+`: production_options.aup_dlvtyp: want 0 (priority) or 1 (regular), got 5`,
		src+`: customer_email: "bad" is not a valid email address`,
		src+`: email_subj: must be a single line`,
		src+`: sms_from: "+6100" is numeric but not a mobile number replies could reach: leave out the 0 after +61`,
		src+`: attachments[0]: no document "x.pdf" in this mailing`,
		src+`: attachments[1]: warning: "x.pdf" is listed twice`)
	// The file's own values are its own, also beside the profile's.
	f(`{"customer_email":"bad","production_options":{"aup_dlvtyp":7},`+letter+`}`, `{"customer_email":"p@example.com","production_options":{"force_c4":true,"aup_dlvtyp":1}}`,
		`m.json: production_options.aup_dlvtyp: want 0 (priority) or 1 (regular), got 7`,
		`m.json: customer_email: "bad" is not a valid email address`)
	// The client's letter uses a document the profile lists as an attachment.
	f(`{"letters":[{"postal":"A","file_name":"a.pdf"}]}`, `{"attachments":["a.pdf"]}`,
		`m.json: letters[0].file_name: "a.pdf" is listed in the attachments of `+src+` and cannot also be a letter document (rule 1 of spec 2.4)`)
	// Without a Source, problems are the file's, as before.
	p := mustParse(t, `{`+letter+`}`)
	metadata.ApplyProfile(p, metadata.Pack{Attachments: []string{"x.pdf"}, AttachmentsSet: true})
	if got := metadata.Validate(p, metadata.Files{{Name: "a.pdf"}}); len(got) != 1 || got[0].In("m.json") != `m.json: attachments[0]: no document "x.pdf" in this mailing` {
		t.Errorf("no source: %q", strs(got))
	}
}
