package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
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

// recordingConn keeps every byte read from the server.
type recordingConn struct {
	net.Conn
	mu   sync.Mutex
	read []byte
}

func (c *recordingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.read = append(c.read, p[:n]...)
	c.mu.Unlock()
	return n, err
}

// frames splits what the server sent after the upgrade response into
// websocket frames and returns, for each, whether it was the last of its
// message (server frames are not masked).
func (c *recordingConn) frames(t *testing.T) []bool {
	c.mu.Lock()
	b := slices.Clone(c.read)
	c.mu.Unlock()
	i := bytes.Index(b, []byte("\r\n\r\n"))
	require.GreaterOrEqual(t, i, 0)
	b = b[i+4:]
	var fins []bool
	for len(b) >= 2 {
		n, h := int(b[1]&0x7f), 2
		switch n {
		case 126:
			n, h = int(binary.BigEndian.Uint16(b[2:4])), 4
		case 127:
			n, h = int(binary.BigEndian.Uint64(b[2:10])), 10
		}
		require.LessOrEqual(t, h+n, len(b), "a frame cut short")
		fins = append(fins, b[0]&0x80 != 0)
		b = b[h+n:]
	}
	return fins
}

// TestWebSocketOneFramePerMessage: the Server sends every message as one
// websocket frame, a relayed answer of several kilobytes included (the
// library's writer cut it into 1 KB frames that the client had to join).
func TestWebSocketOneFramePerMessage(t *testing.T) {
	ts := startServer(t)
	c1 := dial(t, ts.url).mustJoin(protocol.RoleComputer, "c1", "o1")
	c1.answer(protocol.EventGetTools, func(req map[string]any) []any {
		return []any{map[string]any{"req_id": req["req_id"], "tools": []any{map[string]any{
			"name": "echo", "description": strings.Repeat("d", 5000), "params_schema": map[string]any{"type": "object"}, "return_schema": nil,
		}}}}
	})
	var rec *recordingConn
	dialer := websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		rec = &recordingConn{Conn: c}
		return rec, nil
	}}
	ws, resp, err := dialer.Dial("ws"+strings.TrimPrefix(ts.url, "http")+"/socket.io/?EIO=4&transport=websocket", keyHeader)
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = ws.Close() })
	r := &rawConn{t: t, ws: ws}
	require.True(t, strings.HasPrefix(r.read(), "0{"), "engine open")
	require.Contains(t, r.connectSmcp(nil), `"sid"`)
	require.Equal(t, []any{true, nil}, r.call(1, protocol.EventJoinOffice, map[string]any{"role": "agent", "name": "a1", "office_id": "o1"}))
	for i := range 3 {
		vals := r.call(2+i, protocol.EventGetTools, getTools("a1", "c1", fmt.Sprint("big-", i)))
		require.Len(t, vals[0].(map[string]any)["tools"].([]any)[0].(map[string]any)["description"], 5000)
	}
	fins := rec.frames(t)
	require.GreaterOrEqual(t, len(fins), 6)
	for i, fin := range fins {
		require.True(t, fin, "frame %d of %d is a fragment", i, len(fins))
	}
}
