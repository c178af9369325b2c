// Package sio is the Computer's Socket.IO client (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#connection-and-auth; Offices; Routed requests; Updates and notifications).
//
// It connects to a Server's /smcp namespace with the API key as the auth
// payload {"token": key, "api_key": key} and as the x-api-key header,
// naming its protocol generation in the handshake (WithGenerations;
// Generation, Confirmed), joins its
// office as role "computer", and joins again after every reconnection (a
// reconnected socket has a new id and no rooms). The connection is an
// sio.Conn (module github.com/a2c-smcp/smcp-go/sio), shared with the Agent:
// each attempt bounded (2 s), a refused connection failing it at once,
// retries backing off from 250 ms to 2 s with jitter, every failure logged. It answers every client:*
// event: the request is validated against its schema (400 ErrorPayload
// when invalid), its "computer" must be this Computer's name (404
// otherwise), and the Handler's result or error is sent as exactly ONE ack
// value — the result, or an ErrorPayload (the Server merges acks one entry
// per client, so zero or two values would make the Agent time out). The
// work runs on goroutines owned by the Client with a context that ends at
// Close, never on the Socket.IO client's event queue, which all events and
// acks of the connection share. notify:tool_call_cancel is passed to the
// Handler. Notify emits server:update_* {computer} while the office is
// joined.
package sio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	conn "github.com/a2c-smcp/smcp-go/sio"
)

// Handler answers the routed requests. Each call runs on its own goroutine;
// ctx ends when the Client closes. g is the protocol generation the
// request is answered in: the requesting Agent's when an smcp-go Server
// named it (protocol.CallerVersionMember) and the Computer speaks it, else
// that of the session the request arrived in
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#computer):
// a Handler answers in its shapes (bundle ids and exposed tool names,
// result meta, config keys) and the Client writes an error in its error
// shape. Errors should be *protocol.Error (others become 500).
//
// GetResources, GetSkills, GetSkill, GetBlob and PutBlob answer the events
// 0.4.0 added (GetResources, GetSkills, GetSkill and GetBlob are in 0.3.0
// too); a session of a generation that lacks the event never reaches them:
// the Client answers it 4106 itself.
type Handler interface {
	GetTools(ctx context.Context, g protocol.Generation, req protocol.GetToolsReq) (protocol.GetToolsRet, error)
	ToolCall(ctx context.Context, g protocol.Generation, req protocol.ToolCallReq) protocol.CallToolResult
	GetConfig(ctx context.Context, g protocol.Generation, req protocol.GetComputerConfigReq) (protocol.GetComputerConfigRet, error)
	GetDesktop(ctx context.Context, g protocol.Generation, req protocol.GetDesktopReq) (protocol.GetDesktopRet, error)
	GetFinder(ctx context.Context, g protocol.Generation, req protocol.GetFinderReq) (protocol.GetFinderRet, error)
	ReadResource(ctx context.Context, g protocol.Generation, req protocol.ReadResourceReq) (protocol.ReadResourceRet, error)
	GetResources(ctx context.Context, g protocol.Generation, req protocol.GetResourcesReq) (protocol.GetResourcesRet, error)
	GetSkills(ctx context.Context, g protocol.Generation, req protocol.GetSkillsReq) (protocol.GetSkillsRet, error)
	GetSkill(ctx context.Context, g protocol.Generation, req protocol.GetSkillReq) (protocol.GetSkillRet, error)
	GetBlob(ctx context.Context, g protocol.Generation, req protocol.GetBlobReq) (protocol.GetBlobRet, error)
	PutBlob(ctx context.Context, g protocol.Generation, req protocol.PutBlobReq) (protocol.PutBlobRet, error)
	CancelToolCall(req protocol.CancelToolCallReq)
}

// Option configures Dial.
type Option func(*options)

type options struct {
	apiKey     string
	headers    http.Header
	log        *slog.Logger
	timeout    time.Duration
	polling    bool
	gens       []protocol.Generation
	extensions []string
	extSet     bool
}

// WithAPIKey sends key as auth {"token": key, "api_key": key} and header
// x-api-key.
func WithAPIKey(key string) Option { return func(o *options) { o.apiKey = key } }

