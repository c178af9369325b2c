package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// The Server where every generation meets (spec/generations.md;
// spec/decisions.md, Server: generations): the handshake gate, the
// confirmation header, each session answered in its own generation, and
// what crosses between sessions of different generations.

// handshakeURL is the long-polling open of url naming version ("" for
// none); extra is appended to the query.
func handshakeURL(url, version, extra string) string {
	u := url + "/socket.io/?EIO=4&transport=polling"
	if version != "" {
		u += "&a2c_version=" + version
	}
	return u + extra
}

// pollHandshake sends a long-polling handshake and returns the answer.
func pollHandshake(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	_ = resp.Body.Close()
	return resp, string(body)
}

// dialGen opens an Engine.IO websocket naming version in a2c_version ("" for
// none), admits it to /smcp with auth (the key header when nil) and
// returns it with the response headers of its upgrade.
func dialGen(t *testing.T, url, version string, auth map[string]any) (*rawConn, http.Header) {
	t.Helper()
	query := ""
	if version != "" {
		query = "&a2c_version=" + version
	}
	var header http.Header
	if auth == nil {
		header = keyHeader
	}
	return dialRawWith(t, url, query, header, auth)
}

// callText emits ev with payload under ack id id and returns the ack's
// arguments as the Server wrote them (a JSON array), skipping other
// messages.
func (r *rawConn) callText(id int, ev string, payload any) string {
	r.t.Helper()
	b, err := json.Marshal([]any{ev, payload})
	require.NoError(r.t, err)
	r.send(fmt.Sprintf("42%s,%d%s", protocol.Namespace, id, b))
	return r.ackText(id)
}

// ackText waits for the ack of id and returns its arguments as written.
func (r *rawConn) ackText(id int) string {
	r.t.Helper()
	want := fmt.Sprintf("43%s,%d", protocol.Namespace, id)
	for {
		if rest, ok := strings.CutPrefix(r.read(), want); ok {
			return rest
		}
	}
}

// join joins office as role and name, declaring extensions when not nil,
// and fails unless the Server admits it.
func (r *rawConn) joinAs(role protocol.Role, name, office string, extensions []string) {
	r.t.Helper()
	req := map[string]any{"role": string(role), "name": name, "office_id": office}
	if extensions != nil {
		req["extensions"] = extensions
	}
	require.Equal(r.t, "[true,null]", r.callText(900, protocol.EventJoinOffice, req), "join %s", name)
}

// request is a routed request a raw Computer received.
type request struct {
	Event   string
	ID      int
	Payload map[string]any
}

// nextRequest waits for the next client:* request the raw Computer r
// receives, skipping notifications.
func (r *rawConn) nextRequest() request {
	r.t.Helper()
	prefix := "42" + protocol.Namespace + ","
	for {
		m := r.read()
		rest, ok := strings.CutPrefix(m, prefix)
		if !ok {
			continue
		}
		i := strings.IndexByte(rest, '[')
		if i <= 0 { // an event without an ack id: a notification
			continue
		}
		var id int
		_, err := fmt.Sscanf(rest[:i], "%d", &id)
		require.NoError(r.t, err)
		var args []json.RawMessage
		require.NoError(r.t, json.Unmarshal([]byte(rest[i:]), &args))
		var q request
		q.ID = id
		require.NoError(r.t, json.Unmarshal(args[0], &q.Event))
		require.NoError(r.t, json.Unmarshal(args[1], &q.Payload))
		return q
	}
}

// answer acks request q with the JSON text answer.
func (r *rawConn) answer(q request, answer string) {
	r.send(fmt.Sprintf("43%s,%d[%s]", protocol.Namespace, q.ID, answer))
}

// nextEvent waits for the next event named ev and returns its payload as
// written.
func (r *rawConn) nextEvent(ev string) string {
	r.t.Helper()
	prefix := fmt.Sprintf(`42%s,["%s",`, protocol.Namespace, ev)
	for {
		if rest, ok := strings.CutPrefix(r.read(), prefix); ok {
			return strings.TrimSuffix(rest, "]")
		}
	}
}

