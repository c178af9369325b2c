package sio_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
	"github.com/zishang520/socket.io/servers/socket/v3"
	"github.com/zishang520/socket.io/v3/pkg/types"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/sio"
)

// The refusal bodies of the 0.4.2 Python Server's version gate, as its
// json.dumps writes them (a2c_smcp/server/middleware.py: check_a2c_version,
// _mismatch_body, _build_rejection), for a Server of version 0.4.0.
const (
	pyMissing  = `{"code": 400, "message": "Missing a2c_version query parameter"}`
	pyMismatch = `{"code": 4008, "message": "Protocol version mismatch", "server_version": "0.4.0", "client_version": "%s", "min_supported": "0.4.0", "max_supported": "0.4.999"}`
)

// gate is an HTTP handler in front of a Socket.IO server that answers as
// the 0.4 references' version gates do, on every Engine.IO request: HTTP
// 400 with a JSON body for a missing or incompatible a2c_version (and
// X-A2C-Error-Code: 4008 for the latter). It records every request.
type gate struct {
	next   http.Handler
	minor  string // the MAJOR.MINOR accepted; "" accepts every request
	strict bool   // a request naming no version is refused
	close  bool   // a websocket is refused by closing it with 4900
	status int    // a request naming no version gets this status (an answer of neither kind)

	mu    sync.Mutex
	reqs  []*http.Request
	posts []string // "sid body" of every POST
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.reqs = append(g.reqs, r.Clone(context.Background()))
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		g.posts = append(g.posts, r.URL.Query().Get("sid")+" "+string(body))
	}
	g.mu.Unlock()
	v := r.URL.Query().Get(protocol.VersionParam)
	refuse := func(body string, mismatch bool) {
		if g.close && websocket.IsWebSocketUpgrade(r) {
			up := websocket.Upgrader{}
			conn, err := up.Upgrade(w, r, nil)
			if err != nil {
				return
			}
			_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(protocol.CloseVersionRejected, ""), time.Now().Add(time.Second))
			_ = conn.Close()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if mismatch {
			w.Header().Set(protocol.ErrorCodeHeader, "4008")
		}
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(body))
	}
	switch {
	case v == "" && g.status != 0:
		http.Error(w, "no", g.status)
		return
	case v == "" && g.strict:
		refuse(pyMissing, false)
		return
	case v != "" && g.minor != "" && !strings.HasPrefix(v, g.minor+"."):
		refuse(strings.Replace(pyMismatch, "%s", v, 1), true)
		return
	}
	g.next.ServeHTTP(w, r)
}

// queries returns the a2c_version of every request the gate saw, "-"
// for none.
func (g *gate) versions() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, r := range g.reqs {
		v := r.URL.Query().Get(protocol.VersionParam)
		if !r.URL.Query().Has(protocol.VersionParam) {
			v = "-"
		}
		out = append(out, v)
	}
	return out
}

