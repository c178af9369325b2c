package protocol

import (
	"bytes"
	"net/url"
	"slices"
	"strconv"
)

// The version handshake (spec/generations.md, Negotiation). From 0.3.0 on
// a client names the version it speaks in the query of the Socket.IO
// connection URL, on every Engine.IO request (polling and WebSocket), and a
// Server that gates versions refuses a handshake before Engine.IO sees it,
// with HTTP 400 and a flat error body (schema/handshake_refusal.json).
const (
	// VersionParam is the query parameter a client names its version in.
	VersionParam = "a2c_version"
	// ErrorCodeHeader is the header of a refusal whose body has code 4008;
	// its value is "4008".
	ErrorCodeHeader = "X-A2C-Error-Code"
	// VersionHeader is smcp-go's confirmation of a session's generation: an
	// smcp-go Server names the version it speaks with the client in this
	// response header of every Engine.IO handshake it accepts (the
	// long-polling open and the WebSocket upgrade), whatever the client
	// asked for. The reference Servers of 0.3/0.4 confirm nothing: a client
	// that reads no such header speaks the generation it asked for, and
	// knows that the Server routes no smcp-go extension
	// (spec/generations.md, Confirmation and extensions).
	VersionHeader = "X-A2C-Version"
	// AuthToken is the member of the Socket.IO auth payload that carries
	// the credential from 0.3.0 on; AuthAPIKey is 0.2.0's. A client that
	// does not know its Server's generation sends both.
	AuthToken  = "token"
	AuthAPIKey = "api_key"
)

