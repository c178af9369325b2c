package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/sio"
)

// Client is an A2C-SMCP Agent connected to a Server's /smcp namespace.
// It is safe for concurrent use. Notification callbacks run on goroutines
// the Client owns; Close stops them.
type Client struct {
	cfg  config
	log  *slog.Logger
	conn *sio.Conn   // the supervised connection (reconnects on its own)
	sock *sio.Socket // conn.Socket()
	url  string

	// emitMu serialises Timeout(...).Emit(...): the Socket.IO client keeps
	// the timeout in a per-socket flag shared by concurrent emits.
	emitMu sync.Mutex

	reqPrefix string
	reqSeq    atomic.Uint64

	mu        sync.Mutex
	state     connState
	readyCh   chan struct{} // closed while state is ready, closed or dead
	readyOpen bool          // readyCh is still open
	lostCh    chan struct{} // closed when a ready connection goes down
	deadErr   error
	doneCh    chan struct{} // closed when the Client is closed or dead
	doneOpen  bool
	office    string
	connGen   uint64 // incremented on every connect
	connected bool   // the first connect happened

	ctx      context.Context // the Client's lifetime, cancelled by Close
	cancel   context.CancelFunc
	closedCh chan struct{}
	closeMu  sync.Once

	tools    *toolCache
	notifier *notifier
	progress progressWatchers // tool calls and reads waiting for progress (progress.go)
}

type connState int

const (
	stateConnecting connState = iota
	stateReady
	stateRejoining
	stateDown
	stateClosed
	stateDead
)

// Dial connects to the Server at serverURL (http, https, ws or wss; the
// namespace /smcp is added when the path is empty) and returns once the
// namespace is connected. A refused connection is the *protocol.Error the
// Server's authentication sent (typically 401). The Client reconnects on its
// own after a lost connection and then rejoins its office
// (a reconnected socket has a new id and has lost its rooms).
func Dial(ctx context.Context, serverURL string, opts ...Option) (*Client, error) {
	cfg := config{name: DefaultName, timeout: DefaultTimeout, drain: DefaultDrainBytes}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logger == nil {
		cfg.logger = slog.Default()
	}
	if cfg.timeout <= 0 {
		cfg.timeout = DefaultTimeout
	}
	if cfg.name == "" {
		return nil, protocol.NewBadRequest("agent name is empty")
	}
	nsURL, err := namespaceURL(serverURL)
	if err != nil {
		return nil, err
	}

	prefix := make([]byte, 6)
	_, _ = rand.Read(prefix)
	life, cancel := context.WithCancel(context.Background())
	c := &Client{
		cfg:       cfg,
		log:       cfg.logger.With("agent", cfg.name),
		url:       nsURL,
		reqPrefix: hex.EncodeToString(prefix),
		readyCh:   make(chan struct{}),
		readyOpen: true,
		lostCh:    make(chan struct{}),
		doneCh:    make(chan struct{}),
		doneOpen:  true,
		ctx:       life,
		cancel:    cancel,
		closedCh:  make(chan struct{}),
		tools:     newToolCache(),
	}
	c.notifier = newNotifier(c)

	opts2 := []sio.Option{sio.WithLogger(c.log), sio.WithAttemptTimeout(connectAttemptTimeout)}
	if len(cfg.gens) > 0 {
		opts2 = append(opts2, sio.WithGenerations(cfg.gens...))
	}
	if cfg.transport == "polling" {
		opts2 = append(opts2, sio.WithPolling())
	}
	if cfg.apiKey != "" {
		opts2 = append(opts2, sio.WithAPIKey(cfg.apiKey))
	}
	if cfg.maxMessage > 0 {
		opts2 = append(opts2, sio.WithMaxMessageBytes(cfg.maxMessage))
	}
	conn, err := sio.New(nsURL, sio.Hooks{
		Connected:     func(int) { c.onConnect() },
		Disconnected:  c.onDisconnect,
		AttemptFailed: c.onAttemptFailed,
	}, opts2...)
	if err != nil {
		cancel()
		return nil, protocol.NewBadRequest("server URL %q: %v", serverURL, err)
	}
	c.conn, c.sock = conn, conn.Socket()
	c.notifier.register(c.sock)
	c.notifier.start()
	c.progress.c = c
	c.progress.register(c.sock)

	wait := ctx
	if _, ok := ctx.Deadline(); !ok {
		var stop context.CancelFunc
		wait, stop = context.WithTimeout(ctx, cfg.timeout)
		defer stop()
	}
	if err := conn.Connect(wait); err != nil {
		c.Close()
		return nil, dialError(wait, nsURL, err)
	}
	c.log.Debug("connected", "url", nsURL, "sid", c.sock.Id(), "protocol", conn.Generation().String(), "confirmed", conn.Confirmed())
	return c, nil
}

