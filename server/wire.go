package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/zishang520/socket.io/parsers/socket/v3/parser"
	"github.com/zishang520/socket.io/v3/pkg/types"
)

// wireParser is the Socket.IO packet parser the Server registers with the
// library (spec/protocol.md, Roles and transport). It differs from the
// library's parser in two ways, both for EVENT and ACK packets only:
//
//   - the arguments after the event name stay undecoded, as json.RawMessage,
//     so that a routed request is decoded once (for validation) and forwarded
//     as the bytes the Agent sent, and a Computer's answer is relayed to the
//     Agent without being decoded into generic values and encoded again —
//     the largest per-request costs of the routed path (docs/performance.md);
//   - binary packets (BINARY_EVENT, BINARY_ACK) are refused: SMCP is JSON
//     only, and the library would otherwise buffer up to ten attachments of
//     the payload limit each before any handler sees the packet.
//
// Every other packet type (CONNECT, DISCONNECT, CONNECT_ERROR) goes to the
// library's decoder unchanged. Encoding is the library's: json.RawMessage
// values are written as they are.
type wireParser struct{}

func (wireParser) NewEncoder() parser.Encoder { return parser.NewEncoder() }

func (wireParser) NewDecoder() parser.Decoder {
	d := &wireDecoder{EventEmitter: types.NewEventEmitter(), lib: parser.NewDecoder()}
	_ = d.lib.On("decoded", func(args ...any) { d.Emit("decoded", args...) })
	return d
}

// Limits of a packet header, the same as the library decoder's defaults.
const (
	maxNamespaceLength = parser.DefaultMaxNamespaceLength
	maxPacketIDLength  = parser.DefaultMaxPacketIDLength
)

var (
	errBinaryPacket = errors.New("binary packets are not part of SMCP")
	errBadPacket    = errors.New("invalid packet")
)

type wireDecoder struct {
	types.EventEmitter
	lib parser.Decoder
}

func (d *wireDecoder) Add(data any) error {
	s, ok := packetText(data)
	if !ok {
		return errBinaryPacket // a binary frame: SMCP sends text only
	}
	if s == "" {
		return errBadPacket
	}
	switch parser.PacketType(s[0] - '0') {
	case parser.EVENT, parser.ACK:
		p, err := decodeRaw(s)
		if err != nil {
			return err
		}
		d.Emit("decoded", p)
		return nil
	case parser.BINARY_EVENT, parser.BINARY_ACK:
		return errBinaryPacket
	}
	return d.lib.Add(s)
}

func (d *wireDecoder) Destroy() { d.lib.Destroy() }

// packetText returns the text of an Engine.IO message, or false for binary.
func packetText(data any) (string, bool) {
	switch v := data.(type) {
	case string:
		return v, true
	case *types.StringBuffer:
		return v.String(), true
	case *strings.Reader:
		var b strings.Builder
		if _, err := io.Copy(&b, v); err != nil {
			return "", false
		}
		return b.String(), true
	}
	return "", false
}

// decodeRaw decodes an EVENT or ACK packet whose header follows the
// Socket.IO v5 text encoding: type digit, optional "/namespace,", optional
// numeric ack id, then a JSON array. An EVENT's first element is decoded as
// the event name; every other element stays raw.
func decodeRaw(s string) (*parser.Packet, error) {
	p := &parser.Packet{Type: parser.PacketType(s[0] - '0'), Nsp: "/"}
	rest := s[1:]
	if strings.HasPrefix(rest, "/") {
		i := strings.IndexByte(rest, ',')
		if i < 0 {
			// A namespace and nothing else: no payload, which EVENT and
			// ACK require.
			return nil, errBadPacket
		}
		if i > maxNamespaceLength {
			return nil, errBadPacket
		}
		p.Nsp, rest = rest[:i], rest[i+1:]
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n > 0 {
		if n > maxPacketIDLength {
			return nil, errBadPacket
		}
		id, err := strconv.ParseUint(rest[:n], 10, 64)
		if err != nil {
			return nil, errBadPacket
		}
		p.Id = &id
		rest = rest[n:]
	}
	var parts []json.RawMessage
	if !strings.HasPrefix(strings.TrimLeft(rest, " \t\r\n"), "[") {
		return nil, errBadPacket // not an array (json.Unmarshal takes null for one)
	}
	if err := json.Unmarshal([]byte(rest), &parts); err != nil {
		return nil, errBadPacket
	}
	data := make([]any, len(parts))
	for i, part := range parts {
		data[i] = part
	}
	if p.Type == parser.EVENT {
		if len(parts) == 0 {
			return nil, errBadPacket
		}
		// The event name is a string, or a number as the library allows.
		var name any
		if err := json.Unmarshal(parts[0], &name); err != nil {
			return nil, errBadPacket
		}
		switch n := name.(type) {
		case string:
			if parser.ReservedEvents.Has(n) {
				return nil, errBadPacket
			}
		case float64:
		default:
			return nil, errBadPacket
		}
		data[0] = name
	}
	p.Data = data
	return p, nil
}

// decodeArg turns one event argument into the generic value the handlers
// check: arguments from the wire arrive raw (wireParser), arguments from an
// in-process emitter may already be decoded.
func decodeArg(v any) (any, error) {
	raw, ok := v.(json.RawMessage)
	if !ok {
		return v, nil
	}
	var out any
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}
