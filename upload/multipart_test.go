package upload

import (
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"
)

const mpfPath = "/publicinterface/mpf_upload?account=ABC12345"

// TestMultipartDuplicateNames: two parts with the same file name are
// refused naming both parts (the second would silently replace the
// first), and nothing of the request is kept: its session is abandoned.
func TestMultipartDuplicateNames(t *testing.T) {
	w := newWeb(t)
	f := func(want string, files ...any) {
		t.Helper()
		body, ctype := multipartBody(t, files...)
		a := w.do("POST", mpfPath, "ABC12345", body, "Content-Type", ctype)
		if a.status != 400 || !strings.Contains(a.body, want) {
			t.Errorf("%d %s, want 400 %q", a.status, a.body, want)
		}
	}
	m := meta("", `{"postal":["Joe Blogs","10 Jones St","Melbourne VIC 3000"],"file_name":"letter.pdf"}`)
	f("parts 1 and 3 are both named letter.pdf", "letter.pdf", pdfPages(1), "m.json", m, "letter.pdf", pdfPages(2))
	f("parts 2 and 4 are both named letter.pdf", "m.json", m, "letter.pdf", pdfPages(1), "other.pdf", pdfPages(1), "letter.pdf", pdfPages(2))
	// the directory a browser adds is not part of the name
	f("parts 1 and 2 are both named letter.pdf", `C:\fakepath\letter.pdf`, pdfPages(1), "letter.pdf", pdfPages(2), "m.json", m)
	// names that differ in case are two files, as with PUT
	body, ctype := multipartBody(t, "letter.pdf", pdfPages(1), "Letter.pdf", pdfPages(2), "m.json", m)
	if a := w.do("POST", mpfPath, "ABC12345", body, "Content-Type", ctype); a.status != 200 {
		t.Errorf("names differing in case: %d %s", a.status, a.body)
	}
	// nothing kept of the refused requests
	err := w.s.scan(sessionPrefix, func(_, v []byte) error {
		var ss Session
		if err := json.Unmarshal(v, &ss); err != nil {
			return err
		}
		if ss.State == StateEnded {
			return nil
		}
		if ss.State != StateAbandoned || !strings.Contains(ss.Reason, "are both named letter.pdf") {
			t.Errorf("session %s: %s (%s)", ss.EPID, ss.State, ss.Reason)
		}
		if files, _ := w.s.Files(ss.EPID); len(files) != 0 {
			t.Errorf("session %s keeps %d files", ss.EPID, len(files))
		}
		checkBlobs(t, w.s, ss.EPID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMultipartRejectedAbandons: a rejected mpf_upload says to correct the
// request and send it again (its session does not stay open), and the
// session, abandoned, answers PUT and end_session with 404 saying it was
// abandoned and why, not that it expired.
func TestMultipartRejectedAbandons(t *testing.T) {
	w := newWeb(t)
	body, ctype := multipartBody(t, "a.pdf", pdfPages(1), "broken.pdf", "%PDF-1.4 nothing", "broken2.pdf", "%PDF-1.4 nothing")
	a := w.do("POST", mpfPath, "ABC12345", body, "Content-Type", ctype)
	var res EndResult
	if err := json.Unmarshal([]byte(a.body), &res); err != nil || a.status != 400 || res.Status != "rejected" || len(res.Errs) < 2 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if strings.Contains(res.Error, "stays open") || !strings.Contains(res.Error, "send the whole request again") {
		t.Errorf("error %q", res.Error)
	}
	ss, err := w.s.Session(res.SessionID)
	if err != nil || ss.State != StateAbandoned || !strings.Contains(ss.Reason, "rejected") {
		t.Errorf("session %+v, %v", ss, err)
	}
	f := func(a answer) {
		t.Helper()
		if a.status != 404 || strings.Contains(a.body, "expired") ||
			!strings.Contains(a.body, "session "+res.SessionID+" was abandoned (the mailing was rejected: ") {
			t.Errorf("%d %s", a.status, a.body)
		}
	}
	f(w.putFile(res.SessionID, "a.pdf", pdfPages(1)))
	f(w.do("GET", "/publicinterface/end_session.text?session_id="+res.SessionID, "ABC12345", nil))
	// a part refused: the reason is the part's
	exe, ctype2 := multipartBody(t, "a.pdf", pdfPages(1), "a.exe", pdfPages(1))
	a = w.do("POST", mpfPath, "ABC12345", exe, "Content-Type", ctype2)
	if a.status != 403 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	var abandoned []Session
	w.s.scan(sessionPrefix, func(_, v []byte) error {
		var ss Session
		json.Unmarshal(v, &ss)
		if ss.EPID != res.SessionID {
			abandoned = append(abandoned, ss)
		}
		return nil
	})
	if len(abandoned) != 1 || abandoned[0].State != StateAbandoned || !strings.HasPrefix(abandoned[0].Reason, "part 2: file type .exe is not accepted") {
		t.Errorf("sessions %+v", abandoned)
	}
}
