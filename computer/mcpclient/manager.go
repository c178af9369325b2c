package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/blob"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
)

// Hooks receive a server's events, in order, on that server's own event
// goroutine (see the package documentation). Any may be nil.
type Hooks struct {
	// Up: a connection is ready. ctx ends when it is lost.
	Up func(ctx context.Context, c *Conn)
	// Notification: the server sent a notification on connection c.
	Notification func(ctx context.Context, c *Conn, n mcp.JSONRPCNotification)
	// Down: the connection reported by the last Up ended; err is nil when
	// it was stopped on request.
	Down func(name string, err error)
	// Resync: the server sent notifications faster than the hooks took
	// them and some were dropped (see the package documentation): what
	// they announced is unknown, so everything the connection provides
	// must be read again, as at Up. Nil: Up is called again instead.
	Resync func(ctx context.Context, c *Conn)
}

// State of a supervised server.
type State string

// States.
const (
	StateStarting State = "starting" // connecting (first time or after a failure)
	StateUp       State = "up"
	StateDown     State = "down" // waiting for the next attempt
	StateStopped  State = "stopped"
	StateDisabled State = "disabled"
)

// Status is a snapshot of one server.
type Status struct {
	Name     string
	Type     string
	State    State
	Err      string // last failure, if any
	Restarts int    // connections made after the first
	PID      int    // stdio child of the current connection
}

// Option configures a Manager.
type Option func(*Manager)

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(m *Manager) { m.opts.log = l } }

// WithHooks sets the event hooks.
func WithHooks(h Hooks) Option { return func(m *Manager) { m.hooks = h } }

// WithBackoff sets the first and the longest wait between attempts.
func WithBackoff(min, max time.Duration) Option {
	return func(m *Manager) { m.backoffMin, m.backoffMax = min, max }
}

// WithHealthCheck sets how often a connection is pinged and how long a
// ping may take (defaults 250 ms and 5 s).
func WithHealthCheck(interval, timeout time.Duration) Option {
	return func(m *Manager) { m.opts.healthInterval, m.opts.healthTimeout = interval, timeout }
}

// WithTimeouts sets the initialize timeout and the default timeout of the
// Computer's own requests, used when a server config sets none (defaults
// 30 s both).
func WithTimeouts(connect, request time.Duration) Option {
	return func(m *Manager) { m.opts.connectTimeout, m.opts.reqTimeout = connect, request }
}

// WithMaxMessageBytes bounds one message a server sends (default
// DefaultMaxMessageBytes): a stdio line, an HTTP answer's body, or one event
// of an event stream. A longer stdio message is never held in memory: it is
// dropped, and when it is an answer its request fails with a JSON-RPC error
// 413 instead. Over HTTP the read stops at the bound and the request fails
// with a 413 *protocol.Error (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#limits); on the legacy
// HTTP+SSE transport this also ends the event stream, so the connection. n ≤
// 0 keeps the default.
func WithMaxMessageBytes(n int) Option {
	return func(m *Manager) {
		if n > 0 {
			m.opts.maxMessage = n
		}
	}
}

// WithSpool makes the binary items of a server's tool results
// (result.content[i].data, result.content[i].resource.blob) larger than the
// spool's inline budget (and 256 KiB) go straight to s as they are read,
// decoded from base64 without the message ever being held whole; the
// answer mcp-go reads carries in their place a value blob.Spool.Mint turns
// into each item's sideband (spec/capabilities.md, Blobs). Such items do
// not count against WithMaxMessageBytes: each is bounded by the spool's
// mint cap and room instead, and one beyond them fails the call with 413
// naming the bound. Over HTTP this holds for a JSON answer and for each
// data line of an event stream. Without it, an answer is bounded by
// WithMaxMessageBytes whole.
func WithSpool(s *blob.Spool) Option { return func(m *Manager) { m.opts.spool = s } }

// WithClientInfo sets the clientInfo sent at initialize.
func WithClientInfo(name, version string) Option {
	return func(m *Manager) { m.opts.clientName, m.opts.clientVersion = name, version }
}