// WithHeader adds an HTTP header to the handshake.
func WithHeader(k, v string) Option {
	return func(o *options) {
		if o.headers == nil {
			o.headers = http.Header{}
		}
		o.headers.Add(k, v)
	}
}

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithTimeout bounds the connection and each join (default 10 s).
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithPolling starts with HTTP long-polling and upgrades to a websocket
// where it can; behind a proxy that refuses websockets the connection stays
// on long-polling (default: websocket only).
func WithPolling() Option { return func(o *options) { o.polling = true } }

// WithGenerations sets the protocol generations the Computer speaks, the
// first one named in the handshake (default every generation, newest
// first); a Server that refuses it gets one retry with the newest of the
// others it accepts (sio.WithGenerations;
// https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#versions-and-negotiation).
// One generation pins it. The session's generation is Generation.
func WithGenerations(gens ...protocol.Generation) Option {
	return func(o *options) { o.gens = append([]protocol.Generation(nil), gens...) }
}

// WithExtensions sets the client:* events the Computer answers beyond its
// generation's core events, listed in the extensions member of its
// server:join_office to a Server that confirmed the session's generation
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#confirmation-and-extensions);
// events that are core in the session's generation, or that it lacks, are
// left out. Default: every routed event that is an extension in the
// session's generation (protocol.Generation.Lookup). None: WithExtensions().
func WithExtensions(events ...string) Option {
	return func(o *options) { o.extensions, o.extSet = append([]string(nil), events...), true }
}

// Client is a Computer's connection to a Server.
type Client struct {
	name, office string
	h            Handler
	o            options
	log          *slog.Logger
	conn         *conn.Conn   // the supervised connection (reconnects on its own)
	sock         *conn.Socket // conn.Socket()

	ctx    context.Context
	cancel context.CancelFunc

	emitMu sync.Mutex // serialises emits and acks on the socket

	mu      sync.Mutex
	joined  bool
	closed  bool
	gen     int // connection generation
	firstCh chan error
	wg      sync.WaitGroup
}

// errConnectionLost marks a request whose connection closed before the
// Server answered: transient, the reconnection retries.
var errConnectionLost = errors.New("connection lost before the answer")

// routed are the client:* events a Computer answers, in any generation that
// has them (0.2.0's, the Finder's and client:read_resource, and those 0.3.0
// and 0.4.0 added).
var routed = []string{protocol.EventToolCall, protocol.EventGetTools, protocol.EventGetConfig,
	protocol.EventGetDesktop, protocol.EventGetFinder, protocol.EventReadResource,
	protocol.EventGetResources, protocol.EventGetSkills, protocol.EventGetSkill,
	protocol.EventGetBlob, protocol.EventPutBlob, protocol.EventComplete}

// Dial connects to serverURL (http[s]://host:port, with or without the
// /smcp path), joins office as name and returns once joined. Its errors
// are *protocol.Error values that wrap their cause: a refused connection
// or join is the Server's code (401, 4101, ...); a Server that cannot be
// reached is a 503 matching ErrUnreachable and wrapping the network's error
// (a *net.OpError); a context that ends first (or WithTimeout's bound) is a
// 408 wrapping ctx.Err().
func Dial(ctx context.Context, serverURL, office, name string, h Handler, opts ...Option) (*Client, error) {
	o := options{log: slog.Default(), timeout: 10 * time.Second}
	for _, f := range opts {
		f(&o)
	}
	if office == "" || name == "" {
		return nil, protocol.NewBadRequest("office and name are required")
	}
	nsURL, err := namespaceURL(serverURL)
	if err != nil {
		return nil, err
	}
	life, cancel := context.WithCancel(context.Background())
	c := &Client{name: name, office: office, h: h, o: o, log: o.log.With("computer", name, "office", office),
		ctx: life, cancel: cancel, firstCh: make(chan error, 1)}

	copts := []conn.Option{conn.WithLogger(c.log)}
	if len(o.gens) > 0 {
		copts = append(copts, conn.WithGenerations(o.gens...))
	}
	if o.polling {
		copts = append(copts, conn.WithPolling())
	}
	if o.apiKey != "" {
		copts = append(copts, conn.WithAPIKey(o.apiKey))
	}
	for k, vs := range o.headers {
		for _, v := range vs {
			copts = append(copts, conn.WithHeader(k, v))
		}
	}
	cn, err := conn.New(nsURL, conn.Hooks{
		Connected: func(int) { c.onConnect() },
		Disconnected: func(reason string) {
			c.mu.Lock()
			c.joined = false
			c.mu.Unlock()
			if reason == "io server disconnect" {
				// No reconnection follows a Server's disconnect: a Dial
				// still waiting for its join fails with why (the Rust 0.4
				// Server drops a refused credential's session so).
				c.first(c.serverEnded())
			}
		},
	}, copts...)
	if err != nil {
		cancel()
		return nil, protocol.NewBadRequest("server URL %q: %v", serverURL, err)
	}
	c.conn, c.sock = cn, cn.Socket()
	for _, ev := range routed {
		_ = c.sock.On(conn.EventName(ev), func(args ...any) { c.onRequest(ev, args) })
	}
	_ = c.sock.On(conn.EventName(protocol.NotifyCancelToolCall), func(args ...any) { c.onCancel(args) })

	wait, stop := context.WithTimeout(ctx, o.timeout)
	defer stop()
	if err := cn.Connect(wait); err != nil {
		c.Close()
		return nil, dialError(wait, nsURL, office, err)
	}
	select {
	case err := <-c.firstCh:
		if err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	case <-wait.Done():
		c.Close()
		return nil, wrap(protocol.Errorf(protocol.CodeTimeout, "connect to %s and join office %q: no answer in time", nsURL, office), wait.Err())
	}
}

