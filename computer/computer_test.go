package computer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/internal/siotest"
	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
	"github.com/a2c-smcp/smcp-go/computer/sio"
	"github.com/a2c-smcp/smcp-go/computer/tools"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testmcp.Cleanup()
	os.Exit(code)
}

// twoServers writes a config with "a" over stdio (host ha) and "b" over
// streamable HTTP (host hb), both auto_apply.
func twoServers(t *testing.T) *config.Config {
	bin := testmcp.Binary(t)
	p := testmcp.StartHTTP(t, "127.0.0.1:0", "-host", "hb", "-docs", "3")
	raw := fmt.Sprintf(`{"servers": {
	  "a": {"type": "stdio", "default_tool_meta": {"auto_apply": true}, "tool_meta": {"echo": {"alias": "echo_a"}},
	        "server_parameters": {"command": %q, "args": ["-host", "ha", "-docs", "${input:DOCS}"]}},
	  "b": {"type": "streamable", "default_tool_meta": {"auto_apply": true}, "forbidden_tools": ["pid"],
	        "server_parameters": {"url": %q, "timeout": "PT10S"}}
	}, "inputs": [{"id": "DOCS", "type": "promptString", "description": "docs", "default": "2"}]}`, bin, p.URL)
	cfg, err := config.Parse([]byte(raw))
	require.NoError(t, err)
	return cfg
}

func newComputer(t *testing.T, cfg *config.Config, opts ...Option) *Computer {
	opts = append([]Option{WithInputs(config.WithPrompter(nil)), WithDebounce(20 * time.Millisecond),
		WithManagerOptions(mcpclient.WithBackoff(100*time.Millisecond, time.Second))}, opts...)
	c := New(cfg, opts...)
	t.Cleanup(func() { c.Close(context.Background()) })
	// A safety net, not a timing assumption: every server's first attempt
	// ends by itself (an answer, an exit, the initialize timeout).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	require.NoError(t, c.Start(ctx))
	return c
}

func toolNames(c *Computer) []string {
	var out []string
	for _, t := range c.Tools(protocol.Gen02) {
		out = append(out, t.Name)
	}
	return out
}

func call(c *Computer, tool string, params map[string]any) protocol.CallToolResult {
	return c.CallTool(context.Background(), protocol.Gen02, protocol.ToolCallReq{Agent: "ag", Computer: "pc", ReqID: "r-" + tool, ToolName: tool, Params: params, Timeout: 10})
}

func TestComputerAggregatesStdioAndHTTP(t *testing.T) {
	c := newComputer(t, twoServers(t))

	// Tools: echo aliased on a; the other names clash and are qualified;
	// pid is forbidden on b.
	assert.Equal(t, []string{"a__crash", "a__fail", "a__mutate", "a__slow", "b__crash", "b__fail", "b__mutate", "b__slow", "echo", "echo_a", "pid"}, toolNames(c))
	res := call(c, "echo", map[string]any{"text": "from b"})
	assert.Equal(t, "from b", *res.Content[0].Text)

	// Finder: 2 documents of a, 3 of b.
	ret := c.Finder(protocol.GetFinderReq{ReqID: "f1"})
	assert.Equal(t, 5, ret.TotalCount)
	assert.Equal(t, "f1", ret.ReqID)
	// The history puts b first (it was just used), then a.
	assert.Equal(t, "b", ret.Documents[0].Server)
	call(c, "echo_a", map[string]any{"text": "x"})
	assert.Equal(t, "a", c.Finder(protocol.GetFinderReq{}).Documents[0].Server)

	// Desktop: two windows per server, a first (most recently used).
	d, err := c.Desktop(context.Background(), nil, "")
	require.NoError(t, err)
	require.Len(t, d, 4)
	assert.True(t, strings.HasPrefix(d[0], "window://ha/"), d[0])

	// Read bridge, with errors keeping their codes.
	contents, err := c.ReadResource(context.Background(), "dpe://hb/doc-3")
	require.NoError(t, err)
	require.Len(t, contents, 1)
	assert.Contains(t, *contents[0].Text, `"doc_ref":"doc-3"`)
	_, err = c.ReadResource(context.Background(), "dpe://ha/doc-1/pages/9")
	assert.Equal(t, protocol.CodePageOutOfRange, protocol.CodeOf(err))
	_, err = c.ReadResource(context.Background(), "dpe://nobody/doc-1")
	assert.Equal(t, protocol.CodeDocumentNotFound, protocol.CodeOf(err))
	_, err = c.ReadResource(context.Background(), "dpe://")
	assert.Equal(t, protocol.CodeInvalidDPEURI, protocol.CodeOf(err))

	// Notifications: a document added on b reaches the Finder.
	res = call(c, "b__mutate", map[string]any{"action": "add_doc", "id": "fresh"})
	require.Nil(t, res.IsError)
	require.Eventually(t, func() bool { return c.Finder(protocol.GetFinderReq{}).TotalCount == 6 }, 20*time.Second, 10*time.Millisecond)
	// A tool added on a reaches the tool list.
	call(c, "a__mutate", map[string]any{"action": "add_tool", "id": "extra"})
	require.Eventually(t, func() bool { return strings.Contains(strings.Join(toolNames(c), ","), "extra") }, 20*time.Second, 10*time.Millisecond)

	// The config answered keeps its placeholder.
	b, err := json.Marshal(c.Config(protocol.Gen02))
	require.NoError(t, err)
	assert.Contains(t, string(b), "${input:DOCS}")
	require.NoError(t, protocol.Validate(protocol.EventGetConfig, protocol.Ack, b))
}

