package server_test

// Hostile clients at the Engine.IO and Socket.IO levels, below the SMCP
// events: long-polling requests that overlap or trickle, packets no client
// library sends, and names that are not text (spec/protocol.md, Limits;
// spec/decisions.md, Limits against hostile clients).

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// pollSession opens an Engine.IO long-polling session without a key and
// returns the URL of its requests.
func pollSession(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/socket.io/?EIO=4&transport=polling")
	require.NoError(t, err)
	open, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	var hs struct{ Sid string }
	require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(string(open), "0")), &hs), "%s", open)
	return url + "/socket.io/?EIO=4&transport=polling&sid=" + hs.Sid
}

// noGoroutineIn waits until no goroutine has fn on its stack.
func noGoroutineIn(t *testing.T, fn string) {
	t.Helper()
	var n int
	ok := eventually(func() bool {
		var b strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
		n = 0
		for _, g := range strings.Split(b.String(), "\n\n") {
			if strings.Contains(g, fn) {
				c, _, _ := strings.Cut(g, " @")
				var k int
				_, _ = fmt.Sscan(c, &k)
				n += k
			}
		}
		return n == 0
	})
	require.True(t, ok, "%d goroutines still in %s", n, fn)
}

// TestHostileLongPolling: every long-polling request of a session ends
// within the heartbeat's interval plus its timeout, whatever the client
// does. Two overlapping polls close their session (the library's rule) and
// the one left waiting is answered, not held; a POST whose body trickles
// is cut off, not read for as long as the client likes after its session
// is gone. The goroutines return, and an office carries on meanwhile.
func TestHostileLongPolling(t *testing.T) {
	ts := startServer(t, server.WithHeartbeat(300*time.Millisecond, 600*time.Millisecond), server.WithConnectTimeout(time.Second))
	a, cs := office(t, ts, "o1", "a1", "c1")
	cs[0].answer(protocol.EventGetTools, toolsAnswer)
	// The test's bound, far above the Server's; no idle connections left
	// to count.
	client := &http.Client{Timeout: wait, Transport: &http.Transport{DisableKeepAlives: true}}

	const sessions = 10
	var wg sync.WaitGroup
	errs := make(chan error, 3*sessions)
	statuses := make(chan string, 3*sessions)
	for range sessions {
		u := pollSession(t, ts.url)
		for range 2 { // overlapping polls
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Get(u)
				if err == nil {
					b, _ := io.ReadAll(resp.Body)
					_ = resp.Body.Close()
					statuses <- fmt.Sprint(resp.StatusCode, " ", strings.TrimSpace(string(b)))
				}
				errs <- err
			}()
		}
		wg.Add(1)
		go func() { // a POST whose body never ends
			defer wg.Done()
			pr, pw := io.Pipe()
			stop := make(chan struct{})
			go func() {
				defer pw.Close()
				for {
					if _, err := pw.Write([]byte("6\x1e")); err != nil {
						return
					}
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond):
					}
				}
			}()
			resp, err := client.Post(pollSession(t, ts.url), "text/plain", pr)
			close(stop)
			_ = pr.Close()
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				statuses <- fmt.Sprint(resp.StatusCode, " ", strings.TrimSpace(string(b)))
			}
			// An answer, or a connection the Server closed: either ends
			// the request; only the client's own timeout would be a hang.
			if err != nil && isTimeout(err) {
				errs <- err
			}
		}()
	}
	vals := a.call(protocol.EventGetTools, getTools("a1", "c1", "during"))
	require.Equal(t, "during", vals[0].(map[string]any)["req_id"], "the office carries on")
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err, "every poll is answered; none is held until the client gives up")
	}
	close(statuses)
	count := map[string]int{}
	for st := range statuses {
		if strings.HasPrefix(st, "200 ") {
			st = "200" // a poll's payload, whatever the session sent
		}
		count[st]++
	}
	require.Equal(t, map[string]int{
		"200": sessions, // the first poll of each session, answered by a ping or a close
		`400 {"code":400,"message":"smcp server: overlapping long-polling request"}`:       sessions,
		`408 {"code":408,"message":"smcp server: long-polling body not received in time"}`: sessions,
	}, count)
	// No request is still being served (the library's own timers of the
	// closed sessions run out on their own).
	noGoroutineIn(t, "engine/v3.(*server).HandleRequest")
}

