package server

import (
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	ws "github.com/gorilla/websocket"
	"github.com/zishang520/socket.io/parsers/engine/v3/packet"
	"github.com/zishang520/socket.io/servers/engine/v3/transports"
	"github.com/zishang520/socket.io/v3/pkg/queue"
	"github.com/zishang520/socket.io/v3/pkg/types"
)

// This file holds the Server's Engine.IO websocket transport, registered
// with the library in place of its own (ServerOptions.SetTransports;
// docs/performance.md, "Third round"). It speaks the same protocol
// (spec/protocol.md, Roles and transport) and keeps the library transport's
// behaviour — one reader goroutine, writes in order on a task queue, the
// same events, errors and close path — but moves a message's bytes fewer
// times:
//
//   - a text message is read into a pooled buffer and copied once into a
//     buffer of its exact size, which the MESSAGE packet then carries: the
//     library read it into a buffer grown from nothing and copied it again,
//     into another growing buffer, to strip the one-byte packet type, about
//     a tenth of the Server's CPU on the routed path;
//   - an outgoing MESSAGE is written as its type byte and its bytes, where
//     the library first copied both into a new buffer;
//   - the idle deadline is moved at most once a second instead of before
//     every message (see idleDeadlineStep).
//
// Every other packet (handshake, ping, pong, close, upgrade, noop, base64
// or binary messages, and any packet of Engine.IO protocol 3) goes through
// the library's parser exactly as before.

// idleDeadlineStep is how stale the read deadline may get before the reader
// moves it: a connection is closed after between IdleTimeout −
// idleDeadlineStep and IdleTimeout without a message, instead of exactly
// IdleTimeout. Moving a deadline re-arms a runtime timer, which cost more
// than decoding a small packet.
const idleDeadlineStep = time.Second

// maxPooledMessageBuffer bounds the read buffers kept for reuse; a buffer
// grown by a larger message is dropped.
const maxPooledMessageBuffer = 64 << 10

// packetTypes holds the type bytes written before a message, as slices
// that need no allocation (the websocket writer only reads them).
var packetTypes = func() (b [256]byte) {
	for i := range b {
		b[i] = byte(i)
	}
	return b
}()

var messageBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, 4<<10)
	return &b
}}

// wsTransportBuilder is the transport constructor the Server registers
// under the library's name for websockets.
type wsTransportBuilder struct{ s *Server }

// New makes the transport of a new connection, or of an upgrade of the
// connection whose id the request carries (its reads then follow that
// connection's admission; a new connection's are set by
// onEngineConnection).
func (b wsTransportBuilder) New(ctx *types.HttpContext) transports.Transport {
	var c *conn
	if sid, _ := ctx.Query().Get("sid"); sid != "" {
		c = b.s.conn(sid)
	}
	return newWSTransport(ctx, b.s.cfg.maxPayloadBytes, c)
}
func (wsTransportBuilder) Name() string          { return transports.WEBSOCKET }
func (wsTransportBuilder) HandlesUpgrades() bool { return true }
func (wsTransportBuilder) UpgradesTo() []string  { return nil }

type wsTransport struct {
	transports.Transport

	idleTimeout time.Duration
	deadlineSet time.Time // when the read deadline was last moved (reader goroutine only)

	maxPayload int64                // the configured payload limit
	conn       atomic.Pointer[conn] // the Engine.IO connection's state, once known
	limited    io.LimitedReader     // the message being read, bounded (reader goroutine only)
	handled    int                  // messages handled (reader goroutine only)
	socket     *types.WebSocketConn
	mu         sync.Mutex
	writeQueue *queue.Queue
}

func newWSTransport(ctx *types.HttpContext, maxPayload int64, c *conn) *wsTransport {
	w := &wsTransport{Transport: transports.MakeTransport(), maxPayload: maxPayload}
	w.conn.Store(c)
	w.Prototype(w)
	w.Construct(ctx)
	return w
}

func (w *wsTransport) Construct(ctx *types.HttpContext) {
	w.Transport.Construct(ctx)

	w.idleTimeout = ctx.IdleTimeout
	w.socket = ctx.Websocket
	w.writeQueue = queue.New()

	_ = w.socket.On("error", func(errs ...any) {
		var err error
		if len(errs) > 0 {
			err, _ = errs[0].(error)
		}
		w.OnError("websocket error", err)
	})
	_ = w.socket.Once("close", func(...any) {
		w.OnClose()
	})

	go w.message()

	w.SetWritable(true)
	w.SetPerMessageDeflate(nil)
}

