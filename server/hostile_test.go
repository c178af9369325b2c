package server_test

// The hostile-client suite: every limit of a Server against a client that
// misbehaves on purpose, at the wire. Each test asserts the coded answer or
// the close, that another office carries on, and, for the attacks that
// used to pin memory, that the live heap returns near its baseline once the
// attacker is gone (spec/protocol.md, Limits; spec/decisions.md, Limits
// against hostile clients).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"github.com/zishang520/socket.io/servers/socket/v3"
)

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// heapReturns waits until the live heap is within slack of base.
func heapReturns(t *testing.T, base uint64, slack uint64) {
	t.Helper()
	var last uint64
	ok := eventually(func() bool {
		last = liveHeap()
		return last <= base+slack
	})
	require.True(t, ok, "live heap %d MB did not return within %d MB of its baseline %d MB", last>>20, slack>>20, base>>20)
}

// eventually polls cond for at most wait.
func eventually(cond func() bool) bool { return eventuallyWithin(wait, cond) }

// dialEngine opens an Engine.IO websocket (OPEN read) without a namespace
// CONNECT; header may carry the API key. readBuf, when positive, shrinks
// the socket's receive buffer, so that a peer that stops reading is felt at
// once.
func dialEngine(t testing.TB, url string, header http.Header, readBuf int) *rawConn {
	t.Helper()
	d := *websocket.DefaultDialer
	if readBuf > 0 {
		d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(readBuf)
			}
			return c, err
		}
	}
	wsURL := "ws" + strings.TrimPrefix(url, "http") + "/socket.io/?EIO=4&transport=websocket"
	ws, resp, err := d.Dial(wsURL, header)
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = ws.Close() })
	r := &rawConn{t: t, ws: ws}
	require.True(t, strings.HasPrefix(r.read(), "0{"), "engine open")
	return r
}

// connectSmcp sends the /smcp CONNECT and returns the answer.
func (r *rawConn) connectSmcp(auth map[string]any) string {
	payload := ""
	if auth != nil {
		b, err := json.Marshal(auth)
		require.NoError(r.t, err)
		payload = string(b)
	}
	r.send("40" + protocol.Namespace + "," + payload)
	return r.read()
}

// call emits ev with payload and ack id id and returns the ack's arguments.
func (r *rawConn) call(id int, ev string, payload any) []any {
	r.t.Helper()
	b, err := json.Marshal([]any{ev, payload})
	require.NoError(r.t, err)
	r.send(fmt.Sprintf("42%s,%d%s", protocol.Namespace, id, b))
	want := fmt.Sprintf("43%s,%d", protocol.Namespace, id)
	for {
		m := r.read()
		if rest, ok := strings.CutPrefix(m, want); ok {
			var vals []any
			require.NoError(r.t, json.Unmarshal([]byte(rest), &vals))
			return vals
		}
	}
}

var keyHeader = http.Header{"X-Api-Key": {testKey}}

// TestHostileBinaryPackets: SMCP is JSON only. A Socket.IO binary packet
// header or an Engine.IO binary message closes the connection at once,
// before any attachment is buffered, with or without a key; the heap
// returns after a run of such attacks carrying 1 MB frames.
func TestHostileBinaryPackets(t *testing.T) {
	ts := startServer(t)
	a, cs := office(t, ts, "o1", "a1", "c1")
	cs[0].answer(protocol.EventGetTools, toolsAnswer)

	attacks := map[string]func(r *rawConn){
		"binary event header": func(r *rawConn) { r.send(`451-/smcp,["x",{"_placeholder":true,"num":0}]`) },
		"binary ack header":   func(r *rawConn) { r.send(`461-/smcp,0[{"_placeholder":true,"num":0}]`) },
		"engine binary frame": func(r *rawConn) {
			require.NoError(t, r.ws.WriteMessage(websocket.BinaryMessage, []byte("\x04attachment")))
		},
	}
	for name, attack := range attacks {
		t.Run(name+" without a key", func(t *testing.T) {
			r := dialEngine(t, ts.url, nil, 0)
			attack(r)
			require.True(t, r.closed())
		})
		t.Run(name+" when joined", func(t *testing.T) {
			r := dialEngine(t, ts.url, keyHeader, 0)
			require.Contains(t, r.connectSmcp(nil), `"sid"`)
			vals := r.call(1, protocol.EventJoinOffice, map[string]any{"role": "computer", "name": "bin", "office_id": "o2"})
			require.Equal(t, []any{true, nil}, vals)
			attack(r)
			require.True(t, r.closed())
		})
	}

	t.Run("the heap returns after attacks with 1 MB frames", func(t *testing.T) {
		base := liveHeap()
		frame := make([]byte, 1<<20)
		for range 20 {
			r := dialEngine(t, ts.url, nil, 0)
			r.send(`451-/smcp,["x",{"_placeholder":true,"num":0}]`)
			for range 8 { // the server may already have closed: errors are the point
				if r.ws.WriteMessage(websocket.BinaryMessage, frame) != nil {
					break
				}
			}
			require.True(t, r.closed())
		}
		heapReturns(t, base, 8<<20)
	})

	vals := a.call(protocol.EventGetTools, getTools("a1", "c1", "after"))
	require.Equal(t, "after", vals[0].(map[string]any)["req_id"], "the office carries on")
}

