package upload_test

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/testdoc"
	"github.com/lodge-mail/lodge/internal/testref"
	"github.com/lodge-mail/lodge/library"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/upload"
	"github.com/lodge-mail/lodge/upload/inspect"
)

// libRig is the upload store and Lodger with the real documents library
// and mailroom, as lodge serve wires them.
type libRig struct {
	t    *testing.T
	s    *upload.Store
	ms   *pipeline.PebbleStore
	lib  *library.Library
	l    *upload.Lodger
	fail error // when set, the next Submit fails with it (a crash before the mailroom had the mailing)
}

// failingMailroom is the real mailroom whose next Submit can be made to
// fail, as a crash before the mailroom's commit leaves things.
type failingMailroom struct {
	*pipeline.Mailroom
	r *libRig
}

func (m failingMailroom) Submit(mm pipeline.Mailing, ls []pipeline.Letter) error {
	if err := m.r.fail; err != nil {
		m.r.fail = nil
		return err
	}
	return m.Mailroom.Submit(mm, ls)
}

func newLibRig(t *testing.T) *libRig {
	t.Helper()
	e, err := engine.New(testref.Index(t).Ref, engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	dir := t.TempDir()
	ms, err := pipeline.OpenPebble(filepath.Join(dir, "mailroom"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ms.Close() })
	s, err := upload.Open(filepath.Join(dir, "upload"), upload.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	lib, err := library.Open(filepath.Join(dir, "library"), library.Options{InProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	r := &libRig{t: t, s: s, ms: ms, lib: lib}
	mr := failingMailroom{pipeline.New(ms, nil, pipeline.Config{}, log), r}
	r.l = upload.NewLodger(s, e, mr, upload.LodgerConfig{InProcess: true, Host: "test", Library: lib}, log)
	return r
}

// libPut stores a document in an account's library.
func (r *libRig) libPut(account, name string, body []byte) library.Document {
	r.t.Helper()
	d, err := r.lib.Put(account, "jo", name, int64(len(body)), bytes.NewReader(body))
	if err != nil {
		r.t.Fatalf("library put %s %s: %v", account, name, err)
	}
	return d
}

// end opens a session of ABC12345, uploads files (name, content, ...)
// and ends it.
func (r *libRig) end(files ...string) (upload.Session, upload.EndResult, error) {
	r.t.Helper()
	ss, err := r.s.CreateSession("ABC12345", "clerk")
	if err != nil {
		r.t.Fatal(err)
	}
	for i := 0; i+1 < len(files); i += 2 {
		name, body := files[i], files[i+1]
		if _, err := r.s.PutFile(ss, "clerk", name, int64(len(body)), strings.NewReader(body), func(head []byte) (string, error) {
			k, err := inspect.CheckType(name, head)
			return string(k), err
		}); err != nil {
			r.t.Fatal(err)
		}
	}
	res, err := r.again(ss)
	return ss, res, err
}

// again ends a session (again) with the files it has now.
func (r *libRig) again(ss upload.Session) (upload.EndResult, error) {
	r.t.Helper()
	ss, err := r.s.Session(ss.EPID)
	if err != nil {
		r.t.Fatal(err)
	}
	fs, err := r.s.Files(ss.EPID)
	if err != nil {
		r.t.Fatal(err)
	}
	return r.l.End(ss, fs)
}

// mailingFile is the mailroom's record of a mailing's file, and its bytes.
func (r *libRig) mailingFile(epid, name string) (pipeline.File, []byte) {
	r.t.Helper()
	m, err := r.ms.Mailing(epid)
	if err != nil {
		r.t.Fatalf("mailing %s: %v", epid, err)
	}
	for _, f := range m.Files {
		if f.Name == name {
			b, err := os.ReadFile(f.Path)
			if err != nil {
				r.t.Fatal(err)
			}
			return f, b
		}
	}
	r.t.Fatalf("mailing %s has no file %q: %+v", epid, name, m.Files)
	return pipeline.File{}, nil
}

func sha1Hex(b []byte) string { s := sha1.Sum(b); return hex.EncodeToString(s[:]) }

const melbourne = `{"postal":["Joe Blogs","10 Jones St","Melbourne VIC 3000"]`

// TestPortalDocumentNamed: metadata naming a document of the account's
// library (none uploaded in the session) is accepted, its letters use it
// with its page count, and the mailing keeps its own copy: deleting or
// replacing the library document later changes nothing of the mailing.
func TestPortalDocumentNamed(t *testing.T) {
	r := newLibRig(t)
	three := testdoc.PDF(3, 0)
	r.libPut("ABC12345", "terms.pdf", three)
	ss, res, err := r.end("m.json", `{"letters":[`+melbourne+`,"file_name":"terms.pdf","page_start":1,"page_end":2}]}`)
	if err != nil || res.Result != "ok" {
		t.Fatalf("end_session: %+v, %v", res, err)
	}
	var listed bool
	for _, f := range res.Files {
		if f.Name == "terms.pdf" {
			listed = f.APath == "portal!terms.pdf" && f.Intent == upload.IntentDocument && f.SHA1 == sha1Hex(three)
		}
	}
	if !listed {
		t.Errorf("end_session's files do not list the portal document as used: %+v", res.Files)
	}
	f, b := r.mailingFile(ss.EPID, "terms.pdf")
	if f.Pages != 3 || f.Kind != "pdf" || !bytes.Equal(b, three) {
		t.Fatalf("the mailing's terms.pdf: %+v, %d bytes", f, len(b))
	}
	ls, err := r.ms.Letters(ss.EPID, 0, 0)
	if err != nil || len(ls) != 1 || len(ls[0].Documents) != 1 || ls[0].Documents[0] != (pipeline.DocPart{File: "terms.pdf", PageStart: 1, PageEnd: 2}) {
		t.Fatalf("letters %+v, %v", ls, err)
	}
	// the customer replaces, then deletes, the library's document
	r.libPut("ABC12345", "terms.pdf", testdoc.PDF(1, 0))
	if err := r.lib.Delete("ABC12345", "terms.pdf"); err != nil {
		t.Fatal(err)
	}
	if _, b := r.mailingFile(ss.EPID, "terms.pdf"); !bytes.Equal(b, three) {
		t.Fatal("the mailing's document changed with the library's")
	}
	// and a later mailing naming it no longer finds it
	if _, res, err := r.end("m.json", `{"letters":[`+melbourne+`,"file_name":"terms.pdf"}]}`); err != nil || res.Result != "error" || !strings.Contains(res.Error, `no document "terms.pdf"`) {
		t.Fatalf("a deleted library document named: %+v, %v", res, err)
	}
}

// TestPortalDocumentHostile: a name both uploaded in the session and in
// the library is the session's file; another account's library document
// is not found; a page range past the library document's pages is
// refused; a rejected end_session copies nothing.
func TestPortalDocumentHostile(t *testing.T) {
	r := newLibRig(t)
	r.libPut("ABC12345", "both.pdf", testdoc.PDF(3, 0))
	r.libPut("XYZ99999", "eve.pdf", testdoc.PDF(1, 0))
	r.libPut("ABC12345", "two.pdf", testdoc.PDF(2, 0))

	// session wins: its one-page both.pdf, not the library's three pages
	session := testdoc.PDF(1, 7)
	ss, res, err := r.end("both.pdf", string(session), "m.json", `{"letters":[`+melbourne+`,"file_name":"both.pdf"}]}`)
	if err != nil || res.Result != "ok" {
		t.Fatalf("end_session: %+v, %v", res, err)
	}
	if f, b := r.mailingFile(ss.EPID, "both.pdf"); f.Pages != 1 || !bytes.Equal(b, session) {
		t.Fatalf("both.pdf is not the session's: %+v", f)
	}
	if len(res.Files) != 2 {
		t.Fatalf("files %+v", res.Files)
	}
	_, res, err = r.end("both.pdf", string(session), "m.json", `{"letters":[`+melbourne+`,"file_name":"both.pdf","page_start":3,"page_end":3}]}`)
	if err != nil || res.Result != "error" {
		t.Fatalf("page 3 of the session's one-page both.pdf: %+v, %v", res, err)
	}

	// another account's document: not found, as if it did not exist
	_, res, err = r.end("m.json", `{"letters":[`+melbourne+`,"file_name":"eve.pdf"}]}`)
	if err != nil || res.Result != "error" || !strings.Contains(res.Error, `no document "eve.pdf"`) {
		t.Fatalf("another account's library document: %+v, %v", res, err)
	}

	// pages past the library document's end; nothing copied when refused
	ss, res, err = r.end("m.json", `{"letters":[`+melbourne+`,"file_name":"two.pdf","page_start":3}]}`)
	if err != nil || res.Result != "error" {
		t.Fatalf("page 3 of a two-page library document: %+v, %v", res, err)
	}
	if fs, _ := r.s.Files(ss.EPID); len(fs) != 1 || len(res.Files) != 1 {
		t.Fatalf("a refused mailing copied files: %+v", fs)
	}

	// as an attachment and a background too
	_, res, err = r.end("letter.pdf", string(testdoc.PDF(1, 0)), "m.json",
		`{"attachments":["two.pdf"],"production_options":{"background":"both.pdf"},"letters":[`+melbourne+`,"files":[{"file_name":"letter.pdf"},{"file_name":"two.pdf"}]}]}`)
	if err != nil || res.Result != "ok" {
		t.Fatalf("library attachment and background: %+v, %v", res, err)
	}
	intents := map[string]int{}
	for _, f := range res.Files {
		intents[f.APath] = f.Intent
	}
	if intents["portal!two.pdf"] != upload.IntentAttachment || intents["portal!both.pdf"] != upload.IntentAttachment || intents["letter.pdf"] != upload.IntentDocument {
		t.Fatalf("intents %v", intents)
	}
}

// TestPortalDocumentCopyInterrupted: an end_session that copied a library
// document but stopped before the mailroom had the mailing leaves a copy
// in the session; the next end_session drops it and copies the document
// as the library has it then.
func TestPortalDocumentCopyInterrupted(t *testing.T) {
	r := newLibRig(t)
	r.libPut("ABC12345", "terms.pdf", testdoc.PDF(3, 0))
	r.fail = errors.New("killed")
	ss, _, err := r.end("m.json", `{"letters":[`+melbourne+`,"file_name":"terms.pdf"}]}`)
	if err == nil {
		t.Fatal("Submit's failure not reported")
	}
	if fs, _ := r.s.Files(ss.EPID); len(fs) != 2 {
		t.Fatalf("the interrupted copy is not in the session: %+v", fs)
	}
	now := testdoc.PDF(2, 0)
	r.libPut("ABC12345", "terms.pdf", now)
	if res, err := r.again(ss); err != nil || res.Result != "ok" {
		t.Fatalf("end_session again: %+v, %v", res, err)
	}
	if f, b := r.mailingFile(ss.EPID, "terms.pdf"); f.Pages != 2 || !bytes.Equal(b, now) {
		t.Fatalf("the mailing's terms.pdf is the interrupted copy: %+v", f)
	}
	if fs, _ := r.s.Files(ss.EPID); len(fs) != 2 {
		t.Fatalf("files %+v", fs)
	}
}
