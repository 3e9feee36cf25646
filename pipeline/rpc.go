package pipeline

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/rpc"
)

// The mailroom's JSON-RPC methods, served beside addr_check (their
// OpenRPC documents are in rpcdoc.go): get_letter_status, cancel_letters,
// get_mailing, release_letters and correct_letter. Every method takes the
// account, which must be the credentials' own; a mailing of another
// account is answered as one that does not exist.

// Bounds of the methods' params.
const (
	maxRefs         = 1000
	maxIndexes      = 10_000
	defaultPageSize = 100
	maxPageSize     = 1000
)

// Methods returns the mailroom's JSON-RPC methods with their documents.
func (mr *Mailroom) Methods() map[string]rpc.Documented {
	return map[string]rpc.Documented{
		"get_letter_status": {Handle: mr.rpcLetterStatus, Doc: GetLetterStatusDoc},
		"cancel_letters":    {Handle: mr.rpcCancel, Doc: CancelLettersDoc},
		"get_mailing":       {Handle: mr.rpcMailing, Doc: GetMailingDoc},
		"release_letters":   {Handle: mr.rpcRelease, Doc: ReleaseLettersDoc},
		"correct_letter":    {Handle: mr.rpcCorrect, Doc: CorrectLetterDoc},
	}
}

// letterParams are the params every method shares: the account and a
// selection of letters.
type letterParams struct {
	Account   string   `json:"account"`
	SessionID string   `json:"session_id"`
	Refs      []string `json:"refs"`
	Letters   []int    `json:"letters"`
}

// badParams answers invalid params; dst is returned as it came (the
// server cuts it back to the response's start).
func badParams(dst []byte, msg string) ([]byte, int, string) {
	return dst, rpc.CodeInvalidParams, "invalid params: " + msg
}

// readParams decodes params into v (a struct embedding letterParams) and
// checks the account. want describes the params for the error message.
func readParams(params []byte, p rpc.Principal, lp *letterParams, v any, want string) (int, string) {
	if len(params) == 0 || json.Unmarshal(params, v) != nil {
		return rpc.CodeInvalidParams, "invalid params: want " + want
	}
	lp.Account = strings.ToUpper(strings.TrimSpace(lp.Account))
	if lp.Account == "" {
		return rpc.CodeInvalidParams, "invalid params: account is missing: want " + want
	}
	if lp.Account != p.Account {
		return rpc.CodeInvalidParams, "invalid params: these credentials are not for account " + lp.Account
	}
	if len(lp.Refs) > maxRefs || len(lp.Letters) > maxIndexes {
		return rpc.CodeInvalidParams, "invalid params: at most 1,000 refs and 10,000 letters a call"
	}
	return 0, ""
}

func (lp *letterParams) selector() Selector {
	return Selector{EPID: lp.SessionID, Indexes: lp.Letters, Refs: dedupe(lp.Refs)}
}

func dedupe(ss []string) []string {
	seen := make(map[string]bool, len(ss))
	out := ss[:0:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func answer(dst []byte, v any) ([]byte, int, string) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, rpc.CodeInternalError, "internal error"
	}
	return append(dst, b...), 0, ""
}

func actionError(dst []byte, err error) ([]byte, int, string) {
	if errors.Is(err, ErrNotFound) {
		return dst, rpc.CodeInvalidParams, "invalid params: " + ErrNotYours.Error()
	}
	if errors.Is(err, ErrNoSuchLetter) {
		return dst, rpc.CodeInvalidParams, "invalid params: " + err.Error()
	}
	return dst, rpc.CodeInternalError, "internal error"
}

// Transport names a channel as the service in the field does.
func Transport(channel string) string {
	switch channel {
	case "postal":
		return "POST"
	case "email":
		return "EMAIL"
	case "sms":
		return "SMS"
	case "fax":
		return "FAX"
	}
	return strings.ToUpper(channel)
}

func transports(channels []string) any {
	names := make([]string, len(channels))
	for i, c := range channels {
		names[i] = Transport(c)
	}
	if len(names) == 1 {
		return names[0]
	}
	return names
}

// DBID is a letter's stable numeric identifier (the field's dbid): 53
// bits of a hash of its mailing and index, exact in every JSON reader.
func DBID(epid string, idx int) int64 {
	h := fnv.New64a()
	h.Write([]byte(epid))
	h.Write([]byte{'/'})
	h.Write(strconv.AppendInt(nil, int64(idx), 10))
	return int64(h.Sum64() & (1<<53 - 1))
}

// Dollars turns cents into the price clients see (a JSON number).
func Dollars(cents int64) float64 { return float64(cents) / 100 }

func unix(t time.Time) float64 { return float64(t.UnixNano()) / float64(time.Second) }