// TestHostileSlowReader: a Computer that stops reading its connection.
// Requests are routed to it until its unsent bytes pass the outgoing
// limit, then refused with 503; it is closed after the stall timeout,
// which fails its requests in flight (404) and tells its office it left;
// the heap returns.
func TestHostileSlowReader(t *testing.T) {
	const limit = 1 << 20
	ts := startServer(t, server.WithMaxOutgoingBytes(limit), server.WithStallTimeout(2*time.Second), server.WithMaxInFlight(1000))
	a, _ := office(t, ts, "o1", "a1")
	other, ocs := office(t, ts, "o2", "a2", "c2")
	ocs[0].answer(protocol.EventGetTools, toolsAnswer)
	base := liveHeap()

	slow := dialEngine(t, ts.url, keyHeader, 4096)
	require.Contains(t, slow.connectSmcp(nil), `"sid"`)
	require.Equal(t, []any{true, nil}, slow.call(1, protocol.EventJoinOffice, map[string]any{"role": "computer", "name": "slow", "office_id": "o1"}))
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "slow"}, a.next(protocol.NotifyEnterOffice))
	// From here on the Computer reads nothing, not even pings.

	pad := strings.Repeat("p", 256<<10)
	answers := make(chan []any, 1000)
	var refused *protocol.Error
	sent := 0
	for ; sent < 400 && refused == nil; sent++ {
		i := sent
		req := map[string]any{"agent": "a1", "req_id": fmt.Sprint("r", i), "computer": "slow", "tool_name": "t", "params": map[string]any{"pad": pad}, "timeout": 60}
		require.NoError(t, a.sock.Emit(protocol.EventToolCall, req, socket.Ack(func(v []any, _ error) { answers <- v })))
		a.barrier() // the request has been routed or refused
	drain:
		for {
			select {
			case v := <-answers:
				refused = requireError(t, v, protocol.CodeUnavailable)
			default:
				break drain
			}
		}
	}
	require.NotNil(t, refused, "no 503 after 400 requests of 256 KB to a Computer that does not read")
	require.Contains(t, refused.Message, `"slow" is not reading`)
	t.Logf("refused with 503 after %d requests of 256 KB", sent)

	// The other office carries on while o1 has a congested Computer.
	vals := other.call(protocol.EventGetTools, getTools("a2", "c2", "meanwhile"))
	require.Equal(t, "meanwhile", vals[0].(map[string]any)["req_id"])

	// Over the limit for the stall timeout: closed, its calls fail at once.
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "slow"}, a.next(protocol.NotifyLeaveOffice))
	e := requireError(t, <-answers, protocol.CodeNotFound)
	require.Contains(t, e.Message, "disconnected before answering")
	heapReturns(t, base, 8<<20)
}

// TestHostileBigStrings: names, office ids and req_ids over their
// maxLength are refused with 400 naming the path; the sender's connection
// carries on, and twenty joins with 3 MB names leave nothing behind.
func TestHostileBigStrings(t *testing.T) {
	ts := startServer(t)
	a, cs := office(t, ts, "o1", "a1", "c1")
	cs[0].answer(protocol.EventGetTools, toolsAnswer)
	p := dial(t, ts.url)

	ok, reason := p.join(computerRole, strings.Repeat("n", 257), "o1")
	require.Contains(t, requireReason(t, ok, reason, protocol.CodeBadRequest), "/name")
	ok, reason = p.join(computerRole, "n", strings.Repeat("o", 257))
	require.Contains(t, requireReason(t, ok, reason, protocol.CodeBadRequest), "/office_id")
	p.mustJoin(computerRole, strings.Repeat("n", 256), "o3")

	e := requireError(t, a.call(protocol.EventGetTools, getTools("a1", "c1", strings.Repeat("r", 129))), protocol.CodeBadRequest)
	require.Contains(t, e.Message, "/req_id")

	base := liveHeap()
	big := strings.Repeat("x", 3<<20)
	for i := range 20 {
		r := dialEngine(t, ts.url, keyHeader, 0)
		require.Contains(t, r.connectSmcp(nil), `"sid"`)
		vals := r.call(1, protocol.EventJoinOffice, map[string]any{"role": "computer", "name": big + fmt.Sprint(i), "office_id": big})
		require.Equal(t, false, vals[0])
		require.Contains(t, vals[1], "400 BadRequest")
		require.Less(t, len(vals[1].(string)), 4096, "the refusal does not echo the value")
		_ = r.ws.Close()
	}
	a.noEvent(protocol.NotifyEnterOffice)
	heapReturns(t, base, 8<<20)
	vals := a.call(protocol.EventGetTools, getTools("a1", "c1", "after"))
	require.Equal(t, "after", vals[0].(map[string]any)["req_id"])
}

