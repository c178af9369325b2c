package sio

import "github.com/a2c-smcp/smcp-go/protocol"

// session is what the connection negotiated: the session's generation and
// whether the Server confirmed it (an smcp-go Server). It reads the shared
// connection's negotiation once that lands (branch i25-clients:
// Generation() and Confirmed()); until then a Computer speaks 0.2.0 to a
// Server it trusts to be smcp-go, as before.
func (c *Client) session() (protocol.Generation, bool) {
	return protocol.DefaultGeneration, true
}
