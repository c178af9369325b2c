package engine

import "time"

const (
	// DefaultNetworkStatusCheckInterval is the interval between network online/offline status checks.
	DefaultNetworkStatusCheckInterval = 3_000 * time.Millisecond

	// DefaultWebTransportUpgradeDelay is the delay applied to non-WebTransport probe opens
	// to give WebTransport priority during transport upgrade.
	DefaultWebTransportUpgradeDelay = 200 * time.Millisecond
)

// The Engine.IO transport names. smcp-go patch 15: declared here instead of
// importing github.com/zishang520/socket.io/servers/engine/v3/transports for
// them, which linked the whole Engine.IO server (and, through it, QUIC,
// HTTP/3 and WebTransport) into every client.
const (
	transportPolling      = "polling"
	transportWebSocket    = "websocket"
	transportWebTransport = "webtransport"
)