// TestHandshakeGate: every request under the Socket.IO path names its
// generation in a2c_version or none (0.2.0); by default 0.2, 0.3 and 0.4
// are accepted, and the accepted handshake names the generation in
// X-A2C-Version. A version of another generation, or one that is not a
// version, is refused before Engine.IO sees it, with the 0.4 references'
// HTTP 400 and body, on long-polling and on a WebSocket alike (which the
// gate can always deny: no 4900), for later requests of a session too;
// the refusals are counted.
func TestHandshakeGate(t *testing.T) {
	reg := prometheus.NewRegistry()
	ts := startServer(t, server.WithMetrics(reg))
	for _, tc := range []struct{ named, confirmed string }{
		{"", "0.2.0"}, {"0.2.0", "0.2.0"}, {"0.2.7", "0.2.0"}, {"0.3.1", "0.3.0"}, {"0.4.0", "0.4.0"}, {"0.4.2", "0.4.0"},
	} {
		resp, body := pollHandshake(t, handshakeURL(ts.url, tc.named, ""))
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", tc.named, body)
		require.True(t, strings.HasPrefix(body, "0{"), "%s: engine open: %s", tc.named, body)
		require.Equal(t, tc.confirmed, resp.Header.Get(protocol.VersionHeader), "named %q", tc.named)
	}
	refusals := []struct{ named, header, body string }{
		{"0.5.0", "4008", `{"code":4008,"message":"Protocol version mismatch","server_version":"0.4.0","client_version":"0.5.0","min_supported":"0.2.0","max_supported":"0.4.999"}`},
		{"1.0.0", "4008", `{"code":4008,"message":"Protocol version mismatch","server_version":"0.4.0","client_version":"1.0.0","min_supported":"0.2.0","max_supported":"0.4.999"}`},
		{"abc", "", `{"code":400,"message":"Invalid a2c_version: Invalid version: abc"}`},
		{"0.4", "", `{"code":400,"message":"Invalid a2c_version: Invalid version: 0.4"}`},
	}
	for _, tc := range refusals {
		resp, body := pollHandshake(t, handshakeURL(ts.url, tc.named, ""))
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
		require.Equal(t, tc.body, body)
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		require.Equal(t, fmt.Sprint(len(tc.body)), resp.Header.Get("Content-Length"))
		require.Equal(t, tc.header, resp.Header.Get(protocol.ErrorCodeHeader))
		require.Empty(t, resp.Header.Get(protocol.VersionHeader))

		// The same on a WebSocket, denied over HTTP before the upgrade.
		wsURL := "ws" + strings.TrimPrefix(ts.url, "http") + "/socket.io/?EIO=4&transport=websocket&a2c_version=" + tc.named
		_, wresp, err := websocket.DefaultDialer.Dial(wsURL, keyHeader)
		require.ErrorIs(t, err, websocket.ErrBadHandshake)
		wbody, _ := io.ReadAll(wresp.Body)
		_ = wresp.Body.Close()
		require.Equal(t, http.StatusBadRequest, wresp.StatusCode)
		require.Equal(t, tc.body, string(wbody))
		require.Equal(t, tc.header, wresp.Header.Get(protocol.ErrorCodeHeader))
	}

	// A session's later requests pass the gate too.
	resp, body := pollHandshake(t, handshakeURL(ts.url, "0.4.0", ""))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var hs struct{ Sid string }
	require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(body, "0")), &hs))
	resp, body = pollHandshake(t, handshakeURL(ts.url, "9.9.9", "&sid="+hs.Sid))
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	require.Equal(t, "4008", resp.Header.Get(protocol.ErrorCodeHeader))

	// A WebSocket: confirmed in its upgrade's answer, direct or from
	// long-polling (the connection's generation).
	_, header := dialGen(t, ts.url, "0.4.1", nil)
	require.Equal(t, "0.4.0", header.Get(protocol.VersionHeader))
	_, header = dialGen(t, ts.url, "", nil)
	require.Equal(t, "0.2.0", header.Get(protocol.VersionHeader))
	resp, body = pollHandshake(t, handshakeURL(ts.url, "0.3.1", ""))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(body, "0")), &hs))
	up, uresp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.url, "http")+"/socket.io/?EIO=4&transport=websocket&a2c_version=0.3.1&sid="+hs.Sid, nil)
	require.NoError(t, err)
	_ = uresp.Body.Close()
	require.Equal(t, "0.3.0", uresp.Header.Get(protocol.VersionHeader))
	_ = up.Close()

	require.Equal(t, float64(2*len(refusals)+1), testutil.ToFloat64(counter(t, reg, "smcp_server_connection_refusals_total", "protocol_version")))
}

// counter finds the connection refusals counter of reason.
func counter(t *testing.T, reg *prometheus.Registry, name, reason string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "x"}, func() float64 { return m.GetCounter().GetValue() })
				}
			}
		}
	}
	t.Fatalf("no %s{reason=%q}", name, reason)
	return nil
}

// TestStrictHandshake: in strict mode with 0.4 alone the Server answers
// exactly as the 0.4 references do: no a2c_version is 400 "Missing
// a2c_version query parameter", 0.2.0 and 0.3.1 get 4008 naming the 0.4
// range, 0.4.x is accepted.
func TestStrictHandshake(t *testing.T) {
	ts := startServer(t, server.WithStrictHandshake(true), server.WithProtocolGenerations(protocol.Gen04))
	for _, tc := range []struct{ named, header, body string }{
		{"", "", `{"code":400,"message":"Missing a2c_version query parameter"}`},
		{"0.2.0", "4008", `{"code":4008,"message":"Protocol version mismatch","server_version":"0.4.0","client_version":"0.2.0","min_supported":"0.4.0","max_supported":"0.4.999"}`},
		{"0.3.1", "4008", `{"code":4008,"message":"Protocol version mismatch","server_version":"0.4.0","client_version":"0.3.1","min_supported":"0.4.0","max_supported":"0.4.999"}`},
	} {
		resp, body := pollHandshake(t, handshakeURL(ts.url, tc.named, ""))
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
		require.Equal(t, tc.body, body)
		require.Equal(t, tc.header, resp.Header.Get(protocol.ErrorCodeHeader))
		_, wresp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.url, "http")+"/socket.io/?EIO=4&transport=websocket&a2c_version="+tc.named, keyHeader)
		require.ErrorIs(t, err, websocket.ErrBadHandshake)
		require.Equal(t, http.StatusBadRequest, wresp.StatusCode)
		_ = wresp.Body.Close()
	}
	resp, body := pollHandshake(t, handshakeURL(ts.url, "0.4.9", ""))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Equal(t, "0.4.0", resp.Header.Get(protocol.VersionHeader))

	// Strict with every generation: only a missing version is refused.
	ts = startServer(t, server.WithStrictHandshake(true))
	resp, _ = pollHandshake(t, handshakeURL(ts.url, "", ""))
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp, _ = pollHandshake(t, handshakeURL(ts.url, "0.2.0", ""))
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// 0.2 alone, not strict: a 0.4 client learns the range.
	ts = startServer(t, server.WithProtocolGenerations(protocol.Gen02))
	resp, body = pollHandshake(t, handshakeURL(ts.url, "0.4.0", ""))
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Equal(t, `{"code":4008,"message":"Protocol version mismatch","server_version":"0.2.0","client_version":"0.4.0","min_supported":"0.2.0","max_supported":"0.2.999"}`, body)

	_, err := server.New(server.WithAPIKeys(testKey), server.WithProtocolGenerations())
	require.Error(t, err)
	_, err = server.New(server.WithAPIKeys(testKey), server.WithProtocolGenerations(protocol.Gen04, protocol.Gen04))
	require.Error(t, err)
	_, err = server.New(server.WithAPIKeys(testKey), server.WithProtocolGenerations(protocol.Generation(99)))
	require.Error(t, err)
}

