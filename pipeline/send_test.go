package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// tableSender answers each letter by its reference: "temp" fails for now
// the first time, "perm" fails for good, others are accepted with an id.
type tableSender struct {
	mu   sync.Mutex
	seen map[string][]string // reference → ids sent
}

func (s *tableSender) Send(ctx context.Context, m *Mailing, l *Letter, id string) (string, []string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[string][]string{}
	}
	s.seen[l.Reference] = append(s.seen[l.Reference], id)
	switch {
	case l.Reference == "temp" && len(s.seen[l.Reference]) == 1:
		return "", nil, &SendError{Err: errors.New("421 try later")}
	case strings.HasPrefix(l.Reference, "perm"):
		return "", nil, &SendError{Permanent: true, Err: errors.New("550 no such user")}
	}
	return "queued as " + id, []string{"gw-" + id}, nil
}

func TestSendStage(t *testing.T) { eachStore(t, testSendStage) }

func testSendStage(t *testing.T, open storeOpener) {
	s, _ := open(t)
	c := &clock{now: t0}
	snd := &tableSender{}
	mr := New(s, &folderProducer{dir: t.TempDir()}, Config{
		Now:          c.Now,
		CancelWindow: time.Hour,
		Senders:      map[string]Sender{"email": snd, "sms": snd},
		CheckAddress: func([]string) Verdict { return Verdict{Status: "matched", Nation: "AUS"} },
		Runner:       RunnerConfig{Backoff: func(int) time.Duration { return time.Second }},
	}, nil)
	email := func(idx int, ref string, postal ...string) Letter {
		return Letter{Idx: idx, Reference: ref, Channels: []string{"email", "postal"}, Email: "a@example.com", Postal: postal,
			CustomData: map[string]string{"password": "s3cret"}, Address: &Verdict{Status: "matched", Nation: "AUS"}}
	}
	err := mr.Submit(Mailing{EPID: "E1", Account: "ABC12345"}, []Letter{
		email(0, "ok"),
		email(1, "temp"),
		email(2, "perm-post", "Jo", "1 Main St", "SYDNEY NSW 2000"),
		email(3, "perm"),
		{Idx: 4, Reference: "sms", Channels: []string{"sms"}, SMS: "0412345678"},
		postal(5, "paper", "Al", "2 Main St", "MELBOURNE VIC 3000"),
	})
	if err != nil {
		t.Fatal(err)
	}
	run(t, mr)
	if len(snd.seen) != 0 {
		t.Fatalf("sent within the cancellation window: %v", snd.seen)
	}
	if got := statuses(t, mr, "E1"); got != "Received,Received,Received,Received,Received,Received" {
		t.Fatalf("before the window ends: %s", got)
	}
	c.Add(time.Hour)
	run(t, mr)
	if got := statuses(t, mr, "E1"); got != "Lodged,Processing,Processing,Failed,Lodged,Processing" {
		t.Errorf("after the window: %s", got)
	}
	ls, _ := s.Letters("E1", 0, 0)
	if ls[0].CustomData["password"] != "" || ls[0].Send == nil || ls[0].Send.ID != "E1-0-0" || ls[0].Send.Done.IsZero() {
		t.Errorf("sent letter: %+v %+v", ls[0].CustomData, ls[0].Send)
	}
	if ls[2].Failover == nil || ls[2].Channels[0] != "postal" || ls[2].Batch == "" || !strings.Contains(ls[2].Failover.Reason, "550") {
		t.Errorf("failed over letter: %+v, %v, batch %q", ls[2].Failover, ls[2].Channels, ls[2].Batch)
	}
	if !strings.Contains(ls[3].Events[len(ls[3].Events)-1].Detail, "550 no such user") {
		t.Errorf("failed letter: %+v", ls[3].Events)
	}
	// the temporary failure is sent again, with the same id
	c.Add(2 * time.Minute)
	run(t, mr)
	if got := statuses(t, mr, "E1"); got != "Lodged,Lodged,Processing,Failed,Lodged,Processing" {
		t.Errorf("after the retry: %s", got)
	}
	if ids := snd.seen["temp"]; len(ids) != 2 || ids[0] != ids[1] {
		t.Errorf("temporary failure resent with ids %v", ids)
	}
	if n := len(snd.seen["ok"]); n != 1 {
		t.Errorf("a letter sent %d times", n)
	}
	// reports: an SMS receipt, a bounce
	if err := mr.Receipt("gw-E1-4-0", true, "DELIVRD"); err != nil {
		t.Fatal(err)
	}
	if err := mr.Bounced("E1", 1, false, "4.4.1 delayed"); err != nil {
		t.Fatal(err)
	}
	if err := mr.Bounced("E1", 0, true, "5.1.1 user unknown"); err != nil {
		t.Fatal(err)
	}
	fo, err := s.Failovers("ABC12345", 0)
	if err != nil || len(fo) != 1 || fo[0].Idx != 2 || fo[0].Failover.From != "email" {
		t.Errorf("failovers %d, %v", len(fo), err)
	}
	if err := mr.Receipt("nobody", true, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("receipt for an unknown id: %v", err)
	}
	if got := statuses(t, mr, "E1"); got != "Failed,Lodged,Processing,Failed,Delivered,Processing" {
		t.Errorf("after reports: %s", got)
	}
}

// TestSendResumes: a send started when the process died is sent again
// with the same id (at least once), and a send already done is not.
func TestSendResumes(t *testing.T) { eachStore(t, testSendResumes) }

func testSendResumes(t *testing.T, open storeOpener) {
	s, _ := open(t)
	c := &clock{now: t0}
	snd := &tableSender{}
	cfg := Config{Now: c.Now, CancelWindow: -1, Senders: map[string]Sender{"email": snd},
		Runner: RunnerConfig{Backoff: func(int) time.Duration { return time.Second }}}
	mr := New(s, &folderProducer{dir: t.TempDir()}, cfg, nil)
	var letters []Letter
	for i := range 600 { // more than a chunk
		letters = append(letters, Letter{Idx: i, Reference: fmt.Sprint("r", i), Channels: []string{"email"}, Email: "a@example.com"})
	}
	if err := mr.Submit(Mailing{EPID: "E2", Account: "ABC12345"}, letters); err != nil {
		t.Fatal(err)
	}
	// a crash between "started" and "done": letter 7's send is recorded
	// as started, not done
	run(t, mr)
	err := s.Update([]string{"E2"}, func(tx Tx) error {
		l, err := tx.Letter("E2", 7)
		if err != nil {
			return err
		}
		l.Send.Done = time.Time{}
		l.Status = Processing
		tx.PutLetter(l)
		tx.AddJob(Job{Kind: JobSend, Key: "E2", Due: t0})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	run(t, mr)
	for i := range 600 {
		want := 1
		if i == 7 {
			want = 2
		}
		if ids := snd.seen[fmt.Sprint("r", i)]; len(ids) != want || ids[0] != fmt.Sprintf("E2-%d-0", i) || ids[len(ids)-1] != ids[0] {
			t.Fatalf("letter %d sent as %v", i, ids)
		}
	}
	if counts, _ := s.Counts("E2"); counts[Lodged] != 600 {
		t.Errorf("counts %v", counts)
	}
}
