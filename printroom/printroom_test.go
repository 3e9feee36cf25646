package printroom_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/auth"
	"github.com/lodge-mail/lodge/internal/adminsock"
	"github.com/lodge-mail/lodge/internal/testmailroom"
	"github.com/lodge-mail/lodge/pipeline"
	. "github.com/lodge-mail/lodge/printroom"
)

func mustNil(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func letters(n int) []pipeline.Letter {
	ls := make([]pipeline.Letter, n)
	for i := range ls {
		ls[i] = testmailroom.Letter(i, fmt.Sprintf("ref-%d", i), fmt.Sprintf("%04d", 2000+(i*37)%900))
	}
	return ls
}

// fixture is a data directory with a mailroom holding two mailings in
// ready batches (the second of big letters),
// an auth store, and lodge serve's admin socket serving both.
type fixture struct {
	*testmailroom.Fixture
	auth  *auth.Store
	sock  string
	srv   *adminsock.Server
	stop  func() error
	small []string // batches of the small mailing
	big   []string
}

func newFixture(t testing.TB, big int) *fixture {
	t.Helper()
	dir := t.TempDir()
	fx := &fixture{Fixture: testmailroom.New(t, dir, time.Now().Add(-72*time.Hour))}
	fx.small = fx.Produce(t, pipeline.Mailing{EPID: "E1", Account: "ABC12345", Title: "Statements", PurchaseOrder: "PO-1",
		Settings: []byte(`{"title":"Statements"}`), Result: []byte(`{"epid":"E1"}`)}, letters(8))
	fx.big = fx.Produce(t, pipeline.Mailing{EPID: "E2", Account: "ABC12345", Title: "Notices",
		Production: pipeline.Production{Duplex: true, Colour: true, Postage: "priority"}}, letters(big))
	var err error
	fx.auth, err = auth.Open(filepath.Join(dir, "auth"))
	mustNil(t, err)
	t.Cleanup(func() { fx.auth.Close() })
	// As lodge serve does: one socket, the accounts' and the mailroom's
	// operations.
	fx.srv = adminsock.NewServer(adminsock.Config{})
	fx.srv.HandleOps(auth.AdminOps(fx.auth))
	fx.srv.HandleOps(AdminOps(fx.MR))
	fx.sock = adminsock.Path(dir)
	fx.stop, err = fx.srv.Serve(context.Background(), fx.sock)
	mustNil(t, err)
	t.Cleanup(func() { fx.stop() })
	return fx
}

// TestSocket: while the store is held, Open gives the socket's Room (its
// mailings come without their settings and end_session answer, as only
// the socket gives them), which reads what the store holds and marks
// batches; the accounts' operations share the socket.
func TestSocket(t *testing.T) {
	fx := newFixture(t, 1200) // more than two pages of the socket
	if len(fx.small) != 2 || len(fx.big) != 2 {
		t.Fatalf("batches %v and %v, want 2 of each (DL, C4)", fx.small, fx.big)
	}
	r, done, err := Open(fx.DataDir)
	mustNil(t, err)
	defer done()
	direct := Local(fx.MR)

	same := func(what string, got, want any, gerr, werr error) {
		t.Helper()
		mustNil(t, gerr)
		mustNil(t, werr)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s over the socket:\n  %+v\ndirectly:\n  %+v", what, got, want)
		}
	}
	for _, state := range []string{"", pipeline.BatchReady, pipeline.BatchPrinted} {
		got, gerr := r.Batches(state)
		want, werr := direct.Batches(state)
		same("Batches("+state+")", got, want, gerr, werr)
	}
	got, gerr := r.Batch(fx.small[0])
	want, werr := direct.Batch(fx.small[0])
	same("Batch", got, want, gerr, werr)
	gm, gerr := r.Mailing("E1")
	wm, werr := direct.Mailing("E1")
	same("Mailing", gm, wm, gerr, werr)
	if string(gm.Settings) != `{"title":"Statements"}` {
		t.Errorf("Mailing lost its settings: %s", gm.Settings)
	}
	// Mailings: settings and end_session answer left out.
	gms, gerr := r.Mailings("ABC12345", time.Time{}, 0)
	wms, werr := direct.Mailings("ABC12345", time.Time{}, 0)
	if len(wms) != 2 || wms[1].Settings == nil || wms[1].Result == nil {
		t.Fatalf("the store's mailings: %+v", wms)
	}
	for i := range wms {
		wms[i].Settings, wms[i].Result = nil, nil
	}
	same("Mailings", gms, wms, gerr, werr)
	if len(gms) != 2 || gms[0].EPID != "E2" {
		t.Errorf("Mailings: %d, want E2 then E1", len(gms))
	}
	gms, gerr = r.Mailings("ABC12345", time.Time{}, 1)
	wms, werr = direct.Mailings("ABC12345", time.Time{}, 1)
	wms[0].Settings, wms[0].Result = nil, nil
	same("Mailings limit 1", gms, wms, gerr, werr)
	// Letters: 1,200 over the socket in pages of 500; a window of them.
	gl, gerr := r.Letters("E2", 0, 0)
	wl, werr := direct.Letters("E2", 0, 0)
	same("Letters", gl, wl, gerr, werr)
	if len(gl) != 1200 {
		t.Errorf("Letters: %d, want 1200", len(gl))
	}
	gl, gerr = r.Letters("E2", 450, 600)
	wl, werr = direct.Letters("E2", 450, 600)
	same("Letters(450, 600)", gl, wl, gerr, werr)
	if len(gl) != 600 || gl[0].Idx != 450 {
		t.Errorf("Letters(450, 600): %d from %d", len(gl), gl[0].Idx)
	}

	// Not found, over the socket as directly.
	if _, err := r.Batch("nope"); !errors.Is(err, pipeline.ErrNotFound) {
		t.Errorf("Batch(nope): %v", err)
	}
	if _, err := r.Mailing("nope"); !errors.Is(err, pipeline.ErrNotFound) {
		t.Errorf("Mailing(nope): %v", err)
	}
	if _, err := r.Batches("bogus"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Batches(bogus): %v", err)
	}

	// Marks.
	b := fx.small[0]
	at := fx.Now()
	pb, err := r.MarkBatch(b, pipeline.BatchPrinted, at, "alice")
	mustNil(t, err)
	if pb.State != pipeline.BatchPrinted || !pb.Printed.Equal(at) {
		t.Errorf("marked printed: %+v", pb)
	}
	for _, idx := range pb.Letters {
		ls, _ := fx.Store.Letters("E1", idx, 1)
		if l := ls[0]; l.Status != pipeline.Printed || !l.Time(pipeline.Printed).Equal(at) || !strings.Contains(l.Events[len(l.Events)-1].Detail, "by alice") {
			t.Errorf("letter %d after printed: %s %+v", idx, l.Status, l.Events)
		}
	}
	if _, err := r.MarkBatch(b, pipeline.BatchPrinted, at, "alice"); err == nil || !strings.Contains(err.Error(), "already printed") {
		t.Errorf("printed twice: %v", err)
	}
	lodged := at.Add(2 * time.Hour)
	lb, err := r.MarkBatch(b, pipeline.BatchLodged, lodged, "bob")
	mustNil(t, err)
	if lb.State != pipeline.BatchLodged || !lb.Lodged.Equal(lodged) || !lb.Printed.Equal(at) {
		t.Errorf("marked lodged: %+v", lb)
	}
	counts, _ := fx.Store.Counts("E1")
	if counts[pipeline.Lodged] != len(lb.Letters) {
		t.Errorf("counts after lodgement %v, want %d lodged", counts, len(lb.Letters))
	}

	// The accounts' operations answer on the same socket.
	a, adone, err := auth.OpenAdmin(fx.DataDir)
	mustNil(t, err)
	defer adone()
	_, err = a.AddAccount("ABC12345", "Acme")
	mustNil(t, err)
	if _, err := fx.auth.Account("ABC12345"); err != nil {
		t.Errorf("the account added over the shared socket: %v", err)
	}
}

