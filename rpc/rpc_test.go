package rpc_test

import (
	stdjson "encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/VictoriaMetrics/metrics"
	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/testref"
	"github.com/lodge-mail/lodge/rpc"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testref.Cleanup()
	os.Exit(code)
}

func newServer(tb testing.TB, cfg rpc.Config) *rpc.Server {
	tb.Helper()
	e, err := engine.New(testref.Index(tb).Ref, engine.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(e.Close)
	return rpc.New(e, cfg, nil)
}

// validJSONText reports whether b is a JSON text that any parser takes:
// valid JSON, valid UTF-8 (RFC 8259 section 8.1) and no \u escape of a lone
// surrogate (section 8.2; I-JSON). encoding/json's Valid checks only the
// first.
func validJSONText(b []byte) bool {
	if !stdjson.Valid(b) || !utf8.Valid(b) {
		return false
	}
	hex := func(i int) rune {
		r, err := strconv.ParseUint(string(b[i:i+4]), 16, 16)
		if err != nil {
			return -1
		}
		return rune(r)
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if b[i+1] != 'u' {
			i++
			continue
		}
		r := hex(i + 2)
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return false // a low surrogate not after a high one
		case r >= 0xd800 && r <= 0xdbff:
			if i+12 > len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
				return false
			}
			if r2 := hex(i + 8); r2 < 0xdc00 || r2 > 0xdfff {
				return false
			}
			i += 11
		default:
			i += 5
		}
	}
	return true
}

// casesConfig is the configuration responseCases are answered with.
var casesConfig = rpc.Config{MaxAddresses: 3, MaxBatch: 4, MaxRequestAddresses: 5}

// TestResponses: request bodies and the exact responses they get.
func TestResponses(t *testing.T) {
	s := newServer(t, casesConfig)
	responseCases(func(req, want string) {
		t.Helper()
		got, respond := s.Handle(nil, []byte(req), rpc.Principal{})
		if !respond {
			got = []byte("<none>")
		}
		if string(got) != want {
			t.Errorf("request %s\n got %s\nwant %s", req, got, want)
		}
		if respond && !validJSONText(got) {
			t.Errorf("request %s: response is not valid JSON: %s", req, got)
		}
	})
}

