package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
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

func ptr[T any](v T) *T { return &v }

type fakeCaller struct{ server string }

func (f fakeCaller) CallTool(_ context.Context, name string, _ map[string]any) (json.RawMessage, error) {
	return json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": f.server + ":" + name}}})
}

func base(forbidden []string, meta map[string]protocol.ToolMeta, def *protocol.ToolMeta) protocol.MCPServerConfigBase {
	if meta == nil {
		meta = map[string]protocol.ToolMeta{}
	}
	return protocol.MCPServerConfigBase{ForbiddenTools: forbidden, ToolMeta: meta, DefaultToolMeta: def}
}

func names(ts []protocol.SMCPTool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func checkResult(t *testing.T, res protocol.CallToolResult) {
	t.Helper()
	b, err := json.Marshal(res)
	require.NoError(t, err)
	require.NoError(t, protocol.Validate(protocol.EventToolCall, protocol.Ack, b), string(b))
}

func code(t *testing.T, res protocol.CallToolResult) int {
	t.Helper()
	checkResult(t, res)
	if res.IsError == nil || !*res.IsError {
		return 0
	}
	c, ok := res.StructuredContent["code"].(int)
	require.True(t, ok, "error result carries its code: %+v", res)
	assert.Equal(t, protocol.Code(c).String(), res.StructuredContent["error_type"])
	assert.Equal(t, *res.Content[0].Text, res.StructuredContent["error"])
	return c
}

func TestConvert(t *testing.T) {
	echo := mcp.NewTool("echo", mcp.WithDescription("Echo."), mcp.WithString("text", mcp.Required()),
		mcp.WithRawOutputSchema(json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)),
		mcp.WithTitleAnnotation("Echo"), mcp.WithReadOnlyHintAnnotation(true))
	echo.Meta = &mcp.Meta{AdditionalFields: map[string]any{"s": "x", "n": 1.5, "b": true, "list": []any{"a", "b"},
		"mixed": []any{"a", 1.0}, "obj": map[string]any{"k": 1.0}, "null": nil}}
	got := Convert(echo, &protocol.ToolMeta{AutoApply: ptr(true), Tags: []string{"t"}})
	assert.Equal(t, "echo", got.Name)
	assert.Equal(t, "Echo.", got.Description)
	assert.Equal(t, "object", got.ParamsSchema["type"])
	assert.Equal(t, []any{"text"}, got.ParamsSchema["required"])
	assert.Equal(t, "object", got.ReturnSchema["type"])
	assert.Equal(t, "x", got.Meta["s"])
	assert.Equal(t, 1.5, got.Meta["n"])
	assert.Equal(t, true, got.Meta["b"])
	assert.Equal(t, []any{"a", "b"}, got.Meta["list"])
	assert.Equal(t, `["a",1]`, got.Meta["mixed"])
	assert.Equal(t, `{"k":1}`, got.Meta["obj"])
	assert.Equal(t, `null`, got.Meta["null"])
	assert.JSONEq(t, `{"auto_apply":true,"tags":["t"]}`, got.Meta[protocol.MetaKeyToolMeta].(string))
	// mcp.NewTool fills the annotation defaults; they are sent on the wire.
	assert.JSONEq(t, `{"title":"Echo","readOnlyHint":true,"destructiveHint":true,"idempotentHint":false,"openWorldHint":true}`, got.Meta[protocol.MetaKeyAnnotation].(string))
	b, err := json.Marshal(got)
	require.NoError(t, err)
	require.NoError(t, protocol.ValidateSchema("smcp_tool.json", b), string(b))

	plain := Convert(mcp.Tool{Name: "plain", InputSchema: mcp.ToolInputSchema{Type: "object"}}, nil)
	b, err = json.Marshal(plain)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"return_schema":null`)
	assert.NotContains(t, string(b), `"meta"`)
	require.NoError(t, protocol.ValidateSchema("smcp_tool.json", b), string(b))
}

func TestMergedMeta(t *testing.T) {
	def := &protocol.ToolMeta{AutoApply: ptr(true), Tags: []string{"d"}}
	assert.Nil(t, MergedMeta(base(nil, nil, nil), "x"))
	assert.Equal(t, def, MergedMeta(base(nil, nil, def), "x"))
	m := MergedMeta(base(nil, map[string]protocol.ToolMeta{"x": {AutoApply: ptr(false), Alias: "y"}}, def), "x")
	assert.Equal(t, &protocol.ToolMeta{AutoApply: ptr(false), Alias: "y", Tags: []string{"d"}}, m)

	// A config's own keys (the Python SDK's ToolMeta allows extra members)
	// merge the same way and reach a2c_tool_meta.
	var cfg struct {
		Default  protocol.ToolMeta            `json:"default_tool_meta"`
		ToolMeta map[string]protocol.ToolMeta `json:"tool_meta"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"default_tool_meta":{"icon":"gear","team":"docs"},
		"tool_meta":{"x":{"auto_apply":true,"icon":"search","owner":null}}}`), &cfg))
	m = MergedMeta(base(nil, cfg.ToolMeta, &cfg.Default), "x")
	got := Convert(mcp.NewTool("x"), m)
	assert.JSONEq(t, `{"auto_apply":true,"icon":"search","team":"docs"}`, got.Meta[protocol.MetaKeyToolMeta].(string))
}

func TestNamesAliasesClashesForbidden(t *testing.T) {
	tools := []mcp.Tool{mcp.NewTool("echo"), mcp.NewTool("only")}
	tests := []struct {
		name      string
		a, b      protocol.MCPServerConfigBase
		published []string
		calls     map[string]string // name -> "server:tool" or error code
	}{
		{name: "unaliased clash: both qualified", a: base(nil, nil, nil), b: base(nil, nil, nil),
			published: []string{"a__echo", "a__only", "b__echo", "b__only"},
			calls:     map[string]string{"echo": "4001", "a__echo": "a:echo", "b__echo": "b:echo"}},
		{name: "alias separates", a: base(nil, map[string]protocol.ToolMeta{"echo": {Alias: "echo_a"}, "only": {Alias: "only_a"}}, nil), b: base(nil, nil, nil),
			published: []string{"echo", "echo_a", "only", "only_a"},
			calls:     map[string]string{"echo": "b:echo", "echo_a": "a:echo"}},
		{name: "forbidden on one side: the other keeps the name", a: base([]string{"echo", "only"}, nil, nil), b: base([]string{"only"}, nil, nil),
			published: []string{"echo"},
			calls:     map[string]string{"echo": "b:echo", "only": "4002", "nothing": "4001"}},
		{name: "forbidden by alias", a: base([]string{"x"}, map[string]protocol.ToolMeta{"echo": {Alias: "x"}}, nil), b: base([]string{"echo", "only"}, nil, nil),
			published: []string{"only"},
			calls:     map[string]string{"x": "4002", "echo": "4002", "only": "a:only"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			yes := &protocol.ToolMeta{AutoApply: ptr(true)}
			tt.a.DefaultToolMeta, tt.b.DefaultToolMeta = yes, yes
			s := New()
			assert.True(t, s.SetServer("a", tt.a, fakeCaller{"a"}, tools))
			s.SetServer("b", tt.b, fakeCaller{"b"}, tools)
			assert.Equal(t, tt.published, names(s.List(protocol.Gen02)))
			for name, want := range tt.calls {
				res := s.Call(context.Background(), protocol.Gen02, protocol.ToolCallReq{ToolName: name, ReqID: "r", Params: map[string]any{}})
				if c := code(t, res); c != 0 {
					assert.Equal(t, want, protocol.Code(c).String()[:0]+itoa(c), "%s: %s", name, *res.Content[0].Text)
					if name == "echo" && want == "4001" {
						assert.Contains(t, *res.Content[0].Text, "a__echo, b__echo")
					}
					continue
				}
				assert.Equal(t, want, *res.Content[0].Text, name)
			}
			assert.False(t, s.SetServer("b", tt.b, fakeCaller{"b"}, tools), "same tools: no change")
			before := names(s.List(protocol.Gen02))
			changed := s.RemoveServer("b")
			assert.Equal(t, changed, !assert.ObjectsAreEqual(before, names(s.List(protocol.Gen02))))
			assert.False(t, s.RemoveServer("b"))
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// env starts testmcp servers "a" (auto_apply by default, "fail" forbidden
// only for the tool "pid") over the given transport and feeds a Set.
func env(t testing.TB, transport string, opts ...Option) (*Set, *mcpclient.Manager) {
	t.Helper()
	var cfg protocol.MCPServerConfig
	b := protocol.MCPServerConfigBase{Name: "a", ForbiddenTools: []string{"pid"},
		ToolMeta:        map[string]protocol.ToolMeta{"echo": {Tags: []string{"x"}}, "mutate": {AutoApply: ptr(false)}},
		DefaultToolMeta: &protocol.ToolMeta{AutoApply: ptr(true)}}
	switch transport {
	case "stdio":
		cfg.Stdio = &protocol.MCPStdioConfig{Name: b.Name, ForbiddenTools: b.ForbiddenTools, ToolMeta: b.ToolMeta, DefaultToolMeta: b.DefaultToolMeta,
			ServerParameters: protocol.MCPStdioParameters{Command: testmcp.Binary(t)}}
	default:
		p := testmcp.StartHTTP(t, "127.0.0.1:0")
		cfg.Streamable = &protocol.MCPStreamableConfig{Name: b.Name, ForbiddenTools: b.ForbiddenTools, ToolMeta: b.ToolMeta, DefaultToolMeta: b.DefaultToolMeta,
			ServerParameters: protocol.MCPStreamableParameters{URL: p.URL}}
	}
	s := New(opts...)
	m := mcpclient.NewManager([]protocol.MCPServerConfig{cfg}, mcpclient.WithHooks(mcpclient.Hooks{
		Up: func(ctx context.Context, c *mcpclient.Conn) {
			ts, err := c.ListTools(ctx)
			require.NoError(t, err)
			s.SetServer(c.Name(), c.Config().Base(), c, ts)
		},
		Down: func(name string, _ error) { s.RemoveServer(name) },
	}))
	t.Cleanup(func() { m.Close(context.Background()) })
	require.NoError(t, m.Start(context.Background()))
	return s, m
}

func TestCallOverRealServers(t *testing.T) {
	for _, tr := range []string{"stdio", "streamable"} {
		t.Run(tr, func(t *testing.T) {
			var mu sync.Mutex
			var asked []ConfirmRequest
			answer := true
			s, _ := env(t, tr, WithHistorySize(4), WithConfirm(func(_ context.Context, r ConfirmRequest) (bool, error) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, r)
				return answer, nil
			}))
			assert.Equal(t, []string{"crash", "echo", "fail", "mutate", "slow"}, names(s.List(protocol.Gen02)))
			call := func(tool string, params map[string]any, timeout int) protocol.CallToolResult {
				return s.Call(context.Background(), protocol.Gen02, protocol.ToolCallReq{Agent: "ag", Computer: "c", ReqID: "r-" + tool, ToolName: tool, Params: params, Timeout: timeout})
			}

			res := call("echo", map[string]any{"text": "hi"}, 10)
			assert.Equal(t, 0, code(t, res))
			assert.Equal(t, "hi", *res.Content[0].Text)
			assert.Equal(t, map[string]any{"text": "hi"}, res.StructuredContent)
			assert.Equal(t, map[string]any{"auto_apply": true, "tags": []any{"x"}}, res.Meta[protocol.MetaKeyToolMeta])

			assert.Equal(t, 4001, code(t, call("nope", nil, 10)))
			assert.Equal(t, 4002, code(t, call("pid", nil, 10)))
			assert.Equal(t, 4003, code(t, call("fail", map[string]any{"mode": "rpc"}, 10)))
			res = call("fail", map[string]any{"mode": "result"}, 10)
			checkResult(t, res)
			require.NotNil(t, res.IsError)
			assert.True(t, *res.IsError, "the tool's own error result is relayed")
			assert.Equal(t, "fail tool: error result", *res.Content[0].Text)
			res = call("slow", map[string]any{"seconds": 30}, 1)
			assert.Equal(t, 4004, code(t, res))
			assert.Contains(t, *res.Content[0].Text, "did not finish within 1 s", "the request's timeout ended it")

			// mutate is not auto_apply: the hook decides.
			assert.Equal(t, 0, code(t, call("mutate", map[string]any{"action": "list_changed"}, 10)))
			mu.Lock()
			require.Len(t, asked, 1)
			assert.Equal(t, "a", asked[0].Server)
			assert.Equal(t, "mutate", asked[0].Tool)
			assert.Equal(t, "ag", asked[0].Agent)
			answer = false
			mu.Unlock()
			assert.Equal(t, 4005, code(t, call("mutate", map[string]any{"action": "list_changed"}, 10)))

			h := s.History()
			require.Len(t, h, 4, "bounded")
			assert.Equal(t, []bool{false, false, true, false}, []bool{h[0].Success, h[1].Success, h[2].Success, h[3].Success})
			assert.Equal(t, "slow", h[1].Tool)
			assert.Equal(t, []string{"a", "a", "a", "a"}, s.HistoryServers())
		})
	}
}

func TestNoConfirmHook(t *testing.T) {
	s, _ := env(t, "stdio")
	res := s.Call(context.Background(), protocol.Gen02, protocol.ToolCallReq{ReqID: "1", ToolName: "mutate", Params: map[string]any{"action": "list_changed"}, Timeout: 5})
	assert.Equal(t, 4005, code(t, res))
	assert.Contains(t, *res.Content[0].Text, "no confirm hook")
}

func TestCancelInFlight(t *testing.T) {
	for _, tr := range []string{"stdio", "streamable"} {
		t.Run(tr, func(t *testing.T) {
			s, m := env(t, tr)
			done := make(chan protocol.CallToolResult)
			go func() {
				done <- s.Call(context.Background(), protocol.Gen02, protocol.ToolCallReq{ReqID: "req-9", ToolName: "slow", Params: map[string]any{"seconds": 60}, Timeout: 120})
			}()
			require.Eventually(t, func() bool { return s.Cancel("req-9") }, 10*time.Second, 5*time.Millisecond)
			select {
			case res := <-done:
				assert.Equal(t, 4004, code(t, res))
				assert.Contains(t, *res.Content[0].Text, "cancelled")
			case <-time.After(10 * time.Second):
				t.Fatal("cancel did not stop the call")
			}
			assert.False(t, s.Cancel("req-9"), "no longer in flight")
			assert.False(t, s.Cancel("unknown"))
			// The server is still fine.
			require.NotNil(t, m.Conn("a"))
			res := s.Call(context.Background(), protocol.Gen02, protocol.ToolCallReq{ReqID: "x", ToolName: "echo", Params: map[string]any{"text": "ok"}, Timeout: 10})
			assert.Equal(t, "ok", *res.Content[0].Text)
		})
	}
}

func TestCrashedServerToolsWithdrawn(t *testing.T) {
	s, m := env(t, "stdio")
	res := s.Call(context.Background(), protocol.Gen02, protocol.ToolCallReq{ReqID: "c", ToolName: "crash", Params: map[string]any{}, Timeout: 10})
	assert.Equal(t, 4003, code(t, res))
	// Withdrawn, then back after the restart.
	require.Eventually(t, func() bool { return m.Conn("a") != nil && len(s.List(protocol.Gen02)) == 5 }, 20*time.Second, 10*time.Millisecond)
	assert.True(t, strings.Contains(strings.Join(names(s.List(protocol.Gen02)), ","), "echo"))
}

// Tools that are not valid SMCPTools or too large are withheld with a code;
// over the list budget the servers share it fairly, each keeping a prefix
// of its listing; a withheld tool answers 4001 saying why.
func TestBounds(t *testing.T) {
	s := New(WithMaxListBytes(64 << 10))
	tool := func(name, desc string) mcp.Tool { return mcp.NewTool(name, mcp.WithDescription(desc)) }
	long := strings.Repeat("n", 257)
	s.SetServer("a", base(nil, nil, nil), fakeCaller{"a"}, []mcp.Tool{
		tool(long, "x"), tool("desc", strings.Repeat("é", 65537)), tool("big", strings.Repeat("b", 20000)), tool("a1", "x")})
	var many []mcp.Tool
	for i := range 2000 {
		many = append(many, tool(fmt.Sprintf("m-%04d", i), strings.Repeat("m", 50)))
	}
	s.SetServer("many", base(nil, nil, nil), fakeCaller{"many"}, many)
	s.SetServer("small", base(nil, nil, nil), fakeCaller{"small"}, []mcp.Tool{tool("s1", "x"), tool("s2", "y")})

	list := s.List(protocol.Gen02)
	b, err := json.Marshal(protocol.GetToolsRet{Tools: list, ReqID: "r"})
	require.NoError(t, err)
	assert.LessOrEqual(t, len(b), 64<<10)
	require.NoError(t, protocol.Validate(protocol.EventGetTools, protocol.Ack, b))
	got := map[string]bool{}
	for _, n := range names(list) {
		got[n] = true
	}
	assert.True(t, got["s1"] && got["s2"] && got["a1"] && got["big"], "small servers keep all their valid tools: %v", len(list))
	assert.True(t, got["m-0000"], "the many server keeps a prefix")
	assert.False(t, got["m-1999"])

	w := map[string]protocol.Code{}
	for _, x := range s.Withheld(protocol.Gen02) {
		w[x.Tool] = x.Err.Code
	}
	assert.Equal(t, protocol.CodeBadRequest, w[long])
	assert.Equal(t, protocol.CodeBadRequest, w["desc"])
	assert.Equal(t, protocol.CodePayloadTooLarge, w["m-1999"])
	for i := range 2000 {
		n := fmt.Sprintf("m-%04d", i)
		assert.NotEqual(t, got[n], w[n] != 0, "%s published or withheld, never both", n)
		if i > 0 && got[n] {
			assert.True(t, got[fmt.Sprintf("m-%04d", i-1)], "a prefix: %s", n)
		}
	}
	res := s.Call(context.Background(), protocol.Gen02, protocol.ToolCallReq{Agent: "ag", Computer: "c", ReqID: "r", ToolName: "m-1999"})
	assert.Equal(t, 4001, code(t, res))
	assert.Contains(t, *res.Content[0].Text, "does not fit the tool list")

	// The big server goes away: the other one gets the room back.
	s.RemoveServer("a")
	s.SetServer("many", base(nil, nil, nil), fakeCaller{"many"}, many[:100])
	assert.Len(t, s.List(protocol.Gen02), 102)
	assert.Empty(t, s.Withheld(protocol.Gen02))
}

// Two servers sharing 1,000 tool names: the clashes are warned about once,
// and only the first few one by one.
func TestClashWarningsBounded(t *testing.T) {
	var mu sync.Mutex
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	s := New(WithLogger(log))
	var ts []mcp.Tool
	for i := range 1000 {
		ts = append(ts, mcp.NewTool(fmt.Sprintf("t%04d", i)))
	}
	s.SetServer("a", base(nil, nil, nil), fakeCaller{"a"}, ts)
	s.SetServer("b", base(nil, nil, nil), fakeCaller{"b"}, ts)
	assert.Len(t, s.List(protocol.Gen02), 2000, "every tool published under its qualified name")
	s.SetServer("c", base(nil, nil, nil), fakeCaller{"c"}, []mcp.Tool{mcp.NewTool("other")})
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, maxClashWarnings, strings.Count(logs.String(), "tool name published by several MCP servers"))
	assert.Equal(t, 1, strings.Count(logs.String(), "more tool name clashes than logged one by one"))
	assert.Contains(t, logs.String(), "clashes=1000")
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestConfirmBoundedByTimeout: the request's timeout bounds the
// confirmation too. A hook that waits for its context answers 4004 at the
// timeout, and so does one that ignores its context (it is no longer
// waited for); a cancel while the hook decides is 4004 as well.
func TestConfirmBoundedByTimeout(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	hooks := map[string]ConfirmFunc{
		"respects its context": func(ctx context.Context, _ ConfirmRequest) (bool, error) {
			<-ctx.Done()
			return false, ctx.Err()
		},
		"ignores its context": func(context.Context, ConfirmRequest) (bool, error) {
			<-release // a user who never answers
			return true, nil
		},
	}
	for name, hook := range hooks {
		t.Run(name, func(t *testing.T) {
			s, _ := env(t, "stdio", WithConfirm(hook))
			res := s.Call(context.Background(), protocol.Gen02, protocol.ToolCallReq{ReqID: "r", ToolName: "mutate", Params: map[string]any{"action": "list_changed"}, Timeout: 1})
			assert.Equal(t, 4004, code(t, res), "%s", *res.Content[0].Text)
			assert.Contains(t, *res.Content[0].Text, "not confirmed within its timeout")
			h := s.History()
			require.NotEmpty(t, h)
			assert.False(t, h[len(h)-1].Success)
		})
	}
	t.Run("cancelled while confirming", func(t *testing.T) {
		asked := make(chan struct{})
		s, _ := env(t, "stdio", WithConfirm(func(ctx context.Context, _ ConfirmRequest) (bool, error) {
			close(asked)
			<-release
			return true, nil
		}))
		done := make(chan protocol.CallToolResult, 1)
		go func() {
			done <- s.Call(context.Background(), protocol.Gen02, protocol.ToolCallReq{ReqID: "r-c", ToolName: "mutate", Params: map[string]any{"action": "list_changed"}, Timeout: 600})
		}()
		<-asked
		require.True(t, s.Cancel("r-c"))
		res := <-done
		assert.Equal(t, 4004, code(t, res))
		assert.Contains(t, *res.Content[0].Text, "cancelled while awaiting confirmation")
	})
}