// TestAuthToken: the key is read from the header, auth.api_key (0.2.0) or
// auth.token (0.3/0.4), the first present; a wrong or missing one is
// refused with a connect_error whose data carries code and message, which
// every generation's clients read.
func TestAuthToken(t *testing.T) {
	ts := startServer(t)
	dialGen(t, ts.url, "0.4.0", map[string]any{"token": testKey})
	dialGen(t, ts.url, "", map[string]any{"api_key": testKey})
	dialGen(t, ts.url, "0.3.1", map[string]any{"api_key": testKey, "token": testKey})
	for _, auth := range []map[string]any{
		{"token": "wrong"},
		{"token": 12},
		{"api_key": "wrong", "token": testKey}, // the first credential present is the one checked
		{},
	} {
		ws, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.url, "http")+"/socket.io/?EIO=4&transport=websocket&a2c_version=0.4.0", nil)
		require.NoError(t, err)
		_ = resp.Body.Close()
		t.Cleanup(func() { _ = ws.Close() })
		r := &rawConn{t: t, ws: ws}
		require.True(t, strings.HasPrefix(r.read(), "0{"), "engine open")
		got := r.connectSmcp(auth)
		require.True(t, strings.HasPrefix(got, "44"+protocol.Namespace+","), "%v: %s", auth, got)
		var ce struct {
			Message string
			Data    struct {
				Code    int
				Message string
			}
		}
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(got, "44"+protocol.Namespace+",")), &ce))
		require.Equal(t, 401, ce.Data.Code, "%v: %s", auth, got)
		require.NotEmpty(t, ce.Data.Message)
		require.Equal(t, ce.Data.Message, ce.Message) // what a client that reads only the message shows
	}
}

// TestGenerationErrors: each session is answered in its own generation's
// shape: a 0.4 Agent's request to a Computer that is not there gets the
// references' exact 404; its refusals the references never send are flat
// with their codes, a client:tool_call's also an isError CallToolResult; an
// event it does not have and an unknown event get a coded 400; a 0.2
// session's stay nested.
func TestGenerationErrors(t *testing.T) {
	ts := startServer(t)
	a4, _ := dialGen(t, ts.url, "0.4.0", map[string]any{"token": testKey})
	a2, _ := dialGen(t, ts.url, "", nil)

	// Not in an office yet: 4103, flat for 0.4; a tool call's readable as a result.
	require.Equal(t, `[{"code":4103,"message":"join an office as an agent before sending client:get_tools"}]`,
		a4.callText(1, protocol.EventGetTools, getTools("a4", "c9", "r1")))
	require.Equal(t, `[{"code":4103,"message":"join an office as an agent before sending client:tool_call","content":[{"type":"text","text":"4103 NotInRoom: join an office as an agent before sending client:tool_call"}],"isError":true}]`,
		a4.callText(2, protocol.EventToolCall, map[string]any{"agent": "a4", "req_id": "r2", "computer": "c9", "tool_name": "t", "params": map[string]any{}, "timeout": 5}))
	require.Equal(t, `[{"error":{"code":4103,"message":"join an office as an agent before sending client:get_tools"}}]`,
		a2.callText(1, protocol.EventGetTools, getTools("a2", "c9", "r1")))

	a4.joinAs(protocol.RoleAgent, "a4", "o4", nil)
	a2.joinAs(protocol.RoleAgent, "a2", "o2", nil)
	require.Equal(t, `[{"code":404,"message":"Computer with name 'c9' not found","details":{"computer_name":"c9"}}]`,
		a4.callText(3, protocol.EventGetTools, getTools("a4", "c9", "r3")))
	require.Equal(t, `[{"code":404,"message":"Computer with name 'c9' not found","details":{"computer_name":"c9"}}]`,
		a4.callText(4, protocol.EventGetSkills, map[string]any{"agent": "a4", "req_id": "r4", "computer": "c9"}))
	require.Equal(t, `[{"error":{"code":404,"message":"no computer named \"c9\" in this office"}}]`,
		a2.callText(3, protocol.EventGetTools, getTools("a2", "c9", "r3")))

	// Schema refusals: flat for 0.4, the violations in details.
	got := a4.callText(5, protocol.EventGetSkill, map[string]any{"agent": "a4", "req_id": "r5", "computer": "c9"})
	require.True(t, strings.HasPrefix(got, `[{"code":400,"message":"client:get_skill request: `), got)
	require.Contains(t, got, `"violations"`)

	// An event of another generation, and an unknown one.
	require.Equal(t, `[{"error":{"code":400,"message":"event \"client:get_skills\" is not part of protocol 0.2.0, which this session speaks","details":{"event":"client:get_skills"}}}]`,
		a2.callText(6, protocol.EventGetSkills, map[string]any{"agent": "a2", "req_id": "r6", "computer": "c9"}))
	require.Equal(t, `[{"code":400,"message":"unknown event \"client:nope\""}]`, a4.callText(7, "client:nope", map[string]any{}))
	require.Equal(t, `[{"code":403,"message":"notify:update_skills is sent by the Server only"}]`,
		a4.callText(8, protocol.NotifyUpdateSkills, map[string]any{"computer": "x"}))
	// Office acks keep their two values in every generation.
	require.Equal(t, `[false,"4101 RoomFull: office \"o4\" already has an agent"]`,
		dialRawGen(t, ts.url, "0.4.0").callText(9, protocol.EventJoinOffice, map[string]any{"role": "agent", "name": "a5", "office_id": "o4"}))
}

// memberGen is a session naming version that has joined office as role
// and name, declaring extensions when not nil (dialRawGen, joinAs).
func memberGen(t *testing.T, url, version string, role protocol.Role, name, office string, extensions []string) *rawConn {
	t.Helper()
	r := dialRawGen(t, url, version)
	r.joinAs(role, name, office, extensions)
	return r
}