func unixOrNil(t time.Time) *float64 {
	if t.IsZero() {
		return nil
	}
	v := unix(t)
	return &v
}

// letterStatus is a letter as get_letter_status reports it: the field's
// names first, then this service's additions.
type letterStatus struct {
	EPID       string   `json:"epid"`
	Ref        string   `json:"ref"`
	Status     string   `json:"status"`
	Idx        int      `json:"idx"`
	ReceivedTS float64  `json:"received_ts"`
	Transport  any      `json:"transport"`
	Price      float64  `json:"price"`
	DBID       int64    `json:"dbid"`
	LodgedTS   *float64 `json:"lodged_ts,omitempty"`
	Hold       string   `json:"hold,omitempty"`
	HoldReason string   `json:"hold_reason,omitempty"`
	Address    *Verdict `json:"address,omitempty"`
	Batch      string   `json:"batch,omitempty"`
	// Failover: the letter left its electronic channel for post.
	Failover *failoverJSON `json:"failover,omitempty"`
	// First and last openings of the email and of the document (Unix
	// times; absent: never), as the service in the field reports them.
	EmailFirstOpened *float64 `json:"email_first_opened,omitempty"`
	EmailLastOpened  *float64 `json:"email_last_opened,omitempty"`
	DocFirstOpened   *float64 `json:"doc_first_opened,omitempty"`
	DocLastOpened    *float64 `json:"doc_last_opened,omitempty"`
}

type failoverJSON struct {
	From   string  `json:"from"`
	Reason string  `json:"reason"`
	TS     float64 `json:"ts"`
}

func statusOf(l *Letter) letterStatus {
	s := letterStatus{EPID: l.EPID, Ref: l.Reference, Status: l.Status, Idx: l.Idx, ReceivedTS: unix(l.Received),
		Transport: transports(l.Channels), Price: Dollars(l.Price), DBID: DBID(l.EPID, l.Idx),
		Hold: l.Hold, HoldReason: l.HoldReason, Address: l.Address, Batch: l.Batch,
		EmailFirstOpened: unixOrNil(l.EmailFirstOpened), EmailLastOpened: unixOrNil(l.EmailLastOpened),
		DocFirstOpened: unixOrNil(l.DocFirstOpened), DocLastOpened: unixOrNil(l.DocLastOpened)}
	if l.Status == Lodged {
		s.LodgedTS = unixOrNil(l.Time(Lodged))
	}
	if f := l.Failover; f != nil {
		s.Failover = &failoverJSON{From: Transport(f.From), Reason: f.Reason, TS: unix(f.Time)}
	}
	return s
}

// rpcLetterStatus is get_letter_status: {"account", "refs": [...]} →
// {"letters": [...]}: for each ref in order, every letter of the account
// with that reference, oldest mailing first, or {"ref", "status":
// "Unknown"} when there is none.
func (mr *Mailroom) rpcLetterStatus(dst, params []byte, p rpc.Principal) ([]byte, int, string) {
	var in letterParams
	if code, msg := readParams(params, p, &in, &in, `{"account": "ABC12345", "refs": ["reference", ...]}`); code != 0 {
		return dst, code, msg
	}
	if len(in.Refs) == 0 {
		return badParams(dst, "give 1 to 1000 refs")
	}
	out := struct {
		Letters []any `json:"letters"`
	}{Letters: []any{}}
	for _, ref := range in.Refs {
		ls, err := mr.store.LettersByRef(p.Account, ref)
		if err != nil {
			return dst, rpc.CodeInternalError, "internal error"
		}
		if len(ls) == 0 {
			out.Letters = append(out.Letters, struct {
				Ref    string `json:"ref"`
				Status string `json:"status"`
			}{ref, Unknown})
		}
		for i := range ls {
			out.Letters = append(out.Letters, statusOf(&ls[i]))
		}
	}
	return answer(dst, out)
}

// outcomes is the answer of the actions.
type outcomes struct {
	Letters []Outcome `json:"letters"`
}

// rpcCancel is cancel_letters: {"account", "refs"} or {"account",
// "session_id", "letters"?}.
func (mr *Mailroom) rpcCancel(dst, params []byte, p rpc.Principal) ([]byte, int, string) {
	return mr.action(dst, params, p, "cancelled", mr.Cancel)
}

// rpcRelease is release_letters: as cancel_letters.
func (mr *Mailroom) rpcRelease(dst, params []byte, p rpc.Principal) ([]byte, int, string) {
	return mr.action(dst, params, p, "released", mr.Release)
}

