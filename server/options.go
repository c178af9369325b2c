package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// Defaults of the options (README.md, Options).
const (
	// DefaultRequestTimeout is how long the Server waits for a Computer's
	// answer to a routed request other than client:tool_call.
	DefaultRequestTimeout = 30 * time.Second
	// DefaultToolCallMargin is added to a client:tool_call's own timeout.
	DefaultToolCallMargin = 5 * time.Second
	// DefaultMaxPayloadBytes bounds one incoming Socket.IO message (one event
	// or one ack). It is protocol.DefaultMaxPayloadBytes, the limit a
	// Computer applies to its answers (spec/protocol.md, Limits).
	DefaultMaxPayloadBytes = protocol.DefaultMaxPayloadBytes
	// DefaultPingInterval and DefaultPingTimeout are the Engine.IO
	// heartbeat: a ping every 20 s, a connection closed when its pong has
	// not come 25 s later. Socket.IO's usual 25 s / 20 s would let a race
	// of servers/engine drop healthy sessions (see WithHeartbeat); a client
	// still notices a dead Server after 45 s.
	DefaultPingInterval = 20 * time.Second
	DefaultPingTimeout  = 25 * time.Second
	// DefaultMaxOutgoingBytes bounds the bytes the Server holds for one
	// connection that its peer has not read yet (twice the payload limit,
	// so that one largest message always fits).
	DefaultMaxOutgoingBytes = 2 * DefaultMaxPayloadBytes
	// DefaultStallTimeout is how long a connection may stay over its
	// outgoing limit before the Server closes it.
	DefaultStallTimeout = 30 * time.Second
	// DefaultMaxInFlight bounds the routed requests one Agent has in flight,
	// and the ones routed to one Computer.
	DefaultMaxInFlight = 64
	// DefaultMaxToolCallTimeout is the largest timeout a client:tool_call may
	// ask for; a larger one is refused with 400.
	DefaultMaxToolCallTimeout = 10 * time.Minute
	// DefaultMaxOfficeSize bounds the members of one office (its Agent and
	// Computers).
	DefaultMaxOfficeSize = 256
	// DefaultMaxAuthFailures is how many refused namespace CONNECTs one
	// connection may make; the last refusal closes it.
	DefaultMaxAuthFailures = 3
	// DefaultConnectTimeout bounds the time from the transport's opening to
	// an admitted /smcp CONNECT; a connection without one is closed.
	DefaultConnectTimeout = 20 * time.Second
	// DefaultMaxConnections bounds the connections one Server holds, joined
	// or not (about 1.5 GB at the idle figure of spec/decisions.md, Idle
	// memory per connection).
	DefaultMaxConnections = 50_000
	// DefaultMaxPendingConnections bounds the connections one Server holds
	// whose /smcp CONNECT is not admitted yet: each may make the Server
	// hold a message of up to 64 KiB and its handshake's headers (at most
	// 32 KiB) for the connect window, about 160 KB in all (spec/decisions.md,
	// Limits against hostile clients), so about 650 MB at this bound.
	DefaultMaxPendingConnections = 4096
	// DefaultPendingShare is the share of WithMaxPendingConnections one
	// client address may hold unless WithMaxPendingPerAddress says
	// otherwise: an eighth (512 at the default bound), so that a client
	// without a key needs eight networks to lock the others out, while a
	// proxy whose clients all share its address still has 512 handshakes
	// in progress at once (spec/decisions.md, Limits against hostile
	// clients).
	DefaultPendingShare = 8
	// DefaultMaxEventRate bounds the office events (join, leave, room
	// listing, cancel) one session may send a second, in bursts of twice
	// as many.
	DefaultMaxEventRate = 32
	// DefaultAPIKeyHeader is the header the default provider reads the API
	// key from (spec/protocol.md, Connection and auth).
	DefaultAPIKeyHeader = "x-api-key"
)

// Option configures a Server; see New.
type Option func(*config) error

type config struct {
	auth            AuthProvider
	apiKeys         []string
	apiKeysSet      bool
	apiKeyHeader    string
	requestTimeout  time.Duration
	toolCallMargin  time.Duration
	logger          *slog.Logger
	maxPayloadBytes int64
	validateAnswers bool
	corsOrigins     []string
	authTimeout     time.Duration
	pingInterval    time.Duration
	pingTimeout     time.Duration
	maxOutgoing     int64
	stallTimeout    time.Duration
	maxInFlight     int
	maxToolTimeout  time.Duration
	maxOfficeSize   int
	maxAuthFailures int
	connectTimeout  time.Duration
	maxConns        int
	maxConnsPerIP   int
	maxPending      int
	maxPendingAddr  int // -1: maxPending / DefaultPendingShare
	clientAddrs     clientAddrs
	maxEventRate    int
	keys            []Key
	metrics         prometheus.Registerer
	redis           *redis.Options // cluster mode (cluster.go)
	nodeLease       time.Duration
	versions        protocol.VersionPolicy // the handshake gate (generation.go)
	// testHook runs at the start of every dispatched event (tests only).
	testHook func(event string)
	// pollingLinger bounds how long a closed connection's long-polling
	// transport keeps its place (pollingLingerBound; shorter in tests).
	pollingLinger time.Duration
}

