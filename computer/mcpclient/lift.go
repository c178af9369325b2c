package mcpclient

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/a2c-smcp/smcp-go/computer/blob"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// liftFloor is the least a binary item's string may be (in characters of
// the message) and still travel in the message to mcp-go: a smaller one
// is left to blob.Spool.Mint, which decodes it in memory.
const liftFloor = 256 << 10

// b64Quantum is how many base64 characters of a lifted item are decoded
// at once.
const b64Quantum = 48 << 10

// lifter rewrites one JSON-RPC message on its way from an MCP server to
// mcp-go, which decodes a message whole (and the Computer after it): the
// string of each binary item of a tools/call answer (result.content[i].data,
// result.content[i].resource.blob) longer than the spool's inline budget
// is decoded from base64 as it streams by, straight into the spool
// (blob.Spool.Stage), and replaced in the message by the short value
// Staged.Commit returns, which Spool.Mint turns into the item's sideband.
// A tool result's image is then never in memory whole, neither as the line,
// nor as JSON strings, nor as bytes: what the Computer holds of one message
// is its bytes apart from the lifted items, which max bounds.
//
// The message is refused, the rest of it dropped and its staged blobs
// removed, when those bytes pass max (413), when a binary item is above the
// spool's mint cap or room (413), or is not base64 (400); answer then
// builds the JSON-RPC error that replaces it. A lifter reads the message's
// structure only as far as it needs (containers, keys, strings); whether
// the message is valid JSON is left to its reader.
//
// It is a scanner of our own because no JSON library hands over one string
// in pieces: encoding/json, go-json-experiment's jsontext and mcp-go's
// transports all hold a whole string token in memory before giving it out,
// which for a 100 MiB image is the cost this layer removes. What it decodes
// is only the byte stream's nesting, keys and string escapes; the message
// it passes on is still decoded, and checked, by mcp-go.
type lifter struct {
	spool *blob.Spool
	keep  int // characters of a binary item's string before it is lifted
	max   int // bytes of the message apart from its lifted items

	out   []byte
	stack []frame // the open containers, the outermost maxFrames of them
	deep  int     // containers open beyond those
	seen  int     // bytes of the message as the server wrote it
	refs  []string

	inStr bool
	str   strKind
	esc   bool   // the string's last byte was a backslash
	key   []byte // the key being read (its first bytes)
	strAt int    // offset in out of a binary item's opening quote

	// A binary item being lifted.
	stage  *blob.Staged
	uLeft  int // hex digits of a \u escape still to read
	u      rune
	q, dst []byte // base64 characters not decoded yet; decoded bytes
	padded bool   // the characters decoded so far ended with padding

	fail *liftRefusal
}

type strKind uint8

const (
	strPlain strKind = iota
	strKey
	strBinary
)

// maxFrames is how many open containers a lifter keeps: a binary item is
// five deep, and a hostile message of brackets must not cost memory per
// bracket.
const maxFrames = 8

// frame is an open container; key is an object's current key when it is
// one of the keys on a binary item's path, else "".
type frame struct {
	arr, wantKey bool
	key          string
}

// liftRefusal is why a message is refused: the JSON-RPC error answering it.
type liftRefusal struct {
	code int
	msg  string
	data map[string]any
}

func newLifter(spool *blob.Spool, limit int) *lifter {
	keep := max(base64.StdEncoding.EncodedLen(int(spool.InlineBudget())), liftFloor)
	return &lifter{spool: spool, keep: keep, max: limit}
}

// reset starts a new message, written into buf.
func (l *lifter) reset(buf []byte) {
	*l = lifter{spool: l.spool, keep: l.keep, max: l.max, out: buf[:0], stack: l.stack[:0], key: l.key[:0],
		q: l.q[:0], dst: l.dst}
}

// keys on a binary item's path, interned.
var pathKeys = []string{"result", "content", "data", "resource", "blob"}

