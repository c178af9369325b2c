// Package answer holds what the Computer's answers to client:* requests
// share about their size: each must fit the Server's payload limit
// (spec/protocol.md, Limits), or the Server refuses it by closing the
// Computer's connection.
package answer

import "encoding/json"

// Envelope is kept free in an answer for what surrounds its content: its
// req_id and other small members, and the Socket.IO framing of the ack.
const Envelope = 4 << 10

// Size returns the length of v's JSON encoding, 0 when v has none.
func Size(v any) int64 {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return int64(len(b))
}
