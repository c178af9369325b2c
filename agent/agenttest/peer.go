// Package agenttest runs an in-process office for testing and trying
// Agents without a Server or a Computer, as net/http/httptest does for HTTP
// handlers: a real Socket.IO server on loopback (namespace /smcp) that plays
// the SMCP Server and its Computers at once.
//
//	p, err := agenttest.Start(agenttest.Options{})
//	if err != nil { ... }
//	defer p.Close()
//	c, err := agent.Dial(ctx, p.URL)
//	...
//	err = c.JoinOffice(ctx, "office-1")
//
// By default it answers every request with valid payloads drawn from its
// World (NewWorld: Computer "alpha" with tools echo, fail and slow and the
// documents of dpe://com.example.docs, Computer "beta"), joins any office
// (but "full", refused with 4101) and relays tool call cancels. A test
// overrides any event of any generation (the 0.4 capabilities'
// client:get_blob, client:get_skills... have no default answer) with its
// own answer (Handle, Reply: an ErrorPayload, a malformed payload, no
// answer, two values, a dropped connection),
// broadcasts notify:* events (Broadcast), reads what the Agent sent
// (Received, WaitCount, Handshakes), and stops and restarts the server on
// the same address to exercise reconnection (Stop, Restart).
//
// It is not a Server: one office, no authentication beyond Options.APIKey,
// no limits, no routing to real Computers. Against a deployment, dial the
// smcp-server's URL instead of p.URL (module
// github.com/a2c-smcp/smcp-go/server).
package agenttest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zishang520/socket.io/servers/socket/v3"
	"github.com/zishang520/socket.io/v3/pkg/types"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/sio/holdearly"
)

// Reply is a scripted answer to one request.
type Reply struct {
	// Values are the ack values sent back.
	Values []any
	// Silent sends no ack at all.
	Silent bool
	// Disconnect ends the session from the server side instead of
	// answering ("io server disconnect": the client does not reconnect).
	Disconnect bool
	// Drop closes the connection instead of answering, as a network
	// failure would (the client reconnects).
	Drop bool
}

// Answer replies with one ack value.
func Answer(v any) Reply { return Reply{Values: []any{v}} }

// Values replies with the given ack values (none, one, two...).
func Values(vs ...any) Reply { return Reply{Values: vs} }

// Fail replies with an ErrorPayload.
func Fail(code protocol.Code, format string, args ...any) Reply {
	return Answer(map[string]any{"error": map[string]any{"code": int(code), "message": fmt.Sprintf(format, args...)}})
}

// Silent sends no answer.
func Silent() Reply { return Reply{Silent: true} }

// Handler answers one request; req is the decoded payload. It runs on its
// own goroutine, so it may block (until ctx ends: the peer stops or the
// session disconnects).
type Handler func(ctx context.Context, req map[string]any) Reply

// Received is one event the peer received.
type Received struct {
	Event   string
	Payload map[string]any
	// Acked tells whether the sender asked for an ack.
	Acked bool
	// SID is the session it came on.
	SID string
}

// Options configure a Peer.
type Options struct {
	// Addr is the listen address (default "127.0.0.1:0").
	Addr string
	// APIKey, when set, is required as header x-api-key or auth api_key;
	// other connections are refused with {"code": 401}.
	APIKey string
	// World is the data answered by default (default NewWorld()).
	World *World
	// Unconfirmed makes the office confirm no protocol generation, as the
	// reference Servers do (an smcp-go Server names the session's
	// generation in the X-A2C-Version header of the handshake's answer;
	// https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#confirmation-and-extensions):
	// an Agent then fails a request for an smcp-go extension at once. Like
	// the references' version gates in their documented setup, the office
	// then refuses an Engine.IO request naming no a2c_version with HTTP 400
	// and the 0.4.2 Python Server's JSON body, so the Agent keeps the
	// generation it named.
	Unconfirmed bool
	// OldServer makes the office confirm no generation and ignore
	// a2c_version, as a Server of the 0.2 generation does (the Python
	// a2c-smcp 0.1.2 and Rust smcp 0.1.15 Servers): a Go client that speaks
	// 0.2.0 then finds it speaks 0.2.0.
	OldServer bool
}

