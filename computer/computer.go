package computer

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/bridge"
	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/desktop"
	"github.com/a2c-smcp/smcp-go/computer/finder"
	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
	"github.com/a2c-smcp/smcp-go/computer/sio"
	"github.com/a2c-smcp/smcp-go/computer/tools"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/prometheus/client_golang/prometheus"
)

// Option configures a Computer.
type Option func(*options)

type options struct {
	log         *slog.Logger
	confirm     tools.ConfirmFunc
	historySize int
	resolve     []config.ResolveOption
	manager     []mcpclient.Option
	schemes     []string
	debounce    time.Duration
	readTimeout time.Duration
	revalidate  time.Duration
	maxPayload  int64
	metrics     prometheus.Registerer
	caps        capOptions // capabilities.go
}

// WithMaxPayloadBytes bounds the JSON-encoded size of an answer read through
// the Computer (client:read_resource), of its tool list (client:get_tools;
// see package tools, Bounds) and of a client:get_finder answer (see
// finder.Aggregator.Query). It is the same setting as the
// Server's payload limit (smcp-server --max-payload-bytes) and defaults to
// the same value, protocol.DefaultMaxPayloadBytes: an answer the Server
// would refuse — and close the Computer's connection for — is refused with
// 413 instead, telling the Agent how to narrow the read (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md,
// Limits). Set both sides together.
func WithMaxPayloadBytes(n int64) Option { return func(o *options) { o.maxPayload = n } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithConfirm sets the hook asked before a tool call whose merged ToolMeta is
// not auto_apply (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#routed-requests). Without it such calls
// fail with 4005.
func WithConfirm(f func(ctx context.Context, req tools.ConfirmRequest) (bool, error)) Option {
	return func(o *options) { o.confirm = f }
}

// WithHistorySize bounds the tool-call history (default 10).
func WithHistorySize(n int) Option { return func(o *options) { o.historySize = n } }

// WithInputs adds options for resolving ${input:ID} (explicit values,
// environment, prompter...).
func WithInputs(opts ...config.ResolveOption) Option {
	return func(o *options) { o.resolve = append(o.resolve, opts...) }
}

// WithInputValues gives explicit input values (highest priority).
func WithInputValues(values map[string]string) Option {
	return WithInputs(config.WithValues(values))
}

// WithManagerOptions passes options to the MCP manager (backoff, health
// check, timeouts).
func WithManagerOptions(opts ...mcpclient.Option) Option {
	return func(o *options) { o.manager = append(o.manager, opts...) }
}

// WithMaxMCPMessageBytes bounds one message an MCP server sends the
// Computer (default mcpclient.DefaultMaxMessageBytes, 32 MiB), the binary
// items of tool results apart: those go to the blob spool
// as they are read, each bounded by the spool's mint cap and room
// (WithSpoolOptions: blob.WithMintCap, 100 MiB; blob.WithMaxBytes, 1 GiB).
// A message beyond either bound fails its request with 413 naming it
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/capabilities.md#blobs). It is
// mcpclient.WithMaxMessageBytes; n ≤ 0 keeps the default.
func WithMaxMCPMessageBytes(n int) Option {
	return WithManagerOptions(mcpclient.WithMaxMessageBytes(n))
}

// WithReadSchemes sets the URI schemes client:read_resource may read
// (default dpe and window).
func WithReadSchemes(schemes ...string) Option {
	return func(o *options) { o.schemes = schemes }
}

// WithDebounce sets how long the Desktop and the Finder gather changes
// before one update event (default theirs: 50–100 ms).
func WithDebounce(d time.Duration) Option { return func(o *options) { o.debounce = d } }

// WithCatalogReadTimeout bounds each read and subscribe of the Finder's and
// the Desktop's catalog builds (default theirs: 10 s). A read that times out
// leaves its document or window out; the others are published.
func WithCatalogReadTimeout(d time.Duration) Option { return func(o *options) { o.readTimeout = d } }

// WithFinderRevalidation sets how often the Finder reads every server's
// listing and Level-1 documents again, so that a change no notification
// announced reaches client:get_finder within that period plus one round
// of reads (default finder.DefaultRevalidation; negative: never).
func WithFinderRevalidation(d time.Duration) Option { return func(o *options) { o.revalidate = d } }

// Computer hosts MCP servers and answers an Agent's requests. Create it
// with New; it is safe for concurrent use.
type Computer struct {
	cfgMu   sync.Mutex
	cfg     *config.Config             // as written; replaced (copy on write) by PutServer/RemoveServer
	bundles map[string]string          // server name -> bundle_id, of cfg (config.BundleIDs)
	refused map[string]*protocol.Error // servers of cfg refused for their bundle_id
	o       options
	log     *slog.Logger

	tools   *tools.Set
	finder  *finder.Aggregator
	desktop *desktop.Desktop
	bridge  *bridge.Bridge
	manager *mcpclient.Manager

	m          *metrics // nil without WithMetrics (metrics.go)
	metricsErr error    // returned by Start

	mu      sync.Mutex
	client  *sio.Client
	caps    *caps // opened by Launch (capabilities.go)
	started bool
	closed  bool
}

// New returns a Computer for cfg; nothing runs before Start.
func New(cfg *config.Config, opts ...Option) *Computer {
	o := options{log: slog.Default()}
	for _, f := range opts {
		f(&o)
	}
	c := &Computer{o: o, log: o.log}
	c.setConfig(cfg.Clone())
	topts := []tools.Option{tools.WithLogger(o.log), tools.WithMaxListBytes(o.maxPayload)}
	if o.confirm != nil {
		topts = append(topts, tools.WithConfirm(o.confirm))
	}
	if o.historySize > 0 {
		topts = append(topts, tools.WithHistorySize(o.historySize))
	}
	c.tools = tools.New(topts...)
	fopts := []finder.Option{finder.WithLogger(o.log), finder.WithMaxAnswerBytes(o.maxPayload),
		finder.WithOnChange(func() { c.notify(protocol.EventUpdateFinder) })}
	dopts := []desktop.Option{desktop.WithLogger(o.log), desktop.WithMaxAnswerBytes(o.maxPayload),
		desktop.WithOnChange(func() { c.notify(protocol.EventUpdateDesktop) })}
	if o.debounce > 0 {
		fopts = append(fopts, finder.WithDebounce(o.debounce))
		dopts = append(dopts, desktop.WithDebounce(o.debounce))
	}
	if o.revalidate != 0 {
		fopts = append(fopts, finder.WithRevalidation(o.revalidate))
	}
	if o.readTimeout > 0 {
		fopts = append(fopts, finder.WithReadTimeout(o.readTimeout))
		dopts = append(dopts, desktop.WithReadTimeout(o.readTimeout))
	}
	c.finder = finder.New(fopts...)
	c.desktop = desktop.New(dopts...)
	bopts := []bridge.Option{bridge.WithLogger(o.log), bridge.WithMaxPayloadBytes(o.maxPayload)}
	if o.schemes != nil {
		bopts = append(bopts, bridge.WithAllowedSchemes(o.schemes...))
	}
	c.bridge = bridge.New(bopts...)
	c.m, c.metricsErr = newMetrics(o.metrics, c)
	return c
}

// Launch resolves the config's inputs, starts every enabled MCP server and
// returns at once: each server comes up on its own, and its tools, windows
// and documents are announced with server:update_tool_list,
// server:update_desktop and server:update_finder when it is ready
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#updates-and-notifications). A server that fails or
// never initialises is logged (WARN with the reason) and retried with
// backoff in the background, holding nothing else. A long-running Computer
// launches and joins its office at once (Connect). An input that cannot be
// resolved is an error (*protocol.Error 400 naming it).
func (c *Computer) Launch(ctx context.Context) error {
	c.mu.Lock()
	if c.started || c.closed {
		c.mu.Unlock()
		return protocol.NewInternal("computer already started or closed")
	}
	c.started = true
	c.mu.Unlock()
	if c.metricsErr != nil {
		return c.metricsErr
	}
	servers, err := c.config().Resolve(ctx, c.resolveOptions()...)
	if err != nil {
		return err
	}
	k, err := c.openCaps()
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		k.close()
		return protocol.NewInternal("computer closed")
	}
	c.caps = k
	c.mu.Unlock()
	refused := c.refusedServers()
	servers = slices.DeleteFunc(servers, func(s protocol.MCPServerConfig) bool { return refused[s.Name()] != nil })
	for _, name := range slices.Sorted(maps.Keys(refused)) {
		c.log.Error("MCP server refused: not started", "server", name, "err", refused[name].Message)
	}
	mopts := append([]mcpclient.Option{mcpclient.WithLogger(c.log), mcpclient.WithSpool(k.spool), mcpclient.WithHooks(mcpclient.Hooks{
		Up: c.serverUp, Notification: c.serverNotification, Down: c.serverDown,
	})}, c.o.manager...)
	m := mcpclient.NewManager(servers, mopts...)
	c.mu.Lock()
	c.manager = m
	c.mu.Unlock()
	return m.Launch()
}

