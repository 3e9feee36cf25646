package portal_test

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/portal"
)

var (
	mailingRowRE = regexp.MustCompile(`<td><a class="mono" href="/portal/mailings/([^"/]+)">`)
	olderRE      = regexp.MustCompile(`href="(/portal/mailings\?[^"]+)"[^>]*>(Older|Search older mailings)<`)
)

// listed returns the EPIDs of the mailings table and of the letters table
// (letters by reference) of a mailings page.
func listed(body string) (mailings, letters []string) {
	lettersPart, mailingsPart := "", body
	if i := strings.Index(body, "<th>Department</th>"); i >= 0 {
		lettersPart, mailingsPart = body[:i], body[i:]
	} else {
		lettersPart, mailingsPart = body, ""
	}
	for _, m := range mailingRowRE.FindAllStringSubmatch(mailingsPart, -1) {
		mailings = append(mailings, m[1])
	}
	for _, m := range mailingRowRE.FindAllStringSubmatch(lettersPart, -1) {
		letters = append(letters, m[1])
	}
	return mailings, letters
}

// searchFixture adds to the portal fixture (HOLD1 and FIX1 of ABC00001,
// EVE1 of ABC00002):
//
//	OLD1  (ABC00001) 10 Feb 2026, "Old letters", department "Archive", refs old-1, letters
//	INV1  (ABC00001) "Quarterly Invoices", department "Accounts Receivable", refs inv-1, inv-2
//	SAME01..SAME60 (ABC00001) one instant after INV1, "Same instant", department "Ops", ref s each
//	EVE2  (ABC00002) "Quarterly Invoices", department "Accounts", ref inv-1, a letter held
func searchFixture(t *testing.T) *fixture {
	f := newFixture(t)
	sub := func(m pipeline.Mailing, refs ...string) {
		t.Helper()
		var ls []pipeline.Letter
		for i, r := range refs {
			ls = append(ls, pipeline.Letter{Idx: i, Reference: r, Channels: []string{"postal"}, Postal: []string{"Jo Citizen", "10 Jones St", "Ultimo NSW 2007"}})
		}
		m.Letters, m.User = len(ls), "jo"
		if err := f.mr.Submit(m, ls); err != nil {
			t.Fatal(err)
		}
		f.clock.advance(time.Second)
	}
	sub(pipeline.Mailing{EPID: "OLD1", Account: "ABC00001", Created: time.Date(2026, 2, 10, 12, 0, 0, 0, time.UTC), Title: "Old letters", Department: "Archive"}, "old-1", "letters")
	sub(pipeline.Mailing{EPID: "INV1", Account: "ABC00001", Title: "Quarterly Invoices", Department: "Accounts Receivable"}, "inv-1", "inv-2")
	same := f.clock.Now()
	for i := 1; i <= 60; i++ {
		sub(pipeline.Mailing{EPID: fmt.Sprintf("SAME%02d", i), Account: "ABC00001", Created: same, Title: "Same instant", Department: "Ops"}, "s")
	}
	sub(pipeline.Mailing{EPID: "EVE2", Account: "ABC00002", CustHold: true, Title: "Quarterly Invoices", Department: "Accounts"}, "inv-1")
	return f
}

func sameEPIDs(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("SAME%02d", i))
	}
	return out
}

