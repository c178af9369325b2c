package sio

import (
	"slices"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// session is what the connection negotiated for the request being
// answered: the session's generation (Generation) and whether the Server
// confirmed it, an smcp-go Server (Confirmed).
func (c *Client) session() (protocol.Generation, bool) {
	return c.Generation(), c.Confirmed()
}

// answerIn is the generation a request is validated and answered in: the
// caller's, when an smcp-go Server (confirmed) named it in the request's
// protocol.CallerVersionMember and the Computer speaks it; else the
// session's g. So on smcp-server a 0.2.0 Agent gets the bare tool names
// and code 4004 from a Computer whose session speaks 0.4.0, and a 0.4.0
// Agent in the same office gets the exposed names and the markers
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#computer).
// A reference Server never writes the member; one an Agent wrote itself
// reaches an smcp-go Computer only replaced by the Server's.
func (c *Client) answerIn(g protocol.Generation, confirmed bool, payload any) protocol.Generation {
	if !confirmed {
		return g
	}
	caller, ok := protocol.CallerGeneration(payload)
	if !ok || !slices.Contains(c.conn.Speaks(), caller) {
		return g
	}
	return caller
}
