package server_test

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// TestHostileDecodeExpansion: a payload is decoded for its checks into Go
// values many times its size (an array of empty objects, twenty times).
// Thirty-two connections, admitted but in no office, each sending a request
// of 512 KB of them at once, held that expansion 32 times over; large payloads
// are now decoded a few at a time. The peak of the heap in use stays
// within a bound that the concurrent decodes exceed, every request is
// answered (4103: not in an office; or 503 when no place came within the
// wait), and another office carries on.
func TestHostileDecodeExpansion(t *testing.T) {
	const decodeAnswerWait = 2 * time.Minute
	const conns, rounds, limit = 32, 1, 512 << 10
	ts := startServer(t, server.WithMaxPayloadBytes(limit))
	other, ocs := office(t, ts, "o2", "a2", "c2")
	ocs[0].answer(protocol.EventGetTools, toolsAnswer)
	var rs []*rawConn
	for range conns {
		rs = append(rs, dialRaw(t, ts.url))
	}
	head := fmt.Sprintf(`42%s,1["client:get_tools",{"agent":"a","req_id":"r","computer":"c","junk":[`, protocol.Namespace)
	msg := []byte(head + strings.Repeat("{},", (limit-len(head)-16)/3) + "{}]}]") // one copy for every sender
	require.LessOrEqual(t, len(msg), limit)
	// A tight collector, so that the heap in use follows what is live
	// rather than the garbage the pacing allows.
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	base := liveHeap()

	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Go(func() {
			for range rounds {
				if err := r.ws.WriteMessage(websocket.TextMessage, msg); err != nil {
					t.Error(err)
					return
				}
				for {
					// Every request is answered, but the two places decode
					// the 32 requests in turn: on a machine busy with other
					// work that takes longer than a usual wait.
					m := r.readWithin(decodeAnswerWait)
					if strings.HasPrefix(m, "43") {
						// 4103: not in an office; 503: no place to decode within the wait
						if !strings.Contains(m, `"code":4103`) && !strings.Contains(m, `"code":503`) {
							t.Errorf("answer %.200s", m)
						}
						break
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	grew := (peak.Load() - min(peak.Load(), base)) >> 20
	t.Logf("%d connections x %d requests of 512 KB of empty objects: heap in use grew by %d MB at its peak", conns, rounds, grew)
	// Each request is read (512 KB, in the session's backlog, about twice
	// over) and, two at a time, decoded (about 11 MB each, allocating twice
	// as much): 46-60 MB measured with the collector at 20 %; all at once,
	// 151-318 MB.
	require.Less(t, grew, uint64(100), "large payloads decoded all at once")
	require.Equal(t, "after", other.call(protocol.EventGetTools, getTools("a2", "c2", "after"))[0].(map[string]any)["req_id"])
}
