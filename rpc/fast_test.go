package rpc_test

import (
	"testing"

	"github.com/lodge-mail/lodge/rpc"
)

// TestFastPath: which bodies the fast path takes, and that it answers
// them exactly as the general path does.
func TestFastPath(t *testing.T) {
	fast := newServer(t, rpc.Config{})
	general := newServer(t, rpc.Config{})
	general.SetFast(false)
	f := func(body string, takes bool) {
		t.Helper()
		if got := fast.TakesFastPath([]byte(body)); got != takes {
			t.Errorf("%s: fast path takes it: %v, want %v", body, got, takes)
		}
		want, wantRespond := general.Handle(nil, []byte(body), rpc.Principal{})
		got, gotRespond := fast.Handle(nil, []byte(body), rpc.Principal{})
		if string(got) != string(want) || gotRespond != wantRespond {
			t.Errorf("%s:\nfast    %s (%v)\ngeneral %s (%v)", body, got, gotRespond, want, wantRespond)
		}
	}
	// taken: the shapes callers send
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Joe Blogs","10 Jones St","Melbourne VIC 3000"]}}`, true)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"Joe Blogs, 10 Jones St, Melbourne VIC 3000"}}`, true)
	f(`{"method":"addr_check","params":{"detail":true,"address":["Jo","1 Main St","Sydney NSW 2000"]},"id":"req-7","jsonrpc":"2.0"}`, true)
	f(`{"jsonrpc":"2.0","id":-12,"method":"addr_check","params":{"address":["Jo","PO Box 5","Sydney NSW 2001"],"detail":false}}`, true)
	f(` { "jsonrpc" : "2.0" ,
	  "id" : 0 , "method" : "addr_check" , "params" : { "address" : [ "José Blogs" , "10 Rue de Rivoli" , "75001 Paris" , "France" ] } } `, true)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":[]}}`, true)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":""}}`, true)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["","",""," "]}}`, true)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["a","b","c","d","e","f","g","h","i"]}}`, true)
	f(`{"jsonrpc":"2.0","id":"","method":"addr_check","params":{"address":["Jo","1 Main St\u007f","Sydney NSW 2000"]}}`, false)
	f("{\"jsonrpc\":\"2.0\",\"id\":\"\",\"method\":\"addr_check\",\"params\":{\"address\":[\"Jo\",\"1 Main St\x7f\",\"Sydney NSW 2000\"]}}", true)

	// declined, valid: the general path answers
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jo\n1 Main St","Sydney NSW 2000"]}}`, false)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jos\u00e9","1 Main St","Sydney NSW 2000"]}}`, false)
	f(`{"jsonrpc":"2.0","id":null,"method":"addr_check","params":{"address":["Jo","1 Main St","Sydney NSW 2000"]}}`, false)
	f(`{"jsonrpc":"2.0","id":1.5,"method":"addr_check","params":{"address":["Jo","1 Main St","Sydney NSW 2000"]}}`, false)
	f(`{"jsonrpc":"2.0","id":1e3,"method":"addr_check","params":{"address":["Jo","1 Main St","Sydney NSW 2000"]}}`, false)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"addresses":[["Jo","1 Main St","Sydney NSW 2000"]]}}`, false)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jo","1 Main St","Sydney NSW 2000"],"detail":null}}`, false)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jo","1 Main St","Sydney NSW 2000"]},"extra":1}`, false)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jo","1 Main St","Sydney NSW 2000"]},"id":2}`, false)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"a","address":"b"}}`, false)
	f(`{"jsonrpc":"2.0","method":"addr_check","params":{"address":["Jo","1 Main St","Sydney NSW 2000"]}}`, false)
	f(`{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}`, false)
	f(`[{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jo","1 Main St","Sydney NSW 2000"]}}]`, false)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":[`+lines(65)+`]}}`, false)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":[`+lines(64)+`]}}`, true)

	// declined, invalid or wrong: the general path's errors
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jo","1 Main St","Sydney NSW 2000"]}`, false)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jo","1 Main St","Sydney NSW 2000"]}}x`, false)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jo","1 Main St","Sydney NSW 2000",]}}`, false)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jo",,"Sydney NSW 2000"]}}`, false)
	f(`{"jsonrpc":"2.0","id":01,"method":"addr_check","params":{"address":["Jo","1 Main St","Sydney NSW 2000"]}}`, false)
	f(`{"jsonrpc":"2.0","id":-,"method":"addr_check","params":{"address":["Jo","1 Main St","Sydney NSW 2000"]}}`, false)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jo",1,"Sydney NSW 2000"]}}`, false)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":{"line":"Jo"}}}`, false)
	f(`{"jsonrpc":"1.0","id":1,"method":"addr_check","params":{"address":["Jo","1 Main St","Sydney NSW 2000"]}}`, false)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check2","params":{"address":["Jo","1 Main St","Sydney NSW 2000"]}}`, false)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jo","1 Main St","Sydney NSW 2000"],"detail":tru}}`, false)
	f("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"addr_check\",\"params\":{\"address\":[\"Jo\",\"1 Main \xff St\",\"Sydney NSW 2000\"]}}", false)
	f("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"addr_check\",\"params\":{\"address\":[\"Jo\",\"1 Main \x01 St\",\"Sydney NSW 2000\"]}}", false)
	f("{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\",\"method\":\"addr_check\",\"params\":{\"address\":[\"Jo\",\"1 Main St\",\"Sydney NSW 2000\"]}}", false)
	f(`{"jsonrpc":"2.0","id":"`+string(make([]byte, 300))+`","method":"addr_check","params":{"address":["Jo"]}}`, false)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jo","1 Main St","Sydney NSW 2000`, false)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"`, false)
	f(`{`, false)
	f(`{}`, false)

	// the limits the general path enforces
	shallow := newServer(t, rpc.Config{MaxDepth: 2})
	if shallow.TakesFastPath([]byte(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jo"]}}`)) {
		t.Error("MaxDepth 2: the fast path took three levels")
	}
	short := newServer(t, rpc.Config{MaxIDBytes: 3})
	if short.TakesFastPath([]byte(`{"jsonrpc":"2.0","id":1234,"method":"addr_check","params":{"address":["Jo"]}}`)) {
		t.Error("MaxIDBytes 3: the fast path took a 4-byte id")
	}
}

