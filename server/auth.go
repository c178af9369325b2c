package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"

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
	// ClientAddr is the client's address, without a port: RemoteAddr's,
	// or, for a handshake through a trusted proxy (WithTrustedProxies), the
	// one the proxy's header names.
	ClientAddr string
	// Grant is set by a provider that admits the connection with a limited
	// scope (KeyAuth with scoped keys); nil admits any office and role.
	Grant *Grant
}

// Grant is what an admitted connection may join: the Server refuses a
// server:join_office outside it with 403 (spec/protocol.md, Connection and
// auth).
type Grant struct {
	// KeyID names the credential in log lines (never the secret).
	KeyID string
	// Offices lists the office ids the connection may join; empty: any.
	Offices []string
	// Roles lists the roles the connection may join as; empty: any.
	Roles []protocol.Role
	// MaxSessions bounds the sessions admitted at once, on one Server
	// node, with this Grant (the same *Grant: KeyAuth returns one per
	// key); 0: no bound. A CONNECT over it is refused with 429, so that one
	// tenant cannot take every place of a Server that hosts several.
	MaxSessions int
}

// countKeySession counts the session of the connection engineID against its
// grant's MaxSessions, or returns the 429 that refuses it. The count is
// given back when the connection closes (uncountKeySession).
func (s *Server) countKeySession(engineID string, g *Grant) *protocol.Error {
	if g == nil || g.MaxSessions <= 0 {
		return nil
	}
	c := s.conn(engineID)
	if c == nil {
		return nil // closed meanwhile: nothing will be admitted
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.keysClosed || c.keyGrant != nil {
		return nil
	}
	if s.keySessions[g] >= g.MaxSessions {
		return protocol.NewTooManyRequests("this key already has %d sessions", g.MaxSessions).With("max_sessions", g.MaxSessions)
	}
	if s.keySessions == nil {
		s.keySessions = map[*Grant]int{}
	}
	s.keySessions[g]++
	c.keyGrant = g
	return nil
}

// uncountKeySession gives back the count of a closed connection.
func (s *Server) uncountKeySession(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.keysClosed = true
	g := c.keyGrant
	if g == nil {
		return
	}
	c.keyGrant = nil
	if s.keySessions[g]--; s.keySessions[g] <= 0 {
		delete(s.keySessions, g)
	}
}

// allows reports whether the grant admits joining office as role.
func (g *Grant) allows(office string, role protocol.Role) bool {
	return g.allowsOffice(office) && (g == nil || len(g.Roles) == 0 || slices.Contains(g.Roles, role))
}

// allowsOffice reports whether the credential admits office in some role.
func (g *Grant) allowsOffice(office string) bool {
	return g == nil || len(g.Offices) == 0 || slices.Contains(g.Offices, office)
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
// is absent, from the auth payload's "api_key" string (0.2.0) or, when that
// is absent too, its "token" string (0.3.0 and 0.4.0 clients send the key
// there alone): the first credential present is the one checked, so a
// client cannot try several keys with one CONNECT. It admits the
// connection when it equals one of keys, for any office and role. The
// comparison is constant-time over SHA-256 digests, so neither the key's
// content nor its length leaks through timing, and every configured key is
// compared. With no keys it refuses every connection.
func APIKeyAuth(header string, keys ...string) AuthProvider {
	var ks []Key
	for _, k := range keys {
		if k != "" {
			ks = append(ks, Key{Secret: k})
		}
	}
	p, _ := KeyAuth(header, ks...) // cannot fail: no empty secret, no role
	return p
}

// Key is one API key and the scope it admits. Offices and Roles empty admit
// any office and role: that is the default deployment, one key for all.
// Several tenants share one Server by giving each its own keys limited to
// its offices. The JSON form is what smcp-server's --keys-file holds.
type Key struct {
	// ID names the key in log lines; when empty it is "sha256:" and the first
	// 12 hex digits of the secret's SHA-256, which does not reveal it.
	ID      string          `json:"id,omitempty"`
	Secret  string          `json:"secret"`
	Offices []string        `json:"offices,omitempty"`
	Roles   []protocol.Role `json:"roles,omitempty"`
	// MaxSessions bounds the sessions admitted with this key at once on
	// one node (Grant.MaxSessions); 0: no bound.
	MaxSessions int `json:"max_sessions,omitempty"`
}

// KeyAuth is APIKeyAuth with scoped keys: an admitted connection carries
// its key's Grant, and the Server refuses a join outside it with 403, and a
// CONNECT beyond its MaxSessions with 429. It fails on an empty secret, a
// secret given twice, an unknown role or a negative MaxSessions.
func KeyAuth(header string, keys ...Key) (AuthProvider, error) {
	if header == "" {
		header = DefaultAPIKeyHeader
	}
	p := &apiKeyAuth{header: http.CanonicalHeaderKey(header)}
	seen := map[[sha256.Size]byte]bool{}
	for i, k := range keys {
		if k.Secret == "" {
			return nil, fmt.Errorf("key %d: empty secret", i)
		}
		d := sha256.Sum256([]byte(k.Secret))
		if seen[d] {
			return nil, fmt.Errorf("key %d: secret given twice", i)
		}
		seen[d] = true
		for _, r := range k.Roles {
			if r != protocol.RoleAgent && r != protocol.RoleComputer {
				return nil, fmt.Errorf("key %d: unknown role %q", i, r)
			}
		}
		if k.MaxSessions < 0 {
			return nil, fmt.Errorf("key %d: negative max_sessions", i)
		}
		g := &Grant{KeyID: k.ID, Offices: slices.Clone(k.Offices), Roles: slices.Clone(k.Roles), MaxSessions: k.MaxSessions}
		if g.KeyID == "" {
			g.KeyID = "sha256:" + hex.EncodeToString(d[:6])
		}
		p.digests = append(p.digests, d)
		p.grants = append(p.grants, g)
	}
	return p, nil
}

type apiKeyAuth struct {
	header  string
	digests [][sha256.Size]byte
	grants  []*Grant
}

func (p *apiKeyAuth) Authenticate(_ context.Context, req *AuthRequest) error {
	key := req.Header.Get(p.header)
	for _, member := range []string{protocol.AuthAPIKey, protocol.AuthToken} {
		if key != "" {
			break
		}
		key, _ = req.Auth[member].(string)
	}
	if key == "" {
		return protocol.NewUnauthorized("missing API key")
	}
	d := sha256.Sum256([]byte(key))
	found := -1
	for i := range p.digests {
		if subtle.ConstantTimeCompare(d[:], p.digests[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return protocol.NewUnauthorized("invalid API key")
	}
	req.Grant = p.grants[found]
	return nil
}

// InsecureNoAuth admits every connection. Use it only for local development
// and tests; the smcp-server binary needs --insecure-no-auth to select it.
func InsecureNoAuth() AuthProvider {
	return AuthFunc(func(context.Context, *AuthRequest) error { return nil })
}