func defaultConfig() *config {
	return &config{
		apiKeyHeader:    DefaultAPIKeyHeader,
		requestTimeout:  DefaultRequestTimeout,
		toolCallMargin:  DefaultToolCallMargin,
		maxPayloadBytes: DefaultMaxPayloadBytes,
		authTimeout:     10 * time.Second,
		pingInterval:    DefaultPingInterval,
		pingTimeout:     DefaultPingTimeout,
		maxOutgoing:     DefaultMaxOutgoingBytes,
		stallTimeout:    DefaultStallTimeout,
		maxInFlight:     DefaultMaxInFlight,
		maxToolTimeout:  DefaultMaxToolCallTimeout,
		maxOfficeSize:   DefaultMaxOfficeSize,
		maxAuthFailures: DefaultMaxAuthFailures,
		connectTimeout:  DefaultConnectTimeout,
		maxConns:        DefaultMaxConnections,
		maxPending:      DefaultMaxPendingConnections,
		maxPendingAddr:  -1,
		maxEventRate:    DefaultMaxEventRate,
		nodeLease:       DefaultNodeLease,
		pollingLinger:   pollingLingerBound,
	}
}

// WithAuth sets the AuthProvider that admits connections. It excludes
// WithAPIKeys, which configures the default provider.
func WithAuth(p AuthProvider) Option {
	return func(c *config) error {
		if p == nil {
			return errors.New("WithAuth: nil provider")
		}
		c.auth = p
		return nil
	}
}

// WithAPIKeys configures the default provider (APIKeyAuth) with the keys it
// accepts. Empty keys are refused. Without WithAPIKeys or WithAuth, New fails:
// a Server never starts open by accident (use WithAuth(InsecureNoAuth()) to
// accept everyone, for development only).
func WithAPIKeys(keys ...string) Option {
	return func(c *config) error {
		for _, k := range keys {
			if k == "" {
				return errors.New("WithAPIKeys: empty key")
			}
		}
		c.apiKeys = append(c.apiKeys, keys...)
		c.apiKeysSet = true
		return nil
	}
}

// WithKeys configures the default provider (KeyAuth) with scoped keys; it
// combines with WithAPIKeys, whose keys admit any office and role.
func WithKeys(keys ...Key) Option {
	return func(c *config) error {
		c.keys = append(c.keys, keys...)
		return nil
	}
}

// WithAPIKeyHeader changes the header the default provider reads the API key
// from (default "x-api-key"; the auth payload's "api_key" and "token" are
// read too, APIKeyAuth).
func WithAPIKeyHeader(name string) Option {
	return func(c *config) error {
		if name == "" {
			return errors.New("WithAPIKeyHeader: empty header name")
		}
		c.apiKeyHeader = name
		return nil
	}
}

// WithRequestTimeout sets how long a routed request other than
// client:tool_call waits for the Computer's answer before the Agent gets a
// 408 (default 30 s).
func WithRequestTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("WithRequestTimeout: %v is not positive", d)
		}
		c.requestTimeout = d
		return nil
	}
}

// WithToolCallMargin sets what the Server adds to a client:tool_call's own
// timeout before answering 408 (default 5 s), so that the Computer's own
// timeout result arrives first.
func WithToolCallMargin(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("WithToolCallMargin: %v is negative", d)
		}
		c.toolCallMargin = d
		return nil
	}
}

// WithLogger sets the structured logger (default: discard). The Server never
// logs API keys, auth payloads or request bodies.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		c.logger = l
		return nil
	}
}

// WithMaxPayloadBytes bounds one incoming Socket.IO message (default
// protocol.DefaultMaxPayloadBytes, 8 MiB).
// A larger message closes the sender's connection (the engine refuses it);
// every other connection carries on.
func WithMaxPayloadBytes(n int64) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxPayloadBytes: %d is not positive", n)
		}
		c.maxPayloadBytes = n
		return nil
	}
}