// Ready waits until every MCP server has made its first attempt and, when
// it came up, its tools, windows and documents are aggregated. It fails
// when ctx ends first (408 wrapping ctx.Err()), when the configuration
// refused a server (400 naming each, wrapping config.BundleClash's error:
// its bundle_id is another server's, which keeps it; Launch logged it and
// did not start it), and when a server's first
// attempt failed — its command does not exist, it exited, it did not
// answer initialize, its URL refused: a 503 naming each such server, with
// their reasons in its details ("servers") and wrapping their errors (a
// *mcpclient.ServerError each, so errors.Is(err, exec.ErrNotFound) holds
// for a missing command). The Computer keeps running either way: the
// servers that came up serve, the others are retried in the background
// (Status shows them).
func (c *Computer) Ready(ctx context.Context) error {
	m := c.Manager()
	if m == nil {
		return protocol.NewInternal("computer not started")
	}
	if err := m.Ready(ctx); err != nil {
		return protocol.Errorf(protocol.CodeTimeout, "MCP servers still starting: %v", err).Wrap(err)
	}
	// The Finder builds its catalog beside the servers' event goroutines.
	if err := c.finder.Wait(ctx); err != nil {
		return err
	}
	if refused := c.refusedServers(); len(refused) > 0 {
		names := slices.Sorted(maps.Keys(refused))
		causes := make([]error, len(names))
		msgs := make([]string, len(names))
		for i, n := range names {
			causes[i], msgs[i] = refused[n], refused[n].Message
		}
		return protocol.NewBadRequest("MCP servers refused by the configuration: %s; the others serve", strings.Join(msgs, "; ")).
			With("servers", names).Wrap(causes...)
	}
	down := m.Down()
	if len(down) == 0 {
		return nil
	}
	names := make([]string, len(down))
	reasons := map[string]any{}
	causes := make([]error, len(down))
	for i, d := range down {
		names[i] = fmt.Sprintf("%s (%v)", d.Name, d.Err)
		reasons[d.Name] = d.Err.Error()
		causes[i] = d
	}
	return protocol.Errorf(protocol.CodeUnavailable, "MCP servers not up: %s; retrying in the background", strings.Join(names, "; ")).
		With("servers", reasons).Wrap(causes...)
}

