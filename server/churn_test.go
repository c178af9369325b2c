package server_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/server"
)

// TestChurnReturnsMemory opens and closes thousands of raw websocket
// connections — refused for lack of a key, authenticated, and authenticated
// with a join and a leave — and checks that the live heap and the goroutine
// count come back to their baseline after GC. With socket.io/v3 v3.0.2 every
// connection left its queues (and their goroutines) behind for ever: ~11.5
// KB each, so the 3,000 cycles here would have kept ~35 MB and thousands of
// goroutines. Every session must also leave the Server's tables: a peer
// that disconnects as soon as it reads the CONNECT answer once left its
// session there for ever (~0.4 % of short sessions).
func TestChurnReturnsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("churn: thousands of connections")
	}
	reg := prometheus.NewRegistry()
	ts := startServer(t, server.WithLogger(slog.New(slog.DiscardHandler)), server.WithMetrics(reg))
	wsURL := "ws" + strings.TrimPrefix(ts.url, "http") + "/socket.io/?EIO=4&transport=websocket"

	const perKind = 1000
	kinds := []struct {
		name string
		key  string
		mode cycleMode
	}{
		{"unauthenticated", "", plainCycle},
		{"authenticated", testKey, plainCycle},
		{"joined and left", testKey, joinCycle},
		{"closed at once", testKey, abruptCycle},
	}
	run := func(n int) {
		for _, k := range kinds {
			churn(t, wsURL, n, k.key, k.mode, k.name)
		}
	}
	run(50) // warm up pools and lazily built state
	heap0, gr0 := settledHeap()
	run(perKind)
	// Goroutines of closed connections end asynchronously: bounded wait.
	var heap1 uint64
	var gr1, sessions int
	deadline := time.Now().Add(wait)
	for {
		heap1, gr1 = settledHeap()
		sessions = sessionsOpen(t, reg)
		if (gr1 <= gr0+churnGoroutineSlack && heap1 <= heap0+churnHeapSlack && sessions == 0) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%d cycles: live heap %d -> %d KB, goroutines %d -> %d, sessions left %d", len(kinds)*perKind, heap0>>10, heap1>>10, gr0, gr1, sessions)
	require.Zero(t, sessions, "sessions left in the Server's tables after their connections closed")
	require.LessOrEqual(t, gr1, gr0+churnGoroutineSlack, "goroutines left behind")
	require.LessOrEqual(t, heap1, heap0+churnHeapSlack, "live heap not returned")
}

// sessionsOpen sums the Server's smcp_server_connections gauge over roles.
func sessionsOpen(t *testing.T, reg *prometheus.Registry) int {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	n := 0
	for _, mf := range mfs {
		if mf.GetName() == "smcp_server_connections" {
			for _, m := range mf.GetMetric() {
				n += int(m.GetGauge().GetValue())
			}
		}
	}
	return n
}

// Slack for what a run may legitimately leave (timers not yet fired, pooled
// buffers): far below one leaked queue per connection.
const (
	churnGoroutineSlack = 20
	churnHeapSlack      = 4 << 20
)

// settledHeap returns the live heap after two GCs and the goroutine count.
func settledHeap() (uint64, int) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, runtime.NumGoroutine()
}

// cycleMode is what a churn cycle does once the Engine.IO connection is
// open.
type cycleMode int

const (
	// plainCycle: namespace CONNECT, its answer, DISCONNECT, close.
	plainCycle cycleMode = iota
	// joinCycle: as plainCycle, with a join and a leave of an office of
	// its own in between.
	joinCycle
	// abruptCycle: namespace CONNECT, then close without reading the
	// answer, racing the Server's admission of the socket.
	abruptCycle
)

// churn runs n connect/close cycles on 8 connections at a time.
func churn(t *testing.T, wsURL string, n int, key string, mode cycleMode, kind string) {
	t.Helper()
	const workers = 8
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += workers {
				if err := churnCycle(wsURL, key, mode, fmt.Sprintf("churn-%d", i)); err != nil {
					errs <- fmt.Errorf("%s cycle %d: %w", kind, i, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// churnCycle is one connection: Engine.IO open, namespace CONNECT (refused
// without a key), then as mode says.
func churnCycle(wsURL, key string, mode cycleMode, name string) error {
	ws, resp, err := websocket.DefaultDialer.Dial(wsURL, http.Header{})
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	defer ws.Close()
	read := func() (string, error) {
		for {
			_ = ws.SetReadDeadline(time.Now().Add(wait))
			_, b, err := ws.ReadMessage()
			if err != nil {
				return "", err
			}
			if s := string(b); s != "2" {
				return s, nil
			}
			if err := ws.WriteMessage(websocket.TextMessage, []byte("3")); err != nil {
				return "", err
			}
		}
	}
	send := func(s string) error { return ws.WriteMessage(websocket.TextMessage, []byte(s)) }
	until := func(prefix string) (string, error) {
		for {
			s, err := read()
			if err != nil || strings.HasPrefix(s, prefix) {
				return s, err
			}
		}
	}
	if s, err := read(); err != nil || !strings.HasPrefix(s, "0{") {
		return fmt.Errorf("engine open: %q %v", s, err)
	}
	auth := "{}"
	if key != "" {
		auth = `{"api_key":"` + key + `"}`
	}
	if err := send("40/smcp," + auth); err != nil {
		return err
	}
	if mode == abruptCycle {
		return nil
	}
	s, err := read()
	if err != nil {
		return err
	}
	if key == "" {
		if !strings.HasPrefix(s, "44/smcp,") {
			return fmt.Errorf("want a refusal, got %q", s)
		}
		return nil
	}
	if !strings.HasPrefix(s, "40/smcp,") {
		return fmt.Errorf("namespace connect: %q", s)
	}
	if mode == joinCycle {
		if err := send(`42/smcp,1["server:join_office",{"role":"agent","name":"` + name + `","office_id":"` + name + `"}]`); err != nil {
			return err
		}
		if s, err := until("43/smcp,1"); err != nil || !strings.HasPrefix(s, "43/smcp,1[true") {
			return fmt.Errorf("join: %q %v", s, err)
		}
		if err := send(`42/smcp,2["server:leave_office",{"office_id":"` + name + `"}]`); err != nil {
			return err
		}
		if s, err := until("43/smcp,2"); err != nil || !strings.HasPrefix(s, "43/smcp,2[true") {
			return fmt.Errorf("leave: %q %v", s, err)
		}
	}
	return send("41/smcp,")
}
