package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/blob"
	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// ProtocolVersion is the MCP revision every connection is pinned to.
const ProtocolVersion = mcp.ProtocolVersion20251125

// Conn is one live connection to an MCP server: one generation of a
// supervised server. It implements mcpsource.Source. After the connection
// is lost its methods fail; the supervisor replaces it with a new Conn.
type Conn struct {
	name       string
	cfg        protocol.MCPServerConfig
	log        *slog.Logger
	reqTimeout time.Duration

	client *client.Client
	caps   mcp.ServerCapabilities
	info   mcp.Implementation

	ctx    context.Context // ends when the connection is lost or stopped
	cancel context.CancelFunc

	rawID atomic.Int64

	progressMu sync.Mutex
	progress   map[string]func(Progress) // by progress token (progress.go)

	lostOnce sync.Once
	lost     chan struct{}
	lostErr  error

	poke chan struct{} // asks the monitor for an immediate health check
	wg   sync.WaitGroup

	proc      *child // stdio only
	closeOnce sync.Once
}

var _ mcpsource.Source = (*Conn)(nil)

// Name is the server's configured name.
func (c *Conn) Name() string { return c.name }

// Config is the server's (resolved) config.
func (c *Conn) Config() protocol.MCPServerConfig { return c.cfg }

// Context ends when the connection is lost or stopped.
func (c *Conn) Context() context.Context { return c.ctx }

// Lost is closed when the connection is lost or stopped.
func (c *Conn) Lost() <-chan struct{} { return c.lost }

// Capabilities is what the server declared at initialize.
func (c *Conn) Capabilities() mcp.ServerCapabilities { return c.caps }

// ServerInfo is the server's initialize implementation info.
func (c *Conn) ServerInfo() mcp.Implementation { return c.info }

// SupportsSubscribe reports whether the server declared resources.subscribe.
func (c *Conn) SupportsSubscribe() bool { return c.caps.Resources != nil && c.caps.Resources.Subscribe }

// PID is the stdio child's process id (0 for HTTP servers).
func (c *Conn) PID() int {
	if c.proc != nil {
		return c.proc.pid()
	}
	return 0
}

// NonJSONLines is the number of lines that were not JSON on a stdio
// server's stdout (dropped and logged, see the package documentation).
func (c *Conn) NonJSONLines() int {
	if c.proc != nil {
		return c.proc.garbageLines()
	}
	return 0
}

// explain adds what a stdio child left (exit status, last stderr lines) to
// the error that ended or failed the connection.
func (c *Conn) explain(err error) error {
	if c.proc == nil || err == nil {
		return err
	}
	var pe *ProcessError
	if errors.As(err, &pe) {
		return err
	}
	return c.proc.explain(err)
}

// reqCtx bounds one of the Computer's own requests by the server's request
// timeout and by the connection's life.
func (c *Conn) reqCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, c.reqTimeout)
	stop := context.AfterFunc(c.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// failed inspects a request error: anything but a JSON-RPC error or the
// caller's own cancellation asks the monitor for an immediate health check.
// A failure due to the connection's loss (its transport closed: a stdio
// server died, even in the middle of an answer) wraps
// mcpsource.ErrConnectionLost.
func (c *Conn) failed(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var rpc *mcpsource.RPCError
	if !errors.As(err, &rpc) && ctx.Err() == nil {
		select {
		case c.poke <- struct{}{}:
		default:
		}
	}
	if errors.Is(err, transport.ErrTransportClosed) || c.ctx.Err() != nil && ctx.Err() != nil {
		return fmt.Errorf("mcp server %q: %w: %w", c.name, mcpsource.ErrConnectionLost, err)
	}
	return err
}

// ListResources lists every resource, following cursors, within the
// bounds of one listing (see Listing bounds in the package documentation).
func (c *Conn) ListResources(ctx context.Context) ([]mcp.Resource, error) {
	return listAll(ctx, c, string(mcp.MethodResourcesList), "resources", func(r *mcp.ListResourcesResult) ([]mcp.Resource, mcp.Cursor) {
		return r.Resources, r.NextCursor
	})
}

// ListResourceTemplates lists every resource template, following cursors,
// within the bounds of one listing (see Listing bounds in the package
// documentation).
func (c *Conn) ListResourceTemplates(ctx context.Context) ([]mcp.ResourceTemplate, error) {
	return listAll(ctx, c, string(mcp.MethodResourcesTemplatesList), "resourceTemplates", func(r *mcp.ListResourceTemplatesResult) ([]mcp.ResourceTemplate, mcp.Cursor) {
		return r.ResourceTemplates, r.NextCursor
	})
}

// Subscribe sends resources/subscribe.
func (c *Conn) Subscribe(ctx context.Context, uri string) error {
	rctx, cancel := c.reqCtx(ctx)
	defer cancel()
	req := mcp.SubscribeRequest{}
	req.Params.URI = uri
	return c.failed(rctx, c.client.Subscribe(rctx, req))
}

// ListTools lists every tool, following cursors, within the bounds of one
// listing (see Listing bounds in the package documentation): a server whose
// tools/list never ends, or lists more than 100,000 tools or 64 MiB, fails
// with 413 instead of holding the
// Computer until the request timeout. The listing bypasses mcp-go's
// client, which would also remember the definitions for x-mcp-header
// mirroring: that applies only to a protocol revision newer than
// ProtocolVersion, and CallTool sends tools/call itself.
func (c *Conn) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	return listAll(ctx, c, string(mcp.MethodToolsList), "tools", func(r *mcp.ListToolsResult) ([]mcp.Tool, mcp.Cursor) {
		return r.Tools, r.NextCursor
	})
}