// TestSearch: each field of the search form, combined, and never another
// account's mailing or letter.
func TestSearch(t *testing.T) {
	f := searchFixture(t)
	b := f.browser()
	b.signIn("jo", joPass).expect(200)
	f2 := func(query string, wantMailings, wantLetters []string, contains ...string) {
		t.Helper()
		b.get("/portal/mailings?"+query).expect(200, contains...)
		ms, ls := listed(b.body)
		if !slices.Equal(ms, wantMailings) || !slices.Equal(ls, wantLetters) {
			t.Fatalf("%s: mailings %v letters %v, want %v and %v", query, ms, ls, wantMailings, wantLetters)
		}
		for _, e := range append(ms, ls...) {
			if strings.HasPrefix(e, "EVE") {
				t.Fatalf("%s shows another account's %s", query, e)
			}
		}
		if strings.Contains(b.body, "secret") {
			t.Fatalf("%s shows another account's mailing", query)
		}
	}
	q := url.QueryEscape
	none := []string(nil)
	// title, department, any case, part of a word
	f2("q=quarterly", []string{"INV1"}, none)
	f2("q=INVOICES", []string{"INV1"}, none)
	f2("q=receiv", []string{"INV1"}, none)
	f2("q="+q("old LETTERS"), []string{"OLD1"}, none)
	f2("q=archive", []string{"OLD1"}, none)
	f2("q=statements", []string{"FIX1"}, none)
	f2("q="+q("<script>"), []string{"HOLD1"}, none) // the title is text, found as typed
	// a reference: its letters, and no mailing (no title has it)
	f2("q=inv-1", none, []string{"INV1"}, "Letters with reference")
	f2("q=inv-2", none, []string{"INV1"})
	f2("q=letters", []string{"OLD1"}, []string{"OLD1"})    // both: a reference, and a title containing it
	f2("q=s", sameEPIDs(1, 50), sameEPIDs(1, 60), "Older") // 60 letters with reference s, and every title with an s
	f2("q=nothing-like-it", none, none, "No mailing or letter of your account matches")
	// status: mailings with a letter in it
	f2("status=Held", []string{"FIX1", "HOLD1"}, none)
	f2("status=Cancelled", none, none, "No mailing or letter of your account matches")
	// creation dates, both included
	f2("from=2026-02-01&to=2026-02-28", []string{"OLD1"}, none)
	f2("to=2026-02-10", []string{"OLD1"}, none)
	f2("from=2026-02-10&to=2026-02-10", []string{"OLD1"}, none)
	f2("to=2026-02-09", none, none, "No mailing or letter")
	f2("q=old&from=2026-02-11", none, none)
	// combined
	f2("q=invoices&status=Received", []string{"INV1"}, none)
	f2("q=invoices&status=Held", none, none)
	f2("q=inv-1&status=Received&from=2026-02-11", none, []string{"INV1"})
	f2("q=inv-1&to=2026-02-28", none, none)
	f2("q=same&status=Received&from=2026-02-11", sameEPIDs(1, 50), none, "Older")
	f2("q=statements&status=Held&from=2026-02-01", []string{"FIX1"}, none)
	// an EPID goes straight to the mailing; another account's does not
	b.get("/portal/mailings?q=inv1").expect(200, "Mailing <span class=\"mono\">INV1</span>")
	f2("q=EVE2", none, none, "No mailing or letter of your account matches")
	f2("q=eve-ref", none, none, "No mailing or letter of your account matches")
	// the form keeps what was asked
	b.get("/portal/mailings?q=invoices&status=Held&from=2026-02-01&to=2026-03-31").expect(200,
		`value="invoices"`, `<option value="Held" selected>`, `value="2026-02-01"`, `value="2026-03-31"`)
}

// TestSearchBadInput: a value the form cannot take is named, with the
// form, and nothing is searched.
func TestSearchBadInput(t *testing.T) {
	f := newFixture(t)
	b := f.browser()
	b.signIn("jo", joPass).expect(200)
	f2 := func(query string, msg string) {
		t.Helper()
		b.get("/portal/mailings?"+query).expect(400, msg, `name="q"`)
		if ms, _ := listed(b.body); len(ms) != 0 {
			t.Fatalf("%s: listed %v", query, ms)
		}
	}
	f2("from=2026-13-01", "The &#34;From&#34; date is not a date")
	f2("to=yesterday", "The &#34;To&#34; date is not a date")
	f2("from=2026-3-1", "The &#34;From&#34; date is not a date")
	f2("from=2026-03-02&to=2026-03-01", "The &#34;From&#34; date is after the &#34;To&#34; date")
	f2("status=Bogus", "The status asked for is not one of the list&#39;s")
	f2("q="+strings.Repeat("x", 201), "at most 200 characters")
	f2("q=%ff%fe", "The search text is not UTF-8 text")
	for _, a := range []string{"x", "12", ".E1", "abc.E1", "1." + strings.Repeat("E", 65), "99999999999999999999.E1"} {
		f2("after="+url.QueryEscape(a), "not a valid position in the list")
	}
	b.get("/portal/mailings?q=" + strings.Repeat("é", 200)).expect(200) // 200 characters, 400 bytes
}

