package sio

import "github.com/a2c-smcp/smcp-go/protocol"

// session is what the connection negotiated for the request being
// answered: the session's generation (Generation) and whether the Server
// confirmed it, an smcp-go Server (Confirmed).
func (c *Client) session() (protocol.Generation, bool) {
	return c.Generation(), c.Confirmed()
}
