package socket

import (
	"github.com/a2c-smcp/smcp-go/sio/third_party/engineioparser/packet"
	"github.com/a2c-smcp/smcp-go/sio/third_party/socketioparser"
)

// Ack is the callback of an acknowledgement: the values the other side
// sent, or an error (timeout, disconnection). smcp-go patch 15: defined
// here, as the same alias the server package declares, instead of
// importing github.com/zishang520/socket.io/servers/socket/v3 for it, which
// linked the whole Socket.IO server into every client.
type Ack = func([]any, error)

// ReadyState represents the state of the connection.
type (
	ReadyState string

	// Packet represents a Socket.IO packet, including options for encoding.
	Packet struct {
		*parser.Packet

		Options *packet.Options `json:"options,omitempty" msgpack:"options,omitempty"`
	}

	// Handshake contains information from the server handshake.
	Handshake struct {
		Sid string `json:"sid" msgpack:"sid"`
		Pid string `json:"pid,omitempty" msgpack:"pid,omitempty"`
	}
)

const (
	// ReadyStateOpen indicates the connection is open.
	ReadyStateOpen ReadyState = "open"
	// ReadyStateOpening indicates the connection is in the process of opening.
	ReadyStateOpening ReadyState = "opening"
	// ReadyStateClosed indicates the connection is closed.
	ReadyStateClosed ReadyState = "closed"
)
