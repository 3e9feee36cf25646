package upload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/datafiles"
	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/internal/testref"
	"github.com/lodge-mail/lodge/internal/tests3"
	"github.com/lodge-mail/lodge/pgdb"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/rpc"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testpg.Stop()
	tests3.Stop()
	testref.Cleanup()
	removeHistory()
	os.Exit(code)
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// rig is a store with a settable clock, a Lodger judging addresses with
// the test reference and handing mailings to a mailroom (its stages not
// run: they are package pipeline's to test), and the upload handler.
type rig struct {
	t   *testing.T
	dir string
	c   *clock
	eng *engine.Engine
	s   *Store
	ms  *pipeline.PebbleStore
	mr  *pipeline.Mailroom
	l   *Lodger
	h   *Handler
	// keep, when set, answers the store's Options.Keep (documents still
	// needed); nil: the mailroom's answer, as lodge serve wires it
	keep func(epid string) bool
	// node opens the store again (the backend's: the directory dir, or
	// another node on the rig's database and blob store)
	node func(Options) *Store
}

// newRig is a rig of an embedded store in its directory.
func newRig(t *testing.T) *rig { return newRigOn(t, backends[0]) }

// newRigOn is a rig of the backend's store.
func newRigOn(t *testing.T, b backend) *rig {
	t.Helper()
	e, err := engine.New(testref.Index(t).Ref, engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	r := &rig{t: t, dir: t.TempDir(), c: newClock(), eng: e}
	r.node = b.place(t, r.dir)
	r.open()
	return r
}

func (r *rig) open() {
	r.t.Helper()
	if r.ms != nil {
		r.ms.Close() // one process at a time
	}
	ms, err := pipeline.OpenPebble(filepath.Join(r.dir, "mailroom"))
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { ms.Close() })
	r.ms = ms
	r.mr = pipeline.New(ms, nil, pipeline.Config{Now: r.c.Now}, quiet)
	r.s = r.node(Options{Now: r.c.Now, Keep: func(epid string) bool {
		if r.keep != nil {
			return r.keep(epid)
		}
		m, err := ms.Mailing(epid)
		return err == nil && !m.Purged
	}})
	r.l = NewLodger(r.s, r.eng, r.mr, LodgerConfig{InProcess: true, Host: "test-host",
		Senders: pipeline.AccountSettings{Dir: filepath.Join(r.dir, "accounts")}.Senders}, quiet)
	r.h = NewHandler(r.s, r.l, Config{Host: "test-host"}, quiet)
}

// crash closes the stores as a killed process leaves them (every
// acknowledged write is synced) and opens them again with a new Lodger.
func (r *rig) crash() {
	r.t.Helper()
	closeStore(r.s)
	r.ms.Close()
	r.open()
}

// session opens a session of account ABC12345 and uploads files (name,
// content, name, content ...).
func (r *rig) session(files ...any) Session {
	r.t.Helper()
	ss, err := r.s.CreateSession("ABC12345", "clerk")
	if err != nil {
		r.t.Fatal(err)
	}
	r.put(ss, files...)
	return ss
}

func (r *rig) put(ss Session, files ...any) {
	r.t.Helper()
	for i := 0; i+1 < len(files); i += 2 {
		b, ok := files[i+1].([]byte)
		if !ok {
			b = []byte(files[i+1].(string))
		}
		put(r.t, r.s, ss, files[i].(string), b)
		r.c.Add(time.Second)
	}
}

// end ends a session as end_session does.
func (r *rig) end(ss Session) EndResult {
	r.t.Helper()
	res, err := r.h.end(ss, "clerk")
	if err != nil {
		r.t.Fatal(err)
	}
	return res
}

// mailing uploads files in a new session and ends it, failing the test
// unless the mailing is accepted.
func (r *rig) mailing(files ...any) Session {
	r.t.Helper()
	ss := r.session(files...)
	if res := r.end(ss); res.Result != "ok" {
		r.t.Fatalf("end_session: %+v", res)
	}
	return ss
}

// jobs returns the mailroom's jobs of a mailing.
func (r *rig) jobs(epid string) []pipeline.Job {
	r.t.Helper()
	all, err := r.ms.Jobs()
	if err != nil {
		r.t.Fatal(err)
	}
	var out []pipeline.Job
	for _, j := range all {
		if j.Key == epid {
			out = append(out, j)
		}
	}
	return out
}

// letters returns the letters the mailroom has of a mailing.
func (r *rig) letters(epid string) []pipeline.Letter {
	r.t.Helper()
	ls, err := r.ms.Letters(epid, 0, 0)
	if err != nil {
		r.t.Fatal(err)
	}
	return ls
}

// mailingRec returns the mailroom's record of a mailing.
func (r *rig) mailingRec(epid string) (pipeline.Mailing, error) {
	return r.ms.Mailing(epid)
}

// letter is one metadata letter; postal lines are JSON strings.
func postal(lines ...string) string {
	b, _ := json.Marshal(lines)
	return `{"postal":` + string(b) + `}`
}