// joinRaw sends a join on r with ack id id and returns the ack's arguments
// as sent (not decoded).
func (r *rawConn) joinRaw(id int, payload string) string {
	r.t.Helper()
	r.send(fmt.Sprintf(`42%s,%d["server:join_office",%s]`, protocol.Namespace, id, payload))
	want := fmt.Sprintf("43%s,%d", protocol.Namespace, id)
	for {
		if rest, ok := strings.CutPrefix(r.read(), want); ok {
			return rest
		}
	}
}

// TestHostileNames: a name or an office id is text every member of the
// office is told and may show or log. A control character in one (NUL, a
// line break, an escape sequence) is refused with 400 naming the field, not
// echoing the value; a payload that is not UTF-8 is refused with 400 too,
// where decoding would have turned distinct byte strings into one name
// (each invalid byte becoming U+FFFD). So is an invisible character that
// reorders or hides text (a bidirectional override, a zero-width space).
// Valid non-ASCII names join, a zero-width non-joiner within a word too;
// the connection and the office carry on.
func TestHostileNames(t *testing.T) {
	ts := startServer(t)
	a, cs := office(t, ts, "o1", "a1", "c1")
	cs[0].answer(protocol.EventGetTools, toolsAnswer)
	r := dialRaw(t, ts.url)
	cases := []struct{ payload, want string }{
		{`{"role":"computer","name":"a\u0000b","office_id":"o1"}`, `[false,"400 BadRequest: server:join_office request: /name: control character U+0000 at byte 1"]`},
		{`{"role":"computer","name":"c","office_id":"o1\nlevel=ERROR"}`, `[false,"400 BadRequest: server:join_office request: /office_id: control character U+000A at byte 2"]`},
		{`{"role":"computer","name":"\u001b[31mc1","office_id":"o1"}`, `[false,"400 BadRequest: server:join_office request: /name: control character U+001B at byte 0"]`},
		{`{"role":"computer","name":"c\u0085","office_id":"o1"}`, `[false,"400 BadRequest: server:join_office request: /name: control character U+0085 at byte 1"]`},
		{"{\"role\":\"computer\",\"name\":\"c1\xff\",\"office_id\":\"o1\"}", `[false,"400 BadRequest: server:join_office payload is not valid UTF-8"]`},
		{"{\"role\":\"computer\",\"name\":\"c1\xfe\",\"office_id\":\"o1\"}", `[false,"400 BadRequest: server:join_office payload is not valid UTF-8"]`},
		{"{\"role\":\"computer\",\"name\":\"c1\",\"office_id\":\"o1\xc0\xaf\"}", `[false,"400 BadRequest: server:join_office payload is not valid UTF-8"]`},
		// A right-to-left override makes "c1\u202egpj.exe" display as "c1exe.jpg".
		{`{"role":"computer","name":"c1\u202egpj.exe","office_id":"o1"}`, `[false,"400 BadRequest: server:join_office request: /name: invisible formatting character U+202E at byte 2"]`},
		{`{"role":"computer","name":"c\u200b1","office_id":"o1"}`, `[false,"400 BadRequest: server:join_office request: /name: invisible formatting character U+200B at byte 1"]`},
		{`{"role":"computer","name":"c","office_id":"\u2067o1"}`, `[false,"400 BadRequest: server:join_office request: /office_id: invisible formatting character U+2067 at byte 0"]`},
	}
	for i, tc := range cases {
		require.Equal(t, tc.want, r.joinRaw(i+1, tc.payload), "%q", tc.payload)
	}
	// A routed request that is not UTF-8 gets the coded 400 too.
	r2 := dialRaw(t, ts.url)
	require.Equal(t, "[true,null]", r2.joinRaw(1, `{"role":"agent","name":"a2","office_id":"o2"}`))
	r2.send("42/smcp,2[\"client:get_tools\",{\"agent\":\"a2\",\"req_id\":\"r\xff\",\"computer\":\"c\"}]")
	require.Equal(t, `43/smcp,2[{"error":{"code":400,"message":"client:get_tools payload is not valid UTF-8","details":{"event":"client:get_tools"}}}]`, r2.read())

	require.Equal(t, "[true,null]", r.joinRaw(20, `{"role":"computer","name":"rechner-ü-机器-\ufffd-می\u200cخواهم","office_id":"o1"}`), "valid UTF-8 joins, U+FFFD and a zero-width non-joiner included")
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "rechner-ü-机器-\ufffd-می\u200cخواهم"}, a.next(protocol.NotifyEnterOffice))
	vals := a.call(protocol.EventGetTools, getTools("a1", "c1", "after"))
	require.Equal(t, "after", vals[0].(map[string]any)["req_id"], "the office carries on")
}

