// Package sio is the Socket.IO connection the SMCP clients share: the
// Agent and the Computer both connect to a Server's /smcp namespace through
// a Conn (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#roles-and-transport; Connection and auth).
//
// A Conn owns one Socket.IO client socket (the patched copy in
// third_party/socketioclient) and keeps it connected:
//
//   - every connection attempt is bounded (WithAttemptTimeout, default 2 s):
//     a refused TCP connection fails the attempt at once, a handshake or a
//     namespace CONNECT left unanswered fails it when the bound passes;
//   - failed attempts are retried with exponential backoff and jitter,
//     capped at WithBackoff's maximum (default 250 ms to 2 s), and every
//     failure is reported (Hooks.AttemptFailed, and a log line);
//   - every namespace connection, the first and each reconnection, calls
//     Hooks.Connected, the place to join the office again: a reconnected
//     socket has a new id and no rooms.
//
// A refusal by the Server's authentication ends Connect with a
// *ConnectError whose Refused is true; the socket does not retry it.
//
// # Generations
//
// A Conn negotiates the protocol generation
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#versions-and-negotiation):
// it names the newest generation it speaks (WithGenerations, default
// every one, so protocol.NewestGeneration()) in the a2c_version query
// parameter of every Engine.IO request, and sends the key as auth.token,
// auth.api_key and the x-api-key header. A Server that gates versions
// refuses with HTTP 400 and a JSON body, read from the websocket upgrade's
// answer as from a long-polling one: Connect fails with a *ConnectError
// wrapping the *protocol.Error the body carries (400, or 4008 with the
// Server's supported range), except that a 4008 whose range holds a
// generation the Conn speaks is retried once in that generation
// (protocol.RetryGeneration). A websocket closed with 4900 is a refusal
// with code 4008 and no range. Generation returns what the session
// speaks, Confirmed whether the Server said so (an smcp-go Server names it
// in the X-A2C-Version header of the handshake's answer).
//
// A Server that accepts without confirming is a 0.4 reference Server or a
// Server of the 0.2 generation, which ignores a2c_version. A Conn that
// speaks 0.2.0 besides the generation it named tells them apart once,
// before Connect returns and before the Connected hook: it sends one
// Engine.IO long-polling open naming no version (same headers and key,
// bounded by the attempt timeout). The 0.4 gate refuses it with 400
// (missing a2c_version) and the session keeps the generation named; a
// Server that opens a session ignores versions, and the session speaks
// 0.2.0 (the probe's session is closed at once). Any other answer keeps
// the generation named. The answer holds for the Conn's reconnections.
// A Python 0.4 Server run without its version middleware (not its
// documented setup) opens a session too and is taken for 0.2.0: pin the
// generation (WithGenerations(protocol.Gen04)) to talk to it.
//
// # Errors
//
// Connect fails with a *ConnectError that wraps its cause, in one of three
// kinds: the Server refused (Refused, with the code it sent); the Server
// could not be reached — the TCP connection was refused, found no route,
// the name did not resolve, or the address did not answer within the
// attempt's bound — which matches ErrUnreachable and wraps the dial's
// error (a *net.OpError, a *net.DNSError); or ctx ended first, which wraps
// ctx.Err() (errors.Is(err, context.Canceled) or
// context.DeadlineExceeded) and the last failed attempt's error, if any
// (a failed handshake matches ErrUnreachable too).
// The Agent and the Computer turn these into their coded errors
// (agent.ErrUnreachable is the same sentinel).
package sio

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	engine "github.com/a2c-smcp/smcp-go/sio/third_party/engineioclient"
	client "github.com/a2c-smcp/smcp-go/sio/third_party/socketioclient"
	"github.com/a2c-smcp/smcp-go/sio/third_party/types"
)

// Socket is the Socket.IO client socket a Conn keeps connected.
type Socket = client.Socket

