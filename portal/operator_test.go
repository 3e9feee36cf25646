package portal_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/auth"
	"github.com/lodge-mail/lodge/billing"
	"github.com/lodge-mail/lodge/blob"
	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/internal/tests3"
	"github.com/lodge-mail/lodge/pipeline"
	"github.com/lodge-mail/lodge/portal"
	"github.com/lodge-mail/lodge/printroom"
	"github.com/lodge-mail/lodge/production"
)

const opPass = "the operator's password"

// printFixture is lodge's server with the portal over a mailroom that
// produces for real (package production: the documents inspected, the
// batches composed into a hot folder), and three users: jo (ABC00001)
// and eve (ABC00002), customers, and op (OPS00001), an operator.
// Mailings, each of postal letters of one page:
//
//	JOPO1 (ABC00001, purchase order PO-JO-1): 2 letters
//	JOPO2 (ABC00001, purchase order PO-JO-2): 1 letter
//	EVEPO (ABC00002, purchase order PO-EVE-<script>): 1 letter
//
// The mailroom's clock starts three hours back and moves past the
// cancellation window, so the batches are ready (released "an hour ago")
// and can be marked at the real time now, as printroom wants.
type printFixture struct {
	*fixture
	store  *auth.Store
	prices *billing.Prices
	// batch of each mailing
	batch map[string]pipeline.Batch
}

func newPrintFixture(t *testing.T) *printFixture { return newPrintFixtureWith(t, nil, 0) }

