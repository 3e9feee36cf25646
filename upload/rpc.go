package upload

import (
	"errors"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/rpc"
)

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
//	            lower case ("received": checked or waiting for its cancellation window, "lodged",
//	            "held", "cancelled"), "mixed" when they differ (see
//	            letters); a mailing without letters "queued_auto" (until
//	            the auto processor has read its letters out of the
//	            documents; then their statuses)
//	created_ts  Unix time (with fraction) the session was opened
//	ended_ts    Unix time end_session ended it; null while it has not
//	files       files stored in the session (ZIP entries count as files)
//	letters     the mailing's letters counted by status, e.g.
//	            {"Lodged": 2, "Held": 1}: every status a letter carries
//	            (get_letter_status's), {} before the end and for the auto
//	            processor
func (l *Lodger) RecentUploads(dst, params []byte, p rpc.Principal) ([]byte, int, string) {
	s := l.store
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
	var before *Session
	if in.Before != "" {
		ss, err := s.Session(in.Before)
		if errors.Is(err, ErrNoSession) || (err == nil && ss.Account != p.Account) {
			return dst, rpc.CodeInvalidParams, "invalid params: before: the account has no session " + in.Before
		}
		if err != nil {
			return dst, rpc.CodeInternalError, "internal error"
		}
		before = &ss
	}
	out := struct {
		Uploads []recentUpload `json:"uploads"`
	}{Uploads: []recentUpload{}}
	epids, err := s.accountSessions(p.Account, before, limit)
	if err != nil {
		return dst, rpc.CodeInternalError, "internal error"
	}
	for _, epid := range epids {
		u, err := l.recentUpload(epid)
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

var errEnough = errors.New("enough")

// accountSessions lists up to limit of an account's sessions, newest
// first (the later created first, sessions created at one instant by
// EPID), from the one after before (nil: from the newest).
func (s *Store) accountSessions(account string, before *Session, limit int) ([]string, error) {
	if s.pg != nil {
		return s.pgAccountSessions(account, before, limit)
	}
	from := acctPrefix + account + "/"
	if before != nil {
		from = acctKey(*before) + "\x00" // strictly after it
	}
	return s.scanFrom(from, acctPrefix+account+"/", limit)
}

// fileCount is how many files a session has.
func (s *Store) fileCount(epid string) (int, error) {
	if s.pg != nil {
		return s.pgFileCount(epid)
	}
	n := 0
	err := s.scan(filePrefix+epid+"/", func(k, v []byte) error { n++; return nil })
	return n, err
}

// scanFrom returns the values (JSON strings) of up to limit keys from the
// key from on, among the keys with the prefix.
func (s *Store) scanFrom(from, prefix string, limit int) ([]string, error) {
	var out []string
	err := s.scanRange(prefix, from, func(_, v []byte) error {
		if len(out) >= limit {
			return errEnough
		}
		var str string
		if err := json.Unmarshal(v, &str); err != nil {
			return err
		}
		out = append(out, str)
		return nil
	})
	if errors.Is(err, errEnough) {
		err = nil
	}
	return out, err
}

// recentUpload summarises one session for recent_uploads: the session's
// side from the upload store, its letters' from the mailroom.
func (l *Lodger) recentUpload(epid string) (recentUpload, error) {
	s := l.store
	ss, err := s.Session(epid)
	if err != nil {
		return recentUpload{}, err
	}
	u := recentUpload{EPID: epid, Status: ss.State, CreatedTS: unixSeconds(ss.Created), Letters: map[string]int{}}
	if u.Files, err = s.fileCount(epid); err != nil {
		return u, err
	}
	if ss.State != StateEnded {
		return u, nil
	}
	ended := unixSeconds(ss.Ended)
	u.EndedTS = &ended
	if ss.Result != nil {
		u.Status = ss.Result.Status
	}
	counts, err := l.mr.Store().Counts(epid)
	if err != nil {
		return u, err
	}
	for st, n := range counts {
		if n > 0 {
			u.Letters[st] = n
		}
	}
	if len(u.Letters) > 0 {
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
