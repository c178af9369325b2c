package server_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/sio/third_party/types"
	"github.com/zishang520/socket.io/servers/socket/v3"
)

func toolCall(agent, computer, reqID string, progress bool) map[string]any {
	m := map[string]any{"agent": agent, "computer": computer, "req_id": reqID, "tool_name": "t", "params": map[string]any{}, "timeout": 30}
	if progress {
		m["progress"] = true
	}
	return m
}

func progressOf(computer, agent, reqID string, p float64) map[string]any {
	return map[string]any{"computer": computer, "agent": agent, "req_id": reqID, "progress": p, "total": 10.0, "message": "working"}
}

// TestToolProgressRelayedToTheCallerOnly: a Computer's server:tool_progress
// for a call routed to it that asked for progress reaches the Agent that made
// the call as notify:tool_progress, and no other session (the office's
// Computers, an Agent elsewhere); a
// report for a call that did not ask, that is not in flight, that was routed
// to another Computer, or from a sender that is not the call's Computer, is
// refused and reaches nobody (spec/protocol.md, Tool-call progress).
func TestToolProgressRelayedToTheCallerOnly(t *testing.T) {
	ts := startServer(t)
	a1, cs := office(t, ts, "o1", "a1", "c1", "c2")
	c1, c2 := cs[0], cs[1]
	a2 := dial(t, ts.url).mustJoin(protocol.RoleAgent, "a2", "o2") // an office has one Agent

	calls := make(chan map[string]any, 4)
	held := make(chan func(), 4)
	// Answered by hand: the call stays in flight while it reports.
	c1.answerLater(protocol.EventToolCall, calls, held)

	answered := make(chan []any, 2)
	go func() { answered <- a1.call(protocol.EventToolCall, toolCall("a1", "c1", "r1", true)) }()
	req := <-calls
	assert.Equal(t, true, req["progress"], "the Computer sees the request as the Agent sent it")
	finish := <-held

	// Before any report: refusals.
	requireError(t, c2.call(protocol.EventToolProgress, progressOf("c2", "a1", "r1", 1)), protocol.CodeNotFound)  // routed to c1, not c2
	requireError(t, c2.call(protocol.EventToolProgress, progressOf("c1", "a1", "r1", 1)), protocol.CodeForbidden) // names another computer
	requireError(t, a2.call(protocol.EventToolProgress, progressOf("c1", "a1", "r1", 1)), protocol.CodeForbidden) // an Agent
	requireError(t, c1.call(protocol.EventToolProgress, progressOf("c1", "a2", "r1", 1)), protocol.CodeNotFound)  // another agent's req_id
	requireError(t, c1.call(protocol.EventToolProgress, map[string]any{"computer": "c1", "agent": "a1", "req_id": "r1"}), protocol.CodeBadRequest)

	// The report.
	c1.emit(protocol.EventToolProgress, progressOf("c1", "a1", "r1", 3))
	got := a1.next(protocol.NotifyToolProgress).(map[string]any)
	assert.Equal(t, map[string]any{"computer": "c1", "agent": "a1", "req_id": "r1", "progress": 3.0, "total": 10.0, "message": "working"}, got)

	finish()
	vals := <-answered
	require.Len(t, vals, 1)
	a2.noEvent(protocol.NotifyToolProgress)
	c2.noEvent(protocol.NotifyToolProgress)
	c1.noEvent(protocol.NotifyToolProgress)

	// Once answered, the call is no longer in flight.
	requireError(t, c1.call(protocol.EventToolProgress, progressOf("c1", "a1", "r1", 4)), protocol.CodeNotFound)

	// A call that did not ask for progress gets none.
	go func() { answered <- a1.call(protocol.EventToolCall, toolCall("a1", "c1", "r2", false)) }()
	<-calls
	finish = <-held
	requireError(t, c1.call(protocol.EventToolProgress, progressOf("c1", "a1", "r2", 1)), protocol.CodeForbidden)
	finish()
	<-answered
	a1.noEvent(protocol.NotifyToolProgress)
}

