package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/a2c-smcp/smcp-go/sio/third_party/engineioparser/packet"
	"github.com/a2c-smcp/smcp-go/sio/third_party/engineioparser/parser"
	"github.com/a2c-smcp/smcp-go/sio/third_party/types"
	"github.com/zishang520/socket.io/v3/pkg/queue"
)

// polling implements the HTTP long-polling transport for Engine.IO.
// It provides real-time communication by repeatedly making HTTP requests.
// Polling serves as a fallback when WebSocket is not available and ensures maximum compatibility.
//
// Features:
//   - HTTP/HTTPS support
//   - Automatic reconnection
//   - Binary data support (via base64 encoding)
//   - Cross-domain compatibility
//   - Timeout handling
type polling struct {
	Transport

	// client is the HTTP client used for polling requests (GET/POST).
	// smcp-go patch 15: a net/http client; upstream's (resty, through
	// github.com/zishang520/socket.io/v3/pkg/request) linked QUIC and HTTP/3
	// for Alt-Svc upgrades that an Engine.IO server never offers.
	client *http.Client

	// _polling indicates if a polling request is currently in progress.
	_polling atomic.Bool

	writeQueue *queue.Queue

	responseHeader // smcp-go patch 16

	// pollQueue runs the long-polling GETs, one at a time (smcp-go patch:
	// upstream ran them on writeQueue, so a write waited behind a pending
	// poll until the server next sent something, a ping interval at worst).
	pollQueue *queue.Queue

	// The requests' context (smcp-go patch): upstream's requests had none,
	// so closing the transport left a pending poll, and a POST the server
	// never answered, with their goroutines until the server answered, if
	// ever. Closing ends every request still running after closeGrace:
	// time for the close packet's POST, and for the server to answer the
	// pending poll as the session ends (aborting it at once races in the
	// Socket.IO server library's polling transport: its request watcher
	// reads the request's Cleanup while the handler sets it).
	requests     context.Context
	stopRequests context.CancelFunc
}

// closeGrace is how long requests may run after the transport closes
// (smcp-go patch).
const closeGrace = 2 * time.Second

// Name returns the identifier for the polling transport ("polling").
func (p *polling) Name() string {
	return transportPolling // smcp-go patch 15: transport names of constants.go
}

// MakePolling creates a new Polling transport instance with default settings.
func MakePolling() Polling {
	s := &polling{
		Transport: MakeTransport(),
	}
	s._polling.Store(false)
	s.Prototype(s)
	return s
}

// NewPolling creates a new Polling transport instance with the specified socket and options.
func NewPolling(socket Socket, opts SocketOptionsInterface) Polling {
	s := MakePolling()
	s.Construct(socket, opts)
	return s
}

// Construct initializes the Polling transport with the given socket and options.
func (p *polling) Construct(socket Socket, opts SocketOptionsInterface) {
	p.Transport.Construct(socket, opts)
	p.writeQueue = queue.New()
	p.pollQueue = queue.New()
	p.requests, p.stopRequests = context.WithCancel(context.Background())
	p.client = newPollingClient(p.Opts().RequestTimeout(), p.Socket().CookieJar(), p.Opts().TLSClientConfig())
}

// DoOpen starts the polling cycle to establish the connection.
func (p *polling) DoOpen() {
	p._poll()
}

// Pause suspends the polling transport, used during upgrades to prevent packet loss.
// onPause is called when the transport is paused.
func (p *polling) Pause(onPause func()) {
	p.SetReadyState(TransportStatePausing)
	pause := func() {
		clientPollingLog.Debug("paused")
		p.SetReadyState(TransportStatePaused)
		onPause()
	}
	if p._polling.Load() || !p.Writable() {
		var total atomic.Uint32
		if p._polling.Load() {
			clientPollingLog.Debug("we are currently polling - waiting to pause")
			total.Add(1)
			_ = p.Once("pollComplete", func(...any) {
				clientPollingLog.Debug("pre-pause polling complete")
				if total.Add(^uint32(0)) == 0 {
					pause()
				}
			})
		}
		if !p.Writable() {
			total.Add(1)
			_ = p.Once("drain", func(...any) {
				clientPollingLog.Debug("pre-pause writing complete")
				if total.Add(^uint32(0)) == 0 {
					pause()
				}
			})
		}
	} else {
		pause()
	}
}

// _poll starts a new polling cycle and initiates a new polling request.
func (p *polling) _poll() {
	clientPollingLog.Debug("polling")
	p._polling.Store(true)
	p.Emit("poll")
	p.pollQueue.Enqueue(func() { p.doPoll() })
}

// _onPacket handles incoming packets and updates the transport state accordingly.
func (p *polling) _onPacket(data *packet.Packet) {
	if TransportStateOpening == p.ReadyState() && data.Type == packet.OPEN {
		p.OnOpen()
	}
	if packet.CLOSE == data.Type {
		p.OnClose(errors.New("transport closed by the server"))
		return
	}
	p.OnPacket(data)
}

// OnData decodes the payload and handles each packet in the payload.
func (p *polling) OnData(data types.BufferInterface) {
	clientPollingLog.Debug("polling got data %#v", data)
	packets, _ := parser.Parserv4().DecodePayload(data)
	for _, data := range packets {
		p._onPacket(data)
	}
	if readyState := p.ReadyState(); TransportStateClosed != readyState {
		p._polling.Store(false)
		p.Emit("pollComplete")
		if TransportStateOpen == readyState {
			p._poll()
		} else {
			clientPollingLog.Debug(`ignoring poll - transport state "%s"`, readyState)
		}
	}
}