// dialRawGen is dialGen with the key in auth.token.
func dialRawGen(t *testing.T, url, version string) *rawConn {
	t.Helper()
	r, _ := dialGen(t, url, version, map[string]any{"token": testKey})
	return r
}

// TestListRoomGenerations: server:list_room shows every member's protocol
// version (the one its client named, its generation's when it named none)
// and a Computer's declared extensions, to sessions of every generation.
func TestListRoomGenerations(t *testing.T) {
	ts := startServer(t)
	memberGen(t, ts.url, "0.4.2", protocol.RoleComputer, "c4", "o1", []string{protocol.EventGetFinder, protocol.EventReadResource})
	dialRawGen(t, ts.url, "0.3.1").joinAs(protocol.RoleComputer, "c3", "o1", nil)
	memberGen(t, ts.url, "", protocol.RoleComputer, "c2", "o1", []string{})
	a, _ := dialGen(t, ts.url, "", nil)
	a.joinAs(protocol.RoleAgent, "a1", "o1", []string{protocol.EventGetTools}) // an Agent's are not recorded
	got := a.callText(1, protocol.EventListRoom, map[string]any{"agent": "a1", "req_id": "l1", "office_id": "o1"})
	var vals []protocol.ListRoomRet
	require.NoError(t, json.Unmarshal([]byte(got), &vals), got)
	require.Len(t, vals, 1)
	ret := vals[0]
	require.Equal(t, "l1", ret.ReqID)
	require.Len(t, ret.Sessions, 4)
	byName := map[string]protocol.SessionInfo{}
	for _, s := range ret.Sessions {
		byName[s.Name] = s
	}
	require.Equal(t, "0.2.0", byName["a1"].A2CVersion)
	require.Nil(t, byName["a1"].Extensions)
	require.Equal(t, "0.4.2", byName["c4"].A2CVersion)
	require.Equal(t, []string{protocol.EventGetFinder, protocol.EventReadResource}, byName["c4"].Extensions)
	require.Equal(t, "0.3.1", byName["c3"].A2CVersion)
	require.Nil(t, byName["c3"].Extensions)
	require.Equal(t, "0.2.0", byName["c2"].A2CVersion)
	require.Contains(t, got, `"name":"c2","office_id":"o1","role":"computer","sid":`)
	require.NoError(t, protocol.Gen02.Validate(protocol.EventListRoom, protocol.Ack, []byte(got[1:len(got)-1])))
	require.NoError(t, protocol.Gen04.Validate(protocol.EventListRoom, protocol.Ack, []byte(got[1:len(got)-1])))
	_ = time.Second
}

