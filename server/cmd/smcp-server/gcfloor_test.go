package main

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

func TestPercentFor(t *testing.T) {
	const mb = 1 << 20
	require.Equal(t, 100, percentFor(40*mb, 0, 32*mb), "a large live heap keeps Go's default")
	require.Equal(t, 100, percentFor(16*mb, 0, 32*mb))
	require.Equal(t, 300, percentFor(8*mb, 0, 32*mb))
	require.Equal(t, 100, percentFor(8*mb, 16*mb, 32*mb), "roots count in the goal: 1,000 connections' stacks")
	require.Equal(t, 200, percentFor(4*mb, 8*mb, 28*mb))
	require.Equal(t, 800, percentFor(1, 0, 32*mb), "the runtime's minimum heap, 4 MB × GOGC/100, stays within the floor")
	require.Equal(t, 800, percentFor(0, 0, 32*mb))
	require.Equal(t, 100, percentFor(0, 0, 1*mb))
}

// The tuning follows the collections of the real runtime, and the
// operator's GOGC or a zero floor turns it off.
func TestGCFloorTunesAfterCollections(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	startGCFloor(context.Background(), 1<<20, func(string) string { return "50" }, func() bool { return true })
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	require.Equal(t, uint64(100), gogc(), "GOGC set: left alone")

	ctx, cancel := context.WithCancel(context.Background())
	var busy atomic.Bool
	busy.Store(true)
	startGCFloor(ctx, 1<<30, func(string) string { return "" }, busy.Load)
	require.Eventually(t, func() bool {
		runtime.GC()
		return gogc() > 100
	}, 5*time.Second, 20*time.Millisecond)
	busy.Store(false)
	require.Eventually(t, func() bool {
		runtime.GC()
		return gogc() == 100
	}, 5*time.Second, 20*time.Millisecond, "not routing: Go's default")
	busy.Store(true)
	require.Eventually(t, func() bool {
		runtime.GC()
		return gogc() > 100
	}, 5*time.Second, 20*time.Millisecond)
	cancel()
	require.Eventually(t, func() bool {
		runtime.GC()
		return gogc() == 100
	}, 5*time.Second, 20*time.Millisecond, "back to the default once the context ends")
}

func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestRoutingLoad reads the routed-requests counter the Server registers:
// busy while it grows by minRoutingRate a second, not once it stops.
func TestRoutingLoad(t *testing.T) {
	reg := prometheus.NewRegistry()
	tee := teeRouted(reg)
	routed := prometheus.NewCounterVec(prometheus.CounterOpts{Name: routedMetric}, []string{"event", "code"})
	other := prometheus.NewCounter(prometheus.CounterOpts{Name: "smcp_server_other_total"})
	tee.MustRegister(other, routed)
	routed.WithLabelValues("client:tool_call", "ok").Add(3)
	routed.WithLabelValues("client:get_tools", "404").Add(2)
	other.Add(100)
	all, err := reg.Gather()
	require.NoError(t, err)
	require.Len(t, all, 2, "everything is served by the main registry")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := watchRouting(ctx, tee)
	require.Equal(t, 5.0, l.total(), "the routed counter alone, over its labels")
	require.False(t, l.routing())
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				routed.WithLabelValues("client:tool_call", "ok").Add(minRoutingRate / 50)
			}
		}
	}()
	require.Eventually(t, l.routing, 5*time.Second, 20*time.Millisecond)
	close(stop)
	require.Eventually(t, func() bool { return !l.routing() }, 5*time.Second, 20*time.Millisecond)
}

// The Server's own routed-requests counter is the one the tee keeps.
func TestRoutedTeeFindsTheServersCounter(t *testing.T) {
	tee := teeRouted(prometheus.NewRegistry())
	srv, err := server.New(server.WithAPIKeys("k"), server.WithMetrics(tee))
	require.NoError(t, err)
	defer srv.Close(context.Background())
	require.NotNil(t, tee.routed.Load(), "no collector named %s was registered", routedMetric)
}
