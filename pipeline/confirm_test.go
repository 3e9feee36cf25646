package pipeline

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"
)

type recordingConfirmer struct {
	mu   sync.Mutex
	sent []string
}

func (r *recordingConfirmer) Confirm(ctx context.Context, m *Mailing, kind, to, id string, counts, holds map[string]int) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var cs, hs []string
	for k, v := range counts {
		cs = append(cs, fmt.Sprintf("%s=%d", k, v))
	}
	for k, v := range holds {
		hs = append(hs, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(cs)
	sort.Strings(hs)
	r.sent = append(r.sent, fmt.Sprintf("%s %s to %s [%s] holds [%s]", id, kind, to, strings.Join(cs, " "), strings.Join(hs, " ")))
	return "sent as " + id, nil
}

func TestConfirmations(t *testing.T) { eachStore(t, testConfirmations) }

func testConfirmations(t *testing.T, open storeOpener) {
	s, _ := open(t)
	c := &clock{now: t0}
	rc := &recordingConfirmer{}
	mr := New(s, &folderProducer{dir: t.TempDir()}, Config{
		Now: c.Now, CancelWindow: time.Hour, Confirmer: rc,
		CheckAddress: func([]string) Verdict { return Verdict{Status: "matched", Nation: "AUS"} },
		Runner:       RunnerConfig{Backoff: func(int) time.Duration { return time.Second }},
	}, nil)
	settings, _ := json.Marshal(map[string]any{"customer_email": "ops@example.com", "confirmation_email": true})
	bad := postal(1, "b", "Al", "NOWHERE")
	bad.Address = &Verdict{Status: "invalid", Nation: "AUS", Message: "no such locality"}
	if err := mr.Submit(Mailing{EPID: "E1", Account: "ABC12345", Settings: settings}, []Letter{postal(0, "a", "Jo", "1 Main St", "SYDNEY NSW 2000"), bad}); err != nil {
		t.Fatal(err)
	}
	// one that did not ask
	if err := mr.Submit(Mailing{EPID: "E2", Account: "ABC12345"}, []Letter{postal(0, "c", "Jo", "1 Main St", "SYDNEY NSW 2000")}); err != nil {
		t.Fatal(err)
	}
	run(t, mr)
	want := "E1-accepted accepted to ops@example.com [Held=1 Received=1] holds [invalid postal address: no such locality (correct it with correct_letter or in the portal)=1]"
	if strings.Join(rc.sent, "\n") != want {
		t.Fatalf("within the window:\n%s\nwant\n%s", strings.Join(rc.sent, "\n"), want)
	}
	c.Add(time.Hour)
	run(t, mr)
	run(t, mr)
	want += "\nE1-done done to ops@example.com [Held=1 Processing=1] holds [invalid postal address: no such locality (correct it with correct_letter or in the portal)=1]"
	if strings.Join(rc.sent, "\n") != want {
		t.Fatalf("after production:\n%s\nwant\n%s", strings.Join(rc.sent, "\n"), want)
	}
	m, _ := s.Mailing("E1")
	if len(m.Confirmations) != 2 || m.Confirmations[1].Kind != "done" || m.Confirmations[1].Detail != "sent as E1-done" {
		t.Errorf("recorded %+v", m.Confirmations)
	}
	// a later action does not send the same confirmation again
	mr.Cancel("ABC12345", Selector{EPID: "E1", Indexes: []int{1}}, "tester")
	run(t, mr)
	if len(rc.sent) != 2 {
		t.Errorf("sent again: %v", rc.sent)
	}
}