// agentCall is a client:* request of the Agent "a1" to the Computer named
// computer with extra members.
func agentCall(computer, reqID string, extra map[string]any) map[string]any {
	m := map[string]any{"agent": "a1", "req_id": reqID, "computer": computer}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// relay sends req from agent, lets computer answer it with answer, and
// returns what the Agent receives, as written.
func relay(t *testing.T, agent, computer *rawConn, id int, ev string, req map[string]any, answer string) string {
	t.Helper()
	b, err := json.Marshal([]any{ev, req})
	require.NoError(t, err)
	agent.send(fmt.Sprintf("42%s,%d%s", protocol.Namespace, id, b))
	q := computer.nextRequest()
	require.Equal(t, ev, q.Event)
	require.Equal(t, req["req_id"], q.Payload["req_id"])
	computer.answer(q, answer)
	return agent.ackText(id)
}

// TestGenerationEvents: the 0.4 events are routed between a 0.4 Agent and
// a 0.4 Computer, the answer relayed as the bytes the Computer wrote, with
// the checks of every client:* event (schema, sender, office, target,
// in-flight cap, timeout) in the Agent's shape; an event the target's
// generation lacks and that it did not declare is answered 4106 at once;
// a declared extension is routed; a 0.2.0 Computer that declared nothing
// still gets client:read_resource, as before generations.
func TestGenerationEvents(t *testing.T) {
	ts := startServer(t, server.WithMaxInFlight(1), server.WithRequestTimeout(300*time.Millisecond), server.WithToolCallMargin(0))
	c4 := memberGen(t, ts.url, "0.4.0", protocol.RoleComputer, "c4", "o1", nil)
	memberGen(t, ts.url, "0.3.1", protocol.RoleComputer, "c3", "o1", nil)
	c2 := memberGen(t, ts.url, "", protocol.RoleComputer, "c2", "o1", nil)
	c2x := memberGen(t, ts.url, "", protocol.RoleComputer, "c2x", "o1", []string{protocol.EventGetSkills})
	a := memberGen(t, ts.url, "0.4.0", protocol.RoleAgent, "a1", "o1", nil)

	events := map[string]struct {
		extra  map[string]any
		answer string
	}{
		protocol.EventGetResources: {map[string]any{"mcp_server": "tools"}, `{"resources":[{"uri":"window://x","name":"x"}],"req_id":"%s"}`},
		protocol.EventGetSkills:    {nil, `{"skills":[],"req_id":"%s"}`},
		protocol.EventGetSkill:     {map[string]any{"name": "s1"}, `{"code":4014,"message":"Skill not found","mcp_server":"s1"}`},
		protocol.EventGetBlob:      {map[string]any{"blob_handle": "h1"}, `{"code":4018,"message":"Blob not accessible","details":{"reason":"gone"}}`},
		protocol.EventPutBlob:      {map[string]any{"chunk_offset": 0, "eof": true, "blob": "aGk=", "total_size": 2, "sha256": strings.Repeat("0", 64)}, `{"upload_id":"u1","chunk_offset":2,"req_id":"%s"}`},
	}
	id := 10
	for ev, tc := range events {
		id++
		reqID := fmt.Sprintf("r%d", id)
		answer := tc.answer
		if strings.Contains(answer, "%s") {
			answer = fmt.Sprintf(answer, reqID)
		}
		got := relay(t, a, c4, id, ev, agentCall("c4", reqID, tc.extra), answer)
		require.Equal(t, "["+answer+"]", got, ev)
	}

	// Events the target does not answer: 4106 at once, in the Agent's shape.
	require.Equal(t, `[{"code":4106,"message":"computer \"c3\" does not offer client:put_blob: its protocol generation 0.3.0 does not have it and it did not declare it","details":{"computer_generation":"0.3.0","event":"client:put_blob"}}]`,
		a.callText(30, protocol.EventPutBlob, agentCall("c3", "r30", events[protocol.EventPutBlob].extra)))
	got := a.callText(31, protocol.EventGetSkills, agentCall("c2", "r31", nil))
	require.True(t, strings.HasPrefix(got, `[{"code":4106,`), got)
	got = a.callText(32, protocol.EventGetFinder, agentCall("c4", "r32", nil))
	require.True(t, strings.HasPrefix(got, `[{"code":4106,`), got)
	// Declared: routed, to a 0.2.0 Computer too.
	require.Equal(t, `[{"skills":[],"req_id":"r33"}]`, relay(t, a, c2x, 33, protocol.EventGetSkills, agentCall("c2x", "r33", nil), `{"skills":[],"req_id":"r33"}`))

	// The checks every client:* event gets.
	got = c4.callText(34, protocol.EventGetSkills, map[string]any{"agent": "c4", "req_id": "r34", "computer": "c3"})
	require.Equal(t, `[{"code":403,"message":"client:get_skills may only be sent by an agent"}]`, got)
	got = a.callText(35, protocol.EventGetSkills, map[string]any{"agent": "someone", "req_id": "r35", "computer": "c4"})
	require.True(t, strings.HasPrefix(got, `[{"code":403,`), got)
	got = a.callText(36, protocol.EventGetBlob, agentCall("c4", "r36", map[string]any{"blob_handle": "h", "chunk_offset": -1}))
	require.True(t, strings.HasPrefix(got, `[{"code":400,`), got)
	// In flight: the first waits, the second is 429; the first times out (408).
	b, err := json.Marshal([]any{protocol.EventGetBlob, agentCall("c4", "r37", map[string]any{"blob_handle": "h"})})
	require.NoError(t, err)
	a.send(fmt.Sprintf("42%s,37%s", protocol.Namespace, b))
	q := c4.nextRequest()
	require.Equal(t, "r37", q.Payload["req_id"])
	got = a.callText(38, protocol.EventGetSkills, agentCall("c4", "r38", nil))
	require.True(t, strings.HasPrefix(got, `[{"code":429,`), got)
	got = a.ackText(37)
	require.True(t, strings.HasPrefix(got, `[{"code":408,"message":"computer \"c4\" did not answer client:get_blob within 300ms"`), got)
	c4.answer(q, `{"late":true}`) // dropped

	// A tool call's timeout: flat, and a CallToolResult marked as timed out.
	b, err = json.Marshal([]any{protocol.EventToolCall, agentCall("c4", "r39", map[string]any{"tool_name": "t", "params": map[string]any{}, "timeout": 1})})
	require.NoError(t, err)
	a.send(fmt.Sprintf("42%s,39%s", protocol.Namespace, b))
	c4.nextRequest()
	got = a.ackText(39)
	require.Equal(t, `[{"code":408,"message":"computer \"c4\" did not answer client:tool_call within 1s","details":{"req_id":"r39"},"content":[{"type":"text","text":"408 Timeout: computer \"c4\" did not answer client:tool_call within 1s"}],"isError":true,"meta":{"a2c_timeout":true}}]`, got)
	var res []protocol.CallToolResult
	require.NoError(t, json.Unmarshal([]byte(got), &res))
	require.True(t, res[0].TimedOut())
	e, ok := protocol.DecodeError([]byte(got[1 : len(got)-1]))
	require.True(t, ok)
	require.Equal(t, protocol.CodeTimeout, e.Code)

	// A 0.2 Agent: the Finder to a 0.4 Computer that did not declare it is
	// 4106, nested; client:read_resource reaches a 0.2 Computer that
	// declared nothing.
	ts2 := startServer(t)
	c4 = memberGen(t, ts2.url, "0.4.0", protocol.RoleComputer, "c4", "o1", nil)
	c4f := memberGen(t, ts2.url, "0.4.0", protocol.RoleComputer, "c4f", "o1", []string{protocol.EventGetFinder})
	c2 = memberGen(t, ts2.url, "", protocol.RoleComputer, "c2", "o1", nil)
	a2 := memberGen(t, ts2.url, "", protocol.RoleAgent, "a1", "o1", nil)
	got = a2.callText(1, protocol.EventGetFinder, agentCall("c4", "r1", nil))
	require.True(t, strings.HasPrefix(got, `[{"error":{"code":4106,`), got)
	got = a2.callText(2, protocol.EventReadResource, agentCall("c4f", "r2", map[string]any{"uri": "dpe://h/d"}))
	require.True(t, strings.HasPrefix(got, `[{"error":{"code":4106,`), got)
	answer := `{"documents":[],"total_count":0,"req_id":"r3"}`
	require.Equal(t, "["+answer+"]", relay(t, a2, c4f, 3, protocol.EventGetFinder, agentCall("c4f", "r3", nil), answer))
	answer = `{"contents":[],"req_id":"r4"}`
	require.Equal(t, "["+answer+"]", relay(t, a2, c2, 4, protocol.EventReadResource, agentCall("c2", "r4", map[string]any{"uri": "dpe://h/d"}), answer))
}

// TestGenerationTranslation: what a Computer answers reaches an Agent of
// another generation in the Agent's generation: an error in its shape (a
// tool call's as a result a 0.4 reference Agent reads), a 0.2 Computer's
// tools with a bundle_id for a 0.4 Agent; everything else as written. With
// answer validation the answer is checked as the Agent receives it.
func TestGenerationTranslation(t *testing.T) {
	for _, validate := range []bool{false, true} {
		t.Run(fmt.Sprintf("validate=%v", validate), func(t *testing.T) {
			ts := startServer(t, server.WithValidateAnswers(validate))
			c2 := memberGen(t, ts.url, "", protocol.RoleComputer, "c-2!", "o4", nil)
			c4 := memberGen(t, ts.url, "0.4.0", protocol.RoleComputer, "c4", "o4", nil)
			a4 := memberGen(t, ts.url, "0.4.0", protocol.RoleAgent, "a1", "o4", nil)

			// 0.2 Computer → 0.4 Agent.
			got := relay(t, a4, c2, 1, protocol.EventGetTools, agentCall("c-2!", "r1", nil),
				`{"tools":[{"name":"echo","description":"e","params_schema":{"type":"object"},"return_schema":null,"meta":{"k":"v"}}],"req_id":"r1"}`)
			require.Equal(t, `[{"req_id":"r1","tools":[{"bundle_id":"c-2","description":"e","meta":{"k":"v"},"name":"echo","params_schema":{"type":"object"},"return_schema":null}]}]`, got)
			require.NoError(t, protocol.Gen04.Validate(protocol.EventGetTools, protocol.Ack, []byte(got[1:len(got)-1])))
			got = relay(t, a4, c2, 2, protocol.EventGetTools, agentCall("c-2!", "r2", nil), `{"tools":[],"req_id":"r2"}`)
			require.Equal(t, `[{"tools":[],"req_id":"r2"}]`, got)
			got = relay(t, a4, c2, 3, protocol.EventGetConfig, agentCall("c-2!", "r3", nil), `{"error":{"code":413,"message":"answer too large","details":{"limit":5}}}`)
			require.Equal(t, `[{"code":413,"message":"answer too large","details":{"limit":5}}]`, got)
			got = relay(t, a4, c2, 4, protocol.EventToolCall, agentCall("c-2!", "r4", map[string]any{"tool_name": "echo", "params": map[string]any{}, "timeout": 5}),
				`{"error":{"code":413,"message":"answer too large"}}`)
			require.Equal(t, `[{"code":413,"message":"answer too large","content":[{"type":"text","text":"413 PayloadTooLarge: answer too large"}],"isError":true}]`, got)
			toolErr := `{"content":[{"type":"text","text":"no such tool"}],"isError":true,"structuredContent":{"error":"no such tool","error_type":"ToolNotFound","code":4001}}`
			got = relay(t, a4, c2, 5, protocol.EventToolCall, agentCall("c-2!", "r5", map[string]any{"tool_name": "x", "params": map[string]any{}, "timeout": 5}), toolErr)
			require.Equal(t, "["+toolErr+"]", got)
			// A 0.4 Computer's 404 is the references' own: kept as written.
			flat404 := `{"code":404,"message":"Computer with name 'x' not found","details":{"computer_name":"x"}}`
			got = relay(t, a4, c4, 6, protocol.EventToolCall, agentCall("c4", "r6", map[string]any{"tool_name": "x", "params": map[string]any{}, "timeout": 5}), flat404)
			require.Equal(t, "["+flat404+"]", got)

			// 0.4 Computer → 0.2 Agent.
			c4b := memberGen(t, ts.url, "0.4.0", protocol.RoleComputer, "c4b", "o2", nil)
			a2 := memberGen(t, ts.url, "", protocol.RoleAgent, "a1b", "o2", nil)
			call := func(reqID string) map[string]any {
				return map[string]any{"agent": "a1b", "req_id": reqID, "computer": "c4b"}
			}
			got = relay(t, a2, c4b, 1, protocol.EventGetConfig, call("q1"), `{"code":4014,"message":"MCP Server not registered","mcp_server":"tools"}`)
			require.Equal(t, `[{"error":{"code":4014,"message":"MCP Server not registered","details":{"mcp_server":"tools"}}}]`, got)
			tools4 := `{"tools":[{"name":"tools__echo","bundle_id":"tools","description":"e","params_schema":{"type":"object"},"return_schema":null}],"req_id":"q2"}`
			got = relay(t, a2, c4b, 2, protocol.EventGetTools, call("q2"), tools4)
			require.Equal(t, "["+tools4+"]", got)

			// An invalid answer: 500 in the Agent's shape when validating.
			bad := `{"tools":"none","req_id":"r7"}`
			got = relay(t, a4, c2, 7, protocol.EventGetTools, agentCall("c-2!", "r7", nil), bad)
			if validate {
				require.True(t, strings.HasPrefix(got, `[{"code":500,"message":"computer \"c-2!\" answered client:get_tools with an invalid payload`), got)
			} else {
				require.Equal(t, "["+bad+"]", got)
			}
		})
	}
}

// TestGenerationNotifications: server:update_skills from a 0.3/0.4
// Computer reaches the office as notify:update_skills, except its 0.2
// members, whose generation has no such event; a 0.2 Computer cannot send
// it; the notifications every generation has reach everyone.
func TestGenerationNotifications(t *testing.T) {
	ts := startServer(t)
	c4 := memberGen(t, ts.url, "0.4.0", protocol.RoleComputer, "c4", "o1", nil)
	c3 := memberGen(t, ts.url, "0.3.1", protocol.RoleComputer, "c3", "o1", nil)
	c2, _ := connectGen(t, ts.url, "")
	c2.mustJoin(protocol.RoleComputer, "c2", "o1")
	a := memberGen(t, ts.url, "0.4.0", protocol.RoleAgent, "a1", "o1", nil)

	c4.send(fmt.Sprintf(`42%s,["%s",{"computer":"c4"}]`, protocol.Namespace, protocol.EventUpdateSkills))
	require.Equal(t, `{"computer":"c4"}`, a.nextEvent(protocol.NotifyUpdateSkills))
	require.Equal(t, `{"computer":"c4"}`, c3.nextEvent(protocol.NotifyUpdateSkills))
	c4.send(fmt.Sprintf(`42%s,["%s",{"computer":"c4"}]`, protocol.Namespace, protocol.EventUpdateToolList))
	require.Equal(t, `{"computer":"c4"}`, a.nextEvent(protocol.NotifyUpdateToolList))
	require.Equal(t, "c4", c2.next(protocol.NotifyUpdateToolList).(map[string]any)["computer"])
	c2.noEvent(protocol.NotifyUpdateSkills)

	vals := c2.call(protocol.EventUpdateSkills, map[string]any{"computer": "c2"})
	e := requireError(t, vals, protocol.CodeBadRequest)
	require.Contains(t, e.Message, "not part of protocol 0.2.0")
}

// connectGen is connect naming version.
func connectGen(t *testing.T, url, version string) (*peer, error) {
	t.Helper()
	p, err := connect(t, url, dialOpts{version: version})
	require.NoError(t, err)
	return p, err
}

// TestClusterGenerations: across nodes, as on one: the list shows every
// member's version and extensions, an event the target Computer does not
// answer is 4106 without waiting for the timeout (the request reaches no
// node), a declared or core event is routed, a Computer's error reaches
// the Agent in the Agent's shape with a 0.2 Computer's tools given a
// bundle_id, and notify:update_skills passes the 0.2 members by.
func TestClusterGenerations(t *testing.T) {
	r := startRedis(t)
	n := startNodes(t, r, 2)
	c2 := memberGen(t, n[1].url, "", protocol.RoleComputer, "c2", "o1", nil)
	c4 := memberGen(t, n[1].url, "0.4.0", protocol.RoleComputer, "c4", "o1", []string{protocol.EventReadResource})
	c2a, err := connect(t, n[0].url, dialOpts{})
	require.NoError(t, err)
	c2a.mustJoin(protocol.RoleComputer, "c2a", "o1")
	a := memberGen(t, n[0].url, "0.4.1", protocol.RoleAgent, "a1", "o1", nil)

	got := a.callText(1, protocol.EventListRoom, map[string]any{"agent": "a1", "req_id": "l1", "office_id": "o1"})
	var vals []protocol.ListRoomRet
	require.NoError(t, json.Unmarshal([]byte(got), &vals), got)
	byName := map[string]protocol.SessionInfo{}
	for _, s := range vals[0].Sessions {
		byName[s.Name] = s
	}
	require.Len(t, byName, 4)
	require.Equal(t, "0.4.1", byName["a1"].A2CVersion)
	require.Equal(t, "0.2.0", byName["c2"].A2CVersion)
	require.Equal(t, "0.4.0", byName["c4"].A2CVersion)
	require.Equal(t, []string{protocol.EventReadResource}, byName["c4"].Extensions)
	require.Nil(t, byName["c2"].Extensions)

	got = a.callText(2, protocol.EventGetSkills, agentCall("c2", "r2", nil))
	require.True(t, strings.HasPrefix(got, `[{"code":4106,"message":"computer \"c2\" does not offer client:get_skills`), got)
	got = a.callText(3, protocol.EventGetFinder, agentCall("c4", "r3", nil))
	require.True(t, strings.HasPrefix(got, `[{"code":4106,`), got)
	got = a.callText(4, protocol.EventGetSkills, agentCall("nobody", "r4", nil))
	require.Equal(t, `[{"code":404,"message":"Computer with name 'nobody' not found","details":{"computer_name":"nobody"}}]`, got)
	answer := `{"skills":[],"req_id":"r5"}`
	require.Equal(t, "["+answer+"]", relay(t, a, c4, 5, protocol.EventGetSkills, agentCall("c4", "r5", nil), answer))
	answer = `{"contents":[],"req_id":"r6"}`
	require.Equal(t, "["+answer+"]", relay(t, a, c4, 6, protocol.EventReadResource, agentCall("c4", "r6", map[string]any{"uri": "window://x"}), answer))
	got = relay(t, a, c2, 7, protocol.EventGetConfig, agentCall("c2", "r7", nil), `{"error":{"code":503,"message":"busy"}}`)
	require.Equal(t, `[{"code":503,"message":"busy"}]`, got)
	got = relay(t, a, c2, 8, protocol.EventGetTools, agentCall("c2", "r8", nil), `{"tools":[{"name":"echo","description":"","params_schema":{},"return_schema":null}],"req_id":"r8"}`)
	require.Equal(t, `[{"req_id":"r8","tools":[{"bundle_id":"c2","description":"","name":"echo","params_schema":{},"return_schema":null}]}]`, got)

	c4.send(fmt.Sprintf(`42%s,["%s",{"computer":"c4"}]`, protocol.Namespace, protocol.EventUpdateSkills))
	require.Equal(t, `{"computer":"c4"}`, a.nextEvent(protocol.NotifyUpdateSkills))
	c4.send(fmt.Sprintf(`42%s,["%s",{"computer":"c4"}]`, protocol.Namespace, protocol.EventUpdateConfig))
	require.Equal(t, `{"computer":"c4"}`, a.nextEvent(protocol.NotifyUpdateConfig))
	require.Equal(t, "c4", c2a.next(protocol.NotifyUpdateConfig).(map[string]any)["computer"])
	c2a.noEvent(protocol.NotifyUpdateSkills)

	// Across nodes, the smcp-go Computer gets the caller's version (the
	// Agent's own replaced), a Computer that declared nothing does not.
	a2 := memberGen(t, n[0].url, "", protocol.RoleAgent, "a2", "o2", nil)
	g2 := memberGen(t, n[1].url, "0.4.0", protocol.RoleComputer, "g2", "o2", []string{})
	for i, tc := range []struct {
		agent    *rawConn
		name     string
		computer *rawConn
		target   string
		want     any
		extra    map[string]any
	}{
		{a, "a1", c4, "c4", "0.4.0", nil},
		{a, "a1", c2, "c2", nil, nil},
		{a2, "a2", g2, "g2", "0.2.0", nil},
		{a2, "a2", g2, "g2", "0.2.0", map[string]any{protocol.CallerVersionMember: "0.4.0"}},
		{a2, "a2", g2, "g2", "0.2.0", map[string]any{"tool_name": "echo", "params": map[string]any{"x": 1}, "timeout": 5}},
	} {
		req := map[string]any{"agent": tc.name, "req_id": fmt.Sprintf("x%d", i), "computer": tc.target}
		maps.Copy(req, tc.extra)
		ev := protocol.EventGetTools
		if _, ok := req["tool_name"]; ok {
			ev = protocol.EventToolCall
		}
		b, err := json.Marshal([]any{ev, req})
		require.NoError(t, err)
		tc.agent.send(fmt.Sprintf("42%s,%d%s", protocol.Namespace, 20+i, b))
		q := tc.computer.nextRequest()
		require.Equal(t, req["req_id"], q.Payload["req_id"])
		if tc.want == nil {
			require.NotContains(t, q.Payload, protocol.CallerVersionMember, "case %d", i)
		} else {
			require.Equal(t, tc.want, q.Payload[protocol.CallerVersionMember], "case %d", i)
		}
		if ev == protocol.EventToolCall {
			require.Equal(t, map[string]any{"x": float64(1)}, q.Payload["params"])
			tc.computer.answer(q, `{"content":[],"isError":false}`)
		} else {
			tc.computer.answer(q, fmt.Sprintf(`{"tools":[],"req_id":"x%d"}`, i))
		}
		tc.agent.ackText(20 + i)
	}
}

// TestCallerVersion: a request relayed to an smcp-go Computer (one that
// declared extensions) names the requesting Agent's generation in
// protocol.CallerVersionMember, for an Agent of each generation, replacing
// one the Agent wrote itself; a Computer that declared none gets the
// request without it, whatever its generation.
func TestCallerVersion(t *testing.T) {
	ts := startServer(t)
	for i, tc := range []struct{ agentVersion, want string }{{"", "0.2.0"}, {"0.3.0", "0.3.0"}, {"0.4.2", "0.4.0"}} {
		office := fmt.Sprintf("o%d", i)
		agent := fmt.Sprintf("a%d", i)
		goc := memberGen(t, ts.url, "0.4.0", protocol.RoleComputer, "go"+office, office, []string{})
		ref4 := memberGen(t, ts.url, "0.4.0", protocol.RoleComputer, "ref4"+office, office, nil)
		ref2 := memberGen(t, ts.url, "", protocol.RoleComputer, "ref2"+office, office, nil)
		a := memberGen(t, ts.url, tc.agentVersion, protocol.RoleAgent, agent, office, nil)
		call := func(computer, reqID string, extra map[string]any) map[string]any {
			m := map[string]any{"agent": agent, "req_id": reqID, "computer": computer}
			maps.Copy(m, extra)
			return m
		}
		// seen sends req from a, answers it from c and returns the request
		// as c received it.
		seen := func(id int, c *rawConn, ev string, req map[string]any, answer string) map[string]any {
			t.Helper()
			b, err := json.Marshal([]any{ev, req})
			require.NoError(t, err)
			a.send(fmt.Sprintf("42%s,%d%s", protocol.Namespace, id, b))
			q := c.nextRequest()
			require.Equal(t, ev, q.Event)
			require.Equal(t, req["req_id"], q.Payload["req_id"])
			c.answer(q, answer)
			a.ackText(id)
			return q.Payload
		}
		tools := `{"tools":[],"req_id":"%s"}`
		got := seen(1, goc, protocol.EventGetTools, call("go"+office, "r1", nil), fmt.Sprintf(tools, "r1"))
		require.Equal(t, tc.want, got[protocol.CallerVersionMember], "agent %q", tc.agentVersion)
		g, ok := protocol.CallerGeneration(got)
		require.True(t, ok)
		require.Equal(t, tc.want, g.String())
		delete(got, protocol.CallerVersionMember)
		require.Equal(t, call("go"+office, "r1", nil), got, "the rest as the Agent sent it")

		params := map[string]any{"tool_name": "echo", "params": map[string]any{"text": "hi"}, "timeout": 5}
		got = seen(2, goc, protocol.EventToolCall, call("go"+office, "r2", params), `{"content":[],"isError":false}`)
		require.Equal(t, tc.want, got[protocol.CallerVersionMember])
		require.Equal(t, map[string]any{"text": "hi"}, got["params"])

		// The Agent's own member is replaced by its session's.
		forged := call("go"+office, "r3", map[string]any{protocol.CallerVersionMember: "9.9.0"})
		got = seen(3, goc, protocol.EventGetTools, forged, fmt.Sprintf(tools, "r3"))
		require.Equal(t, tc.want, got[protocol.CallerVersionMember])

		for j, ref := range []*rawConn{ref4, ref2} {
			name := []string{"ref4", "ref2"}[j] + office
			got = seen(4+2*j, ref, protocol.EventGetTools, call(name, fmt.Sprintf("r%d", 4+2*j), nil), fmt.Sprintf(tools, fmt.Sprintf("r%d", 4+2*j)))
			require.NotContains(t, got, protocol.CallerVersionMember, "%s declared no extensions", name)
			got = seen(5+2*j, ref, protocol.EventToolCall, call(name, fmt.Sprintf("r%d", 5+2*j), params), `{"content":[],"isError":false}`)
			require.NotContains(t, got, protocol.CallerVersionMember, "%s declared no extensions", name)
		}
	}
}