func (w *wsTransport) Name() string { return transports.WEBSOCKET }

func (w *wsTransport) HandlesUpgrades() bool { return true }

func (w *wsTransport) fail(err error) {
	if ws.IsUnexpectedCloseError(err) || errors.Is(err, net.ErrClosed) {
		w.socket.Emit("close")
	} else {
		w.socket.Emit("error", err)
	}
}

// yieldEvery is how many messages the reader hands on before it lets the
// other goroutines run. With one P (a Server pinned to one core), a reader
// that keeps finding messages never blocks, so the requests and answers it
// has already routed wait in their connections' write queues until its
// whole read batch is handled, and the peers wait with them. Yielding every
// few messages lets the writers send what is ready: at 32 requests in
// flight on one office, a few per cent more requests a second and a lower
// p50 against the same load generator, with the same CPU per request
// (docs/performance.md, Fourth round). With more Ps it costs a scheduler
// round trip every six messages.
const yieldEvery = 6

// message is the connection's reader, started by Construct; it ends when
// a read fails, which closing the connection makes happen. A message over
// readLimit (lower until the connection is admitted to /smcp) fails the
// read and closes the connection, as one over the websocket library's own
// limit does.
func (w *wsTransport) message() {
	defer func() {
		if !w.writeQueue.IsShuttingDown() {
			w.socket.Emit("close")
		}
	}()
	for {
		if w.idleTimeout > 0 {
			if now := time.Now(); now.Sub(w.deadlineSet) >= idleDeadlineStep {
				_ = w.socket.SetReadDeadline(now.Add(w.idleTimeout))
				w.deadlineSet = now
			}
		}
		mt, r, err := w.socket.NextReader()
		if err != nil {
			w.fail(err)
			return
		}
		// One byte more than the limit is read, to tell a message of
		// exactly the limit from a larger one (overLimit).
		w.limited = io.LimitedReader{R: r, N: w.readLimit() + 1}
		r = &w.limited
		switch mt {
		case ws.TextMessage:
			if err := w.readText(r); err != nil {
				w.fail(err)
				return
			}
			if w.handled++; w.handled%yieldEvery == 0 {
				runtime.Gosched()
			}
		case ws.BinaryMessage:
			read := types.NewBytesBuffer(nil)
			_, err := read.ReadFrom(r)
			if err == nil && w.overLimit() {
				err = errMessageTooLarge
			}
			if err != nil {
				w.fail(err)
				return
			}
			w.OnData(read)
		}
	}
}

// readLimit is the largest message the transport reads now: the payload
// limit once the connection is admitted to /smcp, 64 KiB before
// (engine.go, preAdmissionPayload).
func (w *wsTransport) readLimit() int64 {
	if c := w.conn.Load(); c != nil && c.admitted.Load() {
		return w.maxPayload
	}
	return min(preAdmissionPayload, w.maxPayload)
}

// readText reads one text message and hands its packet on.
func (w *wsTransport) readText(r io.Reader) error {
	bp := messageBuffers.Get().(*[]byte)
	buf, err := readAll(r, (*bp)[:0])
	if err == nil && w.overLimit() {
		err = errMessageTooLarge
	}
	var p *packet.Packet
	var raw types.BufferInterface
	switch {
	case err != nil:
	case len(buf) > 0 && buf[0] == '4' && w.Protocol() == 4:
		// A MESSAGE: its data is the rest, in a buffer of its own that the
		// packet parser may keep slices of (wireDecoder).
		data := make([]byte, len(buf)-1)
		copy(data, buf[1:])
		p = &packet.Packet{Type: packet.MESSAGE, Data: types.NewStringBuffer(data)}
	default:
		raw = types.NewStringBuffer(append([]byte(nil), buf...))
	}
	// buf is copied: the pooled buffer may go to another connection now.
	if cap(buf) <= maxPooledMessageBuffer {
		*bp = buf[:0]
		messageBuffers.Put(bp)
	}
	switch {
	case err != nil:
		return err
	case p != nil:
		w.OnPacket(p)
	default:
		w.OnData(raw)
	}
	return nil
}