// Manager supervises the MCP servers of one Computer.
type Manager struct {
	opts                   dialOptions
	hooks                  Hooks
	backoffMin, backoffMax time.Duration
	stableAfter            time.Duration

	mu      sync.Mutex
	configs map[string]protocol.MCPServerConfig
	order   []string
	sups    map[string]*supervisor
	closed  bool
}

// NewManager returns a manager for the given (resolved) server configs;
// nothing starts before Start.
func NewManager(servers []protocol.MCPServerConfig, opts ...Option) *Manager {
	m := &Manager{
		opts: dialOptions{log: slog.Default(), clientName: "smcp-go-computer", clientVersion: "0.2.0",
			connectTimeout: 30 * time.Second, reqTimeout: 30 * time.Second,
			healthInterval: 250 * time.Millisecond, healthTimeout: 5 * time.Second},
		backoffMin: 200 * time.Millisecond, backoffMax: 30 * time.Second, stableAfter: 10 * time.Second,
		configs: map[string]protocol.MCPServerConfig{}, sups: map[string]*supervisor{},
	}
	for _, o := range opts {
		o(m)
	}
	for _, s := range servers {
		if _, dup := m.configs[s.Name()]; !dup {
			m.order = append(m.order, s.Name())
		}
		m.configs[s.Name()] = s
	}
	return m
}

// Launch starts every enabled server and returns at once: each server
// connects on its own, its Up hook runs when it is ready, and a server that
// fails keeps retrying with backoff without holding the others.
func (m *Manager) Launch() error {
	for _, name := range m.Names() {
		if m.configs[name].Base().Disabled {
			continue
		}
		if _, err := m.startServer(name); err != nil {
			return err
		}
	}
	return nil
}

// Ready waits until every running server has made its first connection
// attempt since it was started (failed, or succeeded and its Up hook
// returned), or ctx ends.
func (m *Manager) Ready(ctx context.Context) error {
	m.mu.Lock()
	firsts := make([]<-chan struct{}, 0, len(m.sups))
	for _, s := range m.sups {
		firsts = append(firsts, s.first)
	}
	m.mu.Unlock()
	for _, f := range firsts {
		select {
		case <-f:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// ServerError is a server that is not up, with its last failure.
type ServerError struct {
	Name string
	Err  error
}

func (e *ServerError) Error() string { return fmt.Sprintf("mcp server %s: %v", e.Name, e.Err) }
func (e *ServerError) Unwrap() error { return e.Err }

// Down returns the running servers that are down — their last attempt
// failed, or their connection was lost, and they are waiting to try
// again — in config order, each with its last failure. After Ready, it
// lists the servers whose first attempt failed.
func (m *Manager) Down() []*ServerError {
	var out []*ServerError
	for _, name := range m.Names() {
		m.mu.Lock()
		s := m.sups[name]
		m.mu.Unlock()
		if s == nil {
			continue
		}
		s.mu.Lock()
		if s.state == StateDown && s.lastErr != nil {
			out = append(out, &ServerError{Name: name, Err: s.lastErr})
		}
		s.mu.Unlock()
	}
	return out
}

// Start is Launch then Ready: convenient for one-shot use (list the tools
// and exit). A long-running Computer launches and joins its office at once
// instead (see computer.Computer.Launch).
func (m *Manager) Start(ctx context.Context) error {
	if err := m.Launch(); err != nil {
		return err
	}
	return m.Ready(ctx)
}

// Names lists the configured servers in config order.
func (m *Manager) Names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.order...)
}

// StartServer starts (or restarts the supervision of) one server, disabled
// or not, without waiting for it.
func (m *Manager) StartServer(name string) error {
	_, err := m.startServer(name)
	return err
}

func (m *Manager) startServer(name string) (*supervisor, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, protocol.NewInternal("mcp manager closed")
	}
	cfg, ok := m.configs[name]
	if !ok {
		return nil, protocol.NewNotFound("mcp server %q is not configured", name).With("server", name)
	}
	if s := m.sups[name]; s != nil && !s.stopped() {
		return s, nil
	}
	s := newSupervisor(m, cfg)
	m.sups[name] = s
	go s.run()
	return s, nil
}

// StopServer stops one server and waits until its child has exited and
// its Down hook has run (or ctx ends).
func (m *Manager) StopServer(ctx context.Context, name string) error {
	m.mu.Lock()
	s := m.sups[name]
	m.mu.Unlock()
	if s == nil {
		return nil
	}
	return s.stop(ctx)
}

