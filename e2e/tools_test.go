package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/computer/tools"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// toolsDeployment: a Computer "desk" running the tool server, where echo,
// slow and fail are auto-applied and "unconfirmed" is not, and an Agent "bot".
func toolsDeployment(t *testing.T, opts ...agent.Option) (*agent.Client, *computer.Computer) {
	t.Helper()
	d := startServer(t)
	tools := toolServer(t, "tools")
	tools["tool_meta"] = map[string]any{
		"echo": map[string]any{"auto_apply": true, "tags": []string{"demo"}},
		"slow": map[string]any{"auto_apply": true},
		"fail": map[string]any{"auto_apply": true},
	}
	c := startComputer(t, d, "o1", "desk", []mcpServer{tools})
	return dialAgent(t, d, "o1", "bot", opts...), c
}

func TestToolsEndToEnd(t *testing.T) {
	a, c := toolsDeployment(t)
	ctx := testContext(t)

	list, err := a.GetTools(ctx, "desk")
	require.NoError(t, err)
	byName := map[string]protocol.SMCPTool{}
	for _, tool := range list {
		byName[tool.Name] = tool
	}
	// Both speak 0.4 by default: the exposed names, with the bundle id.
	require.Contains(t, byName, "tools__echo")
	echo := byName["tools__echo"]
	assert.Equal(t, "tools", echo.BundleID)
	assert.Equal(t, "object", echo.ParamsSchema["type"])
	var meta protocol.ToolMeta
	require.NoError(t, json.Unmarshal([]byte(echo.Meta["a2c_tool_meta"].(string)), &meta), "a2c_tool_meta is JSON text")
	require.NotNil(t, meta.AutoApply)
	assert.True(t, *meta.AutoApply)

	// By its exposed name, and by the bare name one server alone has.
	for _, name := range []string{"tools__echo", "echo"} {
		res, err := a.CallTool(ctx, "desk", name, map[string]any{"text": "hello"}, 10*time.Second)
		require.NoError(t, err)
		assert.Nil(t, agent.ToolError(res))
		require.Len(t, res.Content, 1)
		require.NotNil(t, res.Content[0].Text)
		assert.Equal(t, "echo: hello", *res.Content[0].Text)
	}

	cases := []struct {
		tool   string
		params map[string]any
		code   protocol.Code
	}{
		{"no_such_tool", map[string]any{}, protocol.CodeToolNotFound},
		{"fail", map[string]any{}, protocol.CodeToolExecutionFailed},
	}
	for _, tc := range cases {
		res, err := a.CallTool(ctx, "desk", tc.tool, tc.params, 10*time.Second)
		require.NoError(t, err, tc.tool)
		perr := agent.ToolError(res)
		require.NotNil(t, perr, tc.tool)
		assert.Equal(t, tc.code, perr.Code, tc.tool)
	}

	// The Computer stops a call at the request's timeout: meta.a2c_timeout
	// in 0.4, which the Agent reads as 4004.
	res, err := a.CallTool(ctx, "desk", "tools__slow", map[string]any{"seconds": 30}, time.Second)
	require.NoError(t, err)
	require.NotNil(t, agent.ToolError(res))
	assert.Equal(t, protocol.CodeToolTimeout, agent.ToolError(res).Code)
	assert.True(t, res.TimedOut(), "%+v", res)

	// An Agent that gives up sends server:tool_call_cancel; the Computer
	// cancels the in-flight call and records it as failed.
	callCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = a.CallTool(callCtx, "desk", "slow", map[string]any{"seconds": 30}, 30*time.Second)
	cancel()
	assert.Equal(t, protocol.CodeTimeout, protocol.CodeOf(err), "%v", err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	require.Eventually(t, func() bool {
		h := c.History()
		return len(h) > 0 && h[len(h)-1].Tool == "slow" && !h[len(h)-1].Success
	}, 10*time.Second, 20*time.Millisecond, "the cancelled call ends on the Computer")

	// Server refusals are errors, not results.
	_, err = a.CallTool(ctx, "ghost", "echo", map[string]any{"text": "x"}, time.Second)
	assert.Equal(t, protocol.CodeNotFound, protocol.CodeOf(err))
}

// A tool without auto_apply needs the Computer's confirm hook; with none
// configured the call is refused with 4005.
func TestToolNeedsConfirmation(t *testing.T) {
	d := startServer(t)
	startComputer(t, d, "o1", "desk", []mcpServer{toolServer(t, "tools")})
	a := dialAgent(t, d, "o1", "bot")
	res, err := a.CallTool(testContext(t), "desk", "echo", map[string]any{"text": "x"}, 5*time.Second)
	require.NoError(t, err)
	require.NotNil(t, agent.ToolError(res))
	assert.Equal(t, protocol.CodeToolRequiresConfirmation, agent.ToolError(res).Code)
}

// A confirm hook that never answers is bounded by the tool's timeout: the
// Agent gets the Computer's 4004 result, not its own 408 at the timeout
// plus the grace.
func TestConfirmHookBoundedByTimeout(t *testing.T) {
	d := startServer(t)
	asked := make(chan struct{}, 1)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	startComputer(t, d, "o1", "desk", []mcpServer{toolServer(t, "tools")}, computer.WithConfirm(func(context.Context, tools.ConfirmRequest) (bool, error) {
		asked <- struct{}{}
		<-release // a user who never answers, and a hook that ignores its context
		return true, nil
	}))
	a := dialAgent(t, d, "o1", "bot")
	res, err := a.CallTool(testContext(t), "desk", "echo", map[string]any{"text": "x"}, time.Second)
	require.NoError(t, err, "the Computer answered")
	<-asked
	require.NotNil(t, agent.ToolError(res))
	assert.Equal(t, protocol.CodeToolTimeout, agent.ToolError(res).Code, "%v", agent.ToolError(res))
}

// Config, room, desktop and a window read through the Computer.
func TestConfigRoomDesktop(t *testing.T) {
	a, _ := toolsDeployment(t)
	ctx := testContext(t)

	cfg, err := a.GetConfig(ctx, "desk")
	require.NoError(t, err)
	require.Contains(t, cfg.Servers, "tools")
	assert.Equal(t, "stdio", cfg.Servers["tools"].Type())

	sessions, err := a.ListRoom(ctx)
	require.NoError(t, err)
	roles := map[string]protocol.Role{}
	for _, s := range sessions {
		roles[s.Name] = s.Role
		assert.Equal(t, "o1", s.OfficeID)
	}
	assert.Equal(t, map[string]protocol.Role{"desk": protocol.RoleComputer, "bot": protocol.RoleAgent}, roles)

	desktops, err := a.GetDesktop(ctx, "desk", agent.DesktopQuery{})
	require.NoError(t, err)
	assert.Equal(t, []string{statusWindow + "\n\nall systems nominal"}, desktops)
	zero := 0
	desktops, err = a.GetDesktop(ctx, "desk", agent.DesktopQuery{Size: &zero})
	require.NoError(t, err)
	assert.Empty(t, desktops)

	contents, err := a.ReadResource(ctx, "desk", statusWindow)
	require.NoError(t, err)
	require.Len(t, contents, 1)
	require.NotNil(t, contents[0].Text)
	assert.Equal(t, "all systems nominal", *contents[0].Text)
}
