package server

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/lodge-mail/lodge/internal/testenv"
	"github.com/lodge-mail/lodge/internal/testref"
)

const connAuthBody = `{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":["Joe Blogs","10 Jones St","Melbourne VIC 3000"]}}`

// keepAliveClient is an HTTPS client of its own: one keep-alive connection
// that no other test request shares.
type keepAliveClient struct {
	t      *testing.T
	ts     *testServer
	client *http.Client
}

func (ts *testServer) newKeepAliveClient(t *testing.T) *keepAliveClient {
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, MaxConnsPerHost: 1}
	t.Cleanup(tr.CloseIdleConnections)
	return &keepAliveClient{t: t, ts: ts, client: &http.Client{Transport: tr}}
}

// post sends the JSON-RPC body with the Authorization header h and returns
// the status, whether the request went on a connection used before, and
// the connection's local address.
func (c *keepAliveClient) post(h string) (status int, reused bool, local string) {
	c.t.Helper()
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		reused, local = i.Reused, i.Conn.LocalAddr().String()
	}}
	req, _ := http.NewRequest("POST", c.ts.url+"/apiv2/jsonrpc", strings.NewReader(connAuthBody))
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	req.Header.Set("Authorization", h)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil { // read whole, so that the connection is reused
		c.t.Fatal(err)
	}
	return resp.StatusCode, reused, local
}

func basicHeader(user, pass string) string {
	req, _ := http.NewRequest("GET", "/", nil)
	req.SetBasicAuth(user, pass)
	return req.Header.Get("Authorization")
}