// TestSearchPaging: pages follow one another without skipping or
// repeating a mailing, also across 60 mailings created in the same
// instant (paging by creation time alone lost those past a page's end),
// for the whole list and for a search.
func TestSearchPaging(t *testing.T) {
	f := searchFixture(t)
	b := f.browser()
	b.signIn("jo", joPass).expect(200)
	walk := func(start string) []string {
		t.Helper()
		var all []string
		b.get(start).expect(200)
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatalf("%s: paging does not end", start)
			}
			ms, _ := listed(b.body)
			if len(ms) > 50 {
				t.Fatalf("%d mailings on a page", len(ms))
			}
			all = append(all, ms...)
			m := olderRE.FindStringSubmatch(b.body)
			if m == nil {
				return all
			}
			b.get(strings.ReplaceAll(m[1], "&amp;", "&")).expect(200, "Newest")
		}
	}
	want := append(sameEPIDs(1, 60), "INV1", "FIX1", "HOLD1", "OLD1")
	if got := walk("/portal/mailings"); !slices.Equal(got, want) {
		t.Fatalf("pages gave %d mailings %v, want %d %v", len(got), got, len(want), want)
	}
	if got := walk("/portal/mailings?q=same&status=Received"); !slices.Equal(got, sameEPIDs(1, 60)) {
		t.Fatalf("search pages gave %d mailings %v", len(got), got)
	}
	// the second page of a search keeps its filters
	b.get("/portal/mailings?q=same").expect(200)
	next := olderRE.FindStringSubmatch(b.body)
	if next == nil || !strings.Contains(next[1], "q=same") {
		t.Fatalf("the next page's link %v loses the search", next)
	}
}

// TestSearchBounded: a search that examines its bound of mailings without
// filling a page says how far back it searched and goes on from there.
func TestSearchBounded(t *testing.T) {
	f := searchFixture(t)
	defer portal.SetSearchScanBound(20)()
	b := f.browser()
	b.signIn("jo", joPass).expect(200)
	b.get("/portal/mailings?q=old").expect(200, "Searched 20 mailings, back to", "none matches", "Search older mailings")
	var found []string
	for i := 0; i < 5; i++ {
		m := olderRE.FindStringSubmatch(b.body)
		if m == nil {
			break
		}
		b.get(strings.ReplaceAll(m[1], "&amp;", "&")).expect(200)
		ms, _ := listed(b.body)
		found = append(found, ms...)
	}
	if !slices.Equal(found, []string{"OLD1"}) {
		t.Fatalf("going on found %v", found)
	}
	// the list without a filter is never bounded
	b.get("/portal/mailings").expect(200, "Older")
	if strings.Contains(b.body, "Searched") {
		t.Fatal("the unfiltered list says it searched")
	}
}

// TestSearchCountsFollow: the list's counts per status are those of the
// letters now (kept summaries, updated with each change).
func TestSearchCountsFollow(t *testing.T) {
	f := searchFixture(t)
	b := f.browser()
	b.signIn("jo", joPass).expect(200)
	b.get("/portal/mailings?q=quarterly").expect(200, "2 Received")
	b.get("/portal/mailings/INV1")
	b.post("/portal/mailings/INV1/cancel", url.Values{"csrf": {b.csrf()}, "letter": {"0"}}).expect(200, "1 letter cancelled.")
	b.get("/portal/mailings?q=quarterly").expect(200, "1 Received", "1 Cancelled")
	f2 := func(status string, want ...string) {
		t.Helper()
		b.get("/portal/mailings?q=quarterly&status=" + status).expect(200)
		if ms, _ := listed(b.body); !slices.Equal(ms, want) {
			t.Fatalf("status %s: %v, want %v", status, ms, want)
		}
	}
	f2("Cancelled", "INV1")
	f2("Held")
}