func meta(attrs string, letters ...string) string {
	if attrs != "" {
		attrs += ","
	}
	return `{` + attrs + `"letters":[` + strings.Join(letters, ",") + `]}`
}

var (
	melbourne = postal("Joe Blogs", "10 Jones St", "Melbourne VIC 3000")
	wrongPC   = postal("Joe Blogs", "10 Jones St", "Melbourne NSW 3000")  // invalid: 3000 is in VIC
	smithvill = postal("Joe Blogs", "10 Jones St", "Smithville NSW 2987") // unmatched: no such locality
	emailOnly = `{"email":"jo@example.com"}`
)

// TestEndHandsOver: end_session hands each mailing's letters to the
// mailroom, Received, or Held at once where the reason is known: post to
// an invalid address (the checker's reason), a channel this server does
// not send by, the mailing's customer hold; it says so in warnings, and
// queues the mailroom's check stage.
func TestEndHandsOver(t *testing.T) {
	r := newRig(t)
	f := func(metadata string, want ...string) {
		t.Helper()
		ss := r.session("doc.pdf", pdfPages(1), "m.json", metadata)
		res := r.end(ss)
		if res.Result != "ok" {
			t.Fatalf("end_session: %+v", res)
		}
		if j := r.jobs(ss.EPID); len(j) != 1 || j[0].Kind != pipeline.JobCheck {
			t.Fatalf("jobs %+v, want the check of %s", j, ss.EPID)
		}
		ls := r.letters(ss.EPID)
		if len(ls) != len(want) {
			t.Fatalf("%d letters, want %d", len(ls), len(want))
		}
		held := 0
		for i, l := range ls {
			status, reason, _ := strings.Cut(want[i], ": ")
			if l.Status != status || !strings.Contains(l.HoldReason, reason) || (reason == "") != (l.HoldReason == "") {
				t.Errorf("letter %d: %s %q, want %s %q (address %+v)", i, l.Status, l.HoldReason, status, reason, l.Address)
			}
			if !l.Received.Equal(r.c.Now()) || l.EPID != ss.EPID || l.Account != "ABC12345" || l.Idx != i {
				t.Errorf("letter %d: %+v", i, l)
			}
			if status == pipeline.Held {
				held++
				w := fmt.Sprintf("letters[%d]", i)
				if !strings.Contains(strings.Join(res.Warnings, "\n"), w) || !strings.Contains(strings.Join(res.Warnings, "\n"), reason) {
					t.Errorf("warnings %q do not tell that %s will be held: %s", res.Warnings, w, reason)
				}
			}
		}
		m, err := r.mailingRec(ss.EPID)
		if err != nil || m.Letters != len(want) || m.Account != "ABC12345" || !m.Created.Equal(r.c.Now()) || len(m.Files) != 1 || m.Files[0].Pages != 1 {
			t.Errorf("mailing %+v, %v", m, err)
		}
		if _, err := os.Stat(m.Files[0].Path); err != nil || !filepath.IsAbs(m.Files[0].Path) {
			t.Errorf("the mailing's document %q: %v", m.Files[0].Path, err)
		}
	}
	const invalid = "Held: invalid postal address: postcode 3000 is in VIC, not NSW"
	const onHold = "Held: the mailing is on customer hold"
	const noEmail = "Held: email delivery is not available on this server"
	f(meta("", melbourne), "Received")
	f(meta("", wrongPC), invalid)
	f(meta("", smithvill), "Received") // unmatched is not invalid
	f(meta("", emailOnly), noEmail)
	f(meta("", melbourne, wrongPC, emailOnly, wrongPC), "Received", invalid, noEmail, invalid)
	// by email first, the invalid postal address is only a fallback
	f(meta("", `{"email":"jo@example.com","primary":"email","postal":["Joe Blogs","10 Jones St","Melbourne NSW 3000"]}`), noEmail)
	f(meta(`"cust_hold":true`, melbourne, wrongPC, emailOnly), onHold, invalid, noEmail)
	f(meta(`"cust_hold":false`, melbourne), "Received")
}

// TestLetterVerdicts: each postal letter carries the address check of its
// address; letters without post carry none.
func TestLetterVerdicts(t *testing.T) {
	r := newRig(t)
	ss := r.mailing("doc.pdf", pdfPages(1), "m.json", meta("", melbourne, wrongPC, smithvill, emailOnly))
	f := func(i int, status string) {
		t.Helper()
		l := r.letters(ss.EPID)[i]
		switch {
		case status == "" && l.Address != nil:
			t.Errorf("letter %d: verdict %+v, want none", i, l.Address)
		case status != "" && (l.Address == nil || l.Address.Status != status || l.Address.Nation != "AUS"):
			t.Errorf("letter %d: verdict %+v, want %s AUS", i, l.Address, status)
		}
	}
	f(0, "matched")
	f(1, "invalid")
	f(2, "unmatched")
	f(3, "")
}

