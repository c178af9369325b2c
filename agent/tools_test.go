package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/agent/internal/peer"
	"github.com/a2c-smcp/smcp-go/protocol"
)

func TestCallTool(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	cases := []struct {
		name     string
		tool     string
		params   map[string]any
		timeout  time.Duration
		wantText string
		wantErr  protocol.Code // of ToolError; 0 = success
		wireSecs float64
	}{
		{"echo", "echo", map[string]any{"x": 1.0, "s": "é"}, 5 * time.Second, `{"s":"é","x":1}`, 0, 5},
		{"nil params are {}", "echo", nil, 0, `{}`, 0, 60},
		{"timeout rounds up to seconds", "echo", map[string]any{}, 1500 * time.Millisecond, `{}`, 0, 2},
		{"sub-second timeout is one second", "echo", map[string]any{}, time.Millisecond, `{}`, 0, 1},
		{"tool failure is a result", "fail", nil, time.Second, "the tool failed on purpose", protocol.CodeToolExecutionFailed, 1},
		{"unknown tool is a result", "nope", nil, time.Second, "tool nope not found", protocol.CodeToolNotFound, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.CallTool(ctxT(t), "alpha", tc.tool, tc.params, tc.timeout)
			require.NoError(t, err)
			require.NotEmpty(t, res.Content)
			require.Equal(t, tc.wantText, *res.Content[0].Text)
			if tc.wantErr == 0 {
				require.Nil(t, agent.ToolError(res))
			} else {
				perr := agent.ToolError(res)
				require.NotNil(t, perr)
				require.Equal(t, tc.wantErr, perr.Code)
				require.Equal(t, tc.wantText, perr.Message)
			}
			calls := p.Received(protocol.EventToolCall)
			last := calls[len(calls)-1].Payload
			require.Equal(t, tc.wireSecs, last["timeout"])
			require.Equal(t, tc.tool, last["tool_name"])
			require.Equal(t, "alpha", last["computer"])
		})
	}
	t.Run("refusal by the server is an error", func(t *testing.T) {
		_, err := c.CallTool(ctxT(t), "ghost", "echo", nil, time.Second)
		requireCode(t, err, protocol.CodeNotFound)
		require.Empty(t, p.Received(protocol.EventCancelToolCall))
	})
}

// TestCallToolTimeoutCancels: no answer within the deadline sends
// server:tool_call_cancel with the call's req_id and returns a 408 error
// result; the Server's own 408 answer does the same.
func TestCallToolTimeoutCancels(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, p *peer.Peer, c *agent.Client) (*protocol.CallToolResult, error)
	}{
		{"context deadline", func(t *testing.T, p *peer.Peer, c *agent.Client) (*protocol.CallToolResult, error) {
			ctx, cancel := context.WithTimeout(ctxT(t), 300*time.Millisecond)
			defer cancel()
			return c.CallTool(ctx, "alpha", "slow", nil, 30*time.Second)
		}},
		{"tool timeout plus grace", func(t *testing.T, p *peer.Peer, c *agent.Client) (*protocol.CallToolResult, error) {
			start := time.Now()
			res, err := c.CallTool(ctxT(t), "alpha", "slow", nil, time.Second)
			require.GreaterOrEqual(t, time.Since(start), time.Second+agent.ToolCallGrace-50*time.Millisecond)
			return res, err
		}},
		{"server answers 408", func(t *testing.T, p *peer.Peer, c *agent.Client) (*protocol.CallToolResult, error) {
			p.Reply(protocol.EventToolCall, peer.Fail(protocol.CodeTimeout, "computer alpha did not answer within 35s"))
			defer p.Handle(protocol.EventToolCall, nil)
			return c.CallTool(ctxT(t), "alpha", "slow", nil, 30*time.Second)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := startPeer(t)
			c, _ := joined(t, p)
			res, err := tc.run(t, p, c)
			require.NoError(t, err)
			require.NotNil(t, res)
			require.True(t, *res.IsError)
			perr := agent.ToolError(res)
			require.Equal(t, protocol.CodeTimeout, perr.Code)
			require.Equal(t, "Timeout", perr.Details["error_type"])
			require.Contains(t, *res.Content[0].Text, "timed out")
			require.Contains(t, *res.Content[0].Text, "cancel sent")

			require.NoError(t, p.WaitCount(ctxT(t), protocol.EventCancelToolCall, 1))
			call := p.Received(protocol.EventToolCall)[0]
			cancel := p.Received(protocol.EventCancelToolCall)[0]
			require.Equal(t, map[string]any{"agent": "tester", "req_id": call.Payload["req_id"]}, cancel.Payload)
			require.False(t, cancel.Acked, "server:tool_call_cancel has no ack")
			require.Equal(t, call.Payload["req_id"], res.StructuredContent["req_id"])
			// The result validates as a CallToolResult.
			require.NoError(t, protocol.ValidateValue(protocol.EventToolCall, protocol.Ack, mustJSON(t, res)))
		})
	}
}