// TestMarkRefused: bad marks change nothing, over the socket and
// directly alike.
func TestMarkRefused(t *testing.T) {
	fx := newFixture(t, 10)
	remote, err := Dial(fx.sock)
	mustNil(t, err)
	b, err := fx.Store.Batch(fx.small[1])
	mustNil(t, err)
	now := time.Now()
	f := func(id, state string, at time.Time, by string, want error, text string) {
		t.Helper()
		for name, r := range map[string]Room{"socket": remote, "direct": Local(fx.MR)} {
			_, err := r.MarkBatch(id, state, at, by)
			if err == nil || want != nil && !errors.Is(err, want) || !strings.Contains(err.Error(), text) {
				t.Errorf("%s: MarkBatch(%q, %q, %v, %q): %v, want %v saying %q", name, id, state, at, by, err, want, text)
			}
		}
	}
	f(b.ID, "done", now, "alice", ErrInvalid, `not "done"`)
	f(b.ID, "ready", now, "alice", ErrInvalid, `not "ready"`)
	f(b.ID, pipeline.BatchPrinted, now.Add(time.Hour), "alice", ErrInvalid, "is in the future")
	f(b.ID, pipeline.BatchLodged, b.Ready.Add(-time.Second), "alice", ErrInvalid, "cannot be lodged before")
	f(b.ID, pipeline.BatchPrinted, now, "", ErrInvalid, "operator's name")
	f(b.ID, pipeline.BatchPrinted, now, "a\x1b[31mb", ErrInvalid, "operator's name")
	f(b.ID, pipeline.BatchPrinted, now, strings.Repeat("x", 65), ErrInvalid, "operator's name")
	f("nope", pipeline.BatchPrinted, now, "alice", pipeline.ErrNotFound, "batch nope: not found")
	after, err := fx.Store.Batch(b.ID)
	mustNil(t, err)
	if !reflect.DeepEqual(after, b) {
		t.Errorf("refused marks changed the batch: %+v", after)
	}
	// Printed, then lodged before printing: refused.
	_, err = remote.MarkBatch(b.ID, pipeline.BatchPrinted, now, "alice")
	mustNil(t, err)
	f(b.ID, pipeline.BatchLodged, now.Add(-time.Minute), "alice", ErrInvalid, "cannot be lodged before")
}

