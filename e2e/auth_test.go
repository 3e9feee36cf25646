package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// TestFailedLoginBudgetShared: JSON-RPC and the upload endpoints count
// failed logins together, so a guesser gets the documented 10 a minute per
// client and user, not 10 on each: 10 failures split between them throttle
// the 11th attempt on either, even with the right password.
//
// One node only: with several nodes the count is per node, by design
// (README's limits table), so 10 failures spread over three nodes do not
// throttle the 11th.
func TestFailedLoginBudgetShared(t *testing.T) {
	in := startWithUsers(t, map[string]string{"alice": "correct horse battery"})
	rpcBody := `{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"a,b,c"}}`
	session := in.url + "/publicinterface/get_session_id.text?account=DEM00001"
	rpc := func(auth ...string) []string {
		return append([]string{in.url + "/apiv2/jsonrpc", "-H", "Content-Type: application/json", "--data-binary", rpcBody}, auth...)
	}
	upload := func(auth ...string) []string { return append([]string{session}, auth...) }
	f := func(want int, args []string) {
		t.Helper()
		if code, body := in.curl(args...); code != want {
			t.Errorf("%q: HTTP %d, want %d\n%s", args, code, want, body)
		}
	}
	for i := range 5 {
		f(401, rpc("-u", fmt.Sprint("alice:rpc-guess", i)))
	}
	for i := range 3 {
		f(401, upload("-u", fmt.Sprint("alice:upload-guess", i)))
	}
	for i := range 2 {
		f(401, upload("--digest", "-u", fmt.Sprint("alice:digest-guess", i)))
	}
	f(429, rpc("-u", "alice:correct horse battery"))
	f(429, upload("-u", "alice:correct horse battery"))
	f(429, upload("--digest", "-u", "alice:correct horse battery"))
	f(200, rpc("-H", "Authorization: Bearer "+in.key)) // the client's other credentials are not throttled
	f(200, upload("-H", "Authorization: Bearer "+in.key))
}

// TestUnauthorizedBodies: a 401 names the schemes its endpoint takes:
// Digest on the upload endpoints, only Bearer and Basic on JSON-RPC.
func TestUnauthorizedBodies(t *testing.T) {
	in := start(t)
	rpcBody := `{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":"a,b,c"}}`
	f := func(url, want string, args ...string) {
		t.Helper()
		code, body := in.curl(append([]string{url}, args...)...)
		if code != 401 || !strings.Contains(body, want) {
			t.Errorf("%s %q: HTTP %d %q, want 401 with %q", url, args, code, body, want)
		}
		if digest := strings.Contains(url, "jsonrpc"); digest == strings.Contains(body, "Digest") {
			t.Errorf("%s %q: %q names Digest: %v", url, args, body, !digest)
		}
	}
	const (
		missingUpload = "authentication required: send an API key (Authorization: Bearer KEY), Basic or Digest credentials"
		missingRPC    = "authentication required: send an API key (Authorization: Bearer KEY) or Basic credentials"
		badUpload     = "malformed Authorization header: use one of Bearer, Basic or Digest"
		badRPC        = "malformed Authorization header: use one of Bearer or Basic"
	)
	session := in.url + "/publicinterface/get_session_id.text?account=DEM00001"
	put := []string{"-X", "PUT", "--data-binary", "x", "-H", "Expect:"}
	rpc := []string{"-H", "Content-Type: application/json", "--data-binary", rpcBody}
	f(session, missingUpload)
	f(in.url+"/direct_upload/AAAAAAAAAAAAAAAAAAAAAAAAAAAA/a.pdf", missingUpload, put...)
	f(in.url+"/publicinterface/end_session.json?session_id=AAAAAAAAAAAAAAAAAAAAAAAAAAAA", missingUpload)
	f(session, badUpload, "-H", "Authorization: Negotiate abc")
	f(session, badUpload, "-H", "Authorization: Digest username=x")
	f(session, badUpload, "-H", "Authorization: Basic !!!")
	f(in.url+"/apiv2/jsonrpc", missingRPC, rpc...)
	f(in.url+"/apiv2/jsonrpc", badRPC, append(rpc, "-H", "Authorization: Negotiate abc")...)
	f(in.url+"/apiv2/jsonrpc", badRPC, append(rpc, "-H", `Authorization: Digest username="x"`)...)
}

// TestDigestNonceAcrossRestart: a Digest client's nonce from before a
// restart is answered 401 with stale=true (the client retries with the new
// nonce), never counted as a failed login, so a deploy does not lock out
// the user (Basic included) of clients that keep going; a forged nonce is
// a failure.
//
// One node only: it restarts the one process. A nonce one node gave and
// another verifies: TestUploadPythonDigest/three_nodes.
func TestDigestNonceAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	in := startWithDirUsers(t, dir, map[string]string{"clerk": "correct horse battery"})
	const uri = "/publicinterface/get_session_id.text?account=DEM00001"
	challengeRE := regexp.MustCompile(`(?i)WWW-Authenticate: Digest realm="lodge", qop="auth", algorithm=SHA-256, nonce="([^"]+)", opaque="([^"]+)"[^\r\n]*`)
	code, got := in.curl("-D", "-", in.url+uri)
	m := challengeRE.FindStringSubmatch(got)
	if code != 401 || m == nil {
		t.Fatalf("no SHA-256 Digest challenge: HTTP %d\n%s", code, got)
	}
	nonce, opaque := m[1], m[2]
	nc := 0
	digest := func(nonce, password string) string {
		nc++
		h := func(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }
		ha1 := h("clerk:lodge:" + password)
		count := fmt.Sprintf("%08x", nc)
		resp := h(ha1 + ":" + nonce + ":" + count + ":c0ffee:auth:" + h("GET:"+uri))
		return fmt.Sprintf(`Authorization: Digest username="clerk", realm="lodge", nonce="%s", uri="%s", algorithm=SHA-256, response="%s", qop=auth, nc=%s, cnonce="c0ffee", opaque="%s"`,
			nonce, uri, resp, count, opaque)
	}
	f := func(header string, want int, stale bool) {
		t.Helper()
		code, got := in.curl("-D", "-", "-H", header, in.url+uri)
		m := challengeRE.FindString(got)
		if code != want || want == 401 && (m == "") || strings.HasSuffix(m, "stale=true") != stale {
			t.Errorf("%.60s: HTTP %d, want %d (stale=true: %v)\n%s", header, code, want, stale, got)
		}
	}
	f(digest(nonce, "correct horse battery"), 200, false)
	if err := in.stop(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	in = startWithDir(t, dir)
	for range 12 { // more than the 10 failures that would throttle clerk
		f(digest(nonce, "correct horse battery"), 401, true)
	}
	f("Authorization: Basic "+basic("clerk", "correct horse battery"), 200, false)
	forged := []byte(nonce)
	if forged[30] = 'A'; nonce[30] == 'A' { // a character of the MAC changed
		forged[30] = 'B'
	}
	f(digest(string(forged), "correct horse battery"), 401, false)
	f(digest(nonce, "wrong"), 401, false)
}