// write takes the next bytes of the message.
func (l *lifter) write(p []byte) {
	l.seen += len(p)
	for len(p) > 0 && l.fail == nil {
		if l.inStr {
			p = l.string(p)
			continue
		}
		c := p[0]
		switch c {
		case '{', '[':
			if len(l.stack) < maxFrames && l.deep == 0 {
				l.stack = append(l.stack, frame{arr: c == '[', wantKey: c == '{'})
			} else {
				l.deep++
			}
		case '}', ']':
			if l.deep > 0 {
				l.deep--
			} else if len(l.stack) > 0 {
				l.stack = l.stack[:len(l.stack)-1]
			}
		case ',':
			if n := len(l.stack); n > 0 && l.deep == 0 && !l.stack[n-1].arr {
				l.stack[n-1].wantKey = true
			}
		case ':':
			if n := len(l.stack); n > 0 && l.deep == 0 && !l.stack[n-1].arr {
				l.stack[n-1].wantKey = false
			}
		case '"':
			l.inStr, l.esc = true, false
			switch n := len(l.stack); {
			case l.deep > 0:
				l.str = strPlain // deeper than any binary item: a key or not, no matter
			case n > 0 && !l.stack[n-1].arr && l.stack[n-1].wantKey:
				l.str, l.key = strKey, l.key[:0]
			case l.binaryPath():
				l.str, l.strAt = strBinary, len(l.out)
			default:
				l.str = strPlain
			}
		}
		l.out = append(l.out, c)
		p = p[1:]
		l.checkSize()
	}
}

// binaryPath reports whether a string value starting now is a binary
// item of a tools/call answer: result.content[i].data or
// result.content[i].resource.blob.
func (l *lifter) binaryPath() bool {
	s := l.stack
	is := func(i int, key string) bool { return !s[i].arr && s[i].key == key }
	switch len(s) {
	case 4:
		return is(0, "result") && is(1, "content") && s[2].arr && is(3, "data")
	case 5:
		return is(0, "result") && is(1, "content") && s[2].arr && is(3, "resource") && is(4, "blob")
	}
	return false
}

// string takes bytes inside a string and returns what follows it.
func (l *lifter) string(p []byte) []byte {
	if l.stage != nil {
		n, ended := l.feed(p)
		if ended {
			l.endLifted()
		}
		return p[n:]
	}
	i, ended := 0, false
	for i < len(p) {
		if l.esc {
			l.esc = false
			i++
			continue
		}
		j := bytes.IndexAny(p[i:], `"\`)
		if j < 0 {
			i = len(p)
			break
		}
		i += j
		if p[i] == '\\' {
			l.esc = true
			i++
			continue
		}
		ended = true
		break
	}
	seg := p[:i]
	if l.str == strKey && len(l.key) < 16 {
		l.key = append(l.key, seg[:min(len(seg), 16-len(l.key))]...)
	}
	l.out = append(l.out, seg...)
	if l.str == strBinary && len(l.out)-l.strAt-1 > l.keep {
		l.lift()
		if ended && l.fail == nil {
			l.endLifted()
		}
		return p[min(i+1, len(p)):]
	}
	if ended {
		l.out = append(l.out, '"')
		l.inStr = false
		if l.str == strKey {
			top := &l.stack[len(l.stack)-1]
			top.key = ""
			for _, k := range pathKeys {
				if string(l.key) == k {
					top.key = k
				}
			}
		}
		i++
	}
	l.checkSize()
	return p[i:]
}

// lift starts lifting the binary item whose string began at strAt: what
// was read of it leaves the message for the spool.
func (l *lifter) lift() {
	st, err := l.spool.Stage()
	if err != nil {
		l.refuse(liftRefusal{code: 500, msg: fmt.Sprintf("the Computer could not spool a binary item of the MCP server's answer: %v", err)})
		return
	}
	l.stage, l.esc = st, false
	if l.dst == nil {
		l.q, l.dst = make([]byte, 0, b64Quantum+4), make([]byte, base64.StdEncoding.DecodedLen(b64Quantum+4))
	}
	head := l.out[l.strAt+1:]
	l.out = l.out[:l.strAt]
	l.feed(head) // no closing quote in it
}

// feed takes characters of the binary item being lifted; it returns how
// many bytes of p it consumed and whether the closing quote was among them.
func (l *lifter) feed(p []byte) (int, bool) {
	i := 0
	for i < len(p) && l.fail == nil {
		c := p[i]
		switch {
		case l.uLeft > 0:
			v, ok := hexDigit(c)
			if !ok {
				l.invalid("a bad \\u escape")
				return len(p), false
			}
			l.u, l.uLeft = l.u<<4|v, l.uLeft-1
			if l.uLeft == 0 {
				if l.u >= 0x80 {
					l.invalid("a character outside base64")
					return len(p), false
				}
				l.push([]byte{byte(l.u)})
			}
			i++
		case l.esc:
			l.esc = false
			switch c {
			case '/':
				l.push([]byte{'/'})
			case 'n', 'r': // line breaks of MIME base64: skipped, as base64 decoders do
			case 'u':
				l.uLeft, l.u = 4, 0
			default:
				l.invalid("an escape outside base64")
				return len(p), false
			}
			i++
		default:
			j := bytes.IndexAny(p[i:], `"\`)
			if j < 0 {
				l.push(p[i:])
				return len(p), false
			}
			l.push(p[i : i+j])
			if l.fail != nil {
				return len(p), false
			}
			i += j
			if p[i] == '"' {
				return i + 1, true
			}
			l.esc = true
			i++
		}
	}
	return len(p), false
}

