package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/agent/agenttest"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// TestGenerationConfirmed: against an office that confirms generations (as
// smcp-go's Server does) the Client speaks the newest by default, or the
// one it pins, and says the Server confirmed it.
func TestGenerationConfirmed(t *testing.T) {
	p := startPeer(t)
	c, _ := dial(t, p)
	require.Equal(t, protocol.NewestGeneration(), c.Generation())
	require.True(t, c.Confirmed())

	c2, _ := dial(t, p, agent.WithGenerations(protocol.Gen02))
	require.Equal(t, protocol.Gen02, c2.Generation())
	require.True(t, c2.Confirmed())
}

// TestKeyInEveryPlace: the key travels as auth.token (0.3/0.4), auth.api_key
// (0.2) and the x-api-key header.
func TestKeyInEveryPlace(t *testing.T) {
	p := startPeer(t, func(o *agenttest.Options) { o.APIKey = "s3cret" })
	dial(t, p, agent.WithAPIKey("s3cret"))
	hs := p.Handshakes()
	require.NotEmpty(t, hs)
	require.Equal(t, "s3cret", hs[0].Auth["token"])
	require.Equal(t, "s3cret", hs[0].Auth["api_key"])
	require.Equal(t, "s3cret", hs[0].Header.Get("x-api-key"))
}

// TestExtensionsNeedConfirmation: a Server that did not confirm the
// generation (a reference Server) routes no smcp-go extension, so the
// Finder and client:read_resource fail at once with 4106 — nothing is
// sent; the core events still work. In 0.2.0 the Finder is core.
func TestExtensionsNeedConfirmation(t *testing.T) {
	p := startPeer(t, func(o *agenttest.Options) { o.Unconfirmed = true })
	c, _ := joined(t, p)
	require.False(t, c.Confirmed())
	require.Equal(t, protocol.Gen04, c.Generation())
	_, err := c.GetTools(ctxT(t), "alpha")
	require.NoError(t, err)

	// A context far longer than the test: a 4106 that came from a timeout
	// would not return.
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	_, err = c.GetFinder(ctx, "alpha", agent.FinderQuery{})
	perr := requireCode(t, err, protocol.CodeNotSupported)
	require.Equal(t, protocol.EventGetFinder, perr.Details["event"])
	_, err = c.ReadResource(ctx, "alpha", "dpe://com.example.docs/rpt-2026")
	requireCode(t, err, protocol.CodeNotSupported)
	for _, r := range p.Received() {
		require.NotEqual(t, protocol.EventGetFinder, r.Event, "nothing is sent")
		require.NotEqual(t, protocol.EventReadResource, r.Event, "nothing is sent")
	}

	// A Server of the 0.2 generation ignores a2c_version: the Agent, with
	// its defaults or pinned to 0.2.0, speaks 0.2.0 there, where the
	// Finder is core.
	old := startPeer(t, func(o *agenttest.Options) { o.OldServer = true })
	for _, opts := range [][]agent.Option{nil, {agent.WithGenerations(protocol.Gen02)}} {
		c02, _ := joined(t, old, opts...)
		require.False(t, c02.Confirmed())
		require.Equal(t, protocol.Gen02, c02.Generation())
		_, err = c02.GetFinder(ctxT(t), "alpha", agent.FinderQuery{})
		require.NoError(t, err, "the Finder is core in 0.2.0")
		_, err = c02.ReadResource(ctx, "alpha", "dpe://com.example.docs/rpt-2026")
		requireCode(t, err, protocol.CodeNotSupported)
	}
}

// TestBothErrorShapes: a refusal reads alike nested (0.2.0) and flat
// (0.3/0.4, code-specific members at the top level), whatever the session's
// generation; a flat error keeps its members.
func TestBothErrorShapes(t *testing.T) {
	p := startPeer(t)
	for _, g := range []protocol.Generation{protocol.Gen02, protocol.Gen04} {
		c, _ := joined(t, p, agent.WithGenerations(g))
		p.Reply(protocol.EventGetTools, agenttest.Answer(map[string]any{"error": map[string]any{"code": 404, "message": "no computer named \"alpha\" in this office"}}))
		_, err := c.GetTools(ctxT(t), "alpha")
		requireCode(t, err, protocol.CodeNotFound)

		// The 0.4 references' Computer-not-found and MCP-server-not-found.
		p.Reply(protocol.EventGetTools, agenttest.Answer(map[string]any{"code": 404, "message": "Computer with name 'alpha' not found", "details": map[string]any{"computer_name": "alpha"}}))
		_, err = c.GetTools(ctxT(t), "alpha")
		perr := requireCode(t, err, protocol.CodeNotFound)
		require.Equal(t, "alpha", perr.Details["computer_name"], "%s", g)

		p.Reply(protocol.EventGetConfig, agenttest.Answer(map[string]any{"code": 4014, "message": "MCP server not found", "mcp_server": "docs"}))
		_, err = c.GetConfig(ctxT(t), "alpha")
		perr = requireCode(t, err, protocol.CodeMCPServerNotFound)
		require.Equal(t, "docs", perr.Fields["mcp_server"], "%s", g)
	}
}