// gated serves a Socket.IO server whose /smcp namespace admits every
// connection and records its auth payload, behind g. confirm makes the
// engine name the version the client asked for in X-A2C-Version, as an
// smcp-go Server confirms it.
func gated(t *testing.T, g *gate, confirm bool) (nsURL string, auths chan map[string]any) {
	t.Helper()
	io := socket.NewServer(nil, nil)
	auths = make(chan map[string]any, 16)
	io.Of("/smcp", nil).Use(func(s *socket.Socket, next func(*socket.ExtendedError)) {
		auths <- s.Handshake().Auth
		next(nil)
	})
	g.next = io.ServeHandler(nil) // creates the engine
	if confirm {
		confirmVersion := func(q url.Values) string {
			if v := q.Get(protocol.VersionParam); v != "" {
				return v
			}
			return "0.2.0"
		}
		eng := io.Engine()
		_ = eng.On("initial_headers", func(args ...any) {
			h, _ := args[0].(*types.ParameterBag)
			ctx, _ := args[1].(*types.HttpContext)
			if h != nil && ctx != nil {
				h.Set(protocol.VersionHeader, confirmVersion(ctx.Request().URL.Query()))
			}
		})
		eng.Use(func(ctx *types.HttpContext, next func(error)) {
			if r := ctx.Request(); r != nil && websocket.IsWebSocketUpgrade(r) {
				ctx.ResponseHeaders().Set(protocol.VersionHeader, confirmVersion(r.URL.Query()))
			}
			next(nil)
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/socket.io/", g)
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		// The clients closed first (their cleanups run before this one):
		// wait for their sessions to end, so that no poll is aborted
		// under the Socket.IO server library (whose polling transport
		// races with an aborted request, sio/third_party/PATCHES.md 13).
		// A session a client left without a word (a slow machine can
		// lose its close) ends when the heartbeat gives up on it, 45 s at
		// the library's defaults: the bound is above that.
		eng := io.Engine()
		require.Eventually(t, func() bool { return eng.ClientsCount() == 0 }, sessionsEnd, 5*time.Millisecond)
		io.Close(nil)
		hs.Close()
	})
	return hs.URL + "/smcp", auths
}

// sessionsEnd bounds the wait for a test server's sessions to end after
// its clients closed: above the library's default heartbeat (25 s + 20 s).
const sessionsEnd = 2 * time.Minute

func connect(t *testing.T, nsURL string, opts ...sio.Option) (*sio.Conn, error) {
	t.Helper()
	c, err := sio.New(nsURL, sio.Hooks{}, append([]sio.Option{quiet}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return c, c.Connect(ctx)
}

// TestNegotiationNamesNewest: by default a Conn names the newest
// generation in every Engine.IO request, sends the key as auth.token,
// auth.api_key and the header, and, unconfirmed, speaks what it asked for.
func TestNegotiationNamesNewest(t *testing.T) {
	for _, polling := range []bool{false, true} {
		t.Run(map[bool]string{false: "websocket", true: "polling"}[polling], func(t *testing.T) {
			g := &gate{minor: "0.4", strict: true}
			nsURL, auths := gated(t, g, false)
			opts := []sio.Option{sio.WithAPIKey("k")}
			if polling {
				opts = append(opts, sio.WithPolling())
			}
			c, err := connect(t, nsURL+"?keep=1", opts...)
			require.NoError(t, err)
			require.Equal(t, map[string]any{"token": "k", "api_key": "k"}, <-auths)
			require.Equal(t, protocol.NewestGeneration(), c.Generation())
			require.False(t, c.Confirmed(), "a reference Server confirms nothing")
			vs := g.versions()
			require.NotEmpty(t, vs)
			// The one request naming no version is the probe for an
			// old Server (TestOldServerProbe), which this gate refused.
			for _, v := range without(vs, "-", 1) {
				require.Equal(t, "0.4.0", v, "every request names the version: %v", vs)
			}
			g.mu.Lock()
			for _, r := range g.reqs {
				require.Equal(t, "k", r.Header.Get("x-api-key"))
				require.Equal(t, "1", r.URL.Query().Get("keep"), "the caller's query is kept")
			}
			g.mu.Unlock()
		})
	}
}

// TestNegotiationConfirmed: a Server that names the generation in
// X-A2C-Version confirms it, on the websocket upgrade as on the polling
// open; a pinned 0.2.0 names no version and is confirmed as 0.2.0.
func TestNegotiationConfirmed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []sio.Option
		want    protocol.Generation
		version string
	}{
		{"websocket", nil, protocol.Gen04, "0.4.0"},
		{"polling", []sio.Option{sio.WithPolling()}, protocol.Gen04, "0.4.0"},
		{"pinned 0.3", []sio.Option{sio.WithGenerations(protocol.Gen03)}, protocol.Gen03, "0.3.0"},
		{"pinned 0.2", []sio.Option{sio.WithGenerations(protocol.Gen02)}, protocol.Gen02, "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &gate{}
			nsURL, _ := gated(t, g, true)
			c, err := connect(t, nsURL, tc.opts...)
			require.NoError(t, err)
			require.True(t, c.Confirmed())
			require.Equal(t, tc.want, c.Generation())
			for _, v := range g.versions() {
				require.Equal(t, tc.version, v)
			}
		})
	}
}

