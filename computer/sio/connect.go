package sio

import (
	"sync"
	"time"

	engine "github.com/zishang520/socket.io/clients/engine/v3"
)

// Connection attempts.
//
// Socket.Connect (clients/socket v3.0.1) subscribes the socket to its
// manager's open announcement and then, finding the manager open, sends the
// namespace CONNECT itself; when the manager announces its open in between
// (a fast handshake, or the connecting goroutine descheduled for a few
// milliseconds), the socket sends CONNECT twice, and a Server closes a
// connection that connects a namespace twice — the Computer would leave and
// rejoin its office right after joining it. An attempt therefore opens the
// manager first and connects the socket only once the manager has announced
// that very engine open: subscribed after the announcement, the socket sends
// CONNECT once. Reconnections after a drop are the manager's own and do not
// go through here (the socket, subscribed by then, sends CONNECT when the
// manager announces the new engine).

// opens tracks the manager's open announcements and the attempts waiting
// for them.
type opens struct {
	mu     sync.Mutex
	engine engine.Socket // the engine the manager last announced open
	ch     chan struct{} // closed and replaced on every announcement
	gen    int           // the latest attempt; only it may connect
}

// announced records that the manager announced e open (its "open" event).
func (o *opens) announced(e engine.Socket) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.engine = e
	if o.ch != nil {
		close(o.ch)
	}
	o.ch = make(chan struct{})
}

// begin starts a new attempt; earlier ones will not connect.
func (o *opens) begin() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.gen++
	return o.gen
}

// current reports whether attempt gen is still the latest.
func (o *opens) current(gen int) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.gen == gen
}

// wait reports whether attempt gen may connect: the manager announced its
// engine (as engineNow returns it) open and no newer attempt began. It
// gives up when done is closed or after limit.
func (o *opens) wait(gen int, engineNow func() engine.Socket, done <-chan struct{}, limit time.Duration) bool {
	t := time.NewTimer(limit)
	defer t.Stop()
	for {
		o.mu.Lock()
		if o.gen != gen {
			o.mu.Unlock()
			return false
		}
		if e := engineNow(); e != nil && e == o.engine {
			o.mu.Unlock()
			return true
		}
		if o.ch == nil {
			o.ch = make(chan struct{})
		}
		ch := o.ch
		o.mu.Unlock()
		select {
		case <-ch:
		case <-done:
			return false
		case <-t.C:
			return false
		}
	}
}

// attempt opens the manager and connects the socket once the manager has
// announced the open, unless a newer attempt began meanwhile or the Client
// closed. It runs on a goroutine the Client does not own: Open dials
// synchronously, without a handshake timeout, and Close cannot interrupt
// it; it ends with the dial, or after connectAttempt (the next attempt's
// turn).
func (c *Client) attempt(gen int) {
	mgr := c.sock.Io()
	mgr.Open(nil)
	if !c.opens.wait(gen, mgr.Engine, c.ctx.Done(), connectAttempt) {
		return
	}
	c.emitMu.Lock()
	defer c.emitMu.Unlock()
	if c.opens.current(gen) {
		c.sock.Connect()
	}
}
