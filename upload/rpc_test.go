package upload

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/rpc"
)

// ref gives a metadata letter (a JSON object) the reference ref.
func ref(letter, ref string) string {
	return strings.TrimSuffix(letter, "}") + `,"reference":` + fmt.Sprintf("%q", ref) + `}`
}

// mailingOf is rig.mailing for another account's session.
func (r *rig) mailingOf(account string, files ...any) Session {
	r.t.Helper()
	ss, err := r.s.CreateSession(account, "them")
	if err != nil {
		r.t.Fatal(err)
	}
	r.put(ss, files...)
	if res := r.end(ss); res.Result != "ok" {
		r.t.Fatalf("end_session: %+v", res)
	}
	return ss
}

// entry is one element of the letters of get_letter_status or
// cancel_letters, with the fields both may have.
type entry struct {
	EPID      *string `json:"epid"`
	Ref       string  `json:"ref"`
	Idx       *int    `json:"idx"`
	Status    string  `json:"status"`
	Cancelled *bool   `json:"cancelled"`
	Transport any     `json:"transport"`
}

// callLetters calls an RPC method of the store with params and decodes its
// letters; it fails the test on an error.
func callLetters(t *testing.T, m rpc.Method, params string, p rpc.Principal) []entry {
	t.Helper()
	out, code, msg := m([]byte("prefix:"), []byte(params), p)
	if code != 0 {
		t.Fatalf("%s: error %d %s", params, code, msg)
	}
	if !strings.HasPrefix(string(out), "prefix:") {
		t.Fatalf("%s: dst not appended to: %s", params, out)
	}
	var got struct {
		Letters []entry `json:"letters"`
	}
	if err := json.Unmarshal(out[len("prefix:"):], &got); err != nil || got.Letters == nil {
		t.Fatalf("%s: %v: %s", params, err, out)
	}
	return got.Letters
}

func refsParams(account string, refs ...string) string {
	b, _ := json.Marshal(map[string]any{"account": account, "refs": refs})
	return string(b)
}

var me = rpc.Principal{Account: "ABC12345", User: "clerk"}

// TestGetLetterStatusUnknown: get_letter_status gives, for each ref in
// order, the account's letters with that reference or one entry with the
// ref and status Unknown (no epid, idx or transport) when there is none;
// another account's letters read as Unknown.
func TestGetLetterStatusUnknown(t *testing.T) {
	r := newRig(t)
	a := r.mailing("doc.pdf", pdfPages(1), "m.json", meta("", ref(melbourne, "INV-1"), ref(wrongPC, "INV-2"), ref(emailOnly, "INV-1")))
	if _, err := r.l.RunOnce(); err != nil {
		t.Fatal(err)
	}
	b := r.mailing("doc.pdf", pdfPages(1), "m.json", meta("", ref(melbourne, "INV-2")))
	r.mailingOf("XYZ99999", "doc.pdf", pdfPages(1), "m.json", meta("", ref(melbourne, "THEIRS"), ref(melbourne, "INV-1")))
	type row struct {
		ref, epid string
		idx       int
		status    string
	}
	f := func(refs []string, want ...row) {
		t.Helper()
		got := callLetters(t, r.s.GetLetterStatus, refsParams("ABC12345", refs...), me)
		if len(got) != len(want) {
			t.Fatalf("%q: %d letters, want %d: %+v", refs, len(got), len(want), got)
		}
		for i, w := range want {
			g := got[i]
			if w.status == LetterUnknown {
				if g.Ref != w.ref || g.Status != LetterUnknown || g.EPID != nil || g.Idx != nil || g.Transport != nil || g.Cancelled != nil {
					t.Errorf("%q: letter %d: %+v, want only ref %q and status Unknown", refs, i, g, w.ref)
				}
				continue
			}
			if g.EPID == nil || g.Idx == nil || g.Transport == nil {
				t.Errorf("%q: letter %d: %+v lacks epid, idx or transport", refs, i, g)
				continue
			}
			if gr := (row{g.Ref, *g.EPID, *g.Idx, g.Status}); gr != w {
				t.Errorf("%q: letter %d: %+v, want %+v", refs, i, gr, w)
			}
		}
	}
	f([]string{"INV-1"}, row{"INV-1", a.EPID, 0, LetterLodged}, row{"INV-1", a.EPID, 2, LetterLodged})
	f([]string{"nosuch"}, row{"nosuch", "", 0, LetterUnknown})
	f([]string{"INV-2", "nosuch", "INV-1"},
		row{"INV-2", a.EPID, 1, LetterHeld}, row{"INV-2", b.EPID, 0, LetterReceived},
		row{"nosuch", "", 0, LetterUnknown},
		row{"INV-1", a.EPID, 0, LetterLodged}, row{"INV-1", a.EPID, 2, LetterLodged})
	f([]string{"THEIRS", "", "inv-1"}, row{"THEIRS", "", 0, LetterUnknown}, row{"", "", 0, LetterUnknown}, row{"inv-1", "", 0, LetterUnknown})
	f([]string{"nosuch", "nosuch"}, row{"nosuch", "", 0, LetterUnknown}, row{"nosuch", "", 0, LetterUnknown})
}

