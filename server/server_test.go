package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/lodge-mail/lodge/auth"
	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/internal/testref"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testref.Cleanup()
	os.Exit(code)
}

// testServer is a Server running on loopback with three accounts.
type testServer struct {
	*Server
	t          *testing.T
	url        string // https://127.0.0.1:PORT
	key1, key2 string // API keys of accounts ABC00001, ABC00002 and ABC00003
	key3       string
	client     *http.Client
	store      *auth.Store
	authn      *auth.Authenticator
}

func startServer(t *testing.T, cfg Config) *testServer {
	t.Helper()
	ix := testref.Index(t)
	eng, err := engine.New(ix.Ref, engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	store, err := auth.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ts := &testServer{t: t}
	for i, key := range []*string{&ts.key1, &ts.key2, &ts.key3} {
		code := fmt.Sprintf("ABC0000%d", i+1)
		if _, err := store.AddAccount(code, "test "+code); err != nil {
			t.Fatal(err)
		}
		if *key, _, err = store.CreateKey(code, "test"); err != nil {
			t.Fatal(err)
		}
	}
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	ts.store, ts.authn = store, auth.NewAuthenticator(store, auth.Config{})
	s, err := New(cfg, eng, ix, ts.authn, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	ts.Server = s
	ts.url = "https://" + s.Addr().String()
	ts.client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	t.Cleanup(ts.client.CloseIdleConnections)
	return ts
}

// post sends a JSON-RPC body with key and returns the response, its body
// read.
func (ts *testServer) post(key, body string) (*http.Response, string) {
	ts.t.Helper()
	req, _ := http.NewRequest("POST", ts.url+"/apiv2/jsonrpc", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.client.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	return resp, string(b)
}

// metric reads one sample of /metrics.
func (ts *testServer) metric(name string) float64 {
	ts.t.Helper()
	resp, err := ts.client.Get(ts.url + "/metrics")
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindSubmatch(b)
	if m == nil {
		ts.t.Fatalf("no %s in /metrics", name)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// waitFor is testenv.WaitFor with a fixed description.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	testenv.WaitFor(t, cond, func() string { return what })
}

// addressesBody is an addr_check call of n addresses (about 60 bytes
// each).
func addressesBody(id, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"addr_check","params":{"addresses":[`, id)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `["Jo Citizen %d","10 Jones St","Melbourne VIC 3000"]`, i)
	}
	b.WriteString(`]}}`)
	return b.String()
}

// TestLargeAnswersStreamed: a large request is answered in a chunked body
// (made as it is sent), a small one from a buffer; both hold every result.
func TestLargeAnswersStreamed(t *testing.T) {
	ts := startServer(t, Config{})
	f := func(n int, chunked bool) {
		t.Helper()
		resp, body := ts.post(ts.key1, addressesBody(1, n))
		if resp.StatusCode != 200 || strings.Count(body, `"status":"matched"`) != n || !strings.HasSuffix(body, "]}") {
			t.Fatalf("%d addresses: %d %.300s", n, resp.StatusCode, body)
		}
		if got := len(resp.TransferEncoding) > 0; got != chunked {
			t.Errorf("%d addresses: chunked %v, content length %d", n, got, resp.ContentLength)
		}
	}
	f(10, false)
	f(1000, false) // a body of 60 KB
	f(1300, true)  // 69 KB
	f(10_000, true)
	// a batch of notifications, large: nothing to send
	var b strings.Builder
	b.WriteByte('[')
	for i := range 1000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"jsonrpc":"2.0","method":"addr_check","params":{"address":["Jo Citizen","10 Jones St","Melbourne VIC 3000"]}}`)
	}
	b.WriteByte(']')
	if resp, body := ts.post(ts.key1, b.String()); resp.StatusCode != 204 || body != "" {
		t.Errorf("notifications: %d %q", resp.StatusCode, body)
	}
}

// TestRequestAddressLimit: a batch carries at most 10,000 addresses in
// all (RPC.MaxRequestAddresses): the call that passes it gets -32602.
func TestRequestAddressLimit(t *testing.T) {
	ts := startServer(t, Config{})
	resp, body := ts.post(ts.key1, "["+addressesBody(1, 6000)+","+addressesBody(2, 6000)+"]")
	if resp.StatusCode != 200 || strings.Count(body, `"status":"matched"`) != 6000 ||
		!strings.HasSuffix(body, `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"invalid params: more than 10000 addresses in one HTTP request (the calls of a batch count together): send the rest in another request"}}]`) {
		t.Errorf("%d %.200s ... %s", resp.StatusCode, body, body[max(0, len(body)-300):])
	}
}

// slowRequest sends the headers and the first part of a large request
// whose body it holds back, and returns the connection; finish sends the
// rest and reads the answer's status line.
func (ts *testServer) slowRequest(key string, body string) (finish func() string) {
	ts.t.Helper()
	c, err := tls.Dial("tcp", ts.Addr().String(), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /apiv2/jsonrpc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", key, len(body))
	half := len(body) / 2
	if _, err := io.WriteString(c, body[:half]); err != nil {
		ts.t.Fatal(err)
	}
	return func() string {
		if _, err := io.WriteString(c, body[half:]); err != nil {
			ts.t.Fatal(err)
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			ts.t.Fatal(err)
		}
		return strings.TrimSpace(line)
	}
}

// TestLargeRequestBytes: the body bytes of large requests held at once
// are bounded per account (429) and in all (503), with Retry-After; the
// bytes are let go when a request is answered.
func TestLargeRequestBytes(t *testing.T) {
	body := addressesBody(1, 3000) // about 180 KB
	ts := startServer(t, Config{LargeRPCBytesPerAccount: len(body) + len(body)/2, LargeRPCBytes: 2*len(body) + len(body)/2})
	held := func(n int) func() bool {
		return func() bool { return ts.metric("lodge_jsonrpc_large_body_bytes") == float64(n*len(body)) }
	}
	finish1 := ts.slowRequest(ts.key1, body)
	waitFor(t, held(1), "the first request to be held")
	// a second from the same account would pass its share
	resp, answer := ts.post(ts.key1, body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || !strings.Contains(answer, `"code":-32000`) {
		t.Errorf("over the account's share: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), answer)
	}
	// another account's fits, a third would pass the bound in all
	finish2 := ts.slowRequest(ts.key2, body)
	waitFor(t, held(2), "the second request to be held")
	resp, answer = ts.post(ts.key3, body)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" || !strings.Contains(answer, "busy") {
		t.Errorf("over the bound in all: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), answer)
	}
	for _, finish := range []func() string{finish1, finish2} {
		if line := finish(); line != "HTTP/1.1 200 OK" {
			t.Errorf("held request: %s", line)
		}
	}
	waitFor(t, held(0), "the bytes to be let go")
	if resp, answer := ts.post(ts.key1, body); resp.StatusCode != 200 || strings.Count(answer, `"status":"matched"`) != 3000 {
		t.Errorf("after: %d %.200s", resp.StatusCode, answer)
	}
	// small requests never wait for the large ones
	finish1 = ts.slowRequest(ts.key1, body)
	finish2 = ts.slowRequest(ts.key2, body)
	waitFor(t, held(2), "the requests to be held")
	if resp, answer := ts.post(ts.key1, addressesBody(2, 10)); resp.StatusCode != 200 || strings.Count(answer, `"status":"matched"`) != 10 {
		t.Errorf("small request: %d %.200s", resp.StatusCode, answer)
	}
	finish1()
	finish2()
}

// TestLargeClientGone: a client that goes away while its answer is
// streamed ends the work, and what the request held is let go.
func TestLargeClientGone(t *testing.T) {
	ts := startServer(t, Config{LargeRPCWorkers: 1})
	body := addressesBody(1, 10_000)
	c, err := tls.Dial("tcp", ts.Addr().String(), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "POST /apiv2/jsonrpc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", ts.key1, len(body), body)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "HTTP/1.1 200 OK" {
		t.Fatalf("%q %v", line, err)
	}
	c.Close()
	waitFor(t, func() bool {
		return ts.metric("lodge_jsonrpc_large_body_bytes") == 0 && ts.metric("lodge_jsonrpc_large_working") == 0
	}, "the request to let go")
	// the one worker is free for the next
	if resp, answer := ts.post(ts.key1, body); resp.StatusCode != 200 || strings.Count(answer, `"status":"matched"`) != 10_000 {
		t.Errorf("after: %d %.200s", resp.StatusCode, answer)
	}
}

// TestLargeLimitsWork: large requests are worked on by a few workers, the
// others wait their turn, up to a bound.
func TestLargeLimitsWork(t *testing.T) {
	l := newLargeLimits(Config{LargeRPCWorkers: 2, LargeRPCWait: time.Millisecond}.withDefaults(), metrics.NewSet())
	if !l.work() || !l.work() {
		t.Fatal("two workers, two requests: both should be worked on")
	}
	if l.work() {
		t.Error("a third request was worked on with two workers busy")
	}
	got := make(chan bool)
	l.wait = time.Minute
	go func() { got <- l.work() }()
	l.done()
	if !<-got {
		t.Error("a waiting request did not get the worker let go")
	}
	if n := l.timedOut.Get(); n != 1 {
		t.Errorf("timed out: %d", n)
	}
}
