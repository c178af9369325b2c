package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	engine "github.com/zishang520/socket.io/parsers/engine/v3/packet"
	eio "github.com/zishang520/socket.io/servers/engine/v3"
	"github.com/zishang520/socket.io/servers/engine/v3/transports"
)

// This file holds what the Server does at the Engine.IO level, below the
// Socket.IO layer, to work around defects of servers/socket and
// servers/engine v3.0.2 (spec/decisions.md, Socket.IO library defects).

// earlyPacketWait bounds how long an /smcp packet that arrives before its
// namespace is registered is held (see connGate).
const earlyPacketWait = 5 * time.Second

// connGate works around servers/socket v3.0.2 answering a namespace CONNECT
// before it registers the namespace on the connection: the answer is written
// on the socket's task goroutine, and the registration follows it there. A
// client that emits as soon as it reads the answer (every SMCP client joins
// an office at once) can have its event decoded in between, on the
// connection's read goroutine; the library then finds no socket for /smcp and
// closes the whole connection. The Engine.IO socket emits "packet" for every
// incoming packet on that read goroutine before the Socket.IO layer decodes
// it, so the gate holds an /smcp event or ack there until the Server's
// connection handler, which runs after the registration, has opened it.
type connGate struct {
	mu   sync.Mutex                    // serialises connecting and registered
	open atomic.Pointer[chan struct{}] // closed while the /smcp socket is registered
}

func newConnGate() *connGate {
	g := &connGate{}
	ch := make(chan struct{})
	g.open.Store(&ch)
	return g
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// connecting is called for a CONNECT to /smcp: packets wait again until the
// new socket is registered.
func (g *connGate) connecting() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if isClosed(*g.open.Load()) {
		ch := make(chan struct{})
		g.open.Store(&ch)
	}
}

// registered is called by the Server's connection handler.
func (g *connGate) registered() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ch := *g.open.Load(); !isClosed(ch) {
		close(ch)
	}
}

// wait holds the calling read goroutine until the gate is open, the wait
// bound passes, or done is closed.
func (g *connGate) wait(done <-chan struct{}) {
	open := *g.open.Load()
	if isClosed(open) { // every packet once registered
		return
	}
	t := time.NewTimer(earlyPacketWait)
	defer t.Stop()
	select {
	case <-open:
	case <-t.C: // never registered (refused, or a client breaking the protocol): the library decides
	case <-done:
	}
}

// conn is what the Server keeps per Engine.IO connection: the gate above,
// the count of refused namespace CONNECTs, and the outgoing accounting.
type conn struct {
	gate         *connGate
	smcp         atomic.Pointer[session] // the /smcp session, once connected
	eio          eio.Socket
	authFailures atomic.Int32
	out          outgoing
	admitted     atomic.Bool // an /smcp CONNECT was admitted: full payload limit
	window       *time.Timer // the connect window (connectWindowClosed), stopped once admitted or closed
	place        *place      // its place among the connections (connlimit.go)
	posting      atomic.Bool // a long-polling POST of it is being served (Server.boundPolling)
	poll         pollWait    // the GET being served, ended when the connection closes
	// The generation its handshake negotiated and the version its client
	// named, "" for none (generation.go).
	gen     protocol.Generation
	version string
	// Under Server.mu: the grant its session is counted against
	// (countKeySession), and whether the connection has closed.
	keyGrant   *Grant
	keysClosed bool
}

// pollWait ends a long-polling GET left waiting when its connection
// closes. servers/engine v3.0.5 answers a waiting poll with the CLOSE
// packet when it closes a session, but tears down the transport's write
// queue before that packet is written: the poll is never answered, and its
// request goroutine and socket stay for as long as the client keeps the
// request open (measured: every poll waiting when the connect window closed
// its session). The Server serves each GET under a context of its own and
// cancels it when the connection closes; the library then ends the request
// (an empty answer) as it does when a client goes away.
//
// The cancel must come after the library has taken the request (its
// onPollRequest, which writes the request context's Cleanup that the
// cancel makes another goroutine run): the transport's "ready", which
// onPollRequest emits on the request's goroutine once it is done, marks
// the GET taken under mu, and the close takes mu too.
//
// A client that goes away is handled the same way: net/http cancels the
// request's context on its own goroutine, so the Server does not hand the
// library that context; it ends the GET itself (abandon), once taken.
type pollWait struct {
	mu        sync.Mutex
	cancel    context.CancelFunc // of the GET being served
	gen       uint64             // which GET that is
	taken     bool               // the library has taken that GET
	abandoned bool               // its client has gone away
	closed    bool               // the connection has closed
}