// refusal returns the *protocol.Error a refused Connect carries.
func refusal(t *testing.T, err error) (*sio.ConnectError, *protocol.Error) {
	t.Helper()
	var ce *sio.ConnectError
	require.ErrorAs(t, err, &ce)
	require.True(t, ce.Refused, "%v", err)
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, int(pe.Code), ce.Code)
	require.False(t, errors.Is(err, sio.ErrUnreachable))
	require.NotContains(t, err.Error(), "bad handshake")
	return ce, pe
}

// TestNegotiationRefusals: every refusal of a 0.4 reference's gate is a
// coded refusal naming what the Server said — on the websocket upgrade as
// on the polling open — and ends Connect without waiting for its context.
func TestNegotiationRefusals(t *testing.T) {
	for _, polling := range []bool{false, true} {
		mode := map[bool]string{false: "websocket", true: "polling"}[polling]
		with := func(opts ...sio.Option) []sio.Option {
			if polling {
				opts = append(opts, sio.WithPolling())
			}
			return opts
		}
		t.Run(mode+"/missing", func(t *testing.T) {
			g := &gate{minor: "0.4", strict: true}
			nsURL, _ := gated(t, g, false)
			_, err := connect(t, nsURL, with(sio.WithGenerations(protocol.Gen02))...)
			_, pe := refusal(t, err)
			require.Equal(t, protocol.CodeBadRequest, pe.Code)
			require.Equal(t, "Missing a2c_version query parameter", pe.Message)
			require.Equal(t, []string{"-"}, g.versions(), "a refusal is not retried")
		})
		t.Run(mode+"/mismatch", func(t *testing.T) {
			g := &gate{minor: "0.4", strict: true}
			nsURL, _ := gated(t, g, false)
			_, err := connect(t, nsURL, with(sio.WithGenerations(protocol.Gen03))...)
			_, pe := refusal(t, err)
			require.Equal(t, protocol.CodeProtocolVersionMismatch, pe.Code)
			lo, hi, ok := pe.SupportedRange()
			require.True(t, ok, "%#v", pe)
			require.Equal(t, "0.4.0", lo.String())
			require.Equal(t, "0.4.999", hi.String())
			require.Equal(t, "0.3.0", pe.Fields["client_version"])
			require.Equal(t, []string{"0.3.0"}, g.versions(), "a Conn that speaks nothing in range does not retry")
		})
		t.Run(mode+"/retry", func(t *testing.T) {
			g := &gate{minor: "0.4", strict: true}
			nsURL, _ := gated(t, g, false)
			c, err := connect(t, nsURL, with(sio.WithGenerations(protocol.Gen03, protocol.Gen02, protocol.Gen04))...)
			require.NoError(t, err)
			require.Equal(t, protocol.Gen04, c.Generation())
			vs := g.versions()
			require.Equal(t, "0.3.0", vs[0])
			for _, v := range without(vs[1:], "-", 1) { // the probe, refused
				require.Equal(t, "0.4.0", v)
			}
		})
		t.Run(mode+"/retry after missing", func(t *testing.T) {
			g := &gate{minor: "0.4", strict: true}
			nsURL, _ := gated(t, g, false)
			c, err := connect(t, nsURL, with(sio.WithGenerations(protocol.Gen02, protocol.Gen04))...)
			require.NoError(t, err)
			require.Equal(t, protocol.Gen04, c.Generation())
			require.Equal(t, "-", g.versions()[0])
		})
		t.Run(mode+"/retried once", func(t *testing.T) {
			// A Server that refuses the retried version too (its range
			// is not what it accepts) is not asked a third time.
			g := &gate{minor: "0.9", strict: true}
			nsURL, _ := gated(t, g, false)
			_, err := connect(t, nsURL, with(sio.WithGenerations(protocol.Gen03, protocol.Gen04))...)
			_, pe := refusal(t, err)
			require.Equal(t, protocol.CodeProtocolVersionMismatch, pe.Code)
			require.Equal(t, "0.4.0", pe.Fields["client_version"])
			require.Equal(t, []string{"0.3.0", "0.4.0"}, g.versions())
		})
	}
	t.Run("websocket/4900", func(t *testing.T) {
		g := &gate{minor: "0.4", strict: true, close: true}
		nsURL, _ := gated(t, g, false)
		_, err := connect(t, nsURL, sio.WithGenerations(protocol.Gen03))
		_, pe := refusal(t, err)
		require.Equal(t, protocol.CodeProtocolVersionMismatch, pe.Code)
		require.Contains(t, pe.Message, "4900")
	})
}

