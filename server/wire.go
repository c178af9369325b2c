package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/zishang520/socket.io/parsers/socket/v3/parser"
	"github.com/zishang520/socket.io/v3/pkg/types"

	"github.com/a2c-smcp/smcp-go/protocol"
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
// library's decoder unchanged. Encoding writes raw arguments as they are
// (wireEncoder).
type wireParser struct{ s *Server }

func (w wireParser) NewEncoder() parser.Encoder { return wireEncoder{lib: parser.NewEncoder(), s: w.s} }

// wireEncoder writes EVENT and ACK packets whose arguments are raw JSON
// (what wireDecoder produced: a request forwarded to a Computer, an answer
// relayed to an Agent) by concatenation, with no json.Marshal: marshalling a
// json.RawMessage re-scans and compacts it, which cost a tenth of the
// Server's CPU on the routed path (docs/performance.md). Every other packet
// goes to the library's encoder.
type wireEncoder struct {
	lib parser.Encoder
	s   *Server // the Server it writes for (relayed); nil in tests of the encoding alone
}

func (e wireEncoder) Encode(p *parser.Packet) []types.BufferInterface {
	p = e.relayed(p)
	if b, ok := encodeRaw(p); ok {
		return []types.BufferInterface{encodedPacket{types.NewStringBuffer(b).(*types.StringBuffer)}}
	}
	return e.lib.Encode(p)
}

// relayed returns p without the caller a routed request from another node
// carries as its last argument (nodeCaller), the request given
// protocol.CallerVersionMember when the Computer it is written to, on this
// node, is an smcp-go one; any other packet as it is. The broadcast that
// writes it reaches one socket, that Computer's (computerRoom).
func (e wireEncoder) relayed(p *parser.Packet) *parser.Packet {
	if p.Type != parser.EVENT {
		return p
	}
	args, ok := p.Data.([]any)
	if !ok || len(args) != 3 {
		return p
	}
	caller, ok := args[2].(*nodeCaller)
	if !ok {
		return p
	}
	payload := args[1]
	if e.s != nil && caller.Progress != nil {
		e.s.noteRemoteProgress(caller.Office, caller.Name, caller.Progress)
	}
	if e.s != nil && e.s.callerAware(caller.Office, caller.Name) {
		payload = caller.add(payload)
	}
	q := *p
	q.Data = []any{args[0], payload}
	return &q
}

// encodedPacket is a packet encodeRaw made. The library clones every
// encoded packet before handing it to the engine (Client.WriteToEngine), a
// copy of the whole message per write, a seventh of the bytes the Server
// allocated on the routed path (docs/performance.md, "Third round"). Nothing
// writes into an encoded packet's bytes afterwards (the engine and its
// transports only read them), so a clone shares them: it is a
// *types.StringBuffer of its own, with its own read offset, as every
// consumer of the clone expects.
type encodedPacket struct{ *types.StringBuffer }

func (p encodedPacket) Clone() types.BufferInterface {
	return types.NewStringBuffer(p.Bytes())
}

// encodeRaw writes p as the library's encoder would when every argument is
// a json.RawMessage (or a nodeJSON: a request relayed by another node), a
// string or a number, and reports false otherwise.
// Raw arguments are written as they are: they are valid JSON, checked by
// wireDecoder (json.Valid) or produced by encoding/json.
func encodeRaw(p *parser.Packet) ([]byte, bool) {
	if p.Type != parser.EVENT && p.Type != parser.ACK {
		return nil, false
	}
	args, ok := p.Data.([]any)
	if !ok {
		return nil, false
	}
	size := 32 + len(p.Nsp)
	for _, a := range args {
		switch v := a.(type) {
		case json.RawMessage:
			size += len(v) + 1
		case *nodeJSON: // a request from another node, checked
			size += len(*v) + 1
		case string:
			size += len(v) + 3
		case float64:
			size += 24
		default:
			return nil, false
		}
	}
	b := make([]byte, 0, size)
	b = append(b, byte(p.Type)+'0')
	if p.Nsp != "" && p.Nsp != "/" {
		b = append(b, p.Nsp...)
		b = append(b, ',')
	}
	if p.Id != nil {
		b = strconv.AppendUint(b, *p.Id, 10)
	}
	b = append(b, '[')
	for i, a := range args {
		if i > 0 {
			b = append(b, ',')
		}
		if j, ok := a.(*nodeJSON); ok {
			a = json.RawMessage(*j)
		}
		switch v := a.(type) {
		case json.RawMessage:
			if len(v) == 0 {
				b = append(b, "null"...)
			} else {
				b = append(b, v...)
			}
		default: // a string (an event name) or a number
			j, err := json.Marshal(v)
			if err != nil {
				return nil, false
			}
			b = append(b, j...)
		}
	}
	return append(b, ']'), true
}

