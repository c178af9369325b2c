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

// EventInfo describes one event of one generation, as schema/events.json
// lists it (spec/events_gen.md).
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
	// AckMayBeError: the single ack value may be an error payload instead,
	// in the shape AckError names.
	AckMayBeError bool
	// AckError is the shape of that error payload in this generation:
	// ErrorShapeNested in 0.2.0, ErrorShapeFlat from 0.3.0 on;
	// ErrorShapeNone when the ack cannot be an error.
	AckError ErrorShape
	// Broadcasts is the notify:* event the Server sends for this event.
	Broadcasts string
	// Extension marks an event smcp-go defines in this generation, which no
	// reference SDK of the generation sends or answers: client:read_resource
	// in every generation, the Finder's events from 0.3.0 on.
	Extension bool
	// Generation is the generation this entry describes.
	Generation Generation
}

// Lookup returns the entry of an event in DefaultGeneration (0.2.0); use
// Generation.Lookup for a session's own generation.
func Lookup(event string) (*EventInfo, bool) { return DefaultGeneration.Lookup(event) }

// Events returns every event of DefaultGeneration (0.2.0), in manifest
// order; use Generation.Events for another generation.
func Events() []*EventInfo { return DefaultGeneration.Events() }
