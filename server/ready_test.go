package server

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
)

// /readyz reflects the checks of the shared stores: 503 naming the one
// that fails, 200 again once it passes.
func TestReadyChecks(t *testing.T) {
	var dbDown atomic.Bool
	ts := startServer(t, Config{ReadyChecks: map[string]func(context.Context) error{
		"database": func(ctx context.Context) error {
			if dbDown.Load() {
				return errors.New("connection refused")
			}
			return nil
		},
		"object store": func(context.Context) error { return nil },
	}})
	get := func() (int, string) {
		resp, err := ts.client.Get(ts.url + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	f := func(down bool, wantCode int, wantBody string) {
		t.Helper()
		dbDown.Store(down)
		code, body := get()
		if code != wantCode || !strings.Contains(body, wantBody) {
			t.Fatalf("database down %v: %d %q, want %d with %q", down, code, body, wantCode, wantBody)
		}
	}
	f(false, 200, "ready")
	f(true, 503, "database: connection refused")
	f(false, 200, "ready")
}
