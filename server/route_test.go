package server_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/stretchr/testify/require"
	"github.com/zishang520/socket.io/servers/socket/v3"
	"github.com/zishang520/socket.io/v3/pkg/types"
)

// routedRequests holds one valid request per client:* event, sent by agent
// "a1" to computer "c1", and a valid answer for it.
func routedRequests() map[string]struct{ req, answer map[string]any } {
	return map[string]struct{ req, answer map[string]any }{
		protocol.EventToolCall: {
			req:    map[string]any{"agent": "a1", "req_id": "r-tool", "computer": "c1", "tool_name": "echo", "params": map[string]any{"x": 1.0}, "timeout": 5.0},
			answer: map[string]any{"content": []any{map[string]any{"type": "text", "text": "hi"}}, "isError": false},
		},
		protocol.EventGetTools: {
			req:    map[string]any{"agent": "a1", "req_id": "r-tools", "computer": "c1"},
			answer: map[string]any{"req_id": "r-tools", "tools": []any{}},
		},
		protocol.EventGetConfig: {
			req:    map[string]any{"agent": "a1", "req_id": "r-config", "computer": "c1"},
			answer: map[string]any{"servers": map[string]any{}},
		},
		protocol.EventGetDesktop: {
			req:    map[string]any{"agent": "a1", "req_id": "r-desk", "computer": "c1", "desktop_size": 3.0},
			answer: map[string]any{"req_id": "r-desk", "desktops": []any{"window://h/a"}},
		},
		protocol.EventGetFinder: {
			req:    map[string]any{"agent": "a1", "req_id": "r-find", "computer": "c1", "keywords": []any{"x"}, "limit": 5.0},
			answer: finderAnswer("r-find", 2),
		},
		protocol.EventReadResource: {
			req:    map[string]any{"agent": "a1", "req_id": "r-read", "computer": "c1", "uri": "dpe://h/doc"},
			answer: map[string]any{"req_id": "r-read", "contents": []any{map[string]any{"uri": "dpe://h/doc", "text": "{}"}}},
		},
	}
}

// finderAnswer is a valid GetFinderRet with n documents.
func finderAnswer(reqID string, n int) map[string]any {
	docs := make([]any, n)
	for i := range docs {
		docs[i] = map[string]any{
			"doc_ref":       fmt.Sprintf("doc-%d", i),
			"uri":           fmt.Sprintf("dpe://docs/doc-%d", i),
			"file_uri":      fmt.Sprintf("file:///srv/docs/doc-%d.md", i),
			"server":        "docs",
			"title":         fmt.Sprintf("Document %d", i),
			"file_type":     "md",
			"summary":       "A document used by the server tests and benchmarks.",
			"keywords":      []any{"test", "bench"},
			"page_count":    3.0,
			"last_modified": "2025-01-02T03:04:05Z",
		}
	}
	return map[string]any{"req_id": reqID, "documents": docs, "total_count": float64(n)}
}

// TestRouteEveryEvent relays each client:* event to exactly the named
// Computer and its single answer back unchanged, including an ErrorPayload.
func TestRouteEveryEvent(t *testing.T) {
	for _, validate := range []bool{false, true} {
		t.Run(fmt.Sprintf("validate=%v", validate), func(t *testing.T) {
			ts := startServer(t, server.WithValidateAnswers(validate))
			a, cs := office(t, ts, "o1", "a1", "c1", "c2")
			c1, c2 := cs[0], cs[1]
			for ev, rr := range routedRequests() {
				received := make(chan map[string]any, 1)
				c1.answer(ev, func(req map[string]any) []any {
					received <- req
					if req["req_id"] == "err" {
						return []any{map[string]any{"error": map[string]any{"code": 4001.0, "message": "tool not found"}}}
					}
					return []any{rr.answer}
				})
				c2.answer(ev, func(req map[string]any) []any {
					t.Errorf("c2 received %s", ev)
					return []any{rr.answer}
				})

				vals := a.call(ev, rr.req)
				require.Equal(t, []any{rr.answer}, vals, ev)
				require.Equal(t, rr.req, <-received, "%s arrives unchanged", ev)

				errReq := map[string]any{}
				for k, v := range rr.req {
					errReq[k] = v
				}
				errReq["req_id"] = "err"
				e := requireError(t, a.call(ev, errReq), protocol.CodeToolNotFound)
				require.Equal(t, "tool not found", e.Message)
				<-received
			}
			c2.barrier()
		})
	}
}

