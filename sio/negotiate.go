package sio

import (
	"slices"
	"strings"

	"github.com/a2c-smcp/smcp-go/protocol"
	engine "github.com/a2c-smcp/smcp-go/sio/third_party/engineioclient"
	parser "github.com/a2c-smcp/smcp-go/sio/third_party/socketioparser"
)

// The generation of a connection
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#versions-and-negotiation;
// Confirmation and extensions).

// Generation returns the generation the session speaks: the one an smcp-go
// Server confirmed, else protocol.Gen02 for a Server found to ignore
// a2c_version (see the package doc, Generations), else the one the Conn
// named in its handshake (after a 4008's retry, the retried one). Before
// the first connection it is the one the Conn will name.
func (c *Conn) Generation() protocol.Generation {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.confirmed != 0:
		return c.confirmed
	case c.old:
		return protocol.Gen02
	}
	return c.gen
}

// Confirmed reports whether the Server named the session's generation in
// the X-A2C-Version header of its handshake answer, as an smcp-go Server
// does and the reference Servers do not: only then does it route the
// smcp-go extensions (the Finder, client:read_resource). False before the
// first connection.
func (c *Conn) Confirmed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.confirmed != 0
}

// Speaks returns the generations the Conn speaks (WithGenerations).
func (c *Conn) Speaks() []protocol.Generation {
	return append([]protocol.Generation(nil), c.cfg.speaks...)
}

// readConfirmation returns the generation the Server named in the
// X-A2C-Version header of the current transport's handshake, 0 when it
// named none or one the Conn does not speak. Called with c.mu held.
func (c *Conn) readConfirmation() protocol.Generation {
	e := c.sock.Io().Engine()
	if e == nil {
		return 0
	}
	t, ok := e.Transport().(engine.ResponseHeaders)
	if !ok {
		return 0
	}
	h := t.ResponseHeader()
	if h == nil {
		return 0
	}
	v := strings.TrimSpace(h.Get(protocol.VersionHeader))
	if v == "" {
		return 0
	}
	g, err := protocol.ParseGeneration(v)
	if err != nil || !slices.Contains(c.cfg.speaks, g) {
		c.log.Warn("the server confirmed a generation this client does not speak; using the one it asked for",
			"url", c.url, "confirmed", v, "asked", c.gen.String())
		return 0
	}
	return g
}

// onPacket notes that the Server sent something else than the namespace
// CONNECT on this connection (an event or an ack), and reads a DISCONNECT
// that came before anything else as the refusal it is: the Rust 0.4 Server
// refuses a credential so, accepting the namespace CONNECT, then
// disconnecting the socket at once. The socket does not reconnect after a
// Server's disconnect; LastError is the refusal.
func (c *Conn) onPacket(args []any) {
	p, ok := firstArg[*parser.Packet](args)
	if !ok {
		return
	}
	switch p.Type {
	case parser.CONNECT:
		c.mu.Lock()
		c.nsConnected = true
		c.mu.Unlock()
	case parser.EVENT, parser.ACK, parser.BINARY_EVENT, parser.BINARY_ACK:
		c.mu.Lock()
		c.heard = true
		c.mu.Unlock()
	case parser.DISCONNECT:
		c.mu.Lock()
		c.ended = true
		if c.heard || c.closed || !c.nsConnected {
			c.mu.Unlock()
			return
		}
		msg := "the server ended the session as soon as it accepted it, before answering anything (how the Rust 0.4 Server refuses a credential)"
		ce := &ConnectError{URL: c.url, Refused: true, Code: int(protocol.CodeUnauthorized), Message: msg,
			Err: protocol.NewUnauthorized("%s", msg)}
		c.lastErr = ce
		c.mu.Unlock()
		c.log.Warn("connection refused by the server", "url", c.url, "error", msg)
	}
}

// onHandshakeRefused handles a refused Engine.IO handshake. It returns
// false for an answer that is no SMCP refusal (a proxy's error page, an old
// Server's 400 of Engine.IO): an attempt that failed, retried with backoff.
// A 4008 whose range holds a generation the Conn speaks, and that was not
// already retried, switches the Conn to that generation for the next
// attempt; any other refusal ends the Conn's attempts and Connect.
func (c *Conn) onHandshakeRefused(hs *engine.HandshakeError) bool {
	var pe *protocol.Error
	if hs.CloseCode != 0 {
		if hs.CloseCode != protocol.CloseVersionRejected {
			return false
		}
		pe = protocol.NewProtocolVersionMismatch("the server closed the websocket with code %d: it does not speak version %s", hs.CloseCode, c.gen)
	} else {
		var ok bool
		pe, ok = protocol.ParseHandshakeRefusal(hs.StatusCode, hs.Header.Get(protocol.ErrorCodeHeader), hs.Body)
		if !ok {
			return false
		}
	}
	c.mu.Lock()
	asked := c.gen
	retry, canRetry := retryGeneration(pe, asked, c.cfg.speaks)
	canRetry = canRetry && !c.retried && !c.closed
	if canRetry {
		c.retried = true
		c.gen = retry
	}
	c.mu.Unlock()
	if canRetry {
		if u, err := protocol.HandshakeURL(c.url, retry); err == nil {
			c.sock.Io().SetURI(u)
			c.log.Info("the server refused the protocol version; retrying in one it accepts",
				"url", c.url, "asked", asked.String(), "retry", retry.String(), "error", pe.Message)
			c.attemptFailed(pe.Wrap(hs))
			return true
		}
	}
	ce := &ConnectError{URL: c.url, Refused: true, Code: int(pe.Code), Message: pe.Message, Err: pe.Wrap(hs)}
	c.mu.Lock()
	c.lastErr = ce
	c.mu.Unlock()
	c.log.Warn("connection refused by the server", "url", c.url, "version", asked.String(), "error", pe.Error())
	if c.hooks.AttemptFailed != nil {
		c.hooks.AttemptFailed(ce)
	}
	// The manager retries a failed handshake on its own: a refusal of
	// the version or the request is not one to repeat.
	c.Go(func() { c.sock.Disconnect() })
	c.report(ce)
	return true
}

// retryGeneration is the generation to retry with after the refusal pe of
// a handshake that named asked: for a 4008, the newest of speaks in the
// Server's range (protocol.RetryGeneration); for a 400 to a handshake that
// named no version, the newest of speaks that names one. ok is false when
// there is none other than asked.
func retryGeneration(pe *protocol.Error, asked protocol.Generation, speaks []protocol.Generation) (g protocol.Generation, ok bool) {
	switch {
	case pe.Code == protocol.CodeProtocolVersionMismatch:
		g, ok = protocol.RetryGeneration(pe, speaks)
	case pe.Code == protocol.CodeBadRequest && !asked.Handshake():
		for _, s := range speaks {
			if s.Handshake() && (!ok || s.Version().Compare(g.Version()) > 0) {
				g, ok = s, true
			}
		}
	}
	return g, ok && g != asked
}
