package smpp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// Config says where and how to bind. Its zero value, with Addr,
// SystemID and Password set, is the documented defaults.
type Config struct {
	// Addr is the SMSC's host:port.
	Addr string
	// SystemID (at most 15 octets), Password (at most 8) and SystemType
	// (at most 12, often empty) are bind_transceiver's credentials.
	SystemID, Password, SystemType string
	// Window is how many submit_sm may await their response at once,
	// over all Submits; 0 means 10.
	Window int
	// EnquireLink is how often the session is probed with enquire_link;
	// 0 means 30 s. An enquire_link unanswered within ResponseTimeout
	// drops the session.
	EnquireLink time.Duration
	// ResponseTimeout bounds the wait for a response (bind, submit_sm,
	// enquire_link, unbind), for a TCP connection, for a write, and a
	// Submit's wait for a bound session; 0 means 10 s.
	ResponseTimeout time.Duration
	// ReconnectMin and ReconnectMax bound the wait before binding again
	// after a lost session or a failed attempt: ReconnectMin (0 means
	// 200 ms), doubling after each attempt to at most ReconnectMax (0
	// means 30 s), back to ReconnectMin once a session lasted
	// ReconnectMax.
	ReconnectMin, ReconnectMax time.Duration
	// Log receives the session's events (binds, losses, refused
	// receipts); nil means slog.Default().
	Log *slog.Logger
	// Metrics, when set, receives the client's counters (smpp_*).
	Metrics *metrics.Set
}

func (cfg Config) withDefaults() (Config, error) {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if cfg.Window <= 0 {
		cfg.Window = 10
	}
	def(&cfg.EnquireLink, 30*time.Second)
	def(&cfg.ResponseTimeout, 10*time.Second)
	def(&cfg.ReconnectMin, 200*time.Millisecond)
	def(&cfg.ReconnectMax, 30*time.Second)
	cfg.ReconnectMax = max(cfg.ReconnectMax, cfg.ReconnectMin)
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.NewSet()
	}
	if cfg.Addr == "" {
		return cfg, errors.New("smpp: config: no address")
	}
	// the bind PDU checks the same lengths; said here, before dialling
	for _, f := range []struct {
		name, v string
		max     int
	}{{"system_id", cfg.SystemID, maxSystemID}, {"password", cfg.Password, maxPassword}, {"system_type", cfg.SystemType, maxSystemType}} {
		if len(f.v) >= f.max {
			return cfg, fmt.Errorf("smpp: config: %s is %d octets, at most %d", f.name, len(f.v), f.max-1)
		}
	}
	return cfg, nil
}

// Message is one SMS to send.
type Message struct {
	// From is the sender (SourceAddress): empty for the SMSC's default,
	// a phone number, or an alphanumeric name.
	From string
	// To is the recipient's phone number (NumberAddress).
	To string
	// Text is the message; sent in as many parts as it needs (Split).
	Text string
	// Ref is the caller's dedup key for the message, the same on every
	// attempt: its FNV-1a digest gives the user_message_reference TLV
	// (low 16 bits) and the concatenation reference (the next 8), so a
	// message sent again looks the same on the wire. Empty: no
	// user_message_reference, and a concatenation reference of the
	// client's own.
	Ref string
	// Receipt asks the SMSC for a delivery receipt (registered_delivery
	// 1), delivered by Receipts.
	Receipt bool
}

// Client keeps one bound transceiver session to an SMSC, binding again
// after a loss. Its methods are safe for concurrent use.
type Client struct {
	cfg      Config
	log      *slog.Logger
	window   chan struct{} // a slot per submit_sm awaiting its response
	receipts chan Receipt
	seq      atomic.Uint32
	anon     atomic.Uint32 // concatenation references of messages without Ref

	ctx    context.Context // ends when Close has unbound: the manager stops
	cancel context.CancelFunc

	mu      sync.Mutex
	sess    *session      // the bound session, nil between sessions
	ready   chan struct{} // closed when sess is set
	lastErr error         // why the last attempt to bind failed
	closed  bool

	closing   chan struct{} // closed when Close starts
	submits   sync.WaitGroup
	managed   sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	m clientMetrics
}

