package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

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
// BenchmarkRoute, and the Redis commands per request.
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
	for _, inflight := range []int{1, 32} {
		for _, cross := range []bool{false, true} {
			name := "same-node"
			if cross {
				name = "cross-node"
			}
			b.Run(fmt.Sprintf("setup=%s/inflight=%d", name, inflight), func(b *testing.B) {
				a, r := office(b, cross)
				before := r.commands(b)
				benchRoute(b, a, inflight)
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
