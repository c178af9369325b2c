package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// AuthRequest is what an AuthProvider sees of a connection attempt to the
// /smcp namespace (spec/protocol.md, Connection and auth).
type AuthRequest struct {
	// Header holds the HTTP headers of the handshake request (canonical keys).
	Header http.Header
	// Auth is the Socket.IO auth payload; nil when the client sent none.
	Auth map[string]any
	// RemoteAddr is the peer's address as the transport saw it.
	RemoteAddr string
}

// AuthProvider admits or refuses connections. Authenticate returns nil to
// admit; any error refuses the connection with a Socket.IO connect error. A
// *protocol.Error keeps its code (use 401 or 403) and message; any other error
// becomes 401 "unauthorized", and its text is not sent to the client.
// Messages must not echo credentials. Authenticate runs off the transport's
// goroutine; ctx ends after a bounded time or when the Server closes.
type AuthProvider interface {
	Authenticate(ctx context.Context, req *AuthRequest) error
}

// AuthFunc adapts a function to AuthProvider.
type AuthFunc func(ctx context.Context, req *AuthRequest) error

// Authenticate calls f.
func (f AuthFunc) Authenticate(ctx context.Context, req *AuthRequest) error { return f(ctx, req) }

// APIKeyAuth is the default provider: it reads an API key from the header
// named header (case-insensitive; "x-api-key" when empty) or, when the header
// is absent, from the auth payload's "api_key" string, and admits the
// connection when it equals one of keys. The comparison is constant-time
// over SHA-256 digests, so neither the key's content nor its length leaks
// through timing, and every configured key is compared. With no keys it
// refuses every connection.
func APIKeyAuth(header string, keys ...string) AuthProvider {
	if header == "" {
		header = DefaultAPIKeyHeader
	}
	p := &apiKeyAuth{header: http.CanonicalHeaderKey(header)}
	for _, k := range keys {
		if k == "" {
			continue
		}
		p.digests = append(p.digests, sha256.Sum256([]byte(k)))
	}
	return p
}

type apiKeyAuth struct {
	header  string
	digests [][sha256.Size]byte
}

func (p *apiKeyAuth) Authenticate(_ context.Context, req *AuthRequest) error {
	key := req.Header.Get(p.header)
	if key == "" {
		if v, ok := req.Auth["api_key"].(string); ok {
			key = v
		}
	}
	if key == "" {
		return protocol.NewUnauthorized("missing API key")
	}
	d := sha256.Sum256([]byte(key))
	match := 0
	for i := range p.digests {
		match |= subtle.ConstantTimeCompare(d[:], p.digests[i][:])
	}
	if match != 1 {
		return protocol.NewUnauthorized("invalid API key")
	}
	return nil
}

// InsecureNoAuth admits every connection. Use it only for local development
// and tests; the smcp-server binary needs --insecure-no-auth to select it.
func InsecureNoAuth() AuthProvider {
	return AuthFunc(func(context.Context, *AuthRequest) error { return nil })
}