// TestHostileInFlightCap: over WithMaxInFlight an Agent gets 429 at once,
// nothing is queued, and the refusal says the request was not forwarded
// (the Agent may send it again); an answer frees a slot.
func TestHostileInFlightCap(t *testing.T) {
	ts := startServer(t, server.WithMaxInFlight(2))
	a, cs := office(t, ts, "o1", "a1", "c1")
	held := make(chan socket.Ack, 4)
	_ = cs[0].sock.On(protocol.EventGetTools, func(args ...any) { held <- args[len(args)-1].(socket.Ack) })
	results := make(chan []any, 4)
	for i := range 2 {
		require.NoError(t, a.sock.Emit(protocol.EventGetTools, getTools("a1", "c1", fmt.Sprint("r", i)), socket.Ack(func(v []any, _ error) { results <- v })))
	}
	first := <-held
	<-held // the second stays unanswered
	e := requireError(t, a.call(protocol.EventGetTools, getTools("a1", "c1", "r2")), protocol.CodeTooManyRequests)
	require.Contains(t, e.Message, "2 requests in flight")
	require.Equal(t, false, e.Details["forwarded"])

	// The other office is not limited by this one.
	b, bcs := office(t, ts, "o2", "b1", "d1")
	bcs[0].answer(protocol.EventGetTools, toolsAnswer)
	require.Equal(t, "x", b.call(protocol.EventGetTools, getTools("b1", "d1", "x"))[0].(map[string]any)["req_id"])

	// One answer frees one slot.
	first([]any{map[string]any{"tools": []any{}, "req_id": "r0"}}, nil)
	<-results
	go func() { (<-held)([]any{map[string]any{"tools": []any{}, "req_id": "r3"}}, nil) }()
	require.Equal(t, "r3", a.call(protocol.EventGetTools, getTools("a1", "c1", "r3"))[0].(map[string]any)["req_id"])

	// The Computer's own cap: a1 leaves with two calls still in flight to
	// c1, and the next Agent of the office finds c1 at its cap.
	require.NoError(t, a.sock.Emit(protocol.EventGetTools, getTools("a1", "c1", "r4"), socket.Ack(func(v []any, _ error) { results <- v })))
	<-held
	a.call(protocol.EventLeaveOffice, map[string]any{"office_id": "o1"})
	a2 := dial(t, ts.url).mustJoin(agentRole, "a2", "o1")
	e = requireError(t, a2.call(protocol.EventGetTools, getTools("a2", "c1", "r5")), protocol.CodeTooManyRequests)
	require.Contains(t, e.Message, `computer "c1" already has 2 requests in flight`)
	require.Equal(t, false, e.Details["forwarded"])
}

// TestHostileToolCallTimeout: a tool call asking for more than
// WithMaxToolCallTimeout is refused with 400 naming the bound; the
// Computer never sees it.
func TestHostileToolCallTimeout(t *testing.T) {
	ts := startServer(t, server.WithMaxToolCallTimeout(time.Minute))
	a, cs := office(t, ts, "o1", "a1", "c1")
	cs[0].answer(protocol.EventToolCall, func(req map[string]any) []any {
		return []any{map[string]any{"content": []any{}, "isError": false}}
	})
	call := func(timeout int) []any {
		return a.call(protocol.EventToolCall, map[string]any{"agent": "a1", "req_id": "r", "computer": "c1", "tool_name": "t", "params": map[string]any{}, "timeout": timeout})
	}
	e := requireError(t, call(86400), protocol.CodeBadRequest)
	require.Contains(t, e.Message, "maximum of 60s")
	require.Equal(t, 60.0, e.Details["max_timeout"])
	require.Equal(t, false, call(60)[0].(map[string]any)["isError"], "the bound itself is accepted")
	require.Equal(t, 60.0, cs[0].next(protocol.EventToolCall).(map[string]any)["timeout"])
	cs[0].noEvent(protocol.EventToolCall) // the refused call never reached it
}

// TestHostileOfficeSize: a join over WithMaxOfficeSize is refused with
// 4105; other offices and a seat freed by a leave carry on.
func TestHostileOfficeSize(t *testing.T) {
	ts := startServer(t, server.WithMaxOfficeSize(2))
	a, cs := office(t, ts, "o1", "a1", "c1")
	extra := dial(t, ts.url)
	ok, reason := extra.join(computerRole, "c2", "o1")
	require.Contains(t, requireReason(t, ok, reason, protocol.CodeOfficeFull), "maximum of 2")
	extra.mustJoin(computerRole, "c2", "o2")
	cs[0].call(protocol.EventLeaveOffice, map[string]any{"office_id": "o1"})
	extra.mustJoin(computerRole, "c2", "o1")
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "c2"}, a.next(protocol.NotifyEnterOffice))
}

