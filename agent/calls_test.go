package agent_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/agent/internal/peer"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// routedCall is one request of the Client answered with a single ack value
// (client:* events and server:list_room).
type routedCall struct {
	name  string
	event string
	call  func(ctx context.Context, c *agent.Client) error
	// valid is a valid answer other than an ErrorPayload, to test "two
	// values" (two valid values are still wrong).
	valid any
}

func routedCalls() []routedCall {
	return []routedCall{
		{"ListRoom", protocol.EventListRoom, func(ctx context.Context, c *agent.Client) error {
			_, err := c.ListRoom(ctx)
			return err
		}, map[string]any{"sessions": []any{}, "req_id": "x"}},
		{"GetTools", protocol.EventGetTools, func(ctx context.Context, c *agent.Client) error {
			_, err := c.GetTools(ctx, "alpha")
			return err
		}, map[string]any{"tools": []any{}, "req_id": "x"}},
		{"GetConfig", protocol.EventGetConfig, func(ctx context.Context, c *agent.Client) error {
			_, err := c.GetConfig(ctx, "alpha")
			return err
		}, map[string]any{"servers": map[string]any{}}},
		{"GetDesktop", protocol.EventGetDesktop, func(ctx context.Context, c *agent.Client) error {
			_, err := c.GetDesktop(ctx, "alpha", agent.DesktopQuery{})
			return err
		}, map[string]any{"desktops": []any{}, "req_id": "x"}},
		{"GetFinder", protocol.EventGetFinder, func(ctx context.Context, c *agent.Client) error {
			_, err := c.GetFinder(ctx, "alpha", agent.FinderQuery{})
			return err
		}, map[string]any{"documents": []any{}, "total_count": 0, "req_id": "x"}},
		{"ReadResource", protocol.EventReadResource, func(ctx context.Context, c *agent.Client) error {
			_, err := c.ReadResource(ctx, "alpha", "dpe://com.example.docs/rpt-2026")
			return err
		}, map[string]any{"contents": []any{}, "req_id": "x"}},
		{"ReadDocument", protocol.EventReadResource, func(ctx context.Context, c *agent.Client) error {
			_, err := c.ReadDocument(ctx, "alpha", "dpe://com.example.docs/rpt-2026", agent.DocumentQuery{})
			return err
		}, map[string]any{"contents": []any{}, "req_id": "x"}},
		{"CallTool", protocol.EventToolCall, func(ctx context.Context, c *agent.Client) error {
			_, err := c.CallTool(ctx, "alpha", "echo", nil, time.Second)
			return err
		}, map[string]any{"content": []any{}}},
	}
}

// TestRoutedCallsSucceed checks every call against the World's valid
// answers, and that each request carries the agent name and a fresh req_id.
func TestRoutedCallsSucceed(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	for _, rc := range routedCalls() {
		t.Run(rc.name, func(t *testing.T) {
			require.NoError(t, rc.call(ctxT(t), c))
		})
	}
	seen := map[string]bool{}
	for _, r := range p.Received() {
		if r.Event == protocol.EventJoinOffice || r.Event == protocol.EventLeaveOffice {
			require.Equal(t, "tester", r.Payload["name"])
			continue
		}
		require.Equal(t, "tester", r.Payload["agent"], r.Event)
		id, _ := r.Payload["req_id"].(string)
		require.NotEmpty(t, id, r.Event)
		require.False(t, seen[id], "req_id %s reused", id)
		seen[id] = true
		require.True(t, r.Acked, "%s sent without ack", r.Event)
	}
}

// TestRoutedCallsBadAnswers gives every call each kind of broken answer:
// an ErrorPayload is the error it carries; anything malformed is a 500
// matching ErrInvalidAnswer; silence is a 408 — never a panic or a hang.
func TestRoutedCallsBadAnswers(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	type badAnswer struct {
		name    string
		reply   func(rc routedCall) peer.Reply
		check   func(t *testing.T, rc routedCall, err error)
		timeout time.Duration
	}
	invalid := func(t *testing.T, _ routedCall, err error) {
		requireCode(t, err, protocol.CodeInternal)
		require.ErrorIs(t, err, agent.ErrInvalidAnswer)
	}
	cases := []badAnswer{
		{"error payload", func(routedCall) peer.Reply {
			return peer.Answer(map[string]any{"error": map[string]any{"code": 4104, "message": "cross office", "details": map[string]any{"office_id": "o2"}}})
		}, func(t *testing.T, _ routedCall, err error) {
			perr := requireCode(t, err, protocol.CodeCrossRoomAccess)
			require.Equal(t, "cross office", perr.Message)
			require.Equal(t, "o2", perr.Details["office_id"])
			require.ErrorIs(t, err, &protocol.Error{Code: protocol.CodeCrossRoomAccess})
		}, 0},
		{"error payload without message", func(routedCall) peer.Reply {
			return peer.Answer(map[string]any{"error": map[string]any{"code": 404}})
		}, invalid, 0},
		{"wrong shape", func(routedCall) peer.Reply { return peer.Answer(map[string]any{"bogus": true}) }, invalid, 0},
		{"not an object", func(routedCall) peer.Reply { return peer.Answer("fine") }, invalid, 0},
		{"null", func(routedCall) peer.Reply { return peer.Answer(nil) }, invalid, 0},
		{"no values", func(routedCall) peer.Reply { return peer.Values() }, invalid, 0},
		{"two values", func(rc routedCall) peer.Reply { return peer.Values(rc.valid, rc.valid) }, invalid, 0},
		{"no answer", func(routedCall) peer.Reply { return peer.Silent() }, func(t *testing.T, rc routedCall, err error) {
			if rc.event == protocol.EventToolCall {
				require.NoError(t, err, "a tool call that times out is an error result")
				return
			}
			requireCode(t, err, protocol.CodeTimeout)
		}, 300 * time.Millisecond},
	}
	for _, rc := range routedCalls() {
		for _, bc := range cases {
			t.Run(rc.name+"/"+bc.name, func(t *testing.T) {
				p.Reply(rc.event, bc.reply(rc))
				defer p.Handle(rc.event, nil)
				ctx := ctxT(t)
				if bc.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, bc.timeout)
					defer cancel()
				}
				bc.check(t, rc, rc.call(ctx, c))
			})
		}
	}
	// The connection survived all of it.
	_, err := c.GetTools(ctxT(t), "alpha")
	require.NoError(t, err)
}

