package server

import (
	"bytes"
	"log/slog"
	"regexp"
	"testing"

	"github.com/lodge-mail/lodge/auth"
	"github.com/lodge-mail/lodge/engine"
	"github.com/lodge-mail/lodge/internal/testref"
)

// TestIndexMetricsFollowSwap: the lodge_index_* figures describe the
// reference the engine judges against now, not the index the server was
// started with.
func TestIndexMetricsFollowSwap(t *testing.T) {
	ix := testref.Index(t)
	eng, err := engine.NewLive(ix.Ref, engine.Config{CacheEntries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	store, err := auth.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	s, err := New(Config{Addr: "127.0.0.1:0", DataDir: t.TempDir()}, eng, ix, auth.NewAuthenticator(store, auth.Config{}), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.ln.Close()
	localities := func() string {
		var b bytes.Buffer
		s.Metrics().WritePrometheus(&b)
		m := regexp.MustCompile(`(?m)^lodge_index_localities (\S+)$`).FindSubmatch(b.Bytes())
		if m == nil {
			t.Fatal("no lodge_index_localities")
		}
		return string(m[1])
	}
	if got := localities(); got == "1" || got == "0" {
		t.Fatalf("lodge_index_localities %s before the swap", got)
	}
	b := engine.NewReferenceBuilder()
	st, _ := engine.StateByAbbr("VIC")
	if _, err := b.AddLocality(engine.Locality{Name: "CARLTON", State: st, Postcode: 3053}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Swap(b.Build(), nil); err != nil {
		t.Fatal(err)
	}
	if got := localities(); got != "1" {
		t.Errorf("lodge_index_localities %s after swapping in a reference of 1", got)
	}
}
