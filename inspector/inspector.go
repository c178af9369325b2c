package inspector

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// DefaultName is the Agent name an Inspector joins under without WithName.
const DefaultName = "smcp-inspector"

// maxCalls bounds the tool calls the page may have running at once.
const maxCalls = 16

// Option configures Dial.
type Option func(*config)

type config struct {
	name      string
	apiKey    string
	login     string
	logger    *slog.Logger
	agentOpts []agent.Option
}

// WithName sets the Agent name the Inspector joins under (DefaultName).
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithAPIKey sets the Server's API key (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#connection-and-auth). It stays in this process: the page never sees it.
func WithAPIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// WithLoginToken makes the page ask for token before anything else: a
// browser proves it once (the login form, or /login?token=...) and gets a
// session cookie. Use it whenever the page is served on an address other
// than loopback. Without it the page answers only requests whose Host is a
// loopback name, so that a web site cannot reach it by DNS rebinding.
func WithLoginToken(token string) Option { return func(c *config) { c.login = token } }

// WithLogger sets the logger of the Inspector and of its agent.Client.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithAgentOptions adds options to the agent.Client the Inspector dials
// (for instance agent.WithTimeout). Its notification hooks are the
// Inspector's own: hooks given here are replaced.
func WithAgentOptions(opts ...agent.Option) Option {
	return func(c *config) { c.agentOpts = append(c.agentOpts, opts...) }
}

// Inspector is one Agent seat in one office and the web page that shows it.
// Create one with Dial, serve Handler, and Close it when done.
type Inspector struct {
	client *agent.Client
	office string
	name   string
	server string
	log    *slog.Logger
	login  string
	csrf   string // the page's same-origin token for state-changing requests
	events *hub

	mu    sync.Mutex
	calls map[string]context.CancelFunc // running tool calls by the page's call id

	closeOnce sync.Once
	closeErr  error
}

// Dial connects to the Server at serverURL as an Agent and joins office.
// When the office already has its Agent (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md, Offices: one
// Agent per office) the error is a *protocol.Error with code 4101
// (RoomFull) that says so.
func Dial(ctx context.Context, serverURL, office string, opts ...Option) (*Inspector, error) {
	cfg := config{name: DefaultName, logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range opts {
		o(&cfg)
	}
	if office == "" {
		return nil, protocol.Errorf(protocol.CodeBadRequest, "no office to join")
	}
	in := &Inspector{
		office: office,
		name:   cfg.name,
		server: serverURL,
		log:    cfg.logger,
		login:  cfg.login,
		csrf:   rand.Text(),
		events: newHub(),
		calls:  map[string]context.CancelFunc{},
	}
	aopts := append([]agent.Option{agent.WithName(cfg.name), agent.WithLogger(cfg.logger)}, cfg.agentOpts...)
	if cfg.apiKey != "" {
		aopts = append(aopts, agent.WithAPIKey(cfg.apiKey))
	}
	aopts = append(aopts,
		agent.OnNotification(in.notified),
		agent.OnReconnect(in.reconnected),
	)
	c, err := agent.Dial(ctx, serverURL, aopts...)
	if err != nil {
		return nil, err
	}
	if err := c.JoinOffice(ctx, office); err != nil {
		_ = c.Close()
		var perr *protocol.Error
		if errors.As(err, &perr) && perr.Code == protocol.CodeRoomFull {
			return nil, &protocol.Error{
				Code:    protocol.CodeRoomFull,
				Message: fmt.Sprintf("office %q already has its Agent: the seat is taken (an office holds one Agent; stop the other one or choose another office)", office),
				Details: perr.Details,
			}
		}
		return nil, err
	}
	in.client = c
	return in, nil
}

// Client returns the agent.Client the Inspector uses.
func (in *Inspector) Client() *agent.Client { return in.client }

// Close cancels the running tool calls, ends the page's event streams and
// closes the Agent's connection.
// Closing twice is harmless.
func (in *Inspector) Close() error {
	in.closeOnce.Do(func() {
		in.mu.Lock()
		for id, cancel := range in.calls {
			cancel()
			delete(in.calls, id)
		}
		in.mu.Unlock()
		in.events.close()
		in.closeErr = in.client.Close()
	})
	return in.closeErr
}

// notified forwards a notify:* event to the page.
func (in *Inspector) notified(n agent.Notification) {
	in.events.publish("notify", n)
}

// reconnected tells the page the Agent's connection came back (err nil) or
// could not rejoin the office.
func (in *Inspector) reconnected(err error) {
	ev := map[string]any{"connected": err == nil}
	if err != nil {
		ev["error"] = errorBody(err)
	}
	in.events.publish("connection", ev)
}

// startCall registers a running tool call under the page's id.
func (in *Inspector) startCall(id string, cancel context.CancelFunc) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if _, dup := in.calls[id]; dup {
		return protocol.Errorf(protocol.CodeBadRequest, "call id %q is already running", id)
	}
	if len(in.calls) >= maxCalls {
		return protocol.Errorf(protocol.CodeTooManyRequests, "%d tool calls are running already", maxCalls)
	}
	in.calls[id] = cancel
	return nil
}

func (in *Inspector) endCall(id string) {
	in.mu.Lock()
	delete(in.calls, id)
	in.mu.Unlock()
}

// cancelCall cancels a running call; false when there is none by that id.
func (in *Inspector) cancelCall(id string) bool {
	in.mu.Lock()
	cancel, ok := in.calls[id]
	in.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}
