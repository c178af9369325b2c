package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// TestWebSocketTransportUpgrade: a connection opened over HTTP long-polling
// upgrades to the Server's websocket transport (wstransport.go): the probe
// ping and pong, the upgrade packet and the namespace CONNECT take the
// library's packet parser, then a routed request and its answer, and a
// message far larger than the transport's pooled read buffer, go through
// the transport's own MESSAGE path.
func TestWebSocketTransportUpgrade(t *testing.T) {
	ts := startServer(t)
	c1 := dial(t, ts.url).mustJoin(protocol.RoleComputer, "c1", "o1")
	c1.answer(protocol.EventGetTools, toolsAnswer)

	req, err := http.NewRequest(http.MethodGet, ts.url+"/socket.io/?EIO=4&transport=polling", nil)
	require.NoError(t, err)
	req.Header = keyHeader.Clone()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	open, ok := strings.CutPrefix(string(body), "0")
	require.True(t, ok, "engine open over polling: %s", body)
	var hs struct {
		Sid      string   `json:"sid"`
		Upgrades []string `json:"upgrades"`
	}
	require.NoError(t, json.Unmarshal([]byte(open), &hs))
	require.Contains(t, hs.Upgrades, "websocket")

	wsURL := "ws" + strings.TrimPrefix(ts.url, "http") + "/socket.io/?EIO=4&transport=websocket&sid=" + hs.Sid
	ws, wresp, err := websocket.DefaultDialer.Dial(wsURL, keyHeader)
	require.NoError(t, err)
	_ = wresp.Body.Close()
	t.Cleanup(func() { _ = ws.Close() })
	r := &rawConn{t: t, ws: ws}
	r.send("2probe")
	require.Equal(t, "3probe", r.read())
	r.send("5") // upgrade: the polling transport is closed, websocket carries on

	require.Contains(t, r.connectSmcp(nil), `"sid"`)
	require.Equal(t, []any{true, nil}, r.call(1, protocol.EventJoinOffice, map[string]any{"role": "agent", "name": "a2", "office_id": "o1"}))
	vals := r.call(2, protocol.EventGetTools, getTools("a2", "c1", "over-upgrade"))
	require.Equal(t, "over-upgrade", vals[0].(map[string]any)["req_id"])

	// 200 KB, over the pooled read buffer's bound: refused by the schema
	// (req_id too long), the refusal arrives intact and the connection
	// carries on.
	vals = r.call(3, protocol.EventGetTools, getTools("a2", "c1", strings.Repeat("r", 200<<10)))
	e := requireError(t, vals, protocol.CodeBadRequest)
	require.Contains(t, e.Message, "/req_id")
	vals = r.call(4, protocol.EventGetTools, getTools("a2", "c1", "after"))
	require.Equal(t, "after", vals[0].(map[string]any)["req_id"])
}