// raw sends one request through the transport and returns its result, or a
// *mcpsource.RPCError carrying the server's JSON-RPC error unchanged.
func (c *Conn) raw(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := mcp.NewRequestId("smcp-" + strconv.FormatInt(c.rawID.Add(1), 10))
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Method: method, Params: params}
	resp, err := c.client.GetTransport().SendRequest(ctx, req)
	if err != nil {
		settleDeadline(ctx)
		if ctx.Err() != nil {
			if c.ctx.Err() == nil && ctx.Value(noCancelNoticeKey{}) == nil {
				c.cancelRemote(id, ctx.Err())
			}
			if !errors.Is(err, ctx.Err()) { // the SSE transport reports its own timeout error
				err = fmt.Errorf("%w (%v)", ctx.Err(), err)
			}
		}
		return nil, c.failed(ctx, err)
	}
	if resp.Error != nil {
		e := &mcpsource.RPCError{Code: resp.Error.Code, Message: resp.Error.Message}
		if resp.Error.Data != nil {
			if b, err := json.Marshal(resp.Error.Data); err == nil {
				e.Data = b
			}
		}
		return nil, e
	}
	return resp.Result, nil
}

// settleDeadline waits out the last moment of ctx's deadline when a request
// failed right at it: mcp-go's SSE transport arms its own timer for the
// context's remaining time, and that timer can fire a hair before the context
// reports DeadlineExceeded, so the failure would not be recognised as the
// caller's timeout.
func settleDeadline(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	dl, ok := ctx.Deadline()
	if !ok {
		return
	}
	if left := time.Until(dl); left < 10*time.Millisecond {
		// The context's own timer may itself run late on a loaded machine:
		// allow it a bounded grace past the deadline.
		t := time.NewTimer(max(left, 0) + 50*time.Millisecond)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
}

type noCancelNoticeKey struct{}

// WithoutCancelNotice marks ctx so that a request sent with it (or a context
// derived from it) that ends with the context is abandoned locally, without
// sending the server notifications/cancelled. Meant for reads that have no
// effect to undo, on servers that may not survive a cancellation.
func WithoutCancelNotice(ctx context.Context) context.Context {
	return context.WithValue(ctx, noCancelNoticeKey{}, true)
}

// cancelRemote tells the server to stop working on a request whose context
// ended (MCP notifications/cancelled), best effort and bounded.
func (c *Conn) cancelRemote(id mcp.RequestId, reason error) {
	ctx, cancel := context.WithTimeout(c.ctx, time.Second)
	defer cancel()
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: string(mcp.MethodNotificationCancelled),
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": id, "reason": reason.Error()}},
	}}
	_ = c.client.GetTransport().SendNotification(ctx, n)
}

