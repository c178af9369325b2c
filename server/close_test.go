package server_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/a2c-smcp/smcp-go/sio/third_party/types"
	"github.com/stretchr/testify/require"
	"github.com/zishang520/socket.io/servers/socket/v3"
)

// TestCloseNotifiesOffices: Close makes every session leave its office: the
// Agent receives notify:leave_office for each Computer (Computers leave
// first, by name) before its transport closes, then the endpoint answers
// 503. The observers are raw websocket clients: the Go client v3.0.1 can drop
// events that arrive just before a transport close.
func TestCloseNotifiesOffices(t *testing.T) {
	ts := startServer(t)
	agent := dialRaw(t, ts.url)
	agent.send(`42/smcp,1["server:join_office",{"role":"agent","name":"a1","office_id":"o1"}]`)
	require.Equal(t, `43/smcp,1[true,null]`, agent.read())
	dial(t, ts.url).mustJoin(computerRole, "c1", "o1")
	c2 := dialRaw(t, ts.url)
	c2.send(`42/smcp,1["server:join_office",{"role":"computer","name":"c2","office_id":"o1"}]`)
	require.Equal(t, `43/smcp,1[true,null]`, c2.read())
	require.Equal(t, `42/smcp,["notify:enter_office",{"computer":"c1","office_id":"o1"}]`, agent.read())
	require.Equal(t, `42/smcp,["notify:enter_office",{"computer":"c2","office_id":"o1"}]`, agent.read())

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, ts.srv.Close(ctx))
	require.Equal(t, []string{
		`42/smcp,["notify:leave_office",{"computer":"c1","office_id":"o1"}]`,
		`42/smcp,["notify:leave_office",{"computer":"c2","office_id":"o1"}]`,
	}, agent.rest(), "the agent hears both leaves, then the transport closes")
	require.Equal(t, []string{`42/smcp,["notify:leave_office",{"computer":"c1","office_id":"o1"}]`}, c2.rest())

	resp, err := http.Get(ts.url + "/socket.io/?EIO=4&transport=polling")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.NoError(t, ts.srv.Close(ctx), "a second Close is a no-op")
}

// TestCloseDrainsInFlight: a request in flight when Close starts still gets
// its answer before the transport closes; new connections are refused
// meanwhile. The Agent is a raw websocket client (see
// TestCloseNotifiesOffices).
func TestCloseDrainsInFlight(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.url).mustJoin(computerRole, "c1", "o1")
	held := make(chan socket.Ack, 1)
	_ = c.sock.On(types.EventName(protocol.EventGetTools), func(args ...any) { held <- args[len(args)-1].(socket.Ack) })
	agent := dialRaw(t, ts.url)
	agent.send(`42/smcp,1["server:join_office",{"role":"agent","name":"a1","office_id":"o1"}]`)
	require.Equal(t, `43/smcp,1[true,null]`, agent.read())
	agent.send(`42/smcp,2["client:get_tools",{"agent":"a1","computer":"c1","req_id":"drain"}]`)
	ack := <-held

	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		closed <- ts.srv.Close(ctx)
	}()
	require.Eventually(t, func() bool {
		_, err := connect(t, ts.url, dialOpts{})
		var ee *types.ExtendedError
		if !errors.As(err, &ee) {
			return false
		}
		data, _ := ee.Data.(map[string]any)
		return data["code"] == float64(protocol.CodeInternal) && ee.Message == "server is shutting down"
	}, wait, 10*time.Millisecond, "new connections are refused while closing")

	ack([]any{map[string]any{"req_id": "drain", "tools": []any{}}}, nil)
	require.Equal(t, []string{
		`43/smcp,2[{"req_id":"drain","tools":[]}]`,
		`42/smcp,["notify:leave_office",{"computer":"c1","office_id":"o1"}]`,
	}, agent.rest())
	require.NoError(t, <-closed)
}

// TestCloseDeadline: when ctx ends first, requests still in flight get a 500
// and Close reports the deadline.
func TestCloseDeadline(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.url).mustJoin(computerRole, "c1", "o1")
	got := make(chan struct{}, 1)
	_ = c.sock.On(types.EventName(protocol.EventGetTools), func(...any) { got <- struct{}{} })
	agent := dialRaw(t, ts.url)
	agent.send(`42/smcp,1["server:join_office",{"role":"agent","name":"a1","office_id":"o1"}]`)
	require.Equal(t, `43/smcp,1[true,null]`, agent.read())
	agent.send(`42/smcp,2["client:get_tools",{"agent":"a1","computer":"c1","req_id":"stuck"}]`)
	<-got
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, ts.srv.Close(ctx), context.DeadlineExceeded)
	rest := agent.rest()
	require.NotEmpty(t, rest)
	require.Equal(t, `43/smcp,2[{"error":{"code":500,"message":"server is shutting down","details":{"req_id":"stuck"}}}]`, rest[0])
}

