package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/agent/agenttest"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// TestReconnectRejoinsOffice restarts the server on the same port: the
// Client reconnects, joins its office again, refreshes its tool cache, and
// a request made during the outage completes once it is back.
func TestReconnectRejoinsOffice(t *testing.T) {
	p := startPeer(t)
	reconnected := make(chan error, 4)
	c, r, _ := joinedWithRecorder(t, p, agent.OnReconnect(func(err error) { reconnected <- err }))

	p.Stop()
	require.Eventually(t, func() bool { return !c.Connected() }, wait, 10*time.Millisecond)

	t.Run("a request with a short deadline fails with 408", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctxT(t), 100*time.Millisecond)
		defer cancel()
		_, err := c.GetTools(ctx, "alpha")
		perr := requireCode(t, err, protocol.CodeTimeout)
		require.Contains(t, perr.Message, "not connected")
	})

	pending := make(chan error, 1)
	go func() {
		_, err := c.GetConfig(ctxT(t), "alpha")
		pending <- err
	}()
	toolsBefore := func() int { r.mu.Lock(); defer r.mu.Unlock(); return r.toolsN }()

	require.NoError(t, p.Restart())
	select {
	case err := <-reconnected:
		require.NoError(t, err)
	case <-time.After(wait):
		t.Fatal("no reconnection")
	}
	require.True(t, c.Connected())
	require.Equal(t, "office-1", c.Office())
	require.NoError(t, <-pending, "the request made during the outage waited for the rejoin")
	select {
	case <-c.Done():
		t.Fatal("Done closed by a reconnection")
	default:
	}

	joins := p.Received(protocol.EventJoinOffice)
	require.Len(t, joins, 2, "joined, then rejoined")
	require.NotEqual(t, joins[0].SID, joins[1].SID, "a new session")
	require.Equal(t, map[string]any{"role": "agent", "name": "tester", "office_id": "office-1"}, joins[1].Payload)
	// The rejoin came before any other request on the new session.
	for _, r := range p.Received() {
		if r.SID == joins[1].SID {
			require.Equal(t, protocol.EventJoinOffice, r.Event)
			break
		}
	}

	r.until(t, "tool cache refresh after the rejoin", func(r *recorder) bool { return r.toolsN >= toolsBefore+2 })
	// One handshake per connection; the client library may repeat a
	// namespace CONNECT (spec/decisions.md), so this is a lower bound.
	require.GreaterOrEqual(t, len(p.Handshakes()), 2)

	// Notifications flow on the new session.
	require.NoError(t, p.Broadcast(protocol.NotifyUpdateFinder, notifyPayload("computer", "alpha")))
	r.until(t, "catalog after reconnect", func(r *recorder) bool { return len(r.finder) == 1 })
}

// joinedThenStopped joins office-1, stops the server and waits until the
// Client has noticed; reconnected receives what OnReconnect reports.
func joinedThenStopped(t *testing.T) (*agenttest.Peer, *agent.Client, *logBuffer, chan error) {
	t.Helper()
	p := startPeer(t)
	reconnected := make(chan error, 4)
	c, lb := joined(t, p, agent.OnReconnect(func(err error) { reconnected <- err }))
	p.Stop()
	require.Eventually(t, func() bool { return !c.Connected() }, wait, 10*time.Millisecond)
	return p, c, lb, reconnected
}

// TestReconnectRejoinRefused: when the office cannot be joined again, the
// Client reports it, forgets the office and stays usable.
func TestReconnectRejoinRefused(t *testing.T) {
	p, c, lb, reconnected := joinedThenStopped(t)
	p.Reply(protocol.EventJoinOffice, agenttest.Values(false, "4101 RoomFull: office-1 already has an agent"))
	// Forget reports of earlier reconnections (a first connection that hit a
	// Socket.IO handshake race is recovered by a reconnection, reported too).
	for len(reconnected) > 0 {
		<-reconnected
	}
	require.NoError(t, p.Restart())
	select {
	case err := <-reconnected:
		requireCode(t, err, protocol.CodeRoomFull)
	case <-time.After(wait):
		t.Fatalf("no reconnection report; log:\n%s", lb.String())
	}
	require.Equal(t, "", c.Office())
	require.True(t, c.Connected())
	require.GreaterOrEqual(t, p.Count(protocol.EventJoinOffice), 5, "the rejoin was retried")
	require.Contains(t, lb.String(), "could not rejoin the office")
	_, err := c.GetTools(ctxT(t), "alpha")
	require.NoError(t, err)
}

// TestReconnectRejoinBusyOffice: a rejoin refused for now (429: the
// office's event budget, spent by every member rejoining after a Server
// restart) is retried past the few tries a lasting refusal gets, and the
// Client is back in its office.
func TestReconnectRejoinBusyOffice(t *testing.T) {
	p, c, lb, reconnected := joinedThenStopped(t)
	var refusals atomic.Int32
	p.Handle(protocol.EventJoinOffice, func(context.Context, map[string]any) agenttest.Reply {
		if refusals.Add(1) <= 6 { // more than the five tries of a lasting refusal
			return agenttest.Values(false, "429 TooManyRequests: office office-1 is over its event budget; retry in a moment")
		}
		return agenttest.Values(true, nil)
	})
	for len(reconnected) > 0 {
		<-reconnected
	}
	require.NoError(t, p.Restart())
	select {
	case err := <-reconnected:
		require.NoError(t, err, "log:\n%s", lb.String())
	case <-time.After(2 * wait):
		t.Fatalf("no reconnection report; log:\n%s", lb.String())
	}
	require.Equal(t, "office-1", c.Office())
	require.Greater(t, refusals.Load(), int32(6), "every refusal was retried")
}

