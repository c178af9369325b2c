package agent_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/agent/internal/peer"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// refusal is an ErrorPayload answer with code and details.
func refusal(code protocol.Code, details map[string]any) peer.Reply {
	e := map[string]any{"code": int(code), "message": "refused for now"}
	if details != nil {
		e["details"] = details
	}
	return peer.Answer(map[string]any{"error": e})
}

// refuseFirst answers n requests of event with r, then the World's answer.
func refuseFirst(p *peer.Peer, event string, n int64, r peer.Reply) *atomic.Int64 {
	var seen atomic.Int64
	p.Handle(event, func(ctx context.Context, req map[string]any) peer.Reply {
		if seen.Add(1) <= n {
			return r
		}
		return p.World.Handler(event)(ctx, req)
	})
	return &seen
}

// TestRetriesRefusalsForNow: a request refused for now (429, 503) is sent
// again after a pause within its deadline, and succeeds once the refusal
// ends; a refusal that lasts is returned at the deadline, a lasting one
// (403) at once. A tool call is sent again only when the Server says it
// did not forward it; otherwise it may have run and the refusal is
// returned after one attempt.
func TestRetriesRefusalsForNow(t *testing.T) {
	notForwarded := map[string]any{"forwarded": false}

	t.Run("request, 429 then 503 then answered", func(t *testing.T) {
		p := startPeer(t)
		c, _ := dial(t, p) // not joined: no fetches of the Client's own
		var mu sync.Mutex
		attempts := map[any]int{} // by req_id
		p.Handle(protocol.EventGetTools, func(ctx context.Context, req map[string]any) peer.Reply {
			mu.Lock()
			attempts[req["req_id"]]++
			n := attempts[req["req_id"]]
			mu.Unlock()
			switch n {
			case 1:
				return refusal(protocol.CodeTooManyRequests, nil)
			case 2:
				return refusal(protocol.CodeUnavailable, nil)
			}
			return p.World.Handler(protocol.EventGetTools)(ctx, req)
		})
		tools, err := c.GetTools(ctxT(t), "alpha")
		require.NoError(t, err)
		require.NotEmpty(t, tools)
		last := p.Received(protocol.EventGetTools)
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, 3, attempts[last[len(last)-1].Payload["req_id"]], "sent three times")
	})

	t.Run("join, 429 then joined", func(t *testing.T) {
		p := startPeer(t)
		c, _ := dial(t, p)
		seen := refuseFirst(p, protocol.EventJoinOffice, 1, peer.Values(false, "429 TooManyRequests: office office-1 is over its event budget"))
		require.NoError(t, c.JoinOffice(ctxT(t), "office-1"))
		require.Equal(t, int64(2), seen.Load())
	})

	t.Run("request, refused until its deadline", func(t *testing.T) {
		p := startPeer(t)
		c, _ := dial(t, p, agent.WithTimeout(time.Second))
		seen := refuseFirst(p, protocol.EventGetTools, 1<<30, refusal(protocol.CodeTooManyRequests, nil))
		_, err := c.GetTools(ctxT(t), "alpha")
		requireCode(t, err, protocol.CodeTooManyRequests)
		require.Greater(t, seen.Load(), int64(1), "sent again before the deadline")
	})

	t.Run("request, lasting refusal", func(t *testing.T) {
		p := startPeer(t)
		c, _ := dial(t, p) // not joined: no fetches of the Client's own
		seen := refuseFirst(p, protocol.EventGetTools, 1<<30, refusal(protocol.CodeForbidden, nil))
		_, err := c.GetTools(ctxT(t), "alpha")
		requireCode(t, err, protocol.CodeForbidden)
		require.Equal(t, int64(1), seen.Load())
	})

	t.Run("tool call refused before it was forwarded", func(t *testing.T) {
		p := startPeer(t)
		c, _ := dial(t, p) // not joined: no fetches of the Client's own
		seen := refuseFirst(p, protocol.EventToolCall, 2, refusal(protocol.CodeTooManyRequests, notForwarded))
		res, err := c.CallTool(ctxT(t), "alpha", "echo", map[string]any{"x": 1}, 10*time.Second)
		require.NoError(t, err)
		require.Nil(t, agent.ToolError(res))
		require.Equal(t, int64(3), seen.Load())
		calls := p.Received(protocol.EventToolCall)
		require.Equal(t, calls[0].Payload["req_id"], calls[2].Payload["req_id"], "the same request")
	})

	for _, tc := range []struct {
		name    string
		code    protocol.Code
		details map[string]any
	}{
		{"tool call refused without saying", protocol.CodeTooManyRequests, nil},
		{"tool call refused after it was forwarded", protocol.CodeUnavailable, map[string]any{"reason": "node_down"}},
		{"tool call refused as forwarded", protocol.CodeUnavailable, map[string]any{"forwarded": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPeer(t)
			c, _ := dial(t, p) // not joined: no fetches of the Client's own
			seen := refuseFirst(p, protocol.EventToolCall, 1<<30, refusal(tc.code, tc.details))
			_, err := c.CallTool(ctxT(t), "alpha", "echo", nil, 10*time.Second)
			requireCode(t, err, tc.code)
			require.Equal(t, int64(1), seen.Load(), "it may have run: never sent again")
			require.Empty(t, p.Received(protocol.EventCancelToolCall))
		})
	}
}