// TestHostileAuthAttempts: each refused CONNECT gets its connect_error;
// the WithMaxAuthFailures-th also closes the connection, so no key can be
// guessed at speed on one socket.
func TestHostileAuthAttempts(t *testing.T) {
	ts := startServer(t, server.WithMaxAuthFailures(3))
	r := dialEngine(t, ts.url, nil, 0)
	for i := range 3 {
		got := r.connectSmcp(map[string]any{"api_key": fmt.Sprint("guess-", i)})
		require.Equal(t, `44/smcp,{"data":{"code":401,"message":"invalid API key"},"message":"invalid API key"}`, got, "attempt %d", i)
	}
	require.True(t, r.closed(), "the third refusal closes the connection")

	// A good key on a fresh connection is not affected.
	r = dialEngine(t, ts.url, nil, 0)
	require.Contains(t, r.connectSmcp(map[string]any{"api_key": "wrong"}), `"code":401`)
	require.Contains(t, r.connectSmcp(map[string]any{"api_key": testKey}), `"sid"`)
}

// TestHostileRefusalLogs: a client without a key had the Server write a
// log line per refused CONNECT, and one more per connection closed for
// them, as fast as it could open connections. Those lines are bounded
// Server-wide (the first 100, then 10 a second; the next line written
// counts the ones left out); every refusal is still answered.
func TestHostileRefusalLogs(t *testing.T) {
	const conns = 100
	logs, logOpt := captureLogs(t)
	ts := startServer(t, logOpt, server.WithMaxAuthFailures(3))
	start := time.Now()
	for i := range conns {
		r := dialEngine(t, ts.url, nil, 0)
		for j := range 3 {
			require.Contains(t, r.connectSmcp(map[string]any{"api_key": fmt.Sprint("guess-", i, "-", j)}), `"code":401`)
		}
		require.True(t, r.closed())
	}
	elapsed := time.Since(start)
	lines := logs.count("connection refused", nil) + logs.count("connection closed: too many refused connects", nil)
	bound := 100 + int(10*elapsed.Seconds()) + 10
	t.Logf("%d refused CONNECTs on %d connections in %v: %d log lines (bound %d)", 3*conns, conns, elapsed.Round(time.Millisecond), lines, bound)
	require.LessOrEqual(t, lines, bound)

	// Once the budget refills, the next line says how many were left out.
	time.Sleep(200 * time.Millisecond)
	r := dialEngine(t, ts.url, nil, 0)
	require.Contains(t, r.connectSmcp(map[string]any{"api_key": "late"}), `"code":401`)
	require.Eventually(t, func() bool {
		for _, m := range logs.lines("connection refused") {
			if n, ok := m["not_logged"].(float64); ok && n > 0 {
				return true
			}
		}
		return false
	}, wait, 10*time.Millisecond, "no line counts the refusals left out")
	dial(t, ts.url).mustJoin(agentRole, "a1", "o1") // a client with a key is not affected
}

// TestHostileRefusalLogsAcrossSessions: a session's refusal lines are
// bounded (its first 100, then 10 a second), but a client with a key could
// open session after session and have each one's first 100 logged. All
// sessions' refusal lines share a Server-wide budget too (the first 1,000,
// then 100 a second); every refusal is still answered.
func TestHostileRefusalLogsAcrossSessions(t *testing.T) {
	const sessions, each = 30, 100
	logs, logOpt := captureLogs(t)
	ts := startServer(t, logOpt)
	start := time.Now()
	for range sessions {
		r := dialRaw(t, ts.url)
		for i := range each {
			r.send(fmt.Sprintf(`42%s,%d["no:such_event",{}]`, protocol.Namespace, i))
		}
		for range each {
			require.Contains(t, r.read(), `"code":400`)
		}
		_ = r.ws.Close()
	}
	elapsed := time.Since(start)
	lines := logs.count("request refused", nil)
	bound := 1000 + int(100*elapsed.Seconds()) + 10
	t.Logf("%d refusals on %d sessions in %v: %d log lines (bound %d)", sessions*each, sessions, elapsed.Round(time.Millisecond), lines, bound)
	require.LessOrEqual(t, lines, bound)
}

// TestHostileConnectWindow: a transport that is not admitted to /smcp
// within WithConnectTimeout is closed, whether it sends nothing, only a
// refused CONNECT, or leaves /smcp and stays.
func TestHostileConnectWindow(t *testing.T) {
	ts := startServer(t, server.WithConnectTimeout(time.Second))
	t.Run("silent", func(t *testing.T) {
		require.True(t, dialEngine(t, ts.url, nil, 0).closed())
	})
	t.Run("refused once", func(t *testing.T) {
		r := dialEngine(t, ts.url, nil, 0)
		require.Contains(t, r.connectSmcp(nil), `"code":401`)
		require.True(t, r.closed())
	})
	t.Run("leaves the namespace", func(t *testing.T) {
		r := dialEngine(t, ts.url, keyHeader, 0)
		require.Contains(t, r.connectSmcp(nil), `"sid"`)
		r.send("41" + protocol.Namespace + ",")
		require.True(t, r.closed())
	})
}