// Start is Launch then Ready, for one-shot use (list the tools, the
// desktop or the Finder, then Close). Its error is Launch's or Ready's: a
// server that did not come up fails Start (503) while the others serve.
func (c *Computer) Start(ctx context.Context) error {
	if err := c.Launch(ctx); err != nil {
		return err
	}
	return c.Ready(ctx)
}

// Connect joins office on the Server at serverURL as name and starts
// answering its requests in the session's generation (sio.Client.Generation),
// or, on an smcp-go Server, in the generation of the Agent that made each
// (protocol.CallerVersionMember).
// To a Server that did not confirm it is smcp-go (a reference Server) the
// answers are kept within protocol.ReferenceMaxMessageBytes: the tool list
// shares that budget, and any other answer over it is refused with 413.
// Options: sio.WithAPIKey and friends.
func (c *Computer) Connect(ctx context.Context, serverURL, office, name string, opts ...sio.Option) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return protocol.NewInternal("computer closed")
	}
	if c.client != nil {
		c.mu.Unlock()
		return protocol.NewBadRequest("computer already connected")
	}
	c.mu.Unlock()
	cl, err := sio.Dial(ctx, serverURL, office, name, handler{c}, append([]sio.Option{sio.WithLogger(c.log)}, opts...)...)
	if err != nil {
		return err
	}
	changed := false
	if !cl.Confirmed() {
		// A reference Server closes a connection whose message exceeds
		// its limit: the tool list shares that smaller budget (other
		// answers over it are refused with 413 by the Client).
		limit := c.o.maxPayload
		if limit <= 0 || limit > protocol.ReferenceMaxMessageBytes {
			limit = protocol.ReferenceMaxMessageBytes
		}
		changed = c.tools.SetMaxListBytes(limit)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cl.Close()
		return protocol.NewInternal("computer closed")
	}
	c.client = cl
	c.mu.Unlock()
	if changed {
		c.notify(protocol.EventUpdateToolList)
	}
	return nil
}