// ReadResource sends resources/read. A ctx from WithProgress asks for the
// read's progress. A JSON-RPC error answer is returned as a
// *mcpsource.RPCError with the server's code, message and data.
func (c *Conn) ReadResource(ctx context.Context, uri string) ([]mcp.ResourceContents, error) {
	rctx, cancel := c.reqCtx(ctx)
	defer cancel()
	params := map[string]any{"uri": uri}
	if f := progressOf(ctx); f != nil {
		token, done := c.watchProgress(f)
		defer done()
		params["_meta"] = map[string]any{"progressToken": token}
	}
	res, err := c.raw(rctx, string(mcp.MethodResourcesRead), params)
	if err != nil {
		return nil, err
	}
	out, err := mcp.ParseReadResourceResult(&res)
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: resources/read %s: %w", c.name, uri, err)
	}
	return out.Contents, nil
}

// CallTool sends tools/call and returns the result exactly as the server
// sent it (JSON). ctx bounds the call (the Agent's timeout); when it ends
// first the server is sent notifications/cancelled. A ctx from WithProgress
// asks for the call's progress. A JSON-RPC error answer
// is a *mcpsource.RPCError.
func (c *Conn) CallTool(ctx context.Context, name string, args map[string]any) (json.RawMessage, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	if args == nil {
		args = map[string]any{}
	}
	params := map[string]any{"name": name, "arguments": args}
	if f := progressOf(ctx); f != nil {
		token, done := c.watchProgress(f)
		defer done()
		params["_meta"] = map[string]any{"progressToken": token}
	}
	return c.raw(ctx, string(mcp.MethodToolsCall), params)
}

// ping checks the connection.
func (c *Conn) ping(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(c.ctx, timeout)
	defer cancel()
	_, err := c.raw(ctx, string(mcp.MethodPing), nil)
	var rpc *mcpsource.RPCError
	if errors.As(err, &rpc) {
		return nil // it answered
	}
	return err
}

func (c *Conn) markLost(err error) {
	c.lostOnce.Do(func() {
		c.lostErr = err
		close(c.lost)
	})
}

// LostErr is why the connection was lost (nil when stopped on request).
func (c *Conn) LostErr() error {
	select {
	case <-c.lost:
		return c.lostErr
	default:
		return nil
	}
}

// monitor pings every interval, and at once when poked, until the
// connection fails or ends. A stdio server whose ping times out while its
// stdout kept delivering bytes is not lost: the answer queues behind a long
// message (a 100 MiB image is a 133 MiB line).
func (c *Conn) monitor(interval, timeout time.Duration) {
	defer c.wg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		case <-c.poke:
		}
		var before int64
		if c.proc != nil {
			before = c.proc.read.Load()
		}
		if err := c.ping(timeout); err != nil {
			if c.ctx.Err() != nil {
				return
			}
			if c.proc != nil && errors.Is(err, context.DeadlineExceeded) && c.proc.read.Load() != before {
				// The answer waits behind a long message the server is
				// still writing (a large tool result): it is alive.
				continue
			}
			c.markLost(c.explain(fmt.Errorf("health check: %w", err)))
			return
		}
	}
}

// watchExit marks the connection lost as soon as the stdio child is
// reaped, with its exit status and last stderr lines.
func (c *Conn) watchExit() {
	defer c.wg.Done()
	select {
	case <-c.proc.exited:
		c.markLost(c.proc.explain(errors.New("process exited")))
	case <-c.ctx.Done():
	}
}

// close ends the connection: stops the transport, stops a stdio child (and
// its process group, see child.stop) and waits for its goroutines.
func (c *Conn) close() {
	c.closeOnce.Do(func() {
		c.markLost(nil)
		c.cancel()
		if err := c.client.Close(); err != nil {
			c.log.Debug("mcp client close", "err", err)
		}
		if c.proc != nil {
			if err := c.proc.stop(); err != nil {
				c.log.Error("stopping mcp server process", "err", err)
			}
		}
		c.wg.Wait()
	})
}

// dialOptions are the manager settings a connection needs.
type dialOptions struct {
	log            *slog.Logger
	clientName     string
	clientVersion  string
	connectTimeout time.Duration
	reqTimeout     time.Duration
	healthInterval time.Duration
	healthTimeout  time.Duration
	maxMessage     int         // bytes of one stdio message; ≤ 0: DefaultMaxMessageBytes
	spool          *blob.Spool // where a stdio tool result's binary items go (WithSpool)
}

