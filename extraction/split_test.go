package extraction

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/pagetext"
)

// chars lays out text as Helvetica-like characters of size 10 at x, with
// the baseline at y: each character 5.5 pt wide, a space a gap.
func chars(x, y float64, text string) []pagetext.Char {
	var out []pagetext.Char
	for _, r := range text {
		if r != ' ' {
			out = append(out, pagetext.Char{Text: string(r), X0: x, X1: x + 5.5, Y0: y - 8, Y1: y + 2, Size: 10})
		}
		x += 5.5
	}
	return out
}

var zone = pagetext.Rect{X0: 48, Y0: 133, X1: 335, Y1: 278}

func TestLines(t *testing.T) {
	f := func(name string, cs []pagetext.Char, want ...string) {
		t.Helper()
		got, _ := lines(cs, zone, nil)
		var texts []string
		for _, l := range got {
			texts = append(texts, l.Text)
		}
		if strings.Join(texts, "|") != strings.Join(want, "|") {
			t.Errorf("%s: got %q, want %q", name, texts, want)
		}
	}
	cat := func(parts ...[]pagetext.Char) []pagetext.Char {
		var out []pagetext.Char
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	f("one line", chars(60, 160, "MR JOHN CITIZEN"), "MR JOHN CITIZEN")
	f("three lines drawn bottom up", cat(chars(60, 184, "KINGSTON ACT 2604"), chars(60, 172, "10 SMITH ST"), chars(60, 160, "MR J CITIZEN")),
		"MR J CITIZEN", "10 SMITH ST", "KINGSTON ACT 2604")
	// drawn right to left (a producer that writes words in any order)
	rev := chars(60, 160, "UNIT 2 10 SMITH ST")
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	f("reversed drawing", rev, "UNIT 2 10 SMITH ST")
	f("outside the zone", chars(400, 160, "DATE 1 JAN"))
	f("half in: centres decide", chars(320, 160, "ABCDE"), "ABC")
	bold := cat(chars(60, 160, "BOLD"), chars(60.4, 160, "BOLD"))
	f("overstruck bold", bold, "BOLD")
	f("doubled letters stay", chars(60, 160, "HILL"), "HILL")
	narrow := []pagetext.Char{{Text: "l", X0: 60, X1: 62.2, Y0: 152, Y1: 162, Size: 10}, {Text: "l", X0: 62.2, X1: 64.4, Y0: 152, Y1: 162, Size: 10}}
	f("doubled narrow letters stay", narrow, "ll")
	sub := chars(60, 160, "LEVEL 3")
	sub[len(sub)-1].Y1 += 1.5 // a baseline a little off
	f("baseline jitter", sub, "LEVEL 3")
	rot := chars(60, 160, "SIDEWAYS")
	for i := range rot {
		rot[i].Dir = 1
	}
	f("rotated text is no address", rot)
	lig := []pagetext.Char{{Text: "\ufb01", X0: 60, X1: 66, Y0: 152, Y1: 162, Size: 10}, {Text: "ve", X0: 66, X1: 76, Y0: 152, Y1: 162, Size: 10}}
	f("ligature", lig, "five")
	f("minus sign as hyphen", chars(60, 160, "ref:INV−0042"), "ref:INV-0042")
	f("nothing", nil)
	f("zero-sized characters are ignored", []pagetext.Char{{Text: "X", X0: 60, X1: 60, Y0: 152, Y1: 162, Size: 10}})
}

func TestReadWindow(t *testing.T) {
	f := func(text string, want string) {
		t.Helper()
		var ls []Line
		for i, s := range strings.Split(text, "\n") {
			ls = append(ls, Line{Text: s, Box: pagetext.Rect{X0: 60, Y0: 150 + 12*float64(i), X1: 200, Y1: 160 + 12*float64(i)}})
		}
		w := readWindow(ls)
		got := fmt.Sprintf("ref=%s email=%s fax=%s sms=%s postal=%s masks=%d problem=%s", w.Reference, w.Email, w.Fax, w.SMS, strings.Join(w.Postal, "/"), len(w.Masks), w.Problem)
		if got != want {
			t.Errorf("%q:\n got %s\nwant %s", text, got, want)
		}
	}
	f("MR J CITIZEN\n10 SMITH ST\nKINGSTON ACT 2604", "ref= email= fax= sms= postal=MR J CITIZEN/10 SMITH ST/KINGSTON ACT 2604 masks=0 problem=")
	f("ref:123456789\nMR J CITIZEN\nKINGSTON ACT 2604", "ref=123456789 email= fax= sms= postal=MR J CITIZEN/KINGSTON ACT 2604 masks=1 problem=")
	f("REF: A-1\nemail:j@example.com\nfax:02 6123 4567\nsms:+61 412 345 678\nMR J CITIZEN\nKINGSTON ACT 2604",
		"ref=A-1 email=j@example.com fax=02 6123 4567 sms=+61 412 345 678 postal=MR J CITIZEN/KINGSTON ACT 2604 masks=4 problem=")
	f("email:j@example.com", "ref= email=j@example.com fax= sms= postal= masks=1 problem=")
	f("sms:j@example.com\nMR J", "ref= email= fax= sms=j@example.com postal=MR J masks=1 problem=")
	f("MR J CITIZEN\nref:1\nKINGSTON ACT 2604", "ref= email= fax= sms= postal=MR J CITIZEN/KINGSTON ACT 2604 masks=0 problem=the ref: line comes after address lines: channel lines go above the address")
	f("ref:1\nref:2\nA\nB", "ref=1 email= fax= sms= postal=A/B masks=2 problem=the window has two ref: lines")
	f("email:not an address\nA\nB", "ref= email=not an address fax= sms= postal=A/B masks=1 problem=the email: line \"not an address\" is not an email address")
	f("fax:12\nA\nB", "ref= email= fax=12 sms= postal=A/B masks=1 problem=the fax: line \"12\" is not a phone number (2 digits)")
	f("sms:call me\nA\nB", "ref= email= fax= sms=call me postal=A/B masks=1 problem=the sms: line \"call me\" is not a phone number")
	f("ref:\nA\nB", "ref= email= fax= sms= postal=A/B masks=1 problem=the ref: line is empty")
	f("A\nB\nC\nD\nE\nF\nG\nH\nI", "ref= email= fax= sms= postal=A/B/C/D/E/F/G/H/I masks=0 problem=the window holds 9 lines below the channel lines: more than an address (8 at most)")
	f("MR \uFFFD\uFFFD\nB", "ref= email= fax= sms= postal=MR \uFFFD\uFFFD/B masks=0 problem=the address cannot be read: its font does not say which letters it draws (\"MR \uFFFD\uFFFD\")")
	f("Reference: 5\nB", "ref= email= fax= sms= postal=Reference: 5/B masks=0 problem=")
}

func TestSplit(t *testing.T) {
	addr := func(lines ...string) PageRead {
		var pr PageRead
		for i, s := range lines {
			pr.Lines = append(pr.Lines, Line{Text: s, Box: pagetext.Rect{X0: 60, Y0: 150 + 12*float64(i), X1: 200, Y1: 160 + 12*float64(i)}})
		}
		return pr
	}
	a := addr("MR A", "1 A ST", "KINGSTON ACT 2604")
	b := addr("MS B", "2 B ST", "KINGSTON ACT 2604")
	bShouting := addr("ms b", "2 b st.", "Kingston  ACT 2604")
	blank := PageRead{}
	head := addr("Page 2 of 3")
	scan := PageRead{Image: true}
	bad := PageRead{Err: "page draws more than 200,000 characters"}
	f := func(name string, rule Rule, pages []PageRead, want string) {
		t.Helper()
		var got []string
		for _, fd := range split("doc.pdf", pages, rule) {
			s := fmt.Sprintf("%d-%d %s", fd.First+1, fd.Last+1, strings.Join(fd.Window.Postal, "/"))
			if fd.Hold != "" {
				s += " HELD " + fd.Hold
			}
			got = append(got, s)
		}
		if g := strings.Join(got, "; "); g != want {
			t.Errorf("%s:\n got %s\nwant %s", name, g, want)
		}
	}
	f("one letter", Rule{}, []PageRead{a, blank, blank}, "1-3 MR A/1 A ST/KINGSTON ACT 2604")
	f("stream", Rule{}, []PageRead{a, blank, b, head, blank, a}, "1-2 MR A/1 A ST/KINGSTON ACT 2604; 3-5 MS B/2 B ST/KINGSTON ACT 2604; 6-6 MR A/1 A ST/KINGSTON ACT 2604")
	f("repeated address is a continuation", Rule{}, []PageRead{b, bShouting, b}, "1-3 MS B/2 B ST/KINGSTON ACT 2604")
	bRef1, bRef2 := addr("ref:1", "MS B", "2 B ST", "KINGSTON ACT 2604"), addr("ref:2", "MS B", "2 B ST", "KINGSTON ACT 2604")
	f("repeated address without its reference is a continuation", Rule{}, []PageRead{bRef1, b}, "1-2 MS B/2 B ST/KINGSTON ACT 2604")
	f("same address, another reference: another letter", Rule{}, []PageRead{bRef1, bRef2}, "1-1 MS B/2 B ST/KINGSTON ACT 2604; 2-2 MS B/2 B ST/KINGSTON ACT 2604")
	f("every page a letter", Rule{}, []PageRead{a, b, a, b}, "1-1 MR A/1 A ST/KINGSTON ACT 2604; 2-2 MS B/2 B ST/KINGSTON ACT 2604; 3-3 MR A/1 A ST/KINGSTON ACT 2604; 4-4 MS B/2 B ST/KINGSTON ACT 2604")
	f("pages before the first address", Rule{}, []PageRead{blank, head, a, blank},
		"1-2  HELD page 1 of doc.pdf comes before the first address: no envelope window on it shows one (pages 1-2); 3-4 MR A/1 A ST/KINGSTON ACT 2604")
	f("a scan", Rule{}, []PageRead{scan, scan}, "1-2  HELD the envelope window of page 1 of doc.pdf shows only an image (a scanned page?): lodge reads text, not pictures (pages 1-2)")
	f("an unreadable page in a letter", Rule{}, []PageRead{a, bad, b},
		"1-2 MR A/1 A ST/KINGSTON ACT 2604 HELD page 2 of doc.pdf could not be read (page draws more than 200,000 characters): the letter may hold the start of another; 3-3 MS B/2 B ST/KINGSTON ACT 2604")
	f("an unreadable first page", Rule{}, []PageRead{bad, a}, "1-1  HELD page 1 of doc.pdf could not be read: page draws more than 200,000 characters; 2-2 MR A/1 A ST/KINGSTON ACT 2604")
	f("pages per letter", Rule{PagesPerLetter: 2}, []PageRead{a, a, b, blank}, "1-2 MR A/1 A ST/KINGSTON ACT 2604; 3-4 MS B/2 B ST/KINGSTON ACT 2604")
	f("pages per letter, no address", Rule{PagesPerLetter: 2}, []PageRead{a, blank, blank, b}, "1-2 MR A/1 A ST/KINGSTON ACT 2604; 3-4  HELD no address in the envelope window of page 3 of doc.pdf (pages 3-4)")
	f("pages per letter, a remainder", Rule{PagesPerLetter: 2}, []PageRead{a, blank, b}, "1-2 MR A/1 A ST/KINGSTON ACT 2604; 3-3 MS B/2 B ST/KINGSTON ACT 2604 HELD doc.pdf has 3 pages, not a whole number of letters of 2 pages: the last letter has 1")
	am, bm := a, b
	am.Marker, bm.Marker = true, true
	f("marker", Rule{Marker: "BEGIN"}, []PageRead{am, b, bm, a}, "1-2 MR A/1 A ST/KINGSTON ACT 2604; 3-4 MS B/2 B ST/KINGSTON ACT 2604")
	f("marker missing at the start", Rule{Marker: "BEGIN"}, []PageRead{a, bm}, "1-1 MR A/1 A ST/KINGSTON ACT 2604 HELD page 1 of doc.pdf comes before the first page that shows the marker \"BEGIN\"; 2-2 MS B/2 B ST/KINGSTON ACT 2604")
	prob := addr("MR A", "ref:1", "KINGSTON ACT 2604")
	f("a window with a problem is a held letter", Rule{}, []PageRead{a, prob, blank},
		"1-1 MR A/1 A ST/KINGSTON ACT 2604; 2-3 MR A/KINGSTON ACT 2604 HELD the envelope window of page 2 of doc.pdf: the ref: line comes after address lines: channel lines go above the address")
	f("no pages", Rule{}, nil, "")
}

func TestCutLines(t *testing.T) {
	f := func(name string, cs []pagetext.Char, want string) {
		t.Helper()
		ls, _ := lines(cs, zone, nil)
		var got []string
		for _, l := range ls {
			got = append(got, fmt.Sprintf("%s cut=%v", l.Text, l.Cut))
		}
		if g := strings.Join(got, "|"); g != want {
			t.Errorf("%s: got %q, want %q", name, g, want)
		}
	}
	f("inside", chars(60, 160, "10 SMITH ST"), "10 SMITH ST cut=false")
	f("past the left edge", chars(30, 160, "10 SMITH STREET"), "SMITH STREET cut=true")
	f("past the right edge", chars(300, 160, "KINGSTON ACT"), "KINGST cut=true")
	f("a column beside it is not a cut", append(chars(60, 160, "10 SMITH ST"), chars(345, 160, "Date: 1 March")...), "10 SMITH ST cut=false")
	f("only outside", chars(340, 160, "Page 2"), "")
}