// TestEndAfterCrash: a mailing whose end_session was answered survives a
// restart with its letters and its queued check, and end_session answers
// the same again. One whose mailing the mailroom recorded while the
// session was not yet marked ended (the process died between the two
// commits) is finished by the next end_session with the recorded answer,
// and recorded once.
func TestEndAfterCrash(t *testing.T) {
	r := newRig(t)
	ss := r.session("doc.pdf", pdfPages(2), "m.json", meta("", melbourne, wrongPC))
	first := r.end(ss)
	r.crash()
	if got := r.end(ss); !reflect.DeepEqual(got, first) {
		t.Errorf("end_session after the restart:\n%+v\nwant\n%+v", got, first)
	}
	if j := r.jobs(ss.EPID); len(j) != 1 || j[0].Kind != pipeline.JobCheck {
		t.Fatalf("jobs after the restart: %+v", j)
	}
	if ls := r.letters(ss.EPID); len(ls) != 2 || ls[0].Status != pipeline.Received || ls[1].Status != pipeline.Held {
		t.Errorf("letters %+v", ls)
	}

	// the session record as it was before it was marked ended
	ss2 := r.session("doc.pdf", pdfPages(1), "m.json", meta("", melbourne))
	want := r.end(ss2)
	open, _ := r.s.Session(ss2.EPID)
	open.State, open.Ended, open.Result, open.EndedBy = StateOpen, time.Time{}, nil, ""
	if err := r.s.Update(func(tx *Tx) error { tx.PutSession(open); return nil }); err != nil {
		t.Fatal(err)
	}
	r.crash()
	r.c.Add(time.Minute)
	got := r.end(ss2)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resumed end_session:\n%+v\nwant\n%+v", got, want)
	}
	if s, _ := r.s.Session(ss2.EPID); s.State != StateEnded || s.Result == nil {
		t.Errorf("session after the resumed end: %+v", s)
	}
	if ls := r.letters(ss2.EPID); len(ls) != 1 {
		t.Errorf("letters %+v", ls)
	}
	files, _ := r.s.Files(ss2.EPID)
	for _, f := range files {
		if f.Intent == 0 {
			t.Errorf("file %s: no intent after the resumed end", f.Name)
		}
	}
}

// TestAutoProcessor: a mailing without metadata, or whose metadata has no
// letters, is queued for the auto processor: no letters, no lodgement job.
func TestAutoProcessor(t *testing.T) {
	r := newRig(t)
	f := func(wantIntents map[string]int, files ...any) {
		t.Helper()
		ss := r.session(files...)
		res := r.end(ss)
		if res.Result != "ok" || res.Status != PackQueuedAuto {
			t.Fatalf("end_session: %+v", res)
		}
		m, err := r.mailingRec(ss.EPID)
		if err != nil || !m.Auto || m.Letters != 0 {
			t.Errorf("mailing %+v, %v: not for the auto processor", m, err)
		}
		if ls := r.letters(ss.EPID); len(ls) != 0 {
			t.Errorf("letters %+v", ls)
		}
		got := map[string]int{}
		for _, fl := range res.Files {
			got[fl.Name] = fl.Intent
		}
		if !reflect.DeepEqual(got, wantIntents) {
			t.Errorf("intents %v, want %v", got, wantIntents)
		}
	}
	f(map[string]int{"a.pdf": IntentDocument}, "a.pdf", pdfPages(1))
	f(map[string]int{"a.pdf": IntentDocument, "b.pdf": IntentDocument}, "a.pdf", pdfPages(1), "b.pdf", pdfPages(2))
	f(map[string]int{"a.pdf": IntentDocument, "m.json": IntentMetadata}, "a.pdf", pdfPages(1), "m.json", `{"title":"Auto","cust_hold":false}`)
	f(map[string]int{"a.pdf": IntentDocument, "m.xml": IntentMetadata}, "a.pdf", pdfPages(1), "m.xml", `<pack><title>Auto</title></pack>`)
}

