package mcpclient

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// httpSettings are the per-server HTTP settings of a Python SDK config that
// mcp-go v1.2.1 has no option for. They are applied by the RoundTripper of
// the http.Client the transport is given.
type httpSettings struct {
	// sseRead is server_parameters.sse_read_timeout: an event stream (the
	// SSE transport's stream, streamable HTTP's listening stream or a POST
	// answered as a stream) silent for longer is closed, as the Python SDK's
	// read timeout does. Zero keeps streams open for ever.
	sseRead time.Duration
	// keepSession is terminate_on_close: false (streamable HTTP): the
	// session is left to expire on the server instead of being ended with
	// a DELETE when the connection closes.
	keepSession bool
	// maxMessage bounds one answer: a JSON body, or one event of an event
	// stream (≤ 0: DefaultMaxMessageBytes). Past it the read fails with 413.
	maxMessage int
}

func (s httpSettings) client() *http.Client {
	return &http.Client{Transport: &settingsTransport{base: http.DefaultTransport, s: s}}
}

type settingsTransport struct {
	base http.RoundTripper
	s    httpSettings
}

func (t *settingsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.s.keepSession && req.Method == http.MethodDelete {
		// mcp-go ends a streamable session with a DELETE on Close and
		// ignores its answer; answering it here keeps the session.
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return &http.Response{StatusCode: http.StatusNoContent, Status: "204 No Content (terminate_on_close: false)",
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	stream := mt == "text/event-stream"
	limit := t.s.maxMessage
	if limit <= 0 {
		limit = DefaultMaxMessageBytes
	}
	resp.Body = &limitBody{rc: resp.Body, limit: limit, stream: stream}
	if stream && t.s.sseRead > 0 {
		resp.Body = newIdleBody(resp.Body, t.s.sseRead)
	}
	return resp, nil
}

// limitBody fails a read once an answer exceeds limit bytes: the whole body,
// or for an event stream one event (the bytes since the last blank line), so
// that a server cannot make the Computer hold an unbounded answer. The
// error is a 413 *protocol.Error, which mcp-go wraps into the failed
// request's error and the read bridge relays.
type limitBody struct {
	rc     io.ReadCloser
	limit  int
	stream bool
	n      int  // bytes of the body, or of the current event
	line   bool // the current line has a byte other than \r
}

func (b *limitBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if !b.stream {
		b.n += n
	} else {
		for _, c := range p[:n] {
			switch c {
			case '\n':
				if !b.line {
					b.n = 0 // a blank line ends the event
				}
				b.line = false
			case '\r':
			default:
				b.line = true
				b.n++
			}
		}
	}
	if b.n > b.limit {
		return 0, protocol.NewPayloadTooLarge("the MCP server's answer exceeds the Computer's limit of %d bytes per MCP message; "+
			"read less at once (a page, a category, an element), or raise the limit (%s)", b.limit, raiseMessageLimit).With("limit_bytes", b.limit)
	}
	return n, err
}

func (b *limitBody) Close() error { return b.rc.Close() }

// idleBody closes an event stream that delivers no byte for d; the blocked
// read then fails with an error naming sse_read_timeout.
type idleBody struct {
	rc      io.ReadCloser
	d       time.Duration
	timer   *time.Timer
	expired atomic.Bool
	once    sync.Once
}

func newIdleBody(rc io.ReadCloser, d time.Duration) *idleBody {
	b := &idleBody{rc: rc, d: d}
	b.timer = time.AfterFunc(d, func() {
		b.expired.Store(true)
		_ = b.close()
	})
	return b
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if b.expired.Load() {
		return n, fmt.Errorf("event stream silent for %v (sse_read_timeout)", b.d)
	}
	if n > 0 {
		b.timer.Reset(b.d)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	return b.close()
}

func (b *idleBody) close() error {
	var err error
	b.once.Do(func() { err = b.rc.Close() })
	return err
}
