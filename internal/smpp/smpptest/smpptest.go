// Package smpptest runs a real SMPP server for tests: the npm package
// smpp (MIT), driven by internal/smpp/testdata/server.js, which records
// every PDU it is sent as a JSON line and answers as a plain SMSC would,
// with failures chosen by the destination number (the script's comment
// lists them: 61400000001 refused for good, 61400000002 throttled once,
// 61400000003 never answered, 61400000004 undelivered, 61400000005 a
// system error).
//
// The package and its dependencies are pinned by
// internal/smpp/testdata/npm/package-lock.json and installed once with
// `npm ci` into the user's cache folder (lodge-test/npm-smpp-HASH, HASH
// of the lock file), into a temporary folder renamed into place, so that
// test processes running at once do not install over each other. node
// and npm are looked up with testenv.Tool: missing, the test is skipped,
// or fails under LODGE_REQUIRE_TOOLS (scripts/test installs Debian's
// nodejs and npm).
//
// The server's address is 127.0.0.1 and a port the kernel chose: Start
// binds port 0 and hands the listening socket to node (file descriptor
// 3), so the address outlives the process: Kill and Restart stop and
// start the server behind the same address, as an SMSC that crashed and
// came back. While it is down, connections wait in the socket's backlog
// unanswered.
//
// Use from another package's test:
//
//	srv := smpptest.Start(t)
//	// lodge serve -smpp srv.URL(), or smpp.Dial(ctx, srv.Config())
//	msgs := srv.WaitMessages(t, 1) // texts reassembled from the submit_sm received
package smpptest

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lodge-mail/lodge/internal/smpp"
	"github.com/lodge-mail/lodge/internal/testenv"
)

// T is what the package needs of a test: testing.TB has it, and so can
// a program that is not a test (bench/smsbench).
type T interface {
	Helper()
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Logf(format string, args ...any)
	Fatal(args ...any)
	Cleanup(func())
	TempDir() string
	Failed() bool
}

// Options configure a server; the zero value is system_id "lodge",
// password "secret", no enquire_link from the server and answers at
// once.
type Options struct {
	SystemID, Password string
	// EnquireLink, when set, has the server send enquire_link that
	// often once a client is bound (their answers are recorded).
	EnquireLink time.Duration
	// SubmitDelay, when set, delays each submit_sm's answer (recorded
	// at once): the latency of an SMSC across a network.
	SubmitDelay time.Duration
}

// Server is a running npm smpp server.
type Server struct {
	// Addr is where it listens: 127.0.0.1:PORT.
	Addr               string
	SystemID, Password string

	t           T
	opts        Options
	ln          *net.TCPListener
	records     string
	script      string
	node        string
	nodeModules string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	stderr *syncBuffer
}

// Start starts a server with the default Options; it is stopped at the
// test's cleanup.
func Start(t T) *Server { return StartWith(t, Options{}) }

// StartWith starts a server with o.
func StartWith(t T, o Options) *Server {
	t.Helper()
	if o.SystemID == "" {
		o.SystemID = "lodge"
	}
	if o.Password == "" {
		o.Password = "secret"
	}
	node := testenv.Tool(t, "node")
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	testdata := filepath.Join(root, "internal", "smpp", "testdata")
	s := &Server{
		SystemID: o.SystemID, Password: o.Password,
		t: t, opts: o, node: node,
		script:      filepath.Join(testdata, "server.js"),
		nodeModules: testenv.NpmCI(t, filepath.Join(testdata, "npm"), "smpp", filepath.Join("smpp", "package.json")),
		records:     filepath.Join(t.TempDir(), "records.jsonl"),
	}
	s.ln, err = net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = s.ln.Addr().String()
	t.Cleanup(func() {
		s.stop(syscall.SIGTERM)
		s.ln.Close()
	})
	s.Restart(t)
	return s
}

// URL is the server as lodge serve -smpp takes it.
func (s *Server) URL() string {
	return (&url.URL{Scheme: "smpp", User: url.UserPassword(s.SystemID, s.Password), Host: s.Addr}).String()
}

// Config is a client configuration for the server (the defaults
// otherwise).
func (s *Server) Config() smpp.Config {
	return smpp.Config{Addr: s.Addr, SystemID: s.SystemID, Password: s.Password}
}