func (mr *Mailroom) action(dst, params []byte, p rpc.Principal, verb string, act func(string, Selector, string) ([]Outcome, error)) ([]byte, int, string) {
	var in letterParams
	const want = `{"account": "ABC12345", "refs": ["reference", ...]} or {"account": "ABC12345", "session_id": "EPID", "letters": [0, 1, ...]}`
	if code, msg := readParams(params, p, &in, &in, want); code != 0 {
		return dst, code, msg
	}
	if in.SessionID == "" && len(in.Letters) > 0 {
		return badParams(dst, "letters are indexes of the mailing session_id names")
	}
	if in.SessionID == "" && len(in.Refs) == 0 {
		return badParams(dst, "give refs, or a session_id (and letters)")
	}
	out, err := act(p.Account, in.selector(), who(p))
	if err != nil {
		return actionError(dst, err)
	}
	return answer(dst, outcomes{Letters: out})
}

func who(p rpc.Principal) string {
	if p.User != "" {
		return p.User
	}
	return "account " + p.Account
}

// rpcCorrect is correct_letter: {"account", "session_id", "letter": idx,
// "postal": "line\nline" or ["line", ...]} (or "ref" instead of
// session_id and letter).
func (mr *Mailroom) rpcCorrect(dst, params []byte, p rpc.Principal) ([]byte, int, string) {
	var in struct {
		letterParams
		Letter *int            `json:"letter"`
		Ref    string          `json:"ref"`
		Postal json.RawMessage `json:"postal"`
	}
	const want = `{"account": "ABC12345", "session_id": "EPID", "letter": 0, "postal": ["line", ...]} (or "ref" for session_id and letter)`
	if code, msg := readParams(params, p, &in.letterParams, &in, want); code != 0 {
		return dst, code, msg
	}
	var sel Selector
	switch {
	case in.Ref != "" && in.SessionID == "" && in.Letter == nil:
		sel.Refs = []string{in.Ref}
	case in.Ref == "" && in.SessionID != "" && in.Letter != nil:
		sel = Selector{EPID: in.SessionID, Indexes: []int{*in.Letter}}
	default:
		return badParams(dst, "name one letter: session_id and letter, or ref")
	}
	lines, ok := postalLines(in.Postal)
	if !ok {
		return badParams(dst, `postal is the new address: a string of lines separated by newlines, or an array of lines (1 to 7; the address check judges them)`)
	}
	if len(sel.Refs) == 1 {
		ls, err := mr.store.LettersByRef(p.Account, sel.Refs[0])
		if err != nil {
			return dst, rpc.CodeInternalError, "internal error"
		}
		if len(ls) > 1 {
			return badParams(dst, fmt.Sprintf("ref %q names %d letters: name one with session_id and letter", sel.Refs[0], len(ls)))
		}
	}
	out, v, err := mr.Correct(p.Account, sel, lines, who(p))
	if err != nil {
		return actionError(dst, err)
	}
	return answer(dst, struct {
		Verdict Verdict   `json:"verdict"`
		Letters []Outcome `json:"letters"`
	}{v, out})
}

func postalLines(raw json.RawMessage) ([]string, bool) {
	var lines []string
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return PostalText(s)
	} else if json.Unmarshal(raw, &lines) != nil {
		return nil, false
	}
	return trimLines(lines)
}