// TestReadProgressRelayedToTheCallerOnly: a client:read_resource that asked
// for progress is matched by server:tool_progress as a tool call is (same
// event, same checks); a read that did not ask, or is no longer in flight,
// is refused (spec/protocol.md, Tool-call progress).
func TestReadProgressRelayedToTheCallerOnly(t *testing.T) {
	ts := startServer(t)
	a1, cs := office(t, ts, "o1", "a1", "c1", "c2")
	c1, c2 := cs[0], cs[1]
	reads := make(chan map[string]any, 4)
	held := make(chan func(), 4)
	c1.answerLater(protocol.EventReadResource, reads, held)
	read := func(reqID string, progress bool) map[string]any {
		m := map[string]any{"agent": "a1", "computer": "c1", "req_id": reqID, "uri": "dpe://h/doc/pages/0"}
		if progress {
			m["progress"] = true
		}
		return m
	}

	answered := make(chan []any, 2)
	go func() { answered <- a1.call(protocol.EventReadResource, read("r1", true)) }()
	req := <-reads
	assert.Equal(t, true, req["progress"])
	finish := <-held
	requireError(t, c2.call(protocol.EventToolProgress, progressOf("c2", "a1", "r1", 1)), protocol.CodeNotFound)
	c1.emit(protocol.EventToolProgress, progressOf("c1", "a1", "r1", 2))
	got := a1.next(protocol.NotifyToolProgress).(map[string]any)
	assert.Equal(t, map[string]any{"computer": "c1", "agent": "a1", "req_id": "r1", "progress": 2.0, "total": 10.0, "message": "working"}, got)
	finish()
	require.Len(t, <-answered, 1)
	requireError(t, c1.call(protocol.EventToolProgress, progressOf("c1", "a1", "r1", 3)), protocol.CodeNotFound)
	c2.noEvent(protocol.NotifyToolProgress)

	go func() { answered <- a1.call(protocol.EventReadResource, read("r2", false)) }()
	<-reads
	finish = <-held
	requireError(t, c1.call(protocol.EventToolProgress, progressOf("c1", "a1", "r2", 1)), protocol.CodeForbidden)
	finish()
	<-answered
	a1.noEvent(protocol.NotifyToolProgress)
}

// answerLater installs a Computer handler for ev that hands each request to
// reqs and the function that answers it (a valid CallToolResult, or
// ReadResourceRet for client:read_resource) to held, for the test to call;
// the handler returns at once (the client library runs every socket's
// handlers on one queue).
func (p *peer) answerLater(ev string, reqs chan<- map[string]any, held chan<- func()) {
	_ = p.sock.On(types.EventName(ev), func(args ...any) {
		if len(args) < 2 {
			return
		}
		ack, ok := args[len(args)-1].(socket.Ack)
		if !ok {
			return
		}
		req, _ := args[0].(map[string]any)
		reqs <- req
		answer := map[string]any{"content": []any{}, "isError": false}
		if ev == protocol.EventReadResource {
			answer = map[string]any{"contents": []any{}, "req_id": req["req_id"]}
		}
		held <- func() { ack([]any{answer}, nil) }
	})
}

// TestCompleteRouted: client:complete is routed as every client:* request,
// in both generations, only to a Computer that answers it: a 0.4 Computer
// that declared it, a 0.2.0 Computer that declared nothing (as every
// smcp-go Computer before declarations); one that did not is 4106 at once,
// and the request's schema is checked (spec/finder.md, Completion).
func TestCompleteRouted(t *testing.T) {
	ts := startServer(t)
	c4 := memberGen(t, ts.url, "0.4.0", protocol.RoleComputer, "c4", "o1", []string{protocol.EventComplete})
	memberGen(t, ts.url, "0.4.0", protocol.RoleComputer, "ref", "o1", nil)
	c2 := memberGen(t, ts.url, "", protocol.RoleComputer, "c2", "o1", nil)
	a := memberGen(t, ts.url, "0.4.0", protocol.RoleAgent, "a1", "o1", nil)
	complete := func(computer, reqID string) map[string]any {
		return agentCall(computer, reqID, map[string]any{
			"ref":      map[string]any{"type": "ref/resource", "uri": "dpe://h/{doc_ref}/pages/{page_index}"},
			"argument": map[string]any{"name": "doc_ref", "value": "r"},
			"context":  map[string]any{"arguments": map[string]any{}},
		})
	}
	answer := `{"completion":{"values":["report"],"total":1},"req_id":"r1"}`
	require.Equal(t, "["+answer+"]", relay(t, a, c4, 1, protocol.EventComplete, complete("c4", "r1"), answer))
	answer = `{"completion":{"values":[]},"req_id":"r2"}`
	require.Equal(t, "["+answer+"]", relay(t, a, c2, 2, protocol.EventComplete, complete("c2", "r2"), answer))

	got := a.callText(3, protocol.EventComplete, complete("ref", "r3"))
	require.Equal(t, `[{"code":4106,"message":"computer \"ref\" does not offer client:complete: its protocol generation 0.4.0 does not have it and it did not declare it","details":{"computer_generation":"0.4.0","event":"client:complete"}}]`, got)
	bad := complete("c4", "r4")
	bad["ref"] = map[string]any{"type": "ref/prompt"} // a prompt needs its name
	got = a.callText(4, protocol.EventComplete, bad)
	require.True(t, strings.HasPrefix(got, `[{"code":400,`), got)
}