func hexDigit(c byte) (rune, bool) {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0'), true
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10, true
	}
	return 0, false
}

// push queues base64 characters, line breaks apart, and decodes them into
// the stage by quanta.
func (l *lifter) push(b []byte) {
	for len(b) > 0 && l.fail == nil {
		j := bytes.IndexAny(b, "\r\n")
		span := b
		if j >= 0 {
			span, b = b[:j], b[j+1:]
		} else {
			b = nil
		}
		for len(span) > 0 && l.fail == nil {
			n := min(len(span), b64Quantum-len(l.q))
			l.q = append(l.q, span[:n]...)
			span = span[n:]
			if len(l.q) >= b64Quantum {
				l.decode(false)
			}
		}
	}
}

// decode writes the queued characters, whole quanta of four (all of them
// when last), decoded, to the stage.
func (l *lifter) decode(last bool) {
	if l.fail != nil {
		return
	}
	m := len(l.q) / 4 * 4
	if last && m != len(l.q) {
		l.invalid("a length that is not a multiple of 4")
		return
	}
	if m == 0 {
		return
	}
	if l.padded {
		l.invalid("characters after its padding")
		return
	}
	n, err := base64.StdEncoding.Decode(l.dst, l.q[:m])
	if err != nil {
		l.invalid(err.Error())
		return
	}
	l.padded = l.q[m-1] == '='
	if _, err := l.stage.Write(l.dst[:n]); err != nil {
		l.spoolRefusal(err)
		return
	}
	l.q = l.q[:copy(l.q, l.q[m:])]
}

// endLifted ends the binary item being lifted at its closing quote.
func (l *lifter) endLifted() {
	if l.fail != nil {
		return
	}
	l.decode(true)
	if l.fail != nil {
		return
	}
	ref, err := l.stage.Commit()
	l.stage, l.inStr = nil, false
	if err != nil {
		l.spoolRefusal(err)
		return
	}
	l.refs = append(l.refs, ref)
	l.out = append(l.out, '"')
	l.out = append(l.out, ref...)
	l.out = append(l.out, '"')
	l.q, l.padded = l.q[:0], false
}