// TestCancelLetters: cancel_letters cancels the account's Received and
// Held letters with the references, reports Lodged and already Cancelled
// letters as they are and unknown refs as Unknown, leaves another
// account's letters alone, and the cancellation survives a crash and the
// lodgement worker.
func TestCancelLetters(t *testing.T) {
	r := newRig(t)
	a := r.mailing("doc.pdf", pdfPages(1), "m.json", meta("", ref(melbourne, "lodged"), ref(wrongPC, "held"), ref(emailOnly, "mixed")))
	if _, err := r.l.RunOnce(); err != nil {
		t.Fatal(err)
	}
	r.c.Add(time.Minute)
	b := r.mailing("doc.pdf", pdfPages(1), "m.json", meta("", ref(melbourne, "recv"), ref(melbourne, "multi"), ref(emailOnly, "multi"), ref(melbourne, "mixed"), ref(melbourne, "keep")))
	theirs := r.mailingOf("XYZ99999", "doc.pdf", pdfPages(1), "m.json", meta("", ref(melbourne, "recv"), ref(melbourne, "theirs")))
	r.c.Add(time.Minute)
	cancelledAt := r.c.Now().UTC()

	type row struct {
		ref, epid string
		idx       int
		status    string
		cancelled bool
	}
	unknown := func(ref string) row { return row{ref, "", 0, LetterUnknown, false} }
	f := func(refs []string, want ...row) {
		t.Helper()
		got := callLetters(t, r.s.CancelLetters, refsParams("ABC12345", refs...), me)
		if len(got) != len(want) {
			t.Fatalf("%q: %d letters, want %d: %+v", refs, len(got), len(want), got)
		}
		for i, w := range want {
			g := got[i]
			if g.Cancelled == nil {
				t.Errorf("%q: letter %d: %+v: no cancelled field", refs, i, g)
				continue
			}
			gr := row{g.Ref, "", 0, g.Status, *g.Cancelled}
			if (g.EPID == nil) != (w.status == LetterUnknown) || (g.Idx == nil) != (w.status == LetterUnknown) {
				t.Errorf("%q: letter %d: %+v: epid and idx must be given exactly when the status is not Unknown", refs, i, g)
				continue
			}
			if g.EPID != nil {
				gr.epid, gr.idx = *g.EPID, *g.Idx
			}
			if gr != w {
				t.Errorf("%q: letter %d: %+v, want %+v", refs, i, gr, w)
			}
		}
	}
	f([]string{"recv"}, row{"recv", b.EPID, 0, LetterCancelled, true})
	f([]string{"recv"}, row{"recv", b.EPID, 0, LetterCancelled, false}) // already cancelled
	f([]string{"held"}, row{"held", a.EPID, 1, LetterCancelled, true})
	f([]string{"lodged"}, row{"lodged", a.EPID, 0, LetterLodged, false})
	f([]string{"nosuch", "multi", "mixed", "multi"}, // a ref given twice counts once
		unknown("nosuch"),
		row{"multi", b.EPID, 1, LetterCancelled, true}, row{"multi", b.EPID, 2, LetterCancelled, true},
		row{"mixed", a.EPID, 2, LetterLodged, false}, row{"mixed", b.EPID, 3, LetterCancelled, true})
	f([]string{"theirs", "Recv"}, unknown("theirs"), unknown("Recv"))

	// the records: status, time, hold reason cleared; the other account's
	// letters and the letters not named untouched
	check := func(when string) {
		t.Helper()
		ls := r.letters(b.EPID)
		for i, want := range []string{LetterCancelled, LetterCancelled, LetterCancelled, LetterCancelled, LetterReceived} {
			if ls[i].Status != want {
				t.Errorf("%s: mailing b letter %d: %s, want %s", when, i, ls[i].Status, want)
			}
		}
		if !ls[0].Cancelled.Equal(cancelledAt) || !ls[4].Cancelled.IsZero() {
			t.Errorf("%s: cancelled times %v %v, want %v and none", when, ls[0].Cancelled, ls[4].Cancelled, cancelledAt)
		}
		if ls := r.letters(a.EPID); ls[0].Status != LetterLodged || ls[1].Status != LetterCancelled || ls[1].HoldReason != "" || ls[2].Status != LetterLodged {
			t.Errorf("%s: mailing a: %+v", when, ls)
		}
		if ls := r.letters(theirs.EPID); ls[0].Status != LetterReceived || ls[1].Status != LetterReceived {
			t.Errorf("%s: the other account's letters: %+v", when, ls)
		}
	}
	check("after cancel")
	r.crash()
	check("after a crash")
	got := callLetters(t, r.s.GetLetterStatus, refsParams("ABC12345", "recv", "held"), me)
	if len(got) != 2 || got[0].Status != LetterCancelled || got[1].Status != LetterCancelled {
		t.Errorf("get_letter_status after cancel: %+v", got)
	}

	// the worker finishes b's job and lodges only the letter left Received
	if n, err := r.l.RunOnce(); n != 2 || err != nil {
		t.Fatalf("RunOnce: %d %v", n, err)
	}
	if j := r.jobs(); len(j) != 0 {
		t.Errorf("jobs left: %v", j)
	}
	if p, err := r.s.Pack(b.EPID); err != nil || p.Status != PackProcessed {
		t.Errorf("mailing b: %+v %v", p, err)
	}
	ls := r.letters(b.EPID)
	for i, want := range []string{LetterCancelled, LetterCancelled, LetterCancelled, LetterCancelled, LetterLodged} {
		if ls[i].Status != want {
			t.Errorf("after the worker: mailing b letter %d: %s, want %s", i, ls[i].Status, want)
		}
	}
	f([]string{"keep"}, row{"keep", b.EPID, 4, LetterLodged, false})

	// through the JSON-RPC server, as cmd/lodge registers it
	srv := rpc.New(r.eng, rpc.Config{}, nil)
	if err := srv.Register("cancel_letters", r.s.CancelLetters, CancelLettersDoc); err != nil {
		t.Fatal(err)
	}
	out, _ := srv.Handle(nil, []byte(`{"jsonrpc":"2.0","id":3,"method":"cancel_letters","params":{"account":" abc12345","refs":["recv","zzz"]}}`), me)
	want := `{"jsonrpc":"2.0","id":3,"result":{"letters":[{"epid":"` + b.EPID + `","ref":"recv","idx":0,"status":"Cancelled","cancelled":false},{"ref":"zzz","status":"Unknown","cancelled":false}]}}`
	if string(out) != want {
		t.Errorf("JSON-RPC answer\n%s\nwant\n%s", out, want)
	}
}