// Peer is the scripted office: a Socket.IO server playing the Server and
// its Computers. Start returns one; Close stops it.
type Peer struct {
	// URL is the server's base URL, http://127.0.0.1:port.
	URL  string
	addr string
	opts Options
	// World holds the default answers' data; tests may change it (under
	// World.Mu).
	World *World

	mu        sync.Mutex
	io        *socket.Server
	srv       *http.Server
	ctx       context.Context
	cancel    context.CancelFunc
	handlers  map[string]Handler
	received  []Received
	changed   chan struct{} // closed and replaced on every received event
	handshake []Handshake
	// disconnects are "sid: reason" of every session that ended.
	disconnects []string
	// trace is what happened on the wire, in order, for failure reports.
	trace []string
	start time.Time
	wg    sync.WaitGroup
	// hijacked are the connections the websocket transport took over
	// from the HTTP server; Stop closes them.
	hijacked []net.Conn
}

// Handshake is what a connecting client sent.
type Handshake struct {
	Header http.Header
	Auth   map[string]any
}

// Start serves a Peer on opts.Addr (a free loopback port by default).
func Start(opts Options) (*Peer, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.World == nil {
		opts.World = NewWorld()
	}
	p := &Peer{opts: opts, World: opts.World, handlers: map[string]Handler{}, changed: make(chan struct{}), start: time.Now()}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, err
	}
	p.addr = ln.Addr().String()
	p.URL = "http://" + p.addr
	p.serve(ln)
	return p, nil
}