// TestHostileUnknownNamespace: the library answers a CONNECT to a namespace
// the Server does not serve with a connect_error at once, and "/" is refused
// with 404; both count as refused CONNECTs.
func TestHostileUnknownNamespace(t *testing.T) {
	ts := startServer(t, server.WithMaxAuthFailures(2))
	r := dialEngine(t, ts.url, keyHeader, 0)
	r.send("40/nope,")
	require.Equal(t, `44/nope,{"message":"Invalid namespace"}`, r.read())
	r.send("40")
	require.Contains(t, r.read(), `44{"data":{"code":404}`)
	r.send("40")
	require.Contains(t, r.read(), `44{"data":{"code":404}`)
	require.True(t, r.closed())
}

// TestHostileScopedKeys: a scoped key joins only its offices and roles; the
// refusal is 403 and names only the office asked for.
func TestHostileScopedKeys(t *testing.T) {
	ts := startServerAuth(t, server.WithKeys(
		server.Key{ID: "tenant-a", Secret: "secret-a", Offices: []string{"a-office"}},
		server.Key{ID: "tenant-b-agent", Secret: "secret-b", Offices: []string{"b-office"}, Roles: []protocol.Role{protocol.RoleAgent}},
	), server.WithAPIKeys(testKey))
	dialKey := func(key string) *peer {
		p, err := connect(t, ts.url, dialOpts{headers: http.Header{"X-Api-Key": {key}}})
		require.NoError(t, err)
		return p
	}
	b := dialKey("secret-b")
	ok, reason := b.join(agentRole, "b", "a-office")
	msg := requireReason(t, ok, reason, protocol.CodeForbidden)
	require.NotContains(t, msg, "b-office", "a refusal names no other office")
	ok, reason = b.join(computerRole, "b", "b-office")
	requireReason(t, ok, reason, protocol.CodeForbidden)
	b.mustJoin(agentRole, "b", "b-office")

	dialKey("secret-a").mustJoin(computerRole, "ca", "a-office")
	dial(t, ts.url).mustJoin(computerRole, "anywhere", "b-office") // an unscoped key goes anywhere
	require.Equal(t, map[string]any{"office_id": "b-office", "computer": "anywhere"}, b.next(protocol.NotifyEnterOffice))
}

// TestHostileScopedKeyProbes: a key scoped to one tenant's offices learns
// nothing of another tenant's by probing: leaving, listing or routing to an
// office or a Computer outside its scope answers alike whether it exists or
// not (the office ids and names asked for aside).
func TestHostileScopedKeyProbes(t *testing.T) {
	ts := startServerAuth(t, server.WithKeys(
		server.Key{ID: "tenant-a", Secret: "secret-a", Offices: []string{"a-office"}},
		server.Key{ID: "tenant-b", Secret: "secret-b", Offices: []string{"b-office"}},
	))
	dialKey := func(key string) *peer {
		p, err := connect(t, ts.url, dialOpts{headers: http.Header{"X-Api-Key": {key}}})
		require.NoError(t, err)
		return p
	}
	dialKey("secret-b").mustJoin(computerRole, "b-computer", "b-office")
	dialKey("secret-b").mustJoin(agentRole, "b-agent", "b-office")
	prober := dialKey("secret-a").mustJoin(agentRole, "a-agent", "a-office")

	answer := func(vals []any, office string) string {
		b, err := json.Marshal(vals)
		require.NoError(t, err)
		return strings.ReplaceAll(string(b), office, "OFFICE")
	}
	leave := func(office string) string {
		return answer(prober.call(protocol.EventLeaveOffice, map[string]any{"office_id": office}), office)
	}
	require.Equal(t, leave("no-such-office"), leave("b-office"), "leave_office tells an existing office from a missing one")
	require.Contains(t, leave("b-office"), "4103 NotInRoom")
	list := func(office string) string {
		return answer(prober.call(protocol.EventListRoom, map[string]any{"agent": "a-agent", "req_id": "r", "office_id": office}), office)
	}
	require.Equal(t, list("no-such-office"), list("b-office"), "list_room tells an existing office from a missing one")
	route := func(computer string) string {
		return answer(prober.call(protocol.EventGetTools, getTools("a-agent", computer, "r")), computer)
	}
	require.Equal(t, route("no-such-computer"), route("b-computer"), "a routed request tells an existing Computer from a missing one")

	// Within the key's scope the 4102 / 4103 distinction of the protocol stays.
	ok, reason := prober.join(agentRole, "a-agent", "a-office")
	require.True(t, ok, "%v", reason)
	inScope := dialKey("secret-a")
	vals := inScope.call(protocol.EventLeaveOffice, map[string]any{"office_id": "a-office"})
	requireReason(t, vals[0].(bool), vals[1], protocol.CodeNotInRoom)
}