type clientMetrics struct {
	parts, permanent, temporary, binds, bindFailures, drops, receipts, receiptsRefused *metrics.Counter
}

// receiptBuffer is how many receipts wait for Receipts' reader; past it a
// receipt is refused with ESME_RX_T_APPN for the SMSC to send again.
const receiptBuffer = 1024

// Dial binds to the SMSC as a transceiver and returns the Client that
// keeps the session. It tries again with the reconnect backoff until it
// is bound, the SMSC refuses the bind for good (a permanent *StatusError:
// wrong system_id or password), or ctx ends. ctx bounds Dial only, not
// the Client.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Client{
		cfg:      cfg,
		log:      cfg.Log.With("smsc", cfg.Addr),
		window:   make(chan struct{}, cfg.Window),
		receipts: make(chan Receipt, receiptBuffer),
		ready:    make(chan struct{}),
		closing:  make(chan struct{}),
	}
	set := cfg.Metrics
	c.m = clientMetrics{
		parts:           set.GetOrCreateCounter("smpp_submit_parts_total"),
		permanent:       set.GetOrCreateCounter(`smpp_submit_part_errors_total{kind="permanent"}`),
		temporary:       set.GetOrCreateCounter(`smpp_submit_part_errors_total{kind="temporary"}`),
		binds:           set.GetOrCreateCounter("smpp_binds_total"),
		bindFailures:    set.GetOrCreateCounter("smpp_bind_failures_total"),
		drops:           set.GetOrCreateCounter("smpp_session_drops_total"),
		receipts:        set.GetOrCreateCounter("smpp_receipts_total"),
		receiptsRefused: set.GetOrCreateCounter("smpp_receipts_refused_total"),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	delay := cfg.ReconnectMin
	var last error // of the last attempt that ended by itself, not by ctx
	for attempt := 1; ; attempt++ {
		s, err := c.connect(ctx)
		if err == nil {
			c.publish(s)
			c.managed.Add(1)
			go c.manage(s)
			return c, nil
		}
		if IsPermanent(err) {
			c.cancel()
			return nil, err
		}
		if ctx.Err() == nil || last == nil {
			last = err
		}
		c.log.Warn("smpp bind failed", "attempt", attempt, "err", err, "retry_in", delay)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			c.cancel()
			return nil, fmt.Errorf("smpp: dial %s: %w after %d attempts, the last: %w", cfg.Addr, ctx.Err(), attempt, last)
		case <-t.C:
		}
		delay = min(2*delay, cfg.ReconnectMax)
	}
}

// Receipts delivers the SMSC's delivery receipts, each answered with
// deliver_sm_resp once it is in this channel's buffer (1,024): a receipt
// that finds the buffer full is refused with ESME_RX_T_APPN, for the
// SMSC to send again later, and an unreadable one with ESME_RX_P_APPN. A
// deliver_sm that is not a receipt (a reply from a handset) is
// acknowledged and logged, not kept. The channel is closed by Close.
func (c *Client) Receipts() <-chan Receipt { return c.receipts }

