package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// TestHostileOfficeFanOut: every member of an office at its own event rate
// made the Server send the office's members' count times more: fifteen
// Computers announcing updates of every kind as fast as they can reach the
// Agent (and each other) forty times a second each, each notification
// written to every other member. An office's events share one budget
// (four sessions' worth): the updates wait for it, folded, and joins over
// it are answered 429, while another office carries on.
func TestHostileOfficeFanOut(t *testing.T) {
	const rate, computers = 8, 15
	ts := startServer(t, server.WithMaxEventRate(rate))
	other, ocs := office(t, ts, "o2", "a2", "c2")
	ocs[0].answer(protocol.EventGetTools, toolsAnswer)

	var cs []*rawConn
	for i := range computers {
		c := dialRaw(t, ts.url)
		require.Equal(t, []any{true, nil}, c.call(1, protocol.EventJoinOffice, map[string]any{"role": "computer", "name": fmt.Sprint("k", i), "office_id": "o1"}))
		cs = append(cs, c)
	}
	agent := dialRaw(t, ts.url)
	require.Equal(t, []any{true, nil}, agent.call(1, protocol.EventJoinOffice, map[string]any{"role": "agent", "name": "a1", "office_id": "o1"}))

	updates, readDone := countUpdates(agent)
	stop, flooded := make(chan struct{}), make(chan int, 1)
	start := time.Now()
	go func() { flooded <- floodUpdates(cs, stop, 0) }()
	require.True(t, eventually(func() bool { return updates.Load() > 0 }), "the Agent receives updates")

	// While the flood goes on, the office's budget is spent: a join is
	// refused with 429 naming the office's bound (one may find a token
	// the flood has not taken yet: the next one is tried); another office
	// carries on.
	var refused []any
	for i := 0; refused == nil; i++ {
		require.Less(t, i, 200, "no join was refused while the office's budget was spent")
		late := dialRaw(t, ts.url)
		if vals := late.call(1, protocol.EventJoinOffice, map[string]any{"role": "computer", "name": fmt.Sprint("late", i), "office_id": "o1"}); vals[0] == false {
			refused = vals
		}
	}
	require.Contains(t, refused[1], "429 TooManyRequests")
	require.Contains(t, refused[1], `office "o1"`)
	require.Equal(t, "meanwhile", other.call(protocol.EventGetTools, getTools("a2", "c2", "meanwhile"))[0].(map[string]any)["req_id"])

	got := updates.Load()
	elapsed := time.Since(start)
	close(stop)
	sent := <-flooded
	// The office's budget: 4×rate a second, bursts of 8×rate (the bucket
	// holds no more when the flood begins); a second's slack for the
	// reading.
	bound := int64(8*rate + 4*rate*(elapsed+time.Second)/time.Second)
	t.Logf("%d updates sent in %v; the Agent had received %d notifications (bound %d)", sent, elapsed.Round(time.Millisecond), got, bound)
	require.LessOrEqual(t, got, bound, "an office's notifications are not bounded by its budget")
	_ = agent.ws.Close()
	<-readDone
}

// TestHostileCancelPayload: a cancel's members beyond agent and req_id
// (which its schema does not forbid) were broadcast with it, so one 1 MB
// cancel made the Server write 1 MB to every other member of the office,
// and a few of them closed every Computer over its outgoing bound. The
// notification carries agent and req_id only, as the reference Server's
// (it validates the payload as AgentCallData, which drops the rest).
func TestHostileCancelPayload(t *testing.T) {
	const computers, cancels = 8, 5
	ts := startServer(t)
	var cs []*rawConn
	for i := range computers {
		c := dialRaw(t, ts.url)
		require.Equal(t, []any{true, nil}, c.call(1, protocol.EventJoinOffice, map[string]any{"role": "computer", "name": fmt.Sprint("k", i), "office_id": "o1"}))
		cs = append(cs, c)
	}
	a := dialRaw(t, ts.url)
	require.Equal(t, []any{true, nil}, a.call(1, protocol.EventJoinOffice, map[string]any{"role": "agent", "name": "a1", "office_id": "o1"}))
	pad := strings.Repeat("p", 1<<20)
	for i := range cancels {
		require.Empty(t, a.call(10+i, protocol.EventCancelToolCall, map[string]any{"agent": "a1", "req_id": fmt.Sprint("r", i), "pad": pad}))
	}
	var got int
	for _, c := range cs {
		for i := 0; i < cancels; {
			m := c.read()
			if !strings.Contains(m, protocol.NotifyCancelToolCall) {
				continue
			}
			got += len(m)
			require.Less(t, len(m), 1024, "the cancel notification carries the padding")
			var vals []any
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(m, "42"+protocol.Namespace+",")), &vals))
			require.Equal(t, map[string]any{"agent": "a1", "req_id": fmt.Sprint("r", i)}, vals[1])
			i++
		}
	}
	t.Logf("%d cancels of 1 MB to an office of %d Computers: %d bytes of notifications written", cancels, computers, got)
}

