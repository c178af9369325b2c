package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testmcp.Cleanup()
	os.Exit(code)
}

func stdioConfig(t testing.TB, name string, args ...string) protocol.MCPServerConfig {
	return protocol.MCPServerConfig{Stdio: &protocol.MCPStdioConfig{Name: name, ForbiddenTools: []string{}, ToolMeta: map[string]protocol.ToolMeta{},
		ServerParameters: protocol.MCPStdioParameters{Command: testmcp.Binary(t), Args: args}}}
}

// startManager starts a Manager of cfgs, closed when the test ends.
func startManager(t *testing.T, cfgs []protocol.MCPServerConfig, opts ...Option) *Manager {
	t.Helper()
	m := NewManager(cfgs, opts...)
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	require.NoError(t, m.Start(context.Background()))
	return m
}

func httpConfig(name, url string) protocol.MCPServerConfig {
	return protocol.MCPServerConfig{Streamable: &protocol.MCPStreamableConfig{Name: name, ForbiddenTools: []string{}, ToolMeta: map[string]protocol.ToolMeta{},
		ServerParameters: protocol.MCPStreamableParameters{URL: url}}}
}

// recorder records hook events with their time.
type recorder struct {
	mu     sync.Mutex
	events []rec
	ch     chan rec
}

type rec struct {
	kind   string // up, down, notify
	server string
	conn   *Conn
	method string
	uri    string
	err    error
	at     time.Time
}

func newRecorder() *recorder { return &recorder{ch: make(chan rec, 1000)} }

func (r *recorder) add(e rec) {
	e.at = time.Now()
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	r.ch <- e
}

func (r *recorder) hooks() Hooks {
	return Hooks{
		Up: func(_ context.Context, c *Conn) { r.add(rec{kind: "up", server: c.Name(), conn: c}) },
		Notification: func(_ context.Context, c *Conn, n mcp.JSONRPCNotification) {
			uri, _ := n.Params.AdditionalFields["uri"].(string)
			r.add(rec{kind: "notify", server: c.Name(), conn: c, method: n.Method, uri: uri})
		},
		Down: func(name string, err error) { r.add(rec{kind: "down", server: name, err: err}) },
	}
}

// wait returns the next event matching f.
func (r *recorder) wait(t *testing.T, f func(rec) bool) rec {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case e := <-r.ch:
			if f(e) {
				return e
			}
		case <-timeout:
			t.Fatal("event not seen")
		}
	}
}

func (r *recorder) count(kind, server string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if e.kind == kind && e.server == server {
			n++
		}
	}
	return n
}

func is(kind, server string) func(rec) bool {
	return func(e rec) bool { return e.kind == kind && e.server == server }
}

func callText(t *testing.T, c *Conn, tool string, args map[string]any) string {
	t.Helper()
	raw, err := c.CallTool(context.Background(), tool, args)
	require.NoError(t, err)
	var res protocol.CallToolResult
	require.NoError(t, json.Unmarshal(raw, &res))
	require.NotEmpty(t, res.Content)
	return *res.Content[0].Text
}

// transports runs f over stdio, HTTP+SSE and streamable HTTP.
func transports(t *testing.T, f func(t *testing.T, cfg func(name string, flags ...string) (protocol.MCPServerConfig, func()))) {
	t.Run("stdio", func(t *testing.T) {
		f(t, func(name string, flags ...string) (protocol.MCPServerConfig, func()) {
			return stdioConfig(t, name, flags...), nil
		})
	})
	t.Run("sse", func(t *testing.T) {
		f(t, func(name string, flags ...string) (protocol.MCPServerConfig, func()) {
			p := testmcp.StartSSE(t, "127.0.0.1:0", flags...)
			addr := strings.TrimSuffix(strings.TrimPrefix(p.URL, "http://"), "/sse")
			return protocol.MCPServerConfig{SSE: &protocol.MCPSSEConfig{Name: name, ForbiddenTools: []string{}, ToolMeta: map[string]protocol.ToolMeta{},
				ServerParameters: protocol.MCPSSEParameters{URL: p.URL}}}, func() { testmcp.StartSSE(t, addr, flags...) }
		})
	})
	t.Run("streamable", func(t *testing.T) {
		f(t, func(name string, flags ...string) (protocol.MCPServerConfig, func()) {
			p := testmcp.StartHTTP(t, "127.0.0.1:0", flags...)
			addr := strings.TrimSuffix(strings.TrimPrefix(p.URL, "http://"), "/mcp")
			return httpConfig(name, p.URL), func() { testmcp.StartHTTP(t, addr, flags...) }
		})
	})
}