// Submit sends m, in as many submit_sm as its text needs, and returns
// the message id the SMSC gave each part, in order. It returns when
// every part is answered: the parts of all Submits share the window, so
// many Submits proceed at once. Without a bound session it waits up to
// ResponseTimeout for one, then fails with ErrNotBound.
//
// The error of a part says whether to send again (IsPermanent): a
// message this package refuses before sending (ErrInvalidMessage) or a
// permanent command_status is final; a temporary status, a lost
// connection, a timeout or ctx's end may have left some parts accepted
// by the SMSC, so the message is sent again whole, with the same Ref.
func (c *Client) Submit(ctx context.Context, m Message) ([]string, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	c.submits.Add(1)
	c.mu.Unlock()
	defer c.submits.Done()

	sms, err := c.prepare(m)
	if err != nil {
		return nil, fmt.Errorf("smpp: message to %q: %w", m.To, err)
	}
	ids := make([]string, len(sms))
	calls := make([]*call, 0, len(sms))
	var firstErr error
	note := func(i int, err error) {
		if IsPermanent(err) {
			c.m.permanent.Inc()
		} else {
			c.m.temporary.Inc()
		}
		// a permanent failure of any part is the message's answer: sending
		// it again cannot succeed
		if firstErr == nil || IsPermanent(err) && !IsPermanent(firstErr) {
			firstErr = fmt.Errorf("smpp: part %d of %d to %s: %w", i+1, len(sms), m.To, err)
		}
	}
	// a part holds a slot of the window from its sending to its answer
	// (or timeout, or the session's loss), whoever waits for it: the
	// parts of a message longer than the window go as answers free slots
	for i, sm := range sms {
		if err := c.acquire(ctx); err != nil {
			note(i, err)
			break
		}
		s, err := c.session(ctx)
		if err != nil {
			c.release()
			note(i, err)
			break
		}
		cl, err := s.call(SubmitSM, sm, c.release)
		if err != nil {
			note(i, err)
			break
		}
		c.m.parts.Inc()
		calls = append(calls, cl)
	}
	for i, cl := range calls {
		p, err := cl.wait(ctx)
		if err == nil {
			ids[i], err = submitAnswer(cl, p)
		}
		if err != nil {
			note(i, err)
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return ids, nil
}

// submitAnswer reads a submit_sm's response.
func submitAnswer(cl *call, p *PDU) (string, error) {
	switch {
	case p.ID == GenericNack:
		st := p.Status
		if st == StatusOK {
			st = StatusUnknownErr
		}
		return "", &StatusError{Command: SubmitSM, Status: st}
	case p.ID != SubmitSMResp:
		err := fmt.Errorf("%w: %s answers submit_sm %d", ErrConnLost, p.ID, p.Seq)
		cl.s.fail(err)
		return "", err
	case p.Status != StatusOK:
		return "", &StatusError{Command: SubmitSM, Status: p.Status}
	}
	if r, ok := p.Body.(*SMResp); ok {
		return r.MessageID, nil
	}
	return "", nil
}

// prepare turns a message into its submit_sm bodies.
func (c *Client) prepare(m Message) ([]*ShortMessage, error) {
	src, err := SourceAddress(m.From)
	if err != nil {
		return nil, err
	}
	dst, err := NumberAddress(m.To)
	if err != nil {
		return nil, err
	}
	var tlvs []TLV
	var ref byte
	if m.Ref != "" {
		h := fnv.New32a()
		h.Write([]byte(m.Ref))
		sum := h.Sum32()
		tlvs = []TLV{{Tag: TagUserMessageReference, Value: []byte{byte(sum >> 8), byte(sum)}}}
		ref = byte(sum >> 16)
	} else {
		ref = byte(c.anon.Add(1))
	}
	coding, parts, err := Split(m.Text, ref)
	if err != nil {
		return nil, err
	}
	var esm, rd byte
	if len(parts) > 1 {
		esm = ESMClassUDHI
	}
	if m.Receipt {
		rd = 1
	}
	sms := make([]*ShortMessage, len(parts))
	for i, p := range parts {
		sms[i] = &ShortMessage{Source: src, Dest: dst, ESMClass: esm, RegisteredDelivery: rd,
			DataCoding: coding, Message: p, TLVs: tlvs}
	}
	return sms, nil
}

func (c *Client) acquire(ctx context.Context) error {
	select {
	case c.window <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.closing:
		return ErrClosed
	}
}

func (c *Client) release() { <-c.window }

// session returns the bound session, waiting up to ResponseTimeout for
// one.
func (c *Client) session(ctx context.Context) (*session, error) {
	var timer *time.Timer
	for {
		c.mu.Lock()
		s, ready, last := c.sess, c.ready, c.lastErr
		c.mu.Unlock()
		if s != nil {
			if timer != nil {
				timer.Stop()
			}
			return s, nil
		}
		if timer == nil {
			timer = time.NewTimer(c.cfg.ResponseTimeout)
			defer timer.Stop()
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closing:
			return nil, ErrClosed
		case <-timer.C:
			if last == nil {
				last = errors.New("the session was lost")
			}
			// the cause as text only: a bind refused for good (a changed
			// password) must not make the message look refused
			return nil, fmt.Errorf("%w within %s: %v", ErrNotBound, c.cfg.ResponseTimeout, last)
		}
	}
}

// publish makes s the session Submits use, unless it is over already.
// Under c.mu, as fail's withdrawal is: a dead session is never the
// published one, so Submits do not spin on it.
func (c *Client) publish(s *session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.isDead() {
		return
	}
	c.sess, c.lastErr = s, nil
	close(c.ready)
	c.m.binds.Inc()
	c.log.Info("smpp bound", "system_id", c.cfg.SystemID)
}

func (c *Client) setLastErr(err error) {
	c.mu.Lock()
	c.lastErr = err
	c.mu.Unlock()
}

// manage binds again whenever the session is lost, until Close.
func (c *Client) manage(s *session) {
	defer c.managed.Done()
	delay := c.cfg.ReconnectMin
	for {
		select {
		case <-s.dead:
		case <-c.ctx.Done():
			s.fail(ErrClosed)
		}
		s.wg.Wait()
		if time.Since(s.bound) >= c.cfg.ReconnectMax {
			delay = c.cfg.ReconnectMin
		}
		for s.isDead() {
			select {
			case <-c.closing:
				return // Close unbound it; no new session
			default:
			}
			t := time.NewTimer(delay)
			select {
			case <-c.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			delay = min(2*delay, c.cfg.ReconnectMax)
			ns, err := c.connect(c.ctx)
			if err != nil {
				c.m.bindFailures.Inc()
				c.setLastErr(err)
				c.log.Warn("smpp bind failed", "err", err, "retry_in", delay)
				continue
			}
			s = ns
			c.publish(s)
		}
	}
}

// Close stops new Submits, waits for those in progress (each part's
// response is awaited at most ResponseTimeout), unbinds, closes the
// connection and the Receipts channel. It returns the unbind's error, if
// any; it is safe to call more than once.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		close(c.closing)
		c.submits.Wait()
		c.mu.Lock()
		s := c.sess
		c.mu.Unlock()
		if s != nil {
			cl, err := s.call(Unbind, nil, nil)
			if err == nil {
				var p *PDU
				if p, err = cl.wait(context.Background()); err == nil && p.Status != StatusOK {
					err = &StatusError{Command: Unbind, Status: p.Status}
				}
			}
			if err != nil {
				c.closeErr = fmt.Errorf("smpp: unbind: %w", err)
			}
		}
		c.cancel()
		c.managed.Wait()
		close(c.receipts)
	})
	return c.closeErr
}