// TestAdminOpsHostile: requests a confused client might send to the
// mailroom's operations get a bad request or invalid answer, and change
// nothing.
func TestAdminOpsHostile(t *testing.T) {
	fx := newFixture(t, 501)
	before, err := fx.Store.Batches("")
	mustNil(t, err)
	id := fx.small[0]
	f := func(line, kind string) {
		t.Helper()
		var resp adminsock.Response
		answer := fx.srv.Call([]byte(line))
		if err := json.Unmarshal(answer, &resp); err != nil {
			t.Fatalf("%s: %q: %v", line, answer, err)
		}
		if kind == "" && !resp.OK || kind != "" && (resp.OK || resp.Kind != kind) {
			t.Errorf("%s: %+v, want kind %q", line, resp, kind)
		}
		if len(answer) > 2000 && !resp.OK {
			t.Errorf("%s: an error of %d bytes", line, len(answer))
		}
	}
	f(`{"op":"mailroom.batch"}`, adminsock.KindBadRequest)
	f(`{"op":"mailroom.batch","args":{}}`, adminsock.KindBadRequest)
	f(`{"op":"mailroom.batch","args":{"id":null}}`, adminsock.KindBadRequest)
	f(`{"op":"mailroom.batch","args":{"id":5}}`, adminsock.KindBadRequest)
	f(`{"op":"mailroom.batch","args":{"id":"x","evil":1}}`, adminsock.KindBadRequest)
	f(`{"op":"mailroom.batch","args":{"id":"../../etc/passwd"}}`, "notfound")
	f(`{"op":"mailroom.batches","args":{"state":"bogus"}}`, "invalid")
	f(`{"op":"mailroom.batches","args":{"state":["ready"]}}`, adminsock.KindBadRequest)
	f(`{"op":"mailroom.mark_batch","args":{"id":"`+id+`"}}`, adminsock.KindBadRequest)
	f(`{"op":"mailroom.mark_batch","args":{"id":"`+id+`","state":"printed","at":"yesterday","by":"x"}}`, adminsock.KindBadRequest)
	f(`{"op":"mailroom.mark_batch","args":{"id":"`+id+`","state":"printed","at":"9999-01-01T00:00:00Z","by":"x"}}`, "invalid")
	f(`{"op":"mailroom.mark_batch","args":{"id":"`+id+`","state":"printed"}}`, "invalid") // no operator
	f(`{"op":"mailroom.mark_batch","args":{"id":"`+id+`","state":"lodged ","by":"x"}}`, "invalid")
	f(`{"op":"mailroom.mailing","args":{"epid":""}}`, "notfound")
	f(`{"op":"mailroom.mailings"}`, adminsock.KindBadRequest)
	f(`{"op":"mailroom.mailings","args":{"account":"ABC12345","limit":"all"}}`, adminsock.KindBadRequest)
	f(`{"op":"mailroom.mailings","args":{"account":"ABC12345","limit":1000000000}}`, "") // capped at a page
	f(`{"op":"mailroom.mailings","args":{"account":"ABC12345","before":"tomorrow"}}`, adminsock.KindBadRequest)
	f(`{"op":"mailroom.letters","args":{"epid":"E1","from":-1}}`, "invalid")
	f(`{"op":"mailroom.letters","args":{"epid":"E1","from":1e20}}`, adminsock.KindBadRequest)
	f(`{"op":"mailroom.letters","args":{"epid":"E2","limit":-5}}`, "")
	f(`{"op":"mailroom.letters","args":{"epid":"E2","from":99999999}}`, "")
	after, err := fx.Store.Batches("")
	mustNil(t, err)
	if !reflect.DeepEqual(after, before) {
		t.Error("hostile requests changed the batches")
	}
	// A page is bounded whatever the limit asked.
	var page []pipeline.Letter
	mustNil(t, (&adminsock.Client{Path: fx.sock}).Call("mailroom.letters", map[string]any{"epid": "E2", "limit": 100000}, &page))
	if len(page) != 500 {
		t.Errorf("letters with limit 100000: %d, want a page of 500", len(page))
	}
}

