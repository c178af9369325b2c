// Package holdearly makes a bare Socket.IO server from the library
// (servers/socket v3.0.2 to v3.0.5) keep the first events of a connection.
// The library writes the answer to a namespace CONNECT before it registers
// the namespace socket, and closes a connection whose event it decodes in
// between; a client that emits right after its CONNECT is answered (an
// Agent's or a Computer's join) can lose its connection that way on a
// loaded machine. smcp-server holds such packets at the Engine.IO level
// (server/engine.go); the test servers of the role modules, which are bare
// library servers, attach a Gate instead (https://github.com/a2c-smcp/smcp-go/blob/main/spec/decisions.md, Socket.IO
// library defects).
package holdearly

import (
	"context"
	"sync"
	"time"

	enginepacket "github.com/zishang520/socket.io/parsers/engine/v3/packet"
	eio "github.com/zishang520/socket.io/servers/engine/v3"
	"github.com/zishang520/socket.io/servers/socket/v3"
)

// MaxHold bounds how long one packet is held.
const MaxHold = 5 * time.Second

// Gate holds, on a connection's read goroutine, an event or ack of
// namespace nsp that arrives after the connection's CONNECT to nsp and
// before the namespace socket is registered.
type Gate struct {
	nsp string
	mu  sync.Mutex
	// registered holds, per engine connection id, a channel closed once its
	// namespace socket is registered.
	registered map[string]chan struct{}
}

// Attach installs a Gate for namespace nsp on io. Holds end when ctx ends.
// OnPacket, when not nil, also sees the head of every message packet (for
// a wire trace).
func Attach(ctx context.Context, io *socket.Server, nsp string, onPacket func(engineID, head string)) *Gate {
	g := &Gate{nsp: nsp, registered: map[string]chan struct{}{}}
	_ = io.Engine().On("connection", func(args ...any) {
		conn, ok := args[0].(eio.Socket)
		if !ok {
			return
		}
		id := conn.Id()
		_ = conn.On("packet", func(args ...any) {
			pk, _ := args[0].(*enginepacket.Packet)
			if pk == nil || pk.Type != enginepacket.MESSAGE {
				return
			}
			head := Head(pk.Data)
			if onPacket != nil {
				onPacket(id, head)
			}
			g.hold(ctx, id, head)
		})
		_ = conn.Once("close", func(...any) {
			g.release(id)
			g.mu.Lock()
			delete(g.registered, id)
			g.mu.Unlock()
		})
	})
	_ = io.Of(nsp, nil).On("connection", func(args ...any) {
		if s, ok := args[0].(*socket.Socket); ok {
			g.release(s.Conn().Id())
		}
	})
	return g
}

// Head returns the first bytes of a Socket.IO packet ("0/smcp,",
// "21/smcp,[…") without consuming it, or "?".
func Head(data any) string {
	switch b := data.(type) {
	case string:
		return b[:min(len(b), 24)]
	case interface {
		Peek(int) ([]byte, error)
		Len() int
	}:
		head, _ := b.Peek(min(b.Len(), 24))
		return string(head)
	}
	return "?"
}

func (g *Gate) hold(ctx context.Context, engineID, head string) {
	prefix := g.nsp + ","
	if len(head) < 1+len(prefix) || head[1:1+len(prefix)] != prefix {
		return
	}
	g.mu.Lock()
	ch, ok := g.registered[engineID]
	if head[0] == '0' { // CONNECT: later traffic waits for its registration
		if !ok || closed(ch) {
			g.registered[engineID] = make(chan struct{})
		}
		g.mu.Unlock()
		return
	}
	g.mu.Unlock()
	if !ok || (head[0] != '2' && head[0] != '3') {
		return
	}
	t := time.NewTimer(MaxHold)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
	}
}

func (g *Gate) release(engineID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ch, ok := g.registered[engineID]; ok && !closed(ch) {
		close(ch)
	}
}

func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
