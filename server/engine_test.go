package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// TestFirstPacketsAreNotLost is what every SMCP client does: send the
// namespace CONNECT the moment the engine's OPEN arrives, and
// server:join_office the moment the CONNECT is answered. The library
// (servers/engine and servers/socket v3.0.2) used to lose each of them about
// once in 150 connections under the race detector: the CONNECT read before
// the Socket.IO layer listened (the client then waited for ever), and the
// event decoded before the namespace was registered (the connection was
// closed). The Server's workarounds in engine.go prevent both.
func TestFirstPacketsAreNotLost(t *testing.T) {
	ts := startServer(t)
	addr := strings.TrimPrefix(ts.url, "http://")
	for i := range 200 {
		ws, resp, err := websocket.DefaultDialer.Dial("ws://"+addr+"/socket.io/?EIO=4&transport=websocket", http.Header{"X-Api-Key": {testKey}})
		require.NoError(t, err)
		_ = resp.Body.Close()
		read := func(what string) string {
			_ = ws.SetReadDeadline(time.Now().Add(wait))
			_, b, err := ws.ReadMessage()
			require.NoError(t, err, "connection %d: no %s", i, what)
			return string(b)
		}
		open := read("OPEN")
		require.True(t, strings.HasPrefix(open, "0{"), open)
		require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte("40/smcp,")))
		connected := read("answer to the namespace CONNECT")
		require.True(t, strings.HasPrefix(connected, `40/smcp,{"sid"`), connected)
		join := fmt.Sprintf(`42/smcp,1["server:join_office",{"role":"agent","name":"a%d","office_id":"o%d"}]`, i, i)
		require.NoError(t, ws.WriteMessage(websocket.TextMessage, []byte(join)))
		require.Equal(t, `43/smcp,1[true,null]`, read("answer to the join"))
		_ = ws.Close()
	}
}
