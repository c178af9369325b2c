package agent_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/agent/agenttest"
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

// TestCallToolTimeoutCancels: a tool call the Agent stops waiting for —
// context deadline, cancellation, tool timeout plus grace — and one the
// Server answers 408 send server:tool_call_cancel with the call's req_id
// and return a 408 error (never a result): wrapping the context's error in
// the first three cases, neither in the last.
func TestCallToolTimeoutCancels(t *testing.T) {
	cases := []struct {
		name  string
		cause error // wrapped by the error; nil: none of the context errors
		run   func(t *testing.T, p *agenttest.Peer, c *agent.Client) (*protocol.CallToolResult, error)
	}{
		{"context deadline", context.DeadlineExceeded, func(t *testing.T, p *agenttest.Peer, c *agent.Client) (*protocol.CallToolResult, error) {
			ctx, cancel := context.WithTimeout(ctxT(t), 300*time.Millisecond)
			defer cancel()
			return c.CallTool(ctx, "alpha", "slow", nil, 30*time.Second)
		}},
		{"canceled by the caller", context.Canceled, func(t *testing.T, p *agenttest.Peer, c *agent.Client) (*protocol.CallToolResult, error) {
			ctx, cancel := context.WithCancel(ctxT(t))
			defer cancel()
			go func() {
				// Cancel once the call has reached the Computer.
				if p.WaitCount(ctx, protocol.EventToolCall, 1) == nil {
					cancel()
				}
			}()
			return c.CallTool(ctx, "alpha", "slow", nil, 30*time.Second)
		}},
		{"tool timeout plus grace", context.DeadlineExceeded, func(t *testing.T, p *agenttest.Peer, c *agent.Client) (*protocol.CallToolResult, error) {
			start := time.Now()
			res, err := c.CallTool(ctxT(t), "alpha", "slow", nil, time.Second)
			require.GreaterOrEqual(t, time.Since(start), time.Second+agent.ToolCallGrace-50*time.Millisecond)
			return res, err
		}},
		{"server answers 408", nil, func(t *testing.T, p *agenttest.Peer, c *agent.Client) (*protocol.CallToolResult, error) {
			p.Reply(protocol.EventToolCall, agenttest.Fail(protocol.CodeTimeout, "computer alpha did not answer within 35s"))
			defer p.Handle(protocol.EventToolCall, nil)
			return c.CallTool(ctxT(t), "alpha", "slow", nil, 30*time.Second)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := startPeer(t)
			c, _ := joined(t, p)
			res, err := tc.run(t, p, c)
			require.Nil(t, res, "an abandoned call is an error, not a result")
			perr := requireCode(t, err, protocol.CodeTimeout)
			if tc.cause != nil {
				require.ErrorIs(t, err, tc.cause)
			} else {
				require.NotErrorIs(t, err, context.DeadlineExceeded)
				require.NotErrorIs(t, err, context.Canceled)
			}

			require.NoError(t, p.WaitCount(ctxT(t), protocol.EventCancelToolCall, 1))
			call := p.Received(protocol.EventToolCall)[0]
			cancel := p.Received(protocol.EventCancelToolCall)[0]
			require.Equal(t, map[string]any{"agent": "tester", "req_id": call.Payload["req_id"]}, cancel.Payload)
			require.False(t, cancel.Acked, "server:tool_call_cancel has no ack")
			require.Equal(t, call.Payload["req_id"], perr.Details["req_id"])
			require.Equal(t, true, perr.Details["cancel_sent"])
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
		_, err := c.CallTool(ctx, "alpha", "slow", nil, 30*time.Second)
		cancel()
		requireCode(t, err, protocol.CodeTimeout)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.NoError(t, c.Close())
		require.NoError(t, p.WaitCount(ctxT(t), protocol.EventCancelToolCall, i+1), "round %d", i)
	}
}

// TestWaitTools: right after JoinOffice the tool cache may still be empty;
// WaitTools waits for the sync, for a Computer entering the office, and
// for a condition on its tools; it ends with the context or the Client.
func TestWaitTools(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	ctx := ctxT(t)

	tools, err := c.WaitTools(ctx, "alpha", nil)
	require.NoError(t, err)
	require.NotEmpty(t, tools)
	cached, ok := c.Tools("alpha")
	require.True(t, ok)
	require.Equal(t, tools, cached)

	// A Computer not yet in the office: WaitTools returns once it entered
	// and its tools were fetched, with the tool asked for.
	got := make(chan []protocol.SMCPTool, 1)
	errs := make(chan error, 1)
	go func() {
		ts, err := c.WaitTools(ctx, "gamma", func(ts []protocol.SMCPTool) bool {
			return slices.ContainsFunc(ts, func(t protocol.SMCPTool) bool { return t.Name == "g" })
		})
		got <- ts
		errs <- err
	}()
	gamma := &agenttest.Computer{Name: "gamma", Tools: []protocol.SMCPTool{{Name: "g", Description: "g", ParamsSchema: map[string]any{}}},
		Config: protocol.GetComputerConfigRet{Servers: map[string]protocol.MCPServerConfig{}}}
	p.World.Mu.Lock()
	p.World.Computers = append(p.World.Computers, gamma)
	p.World.Mu.Unlock()
	require.NoError(t, p.Broadcast(protocol.NotifyEnterOffice, map[string]any{"office_id": "office-1", "computer": "gamma"}))
	require.NoError(t, <-errs)
	require.Equal(t, "g", (<-got)[0].Name)

	// The context ends first: a 408 that wraps it.
	short, cancel := context.WithCancel(ctx)
	cancel()
	_, err = c.WaitTools(short, "nobody", nil)
	requireCode(t, err, protocol.CodeTimeout)
	require.ErrorIs(t, err, context.Canceled)

	// Close, before or during the wait, ends it with ErrClosed.
	go c.Close()
	_, err = c.WaitTools(ctx, "nobody", nil)
	require.ErrorIs(t, err, agent.ErrClosed)
}
