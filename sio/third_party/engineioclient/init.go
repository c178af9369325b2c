package engine

import (
	"net"
	"sync/atomic"

	"github.com/a2c-smcp/smcp-go/sio/third_party/engineioparser/parser"
	"github.com/a2c-smcp/smcp-go/sio/third_party/events"
	"github.com/a2c-smcp/smcp-go/sio/third_party/types"
	"github.com/zishang520/socket.io/v3/pkg/log"
	"github.com/zishang520/socket.io/v3/pkg/utils"
)

// Logger instances for different components of the Engine.IO client.
// These loggers provide structured logging with component-specific prefixes.
var (
	// clientSocketLog handles logging for the socket component
	clientSocketLog = log.NewLog("engine.io-client:socket")

	// clientPollingLog handles logging for the polling transport
	clientPollingLog = log.NewLog("engine.io-client:polling")

	// clientTransportLog handles logging for the transport layer
	clientTransportLog = log.NewLog("engine.io-client:transport")

	// clientWebsocketLog handles logging for the WebSocket transport
	clientWebsocketLog = log.NewLog("engine.io-client:websocket")
)

// Event names for system-level events that can be emitted by the Engine.IO client.
const (
	// EventBeforeUnload is emitted when the application is about to unload/exit.
	// This allows for graceful cleanup of connections.
	EventBeforeUnload types.EventName = "beforeunload"

	// EventOffline is emitted when the network connection is lost.
	// This can be used to handle disconnection scenarios.
	EventOffline types.EventName = "offline"

	// EventOnline is emitted when the network connection is restored.
	// This can be used to handle reconnection scenarios.
	EventOnline types.EventName = "online"
)

const Protocol = parser.Protocol

// BASE64_OVERHEAD represents the size overhead when encoding binary data as base64.
// Base64 encoding increases the size of binary data by approximately 33%.
// See: https://en.wikipedia.org/wiki/Base64
const BASE64_OVERHEAD float64 = 1.33

// init performs initialization tasks for the Engine.IO client.
// This sets up network monitoring.
//
// smcp-go patch: no process-wide signal handler (upstream swallowed the first
// SIGINT, SIGTERM and SIGQUIT of every program importing the package);
// programs own their signals and close their sockets themselves.
func init() {
	setupNetworkHandling()
}

// isNetworkOnline checks if there is an active network connection available.
// It examines all network interfaces and returns true if at least one non-loopback
// interface is up and has an IP address assigned.
//
// Returns:
//   - true if there is an active network connection
//   - false if no active network connection is found
func isNetworkOnline() bool {
	interfaces, err := net.Interfaces()
	if err != nil {
		return false
	}

	for _, iface := range interfaces {
		if iface.Flags&net.FlagUp != 0 && iface.Flags&net.FlagLoopback == 0 {
			if addrs, err := iface.Addrs(); err == nil && len(addrs) > 0 {
				return true
			}
		}
	}
	return false
}

// networkMonitor holds a reference to the network status polling timer,
// allowing it to be stopped via stopNetworkMonitoring.
var networkMonitor *utils.Timer

// setupNetworkHandling configures network status monitoring for the Engine.IO client.
// It periodically checks the network status and emits appropriate events when
// the network state changes (online/offline).
//
// The check interval is set to 3 seconds, which provides a good balance between
// responsiveness and system resource usage.
func setupNetworkHandling() {
	var previousState atomic.Bool
	networkMonitor = utils.SetInterval(func() {
		if currentState := isNetworkOnline(); currentState != previousState.Load() {
			previousState.Store(currentState)
			if currentState {
				events.Emit(EventOnline)
			} else {
				events.Emit(EventOffline)
			}
		}
	}, DefaultNetworkStatusCheckInterval)
}

// stopNetworkMonitoring stops the background network status polling goroutine.
// Call this function during application shutdown to prevent goroutine leaks.
func stopNetworkMonitoring() {
	if networkMonitor != nil {
		utils.ClearInterval(networkMonitor)
	}
}