func TestConnSource(t *testing.T) {
	transports(t, func(t *testing.T, cfg func(string, ...string) (protocol.MCPServerConfig, func())) {
		r := newRecorder()
		a, _ := cfg("a", "-host", "ha", "-docs", "3")
		m := NewManager([]protocol.MCPServerConfig{a}, WithHooks(r.hooks()))
		defer m.Close(context.Background())
		require.NoError(t, m.Start(context.Background()))
		up := r.wait(t, is("up", "a"))
		c := m.Conn("a")
		require.Same(t, up.conn, c)
		assert.True(t, c.SupportsSubscribe())

		res, err := c.ListResources(context.Background())
		require.NoError(t, err)
		var uris []string
		for _, x := range res {
			uris = append(uris, x.URI)
		}
		assert.ElementsMatch(t, []string{"dpe://ha/doc-1", "dpe://ha/doc-2", "dpe://ha/doc-3", "window://ha/main?priority=50", "window://ha/log?priority=10"}, uris)
		tpls, err := c.ListResourceTemplates(context.Background())
		require.NoError(t, err)
		require.Len(t, tpls, 1)

		contents, err := c.ReadResource(context.Background(), "dpe://ha/doc-2")
		require.NoError(t, err)
		require.Len(t, contents, 1)
		var d protocol.DPEDocument
		require.NoError(t, json.Unmarshal([]byte(contents[0].(mcp.TextResourceContents).Text), &d))
		assert.Equal(t, "doc-2", d.DocRef)

		// A JSON-RPC error keeps code, message and data.
		_, err = c.ReadResource(context.Background(), "dpe://ha/doc-2/pages/7")
		var rpc *mcpsource.RPCError
		require.ErrorAs(t, err, &rpc)
		assert.Equal(t, mcp.INTERNAL_ERROR, rpc.Code)
		pe, ok := protocol.DecodeMCPErrorMessage(rpc.Message)
		require.True(t, ok, rpc.Message)
		assert.Equal(t, protocol.CodePageOutOfRange, pe.Code)
		_, err = c.ReadResource(context.Background(), "window://ha/none")
		require.ErrorAs(t, err, &rpc)

		require.NoError(t, c.Subscribe(context.Background(), "dpe://ha/doc-1"))
		tools, err := c.ListTools(context.Background())
		require.NoError(t, err)
		assert.Len(t, tools, len(testmcp.AllTools))
		assert.Equal(t, "hi", callText(t, c, "echo", map[string]any{"text": "hi"}))

		// Notifications arrive in order through the hook.
		assert.Equal(t, "ok", callText(t, c, "mutate", map[string]any{"action": "update_doc", "id": "doc-1"}))
		n := r.wait(t, is("notify", "a"))
		assert.Equal(t, string(mcp.MethodNotificationResourceUpdated), n.method)
		assert.Equal(t, "dpe://ha/doc-1", n.uri)
		callText(t, c, "mutate", map[string]any{"action": "add_doc", "id": "new"})
		n = r.wait(t, is("notify", "a"))
		assert.Equal(t, string(mcp.MethodNotificationResourcesListChanged), n.method)
	})
}

func TestToolCallCancelAndRPCError(t *testing.T) {
	transports(t, func(t *testing.T, cfg func(string, ...string) (protocol.MCPServerConfig, func())) {
		a, _ := cfg("a")
		m := startManager(t, []protocol.MCPServerConfig{a})
		c := m.Conn("a")
		require.NotNil(t, c)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := c.CallTool(ctx, "slow", map[string]any{"seconds": 30})
		require.ErrorIs(t, err, context.DeadlineExceeded, "the context's deadline ends the call, not the tool")
		_, err = c.CallTool(context.Background(), "fail", map[string]any{"mode": "rpc"})
		var rpc *mcpsource.RPCError
		require.ErrorAs(t, err, &rpc)
		assert.Contains(t, rpc.Message, "fail tool")
		// The connection is still healthy.
		assert.Equal(t, "x", callText(t, c, "echo", map[string]any{"text": "x"}))
		assert.Same(t, c, m.Conn("a"))
	})
}