// confirmGenerations makes io confirm, as an smcp-go Server does, the
// generation of the version a client names in a2c_version (0.2.0 for none)
// in the X-A2C-Version header of the long-polling open and of the
// websocket upgrade. A version of no generation is confirmed as nothing.
// gateVersions refuses a request that names no a2c_version as the 0.4.2
// Python Server's version gate does (a2c_smcp/server/middleware.py).
func gateVersions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !r.URL.Query().Has(protocol.VersionParam) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"code": 400, "message": "Missing a2c_version query parameter"}`))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func confirmGenerations(io *socket.Server) {
	confirm := func(q url.Values) string {
		v := q.Get(protocol.VersionParam)
		if v == "" {
			return protocol.DefaultGeneration.String()
		}
		g, err := protocol.ParseGeneration(v)
		if err != nil {
			return ""
		}
		return g.String()
	}
	eng := io.Engine()
	_ = eng.On("initial_headers", func(args ...any) {
		if len(args) < 2 {
			return
		}
		h, _ := args[0].(*types.ParameterBag)
		ctx, _ := args[1].(*types.HttpContext)
		if h != nil && ctx != nil && ctx.Request() != nil {
			if v := confirm(ctx.Request().URL.Query()); v != "" {
				h.Set(protocol.VersionHeader, v)
			}
		}
	})
	eng.Use(func(ctx *types.HttpContext, next func(error)) {
		if r := ctx.Request(); r != nil && strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			if v := confirm(r.URL.Query()); v != "" {
				ctx.ResponseHeaders().Set(protocol.VersionHeader, v)
			}
		}
		next(nil)
	})
}

// Addr returns host:port.
func (p *Peer) Addr() string { return p.addr }

func (p *Peer) serve(ln net.Listener) {
	io := socket.NewServer(nil, socket.DefaultServerOptions())
	mux := http.NewServeMux()
	switch {
	case p.opts.OldServer:
		mux.Handle("/socket.io/", io.ServeHandler(nil))
	case p.opts.Unconfirmed:
		mux.Handle("/socket.io/", gateVersions(io.ServeHandler(nil)))
	default:
		mux.Handle("/socket.io/", io.ServeHandler(nil))
		confirmGenerations(io)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ConnState: func(c net.Conn, st http.ConnState) {
		if st == http.StateHijacked {
			p.mu.Lock()
			p.hijacked = append(p.hijacked, c)
			p.mu.Unlock()
		}
	}}
	ctx, cancel := context.WithCancel(context.Background())

	p.mu.Lock()
	p.io, p.srv, p.ctx, p.cancel = io, srv, ctx, cancel
	p.mu.Unlock()
	// Hold a client's first /smcp events until the library has registered
	// its namespace socket, as the Server does (holdearly), and trace the
	// Socket.IO packets' heads as they arrive, below the Socket.IO layer: a
	// failing test then shows what the client sent even when the library
	// dropped it.
	holdearly.Attach(ctx, io, protocol.Namespace, func(engineID, head string) {
		p.tracef("packet engine=%s %q", engineID, head)
	})
	nsp := io.Of(protocol.Namespace, nil)
	nsp.Use(func(s *socket.Socket, next func(*socket.ExtendedError)) {
		hs := s.Handshake()
		h := Handshake{Header: hs.Headers.Header(), Auth: hs.Auth}
		p.mu.Lock()
		p.handshake = append(p.handshake, h)
		p.mu.Unlock()
		p.tracef("handshake engine=%s", s.Conn().Id())
		if p.opts.APIKey != "" {
			key := h.Header.Get("x-api-key")
			if key == "" {
				key, _ = h.Auth["api_key"].(string)
			}
			if key != p.opts.APIKey {
				next(socket.NewExtendedError("unauthorized", map[string]any{"code": 401}))
				return
			}
		}
		next(nil)
	})
	_ = nsp.On("connection", func(args ...any) {
		s := args[0].(*socket.Socket)
		p.tracef("connection sid=%s engine=%s", s.Id(), s.Conn().Id())
		sctx, scancel := context.WithCancel(ctx)
		_ = s.On("disconnect", func(args ...any) {
			scancel()
			reason, _ := firstString(args)
			p.tracef("disconnect sid=%s reason=%q", s.Id(), reason)
			p.mu.Lock()
			p.disconnects = append(p.disconnects, string(s.Id())+": "+reason)
			p.mu.Unlock()
		})
		// One catch-all listener, as the Server has: it runs with the
		// packet on the socket's task queue. A listener per event name
		// runs one task later, and the library drops that task when the
		// connection closed meanwhile, so an event a client sends right
		// before it closes (an Agent's last server:tool_call_cancel) was
		// lost here though it was on the wire (spec/decisions.md,
		// Socket.IO library defects).
		s.OnAny(func(args ...any) {
			name, _ := firstString(args)
			if info, ok := lookupAny(name); ok && info.Direction != protocol.DirectionNotify {
				p.onEvent(sctx, s, name, args[1:])
			}
		})
	})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		_ = srv.Serve(ln)
	}()
}

func (p *Peer) onEvent(ctx context.Context, s *socket.Socket, event string, args []any) {
	var ack socket.Ack
	if n := len(args); n > 0 {
		if a, ok := args[n-1].(socket.Ack); ok {
			ack = a
			args = args[:n-1]
		}
	}
	payload, _ := firstMap(args)
	p.tracef("event %s sid=%s acked=%t", event, s.Id(), ack != nil)
	p.mu.Lock()
	p.received = append(p.received, Received{Event: event, Payload: payload, Acked: ack != nil, SID: string(s.Id())})
	close(p.changed)
	p.changed = make(chan struct{})
	h := p.handlers[event]
	p.mu.Unlock()
	if h == nil {
		h = p.World.Handler(event)
	}
	if h == nil {
		return
	}
	// Stop cancels ctx under mu and then waits for wg: an event the
	// library still dispatches after that is not answered, and no Add
	// races with the Wait.
	p.mu.Lock()
	if ctx.Err() != nil {
		p.mu.Unlock()
		return
	}
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		r := h(ctx, payload)
		switch {
		case r.Disconnect:
			s.Disconnect(false)
		case r.Drop:
			s.Conn().Close(true)
		case r.Silent || ack == nil:
		default:
			vals := r.Values
			if vals == nil {
				vals = []any{}
			}
			p.tracef("answer %s sid=%s values=%d", event, s.Id(), len(vals))
			ack(vals, nil)
		}
	}()
}

// lookupAny finds event in the newest generation that has it, so that the
// requests of every generation (the 0.4 capabilities too:
// client:get_blob, client:get_skills...) reach Handle's handlers.
func lookupAny(event string) (*protocol.EventInfo, bool) {
	gens := protocol.Generations()
	for i := len(gens) - 1; i >= 0; i-- {
		if info, ok := gens[i].Lookup(event); ok {
			return info, true
		}
	}
	return nil, false
}

// tracef records one line of the wire trace.
func (p *Peer) tracef(format string, args ...any) {
	line := fmt.Sprintf("%8.3fs ", time.Since(p.start).Seconds()) + fmt.Sprintf(format, args...)
	p.mu.Lock()
	p.trace = append(p.trace, line)
	p.mu.Unlock()
}

// Trace returns what happened on the wire so far (sessions, events,
// answers, disconnects), one line each, for a failing test to print.
func (p *Peer) Trace() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.trace, "\n")
}

func firstString(args []any) (string, bool) {
	if len(args) == 0 {
		return "", false
	}
	s, ok := args[0].(string)
	return s, ok
}

// Disconnects returns "sid: reason" for every session that ended.
func (p *Peer) Disconnects() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.disconnects)
}

func firstMap(args []any) (map[string]any, bool) {
	if len(args) == 0 {
		return nil, false
	}
	m, ok := args[0].(map[string]any)
	return m, ok
}

// Handle overrides the answer to event (nil restores the World's).
func (p *Peer) Handle(event string, h Handler) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if h == nil {
		delete(p.handlers, event)
		return
	}
	p.handlers[event] = h
}

// Reply makes every request of event answer r.
func (p *Peer) Reply(event string, r Reply) {
	p.Handle(event, func(context.Context, map[string]any) Reply { return r })
}

// Broadcast sends a notify:* event with payload to every connected session.
func (p *Peer) Broadcast(event string, payload any) error {
	p.mu.Lock()
	io := p.io
	p.mu.Unlock()
	if io == nil {
		return ErrNotRunning
	}
	return io.Of(protocol.Namespace, nil).Emit(event, payload)
}

// Received returns the events received so far, optionally only those
// named.
func (p *Peer) Received(events ...string) []Received {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Received
	for _, r := range p.received {
		if len(events) == 0 || slices.Contains(events, r.Event) {
			out = append(out, r)
		}
	}
	return out
}

// Count returns how many events named event were received.
func (p *Peer) Count(event string) int { return len(p.Received(event)) }

// WaitFor waits until cond holds for the received events, or ctx ends.
func (p *Peer) WaitFor(ctx context.Context, cond func([]Received) bool) error {
	for {
		p.mu.Lock()
		ok := cond(slices.Clone(p.received))
		ch := p.changed
		p.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitCount waits until at least n events named event were received.
func (p *Peer) WaitCount(ctx context.Context, event string, n int) error {
	return p.WaitFor(ctx, func(rs []Received) bool {
		count := 0
		for _, r := range rs {
			if r.Event == event {
				count++
			}
		}
		return count >= n
	})
}

// Handshakes returns what every connecting client sent.
func (p *Peer) Handshakes() []Handshake {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.handshake)
}

// Sessions returns how many sessions are connected to /smcp.
func (p *Peer) Sessions() int {
	p.mu.Lock()
	io := p.io
	p.mu.Unlock()
	if io == nil {
		return 0
	}
	return io.Of(protocol.Namespace, nil).Sockets().Len()
}

// DisconnectAll ends every session from the server side ("io server
// disconnect": the clients do not reconnect).
func (p *Peer) DisconnectAll() {
	p.mu.Lock()
	io := p.io
	p.mu.Unlock()
	if io != nil {
		io.Of(protocol.Namespace, nil).DisconnectSockets(false)
	}
}

// Stop closes the server: sessions drop as if the network failed, and
// clients start reconnecting. Restart brings it back on the same address.
func (p *Peer) Stop() {
	p.mu.Lock()
	io, srv, cancel := p.io, p.srv, p.cancel
	p.io, p.srv = nil, nil
	if cancel != nil {
		cancel() // under mu: see onEvent
	}
	p.mu.Unlock()
	if srv == nil {
		return
	}
	io.Close(nil)
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	_ = srv.Shutdown(ctx)
	_ = srv.Close()
	// The HTTP server does not track hijacked connections, and servers/
	// socket v3.0.2 leaves about 1 websocket in 50 open after Close: its client
	// would hear nothing until its ping timeout (45 s). A stopped peer
	// closes them all, as a crashed server's operating system would.
	p.mu.Lock()
	conns := p.hijacked
	p.hijacked = nil
	p.mu.Unlock()
	for _, c := range conns {
		if c.Close() == nil {
			p.tracef("stop: closed a websocket the library left open (%s)", c.RemoteAddr())
		}
	}
	p.wg.Wait()
}

// Restart serves again on the same address after Stop.
func (p *Peer) Restart() error {
	var ln net.Listener
	var err error
	// The port may linger briefly after Stop.
	for i := 0; i < 50; i++ {
		ln, err = net.Listen("tcp", p.addr)
		if err == nil || !strings.Contains(err.Error(), "in use") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	p.serve(ln)
	return nil
}

// Close stops the peer for good.
func (p *Peer) Close() error {
	p.Stop()
	return nil
}

// ErrNotRunning is returned by calls needing a running server.
var ErrNotRunning = errors.New("agenttest: not running")