func (wireParser) NewDecoder() parser.Decoder {
	// One emitter: the library decoder's, which the client listens on and
	// which emits what the library decodes; raw packets are emitted on it too.
	lib := parser.NewDecoder()
	return &wireDecoder{EventEmitter: lib, lib: lib}
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
	if len(s) == 0 {
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
	return d.lib.Add(string(s))
}

func (d *wireDecoder) Destroy() { d.lib.Destroy() }

// packetText returns the bytes of an Engine.IO text message, or false for
// binary. decodeRaw keeps slices of them: a *types.StringBuffer is the
// engine's decoded message, made for this packet alone and not written
// again, so its bytes are used without a copy.
func packetText(data any) ([]byte, bool) {
	switch v := data.(type) {
	case string:
		return []byte(v), true
	case *types.StringBuffer:
		return v.Bytes(), true
	case *strings.Reader:
		var b bytes.Buffer
		if _, err := io.Copy(&b, v); err != nil {
			return nil, false
		}
		return b.Bytes(), true
	}
	return nil, false
}

// decodeRaw decodes an EVENT or ACK packet whose header follows the
// Socket.IO v5 text encoding: type digit, optional "/namespace,", optional
// numeric ack id, then a JSON array. An EVENT's first element is decoded as
// the event name; every other element stays raw, a slice of s.
func decodeRaw(s []byte) (*parser.Packet, error) {
	p := &parser.Packet{Type: parser.PacketType(s[0] - '0'), Nsp: "/"}
	rest := s[1:]
	if len(rest) > 0 && rest[0] == '/' {
		i := bytes.IndexByte(rest, ',')
		if i < 0 {
			// A namespace and nothing else: no payload, which EVENT and
			// ACK require.
			return nil, errBadPacket
		}
		if i > maxNamespaceLength {
			return nil, errBadPacket
		}
		p.Nsp, rest = string(rest[:i]), rest[i+1:]
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n > 0 {
		if n > maxPacketIDLength {
			return nil, errBadPacket
		}
		id, err := strconv.ParseUint(string(rest[:n]), 10, 64)
		if err != nil {
			return nil, errBadPacket
		}
		p.Id = &id
		rest = rest[n:]
	}
	data, ok := splitArray(rest)
	if !ok {
		return nil, errBadPacket
	}
	if p.Type == parser.EVENT {
		if len(data) == 0 {
			return nil, errBadPacket
		}
		// The event name is a string, or a number as the library allows.
		var name any
		if err := json.Unmarshal(data[0].(json.RawMessage), &name); err != nil {
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

// arrayReader is what splitArray needs per packet, kept in a pool: the
// jsontext decoder's state and the bytes.Buffer it reads from (which it
// reads in place, without a copy).
type arrayReader struct {
	src bytes.Buffer
	dec *jsontext.Decoder
}

var arrayReaders = sync.Pool{New: func() any { return new(arrayReader) }}

// readArray takes a reader from the pool, reading b in place.
func readArray(b []byte) *arrayReader {
	r := arrayReaders.Get().(*arrayReader)
	r.src = *bytes.NewBuffer(b)
	if r.dec == nil {
		r.dec = jsontext.NewDecoder(&r.src, arrayOptions...)
	} else {
		r.dec.Reset(&r.src, arrayOptions...)
	}
	return r
}

// release puts r back, with no reference to what it read.
func (r *arrayReader) release() {
	r.src = bytes.Buffer{}
	r.dec.Reset(&r.src)
	arrayReaders.Put(r)
}

// validJSON reports whether b is exactly one JSON value, with nothing but
// whitespace around it: what encoding/json's Valid accepts (the options of
// splitArray), in a third of its time. A cluster node checks with it what
// another node relays (cluster.go, fromNode and nodeJSON).
func validJSON(b []byte) bool {
	r := readArray(b)
	defer r.release()
	if _, err := r.dec.ReadValue(); err != nil {
		return false
	}
	_, err := r.dec.ReadToken()
	return err == io.EOF
}

// arrayOptions make jsontext check exactly what encoding/json's Valid
// checks, which the library's decoder relies on: the grammar and the
// nesting bound, but neither unique member names nor valid UTF-8 in
// strings (a later member with the same name wins when the value is
// decoded, as in every SDK's JSON parser).
var arrayOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// splitArray checks that b is one JSON array, with nothing but whitespace
// around it, and returns its elements, each as the json.RawMessage of its
// bytes in b (a full slice: appending to one never writes into the next).
// It reports false for anything else.
//
// One pass of jsontext both checks and splits: encoding/json's Valid
// followed by a split at the top-level commas scanned every byte twice, at
// a sixth of the Server's CPU on the routed path (docs/performance.md,
// "Third round").
func splitArray(b []byte) ([]any, bool) {
	r := readArray(b)
	defer r.release()
	dec := r.dec
	if dec.PeekKind() != '[' {
		return nil, false
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, false
	}
	out := make([]any, 0, 2)
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue() // fails on what PeekKind could not read
		if err != nil {
			return nil, false
		}
		out = append(out, json.RawMessage(v[:len(v):len(v)]))
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, false
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, false // bytes after the array
	}
	return out, true
}

// decodeArg turns one event argument into the generic value the handlers
// check: arguments from the wire arrive raw (wireParser), arguments from an
// in-process emitter may already be decoded.
func decodeArg(v any) (any, error) {
	raw, ok := v.(json.RawMessage)
	if !ok {
		return v, nil
	}
	// One pass (protocol.DecodeJSON): encoding/json's Unmarshal checked
	// the bytes, then scanned them again, half the Server's CPU for a
	// put_blob chunk (docs/performance.md, Blobs).
	return protocol.DecodeJSON(raw)
}
