package mcpclient

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/blob"
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
	// spool takes the binary items of tool results (lifter), nil: none.
	spool *blob.Spool
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
	if stream && t.s.sseRead > 0 {
		resp.Body = newIdleBody(resp.Body, t.s.sseRead) // counts the server's bytes, before lifting
	}
	if t.s.spool != nil {
		switch {
		case stream:
			resp.Body = &liftStream{rc: resp.Body, br: bufio.NewReaderSize(resp.Body, idPrefixBytes), l: newLifter(t.s.spool, limit)}
		case mt == "application/json":
			resp.Body = &liftBody{rc: resp.Body, l: newLifter(t.s.spool, limit), buf: make([]byte, idPrefixBytes)}
		}
	}
	resp.Body = &limitBody{rc: resp.Body, limit: limit, stream: stream}
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

// liftBody runs a JSON answer's body through a lifter: the binary items of
// a tool result go to the spool as they arrive, and the rest is served once
// the body ended (bounded by the lifter). A refused answer is replaced by
// its JSON-RPC error, or fails the read with it when its id is unknown.
type liftBody struct {
	rc   io.ReadCloser
	l    *lifter
	buf  []byte
	out  []byte
	err  error // once out is served
	done bool
}

func (b *liftBody) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		if b.done {
			return 0, b.err
		}
		n, err := b.rc.Read(b.buf)
		b.l.write(b.buf[:n])
		if err != nil {
			b.done, b.err = true, err
			b.out, err = b.l.endOrRefusal()
			if err != nil {
				b.err = err
			}
		}
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

func (b *liftBody) Close() error { return b.rc.Close() }

// liftStream runs each data line of an event stream through a lifter (a
// JSON-RPC message on one data line, as MCP servers write them; one split
// over several lines is passed on as it is, unlifted), the other lines
// unchanged.
type liftStream struct {
	rc   io.ReadCloser
	br   *bufio.Reader
	l    *lifter
	out  []byte
	err  error
	line int // 0: at a line's start; 1: passing a line on; 2: lifting a data line
}

func (s *liftStream) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.next()
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

// next reads the next fragment of the stream into out.
func (s *liftStream) next() {
	frag, err := s.br.ReadSlice('\n')
	more := errors.Is(err, bufio.ErrBufferFull)
	if !more && err != nil {
		s.err = err
	}
	if s.line == 0 {
		if rest, ok := bytes.CutPrefix(frag, []byte("data:")); ok {
			s.line, frag = 2, bytes.TrimPrefix(rest, []byte(" "))
			s.l.reset(s.l.out)
		} else {
			s.line = 1
		}
	}
	if s.line == 1 {
		s.out = append(s.out[:0], frag...)
		if !more {
			s.line = 0
		}
		return
	}
	if !more {
		frag = bytes.TrimRight(frag, "\r\n")
	}
	s.l.write(frag)
	if more {
		return
	}
	s.line = 0
	line, rerr := s.l.endOrRefusal()
	if rerr != nil {
		s.err = rerr
		return
	}
	line = bytes.TrimRight(line, "\n")
	out := make([]byte, 0, len(line)+7)
	out = append(append(append(out, "data: "...), line...), '\n')
	s.out = out
}

func (s *liftStream) Close() error { return s.rc.Close() }

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
