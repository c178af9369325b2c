package agent_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/agent/agenttest"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// recorder collects what the notification callbacks receive.
type recorder struct {
	mu      sync.Mutex
	notes   []agent.Notification
	enter   []protocol.EnterOfficeNotification
	leave   []protocol.LeaveOfficeNotification
	tools   map[string][]protocol.SMCPTool
	toolsN  int
	config  []*protocol.GetComputerConfigRet
	desktop [][]string
	finder  []*protocol.GetFinderRet
	cancel  []protocol.CancelToolCallReq
	changed chan struct{}
}

func newRecorder() *recorder {
	return &recorder{tools: map[string][]protocol.SMCPTool{}, changed: make(chan struct{}, 1000)}
}

func (r *recorder) poke() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *recorder) options() []agent.Option {
	return []agent.Option{
		agent.OnNotification(func(n agent.Notification) { r.mu.Lock(); r.notes = append(r.notes, n); r.mu.Unlock(); r.poke() }),
		agent.OnEnterOffice(func(n protocol.EnterOfficeNotification) {
			r.mu.Lock()
			r.enter = append(r.enter, n)
			r.mu.Unlock()
			r.poke()
		}),
		agent.OnLeaveOffice(func(n protocol.LeaveOfficeNotification) {
			r.mu.Lock()
			r.leave = append(r.leave, n)
			r.mu.Unlock()
			r.poke()
		}),
		agent.OnToolsChanged(func(computer string, tools []protocol.SMCPTool) {
			r.mu.Lock()
			r.tools[computer] = tools
			r.toolsN++
			r.mu.Unlock()
			r.poke()
		}),
		agent.OnConfigChanged(func(_ string, cfg *protocol.GetComputerConfigRet) {
			r.mu.Lock()
			r.config = append(r.config, cfg)
			r.mu.Unlock()
			r.poke()
		}),
		agent.OnDesktopChanged(func(_ string, d []string) { r.mu.Lock(); r.desktop = append(r.desktop, d); r.mu.Unlock(); r.poke() }),
		agent.OnFinderChanged(func(_ string, cat *protocol.GetFinderRet) {
			r.mu.Lock()
			r.finder = append(r.finder, cat)
			r.mu.Unlock()
			r.poke()
		}),
		agent.OnToolCallCancel(func(n protocol.CancelToolCallReq) {
			r.mu.Lock()
			r.cancel = append(r.cancel, n)
			r.mu.Unlock()
			r.poke()
		}),
	}
}