// serverEnded is the error of a session the Server ended: the refusal
// the connection read (sio.Conn.LastError), else a 503.
func (c *Client) serverEnded() error {
	if err := c.conn.LastError(); err != nil {
		return dialError(c.ctx, c.conn.URL(), c.office, err)
	}
	return protocol.NewUnavailable("connect to %s and join office %q: the server ended the session", c.conn.URL(), c.office)
}

// Generation returns the protocol generation of the session: the one the
// Server confirmed, else 0.2.0 for a Server found to ignore a2c_version (a
// 0.2 Server, asked once before the first join), else the one the Computer
// named in its handshake
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#clients-negotiation-in-practice).
func (c *Client) Generation() protocol.Generation { return c.conn.Generation() }

// Confirmed reports whether the Server confirmed the session's generation
// (an smcp-go Server does; the reference Servers do not, and route no
// smcp-go extension).
func (c *Client) Confirmed() bool { return c.conn.Confirmed() }

// extensions returns the events to list in server:join_office: none to a
// Server that did not confirm the generation; else WithExtensions' list,
// or every routed event that is an extension in g, keeping only the
// events that are extensions in g.
func (c *Client) extensions() []string {
	if !c.conn.Confirmed() {
		return nil
	}
	g := c.conn.Generation()
	list := routed
	if c.o.extSet {
		list = c.o.extensions
	}
	var out []string
	for _, ev := range list {
		if info, ok := g.Lookup(ev); ok && info.Extension && !slices.Contains(out, ev) {
			out = append(out, ev)
		}
	}
	return out
}

func (c *Client) first(err error) {
	select {
	case c.firstCh <- err:
	default:
	}
}

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

// goOwned runs fn on a goroutine the Client waits for at Close.
func (c *Client) goOwned(fn func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		fn()
	}()
	return true
}

func (c *Client) onConnect() {
	c.log.Debug("connected", "sid", c.sock.Id())
	c.mu.Lock()
	c.gen++
	gen := c.gen
	c.mu.Unlock()
	// Never wait for an ack on the event queue: join on our own goroutine.
	c.goOwned(func() { c.join(gen) })
}

// join joins the office, retrying while the connection lasts (a name held
// by our previous session may take a moment to be released).
func (c *Client) join(gen int) {
	first := true
	for attempt := 0; ; attempt++ {
		err := c.joinOnce()
		c.mu.Lock()
		stale := gen != c.gen || c.closed
		if err == nil && !stale {
			c.joined = true
		}
		c.mu.Unlock()
		if stale {
			return
		}
		if err == nil {
			c.log.Info("joined office", "sid", c.sock.Id(), "protocol", c.conn.Generation().String(), "confirmed", c.conn.Confirmed())
			c.first(nil)
			return
		}
		if errors.Is(err, errConnectionLost) {
			// The connection dropped under the join (the Server may close a
			// connection whose first event raced its namespace handshake):
			// the client reconnects and the next connect joins again.
			c.log.Debug("join lost with the connection; the reconnection joins again", "err", err)
			return
		}
		if first && !protocol.CodeOf(err).Retryable() {
			// The first join of Dial fails fast: the user sees why. A
			// refusal for now (429: the office's event budget, which a
			// fleet starting at once can spend; 503) is retried like any
			// later join, within Dial's timeout.
			c.mu.Lock()
			firstEver := gen == 1
			c.mu.Unlock()
			if firstEver {
				c.first(err)
				return
			}
			first = false
		}
		c.log.Warn("join office failed; retrying", "err", err)
		select {
		// Jittered: Computers refused together (an office's budget spent
		// by a fleet starting at once) do not all come back together.
		case <-time.After(time.Second/2 + rand.N(time.Second)):
		case <-c.ctx.Done():
			return
		}
	}
}

