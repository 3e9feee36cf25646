package upload

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// The upload store after a long history: 200,000 sessions, most of them
// ended mailings whose documents are still kept, some expired, a few
// open. The janitor's pass and the store's start-up must cost what the
// open sessions and the work due cost, not what the history holds:
//
//	go test ./upload -run '^$' -bench 'History' -benchtime 20x
//
// The history is written once per test binary (about a minute) into a
// temporary directory removed at the end (TestMain), as a store from
// before the lifecycle indexes (lifecycle.go) holds it: the first open,
// whose time is logged, builds them.
const (
	historySessions = 200_000
	historyOpen     = 200 // of them open
	historyExpired  = 10  // one session in this many expired
)

// historyNow is the clock of the history benchmarks: every session was
// made in the 20 days before it, the open ones in the last hour.
var historyNow = time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)

var history struct {
	once sync.Once
	dir  string
	err  error
}

// historyStore returns the directory of a store holding the history,
// opened once (so that a store from before an index was added has built
// it: the benchmarks measure the steady state).
func historyStore(b *testing.B) string {
	history.once.Do(func() {
		history.dir, history.err = os.MkdirTemp("", "upload-history-")
		if history.err != nil {
			return
		}
		start := time.Now()
		history.err = writeHistory(history.dir)
		b.Logf("history of %d sessions written in %v", historySessions, time.Since(start).Round(time.Millisecond))
		if history.err != nil {
			return
		}
		start = time.Now()
		s, err := Open(history.dir, Options{Now: func() time.Time { return historyNow }})
		if err != nil {
			history.err = err
			return
		}
		b.Logf("first open, building the indexes: %v", time.Since(start).Round(time.Millisecond))
		history.err = s.Close()
	})
	if history.err != nil {
		b.Fatal(history.err)
	}
	return history.dir
}

// removeHistory removes the history's directory, if it was made.
func removeHistory() {
	if history.dir != "" {
		os.RemoveAll(history.dir)
	}
}

// writeHistory writes the records and blobs of the history with the
// store's own record writers, as the sessions would have left them.
func writeHistory(dir string) error {
	s, err := Open(dir, Options{Now: func() time.Time { return historyNow }})
	if err != nil {
		return err
	}
	defer s.Close()
	const batch = 2000
	span := 20 * 24 * time.Hour
	for from := 0; from < historySessions; from += batch {
		err := s.Update(func(t *Tx) error {
			for i := from; i < min(from+batch, historySessions); i++ {
				if err := historySession(s, t, i, span); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	// as a store from before the indexes
	for _, pfx := range []string{openPrefix, keptPrefix, purgePrefix} {
		if err := s.db.DeleteRange([]byte(pfx), []byte(prefixEnd(pfx)), pebble.Sync); err != nil {
			return err
		}
	}
	return s.db.Delete([]byte(indexesKey), pebble.Sync)
}

// historySession writes session i of the history in t.
func historySession(s *Store, t *Tx, i int, span time.Duration) error {
	epid := fmt.Sprintf("H%027d", i)
	created := historyNow.Add(-span + time.Duration(i)*(span/historySessions))
	ss := Session{EPID: epid, Account: fmt.Sprintf("ACC%05d", i%500), User: "clerk", State: StateEnded,
		Created: created, Expires: created.Add(24 * time.Hour), Ended: created.Add(time.Minute)}
	open := i >= historySessions-historyOpen
	if open {
		ss.Created = historyNow.Add(-time.Duration(historySessions-i) * time.Second)
		ss.Expires, ss.Ended, ss.State = ss.Created.Add(24*time.Hour), time.Time{}, StateOpen
	} else if i%historyExpired == 0 {
		ss.State, ss.Ended = StateExpired, time.Time{}
		t.PutSession(ss)
		return nil
	}
	names := []string{"letter.pdf", "m.json"}
	if open {
		names = names[:1]
	}
	bd := filepath.Join(s.dir, "blobs", epid)
	if err := os.MkdirAll(bd, 0o750); err != nil {
		return err
	}
	res := EndResult{SessionID: epid, Result: "ok", Status: PackReceived, Errs: []string{}}
	for n, name := range names {
		f := File{Name: name, Size: 64, Received: 64, Declared: 64, Chunks: 1, Intent: IntentDocument + n,
			First: unixSeconds(created), Last: unixSeconds(created), SHA1: "da39a3ee5e6b4b0d3255bfef95601890afd80709",
			Kind: name[len(name)-3:], Pages: 1 - n, Blob: fmt.Sprintf("%024x.blob", i*2+n)}
		if err := os.WriteFile(filepath.Join(bd, f.Blob), make([]byte, 64), 0o640); err != nil {
			return err
		}
		t.PutFile(epid, f)
		res.Files = append(res.Files, EndFile{Name: f.Name, Size: f.Size, Received: f.Received, Declared: f.Declared,
			Chunks: 1, Intent: f.Intent, First: f.First, Last: f.Last, Host: "host", APath: f.Name,
			GPath: filepath.Join("blobs", epid, f.Blob), SHA1: f.SHA1})
	}
	if !open {
		ss.Result = &res // (its letters are the mailroom's)
	}
	t.PutSession(ss)
	return nil
}

// BenchmarkHistoryJanitor times one pass of the janitor (Sweep: expiry
// and retention) over the history, with nothing due.
func BenchmarkHistoryJanitor(b *testing.B) {
	dir := historyStore(b)
	s, err := Open(dir, Options{Now: func() time.Time { return historyNow }})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	for range b.N {
		if exp, purged, err := s.Sweep(); exp != 0 || purged != 0 || err != nil {
			b.Fatalf("expired %d, purged %d, %v", exp, purged, err)
		}
	}
}

// BenchmarkHistoryOpen times opening (recovery included) and closing the
// store holding the history.
func BenchmarkHistoryOpen(b *testing.B) {
	dir := historyStore(b)
	b.ResetTimer()
	for range b.N {
		s, err := Open(dir, Options{Now: func() time.Time { return historyNow }})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
