package e2e

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// startFunc starts a deployment of lodge -demo with the demo account's
// users (name → password) and extra flags for every node, and returns it
// as one instance: what a client sees.
type startFunc func(t *testing.T, users map[string]string, extra ...string) *instance

// setups are the deployments the upload, pipeline and portal tests run
// over: one node on its own data directory (pebble and the local disk,
// the embedded default), and three nodes sharing one PostgreSQL database
// and one S3-compatible bucket behind a round-robin balancer, a new
// connection (so, from the tests' clients, every request) going to the
// next node.
var setups = []struct {
	name  string
	start startFunc
}{
	{"single", startWithUsers},
	{"three_nodes", startSharedWithUsers},
}

// eachSetup runs test once for each setup, as subtests named after it.
func eachSetup(t *testing.T, test func(t *testing.T, start startFunc)) {
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) { test(t, s.start) })
	}
}

// startSharedWithUsers starts three nodes sharing a database and an
// object store behind a balancer, with the demo account and users added
// to the shared database before the nodes start (as startWithUsers does
// for one node's data directory).
//
// The instance: url is the balancer's; key is node 0's demo key (every
// node knows it: the keys are in the database); cert is node 0's
// self-signed certificate, which every node serves (as behind a
// balancer that passes TLS through, where a client checks the
// balancer's name whichever node answers); dbURL is the shared
// database, which admin commands are given (admin); dataDir is node 0's
// directory, and hotFolders every node's hot folder (a batch is written
// to the hot folder of the node that composed it); logs are all nodes'
// logs.
func startSharedWithUsers(t *testing.T, users map[string]string, extra ...string) *instance {
	t.Helper()
	c := newCluster(t, 3, extra...)
	if len(users) > 0 {
		if out, err := lodge(t, "", "account", "add", "-db", c.dbURL, "-name", "Demo account", "DEM00001"); err != nil {
			t.Fatalf("account add: %v\n%s", err, out)
		}
		for name, pw := range users {
			if out, err := lodge(t, pw+"\n", "user", "add", "-db", c.dbURL, "-account", "DEM00001", "-password-stdin", name); err != nil {
				t.Fatalf("user add: %v\n%s", err, out)
			}
		}
	}
	c.oneCert = true
	c.startAll()
	lb := newBalancer(t, len(c.nodes))
	c.lb = lb
	for i, n := range c.nodes {
		lb.set(i, strings.TrimPrefix(n.url, "https://"))
	}
	in := &instance{t: t, url: "https://" + lb.addr(), key: c.nodes[0].key, cert: c.nodes[0].cert, dbURL: c.dbURL,
		dataDir: c.dirs[0], cluster: c}
	t.Cleanup(func() {
		// how the requests were spread, for whoever reads the log
		t.Logf("connections per node: %v", lb.counts())
	})
	return in
}

// shared says whether the instance is several nodes behind a balancer.
func (in *instance) shared() bool { return in.cluster != nil }

// hotFolders are the print hot folders of the instance's nodes.
func (in *instance) hotFolders() []string {
	if in.cluster == nil {
		return []string{filepath.Join(in.dataDir, "print", "outbox")}
	}
	var out []string
	for _, d := range in.cluster.dirs {
		out = append(out, filepath.Join(d, "print", "outbox"))
	}
	return out
}

// logs are the output of the instance's process, or of each of its
// nodes in turn.
func (in *instance) logs() string {
	if in.cluster == nil {
		return in.proc.logs()
	}
	var b strings.Builder
	for i, n := range in.cluster.nodes {
		if n != nil {
			b.WriteString("--- node " + string(rune('0'+i)) + ":\n" + n.logs())
		}
	}
	return b.String()
}

// admin runs a lodge administration command (account, user, key,
// settings, print, invoice) on the instance's stores: with
// -data-dir of its one node, or -db of the database its nodes share.
func (in *instance) admin(stdin string, args ...string) (string, error) {
	in.t.Helper()
	if in.dbURL != "" {
		args = append(args, "-db", in.dbURL)
	} else {
		args = append(args, "-data-dir", in.dataDir)
	}
	return lodge(in.t, stdin, args...)
}

// putSetting stores one of the files the server reads while it runs
// (name as lodge settings names it: profiles/<ACCOUNT>/<name>.json, ...):
// on one node written into its data directory, as an operator keeps it;
// on several with lodge settings put -db.
func (in *instance) putSetting(name, content string) {
	in.t.Helper()
	if !in.shared() {
		p := filepath.Join(in.dataDir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			in.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			in.t.Fatal(err)
		}
		return
	}
	if out, err := in.admin(content, "settings", "put", name, "-"); err != nil {
		in.t.Fatalf("settings put %s: %v\n%s", name, err, out)
	}
}

