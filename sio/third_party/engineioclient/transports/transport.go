package transports

import (
	"github.com/a2c-smcp/smcp-go/sio/third_party/engineioclient"
)

type (
	TransportCtor = engine.TransportCtor

	WebSocketBuilder = engine.WebSocketBuilder
	PollingBuilder   = engine.PollingBuilder
)

// smcp-go patch 15: no WebTransport (it linked QUIC and HTTP/3).
var (
	Polling   TransportCtor = &PollingBuilder{}
	WebSocket TransportCtor = &WebSocketBuilder{}
)