// DoClose gracefully closes the polling transport, sending a close packet if needed.
func (p *polling) DoClose() {
	cleanup := func(...any) {
		clientPollingLog.Debug("writing close packet")
		p.Write([]*packet.Packet{{Type: packet.CLOSE}})
		// Close the write queue after the close packet has been enqueued.
		p.writeQueue.TryClose()
		p.pollQueue.TryClose()
	}
	if TransportStateOpen == p.ReadyState() {
		clientPollingLog.Debug("transport open - closing")
		cleanup()
	} else {
		clientPollingLog.Debug("transport not open - deferring close")
		_ = p.Once("open", cleanup)
	}
	// smcp-go patch: end the requests still running, and the client's
	// connections, after closeGrace (closing the client at once closed the
	// connection of the pending poll).
	time.AfterFunc(closeGrace, func() {
		p.stopRequests()
		p.client.CloseIdleConnections()
	})
}

// Write encodes and sends packets to the server asynchronously.
func (p *polling) Write(packets []*packet.Packet) {
	p.SetWritable(false)
	p.writeQueue.Enqueue(func() { p.write(packets) })
}

// write performs the actual packet writing operation asynchronously.
func (p *polling) write(packets []*packet.Packet) {
	data, _ := parser.Parserv4().EncodePayload(packets)
	p.doWrite(data, func() {
		p.SetWritable(true)
		p.Emit("drain")
	})
}

// uri constructs the HTTP URL for the polling transport with query parameters.
func (p *polling) uri() *url.URL {
	schema := "http"
	if p.Opts().Secure() {
		schema = "https"
	}
	query := url.Values{}
	for k, vs := range p.Query() {
		for _, v := range vs {
			query.Add(k, v)
		}
	}
	if p.Opts().TimestampRequests() {
		query.Set(p.Opts().TimestampParam(), randomString()) // smcp-go patch 15
	}
	if !p.SupportsBinary() && !query.Has("sid") {
		query.Set("b64", "1")
	}
	return p.CreateUri(schema, query)
}

// doPoll performs the HTTP GET request to poll for data from the server.
func (p *polling) doPoll() {
	res, err := p._fetch(nil)
	if err != nil {
		if p.requests.Err() == nil { // smcp-go patch: not an error once closed
			p.OnError("fetch read error", err, nil)
		}
		return
	}
	defer func() { _ = res.Body.Close() }()
	if err := statusError(res); err != nil { // smcp-go patch 15
		p.OnError("fetch read error", err, res.Request.Context())
		return
	}
	p.keep(res.Header) // smcp-go patch 16: the first poll is the handshake
	// smcp-go patch: a bounded response, as a websocket message is
	// (MaxMessageBytes); upstream read whatever the server sent.
	var body io.Reader = res.Body
	n := p.Opts().MaxMessageBytes()
	if n > 0 {
		body = io.LimitReader(res.Body, pollResponseLimit(n)+1)
	}
	data, err := types.NewStringBufferReader(body)
	if err != nil {
		if p.requests.Err() == nil { // smcp-go patch: not an error once closed
			p.OnError("fetch read error", err, nil)
		}
		return
	}
	if n > 0 {
		if err := checkPollResponse(data.Bytes(), n); err != nil {
			p.OnError("fetch read error", err, nil)
			return
		}
	}
	p.OnData(data)
}

// pollResponseLimit bounds one long-polling response (smcp-go patch): the
// packets a server held for the client, each at most maxMessage bytes. A
// Server holds up to twice its payload limit for a slow peer and closes it
// at twice that (spec/protocol.md, Limits), so four messages' worth.
func pollResponseLimit(maxMessage int64) int64 { return 4 * maxMessage }

// checkPollResponse refuses a long-polling response over its bound, or
// holding a packet over maxMessage bytes (packets are separated by the
// record separator, 0x1e) (smcp-go patch).
func checkPollResponse(b []byte, maxMessage int64) error {
	if limit := pollResponseLimit(maxMessage); int64(len(b)) > limit {
		return fmt.Errorf("long-polling response over %d bytes", limit)
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0x1e)
		if i < 0 {
			i = len(b)
		}
		if int64(i) > maxMessage {
			return fmt.Errorf("long-polling packet of %d bytes, over %d", i, maxMessage)
		}
		b = b[min(i+1, len(b)):]
	}
	return nil
}

// doWrite performs the HTTP POST request to write data to the server.
// fn is called after a successful write.
func (p *polling) doWrite(data types.BufferInterface, fn func()) {
	res, err := p._fetch(data)
	if err != nil {
		if p.requests.Err() == nil { // smcp-go patch: not an error once closed
			p.OnError("fetch write error", err, nil)
		}
		return
	}
	defer func() { _ = res.Body.Close() }()
	if err := statusError(res); err != nil { // smcp-go patch 15
		p.OnError("fetch write error", err, res.Request.Context())
		return
	}
	fn()
}

// _fetch performs the HTTP request with the given data (GET if data is nil, POST otherwise).
func (p *polling) _fetch(data io.Reader) (*http.Response, error) {
	// smcp-go patch 15: a plain net/http request, with the headers
	// upstream's client set.
	method := http.MethodGet
	if data != nil {
		method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(p.requests, method, p.uri().String(), data)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "engine.io-go/1.0")
	req.Header.Set("Accept", "*/*")
	for k, vs := range p.Opts().ExtraHeaders() {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if data != nil {
		req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	}
	res, err := p.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("HTTP request failed: %w", err)
	}
	return res, nil
}
