// Package testmailroom makes mailrooms with print batches for the tests
// of the tools around the mailroom (print room commands, invoices): a
// pipeline.Mailroom over a Pebble store at <data-dir>/mailroom, as lodge
// serve lays it out, whose mailings go through the real stages (check,
// batch after the cancellation window, compose) to ready batches.
//
// Its Producer gives each postal letter production facts without reading
// documents (sheets from the letter's index, the envelope and postage
// production would choose, the price from billing's default table) and
// writes a batch as a folder listing its letters. Production proper is
// tested in package production.
package testmailroom

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/billing"
	"github.com/lodge-mail/lodge/pipeline"
)

// Fixture is a mailroom in a data directory with a clock of its own.
type Fixture struct {
	DataDir string
	Store   *pipeline.PebbleStore
	MR      *pipeline.Mailroom
	clock   *clock
	closed  bool
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// New opens a mailroom in dataDir whose clock starts at start (times of
// marks must not be in the future: start in the past).
func New(t testing.TB, dataDir string, start time.Time) *Fixture {
	t.Helper()
	s, err := pipeline.OpenPebble(filepath.Join(dataDir, "mailroom"))
	if err != nil {
		t.Fatal(err)
	}
	f := &Fixture{DataDir: dataDir, Store: s, clock: &clock{now: start.UTC()}}
	t.Cleanup(func() { f.Close() })
	f.MR = pipeline.New(s, producer{hot: filepath.Join(dataDir, "print", "outbox")}, pipeline.Config{Now: f.clock.Now, CancelWindow: time.Hour}, slog.New(slog.DiscardHandler))
	return f
}

// Close closes the store (so that another process or handle may open
// it); twice is fine.
func (f *Fixture) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	return f.Store.Close()
}

// Now is the fixture's clock.
func (f *Fixture) Now() time.Time { return f.clock.Now() }

// Advance moves the clock on.
func (f *Fixture) Advance(d time.Duration) {
	f.clock.mu.Lock()
	f.clock.now = f.clock.now.Add(d)
	f.clock.mu.Unlock()
}

// Letter is a postal letter to an address ending in postcode.
func Letter(idx int, ref, postcode string) pipeline.Letter {
	return pipeline.Letter{Idx: idx, Reference: ref, Channels: []string{"postal"},
		Postal:  []string{"Jo Citizen", fmt.Sprintf("%d Main St", idx+1), "SOMEWHERE NSW " + postcode},
		Address: &pipeline.Verdict{Status: "matched", Nation: "AUS"}}
}

// Produce submits a mailing and runs the stages past its cancellation
// window (Submit, Run): its postal letters end in ready batches, whose
// IDs it returns.
func (f *Fixture) Produce(t testing.TB, m pipeline.Mailing, letters []pipeline.Letter) []string {
	t.Helper()
	f.Submit(t, m, letters)
	f.Run(t)
	return f.Batches(t, m.EPID)
}

// Submit submits a mailing created now.
func (f *Fixture) Submit(t testing.TB, m pipeline.Mailing, letters []pipeline.Letter) {
	t.Helper()
	m.Created = f.Now()
	m.Letters = len(letters)
	if err := f.MR.Submit(m, letters); err != nil {
		t.Fatal(err)
	}
}

// Run moves the clock past the cancellation window of the mailings
// submitted so far and runs the stages until nothing is due.
func (f *Fixture) Run(t testing.TB) {
	t.Helper()
	f.Advance(time.Hour + time.Second)
	for i := 0; ; i++ {
		n, err := f.MR.RunDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if i > 100 {
			t.Fatal("the stages never end")
		}
	}
}

// Batches returns the IDs of a mailing's batches, failing unless every
// one is ready or further.
func (f *Fixture) Batches(t testing.TB, epid string) []string {
	t.Helper()
	bs, err := f.Store.Batches("")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, b := range bs {
		if b.EPID == epid {
			if b.State == pipeline.BatchComposing {
				t.Fatalf("batch %s is still being composed", b.ID)
			}
			ids = append(ids, b.ID)
		}
	}
	return ids
}

// producer is the fixture's Producer (see the package documentation).
type producer struct {
	hot string
}

func (p producer) Inspect(ctx context.Context, m *pipeline.Mailing, letters []*pipeline.Letter) error {
	for _, l := range letters {
		l.Sheets = 1 + l.Idx%3
		if l.Idx%7 == 6 {
			l.Sheets = 6 // more than a DL takes
		}
		l.Pages = l.Sheets
		if m.Production.Duplex {
			l.Pages = 2 * l.Sheets
		}
		l.Envelope = "DL"
		if l.Sheets > 5 || m.Production.ForceC4 {
			l.Envelope = "C4"
		}
		l.Postage = m.Production.Postage
		if l.Postage == "" {
			l.Postage = "regular"
		}
		f := strings.Fields(l.Postal[len(l.Postal)-1])
		l.Postcode = f[len(f)-1]
		price, err := billing.DefaultTable.Postal(l.Sheets, m.Production.Duplex, m.Production.Colour, l.Envelope, l.Postage)
		if err != nil {
			return err
		}
		l.Price = price
	}
	return nil
}

func (p producer) Compose(ctx context.Context, m *pipeline.Mailing, b *pipeline.Batch, letters []pipeline.Letter) (string, error) {
	dir := filepath.Join(p.hot, b.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, l := range letters {
		fmt.Fprintf(&sb, "%d %s %d\n", l.Idx, l.Postcode, l.Sheets)
	}
	return dir, os.WriteFile(filepath.Join(dir, "letters.txt"), []byte(sb.String()), 0o644)
}