// TestHostileKeySessions: a key with MaxSessions is admitted that many
// sessions at once on a node; the next CONNECT is refused with 429 (and
// counts as a refused CONNECT), a closed session gives its place back, and
// another key is not affected: one tenant cannot take every place of a
// Server that hosts several.
func TestHostileKeySessions(t *testing.T) {
	ts := startServerAuth(t, server.WithKeys(
		server.Key{ID: "tenant-a", Secret: "secret-a", MaxSessions: 2},
		server.Key{ID: "tenant-b", Secret: "secret-b"},
	))
	a := http.Header{"X-Api-Key": {"secret-a"}}
	first := dialEngine(t, ts.url, a, 0)
	require.Contains(t, first.connectSmcp(nil), `"sid"`)
	second := dialEngine(t, ts.url, a, 0)
	require.Contains(t, second.connectSmcp(nil), `"sid"`)
	third := dialEngine(t, ts.url, a, 0)
	require.Equal(t, `44/smcp,{"data":{"code":429,"message":"this key already has 2 sessions"},"message":"this key already has 2 sessions"}`, third.connectSmcp(nil))

	p, err := connect(t, ts.url, dialOpts{headers: http.Header{"X-Api-Key": {"secret-b"}}})
	require.NoError(t, err)
	p.mustJoin(agentRole, "b", "o1")

	// A closed session gives its place back.
	_ = first.ws.Close()
	require.Eventually(t, func() bool {
		r := dialEngine(t, ts.url, a, 0)
		got := r.connectSmcp(nil)
		_ = r.ws.Close()
		require.Regexp(t, `"sid"|"code":429`, got)
		return strings.Contains(got, `"sid"`)
	}, wait, 50*time.Millisecond)
}

// TestHostileJavaScriptClient: the official JavaScript client misbehaving.
// A Buffer in an event (a BINARY_EVENT) closes its transport; a wrong key
// gets a coded connect_error; an oversized name gets a 400. The office of a Go Agent carries on.
func TestHostileJavaScriptClient(t *testing.T) {
	nm := nodeModules(t)
	ts := startServer(t, server.WithMaxAuthFailures(3))
	a, cs := office(t, ts, "o1", "a1", "c1")
	cs[0].answer(protocol.EventGetTools, toolsAnswer)
	node := func(env ...string) *peerProcess {
		return startPeer(t, append([]string{"NODE_PATH=" + nm, "SMCP_URL=" + ts.url, "SMCP_API_KEY=" + testKey}, env...), "node", "js_hostile.js")
	}

	t.Run("binary", func(t *testing.T) {
		p := node("SMCP_MODE=binary")
		require.Equal(t, map[string]any{"step": "joined", "ok": true, "reason": nil}, p.next(t))
		require.Equal(t, map[string]any{"step": "closed", "reason": "transport close"}, p.next(t))
		require.NoError(t, p.wait(t))
	})
	t.Run("wrong key", func(t *testing.T) {
		// The client gives up its transport after one refusal; repeated
		// attempts on one transport are TestHostileAuthAttempts, in frames.
		p := node("SMCP_MODE=badkeys")
		require.Equal(t, map[string]any{"step": "connect_error", "data": map[string]any{"code": 401.0, "message": "invalid API key"}}, p.next(t))
		require.Equal(t, "closed", p.next(t)["step"])
		require.NoError(t, p.wait(t))
	})
	t.Run("oversized name", func(t *testing.T) {
		p := node("SMCP_MODE=bigname", "SMCP_NAME_LEN=100000")
		m := p.next(t)
		require.Equal(t, false, m["ok"])
		require.Regexp(t, `^400 BadRequest: .*/name`, m["reason"])
		require.NoError(t, p.wait(t))
	})
	vals := a.call(protocol.EventGetTools, getTools("a1", "c1", "after"))
	require.Equal(t, "after", vals[0].(map[string]any)["req_id"], "the office carries on")
}

// dialFrom opens an Engine.IO websocket from the loopback source address
// ip and returns it with the handshake's HTTP status (101 when opened).
func dialFrom(t *testing.T, url, ip string) (*rawConn, int) {
	t.Helper()
	d := *websocket.DefaultDialer
	d.NetDialContext = (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext
	wsURL := "ws" + strings.TrimPrefix(url, "http") + "/socket.io/?EIO=4&transport=websocket"
	ws, resp, err := d.Dial(wsURL, nil)
	if err != nil {
		require.NotNil(t, resp, "dial from %s: %v", ip, err)
		_ = resp.Body.Close()
		return nil, resp.StatusCode
	}
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = ws.Close() })
	r := &rawConn{t: t, ws: ws}
	require.True(t, strings.HasPrefix(r.read(), "0{"), "engine open")
	return r, resp.StatusCode
}