// start registers the GET being served and returns its generation, or why
// it is refused: another GET of the connection is being served, or the
// connection has closed already.
func (p *pollWait) start(cancel context.CancelFunc) (uint64, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.cancel != nil:
		return 0, "overlapping long-polling request"
	case p.closed:
		return 0, "session closed"
	}
	p.gen++
	p.cancel, p.taken, p.abandoned = cancel, false, false
	return p.gen, ""
}

// end forgets the GET once it has been answered.
func (p *pollWait) end() {
	p.mu.Lock()
	p.cancel, p.taken, p.abandoned = nil, false, false
	p.mu.Unlock()
}

// ready runs on the transport's "ready": a GET being served has been taken
// by the library; it is ended at once when the connection closed, or its
// client went away, meanwhile.
func (p *pollWait) ready() {
	p.mu.Lock()
	var cancel context.CancelFunc
	if p.cancel != nil {
		p.taken = true
		if p.closed || p.abandoned {
			cancel = p.cancel
		}
	}
	p.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// abandon runs when the client of GET gen has gone away: it ends that GET
// if the library has taken it (else ready will).
func (p *pollWait) abandon(gen uint64) {
	p.mu.Lock()
	var cancel context.CancelFunc
	if p.cancel != nil && p.gen == gen {
		p.abandoned = true
		if p.taken {
			cancel = p.cancel
		}
	}
	p.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// close ends the GET being served, if the library has taken it (else ready
// will).
func (p *pollWait) close() {
	p.mu.Lock()
	p.closed = true
	var cancel context.CancelFunc
	if p.cancel != nil && p.taken {
		cancel = p.cancel
	}
	p.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// preAdmissionPayload bounds every message of a connection until its
// /smcp CONNECT is admitted (spec/protocol.md, Limits): what comes before
// is an Engine.IO upgrade probe and the CONNECT with its auth payload, a
// few hundred bytes. Without it a client without a key could make the
// Server read messages of the full payload limit (8 MiB) one after the
// other on every connection it opens.
const preAdmissionPayload = 64 << 10

// admitted lifts the payload limit of the connection of engineID to the
// configured one, and gives back its place among the connections awaiting
// admission (connlimit.go): its /smcp CONNECT has been admitted. It runs before the
// CONNECT is answered, so the client's first event finds it lifted. A
// websocket transport reads the flag for every message (wsTransport's
// readLimit); a long-polling one is told.
func (s *Server) admitted(engineID string) {
	c := s.conn(engineID)
	if c == nil {
		return
	}
	c.admitted.Store(true)
	c.window.Stop()
	s.limits.settle(c.place)
	if t := c.eio.Transport(); t != nil {
		if _, ws := t.(*wsTransport); !ws {
			t.SetMaxHttpBufferSize(s.cfg.maxPayloadBytes)
		}
	}
}

// onEngineConnection prepares every Engine.IO connection: the gate and the
// outgoing accounting below, and the write-queue release.
func (s *Server) onEngineConnection(args ...any) {
	ec, ok := args[0].(eio.Socket)
	if !ok {
		return
	}
	// The connection keeps the place its handshake reserved (connlimit.go).
	var req *http.Request
	if ctx := ec.Request(); ctx != nil {
		req = ctx.Request()
	}
	pl := s.limits.claim(req)
	if pl == nil {
		// The engine did not hand over the request the handler reserved a
		// place for: counted here, so that the close below releases a
		// place this connection holds.
		var h http.Header
		if req != nil {
			h = req.Header
		}
		client := s.cfg.clientAddrs.of(h, ec.RemoteAddress())
		var reason string
		if pl, reason = s.limits.admit(client); reason != "" {
			s.connRefused(ec.RemoteAddress(), client, reason)
			go ec.Close(true) // off the emitting goroutine: Close re-enters the engine socket
			return
		}
	}
	c := &conn{gate: newConnGate(), eio: ec, place: pl, gen: protocol.DefaultGeneration}
	if req != nil {
		c.gen, c.version = s.negotiated(req.URL.Query())
	}
	c.out.limit = s.cfg.maxOutgoing
	c.out.stall = s.cfg.stallTimeout
	c.out.closeConn = func(reason string) {
		s.connLogs.warn(s.log, "connection closed: peer not reading", "engine_id", ec.Id(), "remote", ec.RemoteAddress(), "reason", reason)
		go ec.Close(true) // off the emitting goroutine: Close re-enters the engine socket
	}
	c.window = time.AfterFunc(s.cfg.connectTimeout, func() { s.connectWindowClosed(c) })
	s.conns.Store(ec.Id(), c)
	switch t := ec.Transport().(type) {
	case *wsTransport:
		t.conn.Store(c) // its reads follow the connection's admission
	case *pollingTransport: // its limit is set, and lifted on admission
		t.conn.Store(c)
		t.SetMaxHttpBufferSize(min(preAdmissionPayload, s.cfg.maxPayloadBytes))
		_ = t.On("ready", func(...any) { c.poll.ready() })
	}
	g := c.gate
	_ = ec.On("packet", func(args ...any) {
		p, _ := args[0].(*engine.Packet)
		if p == nil || p.Type != engine.MESSAGE {
			return
		}
		switch smcpPacketKind(p.Data) {
		case smcpConnect:
			g.connecting()
		case smcpTraffic:
			g.wait(s.ctx.Done())
			s.holdBack(c, dataLen(p.Data))
		}
	})
	_ = ec.On("packetCreate", func(args ...any) {
		if p, _ := args[0].(*engine.Packet); p != nil {
			c.out.created(dataLen(p.Data))
		}
	})
	_ = ec.On("flush", func(args ...any) {
		wbuf, _ := args[0].([]*engine.Packet)
		var n int64
		for _, p := range wbuf {
			if p != nil {
				n += dataLen(p.Data)
			}
		}
		c.out.flushed(n)
	})
	_ = ec.Once("close", func(...any) {
		c.window.Stop()
		// A closed connection awaits nothing: its place among those
		// awaiting admission is free at once, whatever its transport does.
		s.limits.settle(pl)
		s.releaseWhenTransportCloses(ec.Transport(), pl)
		c.poll.close()
		s.uncountKeySession(c)
		s.conns.Delete(ec.Id())
		c.out.stop()
		g.registered() // nothing to wait for on a closed connection
		// Engine v3.0.2: when the peer closes a websocket first, the
		// transport is marked closed without running DoClose, so its
		// write-queue goroutine never ends (one goroutine leaked per
		// connection). Running DoClose once the engine socket has closed
		// stops the queue; closing the already-closed connection again is
		// harmless. It runs on its own short-lived goroutine: the close
		// event is still being emitted under the connection's one-shot
		// listener, which DoClose would re-enter.
		if t := ec.Transport(); t != nil && t.Name() == transports.WEBSOCKET {
			go t.DoClose(nil)
		}
	})
}

// connectWindowClosed closes c, discarding its transport, if its /smcp
// CONNECT has not been admitted when the connect window ends
// (WithConnectTimeout; spec/decisions.md, Limits against hostile clients:
// Connections awaiting admission). The library closes such a connection at
// the same moment, but without discarding: a connection with a packet
// queued and no poll to take it (the first ping, due at the same time as
// the window with the default settings) then waits for a drain that never
// comes, and holds its place until the heartbeat gives up, 25 s later.
func (s *Server) connectWindowClosed(c *conn) {
	if !c.admitted.Load() {
		c.eio.Close(true)
	}
}

// pollingLingerBound bounds how long a closed connection's long-polling
// transport may keep its place (releaseWhenTransportCloses): the library's
// own wait (transports.DefaultPollingCloseTimeout, 30 s) and a margin.
const pollingLingerBound = transports.DefaultPollingCloseTimeout + 5*time.Second

// releaseWhenTransportCloses gives back the place pl of a closed connection
// once its transport t has closed too, or after pollingLingerBound. A
// websocket transport closes with its connection. A long-polling one with
// no poll waiting when its connection closes on a ping timeout or an error
// waits 30 s more for a poll, to deliver the CLOSE packet (none can come:
// the session is gone), holding the transport's state until then (about
// 11 KB each, measured: 300 sessions left by their client held 3.3 MB until
// the wait ended). Its place is held as long, so that a client dropping
// long-polling sessions as fast as it opens them stays within the
// connection bounds (spec/decisions.md, Limits against hostile clients).
func (s *Server) releaseWhenTransportCloses(t transports.Transport, pl *place) {
	var once sync.Once
	release := func(...any) { once.Do(func() { s.limits.release(pl) }) }
	if t == nil || t.Name() == transports.WEBSOCKET {
		release()
		return
	}
	_ = t.Once("close", release)
	if t.ReadyState() == "closed" {
		release()
		return
	}
	time.AfterFunc(s.cfg.pollingLinger, func() { release() }) // should the event never come
}

// holdBack counts an /smcp message of n bytes, about to be decoded and
// queued for its session's handlers, until the session's task queue
// reaches it (a task queued now runs just before the message's own), and
// holds the connection's reader while the session has more than the
// payload limit waiting (backlog.go). It runs on the reader, before the
// Socket.IO layer decodes the message.
func (s *Server) holdBack(c *conn, n int64) {
	sess := c.smcp.Load()
	if sess == nil || n == 0 {
		return
	}
	sess.backlog.read(n)
	sess.sock.Enqueue(func() { sess.backlog.handled(n) })
	sess.backlog.wait(s.cfg.maxPayloadBytes)
}

// registered opens the gate of the connection sock belongs to.
func (s *Server) registered(engineID string) {
	if c := s.conn(engineID); c != nil {
		c.gate.registered()
	}
}

func (s *Server) conn(engineID string) *conn {
	if c, ok := s.conns.Load(engineID); ok {
		return c.(*conn)
	}
	return nil
}

// authFailed counts a refused namespace CONNECT on the connection of
// engineID; at the configured maximum the connection is closed once the
// connect_error has been written (spec/protocol.md, Connection and auth).
func (s *Server) authFailed(engineID string) {
	c := s.conn(engineID)
	if c == nil {
		return
	}
	if n := c.authFailures.Add(1); int(n) == s.cfg.maxAuthFailures {
		s.connLogs.warn(s.log, "connection closed: too many refused connects", "engine_id", engineID, "remote", c.eio.RemoteAddress(), "refusals", n)
		closeAfterNextWrite(c.eio)
	}
}

// closeAfterNextWrite closes an Engine.IO connection once the next batch of
// packets handed to its transport has been written (the connect_error the
// library is about to send), or after a second if nothing is written.
func closeAfterNextWrite(ec eio.Socket) {
	var once sync.Once
	closeIt := func(...any) { once.Do(func() { go ec.Close(false) }) }
	timer := time.AfterFunc(time.Second, func() { closeIt() })
	_ = ec.Once("flush", func(...any) {
		// The transport emits "drain" once this batch is written.
		if t := ec.Transport(); t != nil {
			_ = t.Once("drain", func(...any) { timer.Stop(); closeIt() })
		}
	})
}

// dataLen is the size of an Engine.IO packet's data (0 for pings).
func dataLen(d any) int64 {
	if b, ok := d.(interface{ Len() int }); ok {
		return int64(b.Len())
	}
	return 0
}

// outgoing accounts the bytes the Server has queued for one connection and
// the peer has not read yet, from the engine's documented "packetCreate"
// (queued) and "flush" (handed to the transport) events: a batch handed to
// the transport is written once the next batch is handed over, so unsent is
// queued − flushed + the last batch, an upper bound. Over limit the
// connection is congested (the Server routes nothing to or from it); over
// twice the limit, or over it for the stall timeout, it is closed. The
// transport's own write blocks on a peer that does not read, so this
// bounds what one such peer can make the Server hold.
type outgoing struct {
	limit     int64
	stall     time.Duration
	closeConn func(reason string)

	mu        sync.Mutex
	queued    int64
	flushedN  int64
	lastBatch int64
	timer     *time.Timer // runs while congested
	closed    bool
}

func (o *outgoing) unsentLocked() int64 { return o.queued - o.flushedN + o.lastBatch }

func (o *outgoing) created(n int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.queued += n
	o.checkLocked()
}

func (o *outgoing) flushed(n int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.flushedN += n
	o.lastBatch = n
	o.checkLocked()
}

func (o *outgoing) checkLocked() {
	if o.closed {
		return
	}
	u := o.unsentLocked()
	switch {
	case u > 2*o.limit:
		o.closeLocked("outgoing buffer over twice its limit")
	case u > o.limit && o.timer == nil:
		o.timer = time.AfterFunc(o.stall, func() {
			o.mu.Lock()
			defer o.mu.Unlock()
			o.timer = nil
			if o.unsentLocked() > o.limit {
				o.closeLocked("outgoing buffer over its limit for the stall timeout")
			}
		})
	case u <= o.limit && o.timer != nil:
		o.timer.Stop()
		o.timer = nil
	}
}

func (o *outgoing) closeLocked(reason string) {
	o.closed = true
	if o.timer != nil {
		o.timer.Stop()
		o.timer = nil
	}
	o.closeConn(reason)
}

// congested reports whether the peer has more unsent bytes than the limit.
func (o *outgoing) congested() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closed || o.unsentLocked() > o.limit
}

func (o *outgoing) stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	if o.timer != nil {
		o.timer.Stop()
		o.timer = nil
	}
}

type packetKind int

const (
	smcpOther   packetKind = iota // not an /smcp packet, or a disconnect
	smcpConnect                   // CONNECT to /smcp
	smcpTraffic                   // EVENT or ACK on /smcp
)

// smcpPacketKind reads the head of the Socket.IO packet an Engine.IO
// message carries, in its string encoding ("2/smcp,…", "51-/smcp,…",
// "0/smcp,{…}"; the engine's own "4" is already stripped), without
// consuming it.
func smcpPacketKind(data any) packetKind {
	b, ok := data.(interface {
		Peek(int) ([]byte, error)
		Len() int
	})
	if !ok {
		return smcpOther
	}
	head, err := b.Peek(min(b.Len(), 32))
	if len(head) < 2 || err != nil && !errors.Is(err, io.EOF) {
		return smcpOther
	}
	typ, rest := head[0], head[1:] // binary packets ('5', '6') are refused by the parser (wire.go)
	if nsp, _, _ := bytes.Cut(rest, []byte(",")); string(nsp) != protocol.Namespace {
		return smcpOther
	}
	switch typ {
	case '0':
		return smcpConnect
	case '2', '3':
		return smcpTraffic
	}
	return smcpOther
}

// serveHoldingReads works around servers/engine v3.0.2 answering a
// websocket handshake (the Engine.IO OPEN packet) before the Socket.IO layer
// listens on the new connection: a client that sends its namespace CONNECT
// as soon as it reads OPEN can have it read, and dropped, in between, and
// then waits for an answer that never comes (about 1 connection in 150
// under the race detector). The library's handshake, up to and including
// the Socket.IO layer attaching its listeners, runs inside ServeHTTP; the
// hijacked connection's reads are held until ServeHTTP has returned, so
// nothing the client sends is read before someone listens. An upgrade of a
// long-polling connection (a websocket request with a sid) has the same
// race: the transport starts reading when it is made, and the engine
// listens for the client's probe only after that (socket.MaybeUpgrade), so
// a probe read in between was lost and the upgrade given up after 10 s;
// its reads are held the same way. It serves websocket requests only.
func serveHoldingReads(h http.Handler, w http.ResponseWriter, r *http.Request) {
	hw := &holdingWriter{release: make(chan struct{})}
	hw.w.Store(&w)
	defer close(hw.release)
	h.ServeHTTP(hw, r)
	if hw.hijacked.Load() {
		// The library keeps the ResponseWriter it was given for the
		// connection's life; net/http's writer of a hijacked connection
		// pins that connection's read and write buffers (8 KB). Nothing
		// may be written through it any more, so the reference is
		// dropped (spec/decisions.md, Idle memory per connection).
		var gone http.ResponseWriter = hijackedWriter{}
		hw.w.Store(&gone)
	}
}

// servePolling serves a long-polling request (or any that is not a
// websocket) through a pollWriter, and closes it when the library's
// handler returns, before net/http finishes the response.
//
// servers/engine v3.0.5 writes a poll's answer from its transport's write
// queue, on a goroutine of its own, and its handler returns as soon as the
// request's context is done: when a poll is ended while a packet is being
// written to it (its client went away, or sent a CLOSE in a POST meanwhile,
// and pollWait ended the GET), the queue's goroutine touched the
// ResponseWriter while net/http finished it (a data race, and a concurrent
// map access on the header that can crash the process; seen under load by
// e2e TestPollingMessageBound). After the handler returns, nothing reaches
// the ResponseWriter any more: a late answer is dropped with an error, as
// the library drops an answer to a poll that has gone.
func servePolling(h http.Handler, w http.ResponseWriter, r *http.Request) {
	pw := &pollWriter{w: w, header: http.Header{}}
	defer pw.finish()
	h.ServeHTTP(pw, r)
}

// errPollFinished is what a write to a poll whose handler has returned
// gets.
var errPollFinished = errors.New("server: the long-polling request has ended")

// pollWriter passes the library's writes on to the ResponseWriter of one
// request until finish. The library's header changes go to a header of its
// own (they are made after Header returns, outside mu), copied to the
// ResponseWriter's when the status is written.
type pollWriter struct {
	mu       sync.Mutex
	w        http.ResponseWriter
	header   http.Header
	wroteHdr bool
	finished bool
}

func (p *pollWriter) Header() http.Header { return p.header }

func (p *pollWriter) WriteHeader(code int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writeHeaderLocked(code)
}

func (p *pollWriter) writeHeaderLocked(code int) {
	if p.finished || p.wroteHdr {
		return
	}
	p.wroteHdr = true
	dst := p.w.Header()
	for k, v := range p.header {
		dst[k] = v
	}
	p.w.WriteHeader(code)
}

func (p *pollWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return 0, errPollFinished
	}
	p.writeHeaderLocked(http.StatusOK)
	return p.w.Write(b)
}