// TestAnswerWithAnotherReqID: an answer echoing another request's req_id is
// refused.
func TestAnswerWithAnotherReqID(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	p.Reply(protocol.EventGetTools, peer.Answer(map[string]any{"tools": []any{}, "req_id": "someone-else"}))
	_, err := c.GetTools(ctxT(t), "alpha")
	requireCode(t, err, protocol.CodeInternal)
	require.ErrorIs(t, err, agent.ErrInvalidAnswer)
	require.Contains(t, err.Error(), "someone-else")
}

// TestInvalidAnswerListsViolations: the schema violations of a malformed
// answer are kept in the error's details.
func TestInvalidAnswerListsViolations(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	p.Reply(protocol.EventGetFinder, peer.Answer(map[string]any{"documents": []any{map[string]any{"title": 3}}, "total_count": -1, "req_id": "r"}))
	_, err := c.GetFinder(ctxT(t), "alpha", agent.FinderQuery{})
	perr := requireCode(t, err, protocol.CodeInternal)
	require.Contains(t, perr.Message, "/total_count")
	require.Contains(t, perr.Message, "/documents/0")
	require.NotEmpty(t, perr.Details["violations"])
}

// TestBadRequestsFailLocally: a request breaking its schema is a 400 and is
// never sent.
func TestBadRequestsFailLocally(t *testing.T) {
	p := startPeer(t)
	c, _, _ := joinedWithRecorder(t, p) // the join's background sync is over
	before := len(p.Received())
	cases := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"finder negative offset", func(ctx context.Context) error {
			_, err := c.GetFinder(ctx, "alpha", agent.FinderQuery{Offset: -1})
			return err
		}},
		{"finder negative limit", func(ctx context.Context) error {
			_, err := c.GetFinder(ctx, "alpha", agent.FinderQuery{Limit: -5})
			return err
		}},
		{"empty computer", func(ctx context.Context) error {
			_, err := c.GetTools(ctx, "")
			return err
		}},
		{"desktop window not window://", func(ctx context.Context) error {
			_, err := c.GetDesktop(ctx, "alpha", agent.DesktopQuery{Window: "http://x"})
			return err
		}},
		{"empty tool name", func(ctx context.Context) error {
			_, err := c.CallTool(ctx, "alpha", "", nil, time.Second)
			return err
		}},
		{"join empty office", func(ctx context.Context) error { return c.JoinOffice(ctx, "") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireCode(t, tc.call(ctxT(t)), protocol.CodeBadRequest)
		})
	}
	require.Len(t, p.Received(), before, "a bad request reached the server")
}

// TestServerEndsSessionMidRequest: the Server disconnecting the session
// fails the request in flight at once with ErrConnectionLost, and later
// calls too (no reconnection after "io server disconnect").
func TestServerEndsSessionMidRequest(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	p.Reply(protocol.EventGetTools, peer.Reply{Disconnect: true})
	start := time.Now()
	_, err := c.GetTools(ctxT(t), "alpha")
	requireCode(t, err, protocol.CodeInternal)
	require.ErrorIs(t, err, agent.ErrConnectionLost)
	require.Less(t, time.Since(start), 10*time.Second)
	require.Eventually(t, func() bool {
		_, err := c.GetConfig(ctxT(t), "alpha")
		return errors.Is(err, agent.ErrConnectionLost)
	}, wait, 20*time.Millisecond)
	require.False(t, c.Connected())
	select {
	case <-c.Done():
	case <-time.After(wait):
		t.Fatal("Done not closed")
	}
	require.ErrorIs(t, c.Err(), agent.ErrConnectionLost)
}

// TestClientTimeoutOption: WithTimeout bounds requests without a deadline.
func TestClientTimeoutOption(t *testing.T) {
	p := startPeer(t)
	c, lb := joined(t, p, agent.WithTimeout(200*time.Millisecond))
	p.Reply(protocol.EventGetConfig, peer.Silent())
	start := time.Now()
	_, err := c.GetConfig(context.Background(), "alpha")
	if protocol.CodeOf(err) != protocol.CodeTimeout {
		t.Log(lb.String())
	}
	perr := requireCode(t, err, protocol.CodeTimeout)
	require.Contains(t, perr.Message, "client:get_config")
	require.Less(t, time.Since(start), 10*time.Second)
}

// TestCallerCancel: cancelling the context ends the wait with a 408 saying
// so.
func TestCallerCancel(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	p.Reply(protocol.EventGetConfig, peer.Silent())
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_ = p.WaitCount(ctxT(t), protocol.EventGetConfig, 1)
		cancel()
	}()
	_, err := c.GetConfig(ctx, "alpha")
	perr := requireCode(t, err, protocol.CodeTimeout)
	require.Contains(t, perr.Message, "canceled")
}