// responseCases calls f with request bodies and the exact responses
// casesConfig gives them ("<none>" for no response).
func responseCases(f func(req, want string)) {
	const ok = `"status":"matched","nation":"AUS"`
	// single address, both forms, echoed byte for byte
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Joe Blogs","10 Jones St","Melbourne VIC 3000"]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{`+ok+`,"address":["Joe Blogs","10 Jones St","Melbourne VIC 3000"]}}`)
	f(`{"jsonrpc":"2.0","id":"a","method":"addr_check","params":{"address":"Joe Blogs\n10 Jones St\nMelbourne VIC 3000"}}`,
		`{"jsonrpc":"2.0","id":"a","result":{`+ok+`,"address":"Joe Blogs\n10 Jones St\nMelbourne VIC 3000"}}`)
	f(`{"params":{"address":"Joe Blogs, 10 Jones St, Melbourne VIC 3000"},"method":"addr_check","id":2,"jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","id":2,"result":{`+ok+`,"address":"Joe Blogs, 10 Jones St, Melbourne VIC 3000"}}`)
	f(`{"jsonrpc":"2.0","id":3,"method":"addr_check","params":{"address":[ "Joe\u0020Blogs" , "10 Jones St","Melbourne\tVIC 3000"]}}`,
		`{"jsonrpc":"2.0","id":3,"result":{`+ok+`,"address":[ "Joe\u0020Blogs" , "10 Jones St","Melbourne\tVIC 3000"]}}`)
	// what would make the echo no JSON text is written \ufffd, as
	// encoding/json writes it: bytes that are not UTF-8 (raw ff fe, a
	// sequence cut short, a surrogate encoded as UTF-8) and lone surrogate
	// escapes. Such a line is not text: the address is invalid.
	const bad = `"status":"invalid","nation":"AUS"`
	f("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"addr_check\",\"params\":{\"address\":[\"Jo\",\"1 Main \xff\xfe St\",\"Sydney NSW 2000\"]}}",
		`{"jsonrpc":"2.0","id":1,"result":{`+bad+`,"address":["Jo","1 Main \ufffd\ufffd St","Sydney NSW 2000"],"message":"line 2 is not valid UTF-8 text"}}`)
	f("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"addr_check\",\"params\":{\"address\":\"Jo\\n1 Main St\\nSydney NSW 2000\xe2\x82\"}}",
		`{"jsonrpc":"2.0","id":1,"result":{`+bad+`,"address":"Jo\n1 Main St\nSydney NSW 2000\ufffd\ufffd","message":"line 3 is not valid UTF-8 text"}}`)
	f("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"addr_check\",\"params\":{\"address\":[\"Jo \xed\xa0\x80\",\"1 Main St\",\"Sydney NSW 2000\"]}}",
		`{"jsonrpc":"2.0","id":1,"result":{`+bad+`,"address":["Jo \ufffd\ufffd\ufffd","1 Main St","Sydney NSW 2000"],"message":"line 1 is not valid UTF-8 text"}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jo","1 Main \ud800 St","Sydney NSW 2000"]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{`+bad+`,"address":["Jo","1 Main \ufffd St","Sydney NSW 2000"],"message":"line 2 is not valid UTF-8 text"}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"Jo\n1 Main \uDC00\ud800\u0041 St\nSydney NSW 2000\uDBFF"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{`+bad+`,"address":"Jo\n1 Main \ufffd\ufffd\u0041 St\nSydney NSW 2000\ufffd","message":"line 2 is not valid UTF-8 text"}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"addresses":[["Jo","1 Main St","Sydney NSW 2000\udfff"]]}}`,
		`{"jsonrpc":"2.0","id":1,"result":[{`+bad+`,"address":["Jo","1 Main St","Sydney NSW 2000\ufffd"],"message":"line 3 is not valid UTF-8 text"}]}`)
	// ... while surrogate pairs, other escapes and an escaped backslash before "u" are echoed as sent
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jo \ud83d\ude00 \uD83D\uDE00\u00e9","1 Main \\ud800 St","Sydney NSW 2000"]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{`+ok+`,"address":["Jo \ud83d\ude00 \uD83D\uDE00\u00e9","1 Main \\ud800 St","Sydney NSW 2000"]}}`)
	// ... and the same holds for the id
	f("{\"jsonrpc\":\"2.0\",\"id\":\"a\xffb\",\"method\":\"n\xffo\"}",
		`{"jsonrpc":"2.0","id":"a\ufffdb","error":{"code":-32601,"message":"method not found: n\ufffdo"}}`)
	f(`{"jsonrpc":"2.0","id":"\ud800\ud83d\ude00","method":"nope"}`,
		`{"jsonrpc":"2.0","id":"\ufffd\ud83d\ude00","error":{"code":-32601,"message":"method not found: nope"}}`)
	// mixed forms, in order
	f(`{"jsonrpc":"2.0","id":4,"method":"addr_check","params":{"addresses":[["Joe Blogs","10 Jones St","Smithville NSW 2987"],"a\nb",`+
		`"10 Downing St, London SW1A 2AA, UK"]}}`,
		`{"jsonrpc":"2.0","id":4,"result":[{"status":"unmatched","nation":"AUS","address":["Joe Blogs","10 Jones St","Smithville NSW 2987"]},`+
			`{"status":"invalid","nation":"AUS","address":"a\nb","message":"an address needs 3 to 6 lines, this one has 2"},`+
			`{"status":"international","nation":"GBR","address":"10 Downing St, London SW1A 2AA, UK"}]}`)
	f(`{"jsonrpc":"2.0","id":5,"method":"addr_check","params":{"addresses":[]}}`, `{"jsonrpc":"2.0","id":5,"result":[]}`)
	// ids echoed as sent
	f(`{"jsonrpc":"2.0","id":null,"method":"addr_check","params":{"address":"a,b,c"}}`,
		`{"jsonrpc":"2.0","id":null,"result":{"status":"invalid","nation":"AUS","address":"a,b,c","message":"no state and postcode in the last lines"}}`)
	f(`{"jsonrpc":"2.0","id":1.50e+3,"method":"rpc.nope"}`, `{"jsonrpc":"2.0","id":1.50e+3,"error":{"code":-32601,"message":"method not found: rpc.nope"}}`)
	f(`{"jsonrpc":"2.0","id":"\u00e9\"x","method":"nope"}`, `{"jsonrpc":"2.0","id":"\u00e9\"x","error":{"code":-32601,"message":"method not found: nope"}}`)
	f(`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"nope"}`, `{"jsonrpc":"2.0","id":123456789012345678901234567890,"error":{"code":-32601,"message":"method not found: nope"}}`)
	f(`{"jsonrpc":"2.0","id":"`+strings.Repeat("9", 300)+`","method":"nope"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: id longer than 256 bytes"}}`)
	f(`{"jsonrpc":"2.0","id":{},"method":"nope"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: id must be a string, a number or null"}}`)
	// every standard error
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":[}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the body is not valid JSON"}}`)
	f(``, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: empty body"}}`)
	f(strings.Repeat("[", 40)+strings.Repeat("]", 40), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: JSON nested deeper than 32 levels"}}`)
	f(`{"jsonrpc":"2.0","id":1} x`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the body is not valid JSON"}}`)
	f(`"hello"`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: want a JSON object"}}`)
	f(`[]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: empty batch"}}`)
	f(`{"id":1,"method":"addr_check"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\""}}`)
	f(`{"jsonrpc":"1.0","id":1,"method":"addr_check"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\""}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":7}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request: \"method\" must be a string"}}`)
	f(`{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request: \"method\" must be a string"}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":"x"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request: \"params\" must be an object or an array"}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: addr_check needs params with \"address\" or \"addresses\""}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":["a"]}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: params must be an object with \"address\" or \"addresses\""}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: addr_check needs \"address\" (one address) or \"addresses\" (an array of them)"}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"a","addresses":[]}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: give \"address\" or \"addresses\", not both"}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":7}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: address must be a string or an array of strings"}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["a",1,"c"]}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: address line 1 is not a string"}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"addresses":"a,b,c"}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: \"addresses\" must be an array"}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"addresses":["a,b,c",null]}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: addresses[1] must be a string or an array of strings"}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"addresses":["a","b","c","d"]}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: more than 3 addresses in one call"}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"a","detail":"yes"}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: \"detail\" must be true or false"}}`)
	// notifications get nothing, alone or in a batch
	f(`{"jsonrpc":"2.0","method":"addr_check","params":{"address":"a,b,c"}}`, `<none>`)
	f(`[{"jsonrpc":"2.0","method":"addr_check","params":{"address":"a,b,c"}},{"jsonrpc":"2.0","method":"x"}]`, `<none>`)
	// batches: in order, notifications skipped, bad members answered
	f(`[{"jsonrpc":"2.0","id":1,"method":"nope"},{"jsonrpc":"2.0","method":"addr_check","params":{"address":"a"}},1,{"jsonrpc":"2.0","id":2,"method":"rpc.x"}]`,
		`[{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found: nope"}},`+
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: want a JSON object"}},`+
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found: rpc.x"}}]`)
	f(`[1,2,3,4,5]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a batch may hold at most 4 requests"}}`)
	f(`[{"a":[1,2,{"b":"],,"}]}, "x\",", 1e3 ,null,[]]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a batch may hold at most 4 requests"}}`)
	f(` [ null ] `, `[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: want a JSON object"}}]`)
	// at most 5 addresses in one request: counted in order over the
	// calls of a batch, notifications included; the call that passes the
	// limit and every addr_check call after it get -32602
	const three = `{"jsonrpc":"2.0","id":%d,"method":"addr_check","params":{"addresses":["a,b,c","d,e,f","g,h,i"]}}`
	const one = `{"jsonrpc":"2.0","id":%d,"method":"addr_check","params":{"address":"a,b,c"}}`
	const budget = `{"code":-32602,"message":"invalid params: more than 5 addresses in one HTTP request (the calls of a batch count together): send the rest in another request"}`
	const inv = `{"status":"invalid","nation":"AUS","address":"%s","message":"no state and postcode in the last lines"}`
	abc, def, ghi := fmt.Sprintf(inv, "a,b,c"), fmt.Sprintf(inv, "d,e,f"), fmt.Sprintf(inv, "g,h,i")
	f(`[`+fmt.Sprintf(three, 1)+`,`+fmt.Sprintf(three, 2)+`,`+fmt.Sprintf(one, 3)+`]`,
		`[{"jsonrpc":"2.0","id":1,"result":[`+abc+`,`+def+`,`+ghi+`]},{"jsonrpc":"2.0","id":2,"error":`+budget+`},{"jsonrpc":"2.0","id":3,"error":`+budget+`}]`)
	f(`[`+fmt.Sprintf(three, 1)+`,`+fmt.Sprintf(one, 2)+`,`+fmt.Sprintf(one, 3)+`,`+fmt.Sprintf(one, 4)+`]`,
		`[{"jsonrpc":"2.0","id":1,"result":[`+abc+`,`+def+`,`+ghi+`]},{"jsonrpc":"2.0","id":2,"result":`+abc+`},{"jsonrpc":"2.0","id":3,"result":`+abc+`},{"jsonrpc":"2.0","id":4,"error":`+budget+`}]`)
	f(`[{"jsonrpc":"2.0","method":"addr_check","params":{"addresses":["a,b,c","d,e,f","g,h,i"]}},`+fmt.Sprintf(three, 2)+`,{"jsonrpc":"2.0","id":3,"method":"rpc.nope"}]`,
		`[{"jsonrpc":"2.0","id":2,"error":`+budget+`},{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"method not found: rpc.nope"}}]`)
	// a call that fails counts the addresses it got through
	f(`[{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"addresses":["a,b,c","d,e,f",7]}},`+fmt.Sprintf(three, 2)+`]`,
		`[{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: addresses[2] must be a string or an array of strings"}},{"jsonrpc":"2.0","id":2,"error":`+budget+`}]`)
	f(`[{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"addresses":["a,b,c",["d","e",{}],"g"]}},`+fmt.Sprintf(one, 2)+`]`,
		`[{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: addresses[1] line 2 is not a string"}},{"jsonrpc":"2.0","id":2,"result":`+abc+`}]`)
}

// flakyWriter keeps what is written to it, in pieces, and fails once it
// has failAfter pieces (never when 0).
type flakyWriter struct {
	pieces    []string
	failAfter int
}

var errClientGone = errors.New("client gone")

func (w *flakyWriter) Write(b []byte) (int, error) {
	if w.failAfter > 0 && len(w.pieces) >= w.failAfter {
		return 0, errClientGone
	}
	w.pieces = append(w.pieces, string(b))
	return len(b), nil
}

// TestHandleTo: the streamed answer is the answer, byte for byte, written
// after every result (the smallest pieces): every check that could take
// a result back is made before it is written.
func TestHandleTo(t *testing.T) {
	s := newServer(t, casesConfig)
	s.SetFlushBytes(1)
	responseCases(func(req, want string) {
		t.Helper()
		w := &flakyWriter{}
		buf, respond, err := s.HandleTo(w, make([]byte, 0, 16), []byte(req), rpc.Principal{})
		got := strings.Join(w.pieces, "")
		if !respond {
			if got != "" {
				t.Errorf("request %s: nothing to send, but wrote %s", req, got)
			}
			got = "<none>"
		}
		if err != nil || got != want {
			t.Errorf("request %s\n got %s (%v)\nwant %s", req, got, err, want)
		}
		if len(buf) != 0 {
			t.Errorf("buffer returned holding %d bytes", len(buf))
		}
	})
	// large answers go out in pieces of about FlushBytes
	s = newServer(t, rpc.Config{})
	var sb strings.Builder
	sb.WriteString(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"addresses":[`)
	for i := range 10_000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `["Jo Citizen %d","10 Jones St","Melbourne VIC 3000"]`, i)
	}
	sb.WriteString(`]}}`)
	body := []byte(sb.String())
	want, _ := s.Handle(nil, body, rpc.Principal{})
	w := &flakyWriter{}
	if _, _, err := s.HandleTo(w, nil, body, rpc.Principal{}); err != nil || strings.Join(w.pieces, "") != string(want) {
		t.Fatalf("streamed answer differs (%v)", err)
	}
	for i, p := range w.pieces {
		if len(p) > rpc.FlushBytes+4096 || (len(p) < rpc.FlushBytes && i < len(w.pieces)-1) {
			t.Errorf("piece %d of %d: %d bytes", i, len(w.pieces), len(p))
		}
	}
	if len(w.pieces) < len(want)/rpc.FlushBytes {
		t.Errorf("%d pieces for %d bytes", len(w.pieces), len(want))
	}
	// a client that goes away ends the work
	set := metrics.NewSet()
	e, err := engine.New(testref.Index(t).Ref, engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s = rpc.New(e, rpc.Config{}, set)
	w = &flakyWriter{failAfter: 2}
	if _, respond, err := s.HandleTo(w, nil, body, rpc.Principal{}); !errors.Is(err, errClientGone) || !respond {
		t.Errorf("writer failed: %v, %v", respond, err)
	}
	if n := set.GetOrCreateCounter(`lodge_addr_check_addresses_total`).Get(); n >= 10_000 || n == 0 {
		t.Errorf("%d addresses judged for a client gone after 2 pieces", n)
	}
}

func TestDiscoverAndDetail(t *testing.T) {
	s := newServer(t, rpc.Config{})
	out, _ := s.Handle(nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}`), rpc.Principal{})
	var doc struct {
		Result struct {
			OpenRPC string `json:"openrpc"`
			Methods []struct {
				Name string `json:"name"`
			} `json:"methods"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || doc.Result.OpenRPC == "" || len(doc.Result.Methods) != 2 || doc.Result.Methods[0].Name != "addr_check" {
		t.Errorf("rpc.discover: %v %s", err, out)
	}
	out, _ = s.Handle(nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"detail":true,"address":["Jo","3/72 Charles St","Melborne VIC 3000"]}}`), rpc.Principal{})
	var res struct {
		Result struct {
			Status string         `json:"status"`
			Detail *engine.Detail `json:"detail"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Result.Detail == nil || res.Result.Detail.FlatNumber != "3" ||
		strings.Join(res.Result.Detail.Suggestion, "|") != "JO|3/72 CHARLES ST|MELBOURNE VIC 3000" {
		t.Errorf("detail: %v %s", err, out)
	}
	// clients that do not ask never see detail
	out, _ = s.Handle(nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Jo","3/72 Charles St","Melborne VIC 3000"]}}`), rpc.Principal{})
	if strings.Contains(string(out), "detail") {
		t.Errorf("detail without asking: %s", out)
	}
}

