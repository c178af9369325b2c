package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// BenchmarkClusterRoute compares a routed client:get_finder (20-document
// answer, about 7 KB) in a two-node cluster on one local redis-server with
// the Agent and the Computer on the same node (the fast path: no Redis on
// the way) and on different nodes (the request through the sharded
// adapter's Pub/Sub, the ack back the same way), at 1 and 32 requests in
// flight. It reports the median latency, the throughput, like
// BenchmarkRoute, the CPU time per request of this process (both nodes and
// both clients) and of redis-server, and the Redis commands per request;
// first, the bare Redis Pub/Sub round trip that every cross-node request
// contains.
func BenchmarkClusterRoute(b *testing.B) {
	answer, err := json.Marshal(finderAnswer("bench", 20))
	require.NoError(b, err)
	office := func(b *testing.B, cross bool) (*benchPeer, *redisServer) {
		r := startRedis(b)
		n := startNodes(b, r, 2, server.WithLogger(nil))
		cnode := n[0]
		if cross {
			cnode = n[1]
		}
		c := dialBench(b, cnode.url, nil, answer)
		c.call(b, protocol.EventJoinOffice, []byte(`{"role":"computer","name":"c1","office_id":"o1"}`))
		a := dialBench(b, n[0].url, nil, nil)
		a.call(b, protocol.EventJoinOffice, []byte(`{"role":"agent","name":"a1","office_id":"o1"}`))
		return a, r
	}
	// What no cross-node request can beat: one round trip through Redis
	// Pub/Sub with the same client library, a small message one way and
	// the answer's bytes back, each published on its own goroutine as the
	// nodes' publisher does, no Socket.IO at all.
	b.Run("setup=pubsub-round-trip/inflight=1", func(b *testing.B) {
		r := startRedis(b)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		mk := func() *redis.Client {
			return redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", r.port)})
		}
		a, n := mk(), mk()
		defer a.Close()
		defer n.Close()
		toA, toN := a.SSubscribe(ctx, "toA"), n.SSubscribe(ctx, "toN")
		defer toA.Close()
		defer toN.Close()
		for _, s := range []*redis.PubSub{toA, toN} {
			_, err := s.Receive(ctx)
			require.NoError(b, err)
		}
		go func() {
			for {
				if _, err := toN.ReceiveMessage(ctx); err != nil {
					return
				}
				go n.SPublish(ctx, "toA", answer)
			}
		}()
		latencies := make([]time.Duration, b.N)
		b.ResetTimer()
		start := time.Now()
		for i := range b.N {
			t0 := time.Now()
			go a.SPublish(ctx, "toN", "request")
			_, err := toA.ReceiveMessage(ctx)
			require.NoError(b, err)
			latencies[i] = time.Since(t0)
		}
		elapsed := time.Since(start)
		b.StopTimer()
		slices.Sort(latencies)
		b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	})
	for _, inflight := range []int{1, 32} {
		for _, cross := range []bool{false, true} {
			name := "same-node"
			if cross {
				name = "cross-node"
			}
			b.Run(fmt.Sprintf("setup=%s/inflight=%d", name, inflight), func(b *testing.B) {
				a, r := office(b, cross)
				before := r.commands(b)
				cpu, rcpu := processCPU(b), r.cpu(b)
				benchRoute(b, a, inflight)
				b.ReportMetric(float64((processCPU(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
				b.ReportMetric(float64((r.cpu(b)-rcpu).Microseconds())/float64(b.N), "redis-cpu-µs/op")
				after := r.commands(b)
				// Commands per request; the heartbeats' few are left out.
				var total float64
				for cmd, n := range after {
					if per := float64(n-before[cmd]) / float64(b.N); per >= 0.1 && cmd != "info" {
						b.ReportMetric(per, "redis-"+strings.ReplaceAll(cmd, "|", "-")+"/op")
						total += per
					}
				}
				b.ReportMetric(total, "redis-cmds/op")
			})
		}
	}
}

// commands reads the calls of each Redis command so far (INFO
// commandstats), to show what a routed request costs in Redis.
func (r *redisServer) commands(tb testing.TB) map[string]int64 {
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", r.port)})
	defer c.Close()
	info, err := c.Info(context.Background(), "commandstats").Result()
	require.NoError(tb, err)
	out := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		n, _ := strconv.ParseInt(calls, 10, 64)
		out[strings.TrimPrefix(name, "cmdstat_")] = n
	}
	return out
}

// processCPU is the CPU time this process has used so far.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	require.NoError(tb, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpu is the CPU time redis-server has used so far (INFO cpu).
func (r *redisServer) cpu(tb testing.TB) time.Duration {
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", r.port)})
	defer c.Close()
	info, err := c.Info(context.Background(), "cpu").Result()
	require.NoError(tb, err)
	var total float64
	for _, line := range strings.Split(info, "\n") {
		name, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (name == "used_cpu_sys" || name == "used_cpu_user") {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(tb, err)
			total += f
		}
	}
	return time.Duration(total * float64(time.Second))
}