// TestHostileDeepNesting: JSON nested far deeper than any SMCP value, within
// the payload limit. Beyond the decoders' nesting bound (10,000 levels, the
// same in jsontext and encoding/json) the packet is malformed and closes
// its sender's connection, a request's or a Computer's answer's alike (the
// Agent then gets its coded 404); within it the request is decoded,
// validated and answered. No stack overflow, no panic; the office carries
// on.
func TestHostileDeepNesting(t *testing.T) {
	ts := startServer(t, server.WithValidateAnswers(true))
	a, cs := office(t, ts, "o1", "a1", "c1")
	cs[0].answer(protocol.EventGetTools, toolsAnswer)
	nested := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	toolCall := func(agent string, id int, computer, toolName, params string) string {
		return fmt.Sprintf(`42/smcp,%d["client:tool_call",{"agent":%q,"req_id":"r%d","computer":%q,"tool_name":%s,"params":%s,"timeout":5}]`,
			id, agent, id, computer, toolName, params)
	}
	agent := func(t *testing.T, name string) *rawConn {
		r := dialRaw(t, ts.url)
		require.Equal(t, "[true,null]", r.joinRaw(1, fmt.Sprintf(`{"role":"agent","name":%q,"office_id":%q}`, name, name)))
		return r
	}

	t.Run("request beyond the bound", func(t *testing.T) {
		r := agent(t, "a2")
		r.send(toolCall("a2", 2, "c", `"t"`, `{"x":`+nested(100_000)+`}`))
		require.True(t, r.closed())
	})
	t.Run("request within the bound", func(t *testing.T) {
		r := agent(t, "a3")
		r.send(toolCall("a3", 2, "c", `"t"`, `{"x":`+nested(9_990)+`}`))
		require.Contains(t, r.read(), `43/smcp,2[{"error":{"code":404,`, "validated, then routed: no such computer")
		r.send(toolCall("a3", 3, "c", `5`, `{"x":`+nested(9_990)+`}`))
		require.Contains(t, r.read(), `43/smcp,3[{"error":{"code":400,"message":"client:tool_call request: /tool_name`)
	})
	t.Run("answer beyond the bound", func(t *testing.T) {
		comp := dialRaw(t, ts.url)
		require.Equal(t, "[true,null]", comp.joinRaw(1, `{"role":"computer","name":"deep","office_id":"o1"}`))
		require.Equal(t, map[string]any{"office_id": "o1", "computer": "deep"}, a.next(protocol.NotifyEnterOffice))
		go func() {
			for { // the request routed to it: answer it with the deep value
				_ = comp.ws.SetReadDeadline(time.Now().Add(wait))
				_, b, err := comp.ws.ReadMessage()
				if err != nil {
					return
				}
				id, ok := strings.CutPrefix(string(b), "42/smcp,")
				if !ok {
					continue
				}
				id, _, _ = strings.Cut(id, "[")
				_ = comp.ws.WriteMessage(websocket.TextMessage, []byte("43/smcp,"+id+"["+nested(100_000)+"]"))
			}
		}()
		e := requireError(t, a.call(protocol.EventGetTools, getTools("a1", "deep", "r-deep")), protocol.CodeNotFound)
		require.Contains(t, e.Message, "disconnected before answering")
	})
	vals := a.call(protocol.EventGetTools, getTools("a1", "c1", "after"))
	require.Equal(t, "after", vals[0].(map[string]any)["req_id"], "the office carries on")
}

