package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/sourcetest"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkIn validates a tool_call answer in generation g and returns its
// JSON members.
func checkIn(t *testing.T, g protocol.Generation, res protocol.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res)
	require.NoError(t, err)
	require.NoError(t, g.Validate(protocol.EventToolCall, protocol.Ack, b), string(b))
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

func text(res protocol.CallToolResult) string {
	if len(res.Content) == 0 || res.Content[0].Text == nil {
		return ""
	}
	return *res.Content[0].Text
}

// One Set, two namings: a 0.2 session sees bare names (aliases from the
// merged tool_meta, clashes qualified by server name), a 0.3/0.4 session
// {bundle_id}__{own alias or name} with bundle_id; a call takes either
// naming's name in every generation.
func TestNamingPerGeneration(t *testing.T) {
	s := New()
	echo, read := mcp.NewTool("echo"), mcp.NewTool("read")
	// "my.server" derives my_server; "b" names its bundle_id explicitly.
	a := base(nil, map[string]protocol.ToolMeta{"read": {Alias: "get", AutoApply: ptr(true)}}, &protocol.ToolMeta{AutoApply: ptr(true)})
	s.SetServer("my.server", a, fakeCaller{"my.server"}, []mcp.Tool{echo, read})
	b := base(nil, nil, &protocol.ToolMeta{AutoApply: ptr(true)})
	b.BundleID = "bee"
	s.SetServer("b", b, fakeCaller{"b"}, []mcp.Tool{echo})
	// A default alias never names an exposed tool; forbidden by exposed name.
	c := base([]string{"c__gone"}, nil, &protocol.ToolMeta{AutoApply: ptr(true), Alias: "dflt"})
	s.SetServer("c", c, fakeCaller{"c"}, []mcp.Tool{mcp.NewTool("x"), mcp.NewTool("gone")})

	assert.Equal(t, []string{"b__echo", "dflt", "get", "my.server__echo"}, names(s.List(protocol.Gen02)))
	for _, tl := range s.List(protocol.Gen02) {
		assert.Empty(t, tl.BundleID, "no bundle_id in 0.2.0")
	}
	for _, g := range []protocol.Generation{protocol.Gen03, protocol.Gen04} {
		list := s.List(g)
		assert.Equal(t, []string{"bee__echo", "c__x", "my_server__echo", "my_server__get"}, names(list))
		bundles := map[string]string{}
		for _, tl := range list {
			bundles[tl.Name] = tl.BundleID
		}
		assert.Equal(t, map[string]string{"bee__echo": "bee", "c__x": "c", "my_server__echo": "my_server", "my_server__get": "my_server"}, bundles)
		ret, err := json.Marshal(protocol.GetToolsRet{ReqID: "r", Tools: list})
		require.NoError(t, err)
		require.NoError(t, g.Validate(protocol.EventGetTools, protocol.Ack, ret))
	}
	ret, err := json.Marshal(protocol.GetToolsRet{ReqID: "r", Tools: s.List(protocol.Gen02)})
	require.NoError(t, err)
	require.NoError(t, protocol.Gen02.Validate(protocol.EventGetTools, protocol.Ack, ret))

	call := func(g protocol.Generation, name string) protocol.CallToolResult {
		res := s.Call(context.Background(), g, protocol.ToolCallReq{Agent: "ag", Computer: "pc", ReqID: "r", ToolName: name})
		checkIn(t, g, res)
		return res
	}
	for _, g := range []protocol.Generation{protocol.Gen02, protocol.Gen04} {
		assert.Equal(t, "b:echo", text(call(g, "bee__echo")), "exposed name, %s", g)
		assert.Equal(t, "my.server:read", text(call(g, "my_server__get")), "exposed alias, %s", g)
		assert.Equal(t, "my.server:read", text(call(g, "get")), "unambiguous bare name, %s", g)
		assert.Equal(t, "my.server:echo", text(call(g, "my.server__echo")), "0.2 qualified name, %s", g)
		assert.Equal(t, 4002, code(t, call(g, "c__gone")), "forbidden by exposed name, %s", g)
		assert.Equal(t, 4001, code(t, call(g, "nope")))
	}
	res := call(protocol.Gen04, "echo")
	assert.Equal(t, 4001, code(t, res))
	assert.Contains(t, text(res), "call one of bee__echo, my_server__echo", "a 0.4 session is told the exposed names")
	res = call(protocol.Gen02, "echo")
	assert.Contains(t, text(res), "call one of b__echo, my.server__echo")
}