// balancer is the load balancer in front of a cluster in the tests, as
// scripts/cluster's HAProxy in mode tcp: a TCP proxy on loopback that
// hands each new connection to the next node, round robin, passing TLS
// through (each node answers with its own certificate). A node that is
// down (set to "", or refusing the connection) is skipped.
type balancer struct {
	ln net.Listener

	mu       sync.Mutex
	backends []string // the nodes' addresses; "" where one is down
	next     int
	conns    []int // connections handed to each node
	open     map[net.Conn]struct{}
	closed   bool
	wg       sync.WaitGroup
}

// newBalancer listens on 127.0.0.1:0 (the address got is addr) for n
// nodes, none up until set; a cleanup of t closes it and every
// connection through it.
func newBalancer(t *testing.T, n int) *balancer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &balancer{ln: ln, backends: make([]string, n), conns: make([]int, n), open: map[net.Conn]struct{}{}}
	b.wg.Add(1)
	go b.serve()
	t.Cleanup(b.close)
	return b
}

func (b *balancer) addr() string { return b.ln.Addr().String() }

// set gives node i's address ("": the node is down).
func (b *balancer) set(i int, addr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.backends[i] = addr
}

// counts returns the connections handed to each node so far.
func (b *balancer) counts() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int(nil), b.conns...)
}

func (b *balancer) serve() {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return // closed
		}
		if !b.track(c) {
			c.Close()
			return
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			b.relay(c)
		}()
	}
}

// track records an open connection, for close; false once closed.
func (b *balancer) track(c net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.open[c] = struct{}{}
	return true
}

func (b *balancer) untrack(c net.Conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.open, c)
}

// dial connects to the next node that takes the connection, trying each
// node at most once.
func (b *balancer) dial() (net.Conn, error) {
	b.mu.Lock()
	n := len(b.backends)
	b.mu.Unlock()
	err := errors.New("no node is up")
	for range n {
		b.mu.Lock()
		i := b.next
		b.next = (b.next + 1) % n
		addr := b.backends[i]
		b.mu.Unlock()
		if addr == "" {
			continue
		}
		var c net.Conn
		c, err = net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			continue
		}
		b.mu.Lock()
		b.conns[i]++
		b.mu.Unlock()
		return c, nil
	}
	return nil, err
}

// relay copies the client's bytes to a node and back, each direction
// closed for writing when the other side has finished, as a TCP proxy
// does; a client that no node takes is closed at once.
func (b *balancer) relay(client net.Conn) {
	defer b.untrack(client)
	defer client.Close()
	node, err := b.dial()
	if err != nil {
		return
	}
	if !b.track(node) {
		node.Close()
		return
	}
	defer b.untrack(node)
	defer node.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(node, client)
		node.(*net.TCPConn).CloseWrite()
	}()
	io.Copy(client, node)
	client.(*net.TCPConn).CloseWrite()
	<-done
}

// close stops accepting, closes every connection under way and waits for
// the relays to end.
func (b *balancer) close() {
	b.mu.Lock()
	b.closed = true
	for c := range b.open {
		c.Close()
	}
	b.mu.Unlock()
	b.ln.Close()
	b.wg.Wait()
}

// TestBalancer: the balancer hands each new connection to the next node
// in turn, relays both ways (a client's end of writing reaches the node,
// the node's answer and end reach the client), and skips a node set down
// and one that refuses connections.
func TestBalancer(t *testing.T) {
	var nodes []net.Listener
	for i := range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, ln)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() { // node i answers "i:" and what it read, once the client has finished
					defer c.Close()
					b, _ := io.ReadAll(c)
					c.Write(append([]byte{byte('0' + i), ':'}, b...))
				}()
			}
		}()
	}
	lb := newBalancer(t, 3)
	for i, ln := range nodes {
		lb.set(i, ln.Addr().String())
	}
	f := func(want ...string) {
		t.Helper()
		for _, w := range want {
			c, err := net.Dial("tcp", lb.addr())
			if err != nil {
				t.Fatal(err)
			}
			c.Write([]byte("hello"))
			c.(*net.TCPConn).CloseWrite()
			got, _ := io.ReadAll(c)
			c.Close()
			if string(got) != w+":hello" {
				t.Fatalf("got %q, want %q", got, w+":hello")
			}
		}
	}
	f("0", "1", "2", "0", "1")
	lb.set(0, "") // down
	f("2", "1", "2")
	nodes[1].Close() // refuses
	f("2", "2")
	if got := lb.counts(); got[0] != 2 || got[1] != 3 || got[2] != 5 {
		t.Errorf("connections per node %v, want [2 3 5]", got)
	}
}