// TestRouteRefusals covers the checks of every routed request, in order.
func TestRouteRefusals(t *testing.T) {
	ts := startServer(t)
	a, cs := office(t, ts, "o1", "a1", "c1")
	cs[0].answer(protocol.EventGetTools, toolsAnswer)
	office(t, ts, "o2", "b1", "far")
	lone := dial(t, ts.url)
	left := dial(t, ts.url).mustJoin(agentRole, "gone", "o3")
	vals := left.call(protocol.EventLeaveOffice, map[string]any{"office_id": "o3"})
	require.Equal(t, []any{true, nil}, vals)

	cases := []struct {
		name  string
		from  *peer
		event string
		req   map[string]any
		code  protocol.Code
		text  string
	}{
		{"missing computer", a, protocol.EventGetTools, map[string]any{"agent": "a1", "req_id": "r"}, protocol.CodeBadRequest, "computer"},
		{"missing req_id", a, protocol.EventGetTools, map[string]any{"agent": "a1", "computer": "c1"}, protocol.CodeBadRequest, "req_id"},
		{"finder limit above 100", a, protocol.EventGetFinder, map[string]any{"agent": "a1", "req_id": "r", "computer": "c1", "limit": 101.0}, protocol.CodeBadRequest, "/limit"},
		{"finder negative offset", a, protocol.EventGetFinder, map[string]any{"agent": "a1", "req_id": "r", "computer": "c1", "offset": -1.0}, protocol.CodeBadRequest, "/offset"},
		{"tool call timeout as string", a, protocol.EventToolCall, map[string]any{"agent": "a1", "req_id": "r", "computer": "c1", "tool_name": "t", "params": map[string]any{}, "timeout": "5"}, protocol.CodeBadRequest, "/timeout"},
		{"tool call without params", a, protocol.EventToolCall, map[string]any{"agent": "a1", "req_id": "r", "computer": "c1", "tool_name": "t", "timeout": 5.0}, protocol.CodeBadRequest, "params"},
		{"read resource without uri", a, protocol.EventReadResource, map[string]any{"agent": "a1", "req_id": "r", "computer": "c1"}, protocol.CodeBadRequest, "uri"},
		{"wrong types everywhere", a, protocol.EventGetDesktop, map[string]any{"agent": 1.0, "req_id": true, "computer": []any{}}, protocol.CodeBadRequest, "/agent"},
		{"before joining", lone, protocol.EventGetTools, getTools("a1", "c1", "r"), protocol.CodeNotInRoom, "join an office"},
		{"after leaving", left, protocol.EventGetTools, getTools("gone", "c1", "r"), protocol.CodeNotInRoom, "join an office"},
		{"sent by a computer", cs[0], protocol.EventGetTools, getTools("c1", "c1", "r"), protocol.CodeForbidden, "only be sent by an agent"},
		{"spoofed agent field", a, protocol.EventGetTools, getTools("b1", "c1", "r"), protocol.CodeForbidden, "not the sender's registered name"},
		{"unknown computer", a, protocol.EventGetTools, getTools("a1", "nobody", "r"), protocol.CodeNotFound, `no computer named "nobody"`},
		{"computer name of an agent", a, protocol.EventGetTools, getTools("a1", "b1", "r"), protocol.CodeNotFound, `no computer named "b1"`},
		{"computer in another office", a, protocol.EventGetTools, getTools("a1", "far", "r"), protocol.CodeNotFound, `no computer named "far" in this office`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := requireError(t, tc.from.call(tc.event, tc.req), tc.code)
			require.Contains(t, e.Message, tc.text)
		})
	}
	t.Run("another office answers as an unknown name", func(t *testing.T) {
		// The answer must not tell a name that exists elsewhere from one
		// that exists nowhere: same code, same message but for the name.
		elsewhere := requireError(t, a.call(protocol.EventGetTools, getTools("a1", "far", "r")), protocol.CodeNotFound)
		nowhere := requireError(t, a.call(protocol.EventGetTools, getTools("a1", "fan", "r")), protocol.CodeNotFound)
		require.Equal(t, strings.ReplaceAll(nowhere.Message, "fan", "far"), elsewhere.Message)
		require.Equal(t, nowhere.Details, elsewhere.Details)
	})
	t.Run("schema errors list every failing path", func(t *testing.T) {
		e := requireError(t, a.call(protocol.EventGetFinder, map[string]any{"agent": "a1", "req_id": "r", "limit": 0.0, "offset": -2.0}), protocol.CodeBadRequest)
		require.Contains(t, e.Message, "/limit")
		require.Contains(t, e.Message, "/offset")
		require.Contains(t, e.Message, "computer")
		require.NotEmpty(t, e.Details["violations"])
	})
	t.Run("the office still works", func(t *testing.T) {
		vals := a.call(protocol.EventGetTools, getTools("a1", "c1", "ok"))
		require.Equal(t, "ok", vals[0].(map[string]any)["req_id"])
	})
}