// TestHostileConnectionCount: the connections one Server holds, joined or
// not, are bounded in all (503 at the handshake) and per remote address
// (429), a long-polling handshake included; a place freed by a closed
// connection is taken again, and refusals are counted.
func TestHostileConnectionCount(t *testing.T) {
	reg := prometheus.NewRegistry()
	ts := startServer(t, server.WithMaxConnections(4), server.WithMaxConnectionsPerIP(2), server.WithMetrics(reg))

	a1, st := dialFrom(t, ts.url, "127.0.0.1")
	require.Equal(t, http.StatusSwitchingProtocols, st)
	_, st = dialFrom(t, ts.url, "127.0.0.1")
	require.Equal(t, http.StatusSwitchingProtocols, st)
	_, st = dialFrom(t, ts.url, "127.0.0.1")
	require.Equal(t, http.StatusTooManyRequests, st, "a third connection from one address")

	// Another address is not affected by the first one's bound...
	b1, st := dialFrom(t, ts.url, "127.0.0.2")
	require.Equal(t, http.StatusSwitchingProtocols, st)
	require.Contains(t, b1.connectSmcp(map[string]any{"api_key": testKey}), `"sid"`)
	_, st = dialFrom(t, ts.url, "127.0.0.2")
	require.Equal(t, http.StatusSwitchingProtocols, st)
	// ...but the Server's is full now, for every address and transport.
	_, st = dialFrom(t, ts.url, "127.0.0.3")
	require.Equal(t, http.StatusServiceUnavailable, st, "a fifth connection")
	resp, err := http.Get(ts.url + "/socket.io/?EIO=4&transport=polling")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.JSONEq(t, `{"code":503,"message":"smcp server: too many connections"}`, string(body))

	// The admitted ones carry on; a closed one frees its place.
	agent := b1
	require.Equal(t, true, agent.call(1, string(protocol.EventJoinOffice), map[string]any{"role": "agent", "name": "a", "office_id": "o"})[0])
	require.NoError(t, a1.ws.Close())
	require.True(t, eventually(func() bool {
		r, st := dialFrom(t, ts.url, "127.0.0.3")
		if r != nil {
			_ = r.ws.Close()
		}
		return st == http.StatusSwitchingProtocols
	}), "the place of a closed connection is taken again")

	n, err := testutil.GatherAndCount(reg, "smcp_server_connection_refusals_total")
	require.NoError(t, err)
	require.Equal(t, 2, n, "both reasons counted")
}

// TestHostilePreAdmissionPayload: until its /smcp CONNECT is admitted, a
// connection's messages are bounded by 64 KiB, on both transports: a larger
// one closes a websocket and is refused 413 on long-polling. Once admitted,
// the configured payload limit applies: the same message is read and
// answered.
func TestHostilePreAdmissionPayload(t *testing.T) {
	ts := startServer(t)
	big := strings.Repeat("n", 100<<10)
	join := func(id int) string {
		b, err := json.Marshal([]any{protocol.EventJoinOffice, map[string]any{"role": "computer", "name": big, "office_id": "o"}})
		require.NoError(t, err)
		return fmt.Sprintf("42%s,%d%s", protocol.Namespace, id, b)
	}

	// A CONNECT with a 100 KB auth payload: within the payload limit it
	// would be answered 401 and the connection kept for two more tries.
	bigConnect := "40" + protocol.Namespace + `,{"api_key":"` + big + `"}`
	t.Run("websocket, its CONNECT", func(t *testing.T) {
		r := dialEngine(t, ts.url, nil, 0)
		_ = r.ws.WriteMessage(websocket.TextMessage, []byte(bigConnect)) // may fail: the Server stops reading at 64 KiB and closes
		require.True(t, r.closed())
	})
	t.Run("websocket after a refused CONNECT", func(t *testing.T) {
		r := dialEngine(t, ts.url, nil, 0)
		require.Contains(t, r.connectSmcp(map[string]any{"api_key": "wrong"}), `"code":401`)
		_ = r.ws.WriteMessage(websocket.TextMessage, []byte(bigConnect))
		require.True(t, r.closed())
	})
	t.Run("long-polling before the CONNECT", func(t *testing.T) {
		resp, err := http.Get(ts.url + "/socket.io/?EIO=4&transport=polling")
		require.NoError(t, err)
		open, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		var hs struct{ Sid string }
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(string(open), "0")), &hs), "%s", open)
		resp, err = http.Post(ts.url+"/socket.io/?EIO=4&transport=polling&sid="+hs.Sid, "text/plain", strings.NewReader(bigConnect))
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	})
	t.Run("websocket once admitted", func(t *testing.T) {
		r := dialEngine(t, ts.url, keyHeader, 0)
		require.Contains(t, r.connectSmcp(nil), `"sid"`)
		r.send(join(7))
		want := fmt.Sprintf("43%s,7", protocol.Namespace)
		for {
			m := r.read()
			if rest, ok := strings.CutPrefix(m, want); ok {
				require.Contains(t, rest, `400 BadRequest`, "the name's maxLength, read and answered")
				break
			}
		}
		got := r.call(8, protocol.EventJoinOffice, map[string]any{"role": "computer", "name": "c", "office_id": "o"})
		require.Equal(t, true, got[0], "still open: %v", got)
	})
}