// without returns vs without n occurrences of v, failing the test when
// there are not exactly n.
func without(vs []string, v string, n int) []string {
	var out []string
	seen := 0
	for _, x := range vs {
		if x == v {
			seen++
			continue
		}
		out = append(out, x)
	}
	if seen != n {
		panic("want " + strings.Repeat(v+" ", n) + "in " + strings.Join(vs, ","))
	}
	return out
}

// TestNegotiationOldServer: a Server that ignores a2c_version (0.2.0)
// accepts the newest generation's handshake; unconfirmed, the Conn finds
// out that the Server ignores versions and speaks 0.2.0.
func TestNegotiationOldServer(t *testing.T) {
	url := startServer(t)
	c, err := connect(t, url, sio.WithAPIKey("k"))
	require.NoError(t, err)
	require.False(t, c.Confirmed())
	require.Equal(t, protocol.Gen02, c.Generation())
}

// probes returns the GET requests g saw that name no a2c_version.
func (g *gate) probes() []*http.Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*http.Request
	for _, r := range g.reqs {
		if r.Method == http.MethodGet && !r.URL.Query().Has(protocol.VersionParam) {
			out = append(out, r)
		}
	}
	return out
}

// TestOldServerProbe: a handshake accepted without confirmation, by a Conn
// that speaks 0.2.0 too, is followed by one plain Engine.IO open naming no
// version, before Connect returns and before the Connected hook: a Server
// that opens a session ignores versions (the session speaks 0.2.0, and the
// probe's session is closed at once); the 0.4 gate's 400, or any other
// answer, keeps the generation named. No probe when the Server confirmed or
// the Conn speaks no 0.2.0.
func TestOldServerProbe(t *testing.T) {
	for _, tc := range []struct {
		name    string
		g       *gate
		confirm bool
		opts    []sio.Option
		want    protocol.Generation
		probes  int
	}{
		{"ignores versions", &gate{}, false, nil, protocol.Gen02, 1},
		{"ignores versions, polling", &gate{}, false, []sio.Option{sio.WithPolling()}, protocol.Gen02, 1},
		{"gates versions", &gate{minor: "0.4", strict: true}, false, nil, protocol.Gen04, 1},
		{"gates versions, 0.3 named", &gate{strict: true}, false, []sio.Option{sio.WithGenerations(protocol.Gen03, protocol.Gen02)}, protocol.Gen03, 1},
		{"answers otherwise", &gate{status: http.StatusServiceUnavailable}, false, nil, protocol.Gen04, 1},
		{"confirms", &gate{}, true, nil, protocol.Gen04, 0},
		{"speaks no 0.2", &gate{}, false, []sio.Option{sio.WithGenerations(protocol.Gen04, protocol.Gen03)}, protocol.Gen04, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nsURL, _ := gated(t, tc.g, tc.confirm)
			var c *sio.Conn
			atHook := make(chan protocol.Generation, 4)
			c, err := sio.New(nsURL+"?keep=1", sio.Hooks{Connected: func(int) { atHook <- c.Generation() }},
				append([]sio.Option{quiet, sio.WithAPIKey("k"), sio.WithHeader("X-Extra", "e")}, tc.opts...)...)
			require.NoError(t, err)
			t.Cleanup(func() { c.Close(time.Second) })
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			require.NoError(t, c.Connect(ctx))
			require.Equal(t, tc.want, c.Generation())
			require.Equal(t, tc.want, <-atHook, "the Connected hook sees the final generation")
			require.Equal(t, tc.confirm, c.Confirmed())

			probes := tc.g.probes()
			require.Len(t, probes, tc.probes)
			if tc.probes == 0 {
				require.Empty(t, tc.g.posts)
				return
			}
			p := probes[0]
			require.Equal(t, http.MethodGet, p.Method)
			require.Equal(t, "/socket.io/", p.URL.Path)
			q := p.URL.Query()
			require.Equal(t, "4", q.Get("EIO"))
			require.Equal(t, "polling", q.Get("transport"))
			require.False(t, q.Has("sid"))
			require.Equal(t, "1", q.Get("keep"), "the caller's query is kept")
			require.Equal(t, "k", p.Header.Get("x-api-key"))
			require.Equal(t, "e", p.Header.Get("X-Extra"))

			tc.g.mu.Lock()
			var closes []string
			for _, post := range tc.g.posts {
				if strings.HasSuffix(post, " 1") {
					closes = append(closes, post)
				}
			}
			tc.g.mu.Unlock()
			if tc.want != protocol.Gen02 {
				require.Empty(t, closes, "no session was opened by the probe")
				return
			}
			require.Len(t, closes, 1, "the probe's session is closed: %v", tc.g.posts)
			sid := strings.TrimSuffix(closes[0], " 1")
			require.NotEmpty(t, sid)
			require.NotEqual(t, c.Socket().Io().Engine().Id(), sid, "the probe's session, not the connection's")
		})
	}
}

