// Package siotest is a minimal SMCP Server for the Computer's tests: a real
// Socket.IO server on loopback (namespace /smcp) that accepts office joins,
// records the events a Computer emits, and lets a test send client:*
// requests to the joined Computer and read its ack values. It can be
// stopped and started again on the same address.
package siotest

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/sio/holdearly"
	"github.com/gorilla/websocket"
	"github.com/zishang520/socket.io/servers/socket/v3"
	"github.com/zishang520/socket.io/v3/pkg/types"
)

// Server is the fake SMCP Server.
type Server struct {
	t      testing.TB
	addr   string
	apiKey string
	// RefuseJoin makes joins answer (false, "name taken").
	RefuseJoin atomic.Bool
	// Confirm makes the server confirm the version a websocket upgrade
	// names in X-A2C-Version ("0.2.0" for none), as an smcp-go Server does.
	Confirm atomic.Bool
	// Strict makes the server refuse an Engine.IO request that names no
	// a2c_version with HTTP 400 and the 0.4.2 Python Server's JSON body
	// (a2c_smcp/server/middleware.py), as the 0.4 references' version
	// gates do; otherwise it ignores versions, as a 0.2.0 Server does.
	Strict atomic.Bool
	// DropOnConnect makes the server disconnect every namespace socket as
	// soon as it connects, as the Rust 0.4.1 Server answers a wrong key.
	DropOnConnect atomic.Bool

	mu     sync.Mutex
	io     *socket.Server
	cancel context.CancelFunc // ends the early-packet holds of the running server
	srv    *http.Server
	sock   *socket.Socket
	joins  []map[string]any
	auths  []string
	vers   []string
	events []string
	// hijacked are the websockets taken over from the HTTP server; Stop
	// closes them.
	hijacked []net.Conn
	// Joined receives one value per successful join.
	Joined chan struct{}
	// Events receives every server:* update event name.
	Events chan string
}

// Start runs a server on addr ("127.0.0.1:0" for any port); apiKey, when
// set, is required as header x-api-key.
func Start(t testing.TB, addr, apiKey string) *Server {
	f := &Server{t: t, addr: addr, apiKey: apiKey, Joined: make(chan struct{}, 100), Events: make(chan string, 1000)}
	f.Restart()
	t.Cleanup(f.Stop)
	return f
}

