package portal_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestFormBodyBound: an ordinary form's body past 1 MiB is refused (413)
// before it is parsed, whether it declares its length or comes chunked,
// signed in or not; a form within it still works.
func TestFormBodyBound(t *testing.T) {
	f := newFixture(t)
	b := f.browser()
	b.signIn("jo", joPass).expect(200)
	token := b.get("/portal/check").csrf()
	big := url.Values{"csrf": {token}, "addresses": {strings.Repeat("a", 1<<20)}}.Encode()
	post := func(path string, chunked bool) int {
		t.Helper()
		var body io.Reader = strings.NewReader(big)
		if chunked {
			body = io.MultiReader(strings.NewReader(big)) // no length known: sent chunked
		}
		req, _ := http.NewRequest("POST", f.url+path, body)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if chunked && req.ContentLength != 0 {
			t.Fatalf("the request declares %d bytes", req.ContentLength)
		}
		b.do(req)
		return b.status
	}
	for _, path := range []string{"/portal/check", "/portal/signin", "/portal/mailings/FIX1/cancel"} {
		for _, chunked := range []bool{false, true} {
			if got := post(path, chunked); got != http.StatusRequestEntityTooLarge {
				t.Errorf("%s (chunked %v): %d, want 413: %.200s", path, chunked, got, b.body)
			}
		}
	}
	// within the bound: the check page answers (its own limit, 256 KiB of
	// text, refuses this one with its message)
	b.post("/portal/check", url.Values{"csrf": {token}, "addresses": {strings.Repeat("a", 300<<10)}}).expect(413, "At most 256 KiB")
	b.post("/portal/check", url.Values{"csrf": {token}, "addresses": {"Jo Citizen\n10 Jones St\nUltimo NSW 2007"}}).expect(200, "matched")
}
