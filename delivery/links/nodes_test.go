package links_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/delivery"
	"github.com/lodge-mail/lodge/delivery/links"
	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/production"
)

// TestLinksAcrossNodes: two nodes (each its own producer and work folder,
// the handler lodge serves with delivery.LinkStore) share the mailroom's
// records, the links key and an object store that alone holds the
// documents. A link to a password-protected letter opened on node A
// makes its PDF there; once the send is done (the password no longer
// kept) node B serves the same bytes for a link A signed; after the
// letters' PDFs are removed on B, A answers 404.
func TestLinksAcrossNodes(t *testing.T) {
	dir := t.TempDir()
	st, err := pipeline.OpenPebble(filepath.Join(dir, "mailroom"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	blobs, err := blob.NewLocal(filepath.Join(dir, "objects"))
	if err != nil {
		t.Fatal(err)
	}
	var doc bytes.Buffer
	if err := mailpdf.Pages(&doc, mailpdf.Page{Text: "A protected letter"}); err != nil {
		t.Fatal(err)
	}
	const key = "blobs/" + epid + "/letter.pdf"
	if _, err := blobs.Put(context.Background(), key, bytes.NewReader(doc.Bytes()), int64(doc.Len())); err != nil {
		t.Fatal(err)
	}
	c := &clock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	cfg := pipeline.Config{Now: c.Now, Channels: []string{"postal", "email"}}
	mr := pipeline.New(st, nil, cfg, nil)
	m := pipeline.Mailing{EPID: epid, Account: "ABC12345",
		Files: []pipeline.File{{Name: "letter.pdf", Kind: "pdf", Path: filepath.Join(dir, "on-another-node.pdf"), Blob: key, Pages: 1}}}
	if err := mr.Submit(m, []pipeline.Letter{{Idx: 0, Channels: []string{"email"}, Email: "jo@example.com",
		Documents: []pipeline.DocPart{{File: "letter.pdf", PageEnd: -1}}, CustomData: map[string]string{"password": "s3cret pw"}}}); err != nil {
		t.Fatal(err)
	}
	linkKey, err := links.LoadOrCreateKey(filepath.Join(dir, "links.key"))
	if err != nil {
		t.Fatal(err)
	}
	node := func() (*production.Producer, string) {
		prod, err := production.New(production.Config{DataDir: t.TempDir(), Blobs: blobs}, nil)
		if err != nil {
			t.Fatal(err)
		}
		h, err := links.New(links.Config{Key: linkKey, Now: c.Now, Log: slog.New(slog.DiscardHandler),
			Store: delivery.LinkStore{Mailroom: pipeline.New(st, nil, cfg, nil), PDF: prod.LetterPDF, Existing: prod.ExistingLetterPDF,
				DocumentError: production.DocumentError}})
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &fasthttp.Server{Handler: h.Serve}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Shutdown() })
		return prod, "http://" + ln.Addr().String()
	}
	_, a := node()
	b, bURL := node()
	link := "/l/" + links.Sign(linkKey, epid, 0, links.KindDoc, c.Now().Add(time.Hour))
	get := func(base string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(base + link)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, body
	}

	status, made := get(a)
	if status != 200 || !bytes.HasPrefix(made, []byte("%PDF-")) || !bytes.Contains(made, []byte("/Encrypt")) {
		t.Fatalf("node A: %d, %d bytes: want the encrypted PDF", status, len(made))
	}
	// the send is done: the record keeps the password no more
	if err := st.Update([]string{epid}, func(tx pipeline.Tx) error {
		l, err := tx.Letter(epid, 0)
		if err != nil {
			return err
		}
		l.Send = &pipeline.Send{Channel: "email", Started: c.Now(), Done: c.Now()}
		delete(l.CustomData, "password")
		tx.PutLetter(l)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if status, body := get(bURL); status != 200 || !bytes.Equal(body, made) {
		t.Fatalf("node B: %d, %d bytes: not the PDF node A made (%d bytes)", status, len(body), len(made))
	}
	if err := b.RemoveLetterPDFs(epid); err != nil {
		t.Fatal(err)
	}
	if status, body := get(a); status != 404 {
		t.Fatalf("node A after the PDFs were removed on B: %d %q", status, body)
	}
	if _, err := os.Stat(filepath.Join(blobs.Root(), "letters", epid, "0.pdf")); !os.IsNotExist(err) {
		t.Fatalf("the letter's object after RemoveLetterPDFs: %v", err)
	}
}