// errMessageTooLarge is the read error of a message over the transport's
// limit.
var errMessageTooLarge = errors.New("websocket message over the payload limit")

// overLimit reports whether the message just read went past readLimit:
// the bounded reader gave it the one byte more.
func (w *wsTransport) overLimit() bool { return w.limited.N <= 0 }

// readAll appends what r holds to buf, as io.ReadAll does.
func readAll(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// Send writes a batch of packets, in order, on the transport's task queue.
func (w *wsTransport) Send(packets []*packet.Packet) {
	w.SetWritable(false)
	w.writeQueue.Enqueue(func() { w.send(packets) })
}

func (w *wsTransport) send(packets []*packet.Packet) {
	defer func() {
		w.Emit("drain")
		w.SetWritable(true)
		w.Emit("ready")
	}()

	w.mu.Lock()
	defer w.mu.Unlock()

	for _, p := range packets {
		compress := true
		var frame types.BufferInterface
		if p.Options != nil {
			if p.Options.Compress != nil && !*p.Options.Compress {
				compress = false
			}
			frame = p.Options.WsPreEncodedFrame
		}
		if frame != nil && w.PerMessageDeflate() == nil {
			// A broadcast encoded once for every receiver.
			if err := w.write(messageType(frame), compress, 0, frame.Bytes()); err != nil {
				w.fail(err)
				return
			}
			continue
		}
		if sb, ok := p.Data.(*types.StringBuffer); ok && p.Type == packet.MESSAGE && w.Protocol() == 4 {
			if err := w.write(ws.TextMessage, compress, '4', sb.Bytes()); err != nil {
				w.fail(err)
				return
			}
			continue
		}
		data, err := w.Parser().EncodePacket(p, w.SupportsBinary())
		if err != nil {
			w.fail(err)
			return
		}
		if err := w.write(messageType(data), compress, 0, data.Bytes()); err != nil {
			w.fail(err)
			return
		}
	}
}

// write sends one websocket message: the type byte (when not 0), then b.
// messageType is the websocket message type an encoded packet goes in: text
// for the engine's text buffers, binary for the others.
func messageType(b types.BufferInterface) int {
	if _, ok := b.(*types.StringBuffer); ok {
		return ws.TextMessage
	}
	return ws.BinaryMessage
}

func (w *wsTransport) write(mt int, compress bool, typ byte, b []byte) error {
	w.socket.EnableWriteCompression(compress)
	if w.PerMessageDeflate() == nil && len(b) < maxPooledMessageBuffer {
		// One frame per message, as the bare Node relay sends: the
		// websocket writer cuts a message it is given in pieces into
		// frames of its 1 KB buffer (a 1 KB answer went out as two
		// frames, a 9 KB one as a frame and an empty last one), which
		// every client then has to join again. WriteMessage writes one
		// frame of contiguous bytes; the type byte and the packet are put
		// together in a pooled buffer for it.
		if typ == 0 {
			return w.socket.WriteMessage(mt, b)
		}
		bp := messageBuffers.Get().(*[]byte)
		msg := append(append((*bp)[:0], typ), b...)
		err := w.socket.WriteMessage(mt, msg)
		*bp = msg[:0]
		messageBuffers.Put(bp)
		return err
	}
	wr, err := w.socket.NextWriter(mt)
	if err != nil {
		return err
	}
	if typ != 0 {
		if _, err := wr.Write(packetTypes[typ : typ+1]); err != nil {
			_ = wr.Close()
			return err
		}
	}
	if _, err := wr.Write(b); err != nil {
		_ = wr.Close()
		return err
	}
	return wr.Close()
}

// OnClose stops the write queue and closes the connection on every close
// path, including a peer's close that bypasses DoClose.
func (w *wsTransport) OnClose() {
	w.writeQueue.TryClose()
	w.Transport.OnClose()
	_ = w.socket.Close()
}

// DoClose closes the transport.
func (w *wsTransport) DoClose(fn types.Callable) {
	w.writeQueue.TryClose()
	defer func() { _ = w.socket.Close() }()
	if fn != nil {
		fn()
	}
}