// TestOpen: the store directly when nobody holds it; the errors that say
// why not otherwise.
func TestOpen(t *testing.T) {
	// No mailroom at all.
	if _, _, err := Open(t.TempDir()); !errors.Is(err, ErrNoMailroom) {
		t.Errorf("Open without a mailroom: %v", err)
	}

	fx := testmailroom.New(t, t.TempDir(), time.Now().Add(-72*time.Hour))
	ids := fx.Produce(t, pipeline.Mailing{EPID: "E1", Account: "ABC12345"}, letters(3))
	dir := fx.DataDir
	sock := adminsock.Path(dir)

	// Held and no socket: the store's error.
	if _, _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Errorf("Open of a held store without socket: %v", err)
	}
	// A stale socket: says it does not answer.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	mustNil(t, err)
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if _, _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "in use by another process") || !strings.Contains(err.Error(), "does not answer") {
		t.Errorf("Open of a held store with a stale socket: %v", err)
	}
	mustNil(t, os.Remove(sock))
	// A lodge serve whose socket has no mailroom operations (auth's only).
	as, err := auth.Open(filepath.Join(dir, "auth"))
	mustNil(t, err)
	defer as.Close()
	stop, err := auth.ServeAdmin(context.Background(), as, sock)
	mustNil(t, err)
	if _, _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "does not serve the mailroom") {
		t.Errorf("Open with an accounts-only socket: %v", err)
	}
	mustNil(t, stop())

	// Nobody holds it: directly, and the marks last.
	mustNil(t, fx.Close())
	r, done, err := Open(dir)
	mustNil(t, err)
	b, err := r.MarkBatch(ids[0], pipeline.BatchLodged, time.Time{}, "carol")
	mustNil(t, err)
	if b.State != pipeline.BatchLodged || time.Since(b.Lodged) > time.Hour || b.Lodged.After(time.Now()) {
		t.Errorf("lodged now: %+v", b)
	}
	mustNil(t, done())
	s, err := pipeline.OpenPebble(filepath.Join(dir, "mailroom"))
	mustNil(t, err)
	defer s.Close()
	if b, err := s.Batch(ids[0]); err != nil || b.State != pipeline.BatchLodged {
		t.Errorf("after reopening: %+v %v", b, err)
	}
}