// TestEndRejected: a session whose files cannot make a mailing is
// answered with the problems and stays open, with nothing recorded.
func TestEndRejected(t *testing.T) {
	r := newRig(t)
	f := func(want string, files ...any) {
		t.Helper()
		ss := r.session(files...)
		res := r.end(ss)
		if res.Result != "error" || res.Status != "rejected" || len(res.Errs) == 0 || res.Error == "" || res.SessionID != ss.EPID {
			t.Fatalf("end_session: %+v", res)
		}
		if !strings.Contains(strings.Join(res.Errs, "\n"), want) {
			t.Errorf("problems %q lack %q", res.Errs, want)
		}
		if len(res.Errs) == 1 && res.Error != res.Errs[0] {
			t.Errorf("error %q, want the one problem %q", res.Error, res.Errs[0])
		}
		if len(res.Files) < len(files)/2 {
			t.Errorf("lists %d files, %d uploaded", len(res.Files), len(files)/2)
		}
		got, _ := r.s.Session(ss.EPID)
		if got.State != StateOpen || got.Result != nil {
			t.Errorf("session %s after a rejected end", got.State)
		}
		if _, err := r.mailingRec(ss.EPID); !errors.Is(err, pipeline.ErrNotFound) {
			t.Errorf("a mailing was recorded: %v", err)
		}
		if ls := r.letters(ss.EPID); len(ls) != 0 {
			t.Errorf("letters recorded: %+v", ls)
		}
	}
	doc := pdfPages(1)
	f("no files were uploaded")
	f("m.json: invalid JSON", "doc.pdf", doc, "m.json", `{"letters":[`)
	f(`m.json: letters[0].file_name: no document "other.pdf"`, "doc.pdf", doc, "m.json", `{"letters":[{"postal":["Joe Blogs","10 Jones St","Melbourne VIC 3000"],"file_name":"other.pdf"}]}`)
	f("m.json: letters[0]: no delivery channel", "doc.pdf", doc, "m.json", `{"letters":[{}]}`)
	f("several metadata files", "doc.pdf", doc, "a.json", meta("", melbourne), "b.xml", `<pack/>`)
	f(`x.zip: ZIP entry "in.zip" is a nested archive`, "x.zip", zipOf(t, "in.zip", "PK"))
	f("no document was uploaded", "x.zip", zipOf(t))
	f("no document was uploaded", "m.json", `{"title":"nothing to print"}`)
	f("every document is an attachment or the background", "terms.pdf", doc, "m.json", `{"attachments":["terms.pdf"]}`)
	f("x.zip!doc.pdf: a file of this name was also uploaded on its own", "doc.pdf", doc, "x.zip", zipOf(t, "doc.pdf", string(pdfPages(2))))
	f("a file of this name is also in x.zip", "x.zip", zipOf(t, "doc.pdf", string(pdfPages(2))), "y.zip", zipOf(t, "doc.pdf", string(pdfPages(3))))
	// a broken document and the metadata's problems, reported together
	f("m.json: invalid JSON", "bad.pdf", "%PDF-1.4 broken", "doc.pdf", doc, "m.json", `{"letters":[`)
	if j, _ := r.ms.Jobs(); len(j) != 0 {
		t.Errorf("jobs %v", j)
	}
}

// TestZipKeepsUploadedFile: an archive entry named like a file uploaded
// on its own does not replace it: the end is refused and the uploaded
// file is kept as it was.
func TestZipKeepsUploadedFile(t *testing.T) {
	r := newRig(t)
	own := pdfPages(3)
	ss := r.session("a.pdf", own, "x.zip", zipOf(t, "a.pdf", string(pdfPages(1))))
	for range 2 {
		if res := r.end(ss); res.Result != "error" || !strings.Contains(strings.Join(res.Errs, "\n"), "x.zip!a.pdf") {
			t.Fatalf("end_session: %+v", res)
		}
	}
	files, _ := r.s.Files(ss.EPID)
	for _, f := range files {
		if f.Name == "a.pdf" && (f.SHA1 != sha1Hex(own) || f.Archive != "") {
			t.Errorf("a.pdf replaced: %+v", f)
		}
	}
	checkBlobs(t, r.s, ss.EPID)
}

// TestEndCorrected: after a rejected end_session, uploading a corrected
// metadata file under the same name makes the next end_session succeed,
// once: a further call answers the same and records nothing more.
func TestEndCorrected(t *testing.T) {
	r := newRig(t)
	ss := r.session("doc.pdf", pdfPages(2), "m.json", `{"letters":[{"postal":"Joe Blogs"`)
	if res := r.end(ss); res.Result != "error" {
		t.Fatalf("bad metadata accepted: %+v", res)
	}
	r.put(ss, "m.json", meta("", melbourne))
	res := r.end(ss)
	if res.Result != "ok" || res.Status != PackReceived || res.Error != "" || len(res.Errs) != 0 {
		t.Fatalf("end_session after the correction: %+v", res)
	}
	if len(res.Files) != 2 || res.Files[0].Name != "doc.pdf" || res.Files[1].Name != "m.json" || res.Files[1].Chunks != 2 ||
		res.Files[0].Intent != IntentDocument || res.Files[1].Intent != IntentMetadata {
		t.Errorf("files %+v", res.Files)
	}
	ended, _ := r.s.Session(ss.EPID)
	r.c.Add(time.Minute)
	again := r.end(ss)
	if !reflect.DeepEqual(again, res) {
		t.Errorf("second end_session:\n%+v\nwant\n%+v", again, res)
	}
	if now, _ := r.s.Session(ss.EPID); !now.Ended.Equal(ended.Ended) || now.State != StateEnded {
		t.Errorf("the second end_session changed the session: %+v, was %+v", now, ended)
	}
	if j := r.jobs(ss.EPID); len(j) != 1 {
		t.Errorf("jobs %v, want one", j)
	}
	if ls := r.letters(ss.EPID); len(ls) != 1 {
		t.Errorf("letters %+v, want one", ls)
	}
	if _, err := r.s.PutFile(ss, "clerk", "late.pdf", -1, strings.NewReader("%PDF-1.4"), func([]byte) (string, error) { return "pdf", nil }); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("upload after the end: %v, want ErrSessionClosed", err)
	}
	checkBlobs(t, r.s, ss.EPID)
}

