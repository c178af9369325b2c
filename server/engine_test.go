package server_test

import (
	"fmt"
	"testing"

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
	for i := range 200 {
		r, _ := dialRawOnce(t, ts.url, "", keyHeader, nil) // CONNECT sent on OPEN; nil when unanswered
		require.NotNil(t, r, "connection %d: no answer to the namespace CONNECT", i)
		r.send(fmt.Sprintf(`42/smcp,1["server:join_office",{"role":"agent","name":"a%d","office_id":"o%d"}]`, i, i))
		require.Equal(t, `43/smcp,1[true,null]`, r.read(), "connection %d: answer to the join", i)
		_ = r.ws.Close()
	}
}