// TestConnAuthChanges: a revocation, a disabled account or user and a
// password change apply to the very next request of a keep-alive
// connection whose credentials the server remembers.
func TestConnAuthChanges(t *testing.T) {
	ts := startServer(t, Config{})
	n := 0
	// f: an account with a key and a user; header (given them) succeeds
	// twice on one connection, the second time without a check; change
	// runs; the next request on the same connection is checked again and
	// refused with 401.
	f := func(name string, header func(key, user string) string, change func(code, keyID, user string) error) {
		t.Helper()
		n++
		code, user := fmt.Sprintf("ABD%05d", n), fmt.Sprintf("user%d", n)
		if _, err := ts.store.AddAccount(code, name); err != nil {
			t.Fatal(err)
		}
		key, k, err := ts.store.CreateKey(code, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ts.store.AddUser(code, user, "password1"); err != nil {
			t.Fatal(err)
		}
		h := header(key, user)
		c := ts.newKeepAliveClient(t)
		checks := ts.metric("lodge_auth_checks_total")
		status, _, local := c.post(h)
		if status != 200 {
			t.Fatalf("%s: first request: %d", name, status)
		}
		if got := ts.metric("lodge_auth_checks_total"); got != checks+1 {
			t.Fatalf("%s: first request made %v checks, want 1", name, got-checks)
		}
		status, reused, local2 := c.post(h)
		if status != 200 || !reused || local2 != local {
			t.Fatalf("%s: second request: %d, reused %v (%s, first %s)", name, status, reused, local2, local)
		}
		if got := ts.metric("lodge_auth_checks_total"); got != checks+1 {
			t.Fatalf("%s: the second request on the connection was checked again (%v checks)", name, got-checks)
		}
		if err := change(code, k.ID, user); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		status, reused, local3 := c.post(h)
		if status != http.StatusUnauthorized || !reused || local3 != local {
			t.Errorf("%s: the request after the change: %d on a reused connection %v (%s, first %s); want 401 on the same connection", name, status, reused, local3, local)
		}
		if got := ts.metric("lodge_auth_checks_total"); got != checks+2 {
			t.Errorf("%s: %v checks in all, want 2", name, got-checks)
		}
	}
	bearer := func(key, user string) string { return "Bearer " + key }
	basic := func(key, user string) string { return basicHeader(user, "password1") }
	f("key revoked", bearer, func(code, keyID, user string) error { return ts.store.RevokeKey(keyID) })
	f("key's account disabled", bearer, func(code, keyID, user string) error { return ts.store.DisableAccount(code) })
	f("user disabled", basic, func(code, keyID, user string) error { return ts.store.DisableUser(user) })
	f("user's account disabled", basic, func(code, keyID, user string) error { return ts.store.DisableAccount(code) })
	f("password changed", basic, func(code, keyID, user string) error { return ts.store.SetPassword(user, "password2") })
}

// TestConnAuthPerConnection: what one connection proved is not taken for
// another's, and a different header on a connection is checked afresh.
func TestConnAuthPerConnection(t *testing.T) {
	ts := startServer(t, Config{})
	a, b := ts.newKeepAliveClient(t), ts.newKeepAliveClient(t)
	checks := ts.metric("lodge_auth_checks_total")
	// f posts h with c and checks the status, that c's connection was
	// reused (but for its first request) and the checks made in all.
	f := func(c *keepAliveClient, h string, wantStatus int, wantReused bool, wantChecks float64) {
		t.Helper()
		status, reused, _ := c.post(h)
		if status != wantStatus || reused != wantReused {
			t.Fatalf("%.20s: %d, reused %v; want %d, reused %v", h, status, reused, wantStatus, wantReused)
		}
		if got := ts.metric("lodge_auth_checks_total") - checks; got != wantChecks {
			t.Errorf("%.20s: %v checks in all, want %v", h, got, wantChecks)
		}
	}
	f(a, "Bearer "+ts.key1, 200, false, 1)
	f(a, "Bearer "+ts.key1, 200, true, 1)
	f(b, "Bearer "+ts.key1, 200, false, 2) // another connection checks it again
	f(b, "Bearer "+ts.key1, 200, true, 2)
	f(a, "Bearer "+ts.key2, 200, true, 3) // another key on a
	f(a, "Bearer "+ts.key2, 200, true, 3)
	f(a, "Bearer "+ts.key1, 200, true, 4) // a holds one header
	// the key with its last character changed (always to another: a fixed
	// replacement would be the key itself when it ends with that one)
	wrong := ts.key1[:len(ts.key1)-1] + "x"
	if wrong == ts.key1 {
		wrong = ts.key1[:len(ts.key1)-1] + "y"
	}
	f(a, "Bearer "+wrong, 401, true, 5)
	f(a, "Bearer "+ts.key1, 200, true, 6) // a failure is not remembered and empties a's
	f(b, "Bearer "+ts.key1, 200, true, 6)
}

// TestConnAuthAllocs: a JSON-RPC request whose credentials its connection
// remembers allocates nothing in the handler, as rpc's TestNoGarbage finds
// for the JSON-RPC handling alone.
func TestConnAuthAllocs(t *testing.T) {
	if testref.RaceEnabled {
		t.Skip("the race detector allocates; scripts/test runs this without it")
	}
	ts := startServer(t, Config{})
	client, server := net.Pipe()
	defer client.Close()
	lc := newConn(server, ts.conns, netip.Addr{})
	ctx := &fasthttp.RequestCtx{}
	// a TLS connection as the server's own (never handshaken, never read)
	// and the server's logger
	ctx.Init2(tls.Server(lc, ts.tls), ts.fast.Logger, false)
	ctx.Request.Header.SetMethod("POST")
	ctx.Request.SetRequestURI("/apiv2/jsonrpc")
	ctx.Request.Header.Set("Authorization", "Bearer "+ts.key1)
	ctx.Request.Header.SetContentType("application/json")
	b := []byte(connAuthBody)
	body := bytes.NewReader(nil)
	serve := func() {
		ctx.Response.Reset()
		// the body as the server streams it (StreamRequestBody), read
		// ahead whole
		body.Reset(b)
		ctx.Request.SetBodyStream(body, len(b))
		ts.handle(ctx)
	}
	serve()
	if code := ctx.Response.StatusCode(); code != 200 || !strings.Contains(string(ctx.Response.Body()), `"result"`) {
		t.Fatalf("%d %s", code, ctx.Response.Body())
	}
	// the verdict cache admits the address asynchronously: wait until a
	// request finds it there
	testenv.WaitFor(t, func() bool {
		hits, _ := ts.eng.CacheStats()
		serve()
		h2, _ := ts.eng.CacheStats()
		return h2 > hits
	}, func() string { return "the verdict cache to hold the address" })
	checks := ts.authn.Checks()
	if n := testing.AllocsPerRun(200, serve); n != 0 {
		t.Errorf("%v allocations a request, want 0", n)
	}
	if got := ts.authn.Checks(); got != checks {
		t.Errorf("%d checks of remembered credentials", got-checks)
	}
}
