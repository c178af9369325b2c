package server_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// TestClusterProgress: with the Agent on one node and its Computer on
// another (real redis-server), the Computer's server:tool_progress for a
// tool call or a read that asked for progress is accepted by the
// Computer's node and reaches the Agent as notify:tool_progress, in order,
// before the answer; a report for a request that did not ask, one from
// another Computer, one once the request was answered, is refused on the
// Computer's node (404) and reaches nobody (spec/protocol.md, Tool-call
// progress).
func TestClusterProgress(t *testing.T) {
	r := startRedis(t)
	n := startNodes(t, r, 2)
	c1 := dial(t, n[1].url).mustJoin(protocol.RoleComputer, "c1", "o1")
	c2 := dial(t, n[1].url).mustJoin(protocol.RoleComputer, "c2", "o1")
	a1 := dial(t, n[0].url).mustJoin(protocol.RoleAgent, "a1", "o1")
	a2 := dial(t, n[1].url).mustJoin(protocol.RoleAgent, "a2", "o2")

	calls := make(chan map[string]any, 4)
	reads := make(chan map[string]any, 4)
	held := make(chan func(), 4)
	c1.answerLater(protocol.EventToolCall, calls, held)
	c1.answerLater(protocol.EventReadResource, reads, held)
	answered := make(chan []any, 4)

	t.Run("tool call", func(t *testing.T) {
		go func() { answered <- a1.call(protocol.EventToolCall, toolCall("a1", "c1", "r1", true)) }()
		assert.Equal(t, true, (<-calls)["progress"])
		finish := <-held
		requireError(t, c2.call(protocol.EventToolProgress, progressOf("c2", "a1", "r1", 1)), protocol.CodeNotFound) // routed to c1
		requireError(t, c1.call(protocol.EventToolProgress, progressOf("c1", "a2", "r1", 1)), protocol.CodeNotFound) // another agent's req_id
		for _, p := range []float64{1, 2, 3} {
			c1.emit(protocol.EventToolProgress, progressOf("c1", "a1", "r1", p))
		}
		for _, p := range []float64{1, 2, 3} {
			got := a1.next(protocol.NotifyToolProgress).(map[string]any)
			assert.Equal(t, map[string]any{"computer": "c1", "agent": "a1", "req_id": "r1", "progress": p, "total": 10.0, "message": "working"}, got)
		}
		// A report sent right before the answer reaches the Agent before it.
		c1.emit(protocol.EventToolProgress, progressOf("c1", "a1", "r1", 4))
		finish()
		require.Len(t, <-answered, 1)
		select { // the client's handlers run in order: it was received before the answer
		case args := <-a1.ch(protocol.NotifyToolProgress):
			assert.Equal(t, 4.0, args[0].(map[string]any)["progress"])
		default:
			t.Fatal("the last report did not reach the Agent before the answer")
		}
		// Answered: the Computer's node forgot it.
		requireError(t, c1.call(protocol.EventToolProgress, progressOf("c1", "a1", "r1", 5)), protocol.CodeNotFound)
	})

	t.Run("read", func(t *testing.T) {
		read := map[string]any{"agent": "a1", "computer": "c1", "req_id": "r2", "uri": "dpe://h/doc/pages/0", "progress": true}
		go func() { answered <- a1.call(protocol.EventReadResource, read) }()
		assert.Equal(t, true, (<-reads)["progress"])
		finish := <-held
		c1.emit(protocol.EventToolProgress, progressOf("c1", "a1", "r2", 7))
		got := a1.next(protocol.NotifyToolProgress).(map[string]any)
		assert.Equal(t, map[string]any{"computer": "c1", "agent": "a1", "req_id": "r2", "progress": 7.0, "total": 10.0, "message": "working"}, got)
		finish()
		require.Len(t, <-answered, 1)
	})

	t.Run("a request that did not ask", func(t *testing.T) {
		go func() { answered <- a1.call(protocol.EventToolCall, toolCall("a1", "c1", "r3", false)) }()
		<-calls
		finish := <-held
		requireError(t, c1.call(protocol.EventToolProgress, progressOf("c1", "a1", "r3", 1)), protocol.CodeNotFound)
		finish()
		require.Len(t, <-answered, 1)
	})

	a1.noEvent(protocol.NotifyToolProgress)
	a2.noEvent(protocol.NotifyToolProgress)
	c1.noEvent(protocol.NotifyToolProgress)
	c2.noEvent(protocol.NotifyToolProgress)
}
