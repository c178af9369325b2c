package sio

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// Telling an old Server from a 0.4 reference Server
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#clients-negotiation-in-practice).
//
// A handshake accepted without X-A2C-Version comes from a 0.4 reference
// Server (its version gate admitted the version named) or from a Server of
// the 0.2 generation, which ignores a2c_version. The two answer a plain
// Engine.IO open that names no version differently: the 0.4 gate refuses
// it with HTTP 400 ("Missing a2c_version query parameter"), an old Server
// opens a session. A Conn that speaks 0.2.0 asks once, and speaks 0.2.0 to
// a Server that opened one.

// probeBodyLimit bounds what the probe reads of an answer: an open packet
// or a refusal body is well under 1 KiB.
const probeBodyLimit = 64 << 10

// detectOldServer runs after a namespace connection the Server did not
// confirm, before the Connected hook: when the Conn speaks 0.2.0 besides
// the generation it named, and has not asked this Server yet, it probes
// the Server (probeOldServer) and remembers the answer for the Conn's
// life. Called without c.mu held.
func (c *Conn) detectOldServer() {
	c.mu.Lock()
	if c.confirmed != 0 || c.probed || c.gen == protocol.Gen02 || !slices.Contains(c.cfg.speaks, protocol.Gen02) || c.closed {
		c.mu.Unlock()
		return
	}
	c.probed = true
	asked := c.gen
	c.mu.Unlock()
	old := c.probeOldServer()
	if !old {
		return
	}
	c.mu.Lock()
	c.old = true
	c.mu.Unlock()
	c.log.Info("the server ignores a2c_version (a 0.2.0 server): speaking 0.2.0", "url", c.url, "asked", asked.String())
}

// probeOldServer sends one Engine.IO long-polling open that names no
// a2c_version (same headers and key as the connection, bounded by the
// attempt timeout) and reports whether the Server opened a session, as a
// Server that ignores versions does; it closes that session at once. A
// refusal (the 0.4 gate's 400), a network error or any other answer is
// false.
func (c *Conn) probeOldServer() bool {
	u, err := c.probeURL()
	if err != nil {
		c.log.Debug("probe for an old server not sent", "url", c.url, "error", err.Error())
		return false
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.attempt)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		c.log.Debug("probe for an old server not sent", "url", c.url, "error", err.Error())
		return false
	}
	c.probeHeaders(req.Header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.log.Debug("probe for an old server failed; keeping the generation asked for", "url", c.url, "error", err.Error())
		return false
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, probeBodyLimit))
	_ = resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusBadRequest:
		if pe, ok := protocol.ParseHandshakeRefusal(resp.StatusCode, resp.Header.Get(protocol.ErrorCodeHeader), body); ok {
			c.log.Debug("the server gates versions: keeping the generation asked for", "url", c.url, "answer", pe.Message)
			return false
		}
		fallthrough
	default:
		c.log.Debug("probe for an old server answered otherwise; keeping the generation asked for",
			"url", c.url, "status", resp.StatusCode)
		return false
	}
	sid, ok := openSID(body)
	if !ok {
		c.log.Debug("probe for an old server got no Engine.IO open packet; keeping the generation asked for", "url", c.url)
		return false
	}
	c.closeProbe(ctx, u, sid)
	return true
}

// probeURL is the Engine.IO endpoint of the Conn's URL (the Socket.IO
// client's default path, /socket.io/) with the caller's query pairs, no
// a2c_version, and EIO=4&transport=polling.
func (c *Conn) probeURL() (*url.URL, error) {
	u, err := url.Parse(c.url)
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	}
	q := u.Query()
	q.Del(protocol.VersionParam)
	q.Set("EIO", "4")
	q.Set("transport", "polling")
	u.Path = "/socket.io/"
	u.RawQuery = q.Encode()
	u.Fragment = ""
	return u, nil
}

func (c *Conn) probeHeaders(h http.Header) {
	for k, vs := range c.cfg.headers {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	if c.cfg.apiKey != "" {
		h.Set("x-api-key", c.cfg.apiKey)
	}
}

// openSID reads the sid of an Engine.IO open packet ("0{...}"), the first
// packet of a long-polling payload.
func openSID(body []byte) (string, bool) {
	if i := bytes.IndexByte(body, 0x1e); i >= 0 {
		body = body[:i]
	}
	if len(body) < 2 || body[0] != '0' {
		return "", false
	}
	var open struct {
		SID string `json:"sid"`
	}
	if err := json.Unmarshal(body[1:], &open); err != nil || open.SID == "" {
		return "", false
	}
	return open.SID, true
}

// closeProbe closes the probe's Engine.IO session: a close packet ("1")
// posted to its sid. Its errors are ignored: the Server ends an abandoned
// session on its own after its ping timeout.
func (c *Conn) closeProbe(ctx context.Context, u *url.URL, sid string) {
	cu := *u
	q := cu.Query()
	q.Set("sid", sid)
	cu.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cu.String(), strings.NewReader("1"))
	if err != nil {
		return
	}
	c.probeHeaders(req.Header)
	req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.log.Debug("closing the probe's session failed", "url", c.url, "error", err.Error())
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, probeBodyLimit))
	_ = resp.Body.Close()
}
