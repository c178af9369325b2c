package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	client "github.com/a2c-smcp/smcp-go/sio/third_party/socketioclient"
	"github.com/a2c-smcp/smcp-go/sio/third_party/types"
	"github.com/stretchr/testify/require"
	"github.com/zishang520/socket.io/servers/socket/v3"
)

// wait bounds every network wait of the tests; generous for a loaded 2-core
// machine.
const wait = 15 * time.Second

// testKey is the API key of servers started by startServer.
const testKey = "test-key-0123456789"

type testServer struct {
	srv *server.Server
	url string
}

// startServer runs a Server accepting testKey on a loopback httptest server.
func startServer(t testing.TB, opts ...server.Option) *testServer {
	t.Helper()
	return startServerAuth(t, append([]server.Option{server.WithAPIKeys(testKey)}, opts...)...)
}

// startServerAuth is startServer with opts as given (they choose the
// authentication).
func startServerAuth(t testing.TB, opts ...server.Option) *testServer {
	t.Helper()
	opts = append([]server.Option{server.WithLogger(testLogger(t))}, opts...)
	srv, err := server.New(opts...)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/socket.io/", srv.Handler())
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		_ = srv.Close(ctx)
		hs.Close()
	})
	return &testServer{srv: srv, url: hs.URL}
}

type dialOpts struct {
	auth    map[string]any
	headers http.Header
	noKey   bool
	polling bool
	nsp     string // default /smcp
	version string // a2c_version of the handshake; "" names none
}

// peer is a Go Socket.IO client on /smcp that records every event it
// receives, per event name.
type peer struct {
	t    testing.TB
	sock *client.Socket
	mu   sync.Mutex
	got  map[string]chan []any
}

func (p *peer) ch(ev string) chan []any {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.got[ev]
	if c == nil {
		c = make(chan []any, 1024)
		p.got[ev] = c
	}
	return c
}

// connect dials /smcp, retrying attempts lost to races of the Go Socket.IO
// client library (seen about once in a few hundred connects under -race on
// loopback; the server library's own races are prevented by engine.go):
//   - client v3.0.1 subscribes to the engine's "open" event after starting
//     the engine, so the open can be missed and the attempt times out;
//   - client v3.0.1 Socket.Connect can run its onopen twice (the manager
//     opens between the subscription and the state check), sending two
//     namespace CONNECTs; the server closes such a connection ("invalid
//     state"), so an attempt is only kept after a round trip succeeds.
//
// Refusals (connect_error with data) are returned at once.
func connect(t testing.TB, url string, o dialOpts) (*peer, error) {
	t.Helper()
	var err error
	for range 5 {
		var p *peer
		p, err = connectOnce(t, url, o)
		if err == nil || !errors.Is(err, errConnectLost) {
			return p, err
		}
		t.Logf("connect attempt lost (%v); retrying", err)
	}
	return nil, err
}

var errConnectLost = errors.New("connect attempt lost")

func connectOnce(t testing.TB, url string, o dialOpts) (*peer, error) {
	co := client.DefaultOptions()
	if o.polling {
		co.SetTransports(types.NewSet(client.Polling))
	} else {
		co.SetTransports(types.NewSet(client.WebSocket))
	}
	co.SetForceNew(true)
	co.SetReconnection(false)
	co.SetTimeout(3 * time.Second)
	co.SetAutoConnect(false)
	auth := o.auth
	headers := o.headers
	if headers == nil {
		headers = http.Header{}
	}
	if !o.noKey && auth == nil && len(headers) == 0 {
		headers.Set("X-Api-Key", testKey)
	}
	if auth != nil {
		co.SetAuth(auth)
	}
	co.SetExtraHeaders(headers)
	nsp := o.nsp
	if nsp == "" {
		nsp = protocol.Namespace
	}
	target := url + nsp
	if o.version != "" {
		target += "?" + protocol.VersionParam + "=" + o.version
	}
	sock, err := client.Connect(target, co)
	if err != nil {
		return nil, err
	}
	p := &peer{t: t, sock: sock, got: map[string]chan []any{}}
	sock.OnAny(func(args ...any) {
		if ev, ok := args[0].(string); ok {
			p.ch(ev) <- args[1:]
		}
	})
	result := make(chan error, 1)
	sock.Once("connect", func(...any) { result <- nil })
	sock.Once("connect_error", func(args ...any) {
		err, _ := args[0].(error)
		if err == nil {
			err = fmt.Errorf("connect_error %v", args)
		}
		result <- err
	})
	sock.Connect()
	select {
	case err := <-result:
		if err != nil {
			sock.Disconnect()
			if err.Error() == "timeout" {
				return nil, fmt.Errorf("%w: engine open timed out", errConnectLost)
			}
			return nil, err
		}
	case <-time.After(5 * time.Second):
		sock.Disconnect()
		return nil, fmt.Errorf("%w: no namespace connect within 5s", errConnectLost)
	}
	if o.polling {
		// The Go client v3.0.1 never POSTs over polling once a long-poll
		// is pending: no round trip is possible (see TestCloseWithPollingClient).
		t.Cleanup(func() { sock.Disconnect() })
		return p, nil
	}
	pong := make(chan error, 1)
	_ = sock.Emit("test:ping", map[string]any{}, socket.Ack(func(_ []any, err error) { pong <- err }))
	select {
	case err := <-pong:
		if err != nil {
			sock.Disconnect()
			return nil, fmt.Errorf("%w: closed after connect (%v)", errConnectLost, err)
		}
	case <-time.After(5 * time.Second):
		sock.Disconnect()
		return nil, fmt.Errorf("%w: no round trip within 5s", errConnectLost)
	}
	t.Cleanup(func() { sock.Disconnect() })
	return p, nil
}