// Generation returns the protocol generation of the session: the one the
// Server confirmed, else 0.2.0 for a Server found to ignore a2c_version (a
// 0.2 Server, asked once before the first join), else the one the Agent
// named in its handshake
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#clients-negotiation-in-practice).
func (c *Client) Generation() protocol.Generation { return c.conn.Generation() }

// Confirmed reports whether the Server confirmed the session's generation:
// an smcp-go Server does, and routes the smcp-go extensions (the Finder,
// client:read_resource); a reference Server does not, and requests for an
// extension fail at once with 4106 (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#confirmation-and-extensions).
func (c *Client) Confirmed() bool { return c.conn.Confirmed() }

// checkExtension fails at once, with 4106 NotSupported, a request for event
// that the session's Server will not route: an event the session's
// generation lacks, or one that is an smcp-go extension there when the
// Server did not confirm the generation (a reference Server, which never
// answers it). An smcp-go Server answers a request for an extension that
// the target Computer did not declare with 4106 itself, at once.
func (c *Client) checkExtension(event string) error {
	g := c.Generation()
	info, ok := g.Lookup(event)
	if !ok {
		return protocol.NewNotSupported("%s is not part of protocol %s, which this session speaks", event, g).With("event", event)
	}
	if info.Extension && !c.Confirmed() {
		return protocol.NewNotSupported("%s is an smcp-go extension, and the server did not confirm protocol %s (it is not an smcp-go Server, and routes no extension)", event, g).With("event", event)
	}
	return nil
}

// connectAttemptTimeout bounds one connection attempt (the first one and
// every reconnection): dial, handshake and namespace connect. A refused
// connection fails its attempt at once; retries back off from 250 ms to 2 s
// (sio.Conn).
const connectAttemptTimeout = sio.DefaultAttemptTimeout

// namespaceURL returns serverURL with the /smcp namespace as path.
func namespaceURL(serverURL string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", protocol.NewBadRequest("server URL %q: %v", serverURL, err)
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return "", protocol.NewBadRequest("server URL %q: scheme must be http, https, ws or wss", serverURL)
	}
	if u.Host == "" {
		return "", protocol.NewBadRequest("server URL %q has no host", serverURL)
	}
	switch strings.TrimSuffix(u.Path, "/") {
	case "", protocol.Namespace:
		u.Path = protocol.Namespace
	default:
		return "", protocol.NewBadRequest("server URL %q: path must be empty or %s", serverURL, protocol.Namespace)
	}
	return u.String(), nil
}

// Name returns the Agent name.
func (c *Client) Name() string { return c.cfg.name }

// Office returns the office the Client has joined, "" when none.
func (c *Client) Office() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.office
}

// Connected reports whether the connection is up and the Client is not in
// the middle of rejoining its office.
func (c *Client) Connected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state == stateReady
}

// Done returns a channel closed when the Client can no longer work: Close
// was called, or the Server ended the session ("io server disconnect",
// after which the Socket.IO client does not reconnect). A lost connection
// that the Client is reconnecting does not close it.
func (c *Client) Done() <-chan struct{} { return c.doneCh }

// Err returns why Done is closed: an error matching ErrClosed or
// ErrConnectionLost; nil while the Client works.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.state {
	case stateClosed:
		return closedError("client")
	case stateDead:
		return c.deadErr
	}
	return nil
}

// Close disconnects (after writing what is still queued, at most one
// second), fails the calls in flight with ErrClosed and waits for the
// Client's goroutines, notification callbacks in progress included, to
// return — so a callback must not call Close itself (start a goroutine for
// it). It is safe to call more than once.
func (c *Client) Close() error {
	c.closeMu.Do(func() {
		c.mu.Lock()
		c.setStateLocked(stateClosed)
		c.mu.Unlock()
		c.cancel()
		close(c.closedCh)
		c.conn.Close(closeDrain) // waits for the goroutines started with c.conn.Go
	})
	return nil
}

// closeDrain bounds how long Close waits for queued packets to be written.
const closeDrain = time.Second