// TestZipMailing: the files of a ZIP are unpacked into the session and
// make the mailing; end_session lists each once with where it came from.
func TestZipMailing(t *testing.T) {
	r := newRig(t)
	z := zipOf(t, "letter.pdf", string(pdfPages(2)), "m.json", meta("", melbourne))
	ss := r.session("x.zip", z)
	res := r.end(ss)
	if res.Result != "ok" || res.Status != PackReceived {
		t.Fatalf("end_session: %+v", res)
	}
	f := func(name, apath string, intent int) {
		t.Helper()
		for _, fl := range res.Files {
			if fl.Name == name {
				if fl.APath != apath || fl.Intent != intent || fl.Host != "test-host" {
					t.Errorf("%s: apath %q intent %d host %q, want %q %d", name, fl.APath, fl.Intent, fl.Host, apath, intent)
				}
				return
			}
		}
		t.Errorf("%s not listed in %+v", name, res.Files)
	}
	f("x.zip", "x.zip", IntentArchive)
	f("letter.pdf", "x.zip!letter.pdf", IntentDocument)
	f("m.json", "x.zip!m.json", IntentMetadata)
	if len(res.Files) != 3 {
		t.Errorf("%d files listed, want 3", len(res.Files))
	}
	ls := r.letters(ss.EPID)
	if len(ls) != 1 || len(ls[0].Documents) != 1 || ls[0].Documents[0].File != "letter.pdf" {
		t.Errorf("letters %+v", ls)
	}
	checkBlobs(t, r.s, ss.EPID)
}

// TestZipCorrected: a session with a ZIP of documents whose first
// end_session was rejected for its metadata ends once the metadata (and
// the ZIP) are corrected, each unpacked file listed and recorded once, its
// blob intact; files only the replaced ZIP had are gone.
func TestZipCorrected(t *testing.T) {
	r := newRig(t)
	z := zipOf(t, "letter.pdf", string(pdfPages(2)), "old.pdf", string(pdfPages(1)))
	ss := r.session("x.zip", z, "m.json", `{"letters":[{}]}`)
	if res := r.end(ss); res.Result != "error" || len(res.Files) != 4 {
		t.Fatalf("bad metadata accepted, or not every file listed: %+v", res)
	}
	checkBlobs(t, r.s, ss.EPID)
	if res := r.end(ss); res.Result != "error" || len(res.Files) != 4 {
		t.Fatalf("rejected again: %+v", res)
	}
	checkBlobs(t, r.s, ss.EPID)
	r.put(ss, "x.zip", zipOf(t, "letter.pdf", string(pdfPages(2))), "m.json", meta("", melbourne))
	res := r.end(ss)
	if res.Result != "ok" {
		t.Fatalf("end_session after the correction: %+v", res)
	}
	names := map[string]int{}
	for _, fl := range res.Files {
		names[fl.Name]++
	}
	if !reflect.DeepEqual(names, map[string]int{"x.zip": 1, "letter.pdf": 1, "m.json": 1}) {
		t.Errorf("files listed %v", names)
	}
	files, _ := r.s.Files(ss.EPID)
	if len(files) != 3 {
		t.Errorf("%d file records, want 3: %+v", len(files), files)
	}
	checkBlobs(t, r.s, ss.EPID)
	if ls := r.letters(ss.EPID); len(ls) != 1 || ls[0].Status != pipeline.Received {
		t.Errorf("letters %+v", ls)
	}
}

// recent is recent_uploads' answer.
type recent struct {
	Uploads []struct {
		EPID      string         `json:"epid"`
		Status    string         `json:"status"`
		CreatedTS float64        `json:"created_ts"`
		EndedTS   *float64       `json:"ended_ts"`
		Files     int            `json:"files"`
		Letters   map[string]int `json:"letters"`
	} `json:"uploads"`
}

