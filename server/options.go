package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Defaults of the options (README.md, Options).
const (
	// DefaultRequestTimeout is how long the Server waits for a Computer's
	// answer to a routed request other than client:tool_call.
	DefaultRequestTimeout = 30 * time.Second
	// DefaultToolCallMargin is added to a client:tool_call's own timeout.
	DefaultToolCallMargin = 5 * time.Second
	// DefaultMaxPayloadBytes bounds one incoming Socket.IO message (one event
	// or one ack). A Finder page of 100 documents or a Level-1 document fits
	// well below it.
	DefaultMaxPayloadBytes = 8 << 20
	// DefaultAPIKeyHeader is the header the default provider reads the API
	// key from (PROTOCOL.md, Connection and auth).
	DefaultAPIKeyHeader = "x-api-key"
	// DefaultPingInterval and DefaultPingTimeout are the Engine.IO
	// heartbeat: a ping every 20 s, a connection closed when its pong has
	// not come 25 s later. Socket.IO's usual 25 s / 20 s would let a race
	// of servers/engine drop healthy sessions (see WithHeartbeat); a client
	// still notices a dead Server after 45 s.
	DefaultPingInterval = 20 * time.Second
	DefaultPingTimeout  = 25 * time.Second
	// maxToolCallTimeout caps the request's own timeout so that a huge value
	// cannot overflow a time.Duration.
	maxToolCallTimeout = 24 * time.Hour
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
	// testHook runs at the start of every dispatched event (tests only).
	testHook func(event string)
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

// WithAPIKeyHeader changes the header the default provider reads the API key
// from (default "x-api-key"; the auth payload key "api_key" is read too).
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

// WithMaxPayloadBytes bounds one incoming Socket.IO message (default 8 MiB).
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

// WithValidateAnswers makes the Server validate every Computer answer against
// the event's ack schema before relaying it; an invalid answer becomes a 500
// listing the failing paths. Requests are always validated.
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
// comes first (docs/DECISIONS.md, Socket.IO library).
func WithHeartbeat(interval, timeout time.Duration) Option {
	return func(c *config) error {
		if interval <= 0 || timeout <= interval {
			return fmt.Errorf("heartbeat: want 0 < interval < timeout, got interval %v, timeout %v", interval, timeout)
		}
		c.pingInterval, c.pingTimeout = interval, timeout
		return nil
	}
}

func (c *config) finish() error {
	if c.auth != nil && c.apiKeysSet {
		return errors.New("WithAuth and WithAPIKeys exclude each other")
	}
	if c.auth == nil {
		if !c.apiKeysSet || len(c.apiKeys) == 0 {
			return errors.New("no authentication configured: use WithAPIKeys(keys...) or WithAuth(provider); WithAuth(InsecureNoAuth()) accepts everyone")
		}
		c.auth = APIKeyAuth(c.apiKeyHeader, c.apiKeys...)
	}
	if c.logger == nil {
		c.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return nil
}