// TestCloseWithPollingClient: Close does not wait on a long-polling client,
// and that client's connection ends: at once as a rule, and otherwise when
// the HTTP server closes its connections. (engine v3.0.2 closes a polling
// transport's write queue before it queues the CLOSE packet, so a client
// that was between two polls when the Server closed is never answered: about
// 1 run in 10 to 20 under load. The Server cannot end that request without
// racing the engine; http.Server.Shutdown's deadline, then Close, end it, as
// smcp-server does.)
func TestCloseWithPollingClient(t *testing.T) {
	srv, err := server.New(server.WithAPIKeys(testKey), server.WithLogger(testLogger(t)))
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/socket.io/", srv.Handler())
	hs := httptest.NewServer(mux)
	defer func() {
		hs.CloseClientConnections()
		hs.Close()
	}()
	p, err := connect(t, hs.URL, dialOpts{polling: true})
	require.NoError(t, err)
	gone := make(chan struct{})
	p.sock.Once("disconnect", func(...any) { close(gone) })
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, srv.Close(ctx), "Close waited on the long poll")
	select {
	case <-gone:
		return
	case <-time.After(3 * time.Second):
		t.Log("a long poll raced the close; the HTTP server's connection close ends it")
	}
	hs.CloseClientConnections()
	select {
	case <-gone:
	case <-time.After(wait):
		t.Fatal("the polling client was not disconnected")
	}
}

// TestHandlerPanic: a panicking handler answers 500, is logged, and the
// connection and the office carry on.
func TestHandlerPanic(t *testing.T) {
	logs, logOpt := captureLogs(t)
	ts := startServer(t, logOpt, server.WithTestHook(func(event string) {
		if event == protocol.EventListRoom {
			panic(errors.New("boom"))
		}
	}))
	a, _ := office(t, ts, "o1", "a1", "c1")
	e := requireError(t, a.call(protocol.EventListRoom, map[string]any{"agent": "a1", "req_id": "p", "office_id": "o1"}), protocol.CodeInternal)
	require.Equal(t, "internal error while handling server:list_room", e.Message)
	logs.waitLine(t, "handler panicked", map[string]any{"event": protocol.EventListRoom, "panic": "boom"})
	a.mustJoin(agentRole, "a1", "o1")
}

// TestNoGoroutineLeak: a server that served an office and closed leaves no
// goroutine behind. The peers are raw websocket clients: the Go client
// library keeps goroutines of its own.
//
// It runs in a fresh process (the test binary re-executed for this test
// only), so that goroutines other tests' Go clients leave behind do not
// blur the count.
func TestNoGoroutineLeak(t *testing.T) {
	if os.Getenv("SMCP_LEAK_CHILD") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNoGoroutineLeak$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SMCP_LEAK_CHILD=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return
	}
	base := runtime.NumGoroutine()
	t.Run("serve", func(t *testing.T) {
		ts := startServer(t)
		c := dialRaw(t, ts.url)
		c.send(`42/smcp,1["server:join_office",{"role":"computer","name":"c1","office_id":"o1"}]`)
		require.Equal(t, `43/smcp,1[true,null]`, c.read())
		a := dialRaw(t, ts.url)
		a.send(`42/smcp,1["server:join_office",{"role":"agent","name":"a1","office_id":"o1"}]`)
		require.Equal(t, `43/smcp,1[true,null]`, a.read())
		require.Equal(t, `42/smcp,["notify:enter_office",{"agent":"a1","office_id":"o1"}]`, c.read())
		a.send(`42/smcp,2["client:get_tools",{"agent":"a1","computer":"c1","req_id":"r"}]`)
		require.Equal(t, `42/smcp,0["client:get_tools",{"agent":"a1","computer":"c1","req_id":"r"}]`, c.read())
		c.send(`43/smcp,0[{"req_id":"r","tools":[]}]`)
		require.Equal(t, `43/smcp,2[{"req_id":"r","tools":[]}]`, a.read())
		a.send(`42/smcp,3["client:get_tools",{"agent":"a1","computer":"c1","req_id":"never"}]`) // left in flight
		require.Equal(t, `42/smcp,1["client:get_tools",{"agent":"a1","computer":"c1","req_id":"never"}]`, c.read())
	})
	// Polled from this goroutine: require.Eventually would add goroutines of
	// its own to the count.
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
		t.Fatalf("goroutines: %d before, %d after", base, n)
	}
}

// TestNamespaceLeftTransportClosed: a client that leaves /smcp but keeps its
// transport open has it closed by the Server after a moment (SMCP uses no
// other namespace).
func TestNamespaceLeftTransportClosed(t *testing.T) {
	ts := startServer(t)

	held := dialRaw(t, ts.url)
	held.send("41" + protocol.Namespace + ",")
	_ = held.ws.SetReadDeadline(time.Now().Add(wait))
	for {
		if _, _, err := held.ws.ReadMessage(); err != nil {
			var ne net.Error
			require.False(t, errors.As(err, &ne) && ne.Timeout(), "the transport was not closed: %v", err)
			break
		}
	}
}