// Close leaves the office and stops every MCP server (child processes
// reaped), waiting at most until ctx ends. Safe to call twice.
func (c *Computer) Close(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	cl, m, k := c.client, c.manager, c.caps
	c.mu.Unlock()
	if cl != nil {
		cl.Close()
	}
	var err error
	if m != nil {
		err = m.Close(ctx)
	}
	c.finder.Close()
	c.desktop.Close()
	if cerr := k.close(); err == nil {
		err = cerr
	}
	return err
}

// notify emits a server:update_* event while connected.
func (c *Computer) notify(event string) {
	c.m.refreshed(event)
	c.mu.Lock()
	cl := c.client
	c.mu.Unlock()
	if cl != nil && cl.Notify(event) {
		c.log.Debug("update emitted", "event", event)
	}
}

// serverUp aggregates a connection that came up, on the server's own event
// goroutine: its tools first (announced at once), then its windows and
// readable resources, while its documents are read in the background (the
// Finder takes the server's notifications meanwhile: a slow or hanging
// document never holds them). A slow Desktop build holds only this
// server's later notifications, never the join nor another server.
//
// A server that declares no resources capability serves tools only: the
// Finder, the Desktop and the read bridge leave it out (a debug line says
// so), instead of asking it for resources it said it does not have and
// logging the refusals as failures.
func (c *Computer) serverUp(ctx context.Context, conn *mcpclient.Conn) {
	c.refreshTools(ctx, conn)
	if conn.Capabilities().Resources == nil {
		c.log.Debug("MCP server declares no resources: tools only, no documents or windows", "server", conn.Name())
		return
	}
	own := ownReads(ctx)
	build := c.finder.StartSource(own, conn)
	go func() {
		select {
		case <-build.Done():
			if err := build.Err(); err != nil && ctx.Err() == nil {
				c.log.Warn("aggregating an MCP server failed", "server", conn.Name(), "err", err)
			}
			// Its skills (skill:// resources) are listed once its
			// documents are, not competing with their first reads.
			c.refreshSkills()
		case <-ctx.Done():
		}
	}()
	var wg sync.WaitGroup
	for _, add := range []func(context.Context) error{
		func(context.Context) error { return c.desktop.AddSource(own, conn) },
		func(ctx context.Context) error { return c.bridge.AddSource(ctx, conn) },
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := add(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("aggregating an MCP server failed", "server", conn.Name(), "err", err)
			}
		}()
	}
	wg.Wait()
}