// setStateLocked moves to st and opens or closes readyCh accordingly.
func (c *Client) setStateLocked(st connState) {
	if c.state == stateClosed {
		return
	}
	switch {
	case c.state == stateReady && st != stateReady:
		close(c.lostCh) // requests waiting on this connection's answers stop waiting
	case c.state != stateReady && st == stateReady:
		c.lostCh = make(chan struct{})
	}
	c.state = st
	if (st == stateClosed || st == stateDead) && c.doneOpen {
		close(c.doneCh)
		c.doneOpen = false
	}
	switch st {
	case stateReady, stateClosed, stateDead:
		if c.readyOpen {
			close(c.readyCh)
			c.readyOpen = false
		}
	default:
		if !c.readyOpen {
			c.readyCh = make(chan struct{})
			c.readyOpen = true
		}
	}
}

func (c *Client) onConnect() {
	c.mu.Lock()
	if c.state == stateClosed {
		c.mu.Unlock()
		return
	}
	c.connGen++
	gen := c.connGen
	if !c.connected {
		c.connected = true
		c.setStateLocked(stateReady)
		c.mu.Unlock()
		return
	}
	office := c.office
	if office == "" {
		c.setStateLocked(stateReady)
		c.mu.Unlock()
		c.log.Info("reconnected", "sid", c.sock.Id())
		c.notifier.reconnected(nil)
		return
	}
	c.setStateLocked(stateRejoining)
	c.mu.Unlock()
	c.log.Info("reconnected; rejoining the office", "office", office, "sid", c.sock.Id())
	// Never wait for an ack on the event queue: rejoin on our own goroutine.
	c.conn.Go(func() { c.rejoin(gen, office) })
}

// rejoin joins office again after a reconnection, retrying a few times: the
// Server may not yet have released the name of the previous session. A
// refusal for now (429: the office's event budget, which every member
// rejoining after a Server restart spends at once; 503) does not count as
// one of those tries: it is retried while the connection lasts.
func (c *Client) rejoin(gen uint64, office string) {
	var err error
	delay := 200 * time.Millisecond
	for n, tries := 0, 0; tries < 5; n++ {
		if n > 0 {
			select {
			case <-time.After(delay):
			case <-c.ctx.Done():
				return
			}
			delay = min(delay*2, 2*time.Second)
		}
		err = c.join(c.ctx, office, false)
		if err == nil || errors.Is(err, ErrClosed) || errors.Is(err, ErrConnectionLost) {
			break
		}
		if !protocol.CodeOf(err).Retryable() {
			tries++
		}
		c.log.Warn("rejoining the office failed; retrying", "office", office, "error", err)
	}
	if errors.Is(err, ErrClosed) || errors.Is(err, ErrConnectionLost) {
		return // closed, or the next connect starts another rejoin
	}
	c.mu.Lock()
	if c.connGen != gen || c.state != stateRejoining {
		c.mu.Unlock()
		return
	}
	if err != nil {
		c.office = ""
	}
	c.setStateLocked(stateReady)
	c.mu.Unlock()
	if err != nil {
		c.log.Error("could not rejoin the office after reconnecting", "office", office, "error", err)
		c.tools.reset()
	} else {
		c.log.Info("rejoined the office", "office", office)
		c.notifier.syncOffice()
	}
	c.notifier.reconnected(err)
}

func (c *Client) onDisconnect(reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == stateClosed {
		return
	}
	if reason == "io server disconnect" {
		// The Socket.IO client does not reconnect after this.
		c.deadErr = connectionLostError("connection", "the server ended the session")
		if last := c.conn.LastError(); last != nil {
			// Dropped before it said anything: the Rust 0.4 Server's
			// refusal of a credential (sio.Conn reads it so).
			var ce *sio.ConnectError
			if errors.As(last, &ce) && ce.Refused {
				c.deadErr = dialError(c.ctx, c.url, last)
			}
		}
		c.setStateLocked(stateDead)
		c.log.Warn("the server ended the session; no reconnection", "reason", reason)
		return
	}
	c.setStateLocked(stateDown)
	c.log.Warn("disconnected; reconnecting", "reason", reason)
}

