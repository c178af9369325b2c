package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// rawConn speaks Engine.IO v4 / Socket.IO v5 by hand over a websocket, to
// send what no client library sends: broken packets, odd argument lists.
type rawConn struct {
	t  testing.TB
	ws *websocket.Conn
}

func dialRaw(t testing.TB, url string) *rawConn { return dialRawAuth(t, url, nil) }

// dialRawAuth connects with auth as the namespace CONNECT's payload (none
// when nil), retrying an attempt whose CONNECT went unanswered.
func dialRawAuth(t testing.TB, url string, auth map[string]any) *rawConn {
	t.Helper()
	r, _ := dialRawWith(t, url, "", http.Header{"X-Api-Key": {testKey}}, auth)
	return r
}

// dialRawWith is dialRawAuth with query added to the handshake's and the
// request headers header; it also returns the headers of the upgrade's
// answer.
func dialRawWith(t testing.TB, url, query string, header http.Header, auth map[string]any) (*rawConn, http.Header) {
	t.Helper()
	for range 5 {
		if r, h := dialRawOnce(t, url, query, header, auth); r != nil {
			return r, h
		}
		t.Logf("namespace connect lost; retrying") // see connect in helpers_test.go
	}
	t.Fatal("could not connect")
	return nil, nil
}

// dialRawOnce sends the namespace CONNECT as soon as the engine's OPEN
// arrives; it returns nil when the CONNECT goes unanswered.
func dialRawOnce(t testing.TB, url, query string, header http.Header, auth map[string]any) (*rawConn, http.Header) {
	wsURL := "ws" + strings.TrimPrefix(url, "http") + "/socket.io/?EIO=4&transport=websocket" + query
	ws, resp, err := websocket.DefaultDialer.Dial(wsURL, header)
	require.NoError(t, err)
	_ = resp.Body.Close()
	r := &rawConn{t: t, ws: ws}
	require.True(t, strings.HasPrefix(r.read(), "0{"), "engine open")
	payload := ""
	if auth != nil {
		b, err := json.Marshal(auth)
		require.NoError(t, err)
		payload = string(b)
	}
	r.send("40" + protocol.Namespace + "," + payload)
	_ = ws.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, b, err := ws.ReadMessage()
	if err != nil {
		_ = ws.Close()
		return nil, nil
	}
	require.True(t, strings.HasPrefix(string(b), "40"+protocol.Namespace+",{\"sid\""), "namespace connect: %s", b)
	t.Cleanup(func() { _ = ws.Close() })
	return r, resp.Header
}

func (r *rawConn) send(s string) {
	r.t.Helper()
	require.NoError(r.t, r.ws.WriteMessage(websocket.TextMessage, []byte(s)))
}

// read returns the next message, answering engine pings on the way.
func (r *rawConn) read() string {
	r.t.Helper()
	return r.readWithin(wait)
}

// readWithin is read with its own bound on each wait, for an answer the
// Server itself may hold for a while (a decode place, largeDecodeWait).
func (r *rawConn) readWithin(d time.Duration) string {
	r.t.Helper()
	for {
		_ = r.ws.SetReadDeadline(time.Now().Add(d))
		_, b, err := r.ws.ReadMessage()
		require.NoError(r.t, err)
		if string(b) == "2" {
			r.send("3")
			continue
		}
		return string(b)
	}
}

// closed reports whether the server closes the connection (reading gives an
// error before the deadline).
func (r *rawConn) closed() bool {
	for {
		_ = r.ws.SetReadDeadline(time.Now().Add(wait))
		_, b, err := r.ws.ReadMessage()
		if err != nil {
			return !isTimeout(err)
		}
		if string(b) == "2" {
			_ = r.ws.WriteMessage(websocket.TextMessage, []byte("3"))
		}
	}
}

// rest returns the messages received until the server closes the
// connection (pings excepted); it fails when the connection stays open.
func (r *rawConn) rest() []string {
	r.t.Helper()
	var out []string
	for {
		_ = r.ws.SetReadDeadline(time.Now().Add(wait))
		_, b, err := r.ws.ReadMessage()
		if err != nil {
			require.False(r.t, isTimeout(err), "the connection stayed open")
			return out
		}
		if string(b) != "2" {
			out = append(out, string(b))
		}
	}
}

func isTimeout(err error) bool {
	type timeout interface{ Timeout() bool }
	te, ok := err.(timeout)
	return ok && te.Timeout()
}