// Hooks are called on the Socket.IO client's event queue, which all events
// and acks of the connection share: they must not block (start a goroutine
// for anything that waits for an ack, such as joining an office).
type Hooks struct {
	// Connected is called after every namespace connection; n counts them
	// from 1 (n > 1 is a reconnection).
	Connected func(n int)
	// Disconnected is called when a connected namespace goes down, with
	// the Socket.IO reason. After "io server disconnect" the Conn does not
	// reconnect (the Server ended the session).
	Disconnected func(reason string)
	// AttemptFailed is called for every failed connection attempt.
	AttemptFailed func(err error)
}

// ErrClosed is returned by Connect after Close.
var ErrClosed = errors.New("sio: connection closed")

// Option configures a Conn.
type Option func(*config)

type config struct {
	apiKey   string
	headers  http.Header
	polling  bool
	log      *slog.Logger
	attempt  time.Duration
	delayMin time.Duration
	delayMax time.Duration
	maxMsg   int64
	speaks   []protocol.Generation
}

// WithAPIKey sends key as the auth payload {"token": key, "api_key": key}
// and as the x-api-key header: 0.3/0.4 Servers read auth.token, 0.2.0
// Servers auth.api_key or the header
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#connection-and-auth;
// https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#versions-and-negotiation).
func WithAPIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// WithGenerations sets the generations the Conn speaks, the first one
// named in the handshake (default every generation smcp-go speaks, newest
// first: protocol.NewestGeneration() is named). A Server that refuses the
// first one gets one retry, with the newest of the others it accepts:
// inside the range of its 4008, or, refused with 400 for naming no version
// (protocol.Gen02 names none, as 0.2.0 clients do), the newest that names
// one. One generation pins it. Invalid and repeated generations are
// ignored.
func WithGenerations(gens ...protocol.Generation) Option {
	return func(c *config) {
		c.speaks = nil
		for _, g := range gens {
			if g.Valid() && !slices.Contains(c.speaks, g) {
				c.speaks = append(c.speaks, g)
			}
		}
	}
}

// WithHeader adds an HTTP header to the handshake.
func WithHeader(k, v string) Option {
	return func(c *config) {
		if c.headers == nil {
			c.headers = http.Header{}
		}
		c.headers.Add(k, v)
	}
}

