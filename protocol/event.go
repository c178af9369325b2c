package protocol

// Direction says who handles an event (spec/protocol.md, Roles and transport).
type Direction int

const (
	// DirectionClient: client:* events, sent by an Agent and routed by the
	// Server to exactly one Computer, which answers through the ack.
	DirectionClient Direction = iota + 1
	// DirectionServer: server:* events, handled by the Server itself.
	DirectionServer
	// DirectionNotify: notify:* events, broadcast by the Server to an office.
	DirectionNotify
)

func (d Direction) String() string {
	switch d {
	case DirectionClient:
		return "client"
	case DirectionServer:
		return "server"
	case DirectionNotify:
		return "notify"
	}
	return "unknown"
}

// Sender is a set of roles allowed to emit an event.
type Sender uint8

const (
	SenderAgent Sender = 1 << iota
	SenderComputer
	SenderServer
)

// Allows reports whether role may send the event.
func (s Sender) Allows(role Role) bool {
	switch role {
	case RoleAgent:
		return s&SenderAgent != 0
	case RoleComputer:
		return s&SenderComputer != 0
	}
	return false
}

// EventInfo describes one event of the manifest schema/events.json.
type EventInfo struct {
	Name      string
	Direction Direction
	// Senders are the roles that may emit it.
	Senders Sender
	// RequestSchema and AckSchema name files of schema/; AckSchema is empty
	// for events without an ack.
	RequestSchema string
	AckSchema     string
	// AckArity is the number of ack values: 0 (none), 1, or 2 for
	// server:join_office and server:leave_office, which answer (ok, reason).
	AckArity int
	// AckMayBeError: the single ack value may be an ErrorPayload instead.
	AckMayBeError bool
	// Broadcasts is the notify:* event the Server sends for this event.
	Broadcasts string
	// Extension marks events that smcp-go adds to A2C-SMCP 0.2.0.
	Extension bool
}

// Lookup returns the manifest entry of an event.
func Lookup(event string) (*EventInfo, bool) {
	e, ok := events[event]
	return e, ok
}

// Events returns every event of the manifest, in manifest order.
func Events() []*EventInfo {
	out := make([]*EventInfo, 0, len(eventOrder))
	for _, name := range eventOrder {
		out = append(out, events[name])
	}
	return out
}
