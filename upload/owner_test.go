package upload

import (
	"strings"
	"testing"
)

// TestSessionBelongsToAccount: any credential of the session's account
// continues and ends it, whoever opened it (another API key of the
// account, a portal user, after the opening key was revoked: the server
// no longer authenticates that key, and anyone else of the account can
// finish its sessions); another account gets 403. The records keep who
// opened the session, who uploaded each file and who ended it.
func TestSessionBelongsToAccount(t *testing.T) {
	w := newWeb(t)
	a := w.do("GET", "/publicinterface/get_session_id.text?account=ABC12345", "ABC12345", nil, "X-User", "key-one")
	epid := strings.TrimSpace(a.body)
	f := func(method, path, account, user string, body any, want int) {
		t.Helper()
		if a := w.do(method, path, account, body, "X-User", user); a.status != want {
			t.Errorf("%s %s as %s/%s: %d %q, want %d", method, path, account, user, a.status, a.body, want)
		}
	}
	f("PUT", "/direct_upload/"+epid+"/letter.pdf", "ABC12345", "key-two", pdfPages(1), 201)
	f("PUT", "/direct_upload/"+epid+"/m.json", "ABC12345", "portal-user", meta("", melbourne), 201)
	f("PUT", "/direct_upload/"+epid+"/x.pdf", "XYZ99999", "key-one", pdfPages(1), 403)
	f("GET", "/publicinterface/end_session.json?session_id="+epid, "XYZ99999", "key-one", nil, 403)
	f("GET", "/publicinterface/end_session.json?session_id="+epid, "ABC12345", "key-three", nil, 200)
	ss, err := w.s.Session(epid)
	if err != nil || ss.State != StateEnded || ss.User != "key-one" || ss.EndedBy != "key-three" {
		t.Errorf("session %+v, %v", ss, err)
	}
	files, _ := w.s.Files(epid)
	by := map[string]string{}
	for _, fl := range files {
		by[fl.Name] = fl.By
	}
	if by["letter.pdf"] != "key-two" || by["m.json"] != "portal-user" || len(by) != 2 {
		t.Errorf("uploaders %v", by)
	}
	// entries of an archive are the archive's uploader's
	r := w.rig
	ss2, _ := r.s.CreateSession("ABC12345", "key-one")
	z := zipOf(t, "a.pdf", string(pdfPages(1)))
	if _, err := r.s.PutFile(ss2, "key-two", "docs.zip", int64(len(z)), strings.NewReader(string(z)),
		func(head []byte) (string, error) { return checkContent("docs.zip", "zip", head) }); err != nil {
		t.Fatal(err)
	}
	if res, err := r.h.end(ss2, "key-three"); err != nil || res.Result != "ok" {
		t.Fatalf("%+v, %v", res, err)
	}
	files, _ = r.s.Files(ss2.EPID)
	for _, fl := range files {
		if fl.By != "key-two" {
			t.Errorf("%s uploaded by %q, want key-two", fl.Name, fl.By)
		}
	}
}
