package sio_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zishang520/socket.io/servers/socket/v3"

	"github.com/a2c-smcp/smcp-go/sio"
)

const wait = 15 * time.Second

var quiet = sio.WithLogger(slog.New(slog.DiscardHandler))

// startServer runs a Socket.IO server whose /smcp namespace admits the
// auth payload {"api_key": "k"} and refuses anything else with code 401.
func startServer(t *testing.T) string {
	t.Helper()
	io := socket.NewServer(nil, nil)
	io.Of("/smcp", nil).Use(func(s *socket.Socket, next func(*socket.ExtendedError)) {
		if s.Handshake().Auth["api_key"] == "k" {
			next(nil)
			return
		}
		next(socket.NewExtendedError("unauthorized", map[string]any{"code": 401}))
	})
	return serve(t, io)
}

// serve runs the Socket.IO server io on a loopback HTTP server until the
// test ends and returns the /smcp namespace URL.
func serve(t *testing.T, io *socket.Server) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/socket.io/", io.ServeHandler(nil))
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		io.Close(nil)
		hs.Close()
	})
	return hs.URL + "/smcp"
}

func TestConnectAndRefusal(t *testing.T) {
	url := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()

	connected := make(chan int, 4)
	c, err := sio.New(url, sio.Hooks{Connected: func(n int) { connected <- n }}, sio.WithAPIKey("k"), quiet)
	require.NoError(t, err)
	require.NoError(t, c.Connect(ctx))
	require.Equal(t, 1, <-connected)
	require.True(t, c.Connected())
	c.Close(time.Second)
	require.False(t, c.Connected())

	bad, err := sio.New(url, sio.Hooks{}, sio.WithAPIKey("wrong"), quiet)
	require.NoError(t, err)
	defer bad.Close(0)
	err = bad.Connect(ctx)
	var ce *sio.ConnectError
	require.ErrorAs(t, err, &ce)
	require.True(t, ce.Refused)
	require.Equal(t, 401, ce.Code)
}

// TestConnectUnreachable: a port nobody listens on fails Connect at once
// with the system's reason, not after a timeout.
func TestConnectUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	c, err := sio.New("http://"+addr+"/smcp", sio.Hooks{}, quiet)
	require.NoError(t, err)
	defer c.Close(0)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	err = c.Connect(ctx)
	var ce *sio.ConnectError
	require.ErrorAs(t, err, &ce)
	require.False(t, ce.Refused)
	require.False(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	require.NoError(t, ctx.Err(), "Connect waited for the deadline")
	require.ErrorIs(t, err, sio.ErrUnreachable)
	var op *net.OpError
	require.ErrorAs(t, err, &op, "the dial's error is wrapped")
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
}

// TestConnectRefusalIsNotUnreachable: a refusal by the Server's
// authentication is the Server's answer, not a failure to reach it.
func TestConnectRefusalIsNotUnreachable(t *testing.T) {
	url := startServer(t)
	bad, err := sio.New(url, sio.Hooks{}, sio.WithAPIKey("wrong"), quiet)
	require.NoError(t, err)
	defer bad.Close(0)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	err = bad.Connect(ctx)
	require.Error(t, err)
	require.False(t, errors.Is(err, sio.ErrUnreachable), "%v", err)
}

// TestConnectNoAnswer: a server that accepts TCP and never answers fails
// Connect when its context ends, wrapping the context's error and naming
// the last attempt's failure (which matches ErrUnreachable).
func TestConnectNoAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
		}
	}()
	// The context ends once an attempt has failed (an event, not a time).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := sio.New("http://"+ln.Addr().String()+"/smcp", sio.Hooks{AttemptFailed: func(error) { cancel() }},
		sio.WithAttemptTimeout(300*time.Millisecond), quiet)
	require.NoError(t, err)
	defer c.Close(0)
	err = c.Connect(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "last attempt")
	require.ErrorIs(t, err, sio.ErrUnreachable)
}