// newPrintFixtureWith is newPrintFixture with production's object store
// blobs and presigned URLs of presign (nil, 0: none), which the portal
// reads batches through (production.Producer.Batches).
func newPrintFixtureWith(t *testing.T, blobs blob.Store, presign time.Duration) *printFixture {
	t.Helper()
	ix, eng := testEngine(t)
	dir := t.TempDir()
	store, authn := testUsers(t, dir, [3]string{"ABC00001", "jo", joPass}, [3]string{"ABC00002", "eve", evePass}, [3]string{"OPS00001", "op", opPass})
	if err := store.SetRole("op", auth.RoleOperator); err != nil {
		t.Fatal(err)
	}

	prices := &billing.Prices{Dir: dir}
	prod, err := production.New(production.Config{DataDir: dir, Prices: prices, Blobs: blobs, PresignExpiry: presign}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := pipeline.OpenPebble(filepath.Join(dir, "mailroom"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := &clock{now: time.Now().Add(-3 * time.Hour)}
	mr := pipeline.New(st, prod, pipeline.Config{Now: c.Now, CancelWindow: time.Hour,
		CheckAddress: checkAddress(eng)}, slog.New(slog.DiscardHandler))
	docs := t.TempDir()
	submit := func(epid, account, po string, letters int) {
		t.Helper()
		m := pipeline.Mailing{EPID: epid, Account: account, PurchaseOrder: po, Title: "Mailing " + epid, Letters: letters}
		var ls []pipeline.Letter
		for i := range letters {
			addr := mailpdf.Address(i)
			name := fmt.Sprintf("%s-%d.pdf", epid, i)
			path := filepath.Join(docs, name)
			fh, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := mailpdf.Pages(fh, mailpdf.Page{Address: addr, Text: "Dear customer"}); err != nil {
				t.Fatal(err)
			}
			fh.Close()
			m.Files = append(m.Files, pipeline.File{Name: name, Kind: "pdf", Path: path, Pages: 1})
			v := eng.Check(addr, false)
			ls = append(ls, pipeline.Letter{Idx: i, Reference: fmt.Sprintf("%s-ref-%d", epid, i), Channels: []string{"postal"}, Postal: addr,
				Address:   &pipeline.Verdict{Status: v.Status.String(), Nation: v.Nation, Message: v.Message},
				Documents: []pipeline.DocPart{{File: name, PageEnd: -1}}})
		}
		if err := mr.Submit(m, ls); err != nil {
			t.Fatal(err)
		}
	}
	submit("JOPO1", "ABC00001", "PO-JO-1", 2)
	submit("JOPO2", "ABC00001", "PO-JO-2", 1)
	submit("EVEPO", "ABC00002", "PO-EVE-<script>", 1)
	c.advance(2 * time.Hour)
	for {
		n, err := mr.RunDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	f := &printFixture{store: store, prices: prices, batch: map[string]pipeline.Batch{}}
	bs, err := st.Batches(pipeline.BatchReady)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		f.batch[b.EPID] = b
	}
	if len(bs) != 3 || len(f.batch) != 3 {
		for _, epid := range []string{"JOPO1", "JOPO2", "EVEPO"} {
			ls, _ := st.Letters(epid, 0, 0)
			for _, l := range ls {
				t.Logf("%s/%d: %s %s %s", epid, l.Idx, l.Status, l.Hold, l.HoldReason)
			}
		}
		t.Fatalf("%d ready batches, want one per mailing: %+v", len(bs), bs)
	}

	pcfg := portal.Config{Mailroom: mr, Prices: prices}
	if blobs != nil {
		pcfg.Batches = prod.Batches()
	}
	f.fixture = &fixture{t: t, url: servePortal(t, dir, ix, eng, authn, pcfg), mr: mr, clock: c}
	return f
}

func (f *printFixture) statuses(epid string) string {
	f.t.Helper()
	ls, err := f.mr.Store().Letters(epid, 0, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, l := range ls {
		out = append(out, l.Status)
	}
	return strings.Join(out, ",")
}

// operatorPaths are the operator view's pages and actions.
func operatorPaths(b pipeline.Batch) (gets, posts []string) {
	return []string{"/portal/operator", "/portal/operator/", "/portal/operator/batches", "/portal/operator/batches?state=ready",
			"/portal/operator/batches/" + b.ID, "/portal/operator/batches/" + b.ID + "/batch.pdf", "/portal/operator/nothing"},
		[]string{"/portal/operator/batches/" + b.ID + "/printed", "/portal/operator/batches/" + b.ID + "/lodged"}
}

// TestOperatorNotFoundForCustomers: to a customer's user every operator
// path answers 404, the page of a path that does not exist, and changes
// nothing; the nav has no link to it. Signed out, the paths lead to the
// sign-in form.
func TestOperatorNotFoundForCustomers(t *testing.T) {
	f := newPrintFixture(t)
	b := f.browser()
	b.signIn("jo", joPass).expect(200, "JOPO1")
	if strings.Contains(b.body, "/portal/operator") {
		t.Fatal("a customer's nav links to the operator view")
	}
	csrf := b.csrf()
	gets, posts := operatorPaths(f.batch["JOPO1"])
	for _, p := range gets {
		b.get(p).expect(404, "There is no such page")
		if strings.Contains(b.body, f.batch["JOPO1"].ID) || strings.Contains(b.body, "EVEPO") {
			t.Fatalf("%s shows a batch to a customer: %s", p, b.body)
		}
	}
	for _, p := range posts {
		b.post(p, url.Values{"csrf": {csrf}}).expect(404, "There is no such page")
	}
	if got := f.statuses("JOPO1"); got != "Processing,Processing" {
		t.Fatalf("a customer's POST changed the letters: %s", got)
	}
	anon := f.browser()
	anon.get("/portal/operator/batches").expect(200, "Sign in")
}

// TestOperatorBatches: an operator sees every account's batches, filters
// them by state, opens one (its letters, its print PDF), and marks it
// printed and then lodged with the same effect as lodge print done and
// lodged (printroom's MarkBatch: the batch's state and times, the
// letters' statuses and events); marks out of order, of unknown batches
// and without the CSRF token are refused and change nothing.
func TestOperatorBatches(t *testing.T) {
	f := newPrintFixture(t)
	b := f.browser()
	b.signIn("op", opPass).expect(200, `href="/portal/operator/batches"`, "Print room")
	b.get("/portal/operator/batches").expect(200, f.batch["JOPO1"].ID, f.batch["JOPO2"].ID, f.batch["EVEPO"].ID, "ABC00001", "ABC00002")
	b.get("/portal/operator/batches?state=printed").expect(200, "No print batches printed")
	b.get("/portal/operator/batches?state=bogus").expect(400, "no batch state")

	jb := f.batch["JOPO1"]
	page := "/portal/operator/batches/" + jb.ID
	b.get(page).expect(200, "JOPO1-ref-0", "JOPO1-ref-1", "PO-JO-1", "ABC00001", "Mark printed", "Mark lodged", "Download print PDF")
	b.get(page+"/batch.pdf").expect(200, "%PDF-")
	if ct := b.header.Get("Content-Type"); ct != "application/pdf" {
		t.Fatalf("print PDF served as %q", ct)
	}
	want, err := os.ReadFile(filepath.Join(jb.Dir, production.BatchPDF))
	if err != nil || b.body != string(want) {
		t.Fatalf("the PDF served is not the batch's print file (%v)", err)
	}
	b.get("/portal/operator/batches/no-such-batch").expect(404)
	b.get(page)
	csrf := b.csrf()

	// refused: no token, a wrong one, an unknown batch, lodged before...
	b.post(page+"/printed", url.Values{}).expect(403)
	b.post(page+"/printed", url.Values{"csrf": {"x" + csrf}}).expect(403)
	b.post("/portal/operator/batches/no-such-batch/printed", url.Values{"csrf": {csrf}}).expect(404)
	if got := f.statuses("JOPO1"); got != "Processing,Processing" {
		t.Fatalf("refused marks changed the letters: %s", got)
	}

	b.post(page+"/printed", url.Values{"csrf": {csrf}}).expect(200, "marked printed", "Printed")
	got, err := f.mr.Store().Batch(jb.ID)
	if err != nil || got.State != pipeline.BatchPrinted || got.Printed.IsZero() {
		t.Fatalf("after mark printed: %+v %v", got, err)
	}
	if s := f.statuses("JOPO1"); s != "Printed,Printed" {
		t.Fatalf("letters after mark printed: %s", s)
	}
	ls, _ := f.mr.Store().Letters("JOPO1", 0, 1)
	if ev := ls[0].Events[len(ls[0].Events)-1]; ev.Event != pipeline.Printed || ev.Detail != "batch "+jb.ID+", by op" {
		t.Fatalf("the letter's last event: %+v", ev)
	}
	// printed twice: the mailroom's refusal, shown
	b.post(page+"/printed", url.Values{"csrf": {csrf}}).expect(409, "already printed")
	b.post(page+"/lodged", url.Values{"csrf": {csrf}}).expect(200, "marked lodged", "Lodged")
	if s := f.statuses("JOPO1"); s != "Lodged,Lodged" {
		t.Fatalf("letters after mark lodged: %s", s)
	}
	b.post(page+"/lodged", url.Values{"csrf": {csrf}}).expect(409, "already lodged")
	b.post(page+"/printed", url.Values{"csrf": {csrf}}).expect(409, "is lodged")
	if strings.Contains(b.body, "Mark printed") {
		t.Fatal("a lodged batch offers to be marked printed")
	}
	b.get("/portal/operator/batches?state=lodged").expect(200, jb.ID)
	if strings.Contains(b.body, f.batch["EVEPO"].ID) {
		t.Fatal("the lodged filter lists a ready batch")
	}
	// the other batches are as they were
	if s := f.statuses("EVEPO"); s != "Processing" {
		t.Fatalf("another batch's letters: %s", s)
	}

	// The same marks through printroom (lodge print's way) end in the
	// same records: mark EVEPO's batch with the CLI's Room and compare.
	eb := f.batch["EVEPO"]
	room := printroom.Local(f.mr)
	if _, err := room.MarkBatch(eb.ID, pipeline.BatchPrinted, time.Time{}, "op"); err != nil {
		t.Fatal(err)
	}
	if _, err := room.MarkBatch(eb.ID, pipeline.BatchLodged, time.Time{}, "op"); err != nil {
		t.Fatal(err)
	}
	cli, _ := f.mr.Store().Letters("EVEPO", 0, 1)
	web, _ := f.mr.Store().Letters("JOPO1", 0, 1)
	if evs(cli[0], eb.ID) != evs(web[0], jb.ID) {
		t.Fatalf("the portal's marks left\n  %s\nprintroom's\n  %s", evs(web[0], jb.ID), evs(cli[0], eb.ID))
	}
}

// evs are a letter's events after Released, with its batch's id taken
// out (the times differ).
func evs(l pipeline.Letter, batch string) string {
	var out []string
	for _, e := range l.Events {
		d := strings.ReplaceAll(e.Detail, batch, "B")
		if i := strings.Index(d, "postal service at "); i >= 0 {
			d = d[:i] + "postal service at T" + d[strings.Index(d[i:], ",")+i:]
		}
		out = append(out, e.Event+": "+d)
	}
	return strings.Join(out, "; ")
}

// TestOperatorBatchPDFShared: with production's object store, the
// operator view reads a batch's print file from the store, so that a
// node other than the one that composed it (whose hot folder has no such
// folder) serves it: through lodge by default, or by a redirect to a
// presigned URL of the store (production's PresignExpiry), which gives
// the same bytes and only for a while; a customer gets neither.
func TestOperatorBatchPDFShared(t *testing.T) {
	local, err := blob.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := func(name string, blobs blob.Store, presign time.Duration) {
		t.Run(name, func(t *testing.T) {
			f := newPrintFixtureWith(t, blobs, presign)
			jb := f.batch["JOPO1"]
			r, _, err := blobs.Open(context.Background(), production.BatchKey(jb.ID, production.BatchPDF))
			if err != nil {
				t.Fatal(err)
			}
			want, err := io.ReadAll(r)
			r.Close()
			if err != nil || !strings.HasPrefix(string(want), "%PDF-") {
				t.Fatalf("the store's batch PDF: %v", err)
			}
			if err := os.RemoveAll(jb.Dir); err != nil { // composed on another node
				t.Fatal(err)
			}
			page := "/portal/operator/batches/" + jb.ID

			jo := f.browser()
			jo.signIn("jo", joPass)
			jo.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			jo.get(page + "/batch.pdf").expect(404)

			b := f.browser()
			b.signIn("op", opPass)
			b.get(page).expect(200, "Download print PDF")
			b.c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			b.get(page + "/batch.pdf")
			if presign == 0 {
				b.expect(200, "%PDF-")
				if b.body != string(want) || b.header.Get("Content-Type") != "application/pdf" {
					t.Fatalf("served %d bytes as %q, not the store's batch PDF", len(b.body), b.header.Get("Content-Type"))
				}
				return
			}
			b.expect(303)
			loc := b.header.Get("Location")
			u, err := url.Parse(loc)
			if err != nil || u.Query().Get("X-Amz-Expires") != "300" || !strings.Contains(u.Path, production.BatchKey(jb.ID, production.BatchPDF)) {
				t.Fatalf("redirected to %q (%v), want a presigned URL of the batch PDF valid 300 s", loc, err)
			}
			resp, err := (&http.Client{Transport: tests3.Shared(t).Transport()}).Get(loc)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 || string(got) != string(want) {
				t.Fatalf("the presigned URL gave %d, %d bytes (%v), not the batch PDF", resp.StatusCode, len(got), err)
			}
			if cd := resp.Header.Get("Content-Disposition"); !strings.Contains(cd, jb.ID+".pdf") {
				t.Errorf("the presigned download is named %q", cd)
			}
		})
	}
	f("local store, served by lodge", local, 0)
	f("s3, served by lodge", newS3(t), 0)
	f("s3, presigned", newS3(t), 5*time.Minute)
}

// newS3 is an S3 store of a bucket of its own on the test server.
func newS3(t *testing.T) blob.Store {
	t.Helper()
	srv := tests3.Shared(t)
	s, err := blob.NewS3(context.Background(), blob.S3Config{Bucket: tests3.NewBucket(t), Endpoint: srv.Endpoint(),
		AccessKey: srv.AccessKey(), SecretKey: srv.SecretKey(), CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