// TestHostileSocketIOPackets: packets no client library sends, on an
// admitted connection. Those that break the Socket.IO or Engine.IO protocol
// close that connection at once (the libraries' rule, and ours for the
// event shapes); those that are merely useless are ignored, the connection
// carrying on. Either way nothing is held and the office carries on.
func TestHostileSocketIOPackets(t *testing.T) {
	ts := startServer(t)
	a, cs := office(t, ts, "o1", "a1", "c1")
	cs[0].answer(protocol.EventGetTools, toolsAnswer)
	closes := map[string]string{
		"a second CONNECT to /smcp":          `40/smcp,`,
		"an ack id over 64 bits":             `43/smcp,99999999999999999999999[]`,
		"event data not an array":            `42/smcp,1{"x":1}`,
		"empty event data":                   `42/smcp,1[]`,
		"event name an object":               `42/smcp,1[{}]`,
		"event name null":                    `42/smcp,1[null]`,
		"a ping from the client":             `2`,
		"an upgrade probe on a websocket":    `2probe`,
		"leaving a namespace never joined":   `41/nope,`,
		"a packet type that does not exist":  `47/smcp,[]`,
		"a namespace over its length bound":  `42/` + strings.Repeat("n", 100_000) + `,["x"]`,
		"an ack id over its length bound":    `43/smcp,` + strings.Repeat("1", 1000) + `[]`,
		"an Engine.IO type that is no type":  `9`,
		"an empty websocket message":         ``,
		"a reserved event name (disconnect)": `42/smcp,1["disconnect"]`,
	}
	i := 0
	for name, pkt := range closes {
		i++ // a name and an office each: a closed session's may not be released yet
		t.Run(name, func(t *testing.T) {
			r := dialRaw(t, ts.url)
			require.Equal(t, "[true,null]", r.joinRaw(100, fmt.Sprintf(`{"role":"agent","name":"x%d","office_id":"x%d"}`, i, i)))
			r.send(pkt)
			require.True(t, r.closed(), "%.40q closes its connection", pkt)
		})
	}
	ignored := map[string]string{
		"acks for ids never asked": `43/smcp,999[]`,
		"noops":                    `6`,
		"upgrades on a websocket":  `5`,
		"CONNECTs to unknown namespaces, under the refusal bound": `40/nope,`,
	}
	for name, pkt := range ignored {
		t.Run(name, func(t *testing.T) {
			r := dialRaw(t, ts.url)
			n := 1000
			if strings.HasPrefix(pkt, "40") {
				n = server.DefaultMaxAuthFailures - 1
			}
			for range n {
				r.send(pkt)
			}
			i++
			require.Equal(t, "[true,null]", r.joinRaw(100, fmt.Sprintf(`{"role":"agent","name":"y%d","office_id":"y%d"}`, i, i)), "the connection carries on")
		})
	}
	vals := a.call(protocol.EventGetTools, getTools("a1", "c1", "after"))
	require.Equal(t, "after", vals[0].(map[string]any)["req_id"], "the office carries on")
}