// WithPolling starts with HTTP long-polling and upgrades to a websocket
// where it can; behind a proxy that refuses websockets the connection stays
// on long-polling (default: websocket only).
func WithPolling() Option { return func(c *config) { c.polling = true } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithAttemptTimeout bounds one connection attempt: dial, Engine.IO
// handshake and namespace CONNECT (default 2 s).
func WithAttemptTimeout(d time.Duration) Option { return func(c *config) { c.attempt = d } }

// WithBackoff sets the delay before the first retry and its cap; delays
// double between them, each randomised by ±50 % (default 250 ms, 2 s).
func WithBackoff(first, max time.Duration) Option {
	return func(c *config) { c.delayMin, c.delayMax = first, max }
}

// WithMaxMessageBytes bounds one websocket message read from the Server
// (default DefaultMaxMessageBytes). A larger one closes the transport, and
// the Conn reconnects, instead of being held in memory whatever its size.
// A long-polling response (WithPolling) may hold four such messages and no
// larger one (https://github.com/a2c-smcp/smcp-go/blob/main/sio/third_party/PATCHES.md, patch 14). Set it above the Server's
// payload limit: a Server relays messages of up to that limit, plus a few
// bytes of framing.
func WithMaxMessageBytes(n int64) Option { return func(c *config) { c.maxMsg = n } }

// Default bounds.
const (
	// DefaultMaxMessageBytes is the Server's default payload limit
	// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md, Limits: 8 MiB) and 64 KiB for the framing of a
	// relayed message.
	DefaultMaxMessageBytes = 8<<20 + 64<<10
	DefaultAttemptTimeout  = 2 * time.Second
	DefaultBackoffMin      = 250 * time.Millisecond
	DefaultBackoffMax      = 2 * time.Second
)

// Conn is a supervised Socket.IO connection to one namespace.
type Conn struct {
	url   string
	cfg   config
	log   *slog.Logger
	hooks Hooks
	sock  *client.Socket
	watch watch

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu          sync.Mutex
	gen         protocol.Generation // named in the handshake
	confirmed   protocol.Generation // the Server's X-A2C-Version, 0 when none
	retried     bool                // a 4008 was retried
	probed      bool                // the Server was asked whether it ignores versions
	old         bool                // it does: the session speaks 0.2.0
	heard       bool                // an event or ack arrived on this connection
	ended       bool                // the Server's DISCONNECT arrived on this connection
	nsConnected bool                // the namespace CONNECT was answered on this connection
	connects    int
	failures    int        // failed attempts since the last connection
	first       chan error // the first connection's outcome
	lastErr     error
	closed      bool
	started     bool
	closeOnce   sync.Once
}

// New prepares a Conn to nsURL (the namespace URL, e.g.
// http://host:port/smcp) without touching the network: register the
// socket's event handlers on Socket(), then call Connect.
func New(nsURL string, hooks Hooks, opts ...Option) (*Conn, error) {
	cfg := config{attempt: DefaultAttemptTimeout, delayMin: DefaultBackoffMin, delayMax: DefaultBackoffMax, maxMsg: DefaultMaxMessageBytes}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.log == nil {
		cfg.log = slog.Default()
	}
	if cfg.attempt <= 0 {
		cfg.attempt = DefaultAttemptTimeout
	}
	if cfg.delayMin <= 0 {
		cfg.delayMin = DefaultBackoffMin
	}
	if cfg.delayMax < cfg.delayMin {
		cfg.delayMax = cfg.delayMin
	}
	if len(cfg.speaks) == 0 {
		cfg.speaks = protocol.Generations()
		slices.Reverse(cfg.speaks)
	}
	gen := cfg.speaks[0]
	if _, err := url.Parse(nsURL); err != nil {
		return nil, err
	}
	dialURL, err := protocol.HandshakeURL(nsURL, gen)
	if err != nil {
		return nil, err
	}
	o := client.DefaultOptions()
	if cfg.polling {
		o.SetTransports(types.NewSet(client.Polling, client.WebSocket))
	} else {
		o.SetTransports(types.NewSet(client.WebSocket))
	}
	if cfg.maxMsg > 0 {
		o.SetMaxMessageBytes(cfg.maxMsg)
	}
	o.SetForceNew(true)
	o.SetAutoConnect(false)
	o.SetReconnectionDelay(float64(cfg.delayMin.Milliseconds()))
	o.SetReconnectionDelayMax(float64(cfg.delayMax.Milliseconds()))
	o.SetRandomizationFactor(0.5)
	o.SetTimeout(cfg.attempt)
	hdr := http.Header{}
	for k, vs := range cfg.headers {
		for _, v := range vs {
			hdr.Add(k, v)
		}
	}
	if cfg.apiKey != "" {
		o.SetAuth(map[string]any{protocol.AuthToken: cfg.apiKey, protocol.AuthAPIKey: cfg.apiKey})
		hdr.Set("x-api-key", cfg.apiKey)
	}
	if len(hdr) > 0 {
		o.SetExtraHeaders(hdr)
	}
	sock, err := client.Connect(dialURL, o)
	if err != nil {
		return nil, err
	}
	life, cancel := context.WithCancel(context.Background())
	c := &Conn{url: nsURL, cfg: cfg, log: cfg.log, hooks: hooks, sock: sock, gen: gen,
		ctx: life, cancel: cancel, first: make(chan error, 1)}
	_ = sock.On("connect", func(...any) { c.onConnect() })
	_ = sock.On("disconnect", func(args ...any) {
		reason, _ := firstArg[string](args)
		c.onDisconnect(reason)
	})
	_ = sock.On("connect_error", func(args ...any) { c.onConnectError(args) })
	mgr := sock.Io()
	_ = mgr.On("packet", func(args ...any) { c.onPacket(args) })
	_ = mgr.On("open", func(...any) {
		c.mu.Lock()
		c.nsConnected, c.heard, c.ended = false, false, false // a new engine
		c.mu.Unlock()
		c.watch.managerOpened(mgr.Engine())
	})
	// A failed attempt reaches the socket as connect_error too: reported there.
	_ = mgr.On("error", func(...any) { c.watch.managerErrored(mgr.Engine()) })
	return c, nil
}

// Socket returns the socket; it stays the same across reconnections.
func (c *Conn) Socket() *client.Socket { return c.sock }

// URL returns the namespace URL.
func (c *Conn) URL() string { return c.url }

// Connected reports whether the namespace is connected.
func (c *Conn) Connected() bool { return c.sock.Connected() }

// LastError returns the last failed attempt's error, nil when none.
func (c *Conn) LastError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

// Connect checks that the Server's address accepts TCP connections (an
// unreachable Server fails at once with the system's reason), then
// connects, retrying failed attempts with backoff, until the namespace is
// connected, the Server refuses (a *ConnectError with Refused set), or ctx
// ends (a *ConnectError wrapping context.DeadlineExceeded and naming the
// last attempt's failure). Call it once; the Conn reconnects on its own
// afterwards. A failed Connect leaves the Conn to be closed.
func (c *Conn) Connect(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	if c.started {
		c.mu.Unlock()
		return errors.New("sio: Connect called twice")
	}
	c.started = true
	c.mu.Unlock()
	if err := c.probe(ctx); err != nil {
		return err
	}
	c.Go(c.watchConnection)
	// Socket.Connect dials synchronously (bounded by the engine's
	// handshake timeout); Close cannot interrupt the dial, so this
	// goroutine is not waited for: it ends with the dial.
	go func() {
		c.mu.Lock()
		closed := c.closed
		c.mu.Unlock()
		if !closed {
			c.sock.Connect()
		}
	}()
	select {
	case err := <-c.first:
		return err
	case <-ctx.Done():
		msg := "no answer before the deadline"
		if errors.Is(ctx.Err(), context.Canceled) {
			msg = "canceled before the connection"
		}
		last := c.LastError()
		if last != nil {
			msg += " (last attempt: " + last.Error() + ")"
		}
		return &ConnectError{URL: c.url, Message: msg, Err: ctx.Err(), Last: last}
	case <-c.ctx.Done():
		return ErrClosed
	}
}

// probe dials the Server's TCP address once, bounded by the attempt
// timeout.
func (c *Conn) probe(ctx context.Context) error {
	u, _ := url.Parse(c.url)
	host := u.Host
	if u.Port() == "" {
		switch u.Scheme {
		case "https", "wss":
			host = net.JoinHostPort(u.Hostname(), "443")
		default:
			host = net.JoinHostPort(u.Hostname(), "80")
		}
	}
	dctx, cancel := context.WithTimeout(ctx, c.cfg.attempt)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(dctx, "tcp", host)
	if err != nil {
		if ctx.Err() != nil {
			return &ConnectError{URL: c.url, Message: "no answer before the deadline", Err: ctx.Err(), Last: err}
		}
		// Refused, no route, no such host, or no answer within the
		// attempt's bound: the Server cannot be reached (ErrUnreachable).
		return &ConnectError{URL: c.url, Message: err.Error(), Err: err}
	}
	return conn.Close()
}

// Close disconnects, after writing what is still queued (at most drain),
// and stops the Conn's goroutines. It is safe to call more than once.
func (c *Conn) Close(drain time.Duration) {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		c.cancel()
		c.flush(drain)
		c.sock.Disconnect()
		c.wg.Wait()
	})
}