func lines(n int) string {
	b := make([]byte, 0, n*4)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `"x"`...)
	}
	return string(b)
}

// FuzzFastPath: whatever the body, the answer with the fast path is the
// answer without it.
func FuzzFastPath(f *testing.F) {
	fast := newServer(f, rpc.Config{})
	general := newServer(f, rpc.Config{})
	general.SetFast(false)
	for _, b := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Joe Blogs","10 Jones St","Melbourne VIC 3000"]}}`,
		`{"jsonrpc":"2.0","id":"a","method":"addr_check","params":{"address":"Jo, PO Box 5, Sydney NSW 2001","detail":true}}`,
		` {"params":{"detail":false,"address":[]},"method":"addr_check","id":-0,"jsonrpc":"2.0"} `,
		`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jo","1 Main St","Sydney NSW 2000"]},"id":2}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"addr_check\",\"params\":{\"address\":[\"\xe2\x82\",\"Sydney\"]}}",
	} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		want, wantRespond := general.Handle(nil, body, rpc.Principal{})
		got, gotRespond := fast.Handle(nil, body, rpc.Principal{})
		if string(got) != string(want) || gotRespond != wantRespond {
			t.Fatalf("body %q:\nfast    %s (%v)\ngeneral %s (%v)", body, got, gotRespond, want, wantRespond)
		}
	})
}

// BenchmarkHandleSingle: one single-address call, with the fast path and
// with the general path alone, side by side (go test -bench HandleSingle).
func BenchmarkHandleSingle(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Joe Blogs","10 Jones St","Melbourne VIC 3000"]}}`)
	for _, path := range []string{"fast", "general"} {
		b.Run(path, func(b *testing.B) {
			s := newServer(b, rpc.Config{})
			s.SetFast(path == "fast")
			buf := make([]byte, 0, 4096)
			b.ReportAllocs()
			for b.Loop() {
				s.Handle(buf[:0], body, rpc.Principal{})
			}
		})
	}
}