func TestComputerWithdrawsCrashedServerAndAnnounces(t *testing.T) {
	srv := siotest.Start(t, "127.0.0.1:0", "key")
	c := newComputer(t, twoServers(t))
	require.NoError(t, c.Connect(context.Background(), srv.URL(), "office-1", "pc", sio.WithAPIKey("key"), sio.WithGenerations(protocol.Gen02)))
	<-srv.Joined
	assert.Equal(t, map[string]any{"role": "computer", "name": "pc", "office_id": "office-1"}, srv.Joins()[0])

	// Requests through the Server get one valid ack value each.
	for _, tc := range []struct {
		event   string
		payload map[string]any
	}{
		{protocol.EventGetTools, map[string]any{}},
		{protocol.EventGetConfig, map[string]any{}},
		{protocol.EventGetDesktop, map[string]any{"desktop_size": 1}},
		{protocol.EventGetFinder, map[string]any{"keywords": []any{"doc-2"}, "limit": 5}},
		{protocol.EventReadResource, map[string]any{"uri": "window://hb/main?priority=50"}},
		{protocol.EventToolCall, map[string]any{"tool_name": "echo_a", "params": map[string]any{"text": "hi"}, "timeout": 5}},
	} {
		p := map[string]any{"agent": "ag", "req_id": "q1", "computer": "pc"}
		for k, v := range tc.payload {
			p[k] = v
		}
		vals := srv.Request(tc.event, p)
		require.Len(t, vals, 1, tc.event)
		b, _ := json.Marshal(vals[0])
		_, isErr := protocol.DecodeErrorPayload(b)
		assert.False(t, isErr, "%s: %s", tc.event, b)
		require.NoError(t, protocol.Validate(tc.event, protocol.Ack, b), "%s: %s", tc.event, b)
	}
	vals := srv.Request(protocol.EventReadResource, map[string]any{"agent": "ag", "req_id": "q2", "computer": "pc", "uri": "dpe://ha/nope"})
	b, _ := json.Marshal(vals[0])
	e, ok := protocol.DecodeErrorPayload(b)
	require.True(t, ok, string(b))
	assert.Equal(t, protocol.CodeDocumentNotFound, e.Code)

	drain := func() {
		for {
			select {
			case <-srv.Events:
			default:
				return
			}
		}
	}
	drain()
	// a crashes: its tools, windows and documents go, with the updates.
	res := call(c, "a__crash", map[string]any{})
	assert.Equal(t, 4003, res.StructuredContent["code"])
	seen := map[string]bool{}
	deadline := time.After(20 * time.Second)
	for !(seen[protocol.EventUpdateToolList] && seen[protocol.EventUpdateFinder] && seen[protocol.EventUpdateDesktop]) {
		select {
		case ev := <-srv.Events:
			seen[ev] = true
		case <-deadline:
			t.Fatalf("updates seen: %v", seen)
		}
	}
	// ...and come back after the restart.
	require.Eventually(t, func() bool {
		return c.Finder(protocol.GetFinderReq{}).TotalCount == 5 && len(c.Tools(protocol.Gen02)) == 11
	}, 20*time.Second, 10*time.Millisecond)

	// notify:tool_call_cancel cancels an in-flight call.
	done := make(chan protocol.CallToolResult, 1)
	go func() {
		done <- c.CallTool(context.Background(), protocol.Gen02, protocol.ToolCallReq{Agent: "ag", ReqID: "long-1", ToolName: "b__slow", Params: map[string]any{"seconds": 60}, Timeout: 120})
	}()
	require.Eventually(t, func() bool {
		srv.Emit(protocol.NotifyCancelToolCall, map[string]any{"agent": "ag", "req_id": "long-1"})
		select {
		case res := <-done:
			assert.Equal(t, 4004, res.StructuredContent["code"])
			return true
		case <-time.After(100 * time.Millisecond):
			return false
		}
	}, 20*time.Second, time.Millisecond)
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func TestCloseStopsEveryChild(t *testing.T) {
	c := newComputer(t, twoServers(t))
	var pids []int
	for _, s := range c.Status() {
		if s.PID > 0 {
			pids = append(pids, s.PID)
		}
	}
	require.Len(t, pids, 1)
	// The pid tool answers the child's own pid.
	res := call(c, "pid", nil)
	require.Nil(t, res.IsError)
	assert.Equal(t, fmt.Sprint(pids[0]), *res.Content[0].Text)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, c.Close(ctx))
	for _, pid := range pids {
		assert.False(t, processAlive(pid))
	}
	assert.NoError(t, c.Close(ctx), "twice")
}

