package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
	"github.com/zishang520/socket.io/servers/socket/v3"
)

// startBareRelay is the baseline of BenchmarkRoute: a Socket.IO server on
// /smcp that forwards client:get_finder from any socket to the socket whose
// auth payload says role=computer and relays the ack, with no validation, no
// office and no checks. It uses the same library, transport and forwarding
// primitive (the target socket's Emit with an ack) as the Server.
func startBareRelay(tb testing.TB) string {
	tb.Helper()
	io := socket.NewServer(nil, nil)
	var mu sync.Mutex
	var computer *socket.Socket
	_ = io.Of(protocol.Namespace, nil).On("connection", func(args ...any) {
		s := args[0].(*socket.Socket)
		_ = s.On("test:ping", func(args ...any) {
			if ack, ok := args[len(args)-1].(socket.Ack); ok {
				ack(nil, nil)
			}
		})
		if s.Handshake().Auth["role"] == "computer" {
			mu.Lock()
			computer = s
			mu.Unlock()
			return
		}
		_ = s.On(protocol.EventGetFinder, func(args ...any) {
			ack := args[len(args)-1].(socket.Ack)
			mu.Lock()
			c := computer
			mu.Unlock()
			_ = c.Emit(protocol.EventGetFinder, args[0], socket.Ack(func(vals []any, _ error) { ack(vals, nil) }))
		})
	})
	mux := http.NewServeMux()
	mux.Handle("/socket.io/", io.ServeHandler(nil))
	hs := httptest.NewServer(mux)
	tb.Cleanup(func() {
		io.Close(nil)
		hs.Close()
	})
	return hs.URL
}

// finderRequest is the client:get_finder both setups relay.
func finderRequest() map[string]any {
	return map[string]any{"agent": "a1", "req_id": "bench", "computer": "c1", "keywords": []any{"bench"}, "limit": 20.0}
}

// benchPeer is a minimal Socket.IO v5 client over a raw websocket, so that
// the benchmark measures the server and not a client library: one reader
// goroutine dispatches acks by id (Agent) or answers requests with a fixed,
// pre-encoded ack (Computer).
type benchPeer struct {
	ws      *websocket.Conn
	wmu     sync.Mutex
	mu      sync.Mutex
	nextID  uint64
	waiting map[uint64]chan struct{}
}

// dialBench connects (retrying a lost namespace CONNECT, see dialRawAuth)
// and hands the websocket to the peer's reader.
func dialBench(tb testing.TB, url string, auth map[string]any, answer []byte) *benchPeer {
	tb.Helper()
	r := dialRawAuth(tb, url, auth)
	_ = r.ws.SetReadDeadline(time.Time{})
	p := &benchPeer{ws: r.ws, waiting: map[uint64]chan struct{}{}}
	done := make(chan struct{})
	go p.read(answer, done)
	tb.Cleanup(func() {
		_ = p.ws.Close()
		<-done
	})
	return p
}

func (p *benchPeer) write(s string) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_ = p.ws.WriteMessage(websocket.TextMessage, []byte(s))
}

func (p *benchPeer) read(answer []byte, done chan struct{}) {
	defer close(done)
	eventPrefix := "42" + protocol.Namespace + ","
	ackPrefix := "43" + protocol.Namespace + ","
	for {
		_, b, err := p.ws.ReadMessage()
		if err != nil {
			return
		}
		msg := string(b)
		switch {
		case msg == "2":
			p.write("3")
		case strings.HasPrefix(msg, eventPrefix) && answer != nil:
			rest := msg[len(eventPrefix):]
			id := rest[:strings.IndexByte(rest, '[')]
			p.write(ackPrefix + id + "[" + string(answer) + "]")
		case strings.HasPrefix(msg, ackPrefix):
			rest := msg[len(ackPrefix):]
			id, _ := strconv.ParseUint(rest[:strings.IndexByte(rest, '[')], 10, 64)
			p.mu.Lock()
			ch := p.waiting[id]
			delete(p.waiting, id)
			p.mu.Unlock()
			if ch != nil {
				close(ch)
			}
		}
	}
}

