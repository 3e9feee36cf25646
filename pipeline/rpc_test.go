package pipeline

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/rpc"
)

func call(t *testing.T, mr *Mailroom, method, params string, account string) (map[string]any, int, string) {
	t.Helper()
	prefix := []byte(`{"jsonrpc":"2.0","id":1,"result":`)
	out, code, msg := mr.Methods()[method].Handle(append([]byte{}, prefix...), []byte(params), rpc.Principal{Account: account, User: "jo"})
	if !bytes.HasPrefix(out, prefix) {
		t.Fatalf("%s: the response buffer was not kept: %q", method, out)
	}
	if code != 0 {
		return nil, code, msg
	}
	var v map[string]any
	if err := json.Unmarshal(out[len(prefix):], &v); err != nil {
		t.Fatalf("%s: %v: %s", method, err, out)
	}
	return v, 0, ""
}

func TestRPCMethods(t *testing.T) { eachStore(t, testRPCMethods) }

func testRPCMethods(t *testing.T, open storeOpener) {
	mr, _, c, _ := newMailroom(t, open)
	var ls []Letter
	for i := 0; i < 250; i++ {
		ls = append(ls, postal(i, fmt.Sprintf("ref%d", i), "X", "1 Main St", "SYDNEY NSW 2000"))
	}
	bad := postal(250, "bad", "Al", "2 Main St", "NOWHERE NSW 2999")
	bad.Address = &Verdict{Status: "invalid", Nation: "AUS", Message: "no such locality"}
	ls = append(ls, bad)
	if err := mr.Submit(Mailing{EPID: "E1", Account: "ABC12345", CustHold: true, Title: "Statements"}, ls); err != nil {
		t.Fatal(err)
	}
	run(t, mr)

	// get_mailing pages through the letters
	v, code, msg := call(t, mr, "get_mailing", `{"account":"abc12345","session_id":"E1"}`, "ABC12345")
	if code != 0 {
		t.Fatal(msg)
	}
	if v["letters_total"].(float64) != 251 || len(v["letters"].([]any)) != 100 || v["next"].(float64) != 100 {
		t.Fatalf("first page: total %v, %d letters, next %v", v["letters_total"], len(v["letters"].([]any)), v["next"])
	}
	counts := v["counts"].(map[string]any)
	if counts["Held"].(float64) != 251 {
		t.Fatalf("counts %v", counts)
	}
	v, _, _ = call(t, mr, "get_mailing", `{"account":"ABC12345","session_id":"E1","from":200,"limit":1000}`, "ABC12345")
	if len(v["letters"].([]any)) != 51 || v["next"] != nil {
		t.Fatalf("last page: %d letters, next %v", len(v["letters"].([]any)), v["next"])
	}
	last := v["letters"].([]any)[50].(map[string]any)
	if last["hold"] != "address" || last["verdict"].(map[string]any)["status"] != "invalid" || len(last["events"].([]any)) != 2 {
		t.Fatalf("the invalid letter: %v", last)
	}

	// release the mailing: the customer's holds go, the address hold stays
	v, code, msg = call(t, mr, "release_letters", `{"account":"ABC12345","session_id":"E1"}`, "ABC12345")
	if code != 0 {
		t.Fatal(msg)
	}
	outs := v["letters"].([]any)
	if len(outs) != 251 || outs[0].(map[string]any)["changed"] != true || outs[250].(map[string]any)["changed"] != false {
		t.Fatalf("release: %d outcomes", len(outs))
	}
	// correct the held one by reference
	v, code, msg = call(t, mr, "correct_letter", `{"account":"ABC12345","ref":"bad","postal":"Al\n2 Main St\nSYDNEY NSW 2000"}`, "ABC12345")
	if code != 0 || v["verdict"].(map[string]any)["status"] != "matched" || v["letters"].([]any)[0].(map[string]any)["changed"] != true {
		t.Fatalf("correct: %v %d %s", v, code, msg)
	}
	// cancel one by index
	v, _, _ = call(t, mr, "cancel_letters", `{"account":"ABC12345","session_id":"E1","letters":[3]}`, "ABC12345")
	if v["letters"].([]any)[0].(map[string]any)["status"] != "Cancelled" {
		t.Fatalf("cancel: %v", v)
	}
	c.Add(time.Hour)
	run(t, mr)
	v, _, _ = call(t, mr, "get_letter_status", `{"account":"ABC12345","refs":["ref0","ref3","bad","nope"]}`, "ABC12345")
	got := v["letters"].([]any)
	var sts []string
	for _, g := range got {
		sts = append(sts, g.(map[string]any)["status"].(string))
	}
	if strings.Join(sts, ",") != "Processing,Cancelled,Processing,Unknown" {
		t.Fatalf("statuses %v", sts)
	}
	first := got[0].(map[string]any)
	if first["transport"] != "POST" || first["price"].(float64) != 1.5 || first["dbid"].(float64) <= 0 || first["batch"] == "" {
		t.Fatalf("letter status %v", first)
	}

	// hostile and wrong params: an error, the buffer kept, nothing changed
	f := func(method, params, account, want string) {
		t.Helper()
		_, code, msg := call(t, mr, method, params, account)
		if code != rpc.CodeInvalidParams || !strings.Contains(msg, want) {
			t.Fatalf("%s %s: %d %q, want %q", method, params, code, msg, want)
		}
	}
	f("get_mailing", `{"account":"ABC12345","session_id":"E1"}`, "XYZ99999", "not for account")
	f("get_mailing", `{"account":"XYZ99999","session_id":"E1"}`, "XYZ99999", "no such mailing")
	f("get_mailing", `{"account":"ABC12345","session_id":"E1","limit":0}`, "ABC12345", "limit 1 to 1000")
	f("get_mailing", `{"account":"ABC12345","session_id":"E1","from":-1}`, "ABC12345", "from at least 0")
	f("get_mailing", `[1,2]`, "ABC12345", "want")
	f("get_mailing", ``, "ABC12345", "want")
	f("get_letter_status", `{"account":"ABC12345","refs":[]}`, "ABC12345", "1 to 1000 refs")
	f("cancel_letters", `{"account":"ABC12345"}`, "ABC12345", "give refs")
	f("cancel_letters", `{"account":"ABC12345","letters":[1]}`, "ABC12345", "letters are indexes")
	f("cancel_letters", `{"account":"ABC12345","session_id":"E1","letters":[251]}`, "ABC12345", "has no letter 251")
	f("release_letters", `{"account":"ABC12345","session_id":"NOPE"}`, "ABC12345", "no such mailing")
	f("correct_letter", `{"account":"ABC12345","ref":"bad","session_id":"E1","letter":1,"postal":"a"}`, "ABC12345", "name one letter")
	f("correct_letter", `{"account":"ABC12345","ref":"bad","postal":42}`, "ABC12345", "postal is the new address")
	f("correct_letter", `{"account":"ABC12345","ref":"bad","postal":"\n \n"}`, "ABC12345", "postal is the new address")
	// a reference of several letters names none of them
	if err := mr.Submit(Mailing{EPID: "E2", Account: "ABC12345"}, []Letter{postal(0, "ref0", "X", "1 Main St", "SYDNEY NSW 2000")}); err != nil {
		t.Fatal(err)
	}
	f("correct_letter", `{"account":"ABC12345","ref":"ref0","postal":"A\nB\nSYDNEY NSW 2000"}`, "ABC12345", `ref "ref0" names 2 letters`)
}