func (c *Client) joinOnce() error {
	req := protocol.EnterOfficeReq{Role: protocol.RoleComputer, Name: c.name, OfficeID: c.office, Extensions: c.extensions()}
	vals, err := c.call(protocol.EventJoinOffice, req)
	c.log.Debug("join answered", "vals", vals, "err", err)
	if err != nil {
		return err
	}
	if len(vals) == 0 {
		// The library answers an ack with no values when the connection
		// closes before the Server answered.
		return fmt.Errorf("join office %q: %w", c.office, errConnectionLost)
	}
	if ok, _ := vals[0].(bool); ok {
		return nil
	}
	reason := "refused"
	if len(vals) >= 2 && vals[1] != nil {
		reason = fmt.Sprint(vals[1])
	}
	code, msg := protocol.ParseRefusal(reason)
	return protocol.Errorf(code, "join office %q as %q: %s", c.office, c.name, msg)
}

// call emits with an ack and waits for it (own timer: the client's
// Timeout() flag is shared by the socket).
func (c *Client) call(event string, payload any) ([]any, error) {
	data, err := toJSONValue(payload)
	if err != nil {
		return nil, err
	}
	ch := make(chan []any, 1)
	ack := conn.Ack(func(vals []any, _ error) {
		select {
		case ch <- vals:
		default:
		}
	})
	c.emitMu.Lock()
	err = c.sock.Emit(event, data, ack)
	c.emitMu.Unlock()
	if err != nil {
		return nil, protocol.NewInternal("%s: %v", event, err)
	}
	t := time.NewTimer(c.o.timeout)
	defer t.Stop()
	select {
	case vals := <-ch:
		return vals, nil
	case <-t.C:
		// The Client's own bound: a deadline, as the Agent reports its own.
		return nil, wrap(protocol.Errorf(protocol.CodeTimeout, "%s: no answer within %s", event, c.o.timeout), context.DeadlineExceeded)
	case <-c.ctx.Done():
		return nil, protocol.NewInternal("%s: client closed", event)
	}
}

// Notify emits a server:update_* event ({computer: name}) when the office
// is joined; it reports whether it was sent.
func (c *Client) Notify(event string) bool {
	c.mu.Lock()
	ok := c.joined && !c.closed
	c.mu.Unlock()
	if !ok {
		return false
	}
	data, _ := toJSONValue(protocol.UpdateComputerConfigReq{Computer: c.name})
	c.emitMu.Lock()
	err := c.sock.Emit(event, data)
	c.emitMu.Unlock()
	if err != nil {
		c.log.Warn("emit failed", "event", event, "err", err)
		return false
	}
	return true
}

// Joined reports whether the office is joined right now.
func (c *Client) Joined() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.joined
}

// Name is the Computer's name; Office its office.
func (c *Client) Name() string   { return c.name }
func (c *Client) Office() string { return c.office }

// Close leaves the server (disconnect: the Server broadcasts the leave) and
// waits for every handler goroutine. Safe to call twice.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.joined = false
	c.mu.Unlock()
	c.cancel()
	c.conn.Close(time.Second)
	c.wg.Wait()
	return nil
}

func toJSONValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, protocol.NewInternal("encode: %v", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, protocol.NewInternal("encode: %v", err)
	}
	return out, nil
}

func (c *Client) onCancel(args []any) {
	if len(args) == 0 {
		return
	}
	if err := protocol.ValidateValue(protocol.NotifyCancelToolCall, protocol.Request, args[0]); err != nil {
		c.log.Warn("invalid notify:tool_call_cancel ignored", "err", err)
		return
	}
	var req protocol.CancelToolCallReq
	if protocol.DecodeValue(args[0], &req) != nil {
		return
	}
	c.goOwned(func() { c.h.CancelToolCall(req) })
}