func (c *Client) nextSeq() uint32 {
	for {
		if n := c.seq.Add(1) & 0x7FFFFFFF; n != 0 {
			return n
		}
	}
}

// session is one TCP connection, bound.
type session struct {
	c     *Client
	conn  net.Conn
	bound time.Time

	wmu sync.Mutex
	buf []byte // the PDU being written, under wmu

	mu      sync.Mutex
	pending map[uint32]*call

	once sync.Once
	dead chan struct{} // closed when the session is over
	err  error         // why; set before dead is closed

	wg sync.WaitGroup // its reader and enquirer
}

// connect dials and binds; ctx bounds both.
func (c *Client) connect(ctx context.Context) (*session, error) {
	timeout := c.cfg.ResponseTimeout
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, "tcp", c.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConnLost, err)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	s := &session{c: c, conn: conn, pending: map[uint32]*call{}, dead: make(chan struct{})}
	seq := c.nextSeq()
	bind := &PDU{ID: BindTransceiver, Seq: seq, Body: &Bind{SystemID: c.cfg.SystemID, Password: c.cfg.Password,
		SystemType: c.cfg.SystemType, InterfaceVersion: InterfaceV34}}
	fail := func(err error) (*session, error) {
		conn.Close()
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return nil, fmt.Errorf("smpp: bind_transceiver to %s: %w", c.cfg.Addr, err)
	}
	if err := s.write(bind); err != nil {
		return fail(err)
	}
	br := bufio.NewReaderSize(conn, 64<<10)
	conn.SetReadDeadline(time.Now().Add(timeout))
	for {
		p, err := ReadPDU(br)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				err = fmt.Errorf("%w: no bind_transceiver_resp within %s", ErrTimeout, timeout)
			} else if !errors.Is(err, ErrMalformed) {
				err = fmt.Errorf("%w: %w", ErrConnLost, err)
			}
			return fail(err)
		}
		if p.ID == EnquireLink {
			if err := s.write(&PDU{ID: EnquireLinkResp, Seq: p.Seq}); err != nil {
				return fail(err)
			}
			continue
		}
		if p.Seq != seq || p.ID != BindTransceiverResp && p.ID != GenericNack {
			return fail(fmt.Errorf("%w: %s (sequence %d) before bind_transceiver_resp", ErrConnLost, p.ID, p.Seq))
		}
		if p.Status != StatusOK || p.ID == GenericNack {
			st := p.Status
			if st == StatusOK {
				st = StatusUnknownErr
			}
			return fail(&StatusError{Command: BindTransceiver, Status: st})
		}
		break
	}
	conn.SetReadDeadline(time.Time{})
	s.bound = time.Now()
	s.wg.Add(2)
	go s.read(br)
	go s.enquire()
	return s, nil
}