func TestRouteTimeouts(t *testing.T) {
	ts := startServer(t, server.WithRequestTimeout(300*time.Millisecond), server.WithToolCallMargin(200*time.Millisecond))
	a, cs := office(t, ts, "o1", "a1", "c1")
	c := cs[0]
	// The Computer receives the requests but never answers.
	held := make(chan socket.Ack, 8)
	for _, ev := range []string{protocol.EventGetFinder, protocol.EventToolCall} {
		_ = c.sock.On(types.EventName(ev), func(args ...any) { held <- args[len(args)-1].(socket.Ack) })
	}

	start := time.Now()
	e := requireError(t, a.call(protocol.EventGetFinder, map[string]any{"agent": "a1", "req_id": "f1", "computer": "c1"}), protocol.CodeTimeout)
	require.Equal(t, "f1", e.Details["req_id"])
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "waits the configured timeout")

	start = time.Now()
	req := routedRequests()[protocol.EventToolCall].req
	req["timeout"] = 1.0
	requireError(t, a.call(protocol.EventToolCall, req), protocol.CodeTimeout)
	require.GreaterOrEqual(t, time.Since(start), 1200*time.Millisecond, "waits the tool call's timeout plus the margin")

	// A late answer is dropped: the Agent got exactly one answer, and the
	// connection carries on.
	late := <-held
	late([]any{finderAnswer("f1", 1)}, nil)
	(<-held)([]any{map[string]any{"content": []any{}}}, nil)
	a.barrier()
	c.answer(protocol.EventGetTools, toolsAnswer)
	vals := a.call(protocol.EventGetTools, getTools("a1", "c1", "after"))
	require.Equal(t, "after", vals[0].(map[string]any)["req_id"])
}

// TestComputerDisconnectFailsInFlight: requests in flight to a Computer that
// disconnects fail at once with 404, long before their timeout.
func TestComputerDisconnectFailsInFlight(t *testing.T) {
	ts := startServer(t, server.WithRequestTimeout(time.Hour))
	a, cs := office(t, ts, "o1", "a1", "c1")
	c := cs[0]
	got := make(chan struct{}, 8)
	_ = c.sock.On(types.EventName(protocol.EventGetFinder), func(...any) { got <- struct{}{} })

	results := make(chan []any, 3)
	for i := range 3 {
		go func() {
			results <- a.call(protocol.EventGetFinder, map[string]any{"agent": "a1", "req_id": fmt.Sprint("r", i), "computer": "c1"})
		}()
	}
	for range 3 {
		<-got
	}
	c.sock.Disconnect()
	for range 3 {
		e := requireError(t, <-results, protocol.CodeNotFound)
		require.Contains(t, e.Message, `computer "c1" disconnected before answering`)
	}
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "c1"}, a.next(protocol.NotifyLeaveOffice))
}