// onAttemptFailed ends a Client whose reconnection the Server refused (a
// credential or a protocol version it no longer accepts): sio.Conn does
// not retry a refusal, so the Client is dead and Err says why, instead of
// waiting for a reconnection that never comes. A refusal of the first
// connection is Dial's error.
func (c *Client) onAttemptFailed(err error) {
	var ce *sio.ConnectError
	if !errors.As(err, &ce) || !ce.Refused {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.connected || c.state == stateClosed || c.state == stateDead {
		return
	}
	c.deadErr = dialError(c.ctx, c.url, err)
	c.setStateLocked(stateDead)
	c.log.Warn("the server refused the reconnection; no more attempts", "error", c.deadErr)
}

func firstArg[T any](args []any) (T, bool) {
	var zero T
	if len(args) == 0 {
		return zero, false
	}
	v, ok := args[0].(T)
	return v, ok
}

// nextReqID returns a request id unique to this Client: a random prefix
// (so two Clients, or two runs, never collide) and a counter.
func (c *Client) nextReqID() string {
	return fmt.Sprintf("%s-%d", c.reqPrefix, c.reqSeq.Add(1))
}

// waitReady blocks until the connection is up and the office rejoined, the
// context ends, or the Client is closed.
func (c *Client) waitReady(ctx context.Context, event string) error {
	for {
		c.mu.Lock()
		st, ch, dead := c.state, c.readyCh, c.deadErr
		c.mu.Unlock()
		switch st {
		case stateReady:
			return nil
		case stateClosed:
			return closedError(event)
		case stateDead:
			return dead
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return contextError(event, ctx, "while not connected to the server")
		case <-c.closedCh:
			return closedError(event)
		}
	}
}

type ackResult struct {
	vals []any
	err  error
}

// send validates payload against the request schema of event, emits it and
// waits for the ack values. It waits for the connection to be ready first
// unless raw is set (the rejoin itself). Every wait is bounded by the
// context and the Client's default timeout.
func (c *Client) send(ctx context.Context, event string, payload any, raw bool) ([]any, error) {
	vals, _, err := c.sendLimit(ctx, event, payload, raw, c.cfg.timeout)
	return vals, err
}

// sendLimit is send with an explicit bound instead of the default timeout;
// sent reports whether the request left (an error before it did means the
// Computer never saw it).
func (c *Client) sendLimit(ctx context.Context, event string, payload any, raw bool, limit time.Duration) (vals []any, sent bool, err error) {
	select {
	case <-c.closedCh:
		return nil, false, closedError(event)
	default:
	}
	data, err := encodeRequest(c.Generation(), event, payload)
	if err != nil {
		return nil, false, err
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < limit {
		limit = time.Until(dl)
	}
	wctx, stop := context.WithTimeout(ctx, limit)
	defer stop()
	var lost <-chan struct{} // nil (never ready) for the rejoin, sent before the connection is ready
	if raw {
		if !c.sock.Connected() {
			return nil, false, connectionLostError(event, "not connected")
		}
	} else {
		if err := c.waitReady(wctx, event); err != nil {
			return nil, false, err
		}
		c.mu.Lock()
		lost = c.lostCh
		c.mu.Unlock()
	}

	ch := make(chan ackResult, 1)
	ack := sio.Ack(func(vals []any, err error) {
		select {
		case ch <- ackResult{vals, err}:
		default:
		}
	})
	remaining := max(time.Until(deadlineOf(wctx)), time.Millisecond)
	c.emitMu.Lock()
	err = c.sock.Timeout(remaining).Emit(event, data, ack)
	c.emitMu.Unlock()
	if err != nil {
		return nil, false, protocol.Errorf(protocol.CodeInternal, "%s: emit: %v", event, err)
	}
	c.log.Debug("request sent", "event", event, "sid", c.sock.Id())
	select {
	case r := <-ch:
		if r.err != nil {
			if strings.Contains(r.err.Error(), "timed out") {
				return nil, true, contextError(event, wctx, "before the answer (bound: "+limit.Round(time.Millisecond).String()+")")
			}
			return nil, true, connectionLostError(event, r.err.Error())
		}
		return r.vals, true, nil
	case <-wctx.Done():
		return nil, true, contextError(event, wctx, "before the answer (bound: "+limit.Round(time.Millisecond).String()+")")
	case <-c.closedCh:
		return nil, true, closedError(event)
	case <-lost:
		// The connection the request went out on is down. The Socket.IO
		// client normally fails the ack at once, but a request emitted just
		// as the transport closed can be lost without its ack ever failing
		// (clients/socket v3.0.1); without this the caller would wait for
		// the whole timeout instead of the retry after the reconnection.
		select {
		case r := <-ch:
			if r.err == nil {
				return r.vals, true, nil
			}
		default:
		}
		return nil, true, connectionLostError(event, "the connection went down before the answer")
	}
}

func deadlineOf(ctx context.Context) time.Time {
	dl, _ := ctx.Deadline()
	return dl
}

// emitOnly sends an event without ack (server:tool_call_cancel).
func (c *Client) emitOnly(event string, payload any) error {
	data, err := encodeRequest(c.Generation(), event, payload)
	if err != nil {
		return err
	}
	if !c.sock.Connected() {
		return connectionLostError(event, "not connected")
	}
	c.emitMu.Lock()
	err = c.sock.Emit(event, data)
	c.emitMu.Unlock()
	if err != nil {
		return protocol.Errorf(protocol.CodeInternal, "%s: emit: %v", event, err)
	}
	return nil
}

// validated is a request encodeRequest encoded and checked already.
type validated json.RawMessage

// encodeRequest checks payload against its request schema (a bad request
// fails here with 400, before anything is sent) and returns it as the
// JSON the Socket.IO encoder sends.
func encodeRequest(g protocol.Generation, event string, payload any) (any, error) {
	if v, ok := payload.(validated); ok {
		return json.RawMessage(v), nil
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, protocol.NewBadRequest("%s request: %v", event, err)
	}
	// Strict in what it sends: the request of the session's generation (a
	// 0.4 event has no 0.2 schema).
	if err := g.Validate(event, protocol.Request, raw); err != nil {
		return nil, err
	}
	// Sent as these bytes: the Socket.IO encoder writes a json.RawMessage
	// as it is (after a scan), where decoding it into generic values and
	// encoding those again cost a quarter of the Agent's CPU per put_blob
	// chunk (docs/performance.md, Blobs).
	return json.RawMessage(raw), nil
}

// requestAttempts bounds how often request sends one request when the
// connection keeps dropping before the answer.
const requestAttempts = 3

// request is send for requests that may be repeated, with check turning
// the answer into its refusal (nil when it is no refusal). Within the same
// deadline, it sends the request again when the connection drops before
// the answer (after the reconnection and the rejoin; at most
// requestAttempts times in all), and when the answer is a refusal for now
// (429, 503), after a jittered pause (backoff). Every request but
// client:tool_call is safe to repeat: they read, or (join, leave) end in the
// same state.
func (c *Client) request(ctx context.Context, event string, payload any, check func(vals []any) error) ([]any, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.timeout)
	defer cancel()
	var pause backoff
	for lost := 1; ; {
		vals, err := c.send(ctx, event, payload, false)
		if err == nil {
			if err = check(vals); err == nil {
				return vals, nil
			}
		}
		switch {
		case errors.Is(err, ErrConnectionLost) && lost < requestAttempts && ctx.Err() == nil:
			lost++
			c.log.Debug("connection lost before the answer; repeating the request after reconnecting", "event", event, "error", err)
		case retryable(err) && pause.wait(ctx, c.closedCh):
			c.log.Debug("request refused for now; repeating it", "event", event, "error", err)
		default:
			return vals, err
		}
	}
}

// call sends a one-value request and decodes its answer into T.
func call[T any](ctx context.Context, c *Client, event, reqID string, payload any) (*T, error) {
	var out *T
	_, err := c.request(ctx, event, payload, func(vals []any) (err error) {
		out, err = decodeAnswer[T](event, reqID, vals)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// decodeAnswer checks one ack against its schema (spec/protocol.md: the answer,
// or an ErrorPayload for client:* events and server:list_room), turns an
// ErrorPayload into its *protocol.Error, checks the echoed req_id and
// decodes the result.
func decodeAnswer[T any](event, reqID string, vals []any) (*T, error) {
	if len(vals) != 1 {
		return nil, invalidAnswer(event, fmt.Errorf("%d ack values, want 1", len(vals)))
	}
	v := vals[0]
	// An error in either shape, nested (0.2.0) or flat (0.3/0.4), whatever
	// the session's generation: a Server or Computer of another generation
	// may answer in its own. Each is checked against its schema.
	if err := protocol.ValidateAnyGeneration(event, protocol.Ack, v); err != nil {
		return nil, invalidAnswer(event, err)
	}
	if errorMayAnswer(event) && (protocol.IsErrorShaped(protocol.ErrorShapeNested, v) || protocol.IsErrorShaped(protocol.ErrorShapeFlat, v)) {
		if e, ok := protocol.DecodeErrorValue(v); ok {
			return nil, e
		}
		return nil, invalidAnswer(event, fmt.Errorf("an error payload of no known shape"))
	}
	m, _ := v.(map[string]any)
	if reqID != "" {
		if got, ok := m["req_id"].(string); ok && got != reqID {
			return nil, invalidAnswer(event, fmt.Errorf("req_id %q, want %q", got, reqID))
		}
	}
	var out T
	if err := protocol.DecodeValue(v, &out); err != nil {
		return nil, invalidAnswer(event, err)
	}
	return &out, nil
}

// errorMayAnswer reports whether an ack of event may be an error in some
// generation.
func errorMayAnswer(event string) bool {
	for _, g := range protocol.Generations() {
		if info, ok := g.Lookup(event); ok && info.AckMayBeError {
			return true
		}
	}
	return false
}