// TestConnChurnReturnsMemory connects and closes a Conn many times and
// checks that goroutines and the live heap come back to their baseline
// after GC (the upstream client, on socket.io/v3 v3.0.2, left each
// connection's queues and their goroutines behind).
func TestConnChurnReturnsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("churn")
	}
	url := startServer(t)
	cycle := func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		c, err := sio.New(url, sio.Hooks{}, sio.WithAPIKey("k"), quiet)
		require.NoError(t, err)
		require.NoError(t, c.Connect(ctx))
		c.Close(time.Second)
	}
	for i := 0; i < 20; i++ {
		cycle()
	}
	heap0, gr0 := settled()
	const n = 200
	for i := 0; i < n; i++ {
		cycle()
	}
	var heap1 uint64
	var gr1 int
	deadline := time.Now().Add(wait)
	for {
		heap1, gr1 = settled()
		if (gr1 <= gr0+10 && heap1 <= heap0+4<<20) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%d Conn cycles: live heap %d -> %d KB, goroutines %d -> %d", n, heap0>>10, heap1>>10, gr0, gr1)
	if gr1 > gr0+10 {
		var b strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
		t.Log(b.String())
	}
	require.LessOrEqual(t, gr1, gr0+10, "goroutines left behind")
	require.LessOrEqual(t, heap1, heap0+4<<20, "live heap not returned")
}

func settled() (uint64, int) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, runtime.NumGoroutine()
}

// syncBuffer is a log sink shared by the Conn's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestOutageLogsThinOut: while the Server stays down, the failed attempts
// are warnings only at the 1st, 2nd, 4th, 8th... one; the rest are debug
// lines.
func TestOutageLogsThinOut(t *testing.T) {
	io := socket.NewServer(nil, nil)
	io.Of("/smcp", nil)
	mux := http.NewServeMux()
	mux.Handle("/socket.io/", io.ServeHandler(nil))
	hs := httptest.NewServer(mux)
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := sio.New(hs.URL+"/smcp", sio.Hooks{}, sio.WithLogger(log), sio.WithBackoff(5*time.Millisecond, 10*time.Millisecond))
	require.NoError(t, err)
	defer c.Close(0)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, c.Connect(ctx))
	hs.CloseClientConnections()
	hs.Close()
	io.Close(nil)
	require.Eventually(t, func() bool { return strings.Count(logs.String(), "connection attempt failed") >= 10 }, wait, 10*time.Millisecond)
	var warned []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "connection attempt failed") && strings.Contains(line, "level=WARN") {
			_, n, _ := strings.Cut(line, "attempts=")
			warned = append(warned, n)
		}
	}
	require.Equal(t, []string{"1", "2", "4", "8"}, warned[:4], "warnings at powers of two only")
}

// TestMaxMessageBytes: a websocket message from the server over
// WithMaxMessageBytes closes the transport (the Conn reconnects) instead of
// being read into memory; one under it arrives.
func TestMaxMessageBytes(t *testing.T) {
	io := socket.NewServer(nil, nil)
	_ = io.Of("/smcp", nil).On("connection", func(args ...any) {
		s := args[0].(*socket.Socket)
		_ = s.On("send", func(args ...any) {
			n, _ := args[0].(float64)
			_ = s.Emit("blob", strings.Repeat("x", int(n)))
		})
	})
	url := serve(t, io)

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	lost := make(chan string, 4)
	got := make(chan int, 4)
	c, err := sio.New(url, sio.Hooks{Disconnected: func(r string) { lost <- r }}, sio.WithMaxMessageBytes(64<<10), quiet)
	require.NoError(t, err)
	defer c.Close(0)
	_ = c.Socket().On("blob", func(args ...any) {
		s, _ := args[0].(string)
		got <- len(s)
	})
	require.NoError(t, c.Connect(ctx))

	require.NoError(t, c.Socket().Emit("send", 1000))
	select {
	case n := <-got:
		require.Equal(t, 1000, n)
	case <-time.After(wait):
		t.Fatal("a message under the bound did not arrive")
	}
	require.NoError(t, c.Socket().Emit("send", 200<<10))
	select {
	case reason := <-lost:
		require.Equal(t, "transport error", reason)
	case n := <-got:
		t.Fatalf("a message of %d bytes was read", n)
	case <-time.After(wait):
		t.Fatal("the connection stayed up")
	}
}