// WithValidateAnswers makes the Server validate every Computer answer, as the
// Agent receives it (in the Agent's generation, after what crosses
// generations is translated), against the event's ack schema of the
// Agent's generation before relaying it; an invalid answer becomes a 500
// listing the failing paths. Requests are always validated, against the
// sender's generation.
func WithValidateAnswers(on bool) Option {
	return func(c *config) error {
		c.validateAnswers = on
		return nil
	}
}

// WithCORSOrigins allows browsers on these origins to reach the Socket.IO
// endpoint ("*" allows any). Without it no CORS headers are sent.
func WithCORSOrigins(origins ...string) Option {
	return func(c *config) error {
		c.corsOrigins = append(c.corsOrigins, origins...)
		return nil
	}
}

// WithHeartbeat sets the Engine.IO heartbeat: the Server pings every
// interval and closes a connection whose pong does not come within timeout
// (defaults DefaultPingInterval and DefaultPingTimeout). timeout must
// exceed interval: servers/engine (v3.0.2 to v3.0.5) arms the pong timer
// after writing the ping, so a pong handled in between leaves a timer
// nobody clears; it is harmless only if the next ping, which replaces it,
// comes first (spec/decisions.md, Socket.IO library).
func WithHeartbeat(interval, timeout time.Duration) Option {
	return func(c *config) error {
		if interval <= 0 || timeout <= interval {
			return fmt.Errorf("heartbeat: want 0 < interval < timeout, got interval %v, timeout %v", interval, timeout)
		}
		c.pingInterval, c.pingTimeout = interval, timeout
		return nil
	}
}

// WithMaxOutgoingBytes bounds the bytes the Server holds for one connection
// that its peer has not read yet (default 16 MiB). A session over it is
// congested: requests routed to it, and requests it sends, are refused with
// 503 while it stays over; one that stays over for WithStallTimeout, or
// reaches twice the bound, is closed (spec/protocol.md, Limits).
func WithMaxOutgoingBytes(n int64) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxOutgoingBytes: %d is not positive", n)
		}
		c.maxOutgoing = n
		return nil
	}
}

// WithStallTimeout sets how long a connection may stay over its outgoing
// bound (WithMaxOutgoingBytes) before it is closed (default 30 s).
func WithStallTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("WithStallTimeout: %v is not positive", d)
		}
		c.stallTimeout = d
		return nil
	}
}

// WithMaxInFlight bounds the routed requests one Agent may have in flight,
// and the ones in flight to one Computer (default 64). A request over
// either bound is refused with 429; nothing is queued.
func WithMaxInFlight(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxInFlight: %d is not positive", n)
		}
		c.maxInFlight = n
		return nil
	}
}

// WithMaxToolCallTimeout sets the largest timeout a client:tool_call may ask
// for (default 10 min); a larger one is refused with 400 naming the bound,
// so that no Computer runs a call the Server would not wait for.
func WithMaxToolCallTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("WithMaxToolCallTimeout: %v is not positive", d)
		}
		c.maxToolTimeout = d
		return nil
	}
}

// WithMaxOfficeSize bounds the members (Agent and Computers) of one office
// (default 256); a join over it is refused with 4105.
func WithMaxOfficeSize(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxOfficeSize: %d is not positive", n)
		}
		c.maxOfficeSize = n
		return nil
	}
}

// WithMaxAuthFailures sets how many refused /smcp CONNECTs one connection
// may make (default 3): each gets its connect_error, and the last one also
// closes the connection.
func WithMaxAuthFailures(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxAuthFailures: %d is not positive", n)
		}
		c.maxAuthFailures = n
		return nil
	}
}

// WithConnectTimeout bounds the time between a transport's opening and its
// admitted /smcp CONNECT (default 20 s); a connection that has none by then
// is closed. It also bounds the AuthProvider's run.
func WithConnectTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("WithConnectTimeout: %v is not positive", d)
		}
		c.connectTimeout = d
		return nil
	}
}

// WithMaxConnections bounds the Engine.IO connections the Server holds at
// once, admitted to /smcp or not (default DefaultMaxConnections): a
// handshake beyond it is answered HTTP 503 (spec/protocol.md, Limits).
func WithMaxConnections(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxConnections: %d is not positive", n)
		}
		c.maxConns = n
		return nil
	}
}

// WithMaxConnectionsPerIP bounds the connections the Server holds from one
// client address (default 0: no bound); a handshake beyond it is answered
// HTTP 429. The address is the TCP peer's (an IPv6 client's /64), or the
// one a trusted proxy names (WithTrustedProxies): behind a load balancer
// or a reverse proxy that the Server does not trust, every client has the
// proxy's address, so set the bound there (nginx limit_conn, HAProxy
// src_conn_cur) and leave this one at 0.
func WithMaxConnectionsPerIP(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("WithMaxConnectionsPerIP: %d is negative", n)
		}
		c.maxConnsPerIP = n
		return nil
	}
}

