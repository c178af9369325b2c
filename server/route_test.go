package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/a2c-smcp/smcp-go/sio/third_party/types"
	"github.com/stretchr/testify/require"
	"github.com/zishang520/socket.io/servers/socket/v3"
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

// TestRouteRefusals replays the routing scenarios of the conformance suite
// (conformance/routing.json): every check of a routed request, in order.
func TestRouteRefusals(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "conformance", "routing.json"))
	require.NoError(t, err)
	var suite struct {
		Sessions []struct {
			Name   string         `json:"name"`
			Role   *protocol.Role `json:"role"`
			Office *string        `json:"office"`
			Left   bool           `json:"left"`
		} `json:"sessions"`
		Cases []struct {
			Name            string         `json:"name"`
			From            string         `json:"from"`
			Event           string         `json:"event"`
			Request         map[string]any `json:"request"`
			Code            protocol.Code  `json:"code"`
			MessageContains string         `json:"message_contains"`
		} `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &suite))
	require.NotEmpty(t, suite.Cases)

	ts := startServer(t)
	peers := map[string]*peer{}
	for _, s := range suite.Sessions {
		p := dial(t, ts.url)
		if s.Role != nil {
			p.mustJoin(*s.Role, s.Name, *s.Office)
			if *s.Role == protocol.RoleComputer {
				p.answer(protocol.EventGetTools, toolsAnswer)
			}
		}
		if s.Left {
			require.Equal(t, []any{true, nil}, p.call(protocol.EventLeaveOffice, map[string]any{"office_id": *s.Office}))
		}
		peers[s.Name] = p
	}
	a := peers["a1"]
	for _, tc := range suite.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			from := peers[tc.From]
			require.NotNil(t, from, "no session %q", tc.From)
			e := requireError(t, from.call(tc.Event, tc.Request), tc.Code)
			require.Contains(t, e.Message, tc.MessageContains)
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
		e := requireError(t, a.call(protocol.EventGetFinder, map[string]any{"agent": "a1", "req_id": "r", "limit": -1.0, "offset": -2.0}), protocol.CodeBadRequest)
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
