package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// TestMetrics drives one answered request, one refused request and one
// refused connect, and reads them back from the Server's own registry.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	ts := startServer(t, server.WithMetrics(reg))
	agent, cs := office(t, ts, "o1", "a1", "c1")
	cs[0].answer(protocol.EventGetTools, toolsAnswer)

	vals := agent.call(protocol.EventGetTools, getTools("a1", "c1", "r1"))
	require.Len(t, vals, 1)
	requireError(t, agent.call(protocol.EventGetTools, getTools("a1", "nobody", "r2")), protocol.CodeNotFound)
	_, err := connect(t, ts.url, dialOpts{noKey: true})
	require.Error(t, err)

	expect := `
# HELP smcp_server_connections Sessions admitted to /smcp on this node, by role ("none" before the first join).
# TYPE smcp_server_connections gauge
smcp_server_connections{role="agent"} 1
smcp_server_connections{role="computer"} 1
smcp_server_connections{role="none"} 0
# HELP smcp_server_offices Offices with at least one member on this node.
# TYPE smcp_server_offices gauge
smcp_server_offices 1
# HELP smcp_server_routed_requests_in_flight Routed requests admitted on this node and not answered yet.
# TYPE smcp_server_routed_requests_in_flight gauge
smcp_server_routed_requests_in_flight 0
# HELP smcp_server_routed_requests_total Routed client:* requests by event and outcome code ("ok" for a Computer's answer, else the protocol error code).
# TYPE smcp_server_routed_requests_total counter
smcp_server_routed_requests_total{code="404",event="client:get_tools"} 1
smcp_server_routed_requests_total{code="ok",event="client:get_tools"} 1
# HELP smcp_server_auth_refusals_total Refused /smcp connects, by code.
# TYPE smcp_server_auth_refusals_total counter
smcp_server_auth_refusals_total{code="401"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expect),
		"smcp_server_connections", "smcp_server_offices", "smcp_server_routed_requests_in_flight",
		"smcp_server_routed_requests_total", "smcp_server_auth_refusals_total"))
	n, err := testutil.GatherAndCount(reg, "smcp_server_routed_request_duration_seconds")
	require.NoError(t, err)
	require.Equal(t, 1, n, "one latency series (client:get_tools)")
	require.NoError(t, ts.srv.Ready(context.Background()))

	// Two Servers on one registry collide: New says so instead of panicking.
	_, err = server.New(server.WithAPIKeys("k"), server.WithMetrics(reg))
	require.ErrorContains(t, err, "WithMetrics")
}

// TestWithRedisErrors: a bad URL is refused without quoting it (it may hold
// a password), an unreachable Redis fails New, and so does a lease too short
// for its heartbeat.
func TestWithRedisErrors(t *testing.T) {
	_, err := server.New(server.WithAPIKeys("k"), server.WithRedis("redis://:s3cret@127.0.0.1:port/0"))
	require.ErrorContains(t, err, "not a Redis URL")
	require.NotContains(t, err.Error(), "s3cret")
	_, err = server.New(server.WithAPIKeys("k"), server.WithRedis("redis://127.0.0.1:1/0"))
	require.ErrorContains(t, err, "WithRedis")
	_, err = server.New(server.WithAPIKeys("k"), server.WithNodeLease(time.Millisecond))
	require.ErrorContains(t, err, "WithNodeLease")
}