func dial(t testing.TB, url string) *peer {
	t.Helper()
	p, err := connect(t, url, dialOpts{})
	require.NoError(t, err)
	return p
}

// call emits ev with an ack and returns the ack values.
func (p *peer) call(ev string, args ...any) []any {
	p.t.Helper()
	got := make(chan []any, 1)
	ack := socket.Ack(func(vals []any, err error) {
		if err != nil {
			got <- []any{err}
			return
		}
		got <- vals
	})
	require.NoError(p.t, p.sock.Emit(ev, append(args, ack)...))
	select {
	case v := <-got:
		return v
	case <-time.After(wait):
		p.t.Fatalf("no ack for %s within %v", ev, wait)
		return nil
	}
}

func (p *peer) emit(ev string, args ...any) {
	p.t.Helper()
	require.NoError(p.t, p.sock.Emit(ev, args...))
}

// join sends server:join_office and returns both ack values.
func (p *peer) join(role protocol.Role, name, office string) (bool, any) {
	p.t.Helper()
	vals := p.call(protocol.EventJoinOffice, map[string]any{"role": string(role), "name": name, "office_id": office})
	require.Len(p.t, vals, 2, "join_office answers two values: %v", vals)
	ok, isBool := vals[0].(bool)
	require.True(p.t, isBool, "first join value is a bool: %v", vals)
	return ok, vals[1]
}

func (p *peer) mustJoin(role protocol.Role, name, office string) *peer {
	p.t.Helper()
	ok, reason := p.join(role, name, office)
	require.True(p.t, ok, "join %s %s %s: %v", role, name, office, reason)
	require.Nil(p.t, reason)
	return p
}

// next waits for the next event named ev and returns its first argument.
func (p *peer) next(ev string) any {
	p.t.Helper()
	select {
	case args := <-p.ch(ev):
		if len(args) == 0 {
			return nil
		}
		return args[0]
	case <-time.After(wait):
		p.t.Fatalf("no %s within %v", ev, wait)
		return nil
	}
}

// barrier makes a round trip through the server: every event queued for this
// peer before it has been delivered when it returns.
func (p *peer) barrier() {
	p.t.Helper()
	vals := p.call("test:barrier", map[string]any{})
	requireError(p.t, vals, protocol.CodeBadRequest)
}

// noEvent asserts that no ev arrived (after a barrier).
func (p *peer) noEvent(ev string) {
	p.t.Helper()
	p.barrier()
	select {
	case args := <-p.ch(ev):
		p.t.Fatalf("unexpected %s %v", ev, args)
	default:
	}
}

// answer installs a Computer handler for a client:* event.
func (p *peer) answer(ev string, fn func(req map[string]any) []any) {
	_ = p.sock.On(types.EventName(ev), func(args ...any) {
		if len(args) < 2 {
			return
		}
		ack, ok := args[len(args)-1].(socket.Ack)
		if !ok {
			return
		}
		req, _ := args[0].(map[string]any)
		ack(fn(req), nil)
	})
}

// requireError asserts that ack values are one ErrorPayload with code.
func requireError(t testing.TB, vals []any, code protocol.Code) *protocol.Error {
	t.Helper()
	require.Len(t, vals, 1, "one ack value: %v", vals)
	raw, err := json.Marshal(vals[0])
	require.NoError(t, err)
	e, ok := protocol.DecodeErrorPayload(raw)
	require.True(t, ok, "not an error payload: %s", raw)
	require.Equal(t, code, e.Code, "error %s", raw)
	require.NoError(t, protocol.Validate(protocol.EventGetTools, protocol.Ack, raw), "error payload matches its schema")
	return e
}

// requireReason asserts a refused office ack and that its reason starts with
// the code.
func requireReason(t testing.TB, ok bool, reason any, code protocol.Code) string {
	t.Helper()
	require.False(t, ok, "join/leave should be refused")
	s, isStr := reason.(string)
	require.True(t, isStr, "reason is a string: %v", reason)
	require.Regexp(t, fmt.Sprintf(`^%d \w+: `, int(code)), s)
	return s
}

// office builds a typical office: an Agent and Computers with the given
// names, every join checked.
func office(t testing.TB, ts *testServer, id, agent string, computers ...string) (*peer, []*peer) {
	t.Helper()
	var cs []*peer
	for _, name := range computers {
		cs = append(cs, dial(t, ts.url).mustJoin(protocol.RoleComputer, name, id))
	}
	a := dial(t, ts.url).mustJoin(protocol.RoleAgent, agent, id)
	return a, cs
}

func getTools(agent, computer, reqID string) map[string]any {
	return map[string]any{"agent": agent, "computer": computer, "req_id": reqID}
}

// toolsAnswer is a valid GetToolsRet.
func toolsAnswer(req map[string]any) []any {
	return []any{map[string]any{
		"req_id": req["req_id"],
		"tools": []any{map[string]any{
			"name": "echo", "description": "echo", "params_schema": map[string]any{"type": "object"}, "return_schema": nil,
		}},
	}}
}

// testLogger writes the server's log lines to the test log until the test
// ends (lines after that are dropped: background goroutines may still log).
func testLogger(t testing.TB) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	level := slog.LevelInfo
	if os.Getenv("SMCP_TEST_DEBUG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

type testWriter struct {
	t    testing.TB
	mu   sync.Mutex
	done bool
}

func (w *testWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimSpace(string(b)))
	}
	return len(b), nil
}
