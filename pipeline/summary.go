package pipeline

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// MailingSummary is what a list of mailings shows of each one. A store
// keeps it beside its index of an account's mailings, up to date with
// every commit that changes the mailing or its letters' statuses, so a
// page of the list reads no whole mailing and counts no letter.
type MailingSummary struct {
	EPID       string
	Account    string
	Created    time.Time
	User       string
	Title      string
	Department string
	CustHold   bool
	Letters    int
	// Counts is the number of letters in each status (Store.Counts).
	Counts map[string]int
}

// MailingCursor is a position in an account's mailings, which are in
// order of creation, newest first, and those created at the same instant
// in EPID order: a page that ends with a mailing continues after it, and
// no mailing is skipped or shown twice, however many share an instant.
type MailingCursor struct {
	Created time.Time
	EPID    string
}

// IsZero reports whether the cursor is the start of the list.
func (c MailingCursor) IsZero() bool { return c.EPID == "" && c.Created.IsZero() }

// Cursor returns the position of the summary's mailing.
func (s *MailingSummary) Cursor() MailingCursor {
	return MailingCursor{Created: s.Created, EPID: s.EPID}
}

// MailingQuery asks for a page of an account's mailings, newest first,
// that pass every filter set.
type MailingQuery struct {
	Account string
	// After is where the page starts: after this mailing (zero: with the
	// newest).
	After MailingCursor
	// Limit is the most mailings returned (<= 0: all that match).
	Limit int
	// Text: the title or the department contains it, ignoring case.
	Text string
	// Status: at least one of the mailing's letters is in this status now.
	Status string
	// From and Before bound the creation time: From <= Created < Before
	// (zero: no bound).
	From, Before time.Time
	// MaxScan bounds the work of a filtered search: at most this many
	// mailings are examined (<= 0: no bound). A search that stops there
	// says so (MailingPage.Bounded) and where to go on from (Next).
	MaxScan int
}

// MailingPage is the answer to a MailingQuery.
type MailingPage struct {
	Mailings []MailingSummary
	// Next is where the following page starts (MailingQuery.After); zero
	// when no mailing after this page can match.
	Next MailingCursor
	// Scanned is how many mailings were examined.
	Scanned int
	// Bounded: the scan stopped at MaxScan before the page was full; Next
	// is the last mailing examined, and there may be matches past it.
	Bounded bool
}

// summaryFilter is a MailingQuery's filters, prepared once for a scan.
type summaryFilter struct {
	text   string // lower case
	status string
}

func newSummaryFilter(q *MailingQuery) summaryFilter {
	return summaryFilter{text: strings.ToLower(q.Text), status: q.Status}
}

func (f *summaryFilter) match(v *summaryView) bool {
	if f.status != "" && v.count(f.status) <= 0 {
		return false
	}
	if f.text != "" && !containsFold(v.title, f.text) && !containsFold(v.department, f.text) {
		return false
	}
	return true
}

// containsFold reports whether s contains lower (lower case), ignoring
// case; an ASCII s is compared in place, without copying it.
func containsFold(s []byte, lower string) bool {
	if len(lower) == 0 {
		return true
	}
	for _, c := range s {
		if c >= utf8.RuneSelf {
			return strings.Contains(strings.ToLower(string(s)), lower)
		}
	}
	if len(lower) > len(s) {
		return false
	}
outer:
	for i := 0; i+len(lower) <= len(s); i++ {
		for j := 0; j < len(lower); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lower[j] {
				continue outer
			}
		}
		return true
	}
	return false
}

