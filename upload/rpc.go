package upload

import (
	"errors"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/rpc"
)

// maxRefs bounds the references of one get_letter_status or
// cancel_letters call.
const maxRefs = 1000

// letterStatus is one letter as get_letter_status reports it.
type letterStatus struct {
	EPID       string   `json:"epid"`
	Ref        string   `json:"ref"`
	Status     string   `json:"status"`
	Idx        int      `json:"idx"`
	ReceivedTS float64  `json:"received_ts"`
	Transport  any      `json:"transport"` // a string, or an array when there are several
	HoldReason string   `json:"hold_reason,omitempty"`
	Address    *Verdict `json:"address,omitempty"`
}

// unknownRef is the entry of get_letter_status for a reference that
// matches no letter of the account: the ref and status Unknown.
type unknownRef struct {
	Ref    string `json:"ref"`
	Status string `json:"status"`
}

// refParams reads the params of get_letter_status and cancel_letters:
// {"account": "ABC12345", "refs": ["myref1", ...]}, the account the
// credentials' (upper-cased, as get_session_id compares it), 1 to maxRefs
// refs. A non-zero code is the JSON-RPC error to answer with.
func refParams(params []byte, p rpc.Principal) ([]string, int, string) {
	var in struct {
		Account string   `json:"account"`
		Refs    []string `json:"refs"`
	}
	if len(params) == 0 || json.Unmarshal(params, &in) != nil {
		return nil, rpc.CodeInvalidParams, `invalid params: want {"account": "ABC12345", "refs": ["reference", ...]}`
	}
	if in.Account = strings.ToUpper(strings.TrimSpace(in.Account)); in.Account != p.Account {
		return nil, rpc.CodeInvalidParams, "invalid params: these credentials are not for account " + in.Account
	}
	if len(in.Refs) == 0 || len(in.Refs) > maxRefs {
		return nil, rpc.CodeInvalidParams, "invalid params: give 1 to 1000 refs"
	}
	return in.Refs, 0, ""
}