// TestHostileRequestHeaders: the request line and headers of a request to
// the Handler are bounded (32 KiB) whatever the http.Server allows
// (net/http's default is 1 MB): the library keeps a handshake request until
// the connection is admitted, so each connection awaiting admission could
// hold a megabyte. Over the bound, HTTP 431 with a JSON body, on both
// transports; the office carries on.
func TestHostileRequestHeaders(t *testing.T) {
	ts := startServer(t)
	a, cs := office(t, ts, "o1", "a1", "c1")
	cs[0].answer(protocol.EventGetTools, toolsAnswer)
	big := strings.Repeat("p", 40<<10)
	for name, h := range map[string]http.Header{
		"a large header":                 {"X-Pad": {big}},
		"a large Sec-WebSocket-Protocol": {"Sec-Websocket-Protocol": {big}},
		"many small headers": func() http.Header {
			h := http.Header{}
			for i := range 2000 {
				h.Set(fmt.Sprint("X-", i), "0123456789")
			}
			return h
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			_, st, body := handshake(t, ts.url, h)
			require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, st)
			require.JSONEq(t, `{"code":431,"message":"smcp server: request headers too large"}`, body)
		})
	}
	t.Run("a large query, long-polling", func(t *testing.T) {
		resp, err := http.Get(ts.url + "/socket.io/?EIO=4&transport=polling&pad=" + big)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
	})
	r, st, _ := handshake(t, ts.url, http.Header{"X-Api-Key": {testKey}, "X-Pad": {strings.Repeat("p", 16<<10)}})
	require.Equal(t, http.StatusSwitchingProtocols, st, "headers within the bound")
	require.Contains(t, r.connectSmcp(nil), `"sid"`)
	vals := a.call(protocol.EventGetTools, getTools("a1", "c1", "after"))
	require.Equal(t, "after", vals[0].(map[string]any)["req_id"], "the office carries on")
}

// TestHostileUpgrades: a long-polling session upgrades to a websocket once.
// A second upgrade request while the first is under way, or after it, is
// closed at once (the library's rule), holding nothing; the upgraded
// session carries on.
func TestHostileUpgrades(t *testing.T) {
	ts := startServer(t)
	u := pollSession(t, ts.url)
	sid := u[strings.LastIndex(u, "=")+1:]
	wsURL := "ws" + strings.TrimPrefix(ts.url, "http") + "/socket.io/?EIO=4&transport=websocket&sid=" + sid
	dialUpgrade := func() *rawConn {
		ws, resp, err := websocket.DefaultDialer.Dial(wsURL, keyHeader)
		require.NoError(t, err)
		_ = resp.Body.Close()
		t.Cleanup(func() { _ = ws.Close() })
		return &rawConn{t: t, ws: ws}
	}
	first := dialUpgrade()
	first.send("2probe")
	require.Equal(t, "3probe", first.read())
	for range 20 {
		require.True(t, dialUpgrade().closed(), "an upgrade while one is under way")
	}
	first.send("5")
	require.True(t, eventually(func() bool { return dialUpgrade().closed() }), "an upgrade of an upgraded session")
	require.Contains(t, first.connectSmcp(map[string]any{"api_key": testKey}), `"sid"`)
	require.Equal(t, "[true,null]", first.joinRaw(1, `{"role":"agent","name":"up","office_id":"o"}`))
}