// PostalText reads an address typed as text (correct_letter's string
// form, the portal's correction box): its lines, trimmed, blank ones
// dropped; ok when there are 1 to 7 of them.
func PostalText(s string) ([]string, bool) {
	return trimLines(strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n"))
}

func trimLines(lines []string) ([]string, bool) {
	out := lines[:0]
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out, len(out) >= 1 && len(out) <= 7
}

// mailingLetter is a letter as get_mailing lists it.
type mailingLetter struct {
	Idx         int           `json:"idx"`
	Ref         string        `json:"ref,omitempty"`
	Status      string        `json:"status"`
	Hold        string        `json:"hold,omitempty"`
	HoldReason  string        `json:"hold_reason,omitempty"`
	Channels    []string      `json:"channels"`
	Postal      []string      `json:"postal,omitempty"`
	Email       string        `json:"email,omitempty"`
	SMS         string        `json:"sms,omitempty"`
	Fax         string        `json:"fax,omitempty"`
	Verdict     *Verdict      `json:"verdict,omitempty"`
	Unaddressed bool          `json:"unaddressed,omitempty"`
	Masks       []Area        `json:"masks,omitempty"`
	Send        *Send         `json:"send,omitempty"`
	Failover    *failoverJSON `json:"failover,omitempty"`
	Documents   []DocPart     `json:"documents,omitempty"`
	Pages       int           `json:"pages"`
	Sheets      int           `json:"sheets"`
	Envelope    string        `json:"envelope,omitempty"`
	Postage     string        `json:"postage,omitempty"`
	Price       float64       `json:"price"`
	Batch       string        `json:"batch,omitempty"`
	DBID        int64         `json:"dbid"`
	Events      []eventJSON   `json:"events"`
}

type eventJSON struct {
	TS     float64 `json:"ts"`
	Time   string  `json:"time"`
	Event  string  `json:"event"`
	Detail string  `json:"detail,omitempty"`
}

// rpcMailing is get_mailing: {"account", "session_id", "from"?, "limit"?}
// → the mailing's settings, counts per status and its letters from index
// from (default 0), limit of them (default 100, at most 1000); next is
// the from of the following page, null after the last.
func (mr *Mailroom) rpcMailing(dst, params []byte, p rpc.Principal) ([]byte, int, string) {
	var in struct {
		letterParams
		From  int  `json:"from"`
		Limit *int `json:"limit"`
	}
	const want = `{"account": "ABC12345", "session_id": "EPID", "from": 0, "limit": 100}`
	if code, msg := readParams(params, p, &in.letterParams, &in, want); code != 0 {
		return dst, code, msg
	}
	limit := defaultPageSize
	if in.Limit != nil {
		limit = *in.Limit
	}
	if in.SessionID == "" || in.From < 0 || limit < 1 || limit > maxPageSize {
		return badParams(dst, want+": from at least 0, limit 1 to 1000")
	}
	m, err := mr.store.Mailing(in.SessionID)
	if errors.Is(err, ErrNotFound) || err == nil && m.Account != p.Account {
		return badParams(dst, ErrNotYours.Error())
	}
	if err != nil {
		return dst, rpc.CodeInternalError, "internal error"
	}
	counts, err := mr.store.Counts(m.EPID)
	if err != nil {
		return dst, rpc.CodeInternalError, "internal error"
	}
	ls, err := mr.store.Letters(m.EPID, in.From, limit)
	if err != nil {
		return dst, rpc.CodeInternalError, "internal error"
	}
	type fileJSON struct {
		Name  string `json:"name"`
		Kind  string `json:"kind"`
		Pages int    `json:"pages"`
	}
	out := struct {
		EPID       string          `json:"epid"`
		Account    string          `json:"account"`
		User       string          `json:"user,omitempty"`
		Title      string          `json:"title,omitempty"`
		Department string          `json:"department,omitempty"`
		PO         string          `json:"purchase_order,omitempty"`
		CreatedTS  float64         `json:"created_ts"`
		ReleaseTS  float64         `json:"cancellable_until_ts"`
		CustHold   bool            `json:"cust_hold"`
		Auto       bool            `json:"auto"`
		Settings   json.RawMessage `json:"settings,omitempty"`
		Production Production      `json:"production"`
		Files      []fileJSON      `json:"files"`
		Purged     bool            `json:"documents_deleted,omitempty"`
		Confirm    []Confirmation  `json:"confirmations,omitempty"`
		Total      int             `json:"letters_total"`
		Counts     map[string]int  `json:"counts"`
		Letters    []mailingLetter `json:"letters"`
		Next       *int            `json:"next"`
	}{EPID: m.EPID, Account: m.Account, User: m.User, Title: m.Title, Department: m.Department, PO: m.PurchaseOrder,
		CreatedTS: unix(m.Created), ReleaseTS: unix(m.ReleaseAt), CustHold: m.CustHold, Auto: m.Auto, Settings: m.Settings,
		Production: m.Production, Files: []fileJSON{}, Purged: m.Purged, Confirm: m.Confirmations, Total: m.Letters, Counts: counts,
		Letters: make([]mailingLetter, 0, len(ls))}
	for _, f := range m.Files {
		out.Files = append(out.Files, fileJSON{f.Name, f.Kind, f.Pages})
	}
	for i := range ls {
		l := &ls[i]
		ml := mailingLetter{Idx: l.Idx, Ref: l.Reference, Status: l.Status, Hold: l.Hold, HoldReason: l.HoldReason,
			Channels: l.Channels, Postal: l.Postal, Email: l.Email, SMS: l.SMS, Fax: l.Fax, Verdict: l.Address,
			Unaddressed: l.Unaddressed, Masks: l.Masks, Send: l.Send, Documents: l.Documents, Pages: l.Pages, Sheets: l.Sheets, Envelope: l.Envelope,
			Postage: l.Postage, Price: Dollars(l.Price), Batch: l.Batch, DBID: DBID(l.EPID, l.Idx), Events: make([]eventJSON, len(l.Events))}
		for j, e := range l.Events {
			ml.Events[j] = eventJSON{TS: unix(e.Time), Time: e.Time.UTC().Format(time.RFC3339), Event: e.Event, Detail: e.Detail}
		}
		if f := l.Failover; f != nil {
			ml.Failover = &failoverJSON{From: Transport(f.From), Reason: f.Reason, TS: unix(f.Time)}
		}
		out.Letters = append(out.Letters, ml)
	}
	if next := in.From + len(ls); len(ls) == limit && next < m.Letters {
		out.Next = &next
	}
	return answer(dst, out)
}
