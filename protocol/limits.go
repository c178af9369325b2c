package protocol

// DefaultMaxPayloadBytes is the largest Socket.IO message (one event or one
// ack, JSON-encoded) that a Server accepts by default, and therefore the
// largest answer a Computer may send by default: one setting for both sides,
// so that a Computer refuses an answer with CodePayloadTooLarge instead of
// sending one the Server would close the connection for
// (spec/protocol.md, Limits). Servers and Computers expose it as an option.
const DefaultMaxPayloadBytes = 8 << 20