// TestHostileAbandonedSessions: long-polling sessions whose client goes
// away without a word. One that was never admitted to /smcp has nothing to
// be told: when the heartbeat closes it, it gives its place among the
// connections awaiting admission back at once (the library would keep its
// transport 30 s more, for a poll that can no longer come). An admitted
// one that closes with no poll waiting keeps the library's orderly close:
// its transport waits for that poll, and it keeps its place among the
// connections until then, so that a client dropping sessions as fast as it
// opens them stays within the bounds; one with a poll waiting ends that
// poll when it closes (the library would leave it unanswered for as long
// as the client keeps it open) and gives its place back at once. The
// places come back (here after a shortened wait), and the live heap
// returns.
func TestHostileAbandonedSessions(t *testing.T) {
	const n = 50
	client := &http.Client{Timeout: wait}
	status := func(t *testing.T, url string) int {
		resp, err := client.Get(url + "/socket.io/?EIO=4&transport=polling")
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	// closed waits until every session is closed (its poll answered 400).
	closed := func(t *testing.T, sessions []string) {
		for _, u := range sessions {
			require.True(t, eventually(func() bool {
				resp, err := client.Get(u)
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				return resp.StatusCode == http.StatusBadRequest
			}), "closed")
		}
	}

	t.Run("never admitted", func(t *testing.T) {
		// A linger far longer than the test: the places come back without
		// it. The heartbeat closes a session no sooner than its ping
		// interval and timeout after it opened (3 × hb here): when opening
		// the n sessions and the check took longer than that on a busy
		// machine, some may be gone already and the check says nothing,
		// so it is made again with a heartbeat twice as long.
		var ts *testServer
		var base uint64
		var sessions []string
		for hb := 300 * time.Millisecond; ; hb *= 2 {
			require.Less(t, hb, time.Minute, "n sessions never opened within a heartbeat")
			ts = startServer(t, server.WithHeartbeat(hb, 2*hb),
				server.WithMaxConnections(n), server.WithPollingLinger(time.Hour))
			base = liveHeap()
			sessions = sessions[:0]
			begin := time.Now()
			for range n {
				sessions = append(sessions, pollSession(t, ts.url))
			}
			st := status(t, ts.url)
			if took := time.Since(begin); took >= 3*hb {
				t.Logf("opening %d sessions took %v, over a heartbeat of %v: again with %v", n, took.Round(time.Millisecond), 3*hb, 6*hb)
				continue
			}
			require.Equal(t, http.StatusServiceUnavailable, st, "the bound holds them")
			break
		}
		// Not polled (a poll waiting at the close would end it at once):
		// the places come back when the heartbeat closes them, long
		// before the library's 30 s.
		require.True(t, eventually(func() bool { return status(t, ts.url) == http.StatusOK }), "their places come back")
		closed(t, sessions)
		heapReturns(t, base, 1<<20)
	})

	// admitted opens sessions admitted to /smcp until ts holds no more.
	// (About one admission in a thousand loses its first poll to a race
	// of the library's long-polling transport, "poll connection closed
	// prematurely"; such a session closes, keeping its place like the
	// others, and is not returned.)
	admitted := func(t *testing.T, ts *testServer) []string {
		var sessions []string
		for {
			resp, err := client.Get(ts.url + "/socket.io/?EIO=4&transport=polling")
			require.NoError(t, err)
			open, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable {
				break
			}
			var hs struct{ Sid string }
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(string(open), "0")), &hs), "%s", open)
			u := ts.url + "/socket.io/?EIO=4&transport=polling&sid=" + hs.Sid
			post(t, client, u, "40"+protocol.Namespace+`,{"api_key":"`+testKey+`"}`)
			if b := get(t, client, u); strings.Contains(b, `40`+protocol.Namespace+`,{"sid"`) {
				sessions = append(sessions, u)
			} else {
				t.Logf("admission lost: %q", b)
			}
		}
		require.Greater(t, len(sessions), n/2)
		return sessions
	}
	heartbeat := server.WithHeartbeat(time.Second, 2*time.Second)

	t.Run("admitted", func(t *testing.T) {
		// A linger far longer than the test: the places stay held.
		ts := startServer(t, heartbeat, server.WithMaxConnections(n), server.WithPollingLinger(time.Hour))
		sessions := admitted(t, ts) // the bound holds them
		last := len(sessions) - 1
		// The last one polls (and does not answer the pings it gets): a
		// poll waiting when its session closes is answered, and that
		// session gives its place back at once. (The heartbeat may also
		// close it between two of its polls, a few microseconds apart;
		// its place is then held like the others', and its next poll
		// finds the session gone.)
		answered := false
		for {
			resp, err := client.Get(sessions[last])
			require.NoError(t, err, "a poll waiting at the close is answered")
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				break // gone before this poll
			}
			if body := string(b); body == "" || body == "1" || strings.HasSuffix(body, "\x1e1") {
				answered = true // by the close (an empty answer or the CLOSE packet)
				break
			}
		}
		if answered {
			require.True(t, eventually(func() bool { return status(t, ts.url) == http.StatusOK }), "the polled session's place")
		} else {
			t.Log("the session closed between two of its polls: its place is held like the others'")
		}
		closed(t, sessions[:last])
		require.Equal(t, http.StatusServiceUnavailable, status(t, ts.url), "closed, the others still keep their places")
	})

	t.Run("admitted, places back", func(t *testing.T) {
		ts := startServer(t, heartbeat, server.WithMaxConnections(n), server.WithPollingLinger(2*time.Second))
		base := liveHeap()
		sessions := admitted(t, ts)
		require.True(t, eventually(func() bool { return status(t, ts.url) == http.StatusOK }), "their places come back")
		closed(t, sessions)
		heapReturns(t, base, 1<<20)
	})
}