// TestLetterRPCBadParams: get_letter_status and cancel_letters refuse
// malformed params, another account and a bad number of refs with
// -32602, and change nothing.
func TestLetterRPCBadParams(t *testing.T) {
	r := newRig(t)
	ss := r.mailing("doc.pdf", pdfPages(1), "m.json", meta("", ref(melbourne, "x")))
	many := make([]string, maxRefs+1)
	for i := range many {
		many[i] = "x"
	}
	for _, m := range []struct {
		name string
		call rpc.Method
	}{{"get_letter_status", r.s.GetLetterStatus}, {"cancel_letters", r.s.CancelLetters}} {
		f := func(p rpc.Principal, params, msg string) {
			t.Helper()
			out, code, got := m.call(nil, []byte(params), p)
			if code != rpc.CodeInvalidParams || !strings.Contains(got, msg) || len(out) != 0 {
				t.Errorf("%s %.60s: %d %q %s, want %d %q", m.name, params, code, got, out, rpc.CodeInvalidParams, msg)
			}
		}
		f(me, ``, "invalid params: want")
		f(me, `[]`, "invalid params: want")
		f(me, `null`, "not for account")
		f(me, `{"account":"ABC12345","refs":"x"}`, "invalid params: want")
		f(me, `{"account":"ABC12345","refs":[1]}`, "invalid params: want")
		f(me, `{"account":12345678,"refs":["x"]}`, "invalid params: want")
		f(me, `{"account":"ABC12345"}`, "give 1 to 1000 refs")
		f(me, `{"account":"ABC12345","refs":[]}`, "give 1 to 1000 refs")
		f(me, refsParams("ABC12345", many...), "give 1 to 1000 refs")
		f(me, `{"refs":["x"]}`, "not for account")
		f(me, `{"account":"XYZ99999","refs":["x"]}`, "not for account XYZ99999")
		f(me, `{"account":"ABC1234","refs":["x"]}`, "not for account ABC1234")
		f(rpc.Principal{Account: "XYZ99999", User: "them"}, `{"account":"ABC12345","refs":["x"]}`, "not for account ABC12345")
		// the account is trimmed and upper-cased, as get_session_id does
		if got := callLetters(t, m.call, `{"account":" abc12345 ","refs":["nosuch"]}`, me); len(got) != 1 || got[0].Status != LetterUnknown {
			t.Errorf("%s, lower-case account: %+v", m.name, got)
		}
	}
	if ls := r.letters(ss.EPID); ls[0].Status != LetterReceived {
		t.Errorf("letter after refused calls: %s", ls[0].Status)
	}
	if n := len(maxRefsOK(t, r)); n != maxRefs {
		t.Errorf("%d refs: %d entries", maxRefs, n)
	}
}