// TestHostileOfficeFanOutCluster: in a cluster a node does not know the
// members of an office on other nodes, so a Computer alone on its node was
// outside any office budget: two Computers, each alone on its node,
// flooding updates to their Agent on a third. Each node's budget now
// counts its members' events whenever the node is part of a cluster.
func TestHostileOfficeFanOutCluster(t *testing.T) {
	const rate, attack = 2, 2 * time.Second
	r := startRedis(t)
	n := startNodes(t, r, 3, server.WithMaxEventRate(rate))
	agent := dialRaw(t, n[0].url)
	require.Equal(t, []any{true, nil}, agent.call(1, protocol.EventJoinOffice, map[string]any{"role": "agent", "name": "a1", "office_id": "o1"}))
	var cs []*rawConn
	for i := 1; i <= 2; i++ {
		c := dialRaw(t, n[i].url)
		require.Equal(t, []any{true, nil}, c.call(1, protocol.EventJoinOffice, map[string]any{"role": "computer", "name": fmt.Sprint("k", i), "office_id": "o1"}))
		cs = append(cs, c)
	}
	for range cs {
		require.Contains(t, agent.read(), protocol.NotifyEnterOffice)
	}

	updates, readDone := countUpdates(agent)
	stop := make(chan struct{})
	time.AfterFunc(attack, func() { close(stop) })
	start := time.Now()
	floodUpdates(cs, stop, 1)
	got, elapsed := updates.Load(), time.Since(start)
	// Two nodes' budgets (4×rate a second, bursts of 8×rate each), a
	// second's slack; without them, 40 a second per Computer.
	bound := 2 * int64(8*rate+4*rate*(elapsed+time.Second)/time.Second)
	t.Logf("two lone Computers flooding updates for %v: the Agent received %d notifications (bound %d)", elapsed.Round(time.Millisecond), got, bound)
	require.LessOrEqual(t, got, bound)
	_ = agent.ws.Close()
	<-readDone
}

// countUpdates counts the notify:update_* messages r reads, on a goroutine
// of its own, until r's connection closes; done is closed then.
func countUpdates(r *rawConn) (n *atomic.Int64, done chan struct{}) {
	n, done = new(atomic.Int64), make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, b, err := r.ws.ReadMessage()
			if err != nil {
				return
			}
			if strings.Contains(string(b), `"notify:update_`) {
				n.Add(1)
			}
		}
	}()
	return n, done
}

// floodUpdates has every Computer of cs send each kind of update, naming
// the Computer k<first+i>, every 5 ms until stop is closed; it returns how
// many it sent.
func floodUpdates(cs []*rawConn, stop <-chan struct{}, first int) (sent int) {
	kinds := []string{protocol.EventUpdateConfig, protocol.EventUpdateToolList, protocol.EventUpdateDesktop, protocol.EventUpdateFinder}
	for {
		select {
		case <-stop:
			return sent
		case <-time.After(5 * time.Millisecond):
		}
		for i, c := range cs {
			for _, k := range kinds {
				msg := fmt.Sprintf(`42%s,["%s",{"computer":"k%d"}]`, protocol.Namespace, k, first+i)
				if c.ws.WriteMessage(websocket.TextMessage, []byte(msg)) != nil {
					return sent // closed: the Server's outgoing bound, or the test's end
				}
				sent++
			}
		}
	}
}