func TestStartFailsOnUnresolvedInput(t *testing.T) {
	cfg, err := config.Parse([]byte(`{"name":"a","type":"stdio","server_parameters":{"command":"x","args":["${input:TOKEN}"]}}`))
	require.NoError(t, err)
	c := New(cfg, WithInputs(config.WithPrompter(nil), config.WithLookupEnv(func(string) (string, bool) { return "", false })))
	err = c.Start(context.Background())
	require.Error(t, err)
	assert.Equal(t, "TOKEN", protocol.AsError(err).Details["input"])
	assert.NoError(t, c.Close(context.Background()))
}

func TestConfirmHook(t *testing.T) {
	cfg, err := config.Parse([]byte(fmt.Sprintf(`{"name":"a","type":"stdio","server_parameters":{"command":%q}}`, testmcp.Binary(t))))
	require.NoError(t, err)
	var asked []tools.ConfirmRequest
	c := newComputer(t, cfg, WithConfirm(func(_ context.Context, r tools.ConfirmRequest) (bool, error) {
		asked = append(asked, r)
		return r.ToolName == "echo", nil
	}))
	assert.Nil(t, call(c, "echo", map[string]any{"text": "ok"}).IsError)
	assert.Equal(t, 4005, call(c, "fail", map[string]any{}).StructuredContent["code"])
	require.Len(t, asked, 2)
	assert.Equal(t, "a", asked[0].Server)
}

