package agent

import (
	"log/slog"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// Default values of the options.
const (
	// DefaultName is the Agent name used without WithName.
	DefaultName = "smcp-agent"
	// DefaultTimeout bounds every request without a context deadline. It is
	// a little longer than the Server's default forwarding timeout (30 s),
	// so that the Server's own 408 answer normally arrives first.
	DefaultTimeout = 35 * time.Second
	// DefaultToolTimeout is the tool timeout CallTool sends when given none.
	DefaultToolTimeout = 60 * time.Second
	// ToolCallGrace is how long CallTool waits beyond the tool timeout it
	// sent before it gives up, sends server:tool_call_cancel and returns a
	// timeout result: the Computer enforces the timeout itself and answers
	// its own 4004 result, which normally wins.
	ToolCallGrace = 2 * time.Second
	// FinderRefreshLimit is the catalog page size fetched after
	// notify:update_finder (the protocol's maximum).
	FinderRefreshLimit = 100
)

// Option configures Dial.
type Option func(*config)

type config struct {
	apiKey     string
	name       string
	logger     *slog.Logger
	timeout    time.Duration
	transport  string
	maxMessage int64 // 0: sio's default
	gens       []protocol.Generation
	hooks      hooks
}

// hooks are the user's notification callbacks. Every one runs on a
// goroutine owned by the Client, never on the Socket.IO event queue, so it
// may call the Client (the Socket.IO client runs all events and acks of a connection on one queue).
type hooks struct {
	notification  func(Notification)
	enterOffice   func(protocol.EnterOfficeNotification)
	leaveOffice   func(protocol.LeaveOfficeNotification)
	toolsChanged  func(computer string, tools []protocol.SMCPTool)
	configChanged func(computer string, cfg *protocol.GetComputerConfigRet)
	desktop       func(computer string, desktops []string)
	finder        func(computer string, catalog *protocol.GetFinderRet)
	cancel        func(protocol.CancelToolCallReq)
	reconnect     func(err error)
}

// WithAPIKey sets the API key, sent as the HTTP header x-api-key and as the
// Socket.IO auth payload members token (0.3/0.4 Servers) and api_key (0.2)
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#connection-and-auth).
func WithAPIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// WithGenerations sets the protocol generations the Agent speaks, the first
// named in the handshake (default every generation, newest first); a Server
// that refuses it gets one retry with the newest of the others it accepts.
// One generation pins it. Client.Generation is what the session speaks
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#versions-and-negotiation).
func WithGenerations(gens ...protocol.Generation) Option {
	return func(c *config) { c.gens = append([]protocol.Generation(nil), gens...) }
}

// WithName sets the Agent name: it is registered by the Server when the
// Agent joins an office and sent as the agent field of every request.
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithTimeout sets the default per-request timeout, used when the context
// has no earlier deadline (default DefaultTimeout).
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithPolling makes the client start with HTTP long-polling and upgrade to
// a websocket where it can, instead of using the websocket transport only:
// for proxies that refuse websockets, behind which it stays on
// long-polling. Prefer the default where websockets pass: the Go
// Socket.IO client's pause of the poll for the upgrade has a race of its
// own (https://github.com/a2c-smcp/smcp-go/blob/main/spec/decisions.md#socketio-library-defects-and-what-we-do-about-them).
func WithPolling() Option { return func(c *config) { c.transport = "polling" } }

// WithMaxMessageBytes bounds one message the Client reads from the Server
// (default sio.DefaultMaxMessageBytes, the Server's default payload limit
// plus framing); a larger one closes the connection, which is then
// re-established, instead of being held in memory. Raise it with the
// Server's payload limit.
func WithMaxMessageBytes(n int64) Option { return func(c *config) { c.maxMessage = n } }

// OnNotification registers a callback for every valid notify:* event, after
// the Client has updated its own state for it.
func OnNotification(fn func(Notification)) Option {
	return func(c *config) { c.hooks.notification = fn }
}

// OnEnterOffice registers a callback for notify:enter_office. The Client
// also fetches the tools of an entering Computer into its tool cache
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md, Offices, recommends it); OnToolsChanged reports them.
func OnEnterOffice(fn func(protocol.EnterOfficeNotification)) Option {
	return func(c *config) { c.hooks.enterOffice = fn }
}

// OnLeaveOffice registers a callback for notify:leave_office. The Client
// drops a leaving Computer's tools from its cache.
func OnLeaveOffice(fn func(protocol.LeaveOfficeNotification)) Option {
	return func(c *config) { c.hooks.leaveOffice = fn }
}

// OnToolsChanged registers a callback run after a Computer's tools were
// (re)fetched into the tool cache — on notify:enter_office,
// notify:update_tool_list, notify:update_config and after joining an office
// — and with nil tools when the Computer left.
func OnToolsChanged(fn func(computer string, tools []protocol.SMCPTool)) Option {
	return func(c *config) { c.hooks.toolsChanged = fn }
}

// OnConfigChanged registers a callback for notify:update_config: the
// Client re-fetches the Computer's configuration and hands it over.
func OnConfigChanged(fn func(computer string, cfg *protocol.GetComputerConfigRet)) Option {
	return func(c *config) { c.hooks.configChanged = fn }
}

// OnDesktopChanged registers a callback for notify:update_desktop: the
// Client re-fetches the Computer's whole desktop and hands it over.
func OnDesktopChanged(fn func(computer string, desktops []string)) Option {
	return func(c *config) { c.hooks.desktop = fn }
}

// OnFinderChanged registers a callback for notify:update_finder: the Client
// re-fetches the Computer's document catalog (client:get_finder, first
// FinderRefreshLimit documents; total_count tells whether there are more)
// and hands it over, as https://github.com/a2c-smcp/smcp-go/blob/main/spec/finder.md (Update mechanism) recommends.
func OnFinderChanged(fn func(computer string, catalog *protocol.GetFinderRet)) Option {
	return func(c *config) { c.hooks.finder = fn }
}

// OnToolCallCancel registers a callback for notify:tool_call_cancel.
func OnToolCallCancel(fn func(protocol.CancelToolCallReq)) Option {
	return func(c *config) { c.hooks.cancel = fn }
}

// OnReconnect registers a callback run after the connection came back and
// the Client tried to rejoin its office; err is nil when it rejoined (or had
// no office to rejoin).
func OnReconnect(fn func(err error)) Option {
	return func(c *config) { c.hooks.reconnect = fn }
}
