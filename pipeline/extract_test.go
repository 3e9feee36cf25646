package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// tableExtractor answers Extract with a table of letters, failing the
// first fail calls (a reader that could not run).
type tableExtractor struct {
	letters []Letter
	fail    int
	calls   int
}

func (x *tableExtractor) Extract(ctx context.Context, m *Mailing) ([]Letter, error) {
	x.calls++
	if x.calls <= x.fail {
		return nil, errors.New("the reader could not start")
	}
	out := make([]Letter, len(x.letters))
	for i, l := range x.letters {
		l.Events = nil
		out[i] = l
	}
	return out, nil
}

func TestExtractStage(t *testing.T) { eachStore(t, testExtractStage) }

func testExtractStage(t *testing.T, open storeOpener) {
	s, _ := open(t)
	c := &clock{now: t0}
	held := Letter{Channels: []string{"postal"}, Documents: []DocPart{{File: "run.pdf", PageStart: 4, PageEnd: 4}}}
	held.HoldFor(time.Time{}, HoldAddress, "the envelope window of page 5 of run.pdf shows only an image")
	x := &tableExtractor{fail: 1, letters: []Letter{
		{Reference: "R1", Channels: []string{"postal"}, Postal: []string{"Jo", "1 Main St", "SYDNEY NSW 2000"}, Documents: []DocPart{{File: "run.pdf", PageStart: 0, PageEnd: 1}}, Masks: []Area{{X: 25, Y: 52, W: 30, H: 4}}},
		{Channels: []string{"postal"}, Postal: []string{"Al", "NOWHERE"}, Documents: []DocPart{{File: "run.pdf", PageStart: 2, PageEnd: 3}}},
		held,
		{Channels: []string{"email"}, Email: "a@example.com", Documents: []DocPart{{File: "run.pdf", PageStart: 5, PageEnd: 5}}},
	}}
	var checked []string
	mr := New(s, &folderProducer{dir: t.TempDir()}, Config{
		Now:       c.Now,
		Extractor: x,
		CheckAddress: func(lines []string) Verdict {
			checked = append(checked, strings.Join(lines, "/"))
			if strings.Contains(strings.Join(lines, " "), "NOWHERE") {
				return Verdict{Status: "invalid", Nation: "AUS", Message: "no such locality"}
			}
			return Verdict{Status: "matched", Nation: "AUS"}
		},
		Runner: RunnerConfig{Backoff: func(int) time.Duration { return time.Second }},
	}, nil)
	if err := mr.Submit(Mailing{EPID: "E1", Account: "ABC12345", Auto: true}, nil); err != nil {
		t.Fatal(err)
	}
	run(t, mr) // the first attempt fails: retried after the backoff
	if m, _ := s.Mailing("E1"); m.Letters != 0 {
		t.Fatalf("letters recorded after a failed extraction: %d", m.Letters)
	}
	c.Add(2 * time.Second)
	run(t, mr)
	m, err := s.Mailing("E1")
	if err != nil || m.Letters != 4 {
		t.Fatalf("mailing %+v, %v", m, err)
	}
	if got := statuses(t, mr, "E1"); got != "Received,Held,Held,Held" {
		t.Errorf("statuses %s", got)
	}
	ls, _ := s.Letters("E1", 0, 0)
	f := func(i int, want string) {
		t.Helper()
		l := ls[i]
		var ev []string
		for _, e := range l.Events {
			ev = append(ev, e.Event+":"+e.Detail)
		}
		got := strings.Join([]string{l.Status, l.Hold, l.HoldReason, l.Reference, strings.Join(ev, ";")}, "|")
		if got != want {
			t.Errorf("letter %d:\n got %s\nwant %s", i, got, want)
		}
		if l.Idx != i || l.EPID != "E1" || l.Account != "ABC12345" {
			t.Errorf("letter %d: idx %d epid %s account %s", i, l.Idx, l.EPID, l.Account)
		}
	}
	f(0, "Received|||R1|Received:;Extracted:pages 1-2 of run.pdf;Checked:2 pages on 1 sheets, DL envelope, regular post")
	f(1, "Held|address|invalid postal address: no such locality (correct it with correct_letter or in the portal)||Received:;Extracted:pages 3-4 of run.pdf;Held:invalid postal address: no such locality (correct it with correct_letter or in the portal)")
	f(2, "Held|address|the envelope window of page 5 of run.pdf shows only an image||Received:;Extracted:page 5 of run.pdf;Held:the envelope window of page 5 of run.pdf shows only an image")
	f(3, "Held|channel|email delivery is not available on this server: cancel the letter, or send it by post||Received:;Extracted:page 6 of run.pdf;Held:email delivery is not available on this server: cancel the letter, or send it by post")
	if len(ls[0].Masks) != 1 || ls[0].Address == nil || ls[0].Address.Status != "matched" {
		t.Errorf("letter 0: masks %v, address %+v", ls[0].Masks, ls[0].Address)
	}
	if strings.Join(checked, ",") != "Jo/1 Main St/SYDNEY NSW 2000,Al/NOWHERE" {
		t.Errorf("engine saw %q", checked)
	}
	// The held letter is corrected and goes on like the others.
	if _, v, err := mr.Correct("ABC12345", Selector{EPID: "E1", Indexes: []int{2}}, []string{"Bo", "3 Main St", "DARWIN NT 0800"}, "tester"); err != nil || v.Status != "matched" {
		t.Fatalf("correct: %v %+v", err, v)
	}
	run(t, mr)
	if got := statuses(t, mr, "E1"); got != "Received,Held,Received,Held" {
		t.Errorf("after correction: %s", got)
	}
	// Run again (a crash after the commit): nothing changes.
	calls := x.calls
	mr.Submit(Mailing{EPID: "E1", Account: "ABC12345", Auto: true}, nil)
	run(t, mr)
	if x.calls != calls {
		t.Errorf("extracted again: %d calls", x.calls)
	}
	if counts, _ := s.Counts("E1"); counts[Held] != 2 || counts[Received] != 2 {
		t.Errorf("counts %v", counts)
	}
}

// TestExtractWithoutExtractor: an auto mailing on a mailroom with no auto
// processor keeps its job queued (nothing is lost, nothing pretends).
func TestExtractWithoutExtractor(t *testing.T) { eachStore(t, testExtractWithoutExtractor) }

func testExtractWithoutExtractor(t *testing.T, open storeOpener) {
	mr, _, _, _ := newMailroom(t, open)
	if err := mr.Submit(Mailing{EPID: "E2", Account: "ABC12345", Auto: true}, nil); err != nil {
		t.Fatal(err)
	}
	run(t, mr)
	jobs, _ := mr.Store().Jobs()
	if len(jobs) != 1 || jobs[0].Kind != JobExtract {
		t.Errorf("jobs %+v", jobs)
	}
}
