package rpc_test

import (
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/rpc"
)

// FuzzHandle: any body gets valid JSON back (or nothing, for
// notifications), never an internal error (a recovered panic). Valid means
// valid UTF-8 without lone surrogate escapes too, whatever bytes the body
// holds (validJSONText). HandleTo, writing after every result, writes the
// same answer.
func FuzzHandle(f *testing.F) {
	s := newServer(f, rpc.Config{MaxAddresses: 50, MaxBatch: 20, MaxRequestAddresses: 60})
	s.SetFlushBytes(1)
	for _, b := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Joe Blogs","10 Jones St","Melbourne VIC 3000"]}}`,
		`{"jsonrpc":"2.0","id":"x","method":"addr_check","params":{"addresses":["a\nb\nc",["d","e\u00e9","\ud83d\ude00"]],"detail":true}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"rpc.discover"},{"jsonrpc":"2.0","method":"addr_check"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"\ud800\\\"\u0000"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"addr_check\",\"params\":{\"address\":[\"Jo\",\"1 Main \xff\xfe St\",\"Sydney NSW 2000\xe2\x82\"]}}",
		`{"jsonrpc":"2.0","id":"\udc00","method":"addr_check","params":{"addresses":["Jo\n1 \ud800\ud800\\ud800 St\nSydney NSW 2000"]}}`,
		`[[[[]]]]`, `{"a":{"b":[1,{"c":"d"}]}}`, `"\u"`, `nul`,
		`[{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"addresses":["a,b,c",["d",1]]}}, "],[\"", 2]`,
	} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		out, respond := s.Handle(nil, body, rpc.Principal{})
		w := &flakyWriter{}
		_, streamed, err := s.HandleTo(w, nil, body, rpc.Principal{})
		if got := strings.Join(w.pieces, ""); err != nil || streamed != respond || (respond && got != string(out)) || (!respond && got != "") {
			t.Fatalf("body %q: HandleTo wrote %q (%v, %v), Handle %q (%v)", body, got, streamed, err, out, respond)
		}
		if !respond {
			if len(out) != 0 {
				t.Fatalf("no response but %d bytes", len(out))
			}
			return
		}
		if !validJSONText(out) {
			t.Fatalf("body %q: invalid JSON response %s", body, out)
		}
		if strings.Contains(string(out), "-32603") {
			t.Fatalf("body %q: internal error %s", body, out)
		}
	})
}