// onRequest runs on the socket's event queue: it only validates and hands
// the work to an owned goroutine.
func (c *Client) onRequest(event string, args []any) {
	var ack conn.Ack
	if n := len(args); n > 0 {
		if a, ok := args[n-1].(conn.Ack); ok {
			ack, args = a, args[:n-1]
		} else if f, ok := args[n-1].(func([]any, error)); ok {
			ack, args = f, args[:n-1]
		}
	}
	if ack == nil {
		c.log.Warn("request without ack ignored", "event", event)
		return
	}
	g, confirmed := c.session()
	if len(args) == 1 {
		g = c.answerIn(g, confirmed, args[0])
	}
	a := answerer{g: g, limit: messageLimit(confirmed), name: c.name, h: c.h, log: c.log}
	reply := func(v any) {
		data := a.encode(event, v)
		c.emitMu.Lock()
		ack([]any{data}, nil)
		c.emitMu.Unlock()
	}
	if err := a.check(event, args); err != nil {
		reply(err)
		return
	}
	payload := args[0]
	if !c.goOwned(func() { reply(a.dispatch(c.ctx, event, payload)) }) {
		reply(protocol.NewInternal("computer %q is shutting down", c.name))
	}
}

// messageLimit is the largest answer the Client sends: the reference
// Servers' limit when the Server did not confirm it is smcp-go, else none
// (the Handler bounds its answers by WithMaxPayloadBytes, which matches an
// smcp-go Server's setting).
func messageLimit(confirmed bool) int64 {
	if confirmed {
		return 0
	}
	return protocol.ReferenceMaxMessageBytes
}

// answerer answers the requests of one session: its generation, and the
// largest answer its Server accepts (0: unbounded here).
type answerer struct {
	g     protocol.Generation
	limit int64
	name  string
	h     Handler
	log   *slog.Logger
}

// check validates a request before it is dispatched (in g: its schema, that
// g has the event, and that it is addressed to this Computer); the error is
// the ack value, nil when the request may be dispatched.
func (a answerer) check(event string, args []any) *protocol.Error {
	if len(args) != 1 {
		return protocol.NewBadRequest("%s: want one payload, got %d", event, len(args))
	}
	if _, ok := a.g.Lookup(event); !ok {
		// The Server routes no event the session's generation lacks
		// (spec/generations.md, Confirmation and extensions); one that
		// arrives all the same is refused as it would be.
		return protocol.NewNotSupported("%s is not an event of protocol %s", event, a.g).With("event", event)
	}
	if err := a.g.ValidateValue(event, protocol.Request, args[0]); err != nil {
		return protocol.AsError(err)
	}
	var target struct {
		Computer string `json:"computer"`
	}
	if err := protocol.DecodeValue(args[0], &target); err != nil {
		return protocol.NewBadRequest("%s: %v", event, err)
	}
	if target.Computer != a.name {
		return protocol.ComputerNotFound(a.g, target.Computer)
	}
	return nil
}

// encode turns the ack value v (a result, or a *protocol.Error) into the
// JSON that is sent: an error in g's shape, and an answer over the message limit
// replaced by a 413 (a tool call's by an error CallToolResult) rather than
// sent for the Server to close the connection.
func (a answerer) encode(event string, v any) any {
	if e, ok := v.(*protocol.Error); ok {
		v = e.In(a.g)
	}
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(protocol.NewInternal("%s: encode the answer: %v", event, err).In(a.g))
	}
	if a.limit > 0 && int64(len(b))+envelope > a.limit {
		e := protocol.NewPayloadTooLarge("%s: the answer of %d bytes exceeds the %d bytes the Server accepts in one message; narrow the request",
			event, len(b), a.limit).With("bytes", len(b)).With("limit", a.limit)
		a.log.Warn("answer over the Server's message limit refused", "event", event, "bytes", len(b), "limit", a.limit)
		if event == protocol.EventToolCall {
			b, _ = json.Marshal(errorResult(e))
		} else {
			b, _ = json.Marshal(e.In(a.g))
		}
	}
	// Sent as the bytes made here: the Socket.IO encoder writes a
	// json.RawMessage as it is (after a scan), where decoded values were
	// encoded again, twice the work for a get_blob chunk's 350 KB
	// (docs/performance.md, Blobs).
	return json.RawMessage(b)
}