// ownReads marks the context of the Computer's own catalog reads (Finder,
// Desktop): one that times out is abandoned without notifications/cancelled.
// Those reads have no effect to undo, and some MCP servers die when a read
// is cancelled; a slow document would then restart its server at every
// catalog build.
func ownReads(ctx context.Context) context.Context { return mcpclient.WithoutCancelNotice(ctx) }

func (c *Computer) refreshTools(ctx context.Context, conn *mcpclient.Conn) {
	var list []mcp.Tool
	if conn.Capabilities().Tools != nil {
		var err error
		if list, err = conn.ListTools(ctx); err != nil {
			if ctx.Err() == nil {
				c.log.Warn("listing tools failed", "server", conn.Name(), "err", err)
			}
			return
		}
	}
	base := conn.Config().Base()
	base.BundleID = c.bundleOf(conn.Name())
	if c.tools.SetServer(conn.Name(), base, conn, list) {
		c.notify(protocol.EventUpdateToolList)
	}
}

// serverNotification routes an MCP notification (on the server's own event
// goroutine, never on mcp-go's read loop).
func (c *Computer) serverNotification(ctx context.Context, conn *mcpclient.Conn, n mcp.JSONRPCNotification) {
	name := conn.Name()
	switch n.Method {
	case string(mcp.MethodNotificationToolsListChanged):
		c.refreshTools(ctx, conn)
	case string(mcp.MethodNotificationResourcesListChanged):
		c.refreshSkills()
		own := ownReads(ctx)
		var wg sync.WaitGroup
		for _, f := range []func(){
			func() { c.finder.ResourceListChanged(own, name) },
			func() { c.desktop.ResourceListChanged(own, name) },
			func() { c.bridge.ResourceListChanged(ctx, name) },
		} {
			wg.Add(1)
			go func() { defer wg.Done(); f() }()
		}
		wg.Wait()
	case string(mcp.MethodNotificationResourceUpdated):
		uri, _ := n.Params.AdditionalFields["uri"].(string)
		if uri == "" {
			return
		}
		c.finder.ResourceUpdated(ownReads(ctx), name, uri)
		c.desktop.ResourceUpdated(ownReads(ctx), name, uri)
	}
}

// serverDown withdraws what a lost (or stopped) connection provided.
func (c *Computer) serverDown(name string, err error) {
	if err != nil { // the supervisor's WARN said why
		c.log.Info("withdrawing the tools, windows and documents of a lost MCP server", "server", name)
	}
	if c.tools.RemoveServer(name) {
		c.notify(protocol.EventUpdateToolList)
	}
	c.finder.RemoveSource(name)
	c.desktop.RemoveSource(name)
	c.refreshSkills()
	if err != nil {
		// Lost, not stopped: the manager reconnects, and until then reads
		// of its documents answer 503 rather than 4201.
		c.bridge.SourceDown(name, err)
	} else {
		c.bridge.RemoveSource(name)
	}
}

// Tools is the tool list published to a session of generation g
// (client:get_tools): bare names in 0.2.0, exposed names with bundle_id
// from 0.3.0 on (package tools).
func (c *Computer) Tools(g protocol.Generation) []protocol.SMCPTool { return c.tools.List(g) }

// CallTool runs one client:tool_call of a session of generation g: it takes
// an exposed name, or a bare one that a single server publishes, in every
// generation, and writes the result's meta, cancel and timeout markers in
// g's form (package tools). From 0.3.0 on, binary content items above the
// inline budget are moved to the blob spool, as the references do
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/capabilities.md#blobs).
// A call that asked for progress relays the MCP server's (progress.go).
func (c *Computer) CallTool(ctx context.Context, g protocol.Generation, req protocol.ToolCallReq) protocol.CallToolResult {
	ctx, flush := c.withProgress(ctx, req.Progress, req.Agent, req.ReqID)
	res := c.tools.Call(ctx, g, req)
	flush()
	c.mint(g, &res)
	c.m.toolCall(res)
	return res
}

