package engine

import (
	"fmt"
	"io"
	"net/http"
	"sync"
)

// smcp-go patch 16: the whole file. Upstream reported a refused handshake
// as gorilla's "websocket: bad handshake" or "unexpected HTTP status" and
// dropped the server's answer, so a client could not tell a version
// refusal (HTTP 400 with a JSON body) from a broken proxy, and read none
// of the headers of an accepted handshake.

// MaxRefusalBody bounds the body of a refused handshake kept in a
// HandshakeError.
const MaxRefusalBody = 4 << 10

// HandshakeError is a server's refusal of a transport's handshake: an HTTP
// answer that is neither the websocket upgrade nor a 2xx of long-polling
// (StatusCode, Header and at most MaxRefusalBody bytes of Body), or a
// websocket the server closed with a close code of 4000–4999 (CloseCode,
// StatusCode 0). Err is the transport's own error.
type HandshakeError struct {
	StatusCode int
	Header     http.Header
	Body       []byte
	CloseCode  int
	Err        error
}

func (e *HandshakeError) Error() string {
	if e.CloseCode != 0 {
		return fmt.Sprintf("websocket closed by the server with code %d", e.CloseCode)
	}
	return fmt.Sprintf("handshake refused with HTTP status %d", e.StatusCode)
}

// Unwrap returns the transport's error.
func (e *HandshakeError) Unwrap() error { return e.Err }

// newHandshakeError reads a refused handshake's response (its body up to
// MaxRefusalBody) into a HandshakeError; res may be nil, then it is err.
func newHandshakeError(res *http.Response, err error) error {
	if res == nil {
		return err
	}
	e := &HandshakeError{StatusCode: res.StatusCode, Header: res.Header.Clone(), Err: err}
	if res.Body != nil {
		e.Body, _ = io.ReadAll(io.LimitReader(res.Body, MaxRefusalBody))
	}
	return e
}

// ResponseHeaders is implemented by the transports: the headers of the
// server's answer to the transport's handshake (the websocket upgrade, the
// first long-polling response), nil before it.
type ResponseHeaders interface {
	ResponseHeader() http.Header
}

// responseHeader keeps the first handshake answer's headers of a transport.
type responseHeader struct {
	mu  sync.Mutex
	hdr http.Header
}

func (r *responseHeader) keep(h http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hdr == nil {
		r.hdr = h.Clone()
	}
}

// ResponseHeader returns the headers of the transport's handshake answer.
func (r *responseHeader) ResponseHeader() http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hdr
}