// The summary's encoding (the value of an account index key):
//
//	version byte (1)
//	uvarint flags (1: cust_hold), uvarint letters
//	string user, title, department   (uvarint length, bytes)
//	uvarint n, then n × (string status, varint count)
//
// Compact and read in place: a search examines a whole account's
// summaries and copies only those that match.
const summaryVersion = 1

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func encodeSummary(m *Mailing, counts map[string]int) []byte {
	b := make([]byte, 0, 32+len(m.User)+len(m.Title)+len(m.Department)+16*len(counts))
	b = append(b, summaryVersion)
	var flags uint64
	if m.CustHold {
		flags |= 1
	}
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendUvarint(b, uint64(max(m.Letters, 0)))
	b = appendString(b, m.User)
	b = appendString(b, m.Title)
	b = appendString(b, m.Department)
	// in Statuses order, then any other (none today) by name: the same
	// counts always encode the same
	keys := make([]string, 0, len(counts))
	for _, s := range Statuses {
		if counts[s] != 0 {
			keys = append(keys, s)
		}
	}
	var others []string
	for s, c := range counts {
		if c != 0 && !slices.Contains(Statuses, s) {
			others = append(others, s)
		}
	}
	slices.Sort(others)
	keys = append(keys, others...)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, s := range keys {
		b = appendString(b, s)
		b = binary.AppendVarint(b, int64(counts[s]))
	}
	return b
}

// summaryView is a decoded summary whose strings still point into the
// stored bytes; fields are valid until the next decode.
type summaryView struct {
	custHold                bool
	letters                 int
	user, title, department []byte
	counts                  []viewCount
}

type viewCount struct {
	status []byte
	n      int
}

func (v *summaryView) count(status string) int {
	for _, c := range v.counts {
		if string(c.status) == status {
			return c.n
		}
	}
	return 0
}

var errSummary = errors.New("malformed mailing summary")

func (v *summaryView) decode(b []byte) error {
	if len(b) == 0 || b[0] != summaryVersion {
		return errSummary
	}
	b = b[1:]
	uv := func() (uint64, bool) {
		x, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return x, true
	}
	str := func() ([]byte, bool) {
		n, ok := uv()
		if !ok || n > uint64(len(b)) {
			return nil, false
		}
		s := b[:n]
		b = b[n:]
		return s, true
	}
	flags, ok1 := uv()
	letters, ok2 := uv()
	if !ok1 || !ok2 || letters > 1<<31 {
		return errSummary
	}
	v.custHold, v.letters = flags&1 != 0, int(letters)
	var ok bool
	if v.user, ok = str(); !ok {
		return errSummary
	}
	if v.title, ok = str(); !ok {
		return errSummary
	}
	if v.department, ok = str(); !ok {
		return errSummary
	}
	n, ok := uv()
	if !ok || n > uint64(len(b)) {
		return errSummary
	}
	v.counts = v.counts[:0]
	for i := uint64(0); i < n; i++ {
		s, ok := str()
		if !ok {
			return errSummary
		}
		c, k := binary.Varint(b)
		if k <= 0 {
			return errSummary
		}
		b = b[k:]
		v.counts = append(v.counts, viewCount{status: s, n: int(c)})
	}
	if len(b) != 0 {
		return errSummary
	}
	return nil
}

// summary copies the view out.
func (v *summaryView) summary(account, epid string, created time.Time) MailingSummary {
	s := MailingSummary{EPID: epid, Account: account, Created: created, User: string(v.user), Title: string(v.title),
		Department: string(v.department), CustHold: v.custHold, Letters: v.letters, Counts: make(map[string]int, len(v.counts))}
	for _, c := range v.counts {
		s.Counts[string(c.status)] = c.n
	}
	return s
}

// finish sets where the next page starts once a scan stopped: after a
// full page when one more match was found (more), at the last mailing
// examined (last) when MaxScan cut the scan short.
func (p *MailingPage) finish(limit int, more bool, last func() MailingCursor) {
	switch {
	case more:
		p.Next = p.Mailings[len(p.Mailings)-1].Cursor()
	case p.Bounded && limit > 0 && len(p.Mailings) == limit:
		// full, and the look for one more was cut short: the next page
		// tells
		p.Next, p.Bounded = p.Mailings[len(p.Mailings)-1].Cursor(), false
	case p.Bounded:
		p.Next = last()
	}
}

func (q *MailingQuery) validate() error {
	if q.Account == "" {
		return fmt.Errorf("pipeline: a mailing search without an account")
	}
	return nil
}
