package server

import (
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
)

// connLimits bounds the Engine.IO connections the Server holds: in all
// (WithMaxConnections), per client address (WithMaxConnectionsPerIP), those
// not admitted to /smcp yet (WithMaxPendingConnections) and those of them
// per client address (WithMaxPendingPerAddress), spec/protocol.md, Limits.
// Every connection costs memory before it has authenticated
// (spec/decisions.md, Idle memory per connection), so the number of them is
// a resource the clients control like any other; and the connections not
// admitted yet are what a client without a key can hold, so one address
// may hold only a share of them: it cannot lock the others out.
//
// A handshake takes its place before the library does any work for it
// (reserve), and one over a bound is refused with an HTTP status (503 when
// the Server is full, 429 when the address is). The engine reports the new
// connection while the handshake request is served; the connection then
// keeps the place (claim), which a handshake that made no connection gives
// back. A connection stops counting among those awaiting admission when its
// /smcp CONNECT is admitted or when it closes (settle), and among the
// connections when its transport has closed too (release).
type connLimits struct {
	max            int64 // 0: no bound
	perIP          int   // per client address; 0: no bound
	maxPending     int64 // 0: no bound
	pendingPerAddr int   // per client address; 0: no bound
	live           atomic.Int64
	pending        atomic.Int64 // connections counted in live whose /smcp CONNECT is not admitted yet

	mu     sync.Mutex
	byAddr map[string]*addrCount // per client address (addrKey), when a per-address bound is set

	places sync.Map // *http.Request of a handshake being served → *place
}

// addrCount is what one client address holds.
type addrCount struct{ live, pending int }

// Reasons of a refused connection, as counted by the metrics.
const (
	refusedFull        = "max_connections"
	refusedAddrLimit   = "max_connections_per_ip"
	refusedPending     = "max_pending_connections"
	refusedPendingAddr = "max_pending_per_address"
	refusedHeaders     = "request_header_too_large" // not a connection limit; answered the same way
)

// place is a connection's place among the connections, taken by reserve
// for a handshake (the connection it makes claims it) or by admit.
type place struct {
	addr    string // the client address (clientAddrs.of)
	key     string // what the per-address bounds count it under (addrKey)
	claimed atomic.Bool
	pending atomic.Bool // counted among the connections not admitted yet
}

// perAddr reports whether a per-address bound is set.
func (l *connLimits) perAddr() bool { return l.perIP > 0 || l.pendingPerAddr > 0 }

// reserve takes a place for the handshake request r from the client
// address addr, or says why there is none. The place is found again by the
// request (claim), which the library keeps in the connection it makes.
func (l *connLimits) reserve(r *http.Request, addr string) (*place, string) {
	p, reason := l.admit(addr)
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

// admit counts a new connection from the client address addr, not
// admitted to /smcp yet, and returns its place, or returns why it may not
// be held.
func (l *connLimits) admit(addr string) (*place, string) {
	if l.live.Add(1) > l.max && l.max > 0 {
		l.live.Add(-1)
		return nil, refusedFull
	}
	p := &place{addr: addr, key: addrKey(addr)}
	if l.perAddr() {
		l.mu.Lock()
		n := l.byAddr[p.key]
		var reason string
		switch {
		case n == nil:
		case l.perIP > 0 && n.live >= l.perIP:
			reason = refusedAddrLimit
		case l.pendingPerAddr > 0 && n.pending >= l.pendingPerAddr:
			reason = refusedPendingAddr
		}
		if reason != "" {
			l.mu.Unlock()
			l.live.Add(-1)
			return nil, reason
		}
		if n == nil {
			if l.byAddr == nil {
				l.byAddr = map[string]*addrCount{}
			}
			n = &addrCount{}
			l.byAddr[p.key] = n
		}
		n.live++
		n.pending++
		l.mu.Unlock()
	}
	p.pending.Store(true)
	if l.pending.Add(1) > l.maxPending && l.maxPending > 0 {
		l.pending.Add(-1)
		p.pending.Store(false)
		l.live.Add(-1)
		l.addrAdd(p, -1, -1)
		return nil, refusedPending
	}
	return p, ""
}

// addrAdd adds live and pending to the counts of p's client address, and
// forgets the address once it holds no connection.
func (l *connLimits) addrAdd(p *place, live, pending int) {
	if !l.perAddr() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.byAddr[p.key]
	if n == nil {
		return
	}
	n.live += live
	n.pending += pending
	if n.live <= 0 {
		delete(l.byAddr, p.key)
	}
}

// settle uncounts p from the connections not admitted yet: its /smcp
// CONNECT has been admitted, or it is closing.
func (l *connLimits) settle(p *place) {
	if p.pending.CompareAndSwap(true, false) {
		l.pending.Add(-1)
		l.addrAdd(p, 0, -1)
	}
}

// release uncounts the connection holding p.
func (l *connLimits) release(p *place) {
	l.settle(p)
	l.live.Add(-1)
	l.addrAdd(p, -1, 0)
}

// pendingNow is the number of connections awaiting admission.
func (l *connLimits) pendingNow() int64 { return l.pending.Load() }

// refuseConnection answers a handshake over a bound.
func refuseConnection(w http.ResponseWriter, reason string) {
	status, msg := http.StatusServiceUnavailable, "too many connections"
	switch reason {
	case refusedAddrLimit:
		status, msg = http.StatusTooManyRequests, "too many connections from this address"
	case refusedPendingAddr:
		status, msg = http.StatusTooManyRequests, "too many connections awaiting admission from this address"
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

// connRefused counts and logs (at most once a second) a connection from
// remote (the TCP peer) and client (its client address) refused for
// reason.
func (s *Server) connRefused(remote, client, reason string) {
	s.m.connRefused(reason)
	if s.refusals.allow() {
		s.log.Warn("connection refused", "remote", remote, "client", client, "reason", reason,
			"max_connections", s.cfg.maxConns, "max_connections_per_ip", s.cfg.maxConnsPerIP,
			"max_pending_connections", s.cfg.maxPending, "max_pending_per_address", s.cfg.maxPendingAddr)
	}
}
