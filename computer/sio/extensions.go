package sio

import (
	"context"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// Completer is implemented by a Handler that answers client:complete, an
// smcp-go extension
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/finder.md#completion).
// A Handler without it answers 4106.
type Completer interface {
	Complete(ctx context.Context, g protocol.Generation, req protocol.CompleteReq) (protocol.CompleteRet, error)
}

func (a answerer) complete(ctx context.Context, payload any) any {
	h, ok := a.h.(Completer)
	if !ok {
		return protocol.NewNotSupported("computer %q does not offer %s", a.name, protocol.EventComplete).With("event", protocol.EventComplete)
	}
	return call(ctx, protocol.EventComplete, payload, func(ctx context.Context, r protocol.CompleteReq) (protocol.CompleteRet, error) {
		return h.Complete(ctx, a.g, r)
	})
}

// Progress emits server:tool_progress, an smcp-go extension
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#updates-and-notifications,
// Tool-call progress), for a tool call or resource read routed to this
// Computer that asked for it, when the office is joined on a Server that confirmed the
// generation (an smcp-go Server: a reference Server does not know the
// event); it reports whether it was sent. The caller bounds the rate.
func (c *Client) Progress(p protocol.ToolProgress) bool {
	c.mu.Lock()
	ok := c.joined && !c.closed
	c.mu.Unlock()
	if !ok || !c.conn.Confirmed() {
		return false
	}
	p.Computer = c.name
	data, err := toJSONValue(p)
	if err != nil {
		return false
	}
	c.emitMu.Lock()
	err = c.sock.Emit(protocol.EventToolProgress, data)
	c.emitMu.Unlock()
	if err != nil {
		c.log.Warn("emit failed", "event", protocol.EventToolProgress, "err", err)
		return false
	}
	return true
}