// flush waits, at most limit, until the engine has written every queued
// packet: the transport drops what is still queued when it closes, and the
// last emit may matter (an Agent's server:tool_call_cancel right before a
// program exits).
func (c *Conn) flush(limit time.Duration) {
	e := c.sock.Io().Engine()
	if e == nil || e.ReadyState() != engine.SocketStateOpen {
		return
	}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		t := e.Transport()
		if t == nil || (t.Writable() && e.WriteBuffer().Len() == 0) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Go runs fn on a goroutine the Conn owns: Close waits for it to return
// (so fn must end when the Conn's user closes, for example on its own
// context). Once Close has begun, Go starts nothing.
func (c *Conn) Go(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		fn()
	}()
}

func (c *Conn) onConnect() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.connects++
	n, failed := c.connects, c.failures
	c.failures = 0
	c.confirmed = c.readConfirmation()
	c.mu.Unlock()
	// Before the hook, so that the first join already speaks the
	// session's generation; once per Conn.
	c.detectOldServer()
	c.watch.reset()
	if n > 1 {
		c.log.Info("reconnected", "url", c.url, "sid", c.sock.Id(), "failed_attempts", failed)
	}
	if c.hooks.Connected != nil {
		c.hooks.Connected(n)
	}
	if n == 1 {
		c.report(nil)
	}
}