// TestRecentUploads: recent_uploads lists the caller's account's
// sessions newest first with their state and counts, pages with limit and
// before, and refuses other accounts and bad params.
func TestRecentUploads(t *testing.T) {
	r := newRig(t)
	me := rpc.Principal{Account: "ABC12345", User: "clerk"}
	call := func(p rpc.Principal, params string) (recent, int, string) {
		t.Helper()
		out, code, msg := r.l.RecentUploads([]byte("prefix:"), []byte(params), p)
		var got recent
		if code == 0 {
			if !strings.HasPrefix(string(out), "prefix:") {
				t.Fatalf("%s: dst not appended to: %s", params, out)
			}
			if err := json.Unmarshal(out[len("prefix:"):], &got); err != nil {
				t.Fatalf("%s: %v: %s", params, err, out)
			}
		}
		return got, code, msg
	}
	if got, code, msg := call(me, `{"account":"ABC12345"}`); code != 0 || got.Uploads == nil || len(got.Uploads) != 0 {
		t.Fatalf("no sessions yet: %+v %d %s", got, code, msg)
	}
	expired := r.session("a.pdf", pdfPages(1))
	r.c.Add(25 * time.Hour)
	if _, err := r.s.ExpireSessions(); err != nil {
		t.Fatal(err)
	}
	held := r.mailing("doc.pdf", pdfPages(1), "m.json", meta("", melbourne, wrongPC, emailOnly, ref(melbourne, "R-1")))
	endedAt := r.c.Now()
	r.c.Add(time.Minute)
	lodged := r.mailing("doc.pdf", pdfPages(1), "m.json", meta("", melbourne, emailOnly))
	r.c.Add(time.Minute)
	cancelled := r.mailing("doc.pdf", pdfPages(1), "m.json", meta("", ref(melbourne, "R-1"), ref(emailOnly, "R-1")))
	r.c.Add(time.Minute)
	if _, err := r.mr.Cancel("ABC12345", pipeline.Selector{Refs: []string{"R-1"}}, "clerk"); err != nil {
		t.Fatal(err)
	}
	auto := r.mailing("a.pdf", pdfPages(1))
	r.c.Add(time.Minute)
	queued := r.mailing("doc.pdf", pdfPages(1), "m.json", meta("", melbourne))
	r.c.Add(time.Minute)
	open := r.session("a.pdf", pdfPages(1), "b.pdf", pdfPages(1))
	r.c.Add(time.Minute)
	theirs, _ := r.s.CreateSession("XYZ99999", "them")
	r.c.Add(time.Minute)
	r.s.CreateSession("XYZ99999", "them")

	type row struct {
		epid, status string
		ended        bool
		files        int
		letters      string // the counts as fmt prints a map
	}
	want := []row{
		{open.EPID, "open", false, 2, "map[]"},
		{queued.EPID, "received", true, 2, "map[Received:1]"},
		{auto.EPID, "queued_auto", true, 1, "map[]"},
		{cancelled.EPID, "cancelled", true, 2, "map[Cancelled:2]"},
		{lodged.EPID, "mixed", true, 2, "map[Held:1 Received:1]"},
		{held.EPID, "mixed", true, 2, "map[Cancelled:1 Held:2 Received:1]"},
		{expired.EPID, "expired", false, 0, "map[]"},
	}
	f := func(params string, want ...row) {
		t.Helper()
		got, code, msg := call(me, params)
		if code != 0 {
			t.Fatalf("%s: error %d %s", params, code, msg)
		}
		if len(got.Uploads) != len(want) {
			t.Fatalf("%s: %d uploads, want %d: %+v", params, len(got.Uploads), len(want), got)
		}
		for i, w := range want {
			u := got.Uploads[i]
			if u.Letters == nil {
				t.Errorf("%s: upload %d: letters null, want an object", params, i)
			}
			g := row{u.EPID, u.Status, u.EndedTS != nil, u.Files, fmt.Sprint(u.Letters)}
			if g != w {
				t.Errorf("%s: upload %d: %+v, want %+v", params, i, g, w)
			}
			if i > 0 && u.CreatedTS > got.Uploads[i-1].CreatedTS {
				t.Errorf("%s: upload %d is newer than the one before", params, i)
			}
		}
	}
	f(`{"account":"ABC12345"}`, want...)
	f(`{"account":"ABC12345","limit":1000}`, want...)
	f(`{"account":"ABC12345","limit":2}`, want[:2]...)
	f(`{"account":"ABC12345","limit":2,"before":"`+queued.EPID+`"}`, want[2:4]...)
	f(`{"account":"ABC12345","before":"`+held.EPID+`"}`, want[6:]...)
	f(`{"account":"ABC12345","before":"` + expired.EPID + `"}`)

	// times, as Unix seconds
	got, _, _ := call(me, `{"account":"ABC12345","before":"`+lodged.EPID+`"}`)
	hs, _ := r.s.Session(held.EPID)
	if u := got.Uploads[0]; u.EPID != held.EPID || u.CreatedTS != float64(hs.Created.UnixNano())/1e9 ||
		u.EndedTS == nil || *u.EndedTS != float64(endedAt.UnixNano())/1e9 {
		t.Errorf("times %+v, want created %v ended %v", u, hs.Created, endedAt)
	}

	// the other account sees only its own
	them := rpc.Principal{Account: "XYZ99999", User: "them"}
	if got, code, _ := call(them, `{"account":"XYZ99999"}`); code != 0 || len(got.Uploads) != 2 || got.Uploads[1].EPID != theirs.EPID {
		t.Errorf("other account: %+v", got)
	}

	// through the JSON-RPC server, as cmd/lodge registers it
	srv := rpc.New(r.eng, rpc.Config{}, nil)
	if err := srv.Register("recent_uploads", r.l.RecentUploads, RecentUploadsDoc); err != nil {
		t.Fatal(err)
	}
	out, _ := srv.Handle(nil, []byte(`{"jsonrpc":"2.0","id":7,"method":"recent_uploads","params":{"account":"ABC12345","limit":1}}`), me)
	var resp struct {
		ID     int    `json:"id"`
		Result recent `json:"result"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || resp.ID != 7 || len(resp.Result.Uploads) != 1 || resp.Result.Uploads[0].EPID != open.EPID {
		t.Errorf("JSON-RPC answer %s (%v)", out, err)
	}
	out, _ = srv.Handle(nil, []byte(`{"jsonrpc":"2.0","id":8,"method":"recent_uploads","params":{"account":"XYZ99999"}}`), me)
	if !strings.Contains(string(out), `"code":-32602`) {
		t.Errorf("another account's uploads: %s", out)
	}

	e := func(p rpc.Principal, params, msg string) {
		t.Helper()
		out, code, m := r.l.RecentUploads(nil, []byte(params), p)
		if code != rpc.CodeInvalidParams || !strings.Contains(m, msg) || len(out) != 0 {
			t.Errorf("%s: %d %q %s, want %d %q", params, code, m, out, rpc.CodeInvalidParams, msg)
		}
	}
	e(me, ``, "invalid params")
	e(me, `[]`, "invalid params")
	e(me, `{"account":"ABC12345","limit":"5"}`, "invalid params")
	e(me, `{"account":"ABC12345","limit":0}`, "limit is 1 to 1000")
	e(me, `{"account":"ABC12345","limit":-1}`, "limit is 1 to 1000")
	e(me, `{"account":"ABC12345","limit":1001}`, "limit is 1 to 1000")
	e(me, `{"account":"XYZ99999"}`, "not for account XYZ99999")
	e(me, `{}`, "not for account")
	e(me, `{"account":"ABC12345","before":"`+theirs.EPID+`"}`, "no session")
	e(me, `{"account":"ABC12345","before":"ZZZZZZZZZZZZZZZZZZZZZZZZZZZZ"}`, "no session")
	e(me, `{"account":"ABC12345","before":"nonsense"}`, "no session")
}

// The OpenRPC docs of the upload methods are valid JSON objects that
// rpc.discover can list.
func TestRPCDocs(t *testing.T) {
	srv := rpc.New(nil, rpc.Config{}, nil)
	f := func(name, doc string) {
		t.Helper()
		if !json.Valid([]byte(doc)) {
			t.Fatalf("%s: invalid JSON", name)
		}
		if err := srv.Register(name, func(dst, _ []byte, _ rpc.Principal) ([]byte, int, string) { return dst, 0, "" }, doc); err != nil {
			t.Fatal(err)
		}
	}
	f("recent_uploads", RecentUploadsDoc)
	out, _ := srv.Handle(nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}`), rpc.Principal{})
	if !json.Valid(out) || !strings.Contains(string(out), `"name":"recent_uploads"`) {
		t.Errorf("rpc.discover: %s", out)
	}
}