func TestToolError(t *testing.T) {
	yes, no := true, false
	text := "boom"
	cases := []struct {
		name string
		res  *protocol.CallToolResult
		want *protocol.Error
	}{
		{"nil", nil, nil},
		{"success", &protocol.CallToolResult{IsError: &no}, nil},
		{"no isError", &protocol.CallToolResult{}, nil},
		{"structured code", &protocol.CallToolResult{IsError: &yes, StructuredContent: map[string]any{"code": 4004.0, "error": "too slow", "error_type": "ToolTimeout"}},
			&protocol.Error{Code: 4004, Message: "too slow", Details: map[string]any{"error_type": "ToolTimeout"}}},
		{"python-style, no code", &protocol.CallToolResult{IsError: &yes, StructuredContent: map[string]any{"error": "ValueError: x", "error_type": "ValueError"}},
			&protocol.Error{Code: 4003, Message: "ValueError: x", Details: map[string]any{"error_type": "ValueError"}}},
		{"text only", &protocol.CallToolResult{IsError: &yes, Content: []protocol.ContentBlock{{Type: "text", Text: &text}}},
			&protocol.Error{Code: 4003, Message: "boom"}},
		{"nothing at all", &protocol.CallToolResult{IsError: &yes}, &protocol.Error{Code: 4003, Message: "tool call failed"}},
		{"fractional code ignored", &protocol.CallToolResult{IsError: &yes, StructuredContent: map[string]any{"code": 1.5}},
			&protocol.Error{Code: 4003, Message: "tool call failed"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, agent.ToolError(tc.res))
		})
	}
}

// TestToolCache: GetTools fills the cache; joining fills it for every
// Computer of the office.
func TestToolCache(t *testing.T) {
	p := startPeer(t)
	done := make(chan string, 10)
	c, _ := joined(t, p, agent.OnToolsChanged(func(computer string, tools []protocol.SMCPTool) {
		done <- computer
	}))
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case name := <-done:
			got[name] = true
		case <-time.After(wait):
			t.Fatal("the tool cache was not filled after joining")
		}
	}
	require.Equal(t, []string{"alpha", "beta"}, c.CachedComputers())
	tools, ok := c.Tools("alpha")
	require.True(t, ok)
	require.Len(t, tools, 3)
	_, ok = c.Tools("ghost")
	require.False(t, ok)

	require.NoError(t, c.LeaveOffice(ctxT(t)))
	require.Empty(t, c.CachedComputers())
	_, err := c.GetTools(ctxT(t), "beta")
	require.NoError(t, err)
	require.Equal(t, []string{"beta"}, c.CachedComputers())
}

// TestCancelOnTheWireBeforeClose: a Client that gives up on a tool call
// and closes at once (a CLI exiting) has written the cancel before Close
// returns, every time: the peer receives it although the connection's
// namespace DISCONNECT and close follow right behind (issue 24).
func TestCancelOnTheWireBeforeClose(t *testing.T) {
	p := startPeer(t)
	const rounds = 20
	for i := range rounds {
		c, _ := dial(t, p)
		require.NoError(t, c.JoinOffice(ctxT(t), "office-1"))
		ctx, cancel := context.WithTimeout(ctxT(t), 50*time.Millisecond)
		res, err := c.CallTool(ctx, "alpha", "slow", nil, 30*time.Second)
		cancel()
		require.NoError(t, err)
		require.Equal(t, protocol.CodeTimeout, agent.ToolError(res).Code)
		require.NoError(t, c.Close())
		require.NoError(t, p.WaitCount(ctxT(t), protocol.EventCancelToolCall, i+1), "round %d", i)
	}
}