// TestToolsKeepBundleIDs: a 0.4 Computer's tools keep their bundle_id, in
// the answer and in the cache, and their exposed names are opaque (called
// as they are); a 0.2 Computer's tools have none.
func TestToolsKeepBundleIDs(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	p.Handle(protocol.EventGetTools, func(_ context.Context, req map[string]any) agenttest.Reply {
		return agenttest.Answer(map[string]any{"req_id": req["req_id"], "tools": []any{
			map[string]any{"name": "fs__read_file", "bundle_id": "fs", "description": "read", "params_schema": map[string]any{"type": "object"}, "return_schema": nil},
			map[string]any{"name": "plain", "description": "0.2", "params_schema": map[string]any{"type": "object"}, "return_schema": nil},
		}})
	})
	tools, err := c.GetTools(ctxT(t), "alpha")
	require.NoError(t, err)
	require.Len(t, tools, 2)
	require.Equal(t, "fs", tools[0].BundleID)
	require.Equal(t, "fs__read_file", tools[0].Name)
	require.Empty(t, tools[1].BundleID)
	cached, ok := c.Tools("alpha")
	require.True(t, ok)
	require.Equal(t, "fs", cached[0].BundleID)

	res, err := c.CallTool(ctxT(t), "alpha", "fs__read_file", nil, time.Second)
	require.NoError(t, err)
	require.NotNil(t, res)
	var sent map[string]any
	for _, r := range p.Received() {
		if r.Event == protocol.EventToolCall {
			sent = r.Payload
		}
	}
	require.Equal(t, "fs__read_file", sent["tool_name"], "the exposed name is sent as it came")
}

// TestResultMarkers: the 0.4 markers of a cancelled or timed-out call are
// read from "meta" before "_meta" and reported as 4004 by ToolError.
func TestResultMarkers(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	for _, tc := range []struct {
		name   string
		result map[string]any
		code   protocol.Code
		cancel string
		timed  bool
	}{
		{"timeout in meta", map[string]any{"content": []any{}, "isError": true, "meta": map[string]any{"a2c_timeout": true}}, protocol.CodeToolTimeout, "", true},
		{"cancel in meta", map[string]any{"content": []any{}, "isError": true, "meta": map[string]any{"a2c_cancelled": true, "a2c_cancel_reason": "agent_requested"}}, protocol.CodeToolTimeout, "agent_requested", false},
		{"meta before _meta", map[string]any{"content": []any{}, "isError": true, "meta": map[string]any{"a2c_timeout": true}, "_meta": map[string]any{"a2c_cancelled": true}}, protocol.CodeToolTimeout, "", true},
		{"0.2 code", map[string]any{"content": []any{map[string]any{"type": "text", "text": "slow"}}, "isError": true, "structuredContent": map[string]any{"code": 4004, "error": "timed out"}}, protocol.CodeToolTimeout, "", false},
		{"plain failure", map[string]any{"content": []any{map[string]any{"type": "text", "text": "boom"}}, "isError": true}, protocol.CodeToolExecutionFailed, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.Reply(protocol.EventToolCall, agenttest.Answer(tc.result))
			res, err := c.CallTool(ctxT(t), "alpha", "echo", nil, time.Second)
			require.NoError(t, err)
			terr := agent.ToolError(res)
			require.NotNil(t, terr)
			require.Equal(t, tc.code, terr.Code, "%v", terr)
			cancelled, reason := res.Cancelled()
			require.Equal(t, tc.cancel != "", cancelled)
			require.Equal(t, tc.cancel, reason)
			require.Equal(t, tc.timed, res.TimedOut())
			if tc.cancel != "" {
				require.Equal(t, tc.cancel, terr.Details[protocol.MetaCancelReason])
			}
		})
	}
}

// TestReconnectionRefused: a Server that refuses a reconnection (its key
// changed) ends the Client with the refusal's code, instead of leaving it
// waiting for a reconnection that never comes.
func TestReconnectionRefused(t *testing.T) {
	p := startPeer(t, func(o *agenttest.Options) { o.APIKey = "k" })
	c, _ := dial(t, p, agent.WithAPIKey("k"))
	addr := p.Addr()
	p.Stop()
	q, err := agenttest.Start(agenttest.Options{Addr: addr, APIKey: "other"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = q.Close() })
	select {
	case <-c.Done():
	case <-time.After(wait):
		t.Fatal("the Client still waits for a reconnection")
	}
	requireCode(t, c.Err(), protocol.CodeUnauthorized)
}
