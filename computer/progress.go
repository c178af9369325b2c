package computer

import (
	"context"
	"sync"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// ProgressInterval is the least time between two server:tool_progress of
// one tool call or resource read; the notifications in between are folded into the latest
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#updates-and-notifications,
// Tool-call progress).
const ProgressInterval = 100 * time.Millisecond

// withProgress arms the progress relay of a tool call or resource read
// that asked for it (asked, the request's progress member): the MCP
// server's notifications/progress go to the Agent that made the request as
// server:tool_progress naming agent and reqID, at most one every
// ProgressInterval, the latest pending one flushed by the returned function
// before the request is answered.
func (c *Computer) withProgress(ctx context.Context, asked bool, agent, reqID string) (context.Context, func()) {
	if !asked {
		return ctx, func() {}
	}
	r := &progressRelay{send: func(p mcpclient.Progress) {
		cl := c.Client()
		if cl == nil {
			return
		}
		out := protocol.ToolProgress{Agent: agent, ReqID: reqID, Progress: max(p.Progress, 0), Message: clipMessage(p.Message)}
		if p.HasTotal {
			t := max(p.Total, 0)
			out.Total = &t
		}
		cl.Progress(out)
	}}
	return mcpclient.WithProgress(ctx, r.push), r.close
}

func clipMessage(s string) string {
	const limit = 1024
	if len([]rune(s)) <= limit {
		return s
	}
	return string([]rune(s)[:limit-1]) + "…"
}

// progressRelay folds one call's progress notifications to at most one
// every ProgressInterval, always sending the latest.
type progressRelay struct {
	send func(mcpclient.Progress)

	sendMu sync.Mutex // orders the sends
	mu     sync.Mutex
	latest *mcpclient.Progress // pending, not sent yet
	sent   time.Time
	timer  *time.Timer
	closed bool
}

// push takes one notification (on the MCP connection's reader: it never
// waits for the Socket.IO connection beyond one emit).
func (r *progressRelay) push(p mcpclient.Progress) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.latest = &p
	if r.timer != nil {
		r.mu.Unlock()
		return // the armed timer sends the latest
	}
	if wait := ProgressInterval - time.Since(r.sent); !r.sent.IsZero() && wait > 0 {
		r.timer = time.AfterFunc(wait, r.flush)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.flush()
}

func (r *progressRelay) flush() {
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	r.mu.Lock()
	r.timer = nil
	p := r.latest
	r.latest = nil
	if p != nil {
		r.sent = time.Now()
	}
	r.mu.Unlock()
	if p != nil {
		r.send(*p)
	}
}

// close stops the relay, sending the pending notification first.
func (r *progressRelay) close() {
	r.mu.Lock()
	r.closed = true
	if r.timer != nil {
		r.timer.Stop()
	}
	r.mu.Unlock()
	r.flush()
}