func TestCrashDetectedRestartedOthersUnaffected(t *testing.T) {
	transports(t, func(t *testing.T, cfg func(string, ...string) (protocol.MCPServerConfig, func())) {
		r := newRecorder()
		a, restartA := cfg("a", "-host", "ha")
		b, _ := cfg("b", "-host", "hb")
		m := NewManager([]protocol.MCPServerConfig{a, b}, WithHooks(r.hooks()), WithBackoff(100*time.Millisecond, time.Second))
		defer m.Close(context.Background())
		require.NoError(t, m.Start(context.Background()))
		ca, cb := m.Conn("a"), m.Conn("b")
		require.NotNil(t, ca)
		require.NotNil(t, cb)
		pidB := cb.PID()

		crashAt := time.Now()
		_, err := ca.CallTool(context.Background(), "crash", map[string]any{"code": 3})
		require.Error(t, err, "the process died before answering")
		down := r.wait(t, is("down", "a"))
		require.Error(t, down.err)
		t.Logf("crash noticed after %v: %v", down.at.Sub(crashAt), down.err)
		assert.Less(t, down.at.Sub(crashAt), time.Second, "a crash is noticed within 1 s")
		if ca.PID() > 0 {
			assert.False(t, processAlive(ca.PID()), "crashed child reaped")
		}

		if restartA != nil { // HTTP: nothing listens until the server comes back
			require.Eventually(t, func() bool {
				for _, s := range m.Status() {
					if s.Name == "a" {
						return s.State == StateDown && s.Err != ""
					}
				}
				return false
			}, 10*time.Second, 20*time.Millisecond)
			restartA()
		}
		up := r.wait(t, is("up", "a"))
		assert.NotSame(t, ca, up.conn)
		assert.Equal(t, "y", callText(t, up.conn, "echo", map[string]any{"text": "y"}))
		for _, s := range m.Status() {
			if s.Name == "a" {
				assert.Equal(t, StateUp, s.State)
				assert.GreaterOrEqual(t, s.Restarts, 1)
			}
		}

		// b never noticed.
		assert.Same(t, cb, m.Conn("b"))
		assert.Equal(t, pidB, m.Conn("b").PID())
		assert.Equal(t, 0, r.count("down", "b"))
		assert.Equal(t, 1, r.count("up", "b"))
		assert.Equal(t, "z", callText(t, cb, "echo", map[string]any{"text": "z"}))
	})
}

func TestSlowHookNeverBlocksReadLoop(t *testing.T) {
	release, blocked := make(chan struct{}), make(chan struct{})
	var once sync.Once
	notified := 0
	var mu sync.Mutex
	h := Hooks{Notification: func(context.Context, *Conn, mcp.JSONRPCNotification) {
		once.Do(func() { close(blocked) })
		<-release
		mu.Lock()
		notified++
		mu.Unlock()
	}}
	m := NewManager([]protocol.MCPServerConfig{stdioConfig(t, "a")}, WithHooks(h))
	releaseAll := closeAfterRelease(t, m, release)
	require.NoError(t, m.Start(context.Background()))
	c := m.Conn("a")
	callText(t, c, "mutate", map[string]any{"action": "list_changed"})
	select { // the hook is now blocked
	case <-blocked:
	case <-time.After(time.Minute):
		t.Fatal("no notification reached the hook")
	}
	for i := 0; i < 20; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := c.CallTool(ctx, "mutate", map[string]any{"action": "update_doc", "id": "doc-" + strconv.Itoa(i%2+1)})
		cancel()
		require.NoError(t, err, "calls keep working while a hook blocks")
	}
	releaseAll()
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return notified >= 3 // the first, then the two coalesced updates
	}, 2*time.Minute, 10*time.Millisecond)
	mu.Lock()
	assert.LessOrEqual(t, notified, 21)
	mu.Unlock()
}

// closeAfterRelease has m closed, with a deadline, when t ends, after
// release (which hooks of the test wait on) is closed: a failure before the
// test releases them must not leave Close waiting for a hook. The test
// calls the returned function to release them itself.
func closeAfterRelease(t *testing.T, m *Manager, release chan struct{}) func() {
	var once sync.Once
	releaseAll := func() { once.Do(func() { close(release) }) }
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		assert.NoError(t, m.Close(ctx))
	})
	t.Cleanup(releaseAll) // runs first
	return releaseAll
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func TestCloseLeavesNoChildren(t *testing.T) {
	before := runtime.NumGoroutine()
	r := newRecorder()
	m := NewManager([]protocol.MCPServerConfig{stdioConfig(t, "a"), stdioConfig(t, "b"), stdioConfig(t, "c")}, WithHooks(r.hooks()))
	require.NoError(t, m.Start(context.Background()))
	var pids []int
	for _, s := range m.Status() {
		require.Equal(t, StateUp, s.State, s.Name)
		require.NotZero(t, s.PID)
		pids = append(pids, s.PID)
		assert.True(t, processAlive(s.PID))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, m.Close(ctx))
	for _, pid := range pids {
		assert.False(t, processAlive(pid), "child %d gone after Close", pid)
	}
	for _, n := range []string{"a", "b", "c"} {
		assert.Equal(t, 1, r.count("down", n), "Down hook ran for %s", n)
	}
	for _, s := range m.Status() {
		assert.Equal(t, StateStopped, s.State)
	}
	require.Eventually(t, func() bool { return runtime.NumGoroutine() <= before+2 }, 10*time.Second, 20*time.Millisecond,
		"goroutines leaked: before %d, now %d", before, runtime.NumGoroutine())
}