func (s *session) isDead() bool {
	select {
	case <-s.dead:
		return true
	default:
		return false
	}
}

// fail ends the session: in-flight calls fail with ErrConnLost.
func (s *session) fail(err error) {
	s.once.Do(func() {
		c := s.c
		c.mu.Lock()
		s.err = err
		close(s.dead)
		if c.sess == s {
			c.sess, c.lastErr = nil, err
			c.ready = make(chan struct{})
		}
		c.mu.Unlock()
		s.conn.Close()
		s.mu.Lock()
		pending := s.pending
		s.pending = nil // call refuses to add: the session is dead
		s.mu.Unlock()
		for _, cl := range pending {
			cl.complete(nil, lost(err))
		}
		select {
		case <-c.closing:
			c.log.Debug("smpp session closed", "err", err)
		default:
			c.m.drops.Inc()
			c.log.Warn("smpp session lost", "err", err)
		}
	})
}

// lost is err as a connection loss.
func lost(err error) error {
	if errors.Is(err, ErrConnLost) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrConnLost, err)
}

// write sends one PDU; a failed write ends the session.
func (s *session) write(p *PDU) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var err error
	if s.buf, err = p.Append(s.buf[:0]); err != nil {
		return err // ours, not the connection's: the session is fine
	}
	s.conn.SetWriteDeadline(time.Now().Add(s.c.cfg.ResponseTimeout))
	if _, err := s.conn.Write(s.buf); err != nil {
		err = fmt.Errorf("%w: writing %s: %w", ErrConnLost, p.ID, err)
		s.fail(err)
		return err
	}
	return nil
}

// call is a request awaiting its response. It completes once: with the
// response, a timeout, the session's loss, or its waiter giving up; and
// then gives back its slot of the window, if it holds one.
type call struct {
	s       *session
	id      CommandID
	seq     uint32
	release func() // gives back the window slot; nil when it holds none
	timer   *time.Timer

	once sync.Once
	done chan struct{}
	resp *PDU
	err  error
}

func (cl *call) complete(p *PDU, err error) {
	cl.once.Do(func() {
		cl.resp, cl.err = p, err
		if cl.timer != nil {
			cl.timer.Stop()
		}
		if cl.release != nil {
			cl.release()
		}
		close(cl.done)
	})
}

