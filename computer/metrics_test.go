package computer

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// TestMetrics runs a Computer with two real MCP servers and reads its
// registry: servers by state, documents, tool calls by outcome, reads.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := newComputer(t, twoServers(t), WithMetrics(reg))
	ok := call(c, "echo", map[string]any{"text": "x"})
	require.False(t, ok.IsError != nil && *ok.IsError)
	res := call(c, "a__fail", map[string]any{})
	require.True(t, res.IsError != nil && *res.IsError)
	_, err := handler{c}.ReadResource(context.Background(), protocol.Gen02, protocol.ReadResourceReq{Agent: "ag", Computer: "pc", ReqID: "r", URI: "nope://x"})
	require.Error(t, err)

	expect := `
# HELP smcp_computer_mcp_servers Configured MCP servers by state.
# TYPE smcp_computer_mcp_servers gauge
smcp_computer_mcp_servers{state="disabled"} 0
smcp_computer_mcp_servers{state="down"} 0
smcp_computer_mcp_servers{state="starting"} 0
smcp_computer_mcp_servers{state="stopped"} 0
smcp_computer_mcp_servers{state="up"} 2
# HELP smcp_computer_finder_documents Documents the Finder lists.
# TYPE smcp_computer_finder_documents gauge
smcp_computer_finder_documents 5
# HELP smcp_computer_tool_calls_total Tool calls by outcome: "ok", or "error" for a result with isError set (refusals, timeouts, cancels and tool failures).
# TYPE smcp_computer_tool_calls_total counter
smcp_computer_tool_calls_total{outcome="error"} 1
smcp_computer_tool_calls_total{outcome="ok"} 1
# HELP smcp_computer_joined 1 while the Computer is in its office on the Server.
# TYPE smcp_computer_joined gauge
smcp_computer_joined 0
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expect),
		"smcp_computer_mcp_servers", "smcp_computer_finder_documents", "smcp_computer_tool_calls_total", "smcp_computer_joined"))
	n, err := testutil.GatherAndCount(reg, "smcp_computer_resource_read_duration_seconds")
	require.NoError(t, err)
	require.Equal(t, 1, n)

	// Not joined: not ready, with a coded error.
	var perr *protocol.Error
	require.True(t, errors.As(c.Readiness(), &perr))
	require.Equal(t, protocol.CodeUnavailable, perr.Code)

	// A second Computer on the same registry fails at Start, not with a panic.
	c2 := New(twoServers(t), WithMetrics(reg))
	t.Cleanup(func() { _ = c2.Close(context.Background()) })
	require.ErrorContains(t, c2.Start(context.Background()), "WithMetrics")
}