func TestStartFailureRetriesWithBackoff(t *testing.T) {
	r := newRecorder()
	bad := protocol.MCPServerConfig{Stdio: &protocol.MCPStdioConfig{Name: "bad", ServerParameters: protocol.MCPStdioParameters{Command: "/nonexistent/mcp-server"}}}
	m := NewManager([]protocol.MCPServerConfig{bad, stdioConfig(t, "good")}, WithHooks(r.hooks()), WithBackoff(50*time.Millisecond, 100*time.Millisecond))
	defer m.Close(context.Background())
	require.NoError(t, m.Start(context.Background()))
	assert.NotNil(t, m.Conn("good"))
	assert.Nil(t, m.Conn("bad"))
	st := m.Status()
	require.Equal(t, "bad", st[0].Name)
	assert.Contains(t, []State{StateDown, StateStarting}, st[0].State)
	assert.NotEmpty(t, st[0].Err)
	assert.Equal(t, 0, r.count("up", "bad"))
}

func TestStopAndStartServer(t *testing.T) {
	r := newRecorder()
	m := NewManager([]protocol.MCPServerConfig{stdioConfig(t, "a")}, WithHooks(r.hooks()))
	defer m.Close(context.Background())
	require.NoError(t, m.Start(context.Background()))
	pid := m.Conn("a").PID()
	require.NoError(t, m.StopServer(context.Background(), "a"))
	d := r.wait(t, is("down", "a"))
	assert.NoError(t, d.err, "a requested stop has no error")
	assert.False(t, processAlive(pid))
	assert.Nil(t, m.Conn("a"))
	require.NoError(t, m.StartServer("a"))
	up := r.wait(t, is("up", "a"))
	assert.NotEqual(t, pid, up.conn.PID())
	assert.Error(t, m.StartServer("nope"))
}

// A child killed from outside, with no request in flight, is noticed by
// the stderr pipe (stdio) or the health ping (HTTP).
func TestExternalKillNoticed(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		r := newRecorder()
		m := NewManager([]protocol.MCPServerConfig{stdioConfig(t, "a")}, WithHooks(r.hooks()))
		defer m.Close(context.Background())
		require.NoError(t, m.Start(context.Background()))
		pid := m.Conn("a").PID()
		killedAt := time.Now()
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
		down := r.wait(t, is("down", "a"))
		t.Logf("kill noticed after %v", down.at.Sub(killedAt))
		assert.Less(t, down.at.Sub(killedAt), time.Second)
		r.wait(t, is("up", "a"))
	})
	t.Run("streamable", func(t *testing.T) {
		r := newRecorder()
		p := testmcp.StartHTTP(t, "127.0.0.1:0")
		m := NewManager([]protocol.MCPServerConfig{httpConfig("a", p.URL)}, WithHooks(r.hooks()))
		defer m.Close(context.Background())
		require.NoError(t, m.Start(context.Background()))
		killedAt := time.Now()
		p.Kill()
		down := r.wait(t, is("down", "a"))
		t.Logf("kill noticed after %v: %v", down.at.Sub(killedAt), down.err)
		assert.Less(t, down.at.Sub(killedAt), time.Second)
	})
}

func TestPutAndRemove(t *testing.T) {
	r := newRecorder()
	m := NewManager(nil, WithHooks(r.hooks()))
	defer m.Close(context.Background())
	require.NoError(t, m.Start(context.Background()))
	require.NoError(t, m.Put(context.Background(), stdioConfig(t, "a", "-host", "one")))
	up := r.wait(t, is("up", "a"))
	pid := up.conn.PID()
	require.NoError(t, m.Put(context.Background(), stdioConfig(t, "a", "-host", "two")))
	r.wait(t, is("down", "a"))
	up = r.wait(t, is("up", "a"))
	res, err := up.conn.ListResources(context.Background())
	require.NoError(t, err)
	assert.Contains(t, res[0].URI, "://two/")
	assert.False(t, processAlive(pid))
	require.NoError(t, m.Remove(context.Background(), "a"))
	r.wait(t, is("down", "a"))
	assert.Empty(t, m.Names())
	assert.Error(t, m.Remove(context.Background(), "a"))
}
