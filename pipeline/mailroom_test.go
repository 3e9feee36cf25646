package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// folderProducer is a small Producer for the stage tests: two pages and
// one sheet a letter, a hold for a letter whose first postal line says
// "WRONG WINDOW", and a batch written as a text file listing its letters
// into a folder. Production proper is tested in package production.
type folderProducer struct {
	dir      string
	mu       sync.Mutex
	composed map[string]int // batch → times written
	failNext int
}

func (p *folderProducer) Inspect(ctx context.Context, m *Mailing, letters []*Letter) error {
	for _, l := range letters {
		if len(l.Postal) > 0 && l.Postal[0] == "WRONG WINDOW" {
			l.HoldFor(time.Time{}, HoldWindow, "the envelope window shows another address")
			continue
		}
		l.Pages, l.Sheets, l.Envelope, l.Postage, l.Price = 2, 1, "DL", "regular", 150
		if len(l.Postal) > 0 {
			f := strings.Fields(l.Postal[len(l.Postal)-1])
			l.Postcode = f[len(f)-1]
		}
	}
	return nil
}

func (p *folderProducer) Compose(ctx context.Context, m *Mailing, b *Batch, letters []Letter) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failNext > 0 {
		p.failNext--
		return "", errors.New("disk full")
	}
	for _, l := range letters {
		if len(l.Postal) > 0 && l.Postal[0] == "BROKEN DOC" {
			return "", &LetterError{Idx: l.Idx, Err: errors.New("page 2: no such object")}
		}
	}
	var sb strings.Builder
	for _, l := range letters {
		fmt.Fprintf(&sb, "%d %s\n", l.Idx, l.Postcode)
	}
	dir := filepath.Join(p.dir, b.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if p.composed == nil {
		p.composed = map[string]int{}
	}
	p.composed[b.ID]++
	return dir, os.WriteFile(filepath.Join(dir, "letters.txt"), []byte(sb.String()), 0o644)
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func newMailroom(t *testing.T, open storeOpener) (*Mailroom, *folderProducer, *clock, *[]string) {
	t.Helper()
	s, _ := open(t)
	p := &folderProducer{dir: t.TempDir()}
	c := &clock{now: t0}
	var purged []string
	mr := New(s, p, Config{
		Now:   c.Now,
		Purge: func(epid string) error { purged = append(purged, epid); return nil },
		CheckAddress: func(lines []string) Verdict {
			if strings.Contains(strings.Join(lines, " "), "NOWHERE") {
				return Verdict{Status: "invalid", Nation: "AUS", Message: "no such locality"}
			}
			return Verdict{Status: "matched", Nation: "AUS"}
		},
		Runner: RunnerConfig{Backoff: func(int) time.Duration { return time.Second }},
	}, nil)
	return mr, p, c, &purged
}

func postal(idx int, ref string, lines ...string) Letter {
	return Letter{Idx: idx, Reference: ref, Channels: []string{"postal"}, Postal: lines, Address: &Verdict{Status: "matched", Nation: "AUS"}}
}

func run(t *testing.T, mr *Mailroom) {
	t.Helper()
	for i := 0; i < 20; i++ {
		n, _ := mr.RunDue(context.Background())
		if n == 0 {
			return
		}
	}
}

func statuses(t *testing.T, mr *Mailroom, epid string) string {
	t.Helper()
	ls, err := mr.Store().Letters(epid, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range ls {
		out = append(out, l.Status)
	}
	return strings.Join(out, ",")
}

// TestMailroomLifecycle follows a mailing from end_session to lodgement:
// nothing is produced inside the cancellation window, letters are batched
// by postcode, the print room's marks move them to Printed and Lodged,
// and the documents are purged after the retention period.
func TestMailroomLifecycle(t *testing.T) { eachStore(t, testMailroomLifecycle) }

func testMailroomLifecycle(t *testing.T, open storeOpener) {
	mr, p, c, purged := newMailroom(t, open)
	m := Mailing{EPID: "E1", Account: "ABC12345"}
	err := mr.Submit(m, []Letter{
		postal(0, "a", "Jo", "1 Main St", "SYDNEY NSW 2000"),
		postal(1, "b", "Al", "2 Main St", "MELBOURNE VIC 3000"),
		postal(2, "c", "Bo", "3 Main St", "DARWIN NT 0800"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := mr.Submit(m, nil); !errors.Is(err, ErrExists) {
		t.Fatalf("second submit: %v", err)
	}
	run(t, mr)
	if got := statuses(t, mr, "E1"); got != "Received,Received,Received" {
		t.Fatalf("inside the window: %s", got)
	}
	if len(p.composed) != 0 {
		t.Fatal("composed inside the cancellation window")
	}
	// a letter cancelled inside the window is never produced
	out, err := mr.Cancel("ABC12345", Selector{Refs: []string{"b", "zz"}}, "test")
	if err != nil || len(out) != 2 || !out[0].Changed || out[1].Status != Unknown {
		t.Fatalf("cancel: %+v %v", out, err)
	}
	c.Add(time.Hour)
	run(t, mr)
	if got := statuses(t, mr, "E1"); got != "Processing,Cancelled,Processing" {
		t.Fatalf("after the window: %s", got)
	}
	bs, _ := mr.Store().Batches(BatchReady)
	if len(bs) != 1 || len(bs[0].Letters) != 2 || bs[0].Letters[0] != 2 || bs[0].Letters[1] != 0 {
		t.Fatalf("batches %+v: want one of letters 2, 0 (postcode order)", bs)
	}
	b := bs[0]
	if b.Sheets != 2 || b.Price != 300 || p.composed[b.ID] != 1 {
		t.Fatalf("batch %+v composed %v", b, p.composed)
	}
	// too late to cancel now
	out, _ = mr.Cancel("ABC12345", Selector{EPID: "E1", Indexes: []int{0}}, "test")
	if out[0].Changed || !strings.Contains(out[0].Why, b.ID) {
		t.Fatalf("cancel after batching: %+v", out)
	}
	if _, err := mr.MarkBatch(b.ID, BatchLodged, c.Now(), "op"); err != nil {
		t.Fatal(err)
	}
	if _, err := mr.MarkBatch(b.ID, BatchPrinted, c.Now(), "op"); err == nil {
		t.Fatal("a lodged batch was marked printed")
	}
	if got := statuses(t, mr, "E1"); got != "Lodged,Cancelled,Lodged" {
		t.Fatalf("after lodgement: %s", got)
	}
	l, _ := mr.Store().Letters("E1", 0, 1)
	var evs []string
	for _, e := range l[0].Events {
		evs = append(evs, e.Event)
	}
	if strings.Join(evs, ",") != "Received,Checked,Processing,Released,Printed,Lodged" {
		t.Fatalf("timeline %v", evs)
	}
	counts, _ := mr.Store().Counts("E1")
	if counts[Lodged] != 2 || counts[Cancelled] != 1 {
		t.Fatalf("counts %v", counts)
	}
	// the documents are kept for the preview period, then purged
	run(t, mr)
	if len(*purged) != 0 {
		t.Fatal("purged before the retention period")
	}
	c.Add(30 * 24 * time.Hour)
	run(t, mr)
	if len(*purged) != 1 {
		t.Fatalf("purged %v", *purged)
	}
	mm, _ := mr.Store().Mailing("E1")
	if !mm.Purged {
		t.Fatal("mailing not marked purged")
	}
}

// TestMailroomHolds: the customer's hold is released by release_letters,
// an invalid address by a correction that passes the check, a window
// mismatch is held by the check stage; none is produced while held.
func TestMailroomHolds(t *testing.T) { eachStore(t, testMailroomHolds) }

func testMailroomHolds(t *testing.T, open storeOpener) {
	mr, p, c, _ := newMailroom(t, open)
	bad := postal(1, "bad", "Al", "2 Main St", "NOWHERE NSW 2999")
	bad.Address = &Verdict{Status: "invalid", Nation: "AUS", Message: "no such locality"}
	err := mr.Submit(Mailing{EPID: "E1", Account: "ABC12345", CustHold: true}, []Letter{
		postal(0, "ok", "Jo", "1 Main St", "SYDNEY NSW 2000"),
		bad,
		postal(2, "win", "WRONG WINDOW", "3 Main St", "DARWIN NT 0800"),
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Add(2 * time.Hour)
	run(t, mr)
	ls, _ := mr.Store().Letters("E1", 0, 0)
	if ls[0].Hold != HoldCustomer || ls[1].Hold != HoldAddress || ls[2].Hold != HoldCustomer {
		t.Fatalf("holds %q %q %q", ls[0].Hold, ls[1].Hold, ls[2].Hold)
	}
	if len(p.composed) != 0 {
		t.Fatal("a held mailing was produced")
	}
	// another account cannot touch it
	if _, err := mr.Release("XYZ99999", Selector{EPID: "E1"}, "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("release by another account: %v", err)
	}
	out, err := mr.Release("ABC12345", Selector{EPID: "E1"}, "jo")
	if err != nil {
		t.Fatal(err)
	}
	if !out[0].Changed || out[1].Changed || !strings.Contains(out[1].Why, "invalid postal address") || !out[2].Changed {
		t.Fatalf("release: %+v", out)
	}
	run(t, mr)
	if got := statuses(t, mr, "E1"); got != "Processing,Held,Held" {
		t.Fatalf("after release: %s", got)
	}
	ls, _ = mr.Store().Letters("E1", 0, 0)
	if ls[2].Hold != HoldWindow {
		t.Fatalf("letter 2: %s %s", ls[2].Hold, ls[2].HoldReason)
	}
	// a correction that fails the check changes nothing
	out, v, err := mr.Correct("ABC12345", Selector{EPID: "E1", Indexes: []int{1}}, []string{"Al", "2 Main St", "NOWHERE NSW 2999"}, "jo")
	if err != nil || out[0].Changed || v.Status != "invalid" {
		t.Fatalf("bad correction: %+v %+v %v", out, v, err)
	}
	// one that passes sends the letter on
	out, v, err = mr.Correct("ABC12345", Selector{Refs: []string{"bad"}}, []string{"Al", "2 Main St", "SYDNEY NSW 2000"}, "jo")
	if err != nil || !out[0].Changed || v.Status != "matched" {
		t.Fatalf("correction: %+v %+v %v", out, v, err)
	}
	// a letter not held for its address cannot be corrected
	out, _, _ = mr.Correct("ABC12345", Selector{EPID: "E1", Indexes: []int{0}}, []string{"x", "y", "SYDNEY NSW 2000"}, "jo")
	if out[0].Changed {
		t.Fatal("corrected a letter in production")
	}
	run(t, mr)
	if got := statuses(t, mr, "E1"); got != "Processing,Processing,Held" {
		t.Fatalf("after correction: %s", got)
	}
	ls, _ = mr.Store().Letters("E1", 0, 0)
	if ls[0].Batch == ls[1].Batch {
		t.Fatal("a letter released later joined a batch already made")
	}
}

// TestMailroomComposeRetry: a failed composition is retried and every
// letter ends in exactly one batch, written once.
func TestMailroomComposeRetry(t *testing.T) { eachStore(t, testMailroomComposeRetry) }

func testMailroomComposeRetry(t *testing.T, open storeOpener) {
	mr, p, c, _ := newMailroom(t, open)
	p.failNext = 2
	var ls []Letter
	for i := 0; i < 50; i++ {
		ls = append(ls, postal(i, "", "X", "1 Main St", fmt.Sprintf("SYDNEY NSW %04d", 2000+i%7)))
	}
	if err := mr.Submit(Mailing{EPID: "E1", Account: "ABC12345"}, ls); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Hour)
	for i := 0; i < 5; i++ {
		run(t, mr)
		c.Add(2 * time.Second)
	}
	bs, _ := mr.Store().Batches("")
	in := map[int]int{}
	for _, b := range bs {
		if b.State != BatchReady || p.composed[b.ID] != 1 {
			t.Fatalf("batch %s: %s, written %d times", b.ID, b.State, p.composed[b.ID])
		}
		for _, i := range b.Letters {
			in[i]++
		}
	}
	for i := 0; i < 50; i++ {
		if in[i] != 1 {
			t.Fatalf("letter %d is in %d batches", i, in[i])
		}
	}
	jobs, _ := mr.Store().Jobs()
	for _, j := range jobs {
		if j.Kind != JobPurge {
			t.Fatalf("job left: %+v", j)
		}
	}
}

// TestMailroomLetterError: a letter whose document cannot be read at
// composition is held with the reason and the batch is made without it;
// a batch left without letters is void.
func TestMailroomLetterError(t *testing.T) { eachStore(t, testMailroomLetterError) }

func testMailroomLetterError(t *testing.T, open storeOpener) {
	mr, p, c, _ := newMailroom(t, open)
	err := mr.Submit(Mailing{EPID: "E1", Account: "ABC12345"}, []Letter{
		postal(0, "a", "Jo", "1 Main St", "SYDNEY NSW 2000"),
		postal(1, "b", "BROKEN DOC", "2 Main St", "SYDNEY NSW 2001"),
		postal(2, "c", "Bo", "3 Main St", "SYDNEY NSW 2002"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := mr.Submit(Mailing{EPID: "E2", Account: "ABC12345"}, []Letter{postal(0, "d", "BROKEN DOC", "1 Main St", "SYDNEY NSW 2000")}); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Hour)
	run(t, mr)
	if got := statuses(t, mr, "E1"); got != "Processing,Held,Processing" {
		t.Fatalf("statuses %s", got)
	}
	ls, _ := mr.Store().Letters("E1", 0, 0)
	if ls[1].Hold != HoldDocument || !strings.Contains(ls[1].HoldReason, "no such object") || ls[1].Batch != "" {
		t.Fatalf("the broken letter: %+v", ls[1])
	}
	b, err := mr.Store().Batch(ls[0].Batch)
	if err != nil || b.State != BatchReady || len(b.Letters) != 2 || b.Sheets != 2 || p.composed[b.ID] != 1 || ls[2].Sheet != 2 {
		t.Fatalf("batch %+v (%v), composed %d times; letter 2 on sheet %d", b, err, p.composed[b.ID], ls[2].Sheet)
	}
	bs, _ := mr.Store().Batches(BatchVoid)
	if len(bs) != 1 || bs[0].EPID != "E2" || len(bs[0].Letters) != 0 {
		t.Fatalf("void batches %+v", bs)
	}
	if got := statuses(t, mr, "E2"); got != "Held" {
		t.Fatalf("E2: %s", got)
	}
	if jobs, _ := mr.Store().Jobs(); len(jobs) != 0 {
		t.Fatalf("jobs left: %+v", jobs)
	}
}

// TestReleaseWholeMailing: releasing a whole mailing ends its customer
// hold even when none of its letters was held by it (all held for their
// address): a later correction sends the letter on, not back on hold.
func TestReleaseWholeMailing(t *testing.T) { eachStore(t, testReleaseWholeMailing) }

func testReleaseWholeMailing(t *testing.T, open storeOpener) {
	mr, _, c, _ := newMailroom(t, open)
	bad := postal(0, "bad", "Al", "2 Main St", "NOWHERE NSW 2999")
	bad.Address = &Verdict{Status: "invalid", Nation: "AUS", Message: "no such locality"}
	if err := mr.Submit(Mailing{EPID: "E1", Account: "ABC12345", CustHold: true}, []Letter{bad}); err != nil {
		t.Fatal(err)
	}
	out, err := mr.Release("ABC12345", Selector{EPID: "E1"}, "jo")
	if err != nil || out[0].Changed {
		t.Fatalf("release: %+v %v", out, err)
	}
	if m, _ := mr.Store().Mailing("E1"); m.CustHold {
		t.Fatal("the mailing is still on customer hold after its release")
	}
	if _, _, err := mr.Correct("ABC12345", Selector{EPID: "E1", Indexes: []int{0}}, []string{"Al", "2 Main St", "SYDNEY NSW 2000"}, "jo"); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Hour)
	run(t, mr)
	if got := statuses(t, mr, "E1"); got != "Processing" {
		t.Fatalf("after release and correction: %s", got)
	}
}