// finish ends the writes: it waits for one under way.
func (p *pollWriter) finish() {
	p.mu.Lock()
	p.finished = true
	p.mu.Unlock()
}

// holdingWriter hands out a hijacked connection whose reads wait for
// release.
type holdingWriter struct {
	w        atomic.Pointer[http.ResponseWriter]
	hijacked atomic.Bool
	release  chan struct{}
}

func (w *holdingWriter) inner() http.ResponseWriter { return *w.w.Load() }

func (w *holdingWriter) Header() http.Header { return w.inner().Header() }

func (w *holdingWriter) Write(b []byte) (int, error) { return w.inner().Write(b) }

func (w *holdingWriter) WriteHeader(code int) { w.inner().WriteHeader(code) }

func (w *holdingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.inner().(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("server: the ResponseWriter cannot be hijacked")
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.hijacked.Store(true)
	b := newBatchedConn(conn)
	b.release = w.release
	return b, brw, nil
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *holdingWriter) Unwrap() http.ResponseWriter { return w.inner() }

// hijackedWriter stands for net/http's writer once the connection is
// hijacked: it answers as that writer does then.
type hijackedWriter struct{}

func (hijackedWriter) Header() http.Header       { return http.Header{} }
func (hijackedWriter) Write([]byte) (int, error) { return 0, http.ErrHijacked }
func (hijackedWriter) WriteHeader(int)           {}