// post sends body on the long-polling session of URL u.
func post(t *testing.T, c *http.Client, u, body string) {
	t.Helper()
	resp, err := c.Post(u, "text/plain", strings.NewReader(body))
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// get polls the long-polling session of URL u once.
func get(t *testing.T, c *http.Client, u string) string {
	resp, err := c.Get(u)
	if err != nil {
		return err.Error()
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return string(b)
}

// TestHostileNameRace: two sessions race to hold one Computer name in one
// office, joining and leaving as fast as they can, and then one of them
// disconnects while the other holds the name. At no time do both hold it:
// the office's Agent sees the name enter and leave in turn, never twice in
// a row; a refused join or a leave by the session that does not hold the
// name changes nothing for the one that does; the last holder's disconnect
// is the last leave.
func TestHostileNameRace(t *testing.T) {
	const rounds = 60
	ts := startServer(t, server.WithMaxEventRate(10_000))
	a := dialRaw(t, ts.url) // reads the office's notifications in their order
	require.Equal(t, "[true,null]", a.joinRaw(1, `{"role":"agent","name":"a1","office_id":"o1"}`))
	racers := []*rawConn{dialRaw(t, ts.url), dialRaw(t, ts.url)}
	held := make([]int, len(racers)) // successful joins per racer
	var wg sync.WaitGroup
	for i, r := range racers {
		wg.Go(func() {
			for k := range rounds {
				got := r.joinRaw(2*k+1, `{"role":"computer","name":"same","office_id":"o1"}`)
				if got == "[true,null]" {
					held[i]++
				} else if !strings.Contains(got, "403 Forbidden") {
					t.Errorf("join answered %s", got)
				}
				_ = r.call(2*k+2, protocol.EventLeaveOffice, map[string]any{"office_id": "o1"})
			}
		})
	}
	wg.Wait()
	// The first racer takes the name and keeps it; the second is refused,
	// then disconnects.
	require.Equal(t, "[true,null]", racers[0].joinRaw(1000, `{"role":"computer","name":"same","office_id":"o1"}`))
	require.Contains(t, racers[1].joinRaw(1001, `{"role":"computer","name":"same","office_id":"o1"}`), "403 Forbidden")
	_ = racers[1].ws.Close()
	_ = racers[0].ws.Close()

	enters := held[0] + held[1] + 1
	inOffice := false
	for range 2 * enters {
		var vals []any
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(a.read(), "42"+protocol.Namespace+",")), &vals))
		require.Equal(t, map[string]any{"office_id": "o1", "computer": "same"}, vals[1])
		switch vals[0] {
		case protocol.NotifyEnterOffice:
			require.False(t, inOffice, "the name entered twice without a leave")
			inOffice = true
		case protocol.NotifyLeaveOffice:
			require.True(t, inOffice, "the name left without having entered")
			inOffice = false
		default:
			t.Fatalf("unexpected %v", vals)
		}
	}
	require.False(t, inOffice)
	// Nothing more: the loser's disconnect told nobody anything.
	a.send(`42/smcp,9["test:barrier",{}]`)
	require.Equal(t, `43/smcp,9[{"error":{"code":400,"message":"unknown event \"test:barrier\""}}]`, a.read())
	t.Logf("%d joins of one name by two racing sessions, %d and %d won", 2*rounds, held[0], held[1])
}
