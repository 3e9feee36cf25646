// Package cpuprofile takes CPU profiles of a running lodge through its
// -debug-addr (net/http/pprof), for the benchmark programs.
package cpuprofile

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
)

// Start asks the pprof server at base (http://host:port) for a CPU
// profile of secs seconds, in the background, and saves it to path. The
// returned func waits for it and says what went wrong.
func Start(ctx context.Context, base string, secs int, path string) func() error {
	errc := make(chan error, 1)
	go func() { errc <- fetch(ctx, base, secs, path) }()
	return func() error { return <-errc }
}

func fetch(ctx context.Context, base string, secs int, path string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, secs), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("pprof: %d %s", resp.StatusCode, b)
	}
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