// until waits for cond (checked under the lock) to hold.
func (r *recorder) until(t *testing.T, what string, cond func(r *recorder) bool) {
	t.Helper()
	deadline := time.After(wait)
	for {
		r.mu.Lock()
		ok := cond(r)
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func notifyPayload(kv ...string) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// joinedWithRecorder joins office-1 and waits for the initial tool sync.
func joinedWithRecorder(t *testing.T, p *agenttest.Peer, extra ...agent.Option) (*agent.Client, *recorder, *logBuffer) {
	t.Helper()
	r := newRecorder()
	c, lb := joined(t, p, append(r.options(), extra...)...)
	r.until(t, "initial tool sync", func(r *recorder) bool { return r.toolsN >= 2 })
	return c, r, lb
}

func TestNotificationDispatch(t *testing.T) {
	p := startPeer(t)
	gamma := &agenttest.Computer{Name: "gamma", Tools: []protocol.SMCPTool{{Name: "g", Description: "g", ParamsSchema: map[string]any{}}},
		Config: protocol.GetComputerConfigRet{Servers: map[string]protocol.MCPServerConfig{}}}
	c, r, _ := joinedWithRecorder(t, p)

	t.Run("enter_office of a Computer fetches its tools", func(t *testing.T) {
		p.World.Mu.Lock()
		p.World.Computers = append(p.World.Computers, gamma)
		p.World.Mu.Unlock()
		require.NoError(t, p.Broadcast(protocol.NotifyEnterOffice, notifyPayload("office_id", "office-1", "computer", "gamma")))
		r.until(t, "gamma's tools", func(r *recorder) bool { return r.tools["gamma"] != nil })
		r.mu.Lock()
		require.Equal(t, "gamma", *r.enter[0].Computer)
		require.Equal(t, "office-1", r.enter[0].OfficeID)
		r.mu.Unlock()
		tools, ok := c.Tools("gamma")
		require.True(t, ok)
		require.Equal(t, "g", tools[0].Name)
	})
	t.Run("enter_office of an Agent", func(t *testing.T) {
		before := p.Count(protocol.EventGetTools)
		require.NoError(t, p.Broadcast(protocol.NotifyEnterOffice, notifyPayload("office_id", "office-1", "agent", "other")))
		r.until(t, "agent enter", func(r *recorder) bool { return len(r.enter) == 2 })
		r.mu.Lock()
		require.Equal(t, "other", *r.enter[1].Agent)
		require.Nil(t, r.enter[1].Computer)
		r.mu.Unlock()
		require.Equal(t, before, p.Count(protocol.EventGetTools))
	})
	t.Run("update_tool_list refreshes the cache", func(t *testing.T) {
		p.World.Mu.Lock()
		gamma.Tools = append(gamma.Tools, protocol.SMCPTool{Name: "h", Description: "h", ParamsSchema: map[string]any{}})
		p.World.Mu.Unlock()
		require.NoError(t, p.Broadcast(protocol.NotifyUpdateToolList, notifyPayload("computer", "gamma")))
		r.until(t, "two tools", func(r *recorder) bool { return len(r.tools["gamma"]) == 2 })
		tools, _ := c.Tools("gamma")
		require.Len(t, tools, 2)
	})
	t.Run("update_config re-fetches the config and the tools", func(t *testing.T) {
		before := p.Count(protocol.EventGetTools)
		require.NoError(t, p.Broadcast(protocol.NotifyUpdateConfig, notifyPayload("computer", "alpha")))
		r.until(t, "config", func(r *recorder) bool { return len(r.config) == 1 })
		r.mu.Lock()
		require.Contains(t, r.config[0].Servers, "docs")
		r.mu.Unlock()
		require.NoError(t, p.WaitCount(ctxT(t), protocol.EventGetTools, before+1))
	})
	t.Run("update_desktop re-fetches the desktop", func(t *testing.T) {
		require.NoError(t, p.Broadcast(protocol.NotifyUpdateDesktop, notifyPayload("computer", "alpha")))
		r.until(t, "desktop", func(r *recorder) bool { return len(r.desktop) == 1 })
		r.mu.Lock()
		require.Len(t, r.desktop[0], 2)
		r.mu.Unlock()
	})
	t.Run("update_finder re-fetches the catalog", func(t *testing.T) {
		require.NoError(t, p.Broadcast(protocol.NotifyUpdateFinder, notifyPayload("computer", "alpha")))
		r.until(t, "catalog", func(r *recorder) bool { return len(r.finder) == 1 })
		r.mu.Lock()
		require.Equal(t, 2, r.finder[0].TotalCount)
		r.mu.Unlock()
		reqs := p.Received(protocol.EventGetFinder)
		require.Equal(t, "alpha", reqs[len(reqs)-1].Payload["computer"])
		require.Equal(t, float64(agent.FinderRefreshLimit), reqs[len(reqs)-1].Payload["limit"])
	})
	t.Run("tool_call_cancel", func(t *testing.T) {
		require.NoError(t, p.Broadcast(protocol.NotifyCancelToolCall, notifyPayload("agent", "tester", "req_id", "r-1")))
		r.until(t, "cancel", func(r *recorder) bool { return len(r.cancel) == 1 })
		r.mu.Lock()
		require.Equal(t, protocol.CancelToolCallReq{Agent: "tester", ReqID: "r-1"}, r.cancel[0])
		r.mu.Unlock()
	})
	t.Run("leave_office drops the tools", func(t *testing.T) {
		require.NoError(t, p.Broadcast(protocol.NotifyLeaveOffice, notifyPayload("office_id", "office-1", "computer", "gamma")))
		r.until(t, "leave", func(r *recorder) bool { return len(r.leave) == 1 })
		_, ok := c.Tools("gamma")
		require.False(t, ok)
		r.mu.Lock()
		_, still := r.tools["gamma"]
		require.True(t, still)
		require.Nil(t, r.tools["gamma"], "OnToolsChanged(gamma, nil) on leave")
		r.mu.Unlock()
	})
	t.Run("OnNotification saw them all in order", func(t *testing.T) {
		r.mu.Lock()
		defer r.mu.Unlock()
		var events []string
		for _, n := range r.notes {
			events = append(events, n.Event)
		}
		require.Equal(t, []string{protocol.NotifyEnterOffice, protocol.NotifyEnterOffice, protocol.NotifyUpdateToolList,
			protocol.NotifyUpdateConfig, protocol.NotifyUpdateDesktop, protocol.NotifyUpdateFinder,
			protocol.NotifyCancelToolCall, protocol.NotifyLeaveOffice}, events)
		require.Equal(t, agent.Notification{Event: protocol.NotifyCancelToolCall, Agent: "tester", ReqID: "r-1"}, r.notes[6])
		require.Equal(t, agent.Notification{Event: protocol.NotifyLeaveOffice, OfficeID: "office-1", Computer: "gamma"}, r.notes[7])
	})
}

// TestInvalidNotificationsDropped: payloads breaking their schema, or for
// another office, are logged and dropped; nothing else happens.
func TestInvalidNotificationsDropped(t *testing.T) {
	p := startPeer(t)
	c, r, lb := joinedWithRecorder(t, p)
	bad := []struct {
		event   string
		payload any
	}{
		{protocol.NotifyUpdateFinder, map[string]any{}},
		{protocol.NotifyUpdateFinder, map[string]any{"computer": 7}},
		{protocol.NotifyUpdateFinder, map[string]any{"computer": ""}},
		{protocol.NotifyUpdateDesktop, "alpha"},
		{protocol.NotifyUpdateConfig, nil},
		{protocol.NotifyUpdateToolList, []any{"alpha"}},
		{protocol.NotifyEnterOffice, map[string]any{"computer": "alpha"}},
		{protocol.NotifyEnterOffice, map[string]any{"office_id": "office-1"}},
		{protocol.NotifyEnterOffice, map[string]any{"office_id": "office-1", "computer": "a", "agent": "b"}},
		{protocol.NotifyLeaveOffice, map[string]any{"office_id": "office-2", "computer": "alpha"}},
		{protocol.NotifyCancelToolCall, map[string]any{"agent": "tester"}},
	}
	before := len(p.Received())
	for _, b := range bad {
		require.NoError(t, p.Broadcast(b.event, b.payload))
	}
	require.NoError(t, p.Broadcast(protocol.NotifyCancelToolCall, notifyPayload("agent", "tester", "req_id", "sentinel")))
	r.until(t, "the sentinel", func(r *recorder) bool { return len(r.cancel) == 1 })
	r.mu.Lock()
	require.Len(t, r.notes, 1, "only the valid notification got through: %+v", r.notes)
	require.Empty(t, r.leave)
	require.Empty(t, r.finder)
	r.mu.Unlock()
	require.Len(t, p.Received(), before, "no refresh was triggered")
	_, ok := c.Tools("alpha")
	require.True(t, ok, "the bogus leave of another office did not drop alpha")
	require.Contains(t, lb.String(), "invalid notification dropped")
	require.Contains(t, lb.String(), "notification for another office dropped")
	require.Contains(t, lb.String(), "/computer")
}

// TestNotificationCoalescing: a burst of notify:update_finder while a
// refresh is in flight costs that refresh and exactly one more (which
// starts after the last notification, so the result is fresh), not one per
// notification.
func TestNotificationCoalescing(t *testing.T) {
	p := startPeer(t)
	c, r, lb := joinedWithRecorder(t, p)
	release := make(chan struct{})
	p.Handle(protocol.EventGetFinder, func(ctx context.Context, req map[string]any) agenttest.Reply {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return p.World.Handler(protocol.EventGetFinder)(ctx, req)
	})
	// The first notification starts a refresh, held in the peer...
	require.NoError(t, p.Broadcast(protocol.NotifyUpdateFinder, notifyPayload("computer", "alpha")))
	require.NoError(t, p.WaitCount(ctxT(t), protocol.EventGetFinder, 1))
	// ...while the rest of the burst arrives.
	const burst = 50
	for i := 1; i < burst; i++ {
		require.NoError(t, p.Broadcast(protocol.NotifyUpdateFinder, notifyPayload("computer", "alpha")))
	}
	// Another Computer's refresh is independent.
	require.NoError(t, p.Broadcast(protocol.NotifyUpdateFinder, notifyPayload("computer", "beta")))
	r.until(t, "the whole burst dispatched", func(r *recorder) bool { return len(r.notes) == burst+1 })
	require.NoError(t, p.WaitCount(ctxT(t), protocol.EventGetFinder, 2))
	// The client is not stuck meanwhile.
	_, err := c.GetConfig(ctxT(t), "alpha")
	require.NoError(t, err)
	close(release)
	defer func() {
		if t.Failed() {
			t.Logf("finder callbacks %d; get_finder requests %d\n%s", len(r.finder), p.Count(protocol.EventGetFinder), lb.String())
		}
	}()
	r.until(t, "the refreshes", func(r *recorder) bool { return len(r.finder) == 3 })
	byComputer := map[any]int{}
	for _, req := range p.Received(protocol.EventGetFinder) {
		byComputer[req.Payload["computer"]]++
	}
	require.Equal(t, map[any]int{"alpha": 2, "beta": 1}, byComputer)
	// Nothing more is coming.
	_, err = c.GetConfig(ctxT(t), "alpha")
	require.NoError(t, err)
	require.Equal(t, 3, p.Count(protocol.EventGetFinder))
}

// TestCallbacksRunOffTheEventQueue: a callback may call the Client (wait
// for an ack) and may block without blocking other calls.
func TestCallbacksRunOffTheEventQueue(t *testing.T) {
	p := startPeer(t)
	var c *agent.Client
	gotConfig := make(chan error, 1)
	block := make(chan struct{})
	blocked := make(chan struct{})
	var once sync.Once
	c, _ = joined(t, p,
		agent.OnNotification(func(n agent.Notification) {
			switch n.Event {
			case protocol.NotifyUpdateConfig:
				_, err := c.GetConfig(context.Background(), n.Computer)
				gotConfig <- err
			case protocol.NotifyUpdateDesktop:
				once.Do(func() { close(blocked) })
				<-block
			}
		}))
	require.NoError(t, p.Broadcast(protocol.NotifyUpdateConfig, notifyPayload("computer", "alpha")))
	select {
	case err := <-gotConfig:
		require.NoError(t, err)
	case <-time.After(wait):
		t.Fatal("a call inside a callback deadlocked")
	}
	require.NoError(t, p.Broadcast(protocol.NotifyUpdateDesktop, notifyPayload("computer", "alpha")))
	<-blocked
	_, err := c.GetTools(ctxT(t), "alpha")
	require.NoError(t, err, "a blocked callback must not block requests")
	close(block)
}

// TestRefreshFailureIsLogged: a refresh whose answer is malformed logs and
// calls nothing.
func TestRefreshFailureIsLogged(t *testing.T) {
	p := startPeer(t)
	_, r, lb := joinedWithRecorder(t, p)
	p.Reply(protocol.EventGetFinder, agenttest.Answer(map[string]any{"documents": "nope"}))
	require.NoError(t, p.Broadcast(protocol.NotifyUpdateFinder, notifyPayload("computer", "alpha")))
	require.Eventually(t, func() bool { return lb.Contains("refresh after a notification failed") }, wait, 10*time.Millisecond)
	r.mu.Lock()
	require.Empty(t, r.finder)
	r.mu.Unlock()
	require.Contains(t, lb.String(), "invalid answer to client:get_finder")
}

// TestLeaveDuringToolFetch: tools fetched for a Computer that left
// meanwhile are not cached.
func TestLeaveDuringToolFetch(t *testing.T) {
	p := startPeer(t)
	c, r, lb := joinedWithRecorder(t, p)
	release := make(chan struct{})
	var fetching atomic.Bool
	p.Handle(protocol.EventGetTools, func(ctx context.Context, req map[string]any) agenttest.Reply {
		fetching.Store(true)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return p.World.Handler(protocol.EventGetTools)(ctx, req)
	})
	require.NoError(t, p.Broadcast(protocol.NotifyUpdateToolList, notifyPayload("computer", "alpha")))
	require.Eventually(t, fetching.Load, wait, 5*time.Millisecond)
	require.NoError(t, p.Broadcast(protocol.NotifyLeaveOffice, notifyPayload("office_id", "office-1", "computer", "alpha")))
	r.until(t, "leave", func(r *recorder) bool { return len(r.leave) == 1 })
	close(release)
	require.Eventually(t, func() bool { return lb.Contains("tools discarded") }, wait, 5*time.Millisecond)
	_, ok := c.Tools("alpha")
	require.False(t, ok)
	require.Equal(t, []string{"beta"}, c.CachedComputers())
}