func (l *lifter) checkSize() {
	if len(l.out) > l.max && l.fail == nil {
		l.refuse(liftRefusal{code: 413}) // answer writes oversizeAnswer's
	}
}

func (l *lifter) invalid(why string) {
	l.refuse(liftRefusal{code: 400, msg: "a binary item of the MCP server's tool result is not valid base64 (" + why + ")",
		data: map[string]any{"reason": "invalid_base64"}})
}

func (l *lifter) spoolRefusal(err error) {
	switch {
	case errors.Is(err, blob.ErrAboveMintCap):
		limit := l.spool.MintCap()
		l.refuse(liftRefusal{code: 413, msg: fmt.Sprintf("a binary item of the MCP server's tool result exceeds the Computer's limit of %d bytes per binary item; "+
			"raise it with smcp-computer --max-blob-bytes (blob.WithMintCap)", limit),
			data: map[string]any{"limit_bytes": limit, "reason": "above_mint_cap"}})
	case errors.Is(err, blob.ErrSpoolFull):
		room := l.spool.MaxBytes()
		l.refuse(liftRefusal{code: 413, msg: fmt.Sprintf("a binary item of the MCP server's tool result does not fit the Computer's blob spool of %d bytes; "+
			"raise it with smcp-computer --spool-max-bytes (blob.WithMaxBytes)", room),
			data: map[string]any{"limit_bytes": room, "reason": "spool_full"}})
	default:
		l.refuse(liftRefusal{code: 500, msg: fmt.Sprintf("the Computer could not spool a binary item of the MCP server's answer: %v", err)})
	}
}

// refuse drops the rest of the message and what it staged; the beginning
// of out is kept for the JSON-RPC id.
func (l *lifter) refuse(r liftRefusal) {
	if l.fail != nil {
		return
	}
	l.fail = &r
	if l.stage != nil {
		l.stage.Abort()
		l.stage = nil
	}
	l.discard()
	if len(l.out) > idPrefixBytes {
		l.out = l.out[:idPrefixBytes]
	}
}

// discard removes the blobs the message staged: it is not forwarded.
func (l *lifter) discard() {
	for _, ref := range l.refs {
		l.spool.Discard(ref)
	}
	l.refs = nil
}

// end ends the message (its line, or the stream, ended) and returns it
// rewritten, or nil when refused; a string left open (the message is cut)
// loses what it staged.
func (l *lifter) end() []byte {
	if l.stage != nil {
		l.stage.Abort()
		l.stage = nil
	}
	if l.fail != nil {
		return nil
	}
	return l.out
}

// endOrRefusal ends the message and returns it rewritten, or when refused
// the JSON-RPC error answering it, or (its id unknown) that error as a
// *protocol.Error.
func (l *lifter) endOrRefusal() ([]byte, error) {
	if line := l.end(); line != nil || l.fail == nil {
		return line, nil
	}
	if a := l.refusalAnswer(); a != nil {
		return a, nil
	}
	msg := l.fail.msg
	if msg == "" {
		msg = fmt.Sprintf("the MCP server's answer exceeds the Computer's limit of %d bytes per MCP message%s; raise the limit (%s)", l.max, liftNote, raiseMessageLimit)
	}
	return nil, protocol.NewPayloadTooLarge("%s", msg).With("limit_bytes", l.max)
}

// refusalAnswer is the JSON-RPC error answering a refused message, nil when
// its id is not in its first 64 KiB.
func (l *lifter) refusalAnswer() []byte {
	id, ok := jsonrpcID(l.out)
	if !ok {
		return nil
	}
	if l.fail.msg == "" {
		return oversizeAnswer(id, l.seen, l.max, true)
	}
	data := map[string]any{"size_bytes": l.seen}
	for k, v := range l.fail.data {
		data[k] = v
	}
	return errorAnswer(id, l.fail.code, l.fail.msg, data)
}