// HandshakeURL returns rawURL with a2c_version set to g's version: other
// query pairs are kept, a caller's own a2c_version is replaced, as the 0.4
// references build it. For 0.2.0, which names no version, it removes
// a2c_version.
func HandshakeURL(rawURL string, g Generation) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", NewBadRequest("server URL %q: %v", rawURL, err)
	}
	q := u.Query()
	q.Del(VersionParam)
	if g.Handshake() {
		q.Set(VersionParam, g.String())
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// VersionPolicy is how a Server answers a client's a2c_version.
type VersionPolicy struct {
	// Accept lists the generations the Server serves; empty means every
	// generation smcp-go speaks.
	Accept []Generation
	// Strict refuses a handshake that names no version, as the 0.4
	// references' Servers do (400 "Missing a2c_version query parameter");
	// otherwise such a client speaks DefaultGeneration (0.2.0), whose
	// clients name none.
	Strict bool
}

func (p VersionPolicy) accepted() []Generation {
	if len(p.Accept) == 0 {
		return Generations()
	}
	return p.Accept
}

// Negotiate reads the a2c_version of a handshake's query and returns the
// generation the session speaks, or the refusal to answer it with
// (HandshakeResponse): 400 for a version that is missing (Strict) or not
// MAJOR.MINOR.PATCH, 4008 for one the Server does not accept, naming the
// Server's newest version and the range it accepts. The first value of the
// parameter counts, as the references read it; an empty one is missing.
func (p VersionPolicy) Negotiate(query url.Values) (Generation, *Error) {
	raw := query.Get(VersionParam)
	if raw == "" {
		if p.Strict || !slices.Contains(p.accepted(), DefaultGeneration) {
			return 0, NewBadRequest("Missing a2c_version query parameter")
		}
		return DefaultGeneration, nil
	}
	v, err := ParseVersion(raw)
	if err != nil {
		return 0, NewBadRequest("Invalid a2c_version: %s", AsError(err).Message)
	}
	for _, g := range p.accepted() {
		if v.CompatibleWith(g.Version()) {
			return g, nil
		}
	}
	return 0, p.mismatch(v)
}

// mismatch is the 4008 refusal: the Server's newest accepted version, the
// client's, and the accepted range, oldest MAJOR.MINOR.0 to newest
// MAJOR.MINOR.999 (the references write the range of their one minor so).
func (p VersionPolicy) mismatch(client Version) *Error {
	acc := p.accepted()
	oldest, newest := acc[0].Version(), acc[0].Version()
	for _, g := range acc[1:] {
		v := g.Version()
		if v.Compare(oldest) < 0 {
			oldest = v
		}
		if v.Compare(newest) > 0 {
			newest = v
		}
	}
	return NewProtocolVersionMismatch("Protocol version mismatch").
		WithField("server_version", newest.String()).
		WithField("client_version", client.String()).
		WithField("min_supported", Version{Major: oldest.Major, Minor: oldest.Minor}.String()).
		WithField("max_supported", Version{Major: newest.Major, Minor: newest.Minor, Patch: 999}.String())
}

// statusBadRequest is the HTTP status of every handshake refusal (this
// package imports no network code, net/http included).
const statusBadRequest = 400

// HandshakeResponse is the HTTP answer that refuses a handshake with e (a
// 400 or 4008 from Negotiate): status 400, a JSON body of e in the flat
// shape, and the headers to set: Content-Type and Content-Length, and for a
// 4008 X-A2C-Error-Code: 4008. A Server that can no longer answer over HTTP
// (a WebSocket already accepted) closes with CloseVersionRejected instead.
func HandshakeResponse(e *Error) (status int, headers map[string]string, body []byte) {
	body, _ = e.MarshalShape(ErrorShapeFlat)
	headers = map[string]string{
		"Content-Type":   "application/json",
		"Content-Length": strconv.Itoa(len(body)),
	}
	if e.Code == CodeProtocolVersionMismatch {
		headers[ErrorCodeHeader] = strconv.Itoa(int(CodeProtocolVersionMismatch))
	}
	return statusBadRequest, headers, body
}

// ParseHandshakeRefusal reads a Server's HTTP answer to a handshake (its
// status, the value of its X-A2C-Error-Code header, its body) and returns
// the refusal it carries: a flat error body of a 400 (the 0.4 references'
// and VersionPolicy's), with code 4008 also when only the header says so.
// It returns false for any other answer (an old Server's 400 of another
// kind, a proxy's page), which the caller reports as the HTTP failure it
// is.
func ParseHandshakeRefusal(status int, errorCode string, body []byte) (*Error, bool) {
	if status != statusBadRequest {
		return nil, false
	}
	e, ok := DecodeError(bytes.TrimSpace(body))
	if !ok {
		if errorCode != strconv.Itoa(int(CodeProtocolVersionMismatch)) {
			return nil, false
		}
		e = NewProtocolVersionMismatch("Protocol version mismatch")
	}
	if e.Code != CodeBadRequest && e.Code != CodeProtocolVersionMismatch {
		return nil, false
	}
	return e, true
}

// SupportedRange returns the range of versions a 4008 refusal names
// (min_supported, max_supported); ok is false for any other error.
func (e *Error) SupportedRange() (min, max Version, ok bool) {
	if e == nil || e.Code != CodeProtocolVersionMismatch {
		return Version{}, Version{}, false
	}
	lo, _ := e.Fields["min_supported"].(string)
	hi, _ := e.Fields["max_supported"].(string)
	var err1, err2 error
	min, err1 = ParseVersion(lo)
	max, err2 = ParseVersion(hi)
	return min, max, err1 == nil && err2 == nil
}

// RetryGeneration picks the generation a client retries with after the
// 4008 refusal e: the newest of speaks whose version lies in the range e
// names. ok is false when none does, or e names no range.
func RetryGeneration(e *Error, speaks []Generation) (g Generation, ok bool) {
	min, max, has := e.SupportedRange()
	if !has {
		return 0, false
	}
	for _, s := range speaks {
		v := s.Version()
		if v.Compare(min) >= 0 && v.Compare(max) <= 0 && (!ok || v.Compare(g.Version()) > 0) {
			g, ok = s, true
		}
	}
	return g, ok
}
