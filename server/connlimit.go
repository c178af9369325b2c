package server

import (
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// connLimits bounds the Engine.IO connections the Server holds: in all
// (WithMaxConnections), per remote address (WithMaxConnectionsPerIP) and
// those not admitted to /smcp yet (WithMaxPendingConnections),
// spec/protocol.md, Limits. Every connection costs memory before it has
// authenticated (spec/decisions.md, Idle memory per connection), so the
// number of them is a resource the clients control like any other.
//
// A handshake takes its place before the library does any work for it
// (reserve), and one over a bound is refused with an HTTP status (503 when
// the Server is full, 429 when the address is). The engine reports the new
// connection while the handshake request is served; the connection then
// keeps the place (claim), which a handshake that made no connection gives
// back.
type connLimits struct {
	max        int64 // 0: no bound
	perIP      int   // 0: no bound
	maxPending int64 // 0: no bound
	live       atomic.Int64
	pending    atomic.Int64 // connections counted in live whose /smcp CONNECT is not admitted yet

	mu   sync.Mutex
	byIP map[string]int // connections per remote address, when perIP > 0

	places sync.Map // *http.Request of a handshake being served → *place
}

// Reasons of a refused connection, as counted by the metrics.
const (
	refusedFull      = "max_connections"
	refusedAddrLimit = "max_connections_per_ip"
	refusedPending   = "max_pending_connections"
	refusedHeaders   = "request_header_too_large" // not a connection limit; answered the same way
)

// place is a connection's place among the connections, taken by reserve
// for a handshake (the connection it makes claims it) or by admit.
type place struct {
	remote  string
	claimed atomic.Bool
	pending atomic.Bool // counted among the connections not admitted yet
}

// reserve takes a place for the handshake request r, or says why there is
// none. The place is found again by the request (claim), which the
// library keeps in the connection it makes.
func (l *connLimits) reserve(r *http.Request) (*place, string) {
	p, reason := l.admit(r.RemoteAddr)
	if reason != "" {
		return nil, reason
	}
	l.places.Store(r, p)
	return p, ""
}

// claim returns the place the handshake request r reserved, now held by
// its connection; nil when r reserved none.
func (l *connLimits) claim(r *http.Request) *place {
	if r == nil {
		return nil
	}
	if v, ok := l.places.LoadAndDelete(r); ok {
		if p := v.(*place); p.claimed.CompareAndSwap(false, true) {
			return p
		}
	}
	return nil
}

// unreserve gives back the place of a handshake request that made no
// connection.
func (l *connLimits) unreserve(r *http.Request, p *place) {
	l.places.Delete(r)
	if p.claimed.CompareAndSwap(false, true) {
		l.release(p)
	}
}

// admit counts a new connection from remote, not admitted to /smcp yet,
// and returns its place, or returns why it may not be held.
func (l *connLimits) admit(remote string) (*place, string) {
	if l.live.Add(1) > l.max && l.max > 0 {
		l.live.Add(-1)
		return nil, refusedFull
	}
	if l.pending.Add(1) > l.maxPending && l.maxPending > 0 {
		l.pending.Add(-1)
		l.live.Add(-1)
		return nil, refusedPending
	}
	if l.perIP > 0 {
		ip := remoteIP(remote)
		l.mu.Lock()
		if l.byIP[ip] >= l.perIP {
			l.mu.Unlock()
			l.pending.Add(-1)
			l.live.Add(-1)
			return nil, refusedAddrLimit
		}
		if l.byIP == nil {
			l.byIP = map[string]int{}
		}
		l.byIP[ip]++
		l.mu.Unlock()
	}
	p := &place{remote: remote}
	p.pending.Store(true)
	return p, ""
}

// settle uncounts p from the connections not admitted yet: its /smcp
// CONNECT has been admitted, or it is closing.
func (l *connLimits) settle(p *place) {
	if p.pending.CompareAndSwap(true, false) {
		l.pending.Add(-1)
	}
}

// release uncounts the connection holding p.
func (l *connLimits) release(p *place) {
	l.settle(p)
	l.live.Add(-1)
	if l.perIP > 0 {
		ip := remoteIP(p.remote)
		l.mu.Lock()
		if l.byIP[ip] <= 1 {
			delete(l.byIP, ip)
		} else {
			l.byIP[ip]--
		}
		l.mu.Unlock()
	}
}

// remoteIP is the address part of a "host:port" remote address.
func remoteIP(remote string) string {
	if host, _, err := net.SplitHostPort(remote); err == nil {
		return host
	}
	return remote
}

// refuseConnection answers a handshake over a bound.
func refuseConnection(w http.ResponseWriter, reason string) {
	status, msg := http.StatusServiceUnavailable, "too many connections"
	switch reason {
	case refusedAddrLimit:
		status, msg = http.StatusTooManyRequests, "too many connections from this address"
	case refusedPending:
		msg = "too many connections awaiting admission"
	case refusedHeaders:
		status, msg = http.StatusRequestHeaderFieldsTooLarge, "request headers too large"
	}
	refuseHTTP(w, status, msg)
}

// refuseHTTP answers a request the Server refuses before the library sees
// it (a handshake over a bound, a long-polling request out of bounds) with
// the body the library's own refusals have, and closes the connection.
func refuseHTTP(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Connection", "close")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"code": status, "message": "smcp server: " + msg})
}

// connRefused counts and logs (at most once a second) a connection refused
// for reason.
func (s *Server) connRefused(remote, reason string) {
	s.m.connRefused(reason)
	if s.refusals.allow() {
		s.log.Warn("connection refused", "remote", remote, "reason", reason,
			"max_connections", s.cfg.maxConns, "max_connections_per_ip", s.cfg.maxConnsPerIP,
			"max_pending_connections", s.cfg.maxPending)
	}
}