// call sends a request, answered within ResponseTimeout. release, when
// set, is called once the call is over, whether or not it was sent.
func (s *session) call(id CommandID, body Body, release func()) (*call, error) {
	cl := &call{s: s, id: id, seq: s.c.nextSeq(), release: release, done: make(chan struct{})}
	s.mu.Lock()
	if s.pending == nil {
		s.mu.Unlock()
		err := lost(s.err)
		cl.complete(nil, err)
		return nil, err
	}
	s.pending[cl.seq] = cl
	timeout := s.c.cfg.ResponseTimeout
	cl.timer = time.AfterFunc(timeout, func() {
		s.forget(cl.seq)
		cl.complete(nil, fmt.Errorf("%w: no response to %s within %s", ErrTimeout, id, timeout))
	})
	s.mu.Unlock()
	if err := s.write(&PDU{ID: id, Seq: cl.seq, Body: body}); err != nil {
		s.forget(cl.seq)
		cl.complete(nil, err)
		return nil, err
	}
	return cl, nil
}

func (s *session) forget(seq uint32) {
	s.mu.Lock()
	delete(s.pending, seq)
	s.mu.Unlock()
}

// wait returns the call's outcome; when ctx ends first, the call is
// abandoned (a late response is ignored).
func (cl *call) wait(ctx context.Context) (*PDU, error) {
	select {
	case <-cl.done:
	case <-ctx.Done():
		cl.s.forget(cl.seq)
		cl.complete(nil, ctx.Err())
	}
	return cl.resp, cl.err
}

// read reads the SMSC's PDUs until the session ends. Anything
// unreadable ends it: the stream cannot be trusted past a malformed PDU.
func (s *session) read(br *bufio.Reader) {
	defer s.wg.Done()
	for {
		p, err := ReadPDU(br)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				err = fmt.Errorf("%w: reading: %w", ErrConnLost, err)
			}
			s.fail(err)
			return
		}
		switch {
		case p.ID.IsResponse():
			s.mu.Lock()
			cl := s.pending[p.Seq]
			delete(s.pending, p.Seq)
			s.mu.Unlock()
			if cl != nil {
				cl.complete(p, nil)
			} else {
				s.c.log.Warn("smpp response to no request in flight (late, or the SMSC's mistake)", "command", p.ID, "seq", p.Seq, "status", p.Status)
			}
		case p.ID == EnquireLink:
			s.write(&PDU{ID: EnquireLinkResp, Seq: p.Seq})
		case p.ID == DeliverSM:
			s.write(&PDU{ID: DeliverSMResp, Seq: p.Seq, Status: s.c.deliver(p.Body.(*ShortMessage)), Body: &SMResp{}})
		case p.ID == Unbind:
			s.write(&PDU{ID: UnbindResp, Seq: p.Seq})
			s.fail(fmt.Errorf("%w: the SMSC unbound", ErrConnLost))
			return
		default:
			// a command a transceiver is not sent, or one this package
			// does not know
			s.write(&PDU{ID: GenericNack, Status: StatusInvCmdID, Seq: p.Seq})
		}
	}
}

// deliver takes a deliver_sm and says how to answer it.
func (c *Client) deliver(m *ShortMessage) Status {
	if !IsReceipt(m) {
		c.log.Info("smpp deliver_sm that is not a delivery receipt ignored", "from", m.Source.Addr, "esm_class", m.ESMClass)
		return StatusOK
	}
	r, err := ParseReceipt(m)
	if err != nil {
		c.m.receiptsRefused.Inc()
		c.log.Warn("smpp delivery receipt refused", "err", err)
		return StatusRxPermanent
	}
	select {
	case c.receipts <- r:
		c.m.receipts.Inc()
		return StatusOK
	default:
		c.m.receiptsRefused.Inc()
		c.log.Warn("smpp delivery receipt refused for now: nobody reads Receipts", "message_id", r.MessageID)
		return StatusRxTemporary
	}
}

// enquire probes the session every EnquireLink; an unanswered probe
// ends it.
func (s *session) enquire() {
	defer s.wg.Done()
	t := time.NewTicker(s.c.cfg.EnquireLink)
	defer t.Stop()
	for {
		select {
		case <-s.dead:
			return
		case <-t.C:
		}
		cl, err := s.call(EnquireLink, nil, nil)
		if err != nil {
			return
		}
		if _, err := cl.wait(context.Background()); err != nil {
			s.fail(fmt.Errorf("enquire_link: %w", err))
			return
		}
	}
}