// call sends event with payload (JSON) and waits for its ack.
func (p *benchPeer) call(tb testing.TB, event string, payload []byte) {
	p.mu.Lock()
	id := p.nextID
	p.nextID++
	ch := make(chan struct{})
	p.waiting[id] = ch
	p.mu.Unlock()
	p.write(fmt.Sprintf("42%s,%d[%q,%s]", protocol.Namespace, id, event, payload))
	select {
	case <-ch:
	case <-time.After(wait):
		tb.Fatalf("no answer to %s within %v", event, wait)
	}
}

// benchRoute drives b.N client:get_finder requests with inflight workers,
// each waiting for its answer before sending the next, and reports the
// median latency and the throughput.
func benchRoute(b *testing.B, agent *benchPeer, inflight int) {
	req, err := json.Marshal(finderRequest())
	require.NoError(b, err)
	latencies := make([]time.Duration, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range inflight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := int(next.Add(1) - 1); n < b.N; n = int(next.Add(1) - 1) {
				t0 := time.Now()
				agent.call(b, protocol.EventGetFinder, req)
				latencies[n] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
}

// BenchmarkRoute compares a routed client:get_finder through the Server
// (request validated, office and name checks, own timer) with the bare
// relay above, at 1 and 32 requests in flight, the Computer answering a
// 20-document GetFinderRet (about 7 KB). "smcp-validated" also validates
// that answer (WithValidateAnswers). Setups are best compared as
// interleaved processes, so that drift of a shared machine falls on each:
//
//	go test -c -o server.test .
//	for i in 1 2 3 4 5 6; do for s in bare smcp smcp-validated; do
//	  ./server.test -test.run '^$' -test.bench "BenchmarkRoute/setup=$s\$/" -test.benchtime 10000x
//	done; done > bench.txt
//	benchstat -col /setup bench.txt
func BenchmarkRoute(b *testing.B) {
	answer, err := json.Marshal(finderAnswer("bench", 20))
	require.NoError(b, err)
	setups := []struct {
		name  string
		agent func(b *testing.B) *benchPeer
	}{
		{"bare", func(b *testing.B) *benchPeer {
			url := startBareRelay(b)
			dialBench(b, url, map[string]any{"role": "computer"}, answer)
			return dialBench(b, url, map[string]any{"role": "agent"}, nil)
		}},
		{"smcp", func(b *testing.B) *benchPeer { return smcpOffice(b, answer) }},
		{"smcp-validated", func(b *testing.B) *benchPeer { return smcpOffice(b, answer, server.WithValidateAnswers(true)) }},
	}
	for _, inflight := range []int{1, 32} {
		for _, s := range setups {
			b.Run(fmt.Sprintf("setup=%s/inflight=%d", s.name, inflight), func(b *testing.B) {
				benchRoute(b, s.agent(b), inflight)
			})
		}
	}
}

func smcpOffice(b *testing.B, answer []byte, opts ...server.Option) *benchPeer {
	ts := startServer(b, append([]server.Option{server.WithLogger(nil)}, opts...)...)
	c := dialBench(b, ts.url, nil, answer)
	c.call(b, protocol.EventJoinOffice, []byte(`{"role":"computer","name":"c1","office_id":"o1"}`))
	a := dialBench(b, ts.url, nil, nil)
	a.call(b, protocol.EventJoinOffice, []byte(`{"role":"agent","name":"a1","office_id":"o1"}`))
	return a
}

// BenchmarkValidateFinderAnswer is the CPU cost WithValidateAnswers adds to
// each 20-document client:get_finder answer, and the request validation
// every routed request pays.
func BenchmarkValidateFinderAnswer(b *testing.B) {
	answer := finderAnswer("bench", 20)
	req := finderRequest()
	b.Run("answer-20-documents", func(b *testing.B) {
		for b.Loop() {
			if err := protocol.ValidateValue(protocol.EventGetFinder, protocol.Ack, answer); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("request", func(b *testing.B) {
		for b.Loop() {
			if err := protocol.ValidateValue(protocol.EventGetFinder, protocol.Request, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