// Restart starts the server if it is not running (Start has, Kill
// stops it); the records of the previous process are kept.
func (s *Server) Restart(t T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		select {
		case <-s.exited:
		default:
			return // running
		}
	}
	f, err := s.ln.File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	args := []string{s.script, "--records", s.records, "--system-id", s.SystemID, "--password", s.Password, "--fd", "3"}
	if s.opts.EnquireLink > 0 {
		args = append(args, "--enquire-link-ms", fmt.Sprint(s.opts.EnquireLink.Milliseconds()))
	}
	if s.opts.SubmitDelay > 0 {
		args = append(args, "--submit-delay-ms", fmt.Sprint(s.opts.SubmitDelay.Milliseconds()))
	}
	cmd := exec.Command(s.node, args...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+s.nodeModules)
	cmd.ExtraFiles = []*os.File{f} // descriptor 3
	stopWithTest(cmd)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case first <- sc.Text():
			default:
			}
		}
		cmd.Wait()
		close(exited)
	}()
	select {
	case line := <-first:
		if !strings.HasPrefix(line, "listening ") {
			t.Fatalf("smpp server said %q, not listening PORT; stderr:\n%s", line, stderr.String())
		}
	case <-exited:
		t.Fatalf("smpp server exited at start: %v; stderr:\n%s", cmd.ProcessState, stderr.String())
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("smpp server did not say it listens within a minute; stderr:\n%s", stderr.String())
	}
	s.cmd, s.exited, s.stderr = cmd, exited, stderr
}

// Kill stops the server with SIGKILL, mid-stream: its connections drop,
// nothing is answered until Restart.
func (s *Server) Kill(t T) {
	t.Helper()
	s.stop(syscall.SIGKILL)
}

func (s *Server) stop(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(sig)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	if s.t.Failed() {
		s.t.Logf("smpp server stderr:\n%s", s.stderr.String())
	}
}

// Hex is octets written in hex in the records.
type Hex []byte

func (h *Hex) UnmarshalText(b []byte) error {
	v, err := hex.DecodeString(string(b))
	*h = v
	return err
}

// TLV is an optional parameter of a recorded submit_sm.
type TLV struct {
	Tag   uint16 `json:"tag"`
	Value Hex    `json:"value"`
}

// Record is one event the server recorded.
type Record struct {
	Kind   string `json:"kind"` // bind, submit_sm, deliver_sm_resp, enquire_link, enquire_link_resp, unbind, error
	Seq    uint32 `json:"seq"`
	Status uint32 `json:"status"` // what the server answered (submit_sm, bind) or was answered

	// bind
	SystemID         string `json:"system_id"`
	SystemType       string `json:"system_type"`
	InterfaceVersion int    `json:"interface_version"`

	// submit_sm
	MessageID          string `json:"message_id"` // given in submit_sm_resp; empty when refused
	ServiceType        string `json:"service_type"`
	SourceTON          byte   `json:"source_addr_ton"`
	SourceNPI          byte   `json:"source_addr_npi"`
	Source             string `json:"source_addr"`
	DestTON            byte   `json:"dest_addr_ton"`
	DestNPI            byte   `json:"dest_addr_npi"`
	Dest               string `json:"destination_addr"`
	ESMClass           byte   `json:"esm_class"`
	ProtocolID         byte   `json:"protocol_id"`
	PriorityFlag       byte   `json:"priority_flag"`
	RegisteredDelivery byte   `json:"registered_delivery"`
	DataCoding         byte   `json:"data_coding"`
	ShortMessage       Hex    `json:"short_message"`
	TLVs               []TLV  `json:"tlvs"`

	// error
	Error string `json:"error"`
}

// TLV returns the value of the first TLV with the tag.
func (r Record) TLV(tag uint16) ([]byte, bool) {
	for _, t := range r.TLVs {
		if t.Tag == tag {
			return t.Value, true
		}
	}
	return nil, false
}

// Records returns every event recorded so far, in order (a line the
// server is writing is left for the next call).
func (s *Server) Records(t T) []Record {
	t.Helper()
	b, err := os.ReadFile(s.records)
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	} else {
		b = nil
	}
	var out []Record
	for n, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("smpp server record %d: %v: %s", n+1, err, line)
		}
		out = append(out, r)
	}
	return out
}