// TestEachMailing: mailings made in the same nanosecond across pages are
// each seen once, in order.
func TestEachMailing(t *testing.T) {
	s, err := pipeline.OpenPebble(t.TempDir())
	mustNil(t, err)
	defer s.Close()
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	want := map[string]bool{}
	add := func(epid string, at time.Time) {
		mustNil(t, s.Submit(pipeline.Mailing{EPID: epid, Account: "ABC12345", Created: at}, nil, nil))
		want[epid] = true
	}
	for i := range 250 {
		add(fmt.Sprintf("T%03d", i), t0) // 250 in one nanosecond: more than two pages
	}
	for i := range 130 {
		add(fmt.Sprintf("N%03d", i), t0.Add(time.Duration(i+1)*time.Second))
		add(fmt.Sprintf("O%03d", i), t0.Add(-time.Duration(i+1)*time.Second))
	}
	mustNil(t, s.Submit(pipeline.Mailing{EPID: "X1", Account: "XYZ00001", Created: t0}, nil, nil))
	f := func(before time.Time, n int) {
		t.Helper()
		seen := map[string]bool{}
		var last time.Time
		err := EachMailing(s, "ABC12345", before, func(m *pipeline.Mailing) (bool, error) {
			if seen[m.EPID] {
				t.Errorf("%s seen twice", m.EPID)
			}
			if !last.IsZero() && m.Created.After(last) {
				t.Errorf("%s out of order", m.EPID)
			}
			seen[m.EPID], last = true, m.Created
			return true, nil
		})
		mustNil(t, err)
		if len(seen) != n {
			t.Errorf("before %v: saw %d mailings, want %d", before, len(seen), n)
		}
	}
	f(time.Time{}, len(want))
	f(t0.Add(time.Nanosecond), 250+130)
	f(t0, 130)
	// fn stops it.
	n := 0
	mustNil(t, EachMailing(s, "ABC12345", time.Time{}, func(*pipeline.Mailing) (bool, error) { n++; return n < 150, nil }))
	if n != 150 {
		t.Errorf("stopped after %d, want 150", n)
	}
}

// FuzzAdminOps: whatever line reaches the mailroom's operations, the
// answer is one JSON line, ok or an error of a kind the client knows
// (internal only for a mark the batch's state refuses), never a panic.
func FuzzAdminOps(f *testing.F) {
	for _, s := range []string{
		`{"op":"mailroom.batches"}`, `{"op":"mailroom.batches","args":{"state":"ready"}}`,
		`{"op":"mailroom.batch","args":{"id":"20261120-E1-01"}}`, `{"op":"mailroom.batch","args":{"id":5}}`,
		`{"op":"mailroom.mark_batch","args":{"id":"20261120-E1-01","state":"printed","by":"x"}}`,
		`{"op":"mailroom.mark_batch","args":{"id":"20261120-E1-02","state":"lodged","at":"2000-01-01T00:00:00Z","by":"x"}}`,
		`{"op":"mailroom.mailing","args":{"epid":"E1"}}`, `{"op":"mailroom.mailings","args":{"account":"ABC12345","limit":-1}}`,
		`{"op":"mailroom.mailings","args":{"account":"ABC12345","before":"2026-11-01T00:00:00Z","limit":2}}`,
		`{"op":"mailroom.letters","args":{"epid":"E2","from":3,"limit":2}}`, `{"op":"mailroom.letters","args":{"epid":"E2","from":-9}}`,
		`{"op":"mailroom.letters","args":{"epid":"E2","from":9223372036854775807,"limit":9223372036854775807}}`,
	} {
		f.Add([]byte(s))
	}
	fx := newFixture(f, 5)
	known := map[string]bool{"": true, adminsock.KindBadRequest: true, adminsock.KindInternal: true, "invalid": true, "notfound": true}
	f.Fuzz(func(t *testing.T, line []byte) {
		answer := fx.srv.Call(line)
		var resp adminsock.Response
		if err := json.Unmarshal(answer, &resp); err != nil || bytes.IndexByte(answer, '\n') != len(answer)-1 {
			t.Fatalf("%q: answer %q: %v", line, answer, err)
		}
		if resp.OK == (resp.Kind != "") || !known[resp.Kind] || strings.Contains(resp.Error, "panic") {
			t.Fatalf("%q: answer %+v", line, resp)
		}
	})
}