// Two aliases of one server naming the same exposed tool: the first listed
// keeps it, as the 0.4 references do.
func TestExposedAliasCollision(t *testing.T) {
	var logs sourcetest.LogRecorder
	s := New(WithLogger(logs.Logger()))
	cfg := base(nil, map[string]protocol.ToolMeta{"t1": {Alias: "same"}, "t2": {Alias: "same"}}, &protocol.ToolMeta{AutoApply: ptr(true)})
	s.SetServer("d", cfg, fakeCaller{"d"}, []mcp.Tool{mcp.NewTool("t1"), mcp.NewTool("t2")})
	assert.Equal(t, []string{"d__same"}, names(s.List(protocol.Gen04)))
	res := s.Call(context.Background(), protocol.Gen04, protocol.ToolCallReq{ReqID: "r", ToolName: "d__same"})
	assert.Equal(t, "d:t1", text(res))
	var exposed []string
	for _, w := range logs.Warnings() {
		if strings.Contains(w, "exposed name") {
			exposed = append(exposed, w)
		}
	}
	require.Len(t, exposed, 1, "%q", logs.Warnings())
	assert.Contains(t, exposed[0], "two tools of one MCP server share an exposed name (tool_meta aliases): the first listed keeps it tool=d__same server=d kept=t1 dropped=t2")
}

// A result's metadata is _meta in 0.2.0 and meta (beside _meta) from 0.3.0
// on, as the 0.4 references write it.
func TestResultMetaPerGeneration(t *testing.T) {
	s := New()
	cfg := base(nil, map[string]protocol.ToolMeta{"echo": {Tags: []string{"x"}}}, &protocol.ToolMeta{AutoApply: ptr(true)})
	s.SetServer("a", cfg, fakeCaller{"a"}, []mcp.Tool{mcp.NewTool("echo")})
	want := map[string]any{"auto_apply": true, "tags": []any{"x"}}

	m := checkIn(t, protocol.Gen02, s.Call(context.Background(), protocol.Gen02, protocol.ToolCallReq{ReqID: "r", ToolName: "echo"}))
	assert.NotContains(t, m, "meta")
	assert.Equal(t, want, m["_meta"].(map[string]any)[protocol.MetaKeyToolMeta])

	res := s.Call(context.Background(), protocol.Gen04, protocol.ToolCallReq{ReqID: "r", ToolName: "a__echo"})
	m = checkIn(t, protocol.Gen04, res)
	assert.Equal(t, want, m["meta"].(map[string]any)[protocol.MetaKeyToolMeta])
	assert.Equal(t, want, res.ResultMeta()[protocol.MetaKeyToolMeta])
}

// A cancelled or timed-out execution: 4004 for a 0.2 session, the 0.4
// references' markers from 0.3.0 on (isError, meta.a2c_cancelled with
// a2c_cancel_reason "agent_requested"; meta.a2c_timeout), over a real MCP
// server.
func TestCancelAndTimeoutMarkers(t *testing.T) {
	s, _ := env(t, "stdio")
	cancelOne := func(g protocol.Generation, id, name string) protocol.CallToolResult {
		done := make(chan protocol.CallToolResult, 1)
		go func() {
			done <- s.Call(context.Background(), g, protocol.ToolCallReq{ReqID: id, ToolName: name, Params: map[string]any{"seconds": 60}, Timeout: 120})
		}()
		require.Eventually(t, func() bool { return s.Cancel(id) }, 20*time.Second, 5*time.Millisecond)
		select {
		case res := <-done:
			return res
		case <-time.After(20 * time.Second):
			t.Fatal("cancel did not stop the call")
			return protocol.CallToolResult{}
		}
	}

	res := cancelOne(protocol.Gen02, "c2", "slow")
	assert.Equal(t, 4004, code(t, res))
	c, _ := res.Cancelled()
	assert.False(t, c, "no 0.4 marker in 0.2.0")

	for _, g := range []protocol.Generation{protocol.Gen03, protocol.Gen04} {
		res = cancelOne(g, "c-"+g.String(), "a__slow")
		m := checkIn(t, g, res)
		require.NotNil(t, res.IsError)
		assert.True(t, *res.IsError)
		c, reason := res.Cancelled()
		assert.True(t, c, "%s: %v", g, m)
		assert.Equal(t, protocol.CancelReasonAgent, reason)
		assert.Equal(t, map[string]any{"a2c_cancelled": true, "a2c_cancel_reason": "agent_requested"}, m["meta"])
		assert.False(t, res.TimedOut())
		assert.Nil(t, res.StructuredContent, "no 0.2 error body")
		assert.Contains(t, text(res), "cancelled")
	}

	// The request's timeout ends the execution.
	res = s.Call(context.Background(), protocol.Gen02, protocol.ToolCallReq{ReqID: "t2", ToolName: "slow", Params: map[string]any{"seconds": 60}, Timeout: 1})
	assert.Equal(t, 4004, code(t, res))
	assert.False(t, res.TimedOut())
	res = s.Call(context.Background(), protocol.Gen04, protocol.ToolCallReq{ReqID: "t4", ToolName: "a__slow", Params: map[string]any{"seconds": 60}, Timeout: 1})
	m := checkIn(t, protocol.Gen04, res)
	assert.True(t, res.TimedOut(), "%v", m)
	assert.Equal(t, map[string]any{"a2c_timeout": true}, m["meta"])
	c, _ = res.Cancelled()
	assert.False(t, c)
	require.NotNil(t, res.IsError)
	assert.True(t, *res.IsError)
}