// WithMaxPendingConnections bounds the Engine.IO connections the Server
// holds whose /smcp CONNECT has not been admitted yet (default
// DefaultMaxPendingConnections): a handshake beyond it is answered HTTP 503,
// as one beyond WithMaxConnections is. A connection stops counting once it
// is admitted; until then a client without a key can make the Server hold
// a message of up to 64 KiB on it for the connect window
// (WithConnectTimeout), which this bounds in all (spec/protocol.md, Limits).
func WithMaxPendingConnections(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxPendingConnections: %d is not positive", n)
		}
		c.maxPending = n
		return nil
	}
}

// WithMaxPendingPerAddress bounds the connections awaiting admission
// (WithMaxPendingConnections) that one client address may hold; a
// handshake beyond it is answered HTTP 429. By default it is an eighth of
// WithMaxPendingConnections (DefaultPendingShare): one client without a key
// cannot take every place and lock the others out. 0 removes it. The
// address is the TCP peer's, an IPv6 client's /64 prefix, or the client a
// trusted proxy names (WithTrustedProxies); behind a proxy the Server does
// not trust, all its clients share the proxy's share.
func WithMaxPendingPerAddress(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("WithMaxPendingPerAddress: %d is negative", n)
		}
		c.maxPendingAddr = n
		return nil
	}
}

// WithMaxEventRate bounds the server:join_office, server:leave_office,
// server:list_room and server:tool_call_cancel one session may send: n a
// second, in bursts of 2n (default DefaultMaxEventRate). An event over it
// is answered 429 and has no effect (spec/protocol.md, Limits). The members
// of one office share 4n a second, in bursts of 8n, for what reaches the
// others: joins and cancels over it are answered 429 too, leaves spend from
// it, and update notifications wait for it, folded.
func WithMaxEventRate(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxEventRate: %d is not positive", n)
		}
		c.maxEventRate = n
		return nil
	}
}

// WithProtocolGenerations sets the protocol generations the Server speaks,
// and so accepts in a handshake (default: every generation of
// protocol.Generations(), 0.2.0, 0.3.0 and 0.4.0). A client that names a
// version of another generation in a2c_version is refused with HTTP 400
// and the 4008 body naming the accepted range; one that names none speaks
// 0.2.0, and is refused with 400 when 0.2.0 is not accepted
// (spec/generations.md, Versions and negotiation).
func WithProtocolGenerations(gens ...protocol.Generation) Option {
	return func(c *config) error {
		if len(gens) == 0 {
			return errors.New("WithProtocolGenerations: no generation")
		}
		seen := map[protocol.Generation]bool{}
		for _, g := range gens {
			if !g.Valid() {
				return fmt.Errorf("WithProtocolGenerations: %v is not a generation of this module", g)
			}
			if seen[g] {
				return fmt.Errorf("WithProtocolGenerations: %v given twice", g)
			}
			seen[g] = true
		}
		c.versions.Accept = slices.Clone(gens)
		return nil
	}
}

// WithStrictHandshake makes the handshake gate answer exactly as the 0.4
// reference Servers do: a request under the Socket.IO path that names no
// a2c_version is refused with HTTP 400 {"code":400,"message":"Missing
// a2c_version query parameter"}, instead of speaking 0.2.0 (default off).
// With WithProtocolGenerations(protocol.Gen04) the Server then accepts
// and refuses exactly what a 0.4 reference Server does.
func WithStrictHandshake(on bool) Option {
	return func(c *config) error {
		c.versions.Strict = on
		return nil
	}
}

func (c *config) finish() error {
	if c.auth != nil && (c.apiKeysSet || len(c.keys) > 0) {
		return errors.New("WithAuth excludes WithAPIKeys and WithKeys: they configure the default provider")
	}
	if c.auth == nil {
		if len(c.apiKeys) == 0 && len(c.keys) == 0 {
			return errors.New("no authentication configured: use WithAPIKeys(keys...), WithKeys(keys...) or WithAuth(provider); WithAuth(InsecureNoAuth()) accepts everyone")
		}
		keys := slices.Clone(c.keys)
		for _, k := range c.apiKeys {
			keys = append(keys, Key{Secret: k})
		}
		p, err := KeyAuth(c.apiKeyHeader, keys...)
		if err != nil {
			return err
		}
		c.auth = p
	}
	if c.maxPendingAddr < 0 {
		c.maxPendingAddr = max(1, c.maxPending/DefaultPendingShare)
	}
	if c.authTimeout >= c.connectTimeout {
		c.authTimeout = c.connectTimeout / 2
	}
	if c.logger == nil {
		c.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return nil
}
