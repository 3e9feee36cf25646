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
func TestOpened(t *testing.T) { eachStore(t, testOpened) }

func testOpened(t *testing.T, open storeOpener) {
	mr, _, _, _ := newMailroom(t, open)
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
	// get_letter_status reports them in Unix times, and not at all when
	// never opened
	if err := mr.Store().Update([]string{"E1"}, func(tx Tx) error {
		for i := 0; i < 2; i++ {
			l, err := tx.Letter("E1", i)
			if err != nil {
				return err
			}
			l.Reference = []string{"r0", "r1"}[i]
			tx.PutLetter(l)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	v, _, msg := call(t, mr, "get_letter_status", `{"account":"ABC12345","refs":["r0","r1"]}`, "ABC12345")
	ls, _ := v["letters"].([]any)
	if len(ls) != 2 {
		t.Fatalf("get_letter_status: %v %s", v, msg)
	}
	l0, l1 := ls[0].(map[string]any), ls[1].(map[string]any)
	unixAt := func(min int) float64 { return float64(at(min).Unix()) }
	for k, want := range map[string]float64{"email_first_opened": unixAt(5), "email_last_opened": unixAt(20), "doc_first_opened": unixAt(30), "doc_last_opened": unixAt(31)} {
		if l0[k] != want {
			t.Errorf("letter 0 %s: %v, want %v", k, l0[k], want)
		}
	}
	if _, ok := l1["email_first_opened"]; ok || l1["doc_last_opened"] != unixAt(40) {
		t.Errorf("letter 1: %v", l1)
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