// TestReconnectWithoutOffice: a Client in no office just reconnects.
func TestReconnectWithoutOffice(t *testing.T) {
	p := startPeer(t)
	reconnected := make(chan error, 4)
	c, _ := dial(t, p, agent.OnReconnect(func(err error) { reconnected <- err }))
	p.Stop()
	require.Eventually(t, func() bool { return !c.Connected() }, wait, 10*time.Millisecond)
	require.NoError(t, p.Restart())
	select {
	case err := <-reconnected:
		require.NoError(t, err)
	case <-time.After(wait):
		t.Fatal("no reconnection")
	}
	require.Zero(t, p.Count(protocol.EventJoinOffice))
}

// TestCloseDuringOutage: Close fails a waiting request with ErrClosed.
func TestCloseDuringOutage(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	p.Stop()
	require.Eventually(t, func() bool { return !c.Connected() }, wait, 10*time.Millisecond)
	pending := make(chan error, 1)
	go func() {
		_, err := c.GetTools(ctxT(t), "alpha")
		pending <- err
	}()
	time.Sleep(50 * time.Millisecond) // let it start waiting (the result is the same if not)
	require.NoError(t, c.Close())
	select {
	case err := <-pending:
		require.ErrorIs(t, err, agent.ErrClosed)
		requireCode(t, err, protocol.CodeInternal)
	case <-time.After(wait):
		t.Fatal("Close did not end the waiting request")
	}
}

func TestCloseFailsCallsInFlightAndAfter(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	p.Reply(protocol.EventGetConfig, agenttest.Silent())
	pending := make(chan error, 1)
	go func() {
		_, err := c.GetConfig(ctxT(t), "alpha")
		pending <- err
	}()
	require.NoError(t, p.WaitCount(ctxT(t), protocol.EventGetConfig, 1))
	require.NoError(t, c.Err())
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "Close is idempotent")
	<-c.Done()
	require.ErrorIs(t, c.Err(), agent.ErrClosed)
	err := <-pending
	require.True(t, errors.Is(err, agent.ErrClosed), "%v", err)
	_, err = c.GetTools(ctxT(t), "alpha")
	require.ErrorIs(t, err, agent.ErrClosed)
	require.ErrorIs(t, c.JoinOffice(ctxT(t), "x"), agent.ErrClosed)
	res, err := c.CallTool(ctxT(t), "alpha", "echo", nil, time.Second)
	require.Nil(t, res)
	require.ErrorIs(t, err, agent.ErrClosed)
	require.False(t, c.Connected())
}

// TestRequestRepeatedAfterConnectionDrop: a read interrupted by a dropped
// connection is sent again once the Client has reconnected and rejoined, up
// to three times in all; a tool call is not (it may have run).
func TestRequestRepeatedAfterConnectionDrop(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	drops := 0
	p.Handle(protocol.EventGetConfig, func(ctx context.Context, req map[string]any) agenttest.Reply {
		drops++
		if drops <= 2 {
			return agenttest.Reply{Drop: true}
		}
		return p.World.Handler(protocol.EventGetConfig)(ctx, req)
	})
	cfg, err := c.GetConfig(ctxT(t), "alpha")
	require.NoError(t, err)
	require.Contains(t, cfg.Servers, "docs")
	reqs := p.Received(protocol.EventGetConfig)
	require.Len(t, reqs, 3)
	for i := 1; i < 3; i++ {
		require.NotEqual(t, reqs[i-1].SID, reqs[i].SID, "sent again on the new session")
		require.Equal(t, reqs[0].Payload["req_id"], reqs[i].Payload["req_id"])
	}
	joins := p.Received(protocol.EventJoinOffice)
	require.Len(t, joins, 3, "rejoined before repeating")

	// A connection that drops on every attempt fails the request after the
	// third, with ErrConnectionLost.
	p.Handle(protocol.EventGetDesktop, func(context.Context, map[string]any) agenttest.Reply { return agenttest.Reply{Drop: true} })
	_, err = c.GetDesktop(ctxT(t), "alpha", agent.DesktopQuery{})
	require.ErrorIs(t, err, agent.ErrConnectionLost)
	require.Len(t, p.Received(protocol.EventGetDesktop), 3)

	p.Reply(protocol.EventToolCall, agenttest.Reply{Drop: true})
	_, err = c.CallTool(ctxT(t), "alpha", "echo", nil, time.Second)
	requireCode(t, err, protocol.CodeUnavailable)
	require.ErrorIs(t, err, agent.ErrConnectionLost)
	require.Len(t, p.Received(protocol.EventToolCall), 1)
}

// TestReconnectAfterOutage: attempts made while the Server is down fail at
// once (the upstream Socket.IO client waited for each attempt's timeout,
// sio/third_party/PATCHES.md), so the Client is back soon after the Server is.
func TestReconnectAfterOutage(t *testing.T) {
	p, c, lb, reconnected := joinedThenStopped(t)
	// Let a few attempts hit the closed port.
	require.Eventually(t, func() bool { return strings.Count(lb.String(), "connection attempt failed") >= 2 }, wait, 10*time.Millisecond)
	require.NoError(t, p.Restart())
	back := time.Now()
	select {
	case err := <-reconnected:
		require.NoError(t, err)
	case <-time.After(wait):
		t.Fatalf("no reconnection; log:\n%s", lb.String())
	}
	t.Logf("back %v after the Server", time.Since(back))
	require.Equal(t, "office-1", c.Office())
}