// TestNoGarbage: a single-address call allocates nothing once warm.
func TestNoGarbage(t *testing.T) {
	if testref.RaceEnabled {
		t.Skip("the race detector allocates; scripts/test runs this without it")
	}
	s := newServer(t, rpc.Config{})
	f := func(req string) {
		t.Helper()
		buf := make([]byte, 0, 4096)
		body := []byte(req)
		for i := 0; i < 20; i++ { // let the verdict cache admit the addresses
			s.Handle(buf[:0], body, rpc.Principal{})
			time.Sleep(5 * time.Millisecond)
		}
		if n := testing.AllocsPerRun(200, func() { s.Handle(buf[:0], body, rpc.Principal{}) }); n > 0 {
			t.Errorf("%s: %.1f allocations per call", req, n)
		}
	}
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Joe Blogs","10 Jones St","Melbourne VIC 3000"]}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"Joe Blogs\n10 Jones St\nMelbourne VIC 3000"}}`)
	f(`{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"addresses":[["Joe Blogs","10 Jones St","Melbourne VIC 3000"],"Jo, PO Box 5, Sydney NSW 2001"]}}`)
	// escapes in the echo and the id: scanned, not copied aside
	f(`{"jsonrpc":"2.0","id":"\u00e9","method":"addr_check","params":{"address":["Jos\u00e9 Blogs \ud83d\ude00","10 Jones St","Melbourne VIC 3000"]}}`)
}