// dial connects to one server and initializes it.
func dial(parent context.Context, cfg protocol.MCPServerConfig, o dialOptions) (*Conn, error) {
	to, err := config.TimeoutsOf(cfg)
	if err != nil {
		return nil, err
	}
	c := &Conn{name: cfg.Name(), cfg: cfg, log: o.log, reqTimeout: o.reqTimeout,
		lost: make(chan struct{}), poke: make(chan struct{}, 1)}
	if to.Request > 0 {
		c.reqTimeout = to.Request
	}
	c.ctx, c.cancel = context.WithCancel(parent)

	var tr transport.Interface
	switch {
	case cfg.Stdio != nil:
		tr, err = c.stdioTransport(cfg.Stdio, o.maxMessage, o.spool)
	case cfg.Streamable != nil:
		p := cfg.Streamable.ServerParameters
		hs := httpSettings{sseRead: to.SSERead, keepSession: p.TerminateOnClose != nil && !*p.TerminateOnClose, maxMessage: o.maxMessage, spool: o.spool}
		tr, err = transport.NewStreamableHTTP(p.URL, transport.WithHTTPHeaders(headers(p.Headers)),
			transport.WithHTTPBasicClient(hs.client()), transport.WithContinuousListening(), transport.WithHTTPLogger(o.log))
	case cfg.SSE != nil:
		p := cfg.SSE.ServerParameters
		hs := httpSettings{sseRead: to.SSERead, maxMessage: o.maxMessage, spool: o.spool}
		tr, err = transport.NewSSE(p.URL, transport.WithHeaders(headers(p.Headers)),
			transport.WithHTTPClient(hs.client()), transport.WithSSELogger(o.log))
	default:
		err = errors.New("empty server config")
	}
	if err != nil {
		c.cancel()
		return nil, err
	}
	c.client = client.NewClient(tr, client.WithProtocolVersion(ProtocolVersion))
	c.client.OnNotification(c.onProgress) // before any other: it never blocks
	fail := func(err error) (*Conn, error) {
		err = c.explain(err)
		c.close()
		return nil, err
	}
	if c.proc != nil {
		c.wg.Add(1)
		go c.watchExit()
	}
	if err := c.client.Start(c.ctx); err != nil {
		return fail(fmt.Errorf("start: %w", err))
	}
	ictx, cancel := context.WithTimeout(c.ctx, o.connectTimeout)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = ProtocolVersion
	init.Params.ClientInfo = mcp.Implementation{Name: o.clientName, Version: o.clientVersion}
	res, err := c.client.Initialize(ictx, init)
	if err != nil {
		return fail(fmt.Errorf("initialize: %w", err))
	}
	c.caps = res.Capabilities
	c.info = res.ServerInfo
	sse := cfg.SSE != nil
	c.client.OnConnectionLost(func(err error) {
		if sse {
			// The HTTP+SSE transport answers every request on its one event
			// stream and never reopens it: the connection is gone.
			c.markLost(fmt.Errorf("event stream lost: %w", err))
		}
		select {
		case c.poke <- struct{}{}:
		default:
		}
	})
	c.wg.Add(1)
	go c.monitor(o.healthInterval, o.healthTimeout)
	return c, nil
}

func headers(h map[string]any) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		switch t := v.(type) {
		case string:
			out[k] = t
		case nil:
		default:
			out[k] = fmt.Sprint(t)
		}
	}
	return out
}

// childEnv is the stdio child's environment: the default keys of the
// Python MCP SDK taken from ours, then the configured env.
func childEnv(env map[string]string) []string {
	m := map[string]string{}
	for _, k := range defaultEnvKeys {
		if v, ok := os.LookupEnv(k); ok && !strings.HasPrefix(v, "()") {
			m[k] = v
		}
	}
	for k, v := range env {
		m[k] = v
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+m[k])
	}
	return out
}

func (c *Conn) stdioTransport(s *protocol.MCPStdioConfig, maxMessage int, spool *blob.Spool) (transport.Interface, error) {
	p := s.ServerParameters
	if p.Encoding != "" && !strings.EqualFold(strings.ReplaceAll(p.Encoding, "-", ""), "utf8") {
		c.log.Warn("only utf-8 is supported as stdio encoding; ignoring", "encoding", p.Encoding)
	}
	// Not CommandContext: the supervisor owns the child's life and stops it
	// (and its group) explicitly.
	cmd := exec.Command(p.Command, p.Args...)
	cmd.Env = childEnv(p.Env)
	if p.Cwd != nil && *p.Cwd != "" {
		cmd.Dir = *p.Cwd
	}
	proc, err := startChild(cmd, c.name, c.log, maxMessage, spool)
	if err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	c.proc = proc
	return transport.NewIO(proc.out, proc.stdin, nil), nil
}
