package server

import (
	"errors"
	"strings"

	"github.com/zishang520/socket.io/parsers/socket/v3/parser"
	"github.com/zishang520/socket.io/v3/pkg/types"
)

// errBinary is the decoder's refusal of a binary packet; the library closes
// the connection on any decoder error.
var errBinary = errors.New("binary packets are not part of SMCP")

// jsonOnlyParser is the library's Socket.IO parser with a decoder that
// refuses binary input: SMCP is JSON only (spec/protocol.md, Roles and
// transport), and the library's decoder would otherwise hold up to ten
// attachments of the payload limit each while it waits for the rest of a
// BINARY_EVENT. It is registered with the library's documented
// ServerOptions.SetParser; encoding is the library's.
type jsonOnlyParser struct{}

func (jsonOnlyParser) NewEncoder() parser.Encoder { return parser.NewEncoder() }

func (jsonOnlyParser) NewDecoder() parser.Decoder {
	return &jsonOnlyDecoder{Decoder: parser.NewDecoder()}
}

// jsonOnlyDecoder refuses an Engine.IO binary message and a Socket.IO
// BINARY_EVENT or BINARY_ACK header ("5…", "6…") before the library's
// decoder sees it, so nothing of a binary packet is buffered past the one
// message that announced it.
type jsonOnlyDecoder struct {
	parser.Decoder
}

func (d *jsonOnlyDecoder) Add(data any) error {
	var first byte
	switch v := data.(type) {
	case string:
		if v != "" {
			first = v[0]
		}
	case *strings.Reader:
		b, err := v.ReadByte()
		if err == nil {
			first = b
			_ = v.UnreadByte()
		}
	case *types.StringBuffer:
		if b, _ := v.Peek(1); len(b) == 1 {
			first = b[0]
		}
	default:
		return errBinary
	}
	if first == '0'+byte(parser.BINARY_EVENT) || first == '0'+byte(parser.BINARY_ACK) {
		return errBinary
	}
	return d.Decoder.Add(data)
}
