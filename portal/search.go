package portal

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/pipeline"
)

// The mailings page's limits.
const (
	mailingsPerPage = 50
	refMatchesShown = 200
	// maxQueryRunes bounds the search text (the form's maxlength).
	maxQueryRunes = 200
)

// searchScanBound is how many mailings one page of a search by text or
// status examines at most (the store reads kept summaries: about 100,000
// in 40 ms on the 2-core machine, README Performance); past it the page
// says how far back it searched and links to go on. A variable for tests.
var searchScanBound = 100_000

// mailingRow is one line of the mailings list.
type mailingRow struct {
	M      pipeline.MailingSummary
	Counts []statusCount
}

// mailingSearch is the search form's values, checked.
type mailingSearch struct {
	Query    string // the free text: an EPID, a reference, or part of a title or department
	Status   string // a letter status ("" any)
	From, To string // creation dates, YYYY-MM-DD, both included ("" unbounded)
	after    pipeline.MailingCursor
	from     time.Time
	before   time.Time // the day after To
}

func (s *mailingSearch) filtered() bool {
	return s.Query != "" || s.Status != "" || s.From != "" || s.To != ""
}

// link is the mailings page with the search's values, from after on.
func (s *mailingSearch) link(after pipeline.MailingCursor) string {
	v := url.Values{}
	for _, kv := range [][2]string{{"q", s.Query}, {"status", s.Status}, {"from", s.From}, {"to", s.To}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	if !after.IsZero() {
		v.Set("after", formatCursor(after))
	}
	if len(v) == 0 {
		return Prefix + "mailings"
	}
	return Prefix + "mailings?" + v.Encode()
}

// formatCursor writes a position in the list as after= carries it:
// Unix nanoseconds, a dot, the EPID.
func formatCursor(c pipeline.MailingCursor) string {
	return strconv.FormatInt(c.Created.UnixNano(), 10) + "." + c.EPID
}

func parseCursor(s string) (pipeline.MailingCursor, bool) {
	ns, epid, ok := strings.Cut(s, ".")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || epid == "" || len(epid) > 64 {
		return pipeline.MailingCursor{}, false
	}
	return pipeline.MailingCursor{Created: time.Unix(0, n).UTC(), EPID: epid}, true
}

// parseSearch reads the form; a value that is not right is named in the
// error, for the page to show.
func parseSearch(args *fasthttp.Args, loc *time.Location) (mailingSearch, string) {
	s := mailingSearch{
		Query:  strings.TrimSpace(string(args.Peek("q"))),
		Status: string(args.Peek("status")),
		From:   strings.TrimSpace(string(args.Peek("from"))),
		To:     strings.TrimSpace(string(args.Peek("to"))),
	}
	if !utf8.ValidString(s.Query) {
		return s, "The search text is not UTF-8 text."
	}
	if utf8.RuneCountInString(s.Query) > maxQueryRunes {
		return s, fmt.Sprintf("The search text must be at most %d characters.", maxQueryRunes)
	}
	if s.Status != "" && !slices.Contains(pipeline.Statuses, s.Status) {
		return s, "The status asked for is not one of the list's."
	}
	date := func(name, v string) (time.Time, string) {
		if v == "" {
			return time.Time{}, ""
		}
		t, err := time.ParseInLocation("2006-01-02", v, loc)
		if err != nil || len(v) != 10 {
			return t, fmt.Sprintf("The %q date is not a date: write it as 2026-03-31.", name)
		}
		return t, ""
	}
	var msg string
	if s.from, msg = date("From", s.From); msg != "" {
		return s, msg
	}
	to, msg := date("To", s.To)
	if msg != "" {
		return s, msg
	}
	if !to.IsZero() {
		s.before = to.AddDate(0, 0, 1)
		if !s.from.IsZero() && s.from.After(to) {
			return s, "The \"From\" date is after the \"To\" date."
		}
	}
	if a := args.Peek("after"); len(a) > 0 {
		c, ok := parseCursor(string(a))
		if !ok {
			return s, "The page asked for is not a valid position in the list."
		}
		s.after = c
	}
	return s, ""
}

type mailingsData struct {
	mailingSearch
	Statuses  []string
	Searching bool // a filter is set
	Paged     bool // not the first page
	Rows      []mailingRow
	// Letters are the letters whose reference is the search text (first
	// page only); LettersMore: more than are shown.
	Letters     []pipeline.Letter
	LettersMore bool
	Next        string // the link to the next page ("" none)
	First       string // the link to the first page
	// Bounded: this page's search stopped after Scanned mailings, back to
	// ScannedTo, without filling the page; Next goes on from there.
	Bounded   bool
	Scanned   int
	ScannedTo time.Time
}

// mailingsPage lists the account's mailings newest first, 50 a page,
// filtered by the search form: the free text is first tried as an EPID
// (straight to the mailing), then as a letter reference (those letters
// are listed) and as part of a title or department (those mailings);
// status keeps the mailings with a letter in that status now; the dates
// bound the creation day, both included, in the server's time zone.
func (h *Handler) mailingsPage(r *request) {
	st := h.mr.Store()
	s, msg := parseSearch(r.ctx.QueryArgs(), time.Local)
	d := mailingsData{mailingSearch: s, Statuses: pipeline.Statuses, Searching: s.filtered(), Paged: !s.after.IsZero(), First: s.link(pipeline.MailingCursor{})}
	if msg != "" {
		h.page(r, fasthttp.StatusBadRequest, "mailings", "Search", d, msg)
		return
	}
	title := "Mailings"
	if d.Searching {
		title = "Search"
	}
	if s.Query != "" {
		if m, err := st.Mailing(strings.ToUpper(s.Query)); err == nil && m.Account == r.se.Account {
			r.ctx.Redirect(Prefix+"mailings/"+m.EPID, fasthttp.StatusSeeOther)
			return
		}
		if !d.Paged {
			ls, err := st.LettersByRef(r.se.Account, s.Query)
			if err != nil {
				h.internalError(r, err)
				return
			}
			for _, l := range ls {
				if s.Status != "" && l.Status != s.Status || !s.from.IsZero() && l.Received.Before(s.from) || !s.before.IsZero() && !l.Received.Before(s.before) {
					continue
				}
				if len(d.Letters) == refMatchesShown {
					d.LettersMore = true
					break
				}
				d.Letters = append(d.Letters, l)
			}
		}
	}
	q := pipeline.MailingQuery{Account: r.se.Account, After: s.after, Limit: mailingsPerPage,
		Text: s.Query, Status: s.Status, From: s.from, Before: s.before}
	if s.Query != "" || s.Status != "" {
		q.MaxScan = searchScanBound
	}
	p, err := st.SearchMailings(q)
	if err != nil {
		h.internalError(r, err)
		return
	}
	for _, m := range p.Mailings {
		d.Rows = append(d.Rows, mailingRow{M: m, Counts: countsOf(m.Counts)})
	}
	if !p.Next.IsZero() {
		d.Next = s.link(p.Next)
	}
	if p.Bounded {
		d.Bounded, d.Scanned, d.ScannedTo = true, p.Scanned, p.Next.Created
	}
	h.page(r, fasthttp.StatusOK, "mailings", title, d, "")
}