// Restart starts the server again on the same address.
func (f *Server) Restart() {
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		f.t.Fatal(err)
	}
	f.addr = ln.Addr().String()
	io := socket.NewServer(nil, socket.DefaultServerOptions())
	mux := http.NewServeMux()
	engineHandler := io.ServeHandler(nil)
	mux.Handle("/socket.io/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.Strict.Load() && !r.URL.Query().Has(protocol.VersionParam) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"code": 400, "message": "Missing a2c_version query parameter"}`))
			return
		}
		engineHandler.ServeHTTP(w, r)
	}))
	io.Engine().Use(func(ctx *types.HttpContext, next func(error)) {
		if r := ctx.Request(); r != nil {
			v := r.URL.Query().Get(protocol.VersionParam)
			if !r.URL.Query().Has(protocol.VersionParam) {
				v = "-"
			}
			f.mu.Lock()
			f.vers = append(f.vers, v)
			f.mu.Unlock()
			if f.Confirm.Load() && websocket.IsWebSocketUpgrade(r) {
				if v == "-" {
					v = "0.2.0"
				}
				ctx.ResponseHeaders().Set(protocol.VersionHeader, v)
			}
		}
		next(nil)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ConnState: func(c net.Conn, st http.ConnState) {
		if st == http.StateHijacked {
			f.mu.Lock()
			f.hijacked = append(f.hijacked, c)
			f.mu.Unlock()
		}
	}}
	// Hold a Computer's first /smcp events (its join) until the library has
	// registered its namespace socket, as the Server does (holdearly).
	ctx, cancel := context.WithCancel(context.Background())
	holdearly.Attach(ctx, io, protocol.Namespace, nil)
	nsp := io.Of(protocol.Namespace, nil)
	nsp.Use(func(s *socket.Socket, next func(*socket.ExtendedError)) {
		hs := s.Handshake()
		key := hs.Headers.Header().Get("x-api-key")
		auth, _ := hs.Auth["api_key"].(string)
		f.mu.Lock()
		f.auths = append(f.auths, key+"|"+auth)
		f.mu.Unlock()
		if f.apiKey != "" && key != f.apiKey {
			next(socket.NewExtendedError("unauthorized", map[string]any{"code": 401}))
			return
		}
		next(nil)
	})
	_ = nsp.On("connection", func(args ...any) {
		s := args[0].(*socket.Socket)
		if f.DropOnConnect.Load() {
			s.Disconnect(false)
			return
		}
		_ = s.On(protocol.EventJoinOffice, func(args ...any) {
			req, _ := args[0].(map[string]any)
			ack, _ := args[len(args)-1].(socket.Ack)
			f.mu.Lock()
			f.joins = append(f.joins, req)
			f.sock = s
			f.mu.Unlock()
			if ack == nil {
				return
			}
			if f.RefuseJoin.Load() {
				ack([]any{false, "name taken"}, nil)
				return
			}
			ack([]any{true, nil}, nil)
			f.Joined <- struct{}{}
		})
		// One catch-all listener for the notices, as the Server has: it
		// runs with the packet, where a listener per event name runs one
		// task later, which the library drops when the connection closed
		// meanwhile (a Computer's last notice before Close).
		s.OnAny(func(args ...any) {
			if len(args) == 0 {
				return
			}
			ev, _ := args[0].(string)
			switch ev {
			case protocol.EventUpdateConfig, protocol.EventUpdateToolList, protocol.EventUpdateDesktop, protocol.EventUpdateFinder:
				f.mu.Lock()
				f.events = append(f.events, ev)
				f.mu.Unlock()
				f.Events <- ev
			}
		})
	})
	f.mu.Lock()
	f.io, f.srv, f.cancel = io, srv, cancel
	f.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// Stop closes the server (clients see a transport close and reconnect).
func (f *Server) Stop() {
	f.mu.Lock()
	io, srv, cancel := f.io, f.srv, f.cancel
	f.mu.Unlock()
	cancel()
	io.Close(nil)
	_ = srv.Close()
	// The HTTP server does not track hijacked connections, and servers/
	// socket v3.0.2 leaves about 1 websocket in 50 open after Close (its
	// client would hear nothing until its ping timeout): close them all, as
	// a crashed server's operating system would.
	f.mu.Lock()
	conns := f.hijacked
	f.hijacked = nil
	f.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// URL is the server's base URL.
func (f *Server) URL() string { return "http://" + f.addr }

// Joins are the join_office payloads received.
func (f *Server) Joins() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.joins...)
}

// Versions returns the a2c_version of every Engine.IO request, "-" for a
// request that named none.
func (f *Server) Versions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.vers...)
}

// Auths are "header|auth" API keys of every handshake.
func (f *Server) Auths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.auths...)
}

// Socket is the last joined socket.
func (f *Server) Socket() *socket.Socket {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sock
}

// Request sends event to the joined Computer and returns its ack values.
// When the Computer's connection drops before it answers (the Go Socket.IO
// client sometimes sends its namespace CONNECT twice, and the library
// server closes such a connection), the request is sent again on the
// connection the Computer rejoins with, as a Server would fail the first
// and the Agent repeat it.
func (f *Server) Request(event string, payload any) []any {
	f.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := f.Socket()
		if s == nil {
			f.t.Fatal("no computer joined")
		}
		if vals, ok := f.requestOn(s, event, payload, deadline); ok {
			return vals
		}
	}
}

// requestOn sends one request on s and waits for its ack; ok is false when
// s dropped and the Computer has rejoined on another connection.
func (f *Server) requestOn(s *socket.Socket, event string, payload any, deadline time.Time) (vals []any, ok bool) {
	f.t.Helper()
	ch := make(chan []any, 1)
	if err := s.Emit(event, payload, socket.Ack(func(vals []any, _ error) { ch <- vals })); err != nil {
		f.t.Fatal(err)
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case v := <-ch:
			return v, true
		case <-tick.C:
			if time.Now().After(deadline) {
				f.t.Fatalf("%s: no ack", event)
			}
			if next := f.Socket(); !s.Connected() && next != nil && next != s && next.Connected() {
				return nil, false
			}
		}
	}
}

// Emit sends an event without ack to the joined Computer.
func (f *Server) Emit(event string, payload any) {
	f.t.Helper()
	if err := f.Socket().Emit(event, payload); err != nil {
		f.t.Fatal(err)
	}
}
