package sio

import (
	client "github.com/a2c-smcp/smcp-go/sio/third_party/socketioclient"
	"github.com/a2c-smcp/smcp-go/sio/third_party/types"
)

// Ack is the last argument of an emit that asks for an acknowledgement,
// and of an event handler whose sender asked for one: the values the other
// side answered, or an error (the emit's timeout, a lost connection).
type Ack = client.Ack

// EventName is an event's name as Socket.On takes it.
type EventName = types.EventName