func TestRegisterDocumented(t *testing.T) {
	s := newServer(t, rpc.Config{})
	m := func(dst, params []byte, p rpc.Principal) ([]byte, int, string) { return append(dst, `"ok"`...), 0, "" }
	f := func(name, doc string, ok bool) {
		t.Helper()
		if err := s.Register(name, m, doc); (err == nil) != ok {
			t.Errorf("Register(%q, %q): %v", name, doc, err)
		}
	}
	f("zeta", `{"name":"zeta","params":[],"result":{"name":"r","schema":{}}}`, true)
	f("alpha", `{"name":"alpha","params":[],"result":{"name":"r","schema":{}}}`, true)
	f("zeta", `{"name":"zeta"}`, false) // taken
	f("addr_check", `{"name":"addr_check"}`, false)
	f("rpc.x", `{"name":"rpc.x"}`, false)
	f("beta", `{"name":"gamma"}`, false) // doc of another method
	f("beta", `{"name":"beta"`, false)   // not JSON
	f("beta", `["beta"]`, false)
	out, _ := s.Handle(nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}`), rpc.Principal{})
	var doc struct {
		Result struct {
			Methods []struct {
				Name string `json:"name"`
			} `json:"methods"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	var names []string
	for _, m := range doc.Result.Methods {
		names = append(names, m.Name)
	}
	if got := strings.Join(names, " "); got != "addr_check alpha zeta rpc.discover" {
		t.Errorf("methods %s", got)
	}
	out, _ = s.Handle(nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"alpha"}`), rpc.Principal{})
	if string(out) != `{"jsonrpc":"2.0","id":1,"result":"ok"}` {
		t.Errorf("alpha: %s", out)
	}
}
