package upload

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestEndEncrypted: a PDF that needs a user password is refused with a
// located error (nobody could print it); one with an owner password only
// opens for anyone and is accepted.
func TestEndEncrypted(t *testing.T) {
	r := newRig(t)
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("inspect", "testdata", "encrypted", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	res := r.end(r.session("secret.pdf", read("u256.pdf")))
	if res.Result != "error" || !slices.Contains(res.Errs, "secret.pdf: encrypted: opening it needs a password") {
		t.Errorf("user password: %+v", res)
	}
	res = r.end(r.session("restricted.pdf", read("o128aes.pdf")))
	if res.Result != "ok" {
		t.Errorf("owner password only: %+v", res)
	}
}
