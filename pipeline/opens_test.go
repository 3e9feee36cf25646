package pipeline

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"
)

// TestOpened: the first opening of each kind is set once (an earlier one
// recorded late moves it back) with an event on the timeline; the last
// moves forward only; the two kinds are apart; a letter that does not
// exist is ErrNotFound and an unknown kind an error.
func TestOpened(t *testing.T) {
	mr, _, _, _ := newMailroom(t)
	if err := mr.Submit(Mailing{EPID: "E1", Account: "ABC12345"}, []Letter{
		{Idx: 0, Channels: []string{"email"}, Email: "jo@example.com"},
		{Idx: 1, Channels: []string{"sms"}, SMS: "0412345678"},
	}); err != nil {
		t.Fatal(err)
	}
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	letter := func(idx int) Letter {
		t.Helper()
		ls, err := mr.Store().Letters("E1", idx, 1)
		if err != nil || len(ls) != 1 {
			t.Fatalf("letter %d: %v", idx, err)
		}
		return ls[0]
	}
	opens := func(idx int) Opens { return letter(idx).Opens }
	events := func(idx int) string {
		var out []string
		for _, e := range letter(idx).Events {
			out = append(out, e.Event)
		}
		return strings.Join(out, ",")
	}
	f := func(idx int, kind string, min int, want Opens) {
		t.Helper()
		if err := mr.Opened("E1", idx, kind, at(min)); err != nil {
			t.Fatal(err)
		}
		if got := opens(idx); got != want {
			t.Fatalf("after %s at %d: %+v, want %+v", kind, min, got, want)
		}
	}
	f(0, OpenEmail, 10, Opens{EmailFirstOpened: at(10), EmailLastOpened: at(10)})
	f(0, OpenEmail, 20, Opens{EmailFirstOpened: at(10), EmailLastOpened: at(20)})
	f(0, OpenEmail, 15, Opens{EmailFirstOpened: at(10), EmailLastOpened: at(20)})
	f(0, OpenEmail, 5, Opens{EmailFirstOpened: at(5), EmailLastOpened: at(20)})
	f(0, OpenDoc, 30, Opens{EmailFirstOpened: at(5), EmailLastOpened: at(20), DocFirstOpened: at(30), DocLastOpened: at(30)})
	f(0, OpenDoc, 31, Opens{EmailFirstOpened: at(5), EmailLastOpened: at(20), DocFirstOpened: at(30), DocLastOpened: at(31)})
	f(1, OpenDoc, 40, Opens{DocFirstOpened: at(40), DocLastOpened: at(40)})
	// (the test mailroom sends by post only: its email letters are held)
	if got := events(0); got != "Received,Held,EmailOpened,DocOpened" {
		t.Fatalf("timeline %s", got)
	}
	if got := letter(0).Events[2].Time; !got.Equal(at(10)) {
		t.Fatalf("EmailOpened event at %v", got)
	}
	// the record says it in get_letter_status's names
	b, _ := json.Marshal(letter(1))
	if !strings.Contains(string(b), `"doc_first_opened":"`+at(40).UTC().Format(time.RFC3339)) {
		t.Fatalf("record %s", b)
	}
	if err := mr.Opened("E1", 2, OpenDoc, at(1)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no such letter: %v", err)
	}
	if err := mr.Opened("NOPE", 0, OpenDoc, at(1)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no such mailing: %v", err)
	}
	if err := mr.Opened("E1", 0, "click", at(1)); err == nil || !strings.Contains(err.Error(), "click") {
		t.Fatalf("unknown kind: %v", err)
	}
}