func TestAgentDisconnectInFlight(t *testing.T) {
	ts := startServer(t)
	a, cs := office(t, ts, "o1", "a1", "c1")
	c := cs[0]
	held := make(chan socket.Ack, 1)
	_ = c.sock.On(types.EventName(protocol.EventGetTools), func(args ...any) { held <- args[len(args)-1].(socket.Ack) })
	a.emit(protocol.EventGetTools, getTools("a1", "c1", "r1"), socket.Ack(func([]any, error) {}))
	ack := <-held
	a.sock.Disconnect()
	c.next(protocol.NotifyLeaveOffice)
	ack(toolsAnswer(map[string]any{"req_id": "r1"}), nil) // nobody to relay to: dropped
	c.barrier()

	// The seat is free and the Computer serves the next Agent.
	a2 := dial(t, ts.url).mustJoin(agentRole, "a2", "o1")
	c.answer(protocol.EventGetTools, toolsAnswer)
	vals := a2.call(protocol.EventGetTools, getTools("a2", "c1", "r2"))
	require.Equal(t, "r2", vals[0].(map[string]any)["req_id"])
}

// TestBadComputerAnswers: an answer that is not exactly one value, or that
// breaks the ack schema while validation is on, becomes a 500.
func TestBadComputerAnswers(t *testing.T) {
	cases := []struct {
		name     string
		validate bool
		answer   []any
		code     protocol.Code // 0: relayed unchanged
		text     string
	}{
		{"no value", false, []any{}, protocol.CodeInternal, "answered client:get_finder with 0 values"},
		{"two values", false, []any{finderAnswer("r", 1), "extra"}, protocol.CodeInternal, "with 2 values"},
		{"invalid answer validated", true, []any{map[string]any{"documents": "none"}}, protocol.CodeInternal, "invalid payload"},
		{"invalid error payload validated", true, []any{map[string]any{"error": map[string]any{"code": "x"}}}, protocol.CodeInternal, "invalid payload"},
		{"invalid answer relayed when validation is off", false, []any{map[string]any{"documents": "none"}}, 0, ""},
		{"valid answer validated", true, []any{finderAnswer("r", 3)}, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, server.WithValidateAnswers(tc.validate))
			a, cs := office(t, ts, "o1", "a1", "c1")
			cs[0].answer(protocol.EventGetFinder, func(map[string]any) []any { return tc.answer })
			vals := a.call(protocol.EventGetFinder, map[string]any{"agent": "a1", "req_id": "r", "computer": "c1"})
			if tc.code == 0 {
				require.Equal(t, tc.answer, vals)
				return
			}
			e := requireError(t, vals, tc.code)
			require.Contains(t, e.Message, tc.text)
			if tc.validate {
				require.NotEmpty(t, e.Details["violations"])
			}
		})
	}
}

// TestConcurrentRouting: many requests in flight at once, answered out of
// order, each reach their own caller.
func TestConcurrentRouting(t *testing.T) {
	ts := startServer(t)
	a, cs := office(t, ts, "o1", "a1", "c1")
	b, ds := office(t, ts, "o2", "b1", "d1")
	var mu sync.Mutex
	var held []func()
	hold := func(p *peer) {
		_ = p.sock.On(types.EventName(protocol.EventGetFinder), func(args ...any) {
			req := args[0].(map[string]any)
			ack := args[len(args)-1].(socket.Ack)
			mu.Lock()
			held = append(held, func() { ack([]any{finderAnswer(req["req_id"].(string), 1)}, nil) })
			mu.Unlock()
		})
	}
	hold(cs[0])
	hold(ds[0])
	const n = 40
	results := make(chan error, 2*n)
	send := func(p *peer, agent, computer string, i int) {
		id := fmt.Sprintf("%s-%d", agent, i)
		vals := p.call(protocol.EventGetFinder, map[string]any{"agent": agent, "req_id": id, "computer": computer})
		if got := vals[0].(map[string]any)["req_id"]; got != id {
			results <- fmt.Errorf("asked %s, got %v", id, got)
			return
		}
		results <- nil
	}
	for i := range n {
		go send(a, "a1", "c1", i)
		go send(b, "b1", "d1", i)
	}
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(held) == 2*n
	}, wait, 5*time.Millisecond)
	mu.Lock()
	for i := len(held) - 1; i >= 0; i-- { // answer in reverse order
		held[i]()
	}
	mu.Unlock()
	for range 2 * n {
		require.NoError(t, <-results)
	}
}