// History is the bounded tool-call history, oldest first.
func (c *Computer) History() []tools.Record { return c.tools.History() }

// Desktop is the organised desktop (client:get_desktop), the same for
// every generation (desktop.Organize); size nil means all windows, window
// "" means every window.
func (c *Computer) Desktop(ctx context.Context, size *int, window string) ([]string, error) {
	return c.desktop.Get(ctx, size, window, c.tools.HistoryServers())
}

// Finder answers a client:get_finder query from the cache.
func (c *Computer) Finder(req protocol.GetFinderReq) protocol.GetFinderRet {
	return c.finder.Query(req, c.tools.HistoryServers())
}

// Documents is the whole Finder cache.
func (c *Computer) Documents() []protocol.DPEDocumentSummary { return c.finder.Documents() }

// ReadResource reads a dpe:// or window:// resource through the bridge
// (client:read_resource, an extension of this project).
func (c *Computer) ReadResource(ctx context.Context, uri string) ([]protocol.ResourceContents, error) {
	return c.bridge.Read(ctx, uri)
}

// Config is the configuration as written, placeholders kept, as
// client:get_config answers it to a session of generation g (config.Ret).
func (c *Computer) Config(g protocol.Generation) protocol.GetComputerConfigRet {
	return c.config().Ret(g)
}

func (c *Computer) config() *config.Config {
	c.cfgMu.Lock()
	defer c.cfgMu.Unlock()
	return c.cfg
}

// setConfig installs cfg and its bundle ids; the caller holds cfgMu or
// owns c.
func (c *Computer) setConfig(cfg *config.Config) {
	c.cfg = cfg
	c.bundles, c.refused = cfg.BundleIDs()
}

// bundleOf is the bundle_id of the server named name.
func (c *Computer) bundleOf(name string) string {
	c.cfgMu.Lock()
	defer c.cfgMu.Unlock()
	return c.bundles[name]
}

// serverOf is the name of the server whose bundle_id is id.
func (c *Computer) serverOf(id string) (string, bool) {
	c.cfgMu.Lock()
	defer c.cfgMu.Unlock()
	for name, b := range c.bundles {
		if b == id {
			return name, true
		}
	}
	return "", false
}

func (c *Computer) refusedServers() map[string]*protocol.Error {
	c.cfgMu.Lock()
	defer c.cfgMu.Unlock()
	return c.refused
}

func (c *Computer) resolveOptions() []config.ResolveOption {
	return append([]config.ResolveOption{config.WithLogger(c.log)}, c.o.resolve...)
}

// PutServer adds an MCP server config, or replaces the one with the same
// name (restarting it), after validating it and resolving its ${input:ID}
// placeholders against the config's inputs; a config whose bundle_id
// (explicit or derived) another server has is refused (400,
// config.BundleClash). Then it announces
// server:update_config (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#updates-and-notifications). Call it
// after Start.
func (c *Computer) PutServer(ctx context.Context, s protocol.MCPServerConfig) error {
	m := c.Manager()
	if m == nil {
		return protocol.NewInternal("computer not started")
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return protocol.NewBadRequest("server config: %v", err)
	}
	if s, err = config.ParseServer(raw); err != nil {
		return err
	}
	cur := c.config()
	id, err := protocol.ResolveBundleID(s)
	if err != nil {
		return protocol.AsError(err).With("server", s.Name())
	}
	for _, o := range cur.Servers {
		if o.Name() == s.Name() {
			continue
		}
		if c.bundleOf(o.Name()) == id {
			err := config.BundleClash(s.Name(), id, o.Name())
			c.log.Error("MCP server refused", "server", s.Name(), "err", err.Message)
			return err
		}
	}
	resolved, err := (&config.Config{Servers: []protocol.MCPServerConfig{s}, Inputs: cur.Inputs}).Resolve(ctx, c.resolveOptions()...)
	if err != nil {
		return err
	}
	if err := m.Put(ctx, resolved[0]); err != nil {
		return err
	}
	c.cfgMu.Lock()
	next := c.cfg.Clone()
	next.Put(s)
	c.setConfig(next)
	c.cfgMu.Unlock()
	c.notify(protocol.EventUpdateConfig)
	return nil
}

