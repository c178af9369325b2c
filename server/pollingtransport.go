package server

import (
	"sync/atomic"

	"github.com/zishang520/socket.io/servers/engine/v3/transports"
	"github.com/zishang520/socket.io/v3/pkg/types"
)

// pollingTransportBuilder is the transport constructor the Server registers
// under the library's name for long-polling (and JSONP, its variant): the
// library's own transport, wrapped so that a connection closed before its
// /smcp CONNECT was admitted lets go of everything at once.
//
// When the library closes a long-polling session with no poll waiting (the
// connect window closing a connection that never sent its CONNECT, a
// heartbeat giving up), its transport waits 30 s more
// (transports.DefaultPollingCloseTimeout) for a poll to deliver the CLOSE
// packet to, and the engine reports the connection closed only then. So a
// key-less handshake that was never followed by anything held its place
// among the connections awaiting admission for the connect window plus
// 30 s: 4,096 such GETs, sent in under a second, refused every other
// client for 50 s at the default settings (spec/decisions.md, Limits against
// hostile clients: Connections awaiting admission). Such a session has
// nothing to deliver (nobody has admitted it; its client gets "session
// unknown" on a later poll and connects anew, as after any lost session), so
// its transport is discarded when it closes: it closes at once, answering a
// poll waiting with the CLOSE packet as before. An admitted session keeps
// the library's orderly close.
type pollingTransportBuilder struct{}

func (pollingTransportBuilder) New(ctx *types.HttpContext) transports.Transport {
	p := &pollingTransport{}
	if ctx.Query().Has("j") {
		p.Polling = transports.MakeJSONP()
	} else {
		p.Polling = transports.MakePolling()
	}
	p.Prototype(p)
	p.Construct(ctx)
	return p
}
func (pollingTransportBuilder) Name() string          { return transports.POLLING }
func (pollingTransportBuilder) HandlesUpgrades() bool { return false }
func (pollingTransportBuilder) UpgradesTo() []string {
	return []string{transports.WEBSOCKET, transports.WEBTRANSPORT}
}

type pollingTransport struct {
	transports.Polling
	conn atomic.Pointer[conn] // the Engine.IO connection's state, once known (onEngineConnection)
}

// DoClose discards the transport of a connection that was never admitted
// before the library closes it, so that it closes at once.
func (p *pollingTransport) DoClose(fn types.Callable) {
	if c := p.conn.Load(); c == nil || !c.admitted.Load() {
		p.Discard()
	}
	p.Polling.DoClose(fn)
}