// GetLetterStatus is the JSON-RPC method get_letter_status: params
// {"account": "ABC12345", "refs": ["myref1", ...]}; result {"letters":
// [...]}: for each ref in order, every letter of the account with that
// reference, oldest mailing first, or when there is none one entry
// {"ref": ref, "status": "Unknown"}.
func (s *Store) GetLetterStatus(dst, params []byte, p rpc.Principal) ([]byte, int, string) {
	refs, code, msg := refParams(params, p)
	if code != 0 {
		return dst, code, msg
	}
	out := struct {
		Letters []any `json:"letters"` // letterStatus or unknownRef
	}{Letters: []any{}}
	for _, ref := range refs {
		ls, err := s.LettersByRef(p.Account, ref)
		if err != nil {
			return dst, rpc.CodeInternalError, "internal error"
		}
		if len(ls) == 0 {
			out.Letters = append(out.Letters, unknownRef{Ref: ref, Status: LetterUnknown})
		}
		for _, l := range ls {
			names := make([]string, len(l.Transport))
			for i, t := range l.Transport {
				names[i] = upperTransport(t)
			}
			var tr any = names
			if len(names) == 1 {
				tr = names[0]
			}
			out.Letters = append(out.Letters, letterStatus{EPID: l.EPID, Ref: l.Reference, Status: l.Status, Idx: l.Idx,
				ReceivedTS: float64(l.Received.UnixNano()) / float64(time.Second), Transport: tr, HoldReason: l.HoldReason, Address: l.Address})
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return dst, rpc.CodeInternalError, "internal error"
	}
	return append(dst, b...), 0, ""
}

// cancelStatus is one letter as cancel_letters reports it.
type cancelStatus struct {
	EPID      string `json:"epid"`
	Ref       string `json:"ref"`
	Idx       int    `json:"idx"`
	Status    string `json:"status"`
	Cancelled bool   `json:"cancelled"`
}

// cancelUnknown is the entry of cancel_letters for a reference that
// matches no letter of the account.
type cancelUnknown struct {
	Ref       string `json:"ref"`
	Status    string `json:"status"`
	Cancelled bool   `json:"cancelled"`
}

// CancelLetters is the JSON-RPC method cancel_letters: params as
// get_letter_status's. Every letter of the account with one of the
// references whose status is Received or Held becomes Cancelled, in one
// synced batch (see Store.CancelRefs); Lodged and Cancelled letters
// are left. Result {"letters": [...]}: for each ref in order (a ref given
// twice counts once), every letter of the account with that reference,
// oldest mailing first, each {"epid", "ref", "idx", "status" (after the
// call), "cancelled" (true when this call cancelled it)}, or when there is
// none {"ref": ref, "status": "Unknown", "cancelled": false}.
func (s *Store) CancelLetters(dst, params []byte, p rpc.Principal) ([]byte, int, string) {
	refs, code, msg := refParams(params, p)
	if code != 0 {
		return dst, code, msg
	}
	uniq := make([]string, 0, len(refs))
	seen := make(map[string]bool, len(refs))
	for _, r := range refs {
		if !seen[r] {
			seen[r] = true
			uniq = append(uniq, r)
		}
	}
	res, err := s.CancelRefs(p.Account, uniq)
	if err != nil {
		return dst, rpc.CodeInternalError, "internal error"
	}
	out := struct {
		Letters []any `json:"letters"` // cancelStatus or cancelUnknown
	}{Letters: []any{}}
	for i, ref := range uniq {
		if len(res[i]) == 0 {
			out.Letters = append(out.Letters, cancelUnknown{Ref: ref, Status: LetterUnknown})
		}
		for _, o := range res[i] {
			out.Letters = append(out.Letters, cancelStatus{EPID: o.Letter.EPID, Ref: o.Letter.Reference, Idx: o.Letter.Idx,
				Status: o.Letter.Status, Cancelled: o.Cancelled})
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return dst, rpc.CodeInternalError, "internal error"
	}
	return append(dst, b...), 0, ""
}

func upperTransport(t string) string {
	switch t {
	case "postal":
		return "POST"
	case "email":
		return "EMAIL"
	case "sms":
		return "SMS"
	case "fax":
		return "FAX"
	}
	return t
}

// Bounds of recent_uploads' limit.
const (
	defaultRecent = 20
	maxRecent     = 1000
)

// recentUpload is one mailing as recent_uploads reports it.
type recentUpload struct {
	EPID      string   `json:"epid"`
	Status    string   `json:"status"`
	CreatedTS float64  `json:"created_ts"`
	EndedTS   *float64 `json:"ended_ts"` // null while the session has not ended
	Files     int      `json:"files"`
	// Letters counts the mailing's letters by the status they carry now,
	// whatever statuses there are: a status no letter has is absent.
	Letters map[string]int `json:"letters"`
}

// StatusMixed is recent_uploads' status of a mailing whose letters are
// not all in one status.
const StatusMixed = "mixed"

// RecentUploads is the JSON-RPC method recent_uploads: the caller's
// account's sessions, newest first. Params {"account": "ABC12345",
// "limit": N, "before": "EPID"}: limit is 1 to 1000 (default 20); before,
// optional, is a session of the account and lists the sessions created
// before it (pass the last epid of one answer to get the next page).
// Result {"uploads": [...]}, each:
//
//	epid        the session identifier
//	status      "open", "expired" (timed out open: its files were
//	            deleted), "abandoned" (a failed mpf_upload request: its
//	            files were deleted), or once ended the mailing's status,
//	            told by its letters: the status all of them share, in
//	            lower case ("received": queued for lodgement, "lodged",
//	            "held", "cancelled"), "mixed" when they differ (see
//	            letters); a mailing without letters "queued_auto" (for
//	            the auto processor, which this version does not have: it
//	            stays so)
//	created_ts  Unix time (with fraction) the session was opened
//	ended_ts    Unix time end_session ended it; null while it has not
//	files       files stored in the session (ZIP entries count as files)
//	letters     the mailing's letters counted by status, e.g.
//	            {"Lodged": 2, "Held": 1}: every status a letter carries
//	            (get_letter_status's), {} before the end and for the auto
//	            processor
func (s *Store) RecentUploads(dst, params []byte, p rpc.Principal) ([]byte, int, string) {
	var in struct {
		Account string `json:"account"`
		Limit   *int   `json:"limit"`
		Before  string `json:"before"`
	}
	if len(params) == 0 || json.Unmarshal(params, &in) != nil {
		return dst, rpc.CodeInvalidParams, `invalid params: want {"account": "ABC12345", "limit": 20, "before": "EPID"}`
	}
	if in.Account = strings.ToUpper(strings.TrimSpace(in.Account)); in.Account != p.Account {
		return dst, rpc.CodeInvalidParams, "invalid params: these credentials are not for account " + in.Account
	}
	limit := defaultRecent
	if in.Limit != nil {
		limit = *in.Limit
	}
	if limit < 1 || limit > maxRecent {
		return dst, rpc.CodeInvalidParams, "invalid params: limit is 1 to 1000"
	}
	from := acctPrefix + p.Account + "/"
	if in.Before != "" {
		ss, err := s.Session(in.Before)
		if errors.Is(err, ErrNoSession) || (err == nil && ss.Account != p.Account) {
			return dst, rpc.CodeInvalidParams, "invalid params: before: the account has no session " + in.Before
		}
		if err != nil {
			return dst, rpc.CodeInternalError, "internal error"
		}
		from = acctKey(ss) + "\x00" // strictly after it
	}
	out := struct {
		Uploads []recentUpload `json:"uploads"`
	}{Uploads: []recentUpload{}}
	epids, err := s.scanFrom(from, acctPrefix+p.Account+"/", limit)
	if err != nil {
		return dst, rpc.CodeInternalError, "internal error"
	}
	for _, epid := range epids {
		u, err := s.recentUpload(epid)
		if errors.Is(err, ErrNoSession) {
			continue
		}
		if err != nil {
			return dst, rpc.CodeInternalError, "internal error"
		}
		out.Uploads = append(out.Uploads, u)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return dst, rpc.CodeInternalError, "internal error"
	}
	return append(dst, b...), 0, ""
}

// scanFrom returns the values (JSON strings) of up to limit keys from the
// key from on, among the keys with the prefix.
func (s *Store) scanFrom(from, prefix string, limit int) ([]string, error) {
	var out []string
	err := s.scanRange(prefix, from, func(_, v []byte) error {
		if len(out) >= limit {
			return errStop
		}
		var str string
		if err := json.Unmarshal(v, &str); err != nil {
			return err
		}
		out = append(out, str)
		return nil
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return out, err
}

// recentUpload summarises one session for recent_uploads.
func (s *Store) recentUpload(epid string) (recentUpload, error) {
	ss, err := s.Session(epid)
	if err != nil {
		return recentUpload{}, err
	}
	u := recentUpload{EPID: epid, Status: ss.State, CreatedTS: unixSeconds(ss.Created), Letters: map[string]int{}}
	if err := s.scan(filePrefix+epid+"/", func(k, v []byte) error { u.Files++; return nil }); err != nil {
		return u, err
	}
	if ss.State != StateEnded {
		return u, nil
	}
	ended := unixSeconds(ss.Ended)
	u.EndedTS = &ended
	p, err := s.Pack(epid)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return u, err
	}
	if p.Status != "" {
		u.Status = p.Status
	}
	letters, err := s.LettersOf(epid)
	if err != nil {
		return u, err
	}
	for _, l := range letters {
		u.Letters[l.Status]++
	}
	if len(letters) > 0 {
		u.Status = mailingStatus(u.Letters)
	}
	return u, nil
}

// mailingStatus tells a mailing's status from its letters' counts: the
// status all share, in lower case, or StatusMixed.
func mailingStatus(counts map[string]int) string {
	if len(counts) != 1 {
		return StatusMixed
	}
	for st := range counts {
		return strings.ToLower(st)
	}
	return StatusMixed
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / float64(time.Second) }