func (c *Conn) onDisconnect(reason string) {
	c.mu.Lock()
	closed := c.closed
	if c.ended {
		// The Server's DISCONNECT: the socket may report the manager's
		// close ("forced close") that it causes first.
		reason = "io server disconnect"
	}
	c.mu.Unlock()
	if closed {
		return
	}
	if reason == "io server disconnect" {
		c.log.Warn("the server ended the session; no reconnection", "url", c.url, "reason", reason)
	} else {
		c.log.Warn("disconnected; reconnecting", "url", c.url, "reason", reason)
	}
	if c.hooks.Disconnected != nil {
		c.hooks.Disconnected(reason)
	}
}

// onConnectError handles the namespace's connect_error: a refusal by the
// Server's middleware (not retried by the socket) or a failed attempt.
func (c *Conn) onConnectError(args []any) {
	err, _ := firstArg[error](args)
	var ext *types.ExtendedError
	if errors.As(err, &ext) {
		ce := &ConnectError{URL: c.url, Refused: true, Message: ext.Message, Err: err}
		if m, ok := ext.Data.(map[string]any); ok {
			if n, ok := m["code"].(float64); ok && n == float64(int(n)) {
				ce.Code = int(n)
			}
		}
		if ce.Code == 0 {
			// A refusal without a code (the Python Server's
			// {"message": "Connection refused by server"}) is its
			// connection handler's, which decides on the credential.
			ce.Code = int(protocol.CodeUnauthorized)
		}
		c.mu.Lock()
		c.lastErr = ce
		c.mu.Unlock()
		c.log.Warn("connection refused by the server", "url", c.url, "error", ce.Message)
		if c.hooks.AttemptFailed != nil {
			c.hooks.AttemptFailed(ce)
		}
		c.report(ce)
		return
	}
	var hs *engine.HandshakeError
	if errors.As(err, &hs) && c.onHandshakeRefused(hs) {
		return
	}
	c.attemptFailed(err)
}

// attemptFailed reports a failed connection attempt (the manager's error:
// refused dial, attempt timeout, closed handshake).
func (c *Conn) attemptFailed(err error) {
	if err == nil {
		err = errors.New("connection attempt failed")
	}
	ce := &ConnectError{URL: c.url, Message: err.Error(), Err: err}
	c.mu.Lock()
	closed := c.closed
	c.lastErr = ce
	c.failures++
	n := c.failures
	c.mu.Unlock()
	if closed {
		return
	}
	// While a Server stays down the attempts go on every few seconds: the
	// 1st, 2nd, 4th, 8th... failure is a warning, the others are debug
	// lines, so that an outage of an hour leaves a dozen warnings, not
	// thousands.
	level := slog.LevelDebug
	if n&(n-1) == 0 {
		level = slog.LevelWarn
	}
	c.log.Log(c.ctx, level, "connection attempt failed; retrying with backoff", "url", c.url, "error", err.Error(), "attempts", n)
	if c.hooks.AttemptFailed != nil {
		c.hooks.AttemptFailed(ce)
	}
}

// report delivers the first connection's outcome to Connect.
func (c *Conn) report(err error) {
	select {
	case c.first <- err:
	default:
	}
}

func firstArg[T any](args []any) (T, bool) {
	var zero T
	if len(args) == 0 {
		return zero, false
	}
	v, ok := args[0].(T)
	return v, ok
}