// TestProfiles: a mailing's own attributes win over the profile it names,
// which wins over the account's default profile; a profile that does not
// exist or is not valid is a problem of the mailing.
func TestProfiles(t *testing.T) {
	r := newRig(t)
	dir := t.TempDir()
	r.l.cfg.ProfileDir = dir
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, "ABC12345"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "ABC12345", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("default.json", `{"title":"Default run","duplex":true}`)
	write("hold.xml", `<pack><title>Held run</title><cust_hold>true</cust_hold></pack>`)
	write("broken.json", `{"title":"x","letters":[{"email":"a@b.example"}]}`)
	letter := `"letters":[{"postal":["Jo Citizen","10 Jones St","Melbourne VIC 3000"]}]`
	f := func(meta string, title string, hold bool) {
		t.Helper()
		ss := r.mailing("doc.pdf", pdfPages(1), "m.json", meta)
		m, err := r.mailingRec(ss.EPID)
		if err != nil || m.Title != title || m.CustHold != hold {
			t.Errorf("%s: mailing title %q hold %v, want %q %v (%v)", meta, m.Title, m.CustHold, title, hold, err)
		}
	}
	f(`{`+letter+`}`, "Default run", false)
	f(`{"profile":"hold",`+letter+`}`, "Held run", true)
	f(`{"profile":"hold","title":"Mine",`+letter+`}`, "Mine", true)
	f(`{"title":"Mine","cust_hold":false,"profile":"hold",`+letter+`}`, "Mine", false)
	bad := func(meta, want string) {
		t.Helper()
		res := r.end(r.session("doc.pdf", pdfPages(1), "m.json", meta))
		if res.Result != "error" || !strings.Contains(strings.Join(res.Errs, "\n"), want) {
			t.Errorf("%s: %+v, want a problem %q", meta, res, want)
		}
	}
	bad(`{"profile":"nosuch",`+letter+`}`, `m.json: profile: account ABC12345 has no profile "nosuch"`)
	bad(`{"profile":"broken",`+letter+`}`, `/ABC12345/broken.json): letters: a profile holds mailing attributes only, not letters (the operator must correct the profile)`)
	bad(`{"profile":"../default",`+letter+`}`, `a name is 1 to 64 letters`)
	write("default.json", `{"title":`)
	bad(`{`+letter+`}`, `/ABC12345/default.json): invalid JSON at line 1, column 10: unexpected end of JSON input (the operator must correct the profile)`)
}