// Restart stops a server and starts it again at once.
func (m *Manager) Restart(ctx context.Context, name string) error {
	if err := m.StopServer(ctx, name); err != nil {
		return err
	}
	return m.StartServer(name)
}

// Conn is the server's current connection, or nil when it is not up.
func (m *Manager) Conn(name string) *Conn {
	m.mu.Lock()
	s := m.sups[name]
	m.mu.Unlock()
	if s == nil {
		return nil
	}
	return s.current()
}

// Conns are the current connections, by server name.
func (m *Manager) Conns() []*Conn {
	var out []*Conn
	for _, n := range m.Names() {
		if c := m.Conn(n); c != nil {
			out = append(out, c)
		}
	}
	return out
}

// Config is the (resolved) config of a server.
func (m *Manager) Config(name string) (protocol.MCPServerConfig, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.configs[name]
	return c, ok
}

// Status snapshots every configured server, sorted by name.
func (m *Manager) Status() []Status {
	var out []Status
	for _, n := range m.Names() {
		cfg, _ := m.Config(n)
		st := Status{Name: n, Type: cfg.Type(), State: StateStopped}
		if cfg.Base().Disabled {
			st.State = StateDisabled
		}
		m.mu.Lock()
		s := m.sups[n]
		m.mu.Unlock()
		if s != nil {
			s.mu.Lock()
			if !s.isStopped {
				st.State = s.state
			}
			if s.lastErr != nil {
				st.Err = s.lastErr.Error()
			}
			st.Restarts = s.restarts
			if s.conn != nil {
				st.PID = s.conn.PID()
			}
			s.mu.Unlock()
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Close stops every server in parallel and waits for all of them (child
// processes reaped, Down hooks run) or for ctx.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	sups := make([]*supervisor, 0, len(m.sups))
	for _, s := range m.sups {
		sups = append(sups, s)
	}
	m.mu.Unlock()
	errs := make(chan error, len(sups))
	for _, s := range sups {
		go func() { errs <- s.stop(ctx) }()
	}
	var first error
	for range sups {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// supervisor runs one server: connect, watch, reconnect with backoff.
type supervisor struct {
	m    *Manager
	cfg  protocol.MCPServerConfig
	name string
	log  *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // run and the event goroutine have returned
	first  chan struct{} // closed after the first attempt
	q      *queue

	mu        sync.Mutex
	conn      *Conn
	state     State
	lastErr   error
	restarts  int
	isStopped bool
}

func newSupervisor(m *Manager, cfg protocol.MCPServerConfig) *supervisor {
	s := &supervisor{m: m, cfg: cfg, name: cfg.Name(), log: m.opts.log.With("server", cfg.Name()),
		done: make(chan struct{}), first: make(chan struct{}), q: newQueue(), state: StateStarting}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

func (s *supervisor) current() *Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

func (s *supervisor) stopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.isStopped
}

func (s *supervisor) stop(ctx context.Context) error {
	s.mu.Lock()
	s.isStopped = true
	s.mu.Unlock()
	s.cancel()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *supervisor) setState(st State, err error) {
	s.mu.Lock()
	s.state = st
	if err != nil {
		s.lastErr = err
	}
	s.mu.Unlock()
}

func (s *supervisor) run() {
	events := make(chan struct{})
	go func() { defer close(events); s.dispatch() }()
	defer func() {
		s.q.close()
		<-events
		s.setState(StateStopped, nil)
		close(s.done)
	}()
	o := s.m.opts
	o.log = s.log
	// first is closed once the first attempt failed or its Up hook returned.
	firstOnce := sync.OnceFunc(func() { close(s.first) })
	defer firstOnce()
	wait := s.m.backoffMin
	for attempt := 0; ; attempt++ {
		if s.ctx.Err() != nil {
			return
		}
		s.setState(StateStarting, nil)
		conn, err := dial(s.ctx, s.cfg, o)
		if err != nil {
			if s.ctx.Err() != nil {
				firstOnce()
				return
			}
			// Down before first: Ready's callers read the failure.
			s.setState(StateDown, err)
			firstOnce()
			s.log.Warn("mcp server failed to start", append([]any{"err", err, "retry_in", wait}, processAttrs(err)...)...)
			if !s.sleep(wait) {
				return
			}
			wait = s.next(wait)
			continue
		}
		s.mu.Lock()
		s.conn = conn
		s.state = StateUp
		if attempt > 0 {
			s.restarts++
		}
		s.mu.Unlock()
		s.log.Info("mcp server up", "pid", conn.PID(), "subscribe", conn.SupportsSubscribe())
		conn.client.OnNotification(func(n mcp.JSONRPCNotification) {
			if n.Method == string(mcp.MethodNotificationProgress) {
				return // the call that asked for it takes it (progress.go)
			}
			s.q.push(event{kind: evNotify, conn: conn, n: n}) // never blocks the read loop
		})
		s.q.push(event{kind: evUp, conn: conn, done: firstOnce})
		upAt := time.Now()
		select {
		case <-conn.Lost():
		case <-s.ctx.Done():
		}
		lostErr := conn.LostErr()
		conn.close()
		s.mu.Lock()
		s.conn = nil
		s.mu.Unlock()
		s.q.push(event{kind: evDown, conn: conn, err: lostErr})
		if s.ctx.Err() != nil {
			s.log.Info("mcp server stopped")
			return
		}
		upFor := time.Since(upAt)
		if upFor >= s.m.stableAfter {
			wait = s.m.backoffMin // a stable run: start the backoff over
		}
		s.log.Warn("mcp server lost", append([]any{"err", lostErr, "up_for", upFor.Round(time.Millisecond), "retry_in", wait},
			processAttrs(lostErr)...)...)
		s.setState(StateDown, lostErr)
		if !s.sleep(wait) {
			return
		}
		wait = s.next(wait)
	}
}

// processAttrs are the log attributes of what a stdio child left: its exit
// status and its last stderr lines.
func processAttrs(err error) []any {
	var pe *ProcessError
	if !errors.As(err, &pe) {
		return nil
	}
	var out []any
	if pe.Status != "" {
		out = append(out, "exit", pe.Status)
	}
	if len(pe.Stderr) > 0 {
		out = append(out, "stderr", strings.Join(pe.Stderr, "\n"))
	}
	return out
}

func (s *supervisor) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// next doubles the wait up to the maximum, with ±20 % jitter so that
// servers that failed together do not retry together.
func (s *supervisor) next(d time.Duration) time.Duration {
	d *= 2
	if d > s.m.backoffMax {
		d = s.m.backoffMax
	}
	j := time.Duration(float64(d) * (rand.Float64()*0.4 - 0.2))
	return d + j
}

// dispatch delivers events to the hooks, in order, until the queue is
// closed and drained.
func (s *supervisor) dispatch() {
	h := s.m.hooks
	var live *Conn // connection of the last Up not yet followed by Down
	for {
		e, ok := s.q.pop()
		if !ok {
			return
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					s.log.Error("mcp event hook panicked", "panic", r)
				}
			}()
			switch e.kind {
			case evUp:
				live = e.conn
				if e.done != nil {
					defer e.done()
				}
				if h.Up != nil {
					h.Up(e.conn.ctx, e.conn)
				}
			case evNotify:
				if e.conn != live || e.conn.ctx.Err() != nil {
					return // a late notification of a lost connection
				}
				if h.Notification != nil {
					h.Notification(e.conn.ctx, e.conn, e.n)
				}
			case evResync:
				if e.conn != live || e.conn.ctx.Err() != nil {
					return
				}
				s.log.Warn("mcp server sent more notifications than were taken; some were dropped and everything it provides is read again",
					"dropped", e.dropped, "pending_limit", maxPendingNotifications)
				switch {
				case h.Resync != nil:
					h.Resync(e.conn.ctx, e.conn)
				case h.Up != nil:
					h.Up(e.conn.ctx, e.conn)
				}
			case evDown:
				if e.conn != live {
					return
				}
				live = nil
				if h.Down != nil {
					h.Down(s.name, e.err)
				}
			}
		}()
	}
}

type evKind int

const (
	evUp evKind = iota
	evNotify
	evDown
	evResync // notifications of conn were dropped
)

// Bounds of the notifications pending for one server (see queue).
const (
	maxPendingNotifications = 1024
	maxPendingBytes         = 8 << 20
)

type event struct {
	kind evKind
	conn *Conn
	n    mcp.JSONRPCNotification
	err  error
	done func() // called after the hook returned

	key     string // n as JSON: its coalescing key and its size; set by push
	dropped int    // evResync: notifications dropped
}

// queue is a FIFO that never blocks its producer; a notification identical
// to one still pending is dropped. The notifications pending are bounded
// (maxPendingNotifications, maxPendingBytes): the first one over the bound
// is replaced by one evResync event and every later one is dropped until
// that event is taken (a full re-read covers them all), so that a server
// flooding notifications costs bounded memory and at most one re-read per
// backlog (spec/finder.md, Update mechanism).
type queue struct {
	mu      sync.Mutex
	items   []event
	pending map[string]int
	count   int   // notifications pending
	bytes   int   // their size
	resync  *Conn // the connection of the evResync pending, if any
	dropped int   // notifications dropped since it was queued
	signal  chan struct{}
	closed  bool
}

func newQueue() *queue {
	return &queue{pending: map[string]int{}, signal: make(chan struct{}, 1)}
}

func notifKey(e event) string {
	b, err := json.Marshal(e.n)
	if err != nil {
		return ""
	}
	return string(b)
}

func (q *queue) push(e event) {
	q.mu.Lock()
	if q.closed && e.kind == evNotify {
		q.mu.Unlock()
		return
	}
	if e.kind == evNotify {
		k := notifKey(e)
		e.key = k
		switch {
		case q.resync != nil && q.resync == e.conn:
			q.dropped++ // the pending re-read covers it
			q.mu.Unlock()
			return
		case k != "" && q.pending[k] > 0:
			q.mu.Unlock()
			return
		case q.count >= maxPendingNotifications || q.bytes+len(e.key) > maxPendingBytes:
			e = event{kind: evResync, conn: e.conn}
			q.resync, q.dropped = e.conn, 1
		case k != "":
			q.pending[k]++
			fallthrough
		default:
			q.count++
			q.bytes += len(e.key)
		}
	}
	q.items = append(q.items, e)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// pop waits for the next event; false once closed and drained.
func (q *queue) pop() (event, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			e := q.items[0]
			q.items[0] = event{}
			q.items = q.items[1:]
			switch e.kind {
			case evNotify:
				q.count--
				q.bytes -= len(e.key)
				if k := e.key; k != "" {
					if q.pending[k]--; q.pending[k] <= 0 {
						delete(q.pending, k)
					}
				}
			case evResync:
				if q.resync == e.conn {
					e.dropped = q.dropped
					q.resync, q.dropped = nil, 0
				}
			}
			q.mu.Unlock()
			return e, true
		}
		if q.closed {
			q.mu.Unlock()
			return event{}, false
		}
		q.mu.Unlock()
		<-q.signal
	}
}

// pendingNotifications is the number and size of the notifications queued.
func (q *queue) pendingNotifications() (n, bytes int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.count, q.bytes
}

// Put adds a server config or replaces the one with the same name: a
// running server of that name is stopped first (its Down hook runs), and
// the new config is started unless it is disabled.
func (m *Manager) Put(ctx context.Context, cfg protocol.MCPServerConfig) error {
	name := cfg.Name()
	if err := m.StopServer(ctx, name); err != nil {
		return err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return protocol.NewInternal("mcp manager closed")
	}
	if _, ok := m.configs[name]; !ok {
		m.order = append(m.order, name)
	}
	m.configs[name] = cfg
	delete(m.sups, name)
	m.mu.Unlock()
	if cfg.Base().Disabled {
		return nil
	}
	return m.StartServer(name)
}

// Remove stops a server and forgets its config.
func (m *Manager) Remove(ctx context.Context, name string) error {
	if err := m.StopServer(ctx, name); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.configs[name]; !ok {
		return protocol.NewNotFound("mcp server %q is not configured", name).With("server", name)
	}
	delete(m.configs, name)
	delete(m.sups, name)
	for i, n := range m.order {
		if n == name {
			m.order = append(m.order[:i], m.order[i+1:]...)
			break
		}
	}
	return nil
}
