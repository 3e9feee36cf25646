package library_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/testdoc"
	"github.com/lodge-mail/lodge/internal/testpg"
	"github.com/lodge-mail/lodge/internal/testref"
	"github.com/lodge-mail/lodge/library"
	"github.com/lodge-mail/lodge/pgdb"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/upload"
	"github.com/lodge-mail/lodge/upload/inspect"
)

// TestEndSessionOnAnotherNode: a document uploaded to the library on
// node A is named by a mailing whose session ends on node B: B's
// end_session finds it in the shared library, checks the mailing with its
// pages and copies it into the mailing; A's later replacing it changes
// nothing of the mailing.
func TestEndSessionOnAnotherNode(t *testing.T) {
	url := testpg.NewDatabase(t)
	blobRoot, dir := t.TempDir(), t.TempDir()
	node := func() *library.Library {
		db, err := pgdb.Open(context.Background(), pgdb.Config{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		bs, err := blob.NewLocal(blobRoot)
		if err != nil {
			t.Fatal(err)
		}
		l, err := library.OpenShared(db, bs, library.Options{InProcess: true, TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	a, b := node(), node()
	three := testdoc.PDF(3, 0)
	if _, err := a.Put("ABC12345", "jo", "terms.pdf", int64(len(three)), bytes.NewReader(three)); err != nil {
		t.Fatal(err)
	}

	// node B's upload side, with B's library
	e, err := engine.New(testref.Index(t).Ref, engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
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
	log := slog.New(slog.DiscardHandler)
	lodger := upload.NewLodger(s, e, pipeline.New(ms, nil, pipeline.Config{}, log), upload.LodgerConfig{InProcess: true, Host: "test", Library: b}, log)

	ss, err := s.CreateSession("ABC12345", "clerk")
	if err != nil {
		t.Fatal(err)
	}
	meta := `{"letters":[{"postal":["Joe Blogs","10 Jones St","Melbourne VIC 3000"],"file_name":"terms.pdf","page_start":0,"page_end":2}]}`
	if _, err := s.PutFile(ss, "clerk", "m.json", int64(len(meta)), strings.NewReader(meta), func(head []byte) (string, error) {
		k, err := inspect.CheckType("m.json", head)
		return string(k), err
	}); err != nil {
		t.Fatal(err)
	}
	files, err := s.Files(ss.EPID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := lodger.End(ss, files)
	if err != nil || res.Result != "ok" {
		t.Fatalf("end_session on B: %+v %v", res, err)
	}
	mailingFile := func() (pipeline.File, []byte) {
		t.Helper()
		m, err := ms.Mailing(ss.EPID)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m.Files {
			if f.Name == "terms.pdf" {
				b, err := os.ReadFile(f.Path)
				if err != nil {
					t.Fatal(err)
				}
				return f, b
			}
		}
		t.Fatalf("the mailing has no terms.pdf: %+v", m.Files)
		return pipeline.File{}, nil
	}
	if f, got := mailingFile(); f.Pages != 3 || !bytes.Equal(got, three) {
		t.Fatalf("the mailing's terms.pdf: %+v, %d bytes", f, len(got))
	}
	if _, err := a.Put("ABC12345", "jo", "terms.pdf", -1, bytes.NewReader(testdoc.PDF(1, 0))); err != nil {
		t.Fatal(err)
	}
	if _, got := mailingFile(); !bytes.Equal(got, three) {
		t.Fatal("the mailing's document changed with the library's")
	}
}
