package auth

import (
	"container/list"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// basicCache remembers successful Basic verifications, keyed by an HMAC of
// user and password, oldest evicted first once full.
type basicCache struct {
	mu    sync.Mutex
	max   int
	m     map[[32]byte]*list.Element // of *cacheItem
	order list.List                  // oldest first
}

type cacheEntry struct {
	user, account string
	gen           uint64 // of the user record when verified
	expires       time.Time
}

type cacheItem struct {
	key [32]byte
	cacheEntry
}

func newBasicCache(max int) *basicCache {
	return &basicCache{max: max, m: map[[32]byte]*list.Element{}}
}

func (c *basicCache) get(k [32]byte, now time.Time) (cacheEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[k]
	if !ok {
		return cacheEntry{}, false
	}
	it := el.Value.(*cacheItem)
	if !now.Before(it.expires) {
		c.order.Remove(el)
		delete(c.m, k)
		return cacheEntry{}, false
	}
	return it.cacheEntry, true
}

func (c *basicCache) put(k [32]byte, e cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[k]; ok {
		el.Value.(*cacheItem).cacheEntry = e
		c.order.MoveToBack(el)
		return
	}
	c.m[k] = c.order.PushBack(&cacheItem{key: k, cacheEntry: e})
	for len(c.m) > c.max {
		el := c.order.Front()
		c.order.Remove(el)
		delete(c.m, el.Value.(*cacheItem).key)
	}
}

func (c *basicCache) remove(k [32]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[k]; ok {
		c.order.Remove(el)
		delete(c.m, k)
	}
}

func (c *basicCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// throttle counts failures per key in a sliding window. A key's failures
// are kept as stamps, oldest first. With gran 0 every failure is a stamp
// of its own (at most max of them) and the window is exact. With gran > 0
// a failure less than gran after the newest stamp is counted in it, so a
// key holds at most window/gran+1 stamps whatever max is; such a failure
// leaves the window up to gran early.
type throttle struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	gran   time.Duration
	keys   int
	m      map[string]*list.Element // of *failures
	order  list.List                // least recently failed first
	// until is a time (Unix nanoseconds) before which some key may be
	// blocked and after which none is, until the next failure: when a
	// failure brings a key to max, until moves to that failure's time
	// plus the window, when its stamps have all left the window. It lets
	// a request whose credentials are already verified skip the tables
	// while nothing is blocked; 0 while nothing ever was.
	until atomic.Int64
}

type failures struct {
	key    string
	stamps []stamp // within the window, oldest first
	total  int     // sum of the stamps' counts
}

type stamp struct {
	at time.Time
	n  int
}

func newThrottle(max int, window, gran time.Duration, keys int) *throttle {
	return &throttle{max: max, window: window, gran: gran, keys: keys, m: map[string]*list.Element{}}
}

// mayBlock says whether some key may be blocked at now (see until).
func (t *throttle) mayBlock(now func() time.Time) bool {
	u := t.until.Load()
	return u != 0 && now().UnixNano() < u
}

// maxStamps bounds the stamps of a key.
func (t *throttle) maxStamps() int {
	if t.gran <= 0 {
		return t.max
	}
	return int(t.window/t.gran) + 1
}

// clientKey is what a client's failures are counted under: the address,
// or its /64 for IPv6, where one host commonly holds a whole /64.
func clientKey(client string) string {
	a, err := netip.ParseAddr(client)
	if err != nil {
		return client
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.WithZone("").Prefix(64)
		return p.String()
	}
	return a.String()
}

// prune drops failures that left the window.
func (f *failures) prune(now time.Time, window time.Duration) {
	i := 0
	for i < len(f.stamps) && !now.Before(f.stamps[i].at.Add(window)) {
		f.total -= f.stamps[i].n
		i++
	}
	if i > 0 {
		f.stamps = append(f.stamps[:0], f.stamps[i:]...)
	}
}

// blocked returns how long key must wait, or 0.
func (t *throttle) blocked(key string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	el, ok := t.m[key]
	if !ok {
		return 0
	}
	f := el.Value.(*failures)
	f.prune(now, t.window)
	if len(f.stamps) == 0 {
		t.order.Remove(el)
		delete(t.m, key)
		return 0
	}
	if f.total < t.max {
		return 0
	}
	// Wait until enough of the oldest stamps left the window that fewer
	// than max failures remain.
	left := f.total
	for _, s := range f.stamps {
		left -= s.n
		if left < t.max {
			return s.at.Add(t.window).Sub(now)
		}
	}
	return f.stamps[len(f.stamps)-1].at.Add(t.window).Sub(now) // not reached
}

// fail counts a failure of key.
func (t *throttle) fail(key string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	el, ok := t.m[key]
	if !ok {
		el = t.order.PushBack(&failures{key: key, stamps: make([]stamp, 0, min(t.maxStamps(), 16))})
		t.m[key] = el
		for len(t.m) > t.keys {
			old := t.order.Front()
			t.order.Remove(old)
			delete(t.m, old.Value.(*failures).key)
		}
	} else {
		t.order.MoveToBack(el)
	}
	f := el.Value.(*failures)
	f.prune(now, t.window)
	f.total++
	if u := now.Add(t.window).UnixNano(); f.total >= t.max && u > t.until.Load() {
		t.until.Store(u) // changed under t.mu only
	}
	if n := len(f.stamps); n > 0 && t.gran > 0 && (now.Sub(f.stamps[n-1].at) < t.gran || n >= t.maxStamps()) {
		f.stamps[n-1].n++
		return
	}
	if len(f.stamps) >= t.maxStamps() { // exact: concurrent failures raced past blocked
		f.total -= f.stamps[0].n
		f.stamps = append(f.stamps[:0], f.stamps[1:]...)
	}
	f.stamps = append(f.stamps, stamp{at: now, n: 1})
}

func (t *throttle) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}
