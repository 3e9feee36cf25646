package upload

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lodge-mail/lodge/rpc"
)

// ref gives a metadata letter (a JSON object) the reference ref.
func ref(letter, ref string) string {
	return strings.TrimSuffix(letter, "}") + `,"reference":` + fmt.Sprintf("%q", ref) + `}`
}

var me = rpc.Principal{Account: "ABC12345", User: "clerk"}

// TestLockAll: the locks of several sessions are taken once each, in
// order, whatever the order and repetition of the sessions.
func TestLockAll(t *testing.T) {
	r := newRig(t)
	var epids []string
	for range 600 { // more sessions than locks: some share one
		e, err := NewEPID()
		if err != nil {
			t.Fatal(err)
		}
		epids = append(epids, e, e)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				order := append([]string(nil), epids...)
				if i%2 == 1 {
					for a, b := 0, len(order)-1; a < b; a, b = a+1, b-1 {
						order[a], order[b] = order[b], order[a]
					}
				}
				for range 20 {
					r.s.lockAll(order)()
					mu := r.s.lock(order[i])
					mu.Lock()
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("lockAll deadlocked")
	}
}