// envelope is the room kept in a message for the Socket.IO framing of an
// ack (its packet type, namespace, ack id and brackets).
const envelope = 256

// errorResult is the CallToolResult of a tool call refused by the Client
// itself, in the shape package tools writes.
func errorResult(e *protocol.Error) protocol.CallToolResult {
	t := true
	text := e.Message
	return protocol.CallToolResult{
		Content:           []protocol.ContentBlock{{Type: protocol.ContentBlockTypeText, Text: &text}},
		IsError:           &t,
		StructuredContent: map[string]any{"error": e.Message, "error_type": e.Code.String(), "code": int(e.Code)},
	}
}

// call decodes the request into a value of type Req and calls fn.
func call[Req, Ret any](ctx context.Context, event string, payload any, fn func(context.Context, Req) (Ret, error)) any {
	var req Req
	if err := protocol.DecodeValue(payload, &req); err != nil {
		return protocol.NewBadRequest("%s: %v", event, err)
	}
	v, err := fn(ctx, req)
	if err != nil {
		return protocol.AsError(err)
	}
	return v
}

// dispatch decodes the request and calls the Handler; it returns the ack
// value (result or *protocol.Error).
func (a answerer) dispatch(ctx context.Context, event string, payload any) (out any) {
	defer func() {
		if r := recover(); r != nil {
			a.log.Error("handler panicked", "event", event, "panic", r)
			out = protocol.NewInternal("%s: internal error", event)
		}
	}()
	g, h := a.g, a.h
	switch event {
	case protocol.EventToolCall:
		var req protocol.ToolCallReq
		if err := protocol.DecodeValue(payload, &req); err != nil {
			return protocol.NewBadRequest("%s: %v", event, err)
		}
		return h.ToolCall(ctx, g, req)
	case protocol.EventGetTools:
		return call(ctx, event, payload, func(ctx context.Context, r protocol.GetToolsReq) (protocol.GetToolsRet, error) {
			return h.GetTools(ctx, g, r)
		})
	case protocol.EventGetConfig:
		return call(ctx, event, payload, func(ctx context.Context, r protocol.GetComputerConfigReq) (protocol.GetComputerConfigRet, error) {
			return h.GetConfig(ctx, g, r)
		})
	case protocol.EventGetDesktop:
		return call(ctx, event, payload, func(ctx context.Context, r protocol.GetDesktopReq) (protocol.GetDesktopRet, error) {
			return h.GetDesktop(ctx, g, r)
		})
	case protocol.EventGetFinder:
		return call(ctx, event, payload, func(ctx context.Context, r protocol.GetFinderReq) (protocol.GetFinderRet, error) {
			return h.GetFinder(ctx, g, r)
		})
	case protocol.EventReadResource:
		return call(ctx, event, payload, func(ctx context.Context, r protocol.ReadResourceReq) (protocol.ReadResourceRet, error) {
			return h.ReadResource(ctx, g, r)
		})
	case protocol.EventGetResources:
		return call(ctx, event, payload, func(ctx context.Context, r protocol.GetResourcesReq) (protocol.GetResourcesRet, error) {
			return h.GetResources(ctx, g, r)
		})
	case protocol.EventGetSkills:
		return call(ctx, event, payload, func(ctx context.Context, r protocol.GetSkillsReq) (protocol.GetSkillsRet, error) {
			return h.GetSkills(ctx, g, r)
		})
	case protocol.EventGetSkill:
		return call(ctx, event, payload, func(ctx context.Context, r protocol.GetSkillReq) (protocol.GetSkillRet, error) {
			return h.GetSkill(ctx, g, r)
		})
	case protocol.EventGetBlob:
		return call(ctx, event, payload, func(ctx context.Context, r protocol.GetBlobReq) (protocol.GetBlobRet, error) {
			return h.GetBlob(ctx, g, r)
		})
	case protocol.EventPutBlob:
		return call(ctx, event, payload, func(ctx context.Context, r protocol.PutBlobReq) (protocol.PutBlobRet, error) {
			return h.PutBlob(ctx, g, r)
		})
	case protocol.EventComplete:
		return a.complete(ctx, payload)
	}
	return protocol.NewBadRequest("unknown event %q", event)
}