// TestEndWarnings: what a mailing is accepted despite is told in
// warnings, in each format.
func TestEndWarnings(t *testing.T) {
	r := newRig(t)
	ss := r.session("a.pdf", pdfPages(1), "b.pdf", pdfPages(1), "m.json", `{"letters":[{"postal":["Jo Citizen","10 Jones St","Melbourne VIC 3000"]}]}`)
	res := r.end(ss)
	if res.Result != "ok" || len(res.Warnings) == 0 || !strings.Contains(strings.Join(res.Warnings, "\n"), `m.json: several documents were uploaded and none is referenced`) {
		t.Fatalf("end_session: %+v", res)
	}
	f := func(fm Format, want string) {
		t.Helper()
		if b := encodeEnd(fm, res); !strings.Contains(string(b), want) {
			t.Errorf("%v: %s lacks %q", fm, b, want)
		}
	}
	f(FormatJSON, `"warnings":["m.json: several documents were uploaded`)
	f(FormatXML, `<Warnings><Warning>m.json: several documents were uploaded`)
	f(FormatText, "warning: m.json: several documents were uploaded")
	if again := r.end(ss); !reflect.DeepEqual(again.Warnings, res.Warnings) {
		t.Errorf("a second end_session: warnings %q, first %q", again.Warnings, res.Warnings)
	}
}

// TestSenderApproval: an email_from domain or an alphanumeric sms_from
// is accepted only once an operator approved it for the account; a
// mobile number needs no approval.
func TestSenderApproval(t *testing.T) {
	r := newRig(t)
	doc := pdfPages(1)
	f := func(meta, want string) {
		t.Helper()
		res := r.end(r.session("doc.pdf", doc, "m.json", meta))
		got := strings.Join(res.Errs, "\n")
		if want == "" && res.Result != "ok" || want != "" && !strings.Contains(got, want) {
			t.Errorf("%s: %s %q, want %q", meta, res.Result, got, want)
		}
	}
	email := func(from string) string {
		return `{"email_from":"` + from + `","letters":[{"email":"jo@example.net","postal":["Jo Citizen","10 Jones St","Melbourne VIC 3000"]}]}`
	}
	sms := func(from string) string {
		return `{"sms_from":"` + from + `","letters":[{"sms":"0412345678"}]}`
	}
	f(email("Acme <noreply@acme.com.au>"), `email_from: the domain "acme.com.au" is not approved for account ABC12345: an operator approves it with lodge account sender add ABC12345 -email acme.com.au`)
	f(sms("ACME"), `sms_from: "ACME" is not approved for account ABC12345`)
	f(sms("0412345678"), "")
	settings := pipeline.AccountSettings{Dir: filepath.Join(r.dir, "accounts")}
	if _, err := settings.EditSenders("ABC12345", func(s *pipeline.Senders) error {
		s.EmailDomains, s.SMSNames = []string{"acme.com.au"}, []string{"ACME"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f(email("Acme <noreply@acme.com.au>"), "")
	f(email("billing@mail.acme.com.au"), "")
	f(email("evil@notacme.com.au"), `the domain "notacme.com.au" is not approved`)
	f(sms("ACME"), "")
	f(sms("OTHER"), `"OTHER" is not approved`)
}

// TestProfilesShared: with LodgerConfig.Profiles the profiles come from
// the shared files of several nodes (lodge settings put), not from the
// node's ProfileDir, which holds none.
func TestProfilesShared(t *testing.T) {
	r := newRig(t)
	db, err := pgdb.Open(context.Background(), pgdb.Config{URL: testpg.NewDatabase(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	files, err := datafiles.NewPostgres(db, datafiles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.l.cfg.ProfileDir = t.TempDir() // empty on this node
	r.l.cfg.Profiles = datafiles.Sub(files, "profiles")
	if err := files.Write("profiles/ABC12345/hold.json", []byte(`{"title":"Held run","cust_hold":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	letter := `"letters":[{"postal":["Jo Citizen","10 Jones St","Melbourne VIC 3000"]}]`
	ss := r.mailing("doc.pdf", pdfPages(1), "m.json", `{"profile":"hold",`+letter+`}`)
	if m, err := r.mailingRec(ss.EPID); err != nil || m.Title != "Held run" || !m.CustHold {
		t.Fatalf("mailing %+v (%v), want the shared profile's title and hold", m, err)
	}
	bad := func(meta, want string) {
		t.Helper()
		res := r.end(r.session("doc.pdf", pdfPages(1), "m.json", meta))
		if res.Result != "error" || !strings.Contains(strings.Join(res.Errs, "\n"), want) {
			t.Errorf("%s: %+v, want a problem %q", meta, res, want)
		}
	}
	bad(`{"profile":"nosuch",`+letter+`}`, `account ABC12345 has no profile "nosuch"`)
}
