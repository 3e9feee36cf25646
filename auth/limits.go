package auth

import (
	"container/list"
	"net/netip"
	"sync"
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

// throttle counts failures per client in a sliding window.
type throttle struct {
	mu      sync.Mutex
	max     int
	window  time.Duration
	clients int
	m       map[string]*list.Element // of *failures
	order   list.List                // least recently failed first
}

type failures struct {
	client string
	times  []time.Time // failures within the window, oldest first; at most max
}

func newThrottle(max int, window time.Duration, clients int) *throttle {
	return &throttle{max: max, window: window, clients: clients, m: map[string]*list.Element{}}
}

// clientKey is what failures are counted under: the address, or its /64
// for IPv6, where one host commonly holds a whole /64.
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
	for i < len(f.times) && !now.Before(f.times[i].Add(window)) {
		i++
	}
	f.times = append(f.times[:0], f.times[i:]...)
}

// blocked returns how long client must wait, or 0.
func (t *throttle) blocked(client string, now time.Time) time.Duration {
	k := clientKey(client)
	t.mu.Lock()
	defer t.mu.Unlock()
	el, ok := t.m[k]
	if !ok {
		return 0
	}
	f := el.Value.(*failures)
	f.prune(now, t.window)
	if len(f.times) == 0 {
		t.order.Remove(el)
		delete(t.m, k)
		return 0
	}
	if len(f.times) < t.max {
		return 0
	}
	return f.times[0].Add(t.window).Sub(now)
}

// fail counts a failure of client.
func (t *throttle) fail(client string, now time.Time) {
	k := clientKey(client)
	t.mu.Lock()
	defer t.mu.Unlock()
	el, ok := t.m[k]
	if !ok {
		el = t.order.PushBack(&failures{client: k, times: make([]time.Time, 0, min(t.max, 16))})
		t.m[k] = el
		for len(t.m) > t.clients {
			old := t.order.Front()
			t.order.Remove(old)
			delete(t.m, old.Value.(*failures).client)
		}
	} else {
		t.order.MoveToBack(el)
	}
	f := el.Value.(*failures)
	f.prune(now, t.window)
	if len(f.times) == t.max { // concurrent failures raced past blocked
		f.times = append(f.times[:0], f.times[1:]...)
	}
	f.times = append(f.times, now)
}

func (t *throttle) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}