// TestAcceptedThenDropped: a Server that accepts the namespace CONNECT and
// disconnects the socket before sending anything (the Rust 0.4.1 Server's
// answer to a wrong key) leaves a refusal as the Conn's last error, and the
// Conn does not reconnect.
func TestAcceptedThenDropped(t *testing.T) {
	io := socket.NewServer(nil, nil)
	connections := make(chan struct{}, 8)
	_ = io.Of("/smcp", nil).On("connection", func(args ...any) {
		connections <- struct{}{}
		args[0].(*socket.Socket).Disconnect(false)
	})
	url := serve(t, io)
	lost := make(chan string, 4)
	c, err := sio.New(url, sio.Hooks{Disconnected: func(r string) { lost <- r }}, quiet)
	require.NoError(t, err)
	defer c.Close(0)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, c.Connect(ctx))
	select {
	case <-lost:
	case <-ctx.Done():
		t.Fatal("the drop was not seen")
	}
	// The Socket.IO server library may close the connection while its
	// DISCONNECT is read: the refusal is read from the packet.
	require.Eventually(t, func() bool { return c.LastError() != nil }, wait, 5*time.Millisecond)
	ce, _ := refusal(t, c.LastError())
	require.Equal(t, 401, ce.Code)
	require.False(t, c.Connected())
	require.Len(t, connections, 1)
}

// TestOldServerProbeOncePerConn: the probe's answer holds for the Conn's
// reconnections: a Conn that reconnects to a Server that ignores versions
// speaks 0.2.0 again, at the Connected hook too, without asking again.
func TestOldServerProbeOncePerConn(t *testing.T) {
	io := socket.NewServer(nil, nil)
	_ = io.Of("/smcp", nil).On("connection", func(args ...any) {
		s := args[0].(*socket.Socket)
		_ = s.On("send", func(args ...any) {
			n, _ := args[0].(float64)
			_ = s.Emit("blob", strings.Repeat("x", int(n)))
		})
	})
	g := &gate{next: io.ServeHandler(nil)}
	mux := http.NewServeMux()
	mux.Handle("/socket.io/", g)
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		eng := io.Engine()
		require.Eventually(t, func() bool { return eng.ClientsCount() == 0 }, sessionsEnd, 5*time.Millisecond)
		io.Close(nil)
		hs.Close()
	})

	var c *sio.Conn
	connected := make(chan protocol.Generation, 4)
	c, err := sio.New(hs.URL+"/smcp", sio.Hooks{Connected: func(int) { connected <- c.Generation() }},
		quiet, sio.WithMaxMessageBytes(64<<10))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, c.Connect(ctx))
	require.Equal(t, protocol.Gen02, <-connected)

	// A message over the bound closes the transport: the Conn reconnects.
	require.NoError(t, c.Socket().Emit("send", 200<<10))
	select {
	case gen := <-connected:
		require.Equal(t, protocol.Gen02, gen, "the reconnection speaks 0.2.0 at its hook")
	case <-ctx.Done():
		t.Fatal("no reconnection")
	}
	require.Equal(t, protocol.Gen02, c.Generation())
	require.Len(t, g.probes(), 1, "asked once")
}
