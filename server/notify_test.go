package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
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

// logCapture records the server's log lines as JSON objects.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func captureLogs(t testing.TB) (*logCapture, server.Option) {
	lc := &logCapture{}
	h := slog.NewJSONHandler(lc, &slog.HandlerOptions{Level: slog.LevelDebug})
	return lc, server.WithLogger(slog.New(h))
}

func (lc *logCapture) Write(b []byte) (int, error) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.buf.Write(b)
}

func (lc *logCapture) text() string {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.buf.String()
}

// lines returns the records whose msg is msg.
func (lc *logCapture) lines(msg string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(lc.text(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

func (lc *logCapture) count(msg string, want map[string]any) int {
	n := 0
	for _, m := range lc.lines(msg) {
		match := true
		for k, v := range want {
			if m[k] != v {
				match = false
			}
		}
		if match {
			n++
		}
	}
	return n
}

// waitLine waits until a record with msg whose attributes include want was
// logged.
func (lc *logCapture) waitLine(t testing.TB, msg string, want map[string]any) {
	t.Helper()
	require.Eventually(t, func() bool { return lc.count(msg, want) > 0 }, wait, 5*time.Millisecond,
		"no log line %q with %v in:\n%s", msg, want, lc.text())
}

// expectLine runs action and waits for one more record with msg whose
// attributes include want.
func (lc *logCapture) expectLine(t testing.TB, msg string, want map[string]any, action func()) {
	t.Helper()
	before := lc.count(msg, want)
	action()
	require.Eventually(t, func() bool { return lc.count(msg, want) > before }, wait, 5*time.Millisecond,
		"no new log line %q with %v in:\n%s", msg, want, lc.text())
}

var updateEvents = []struct{ event, notify string }{
	{protocol.EventUpdateConfig, protocol.NotifyUpdateConfig},
	{protocol.EventUpdateToolList, protocol.NotifyUpdateToolList},
	{protocol.EventUpdateDesktop, protocol.NotifyUpdateDesktop},
	{protocol.EventUpdateFinder, protocol.NotifyUpdateFinder},
}

func TestUpdatesBroadcast(t *testing.T) {
	ts := startServer(t)
	a, cs := office(t, ts, "o1", "a1", "c1", "c2")
	b, _ := office(t, ts, "o2", "b1", "d1")
	for _, u := range updateEvents {
		t.Run(u.event, func(t *testing.T) {
			cs[0].emit(u.event, map[string]any{"computer": "c1"})
			require.Equal(t, map[string]any{"computer": "c1"}, a.next(u.notify))
			require.Equal(t, map[string]any{"computer": "c1"}, cs[1].next(u.notify))
			cs[0].noEvent(u.notify)
			b.noEvent(u.notify)
			// With an ack (not required by the protocol) the sender learns
			// the outcome: no value on success.
			require.Empty(t, cs[1].call(u.event, map[string]any{"computer": "c2"}))
			require.Equal(t, map[string]any{"computer": "c2"}, a.next(u.notify))
		})
	}
}

// TestUpdateRefusals: refused updates carry no ack, so they are logged and
// nothing is broadcast; a sender that asks for an ack gets the coded error.
func TestUpdateRefusals(t *testing.T) {
	logs, logOpt := captureLogs(t)
	ts := startServer(t, logOpt)
	a, cs := office(t, ts, "o1", "a1", "c1")
	lone := dial(t, ts.url)
	left := dial(t, ts.url).mustJoin(computerRole, "c9", "o1")
	a.next(protocol.NotifyEnterOffice)
	require.Equal(t, []any{true, nil}, left.call(protocol.EventLeaveOffice, map[string]any{"office_id": "o1"}))
	a.next(protocol.NotifyLeaveOffice)

	cases := []struct {
		name    string
		from    *peer
		payload any
		code    protocol.Code
	}{
		{"sent by an agent", a, map[string]any{"computer": "c1"}, protocol.CodeForbidden},
		{"spoofed computer name", cs[0], map[string]any{"computer": "c2"}, protocol.CodeForbidden},
		{"not in an office", lone, map[string]any{"computer": "x"}, protocol.CodeForbidden},
		{"computer that left its office", left, map[string]any{"computer": "c9"}, protocol.CodeNotInRoom},
		{"missing computer", cs[0], map[string]any{}, protocol.CodeBadRequest},
		{"not an object", cs[0], "c1", protocol.CodeBadRequest},
	}
	for _, tc := range cases {
		for _, u := range updateEvents {
			t.Run(tc.name+"/"+u.event, func(t *testing.T) {
				logs.expectLine(t, "request refused", map[string]any{"event": u.event, "code": float64(tc.code), "ack": false}, func() {
					tc.from.emit(u.event, tc.payload)
				})
				a.noEvent(u.notify)
				requireError(t, tc.from.call(u.event, tc.payload), tc.code)
				a.noEvent(u.notify)
			})
		}
	}
}

func TestCancelToolCall(t *testing.T) {
	logs, logOpt := captureLogs(t)
	ts := startServer(t, logOpt)
	a, cs := office(t, ts, "o1", "a1", "c1", "c2")
	b, ds := office(t, ts, "o2", "b1", "d1")
	lone := dial(t, ts.url)

	cancel := map[string]any{"agent": "a1", "req_id": "call-7"}
	a.emit(protocol.EventCancelToolCall, cancel)
	require.Equal(t, cancel, cs[0].next(protocol.NotifyCancelToolCall))
	require.Equal(t, cancel, cs[1].next(protocol.NotifyCancelToolCall))
	a.noEvent(protocol.NotifyCancelToolCall)
	ds[0].noEvent(protocol.NotifyCancelToolCall)

	refusals := []struct {
		name    string
		from    *peer
		payload map[string]any
		code    protocol.Code
	}{
		{"another agent's call", a, map[string]any{"agent": "b1", "req_id": "x1"}, protocol.CodeForbidden},
		{"sent by a computer", cs[0], map[string]any{"agent": "c1", "req_id": "x2"}, protocol.CodeForbidden},
		{"agent outside any office", lone, map[string]any{"agent": "a1", "req_id": "x3"}, protocol.CodeNotInRoom},
		{"missing req_id", a, map[string]any{"agent": "a1"}, protocol.CodeBadRequest},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			want := map[string]any{"event": protocol.EventCancelToolCall, "code": float64(tc.code), "ack": false}
			if id, ok := tc.payload["req_id"]; ok {
				want["req_id"] = id // the refusal's log line names the call
			}
			logs.expectLine(t, "request refused", want, func() { tc.from.emit(protocol.EventCancelToolCall, tc.payload) })
			for _, p := range []*peer{cs[0], cs[1], ds[0]} {
				p.noEvent(protocol.NotifyCancelToolCall)
			}
		})
	}
	_ = b
}

// TestCancelBeforeClose: an Agent that gives up on a call sends the cancel
// and may close its connection at once (a CLI exiting). The library cleans
// up the close on the connection's reader, while the cancel read just
// before waits on the socket's task queue: the cancel is handled after
// the Agent has left its office, and must still reach the office. The test
// hook holds the cancel until the Computer has seen the Agent leave.
func TestCancelBeforeClose(t *testing.T) {
	left := make(chan struct{})
	hook := server.WithTestHook(func(event string) {
		if event == protocol.EventCancelToolCall {
			<-left
		}
	})
	ts := startServer(t, hook)
	c := dial(t, ts.url).mustJoin(protocol.RoleComputer, "c1", "o1")
	a := dialRaw(t, ts.url)
	require.Equal(t, "[true,null]", a.joinRaw(1, `{"role":"agent","name":"a1","office_id":"o1"}`))
	c.next(protocol.NotifyEnterOffice)

	a.send("42" + protocol.Namespace + `,["server:tool_call_cancel",{"agent":"a1","req_id":"call-9"}]`)
	require.NoError(t, a.ws.Close())
	c.next(protocol.NotifyLeaveOffice) // the close is cleaned up first
	close(left)
	require.Equal(t, map[string]any{"agent": "a1", "req_id": "call-9"}, c.next(protocol.NotifyCancelToolCall))
}

// TestClientCannotSendNotify: notify:* events come from the Server only.
func TestClientCannotSendNotify(t *testing.T) {
	ts := startServer(t)
	a, cs := office(t, ts, "o1", "a1", "c1")
	for _, ev := range []string{protocol.NotifyEnterOffice, protocol.NotifyUpdateFinder, protocol.NotifyCancelToolCall} {
		requireError(t, a.call(ev, map[string]any{"office_id": "o1", "agent": "a1", "computer": "c1", "req_id": "r"}), protocol.CodeForbidden)
		cs[0].emit(ev, map[string]any{"computer": "c1"})
		a.noEvent(ev)
	}
}

// TestAbandonedToolCallCancelled: an Agent whose connection goes while one
// of its tool calls is in flight can no longer receive the answer, and may
// have had no time to cancel it: the Computers of its office get
// notify:tool_call_cancel for the call all the same, so the tool stops
// instead of running for an Agent that is gone.
func TestAbandonedToolCallCancelled(t *testing.T) {
	ts := startServer(t)
	a, cs := office(t, ts, "o1", "a1", "c1")
	c := cs[0]
	started := make(chan string, 1)
	_ = c.sock.On(types.EventName(protocol.EventToolCall), func(args ...any) {
		if len(args) > 0 {
			if req, ok := args[0].(map[string]any); ok {
				started <- fmt.Sprint(req["req_id"])
			}
		}
		// never answers: the tool runs on
	})
	a.emit(protocol.EventToolCall, map[string]any{"agent": "a1", "req_id": "call-1", "computer": "c1",
		"tool_name": "slow", "params": map[string]any{}, "timeout": 60}, socket.Ack(func([]any, error) {}))
	select {
	case id := <-started:
		require.Equal(t, "call-1", id)
	case <-time.After(wait):
		t.Fatal("the tool call did not reach the Computer")
	}
	a.sock.Disconnect()
	c.next(protocol.NotifyLeaveOffice)
	require.Equal(t, map[string]any{"agent": "a1", "req_id": "call-1"}, c.next(protocol.NotifyCancelToolCall))

	// An Agent that leaves with nothing in flight cancels nothing.
	b := dial(t, ts.url).mustJoin(protocol.RoleAgent, "a2", "o1")
	b.sock.Disconnect()
	c.next(protocol.NotifyLeaveOffice)
	c.noEvent(protocol.NotifyCancelToolCall)
}