func TestPutAndRemoveServerAnnounceConfig(t *testing.T) {
	srv := siotest.Start(t, "127.0.0.1:0", "")
	cfg, err := config.Parse([]byte(`[]`))
	require.NoError(t, err)
	cfg.Inputs = []protocol.MCPServerInput{{PromptString: &protocol.MCPPromptStringInput{ID: "HOST", Default: "added"}}}
	c := newComputer(t, cfg)
	require.NoError(t, c.Connect(context.Background(), srv.URL(), "o", "pc"))
	<-srv.Joined
	next := func(want string) {
		t.Helper()
		for {
			select {
			case ev := <-srv.Events:
				if ev == want {
					return
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("%s not emitted", want)
			}
		}
	}
	s := protocol.MCPServerConfig{Stdio: &protocol.MCPStdioConfig{Name: "n", DefaultToolMeta: &protocol.ToolMeta{AutoApply: ptr(true)},
		ServerParameters: protocol.MCPStdioParameters{Command: testmcp.Binary(t), Args: []string{"-host", "${input:HOST}"}}}}
	require.NoError(t, c.PutServer(context.Background(), s))
	next(protocol.EventUpdateConfig)
	next(protocol.EventUpdateToolList)
	assert.Contains(t, c.Config(protocol.Gen02).Servers, "n")
	assert.Equal(t, "${input:HOST}", c.Config(protocol.Gen02).Servers["n"].Stdio.ServerParameters.Args[1])
	require.Eventually(t, func() bool { return c.Finder(protocol.GetFinderReq{}).TotalCount == 2 }, 20*time.Second, 10*time.Millisecond)
	assert.Equal(t, "dpe://added/doc-2", c.Finder(protocol.GetFinderReq{}).Documents[0].URI)

	bad := protocol.MCPServerConfig{Stdio: &protocol.MCPStdioConfig{Name: "bad", ServerParameters: protocol.MCPStdioParameters{Command: ""}}}
	assert.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(c.PutServer(context.Background(), bad)))

	require.NoError(t, c.RemoveServer(context.Background(), "n"))
	next(protocol.EventUpdateConfig)
	assert.NotContains(t, c.Config(protocol.Gen02).Servers, "n")
	require.Eventually(t, func() bool {
		return len(c.Tools(protocol.Gen02)) == 0 && c.Finder(protocol.GetFinderReq{}).TotalCount == 0
	}, 20*time.Second, 10*time.Millisecond)
	assert.Equal(t, protocol.CodeNotFound, protocol.CodeOf(c.RemoveServer(context.Background(), "n")))
}

func ptr[T any](v T) *T { return &v }

// TestReadWhileServerRestarts (issue 12, item 6): while a crashed MCP server
// waits for its restart, reads of its documents answer 503 (unavailable),
// not 4201 (no such document); once it is back they succeed.
func TestReadWhileServerRestarts(t *testing.T) {
	raw := fmt.Sprintf(`{"servers": {"a": {"type": "stdio", "default_tool_meta": {"auto_apply": true},
	  "server_parameters": {"command": %q, "args": ["-host", "ha", "-docs", "2"]}}}}`, testmcp.Binary(t))
	cfg, err := config.Parse([]byte(raw))
	require.NoError(t, err)
	// The restart waits 3 s: long enough to read while the server is down.
	c := newComputer(t, cfg, WithManagerOptions(mcpclient.WithBackoff(3*time.Second, 3*time.Second)))
	ctx := context.Background()
	_, err = c.ReadResource(ctx, "dpe://ha/doc-1")
	require.NoError(t, err)

	res := call(c, "crash", map[string]any{})
	assert.Equal(t, 4003, res.StructuredContent["code"])
	require.Eventually(t, func() bool { return c.Finder(protocol.GetFinderReq{}).TotalCount == 0 },
		10*time.Second, 5*time.Millisecond, "the crashed server's documents are withdrawn")
	_, err = c.ReadResource(ctx, "dpe://ha/doc-1")
	assert.Equal(t, protocol.CodeUnavailable, protocol.CodeOf(err), "%v", err)
	assert.Equal(t, "a", protocol.AsError(err).Details["server"])
	_, err = c.ReadResource(ctx, "dpe://nobody/doc-1")
	assert.Equal(t, protocol.CodeDocumentNotFound, protocol.CodeOf(err), "a host nobody serves is still 4201")

	require.Eventually(t, func() bool {
		_, err := c.ReadResource(ctx, "dpe://ha/doc-1")
		return err == nil
	}, 30*time.Second, 20*time.Millisecond, "reads work again after the restart")
}