// TestOddPackets sends event packets whose argument lists no SDK would send;
// each gets a coded answer and the connection carries on.
func TestOddPackets(t *testing.T) {
	ts := startServer(t)
	r := dialRaw(t, ts.url)
	nsp := "42" + protocol.Namespace + ","
	cases := []struct {
		name, packet, want string
	}{
		{"event name not a string", nsp + `1[42,{}]`, `43/smcp,1[{"error":{"code":400,"message":"unknown event \"\""`},
		{"join without payload", nsp + `2["server:join_office"]`, `43/smcp,2[false,"400 BadRequest: server:join_office takes exactly one payload argument, got 0"]`},
		{"routed request with two payloads", nsp + `3["client:get_tools",{},{}]`, `43/smcp,3[{"error":{"code":400,"message":"client:get_tools takes exactly one payload argument, got 2"`},
		{"null payload", nsp + `4["client:get_finder",null]`, `43/smcp,4[{"error":{"code":400,"message":"client:get_finder request: /: got null, want object"`},
		{"unknown event", nsp + `5["client:delete_everything",{}]`, `43/smcp,5[{"error":{"code":400,"message":"unknown event \"client:delete_everything\""`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r.send(tc.packet)
			require.True(t, strings.HasPrefix(r.read(), tc.want), tc.want)
		})
	}
	r.send(nsp + `9["server:join_office",{"role":"agent","name":"raw","office_id":"o"}]`)
	require.Equal(t, `43/smcp,9[true,null]`, r.read())
}

// TestMalformedPacketsCloseOnlyTheirConnection: a packet the Socket.IO
// decoder cannot parse closes that connection (the library's rule); the
// office and every other connection carry on.
func TestMalformedPacketsCloseOnlyTheirConnection(t *testing.T) {
	ts := startServer(t)
	a, cs := office(t, ts, "o1", "a1", "c1")
	cs[0].answer(protocol.EventGetTools, toolsAnswer)
	for _, packet := range []string{
		`42/smcp,["client:get_tools",{"agent":`, // truncated JSON
		`42/smcp,{"not":"an array"}`,
		`9garbage`,
	} {
		t.Run(packet, func(t *testing.T) {
			r := dialRaw(t, ts.url)
			r.send(packet)
			require.True(t, r.closed(), "the server closes a connection sending %q", packet)
			vals := a.call(protocol.EventGetTools, getTools("a1", "c1", "still-here"))
			require.Equal(t, "still-here", vals[0].(map[string]any)["req_id"])
		})
	}
}

func TestUnknownEvents(t *testing.T) {
	logs, logOpt := captureLogs(t)
	ts := startServer(t, logOpt)
	a, _ := office(t, ts, "o1", "a1", "c1")
	e := requireError(t, a.call("client:nope", map[string]any{}), protocol.CodeBadRequest)
	require.Equal(t, `unknown event "client:nope"`, e.Message)

	logs.expectLine(t, "request refused", map[string]any{"event": "agent:whatever", "ack": false}, func() {
		a.emit("agent:whatever", map[string]any{})
	})
	long := strings.Repeat("x", 5000)
	e = requireError(t, a.call(long, 1.0), protocol.CodeBadRequest)
	require.Less(t, len(e.Message), 200, "a client-chosen event name is clipped")
	a.mustJoin(agentRole, "a1", "o1")
}

// TestOversizedPayloads: a message above WithMaxPayloadBytes closes its
// sender's connection; a Computer closed that way fails the requests in
// flight to it at once; everyone else carries on.
func TestOversizedPayloads(t *testing.T) {
	ts := startServer(t, server.WithMaxPayloadBytes(32<<10), server.WithRequestTimeout(time.Hour))
	a, cs := office(t, ts, "o1", "a1", "big", "small")
	cs[1].answer(protocol.EventGetTools, toolsAnswer)
	huge := strings.Repeat("y", 64<<10)

	t.Run("request", func(t *testing.T) {
		a2 := dial(t, ts.url).mustJoin(agentRole, "a2", "o2")
		gone := make(chan struct{})
		a2.sock.Once("disconnect", func(...any) { close(gone) })
		a2.emit(protocol.EventGetTools, map[string]any{"agent": "a2", "req_id": huge, "computer": "x"})
		select {
		case <-gone:
		case <-time.After(wait):
			t.Fatal("oversized request did not close the connection")
		}
		// Cleaned up: the name and the seat are free again (the server may
		// still be running the cleanup when the client sees the close).
		next := dial(t, ts.url)
		require.Eventually(t, func() bool {
			ok, _ := next.join(agentRole, "a2", "o2")
			return ok
		}, wait, 10*time.Millisecond)
	})
	t.Run("answer", func(t *testing.T) {
		cs[0].answer(protocol.EventGetFinder, func(req map[string]any) []any {
			return []any{map[string]any{"req_id": req["req_id"], "documents": []any{}, "total_count": 0.0, "pad": huge}}
		})
		e := requireError(t, a.call(protocol.EventGetFinder, map[string]any{"agent": "a1", "req_id": "r1", "computer": "big"}), protocol.CodeNotFound)
		require.Contains(t, e.Message, "disconnected before answering")
		require.Equal(t, map[string]any{"office_id": "o1", "computer": "big"}, a.next(protocol.NotifyLeaveOffice))
	})
	t.Run("the office carries on", func(t *testing.T) {
		vals := a.call(protocol.EventGetTools, getTools("a1", "small", fmt.Sprint("r", 2)))
		require.Equal(t, "r2", vals[0].(map[string]any)["req_id"])
	})
}
