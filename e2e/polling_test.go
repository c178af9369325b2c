package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/computer/sio"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// noWebsocketProxy is a reverse proxy to d that refuses websocket upgrades,
// as some corporate proxies do, and counts what passes.
type noWebsocketProxy struct {
	*deployment                    // the proxy's URL, d's key
	refused, polls, posts, pending atomic.Int64
}

func startNoWebsocketProxy(t *testing.T, d *deployment) *noWebsocketProxy {
	t.Helper()
	target, err := url.Parse(d.URL)
	require.NoError(t, err)
	p := &noWebsocketProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			p.refused.Add(1)
			http.Error(w, "websockets are not allowed here", http.StatusForbidden)
			return
		}
		if r.Method == http.MethodPost {
			p.posts.Add(1)
		} else {
			p.polls.Add(1)
		}
		p.pending.Add(1)
		defer p.pending.Add(-1)
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	p.deployment = &deployment{URL: hs.URL, APIKey: d.APIKey}
	return p
}

// TestPollingBehindProxyRefusingWebsockets: an Agent and a Computer with
// WithPolling reach the Server through a proxy that refuses websocket
// upgrades and work over long-polling alone. Before the sio patches 11 and
// 12 (sio/third_party/PATCHES.md) the Go client tried websocket first half
// the time (its transport set has no order), and over polling a message
// waited behind the pending poll until the Server next sent something (a
// ping, every 20 s): a tool call took up to a ping interval each way.
func TestPollingBehindProxyRefusingWebsockets(t *testing.T) {
	p := startNoWebsocketProxy(t, startServer(t))
	tools := toolServer(t, "tools")
	tools["tool_meta"] = map[string]any{"echo": map[string]any{"auto_apply": true}}
	c := startComputerDialing(t, p.deployment, "o1", "desk", []mcpServer{tools}, nil, sio.WithPolling())
	a := dialAgent(t, p.deployment, "o1", "bot", agent.WithPolling())

	ctx := testContext(t)
	for i := range 5 {
		// Well under the Server's ping interval: a call that waited for a
		// ping to carry it would run out.
		res, err := a.CallTool(ctx, "desk", "echo", map[string]any{"text": "hello"}, 5*time.Second)
		require.NoError(t, err, "call %d", i)
		require.Nil(t, agent.ToolError(res), "call %d", i)
	}
	require.Positive(t, p.posts.Load(), "requests went by long-polling POSTs")
	require.Positive(t, p.polls.Load())
	t.Logf("through the proxy: %d polls, %d posts, %d websocket upgrades refused", p.polls.Load(), p.posts.Load(), p.refused.Load())

	// Closing the clients ends their requests: the Server answers the
	// pending polls as the sessions end, nothing is left at the proxy.
	require.NoError(t, a.Close())
	closeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, c.Close(closeCtx))
	require.Eventually(t, func() bool { return p.pending.Load() == 0 }, 10*time.Second, 10*time.Millisecond, "requests left open at the proxy")
}

// TestPollingMessageBound: over long-polling, an answer larger than the
// Agent's WithMaxMessageBytes fails the transport instead of being read
// into memory (sio patch 10's bound, applied to polling responses); the
// call ends with a coded error and the Agent reconnects and carries on.
// The Agent abandons the oversized poll mid-answer; the Server carries on.
func TestPollingMessageBound(t *testing.T) {
	p := startNoWebsocketProxy(t, startServer(t))
	tools := toolServer(t, "tools")
	tools["tool_meta"] = map[string]any{"echo": map[string]any{"auto_apply": true}}
	startComputerDialing(t, p.deployment, "o1", "desk", []mcpServer{tools}, nil, sio.WithPolling())
	a := dialAgent(t, p.deployment, "o1", "bot", agent.WithPolling(), agent.WithMaxMessageBytes(64<<10))

	ctx := testContext(t)
	res, err := a.CallTool(ctx, "desk", "echo", map[string]any{"text": "small"}, 5*time.Second)
	require.NoError(t, err)
	require.Nil(t, agent.ToolError(res))

	for i := range 3 {
		res, err = a.CallTool(ctx, "desk", "echo", map[string]any{"text": strings.Repeat("x", 200<<10)}, 5*time.Second)
		if err == nil {
			err = agent.ToolError(res)
		}
		require.Error(t, err, "an answer over the bound arrived (try %d)", i)
		require.NotEqual(t, protocol.Code(0), protocol.CodeOf(err), "a coded error: %v", err)
	}
	require.Eventually(t, func() bool {
		res, err := a.CallTool(ctx, "desk", "echo", map[string]any{"text": "again"}, 2*time.Second)
		return err == nil && agent.ToolError(res) == nil
	}, 20*time.Second, 100*time.Millisecond, "the Agent carries on after the oversized answers")
}