// trickle opens a websocket without a key and sends all but the end of a
// message just under the pre-admission limit: the Server holds what it has
// read of it until the connect window ends.
func trickle(t *testing.T, url string) *rawConn {
	t.Helper()
	r := dialEngine(t, url, nil, 0)
	w, err := r.ws.NextWriter(websocket.TextMessage)
	require.NoError(t, err)
	_, err = w.Write([]byte(strings.Repeat("x", 63<<10))) // sent as unfinished fragments
	require.NoError(t, err)
	return r
}

// handshake opens an Engine.IO websocket and returns its HTTP status and,
// when refused, the body.
func handshake(t *testing.T, url string, header http.Header) (*rawConn, int, string) {
	t.Helper()
	wsURL := "ws" + strings.TrimPrefix(url, "http") + "/socket.io/?EIO=4&transport=websocket"
	ws, resp, err := websocket.DefaultDialer.Dial(wsURL, header)
	if err != nil {
		require.NotNil(t, resp, "dial: %v", err)
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		return nil, resp.StatusCode, string(body)
	}
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = ws.Close() })
	r := &rawConn{t: t, ws: ws}
	require.True(t, strings.HasPrefix(r.read(), "0{"), "engine open")
	return r, resp.StatusCode, ""
}

// TestHostilePendingConnections: connections not admitted to /smcp yet are
// bounded apart from the others (WithMaxPendingConnections): each can make
// the Server hold a message of up to 64 KiB for the connect window. Beyond
// the bound a handshake is answered 503 on both transports, so what they
// hold is bounded; admitted connections do not count, so an office carries
// on and an admission frees a place; the heap returns once the attackers
// are gone. (The attackers share one address: its share of the bound is
// lifted here, TestHostilePendingShare checks it.)
func TestHostilePendingConnections(t *testing.T) {
	const bound = 40
	reg := prometheus.NewRegistry()
	ts := startServer(t, server.WithMaxPendingConnections(bound), server.WithMaxPendingPerAddress(0), server.WithMetrics(reg))
	a, cs := office(t, ts, "o1", "a1", "c1") // admitted: not pending
	cs[0].answer(protocol.EventGetTools, toolsAnswer)
	base := liveHeap()

	var attackers []*rawConn
	for range bound {
		attackers = append(attackers, trickle(t, ts.url))
	}
	_, st, body := handshake(t, ts.url, keyHeader)
	require.Equal(t, http.StatusServiceUnavailable, st, "one pending connection more, even with a key")
	require.JSONEq(t, `{"code":503,"message":"smcp server: too many connections awaiting admission"}`, body)
	resp, err := http.Get(ts.url + "/socket.io/?EIO=4&transport=polling")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "long-polling too")
	vals := a.call(protocol.EventGetTools, getTools("a1", "c1", "during"))
	require.Equal(t, "during", vals[0].(map[string]any)["req_id"], "the office carries on")
	// What the attackers hold (both ends of their connections live in this
	// process) is bounded by their number: about 100 KB each.
	held := liveHeap() - base
	t.Logf("%d pending connections holding 63 KiB each: live heap +%d KB", bound, held>>10)
	require.Less(t, held, uint64(bound*200<<10))

	// A closed attacker frees its place; an admitted connection gives its
	// place back at once.
	require.NoError(t, attackers[0].ws.Close())
	var x *rawConn
	require.True(t, eventually(func() bool {
		x, st, _ = handshake(t, ts.url, keyHeader)
		return st == http.StatusSwitchingProtocols
	}), "the place of a closed connection is taken again")
	require.Contains(t, x.connectSmcp(nil), `"sid"`)
	var y *rawConn
	require.True(t, eventually(func() bool {
		y, st, _ = handshake(t, ts.url, nil)
		return st == http.StatusSwitchingProtocols
	}), "an admitted connection no longer counts")
	_, st, _ = handshake(t, ts.url, nil)
	require.Equal(t, http.StatusServiceUnavailable, st, "full again")

	mfs, err := reg.Gather()
	require.NoError(t, err)
	var refused float64
	for _, mf := range mfs {
		if mf.GetName() != "smcp_server_connection_refusals_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			require.Equal(t, "max_pending_connections", m.GetLabel()[0].GetValue())
			refused = m.GetCounter().GetValue()
		}
	}
	require.GreaterOrEqual(t, refused, 3.0, "refusals counted under their reason")

	for _, c := range append(attackers, x, y) {
		_ = c.ws.Close()
	}
	heapReturns(t, base, 2<<20)
	vals = a.call(protocol.EventGetTools, getTools("a1", "c1", "after"))
	require.Equal(t, "after", vals[0].(map[string]any)["req_id"])
}