// maxRefsOK calls cancel_letters with maxRefs distinct refs, all unknown.
func maxRefsOK(t *testing.T, r *rig) []entry {
	refs := make([]string, maxRefs)
	for i := range refs {
		refs[i] = fmt.Sprint("none-", i)
	}
	return callLetters(t, r.s.CancelLetters, refsParams("ABC12345", refs...), me)
}

// TestCancelRacesWorker: cancel_letters and the lodgement worker run at
// the same time on the same mailings. Every letter ends either Cancelled,
// and the call said it cancelled it, or Lodged, and the call reported it
// Lodged: the worker never overwrites a cancellation and the cancellation
// never undoes a lodgement. Every job is finished.
func TestCancelRacesWorker(t *testing.T) {
	r := newRig(t)
	const rounds, letters = 8, 40
	for round := range rounds {
		var ls []string
		var refs []string
		for i := range letters {
			refs = append(refs, fmt.Sprintf("r%d-%d", round, i))
			ls = append(ls, ref(melbourne, refs[i]))
		}
		ss := r.mailing("doc.pdf", pdfPages(1), "m.json", meta("", ls...))
		var wg sync.WaitGroup
		var got [letters][]entry
		var runErr error
		// one ref a call, so that the calls interleave with the worker,
		// which starts among them
		for i := range letters {
			if i == letters/4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, runErr = r.l.RunOnce()
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, code, msg := r.s.CancelLetters(nil, []byte(refsParams("ABC12345", refs[i])), me)
				if code != 0 {
					t.Errorf("cancel %s: %d %s", refs[i], code, msg)
					return
				}
				var res struct{ Letters []entry }
				if err := json.Unmarshal(out, &res); err != nil {
					t.Error(err)
				}
				got[i] = res.Letters
			}()
		}
		wg.Wait()
		if runErr != nil {
			t.Fatal(runErr)
		}
		if _, err := r.l.RunOnce(); err != nil { // a job committed after the first pass looked
			t.Fatal(err)
		}
		stored := r.letters(ss.EPID)
		var nc int
		for i, l := range stored {
			if len(got[i]) != 1 || got[i][0].Cancelled == nil {
				t.Fatalf("round %d letter %d: cancel answered %+v", round, i, got[i])
			}
			g := got[i][0]
			switch {
			case *g.Cancelled && g.Status == LetterCancelled && l.Status == LetterCancelled:
				nc++
			case !*g.Cancelled && g.Status == LetterLodged && l.Status == LetterLodged:
			default:
				t.Errorf("round %d letter %d: cancel said %s (cancelled %v), stored %s", round, i, g.Status, *g.Cancelled, l.Status)
			}
		}
		if p, err := r.s.Pack(ss.EPID); err != nil || p.Status != PackProcessed {
			t.Errorf("round %d: mailing %+v %v", round, p, err)
		}
		t.Logf("round %d: %d of %d cancelled", round, nc, letters)
	}
	if j := r.jobs(); len(j) != 0 {
		t.Errorf("jobs left: %v", j)
	}
}

// TestLockAll: the locks of several sessions are taken once each, in
// order, whatever the order and repetition of the sessions.
func TestLockAll(t *testing.T) {
	r := newRig(t)
	var epids []string
	for range 600 { // more sessions than locks: some share one
		e, err := NewEPID()
		if err != nil {
			t.Fatal(err)
		}
		epids = append(epids, e, e)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				order := append([]string(nil), epids...)
				if i%2 == 1 {
					for a, b := 0, len(order)-1; a < b; a, b = a+1, b-1 {
						order[a], order[b] = order[b], order[a]
					}
				}
				for range 20 {
					r.s.lockAll(order)()
					mu := r.s.lock(order[i])
					mu.Lock()
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("lockAll deadlocked")
	}
}