// RemoveServer stops an MCP server and drops it from the config, then
// announces server:update_config.
func (c *Computer) RemoveServer(ctx context.Context, name string) error {
	m := c.Manager()
	if m == nil {
		return protocol.NewInternal("computer not started")
	}
	if err := m.Remove(ctx, name); err != nil {
		return err
	}
	c.cfgMu.Lock()
	next := c.cfg.Clone()
	next.Remove(name)
	c.setConfig(next)
	c.cfgMu.Unlock()
	c.notify(protocol.EventUpdateConfig)
	return nil
}

// Status snapshots the MCP servers.
func (c *Computer) Status() []mcpclient.Status {
	c.mu.Lock()
	m := c.manager
	c.mu.Unlock()
	if m == nil {
		return nil
	}
	return m.Status()
}

// Manager is the MCP manager (nil before Start).
func (c *Computer) Manager() *mcpclient.Manager {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.manager
}

// Client is the Socket.IO client (nil before Connect).
func (c *Computer) Client() *sio.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.client
}

// handler answers the Server's requests (sio.Handler) for a Computer.
type handler struct{ c *Computer }

var _ sio.Handler = handler{}

// list is s, or an empty list when s is nil: every list an answer carries
// is required by its schema, and encoding/json writes a nil slice as null
// (a Computer has no tools, windows or documents until its MCP servers are
// up, and it joins its office before they are).
func list[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (h handler) GetTools(_ context.Context, g protocol.Generation, req protocol.GetToolsReq) (protocol.GetToolsRet, error) {
	return protocol.GetToolsRet{Tools: list(h.c.Tools(g)), ReqID: req.ReqID}, nil
}

func (h handler) ToolCall(ctx context.Context, g protocol.Generation, req protocol.ToolCallReq) protocol.CallToolResult {
	return h.c.CallTool(ctx, g, req)
}

func (h handler) GetConfig(_ context.Context, g protocol.Generation, _ protocol.GetComputerConfigReq) (protocol.GetComputerConfigRet, error) {
	return h.c.Config(g), nil
}

func (h handler) GetDesktop(ctx context.Context, _ protocol.Generation, req protocol.GetDesktopReq) (protocol.GetDesktopRet, error) {
	d, err := h.c.Desktop(ctx, req.DesktopSize, req.Window)
	if err != nil {
		return protocol.GetDesktopRet{}, err
	}
	return protocol.GetDesktopRet{Desktops: list(d), ReqID: req.ReqID}, nil
}

func (h handler) GetFinder(_ context.Context, _ protocol.Generation, req protocol.GetFinderReq) (protocol.GetFinderRet, error) {
	ret := h.c.Finder(req)
	ret.Documents = list(ret.Documents)
	return ret, nil
}

func (h handler) ReadResource(ctx context.Context, _ protocol.Generation, req protocol.ReadResourceReq) (protocol.ReadResourceRet, error) {
	started := time.Now()
	// A read that asked for progress relays the MCP server's (progress.go).
	ctx, flush := h.c.withProgress(ctx, req.Progress, req.Agent, req.ReqID)
	contents, err := h.c.ReadResource(ctx, req.URI)
	flush()
	h.c.m.read(started, err)
	if err != nil {
		return protocol.ReadResourceRet{}, protocol.AsError(err)
	}
	return protocol.ReadResourceRet{Contents: list(contents), ReqID: req.ReqID}, nil
}

func (h handler) CancelToolCall(req protocol.CancelToolCallReq) {
	if h.c.tools.Cancel(req.ReqID) {
		h.c.log.Info("tool call cancelled", "req_id", req.ReqID, "agent", req.Agent)
	}
}
