package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// TestGoClientsOldPythonServer: the Python a2c-smcp 0.1.2 Server (protocol
// 0.2.0, in its documented setup: no version gate) ignores a2c_version and
// confirms nothing. The Go Computer and Agent, with their defaults (0.4.0
// named), find it out before they join (spec/generations.md, Clients) and
// speak 0.2.0, as that Server's other clients do; the Agent lists the
// Computer and calls its tool.
func TestGoClientsOldPythonServer(t *testing.T) {
	s := startRefServer(t, refPy01)
	d := &deployment{URL: s.URL, APIKey: s.APIKey}
	gc := startComputer(t, d, "o1", "gc", []mcpServer{toolsMeta(toolServer(t, "tools"))})
	require.False(t, gc.Client().Confirmed())
	require.Equal(t, protocol.Gen02, gc.Client().Generation(), "the Computer")

	ctx := testContext(t)
	a, err := agent.Dial(ctx, s.URL, agent.WithAPIKey(s.APIKey), agent.WithName("ga"), agent.WithLogger(logger(t)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	require.False(t, a.Confirmed())
	require.Equal(t, protocol.Gen02, a.Generation(), "the Agent")
	require.NoError(t, joinRef(ctx, a, "o1"))

	sessions, err := a.ListRoom(ctx)
	require.NoError(t, err)
	names := map[string]protocol.Role{}
	for _, si := range sessions {
		names[si.Name] = si.Role
	}
	require.Equal(t, protocol.RoleComputer, names["gc"], "%v", sessions)

	tools, err := a.GetTools(ctx, "gc")
	require.NoError(t, err)
	echo := ""
	for _, tl := range tools {
		if tl.Name == "echo" || strings.HasSuffix(tl.Name, "__echo") {
			echo = tl.Name
		}
	}
	require.NotEmpty(t, echo, "%v", tools)
	res, err := a.CallTool(ctx, "gc", echo, map[string]any{"text": "hi"}, 10*time.Second)
	require.NoError(t, err)
	require.Nil(t, agent.ToolError(res), "%v", res)
	require.Contains(t, firstTextOf(res), "hi")
}