// Submits returns the submit_sm recorded so far.
func (s *Server) Submits(t T) []Record {
	t.Helper()
	return Kind(s.Records(t), "submit_sm")
}

// Kind returns the records of one kind.
func Kind(rs []Record, kind string) []Record {
	var out []Record
	for _, r := range rs {
		if r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

// WaitFor waits until cond holds for the records, and returns them; it
// fails the test, naming what, after a minute.
func (s *Server) WaitFor(t T, what string, cond func([]Record) bool) []Record {
	t.Helper()
	var rs []Record
	testenv.WaitFor(t, func() bool { rs = s.Records(t); return cond(rs) }, func() string {
		return fmt.Sprintf("%s (%d records)", what, len(rs))
	})
	return rs
}

// Message is a text the server received whole: every part accepted.
type Message struct {
	Source, Dest string
	Text         string
	DataCoding   byte
	Parts        []Record // in order; the last accepted copy of each
}

// Messages reassembles the submit_sm the server accepted into texts:
// a single part is a message; the parts of a concatenated one (same
// source, destination, reference and count) are joined when all are
// there, the last accepted copy of a part sent again counting. Messages
// are in the order of their first part.
func (s *Server) Messages(t T) []Message {
	t.Helper()
	msgs, err := Reassemble(s.Submits(t))
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// WaitMessages waits until at least n messages are whole and returns
// them all.
func (s *Server) WaitMessages(t T, n int) []Message {
	t.Helper()
	var msgs []Message
	s.WaitFor(t, fmt.Sprintf("%d whole messages", n), func(rs []Record) bool {
		var err error
		if msgs, err = Reassemble(Kind(rs, "submit_sm")); err != nil {
			t.Fatal(err)
		}
		return len(msgs) >= n
	})
	return msgs
}

// Reassemble joins accepted submit_sm records into messages (Messages).
// The parts of a concatenated message are told by source, destination,
// 8-bit reference and count, as a handset tells them: a part joins the
// unfinished message of its key (replacing an earlier copy of itself),
// and once that message is whole the next part of the key starts
// another. Two concatenated messages to one number with the same
// reference, sent at once, mix as they would on a handset.
func Reassemble(submits []Record) ([]Message, error) {
	type key struct {
		src, dst string
		ref      uint16
		total    int
	}
	type group struct {
		single *Message // a message of one part without header
		key    key
		parts  map[int]Record
		text   map[int]string
	}
	var order []*group // in the order of their first part
	open := map[key]*group{}
	for i, r := range submits {
		if r.Status != 0 || r.MessageID == "" {
			continue
		}
		text, c, err := smpp.DecodePart(r.DataCoding, r.ESMClass, r.ShortMessage)
		if err != nil {
			return nil, fmt.Errorf("submit_sm %d (seq %d) to %s: %w", i+1, r.Seq, r.Dest, err)
		}
		if c.Total == 0 {
			order = append(order, &group{single: &Message{Source: r.Source, Dest: r.Dest, Text: text, DataCoding: r.DataCoding, Parts: []Record{r}}})
			continue
		}
		k := key{r.Source, r.Dest, c.Ref, c.Total}
		g := open[k]
		if g == nil {
			g = &group{key: k, parts: map[int]Record{}, text: map[int]string{}}
			open[k] = g
			order = append(order, g)
		}
		g.parts[c.Seq], g.text[c.Seq] = r, text
		if len(g.parts) == c.Total {
			delete(open, k) // whole: the next part of the key starts another
		}
	}
	var whole []Message
	for _, g := range order {
		if g.single != nil {
			whole = append(whole, *g.single)
			continue
		}
		if len(g.parts) != g.key.total {
			continue
		}
		m := Message{Source: g.key.src, Dest: g.key.dst, DataCoding: g.parts[1].DataCoding}
		var sb strings.Builder
		for n := 1; n <= g.key.total; n++ {
			sb.WriteString(g.text[n])
			m.Parts = append(m.Parts, g.parts[n])
		}
		m.Text = sb.String()
		whole = append(whole, m)
	}
	return whole, nil
}

// syncBuffer is a buffer a process writes to while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

var _ io.Writer = (*syncBuffer)(nil)
