package protocol

// DefaultMaxPayloadBytes is the largest Socket.IO message (one event or one
// ack, JSON-encoded) that a Server accepts by default, and therefore the
// largest answer a Computer may send by default: one setting for both sides,
// so that a Computer refuses an answer with CodePayloadTooLarge instead of
// sending one the Server would close the connection for
// (spec/protocol.md, Limits). Servers and Computers expose it as an option.
const DefaultMaxPayloadBytes = 8 << 20

// ReferenceMaxMessageBytes is the largest message the reference Servers
// accept from a client: 1,000,000 bytes, the Python Server's (python-engineio's
// max_http_buffer_size; a2c-smcp 0.4.2 closes the connection of a client that
// sends more). The Rust 0.4.1 Server accepts more over a websocket and
// 100,000 bytes a long-polling request (engineioxide's max_payload). A Go
// client whose Server did not confirm it is smcp-go keeps its messages within
// it (spec/generations.md, Limits).
const ReferenceMaxMessageBytes = 1_000_000
