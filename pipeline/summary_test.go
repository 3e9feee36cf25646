package pipeline

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/lodge-mail/lodge/internal/pebblelog"
)

func summaryEPIDs(ms []MailingSummary) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.EPID)
	}
	return out
}

// testSearchMailings is TestStore's part for SearchMailings: filters,
// order, paging across mailings created in the same instant, summaries
// that follow the letters' statuses, and one account never seeing
// another's mailings.
func testSearchMailings(t *testing.T, open storeOpener) {
	// A's mailings, newest first: N3; S1..S5 (one instant, EPID order); N2; N1
	// B's: B1, B2 (titles and statuses that would match every filter)
	setup := func(t *testing.T) (Store, func() Store) {
		s, reopen := open(t)
		sub := func(epid, account string, created time.Time, title, dept string, n int) {
			t.Helper()
			m := mailing(epid, account, created)
			m.Title, m.Department, m.User = title, dept, "jo"
			if err := s.Submit(m, letters(epid, account, n), nil); err != nil {
				t.Fatal(err)
			}
		}
		sub("N1", "A", t0, "March statements", "Billing", 2)
		sub("N2", "A", t0.Add(time.Minute), "Reminders", "Collections", 1)
		for _, e := range []string{"S3", "S1", "S5", "S2", "S4"} {
			sub(e, "A", t0.Add(2*time.Minute), "Same instant "+e, "Ünïcode Dept", 1)
		}
		sub("N3", "A", t0.Add(3*time.Minute), "Annual REPORT", "Investor relations", 3)
		sub("B1", "B", t0.Add(90*time.Second), "March statements", "Billing", 1)
		sub("B2", "B", t0.Add(4*time.Minute), "Annual report", "Billing", 1)
		// N1's letter 1 held, N3's letter 0 lodged
		hold := func(epid string, idx int, status string) {
			t.Helper()
			err := s.Update([]string{epid}, func(tx Tx) error {
				l, err := tx.Letter(epid, idx)
				if err != nil {
					return err
				}
				l.SetStatus(t0, status, "")
				tx.PutLetter(l)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		hold("N1", 1, Held)
		hold("N3", 0, Lodged)
		hold("B1", 0, Held)
		return s, reopen
	}
	all := []string{"N3", "S1", "S2", "S3", "S4", "S5", "N2", "N1"}

	t.Run("search mailings: filters", func(t *testing.T) {
		s, _ := setup(t)
		f := func(q MailingQuery, want ...string) {
			t.Helper()
			if q.Account == "" {
				q.Account = "A"
			}
			p, err := s.SearchMailings(q)
			if err != nil {
				t.Fatalf("%+v: %v", q, err)
			}
			if got := summaryEPIDs(p.Mailings); !slices.Equal(got, append([]string{}, want...)) {
				t.Fatalf("%+v: %v, want %v", q, got, want)
			}
			if !p.Next.IsZero() || p.Bounded {
				t.Fatalf("%+v: a page of all matches says there are more: %+v %v", q, p.Next, p.Bounded)
			}
		}
		f(MailingQuery{}, all...)
		f(MailingQuery{Account: "B"}, "B2", "B1")
		f(MailingQuery{Account: "nobody"})
		f(MailingQuery{Text: "statements"}, "N1")                    // title
		f(MailingQuery{Text: "COLLECTIONS"}, "N2")                   // department, any case
		f(MailingQuery{Text: "annual report"}, "N3")                 // title in another case
		f(MailingQuery{Text: "ünïcode dept"}, all[1:6]...)           // beyond ASCII
		f(MailingQuery{Text: "ÜNÏCODE"}, all[1:6]...)                // upper-case query
		f(MailingQuery{Text: "s4"}, "S4")                            // inside a word
		f(MailingQuery{Text: "no such title"})                       //
		f(MailingQuery{Status: Held}, "N1")                          // a letter held
		f(MailingQuery{Status: Lodged}, "N3")                        //
		f(MailingQuery{Status: Received}, all...)                    // every one has a received letter
		f(MailingQuery{Status: Cancelled})                           //
		f(MailingQuery{From: t0.Add(time.Minute)}, all[:7]...)       // From included
		f(MailingQuery{Before: t0.Add(2 * time.Minute)}, "N2", "N1") // Before excluded
		f(MailingQuery{From: t0.Add(time.Minute), Before: t0.Add(2*time.Minute + 1)}, all[1:7]...)
		f(MailingQuery{From: t0.Add(time.Hour)})
		// combined
		f(MailingQuery{Text: "statements", Status: Held}, "N1")
		f(MailingQuery{Text: "statements", Status: Lodged})
		f(MailingQuery{Text: "same", Before: t0.Add(2 * time.Minute)})
		f(MailingQuery{Text: "billing", Status: Held, From: t0, Before: t0.Add(time.Hour)}, "N1")
		// B's mailings match these filters, and are never A's answer
		f(MailingQuery{Text: "annual"}, "N3")
		f(MailingQuery{Status: Held, Text: "march"}, "N1")
	})

	t.Run("search mailings: paging across one instant", func(t *testing.T) {
		s, _ := setup(t)
		for _, limit := range []int{1, 2, 3, 5, 7, 8} {
			var got []string
			q := MailingQuery{Account: "A", Limit: limit}
			for pages := 0; ; pages++ {
				if pages > len(all) {
					t.Fatalf("limit %d: paging does not end", limit)
				}
				p, err := s.SearchMailings(q)
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Mailings) > limit {
					t.Fatalf("limit %d: %d mailings", limit, len(p.Mailings))
				}
				got = append(got, summaryEPIDs(p.Mailings)...)
				if p.Next.IsZero() {
					break
				}
				q.After = p.Next
			}
			if !slices.Equal(got, all) {
				t.Fatalf("limit %d: pages gave %v, want %v", limit, got, all)
			}
		}
		// a filtered search pages the same way
		p, _ := s.SearchMailings(MailingQuery{Account: "A", Text: "same instant", Limit: 2, After: MailingCursor{Created: t0.Add(2 * time.Minute), EPID: "S2"}})
		if got := summaryEPIDs(p.Mailings); !slices.Equal(got, []string{"S3", "S4"}) || p.Next.EPID != "S4" {
			t.Fatalf("after S2: %v next %+v", got, p.Next)
		}
	})

	t.Run("search mailings: bounded scan goes on from where it stopped", func(t *testing.T) {
		s, _ := setup(t)
		p, err := s.SearchMailings(MailingQuery{Account: "A", Text: "statements", MaxScan: 3, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Mailings) != 0 || !p.Bounded || p.Scanned != 3 || p.Next.EPID != "S2" {
			t.Fatalf("first part: %v bounded %v scanned %d next %+v", summaryEPIDs(p.Mailings), p.Bounded, p.Scanned, p.Next)
		}
		var found []string
		q := MailingQuery{Account: "A", Text: "statements", MaxScan: 3, Limit: 10, After: p.Next}
		for i := 0; i < 5 && !q.After.IsZero(); i++ {
			p, err = s.SearchMailings(q)
			if err != nil {
				t.Fatal(err)
			}
			found = append(found, summaryEPIDs(p.Mailings)...)
			q.After = p.Next
		}
		if !slices.Equal(found, []string{"N1"}) || !q.After.IsZero() {
			t.Fatalf("went on to find %v, ending at %+v", found, q.After)
		}
		// a full page is never bounded
		p, _ = s.SearchMailings(MailingQuery{Account: "A", MaxScan: 2, Limit: 2})
		if len(p.Mailings) != 2 || p.Bounded || p.Next.EPID != "S1" {
			t.Fatalf("full page: %v bounded %v next %+v", summaryEPIDs(p.Mailings), p.Bounded, p.Next)
		}
	})

	t.Run("search mailings: summaries follow the records", func(t *testing.T) {
		s, reopen := setup(t)
		one := func(account, epid string) MailingSummary {
			t.Helper()
			p, err := s.SearchMailings(MailingQuery{Account: account})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range p.Mailings {
				if m.EPID == epid {
					return m
				}
			}
			t.Fatalf("%s not among %s's mailings %v", epid, account, summaryEPIDs(p.Mailings))
			return MailingSummary{}
		}
		n1 := one("A", "N1")
		want := MailingSummary{EPID: "N1", Account: "A", Created: t0, User: "jo", Title: "March statements", Department: "Billing",
			Letters: 2, Counts: map[string]int{Received: 1, Held: 1}}
		if !n1.Created.Equal(want.Created) || !maps.Equal(n1.Counts, want.Counts) {
			t.Fatalf("N1: %+v, want %+v", n1, want)
		}
		n1.Created, n1.Counts, want.Counts = want.Created, nil, nil
		if fmt.Sprint(n1) != fmt.Sprint(want) {
			t.Fatalf("N1: %+v, want %+v", n1, want)
		}
		// every letter cancelled, the mailing put on hold and retitled
		err := s.Update([]string{"N1"}, func(tx Tx) error {
			for i := 0; i < 2; i++ {
				l, _ := tx.Letter("N1", i)
				l.SetStatus(t0, Cancelled, "")
				tx.PutLetter(l)
			}
			m, _ := tx.Mailing("N1")
			m.CustHold, m.Title = true, "Renamed"
			tx.PutMailing(m)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		s = reopen() // and they are on disk
		n1 = one("A", "N1")
		if !maps.Equal(n1.Counts, map[string]int{Cancelled: 2}) || !n1.CustHold || n1.Title != "Renamed" {
			t.Fatalf("N1 after the update: %+v", n1)
		}
		if p, _ := s.SearchMailings(MailingQuery{Account: "A", Status: Held}); len(p.Mailings) != 0 {
			t.Fatalf("held: %v, want none", summaryEPIDs(p.Mailings))
		}
		// an update that changes no status keeps the counts
		s.Update([]string{"N2"}, func(tx Tx) error {
			l, _ := tx.Letter("N2", 0)
			l.Add(t0, "note", "")
			tx.PutLetter(l)
			return nil
		})
		if n2 := one("A", "N2"); !maps.Equal(n2.Counts, map[string]int{Received: 1}) {
			t.Fatalf("N2: %+v", n2)
		}
		// a failed update changes no summary
		s.Update([]string{"N2"}, func(tx Tx) error {
			l, _ := tx.Letter("N2", 0)
			l.SetStatus(t0, Cancelled, "")
			tx.PutLetter(l)
			return fmt.Errorf("no")
		})
		if n2 := one("A", "N2"); !maps.Equal(n2.Counts, map[string]int{Received: 1}) {
			t.Fatalf("N2 after a failed update: %+v", n2)
		}
		// a mailing moved in time is listed once, at its new place
		s.Update([]string{"N2"}, func(tx Tx) error {
			m, _ := tx.Mailing("N2")
			m.Created = t0.Add(time.Hour)
			tx.PutMailing(m)
			return nil
		})
		p, _ := s.SearchMailings(MailingQuery{Account: "A"})
		if got := summaryEPIDs(p.Mailings); !slices.Equal(got, []string{"N2", "N3", "S1", "S2", "S3", "S4", "S5", "N1"}) {
			t.Fatalf("after moving N2: %v", got)
		}
		if p, err := s.SearchMailings(MailingQuery{}); err == nil {
			t.Fatalf("a search without an account: %v", summaryEPIDs(p.Mailings))
		}
	})
}

// TestSummaryLegacy: an account key written before summaries were kept
// (an empty value) is read as its mailing and counts say.
func TestSummaryLegacy(t *testing.T) {
	db, err := pebble.Open(filepath.Join(t.TempDir(), "db"), &pebble.Options{Logger: pebblelog.Quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := NewPebble(db)
	m := mailing("OLD1", "A", t0)
	m.Title = "Old statements"
	if err := s.Submit(m, letters("OLD1", "A", 2), nil); err != nil {
		t.Fatal(err)
	}
	m.Letters = 2
	if err := db.Set([]byte(accountKey(&m)), nil, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	p, err := s.SearchMailings(MailingQuery{Account: "A", Text: "old"})
	if err != nil || len(p.Mailings) != 1 || p.Mailings[0].Title != "Old statements" || p.Mailings[0].Counts[Received] != 2 || p.Mailings[0].Letters != 2 {
		t.Fatalf("%+v %v", p, err)
	}
}

func TestSummaryEncoding(t *testing.T) {
	f := func(m Mailing, counts map[string]int) {
		t.Helper()
		var v summaryView
		if err := v.decode(encodeSummary(&m, counts)); err != nil {
			t.Fatal(err)
		}
		got := v.summary(m.Account, m.EPID, m.Created)
		want := summaryOf(&m, counts)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%+v, want %+v", got, want)
		}
		if !bytes.Equal(encodeSummary(&m, counts), encodeSummary(&m, maps.Clone(counts))) {
			t.Fatal("the same summary encodes two ways")
		}
	}
	f(Mailing{EPID: "E1", Account: "A"}, nil)
	f(Mailing{EPID: "E1", Account: "A", User: "jo", Title: "T", Department: "D", CustHold: true, Letters: 3}, map[string]int{Held: 1, Received: 2})
	f(Mailing{Title: strings.Repeat("x", 300), Department: "Ünïcode"}, map[string]int{"Future": 4, Lodged: 1 << 40, Failed: 0})
	f(Mailing{Letters: -1}, map[string]int{Received: -1}) // nonsense stays decodable
}

// Hostile stored bytes: a malformed summary is an error, never a panic.
func TestSummaryDecodeHostile(t *testing.T) {
	good := encodeSummary(&Mailing{Title: "T", Department: "D", User: "u", Letters: 2}, map[string]int{Received: 2})
	f := func(b []byte) {
		t.Helper()
		var v summaryView
		if err := v.decode(b); err == nil {
			t.Fatalf("%q decoded", b)
		}
	}
	f(nil)
	f([]byte{})
	f([]byte{2})                                                                                         // unknown version
	f([]byte{summaryVersion})                                                                            // cut after the version
	f(good[:len(good)-1])                                                                                // cut in the counts
	f(append(slices.Clone(good), 0))                                                                     // trailing byte
	f([]byte{summaryVersion, 0, 0, 0xff, 0xff, 0xff})                                                    // a string longer than the value
	f([]byte{summaryVersion, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0, 0}) // letters past int32
	f([]byte{summaryVersion, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x0f})                                     // more counts than bytes
	f([]byte{summaryVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})          // a varint too long
}

func FuzzSummaryDecode(f *testing.F) {
	f.Add(encodeSummary(&Mailing{Title: "T", Department: "D", User: "u", Letters: 2, CustHold: true}, map[string]int{Received: 2, Held: 1}))
	f.Add([]byte{summaryVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		var v summaryView
		if v.decode(b) != nil {
			return
		}
		// what decodes encodes back to the same bytes when canonical
		s := v.summary("A", "E", t0)
		m := Mailing{User: s.User, Title: s.Title, Department: s.Department, CustHold: s.CustHold, Letters: s.Letters}
		var w summaryView
		if err := w.decode(encodeSummary(&m, s.Counts)); err != nil {
			t.Fatalf("re-encoded summary does not decode: %v", err)
		}
		if got := w.summary("A", "E", t0); fmt.Sprint(got) != fmt.Sprint(summaryOfCounts(s)) {
			t.Fatalf("%+v became %+v", s, got)
		}
	})
}

// summaryOf is what a summary of m with counts holds.
func summaryOf(m *Mailing, counts map[string]int) MailingSummary {
	s := MailingSummary{EPID: m.EPID, Account: m.Account, Created: m.Created, User: m.User, Title: m.Title,
		Department: m.Department, CustHold: m.CustHold, Letters: max(m.Letters, 0), Counts: map[string]int{}}
	for k, c := range counts {
		if c != 0 {
			s.Counts[k] = c
		}
	}
	return s
}

// summaryOfCounts is s without zero counts (the encoding drops them).
func summaryOfCounts(s MailingSummary) MailingSummary {
	c := map[string]int{}
	for k, n := range s.Counts {
		if n != 0 {
			c[k] += n
		}
	}
	s.Counts = c
	return s
}

func TestContainsFold(t *testing.T) {
	f := func(s, lower string, want bool) {
		t.Helper()
		if got := containsFold([]byte(s), lower); got != want {
			t.Fatalf("containsFold(%q, %q) = %v", s, lower, got)
		}
	}
	f("March Statements", "statements", true)
	f("March Statements", "march s", true)
	f("March", "marches", false)
	f("", "", true)
	f("x", "", true)
	f("ÜNÏCODE Dept", "ünïcode", true)
	f("Ünïcode", "unicode", false)
	f("ABC", "abd", false)
	f("[Z]", "[z]", true)
	f("@", "`", false) // the bytes next to A and Z are not letters
}
