package server_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/stretchr/testify/require"
	"github.com/zishang520/socket.io/servers/socket/v3"
)

// TestHostileSilentComputer: a Computer that reads its requests and never
// answers them (it answers the heartbeat, so it stays). Each request gets
// its 408 when the Server's timer fires, which frees its in-flight place;
// what the Socket.IO library keeps to match the Computer's ack (its ack
// table, holding the call and the Agent's own ack) must go with it, or an
// Agent that sends requests as fast as they time out, and reconnects to
// send more, grows that table, and pins every Agent session it used, for as
// long as the Computer stays connected. A late answer is dropped.
func TestHostileSilentComputer(t *testing.T) {
	const inFlight, rounds = 16, 40
	ts := startServer(t, server.WithRequestTimeout(100*time.Millisecond), server.WithMaxInFlight(inFlight))
	c := dial(t, ts.url).mustJoin(protocol.RoleComputer, "silent", "o1")
	held := make(chan socket.Ack, inFlight) // a few, answered late
	_ = c.sock.On(protocol.EventGetTools, func(args ...any) {
		if ack, ok := args[len(args)-1].(socket.Ack); ok {
			select {
			case held <- ack:
			default: // never answered
			}
		}
	})
	other, ocs := office(t, ts, "o2", "a2", "c2")
	ocs[0].answer(protocol.EventGetTools, toolsAnswer)
	base := liveHeap()

	timeOutCalls(t, ts.url, rounds, inFlight)
	t.Logf("library acks held for the silent Computer after %d timed-out requests: %d", inFlight*rounds, ts.srv.PendingAcks("silent"))
	require.LessOrEqual(t, ts.srv.PendingAcks("silent"), inFlight, "the library keeps an ack per timed-out request")

	// Late answers are dropped; the Computer stays, and so does the other office.
	for range len(held) {
		(<-held)([]any{map[string]any{"req_id": "late", "tools": []any{}}}, nil)
	}
	c.barrier()
	vals := other.call(protocol.EventGetTools, getTools("a2", "c2", "meanwhile"))
	require.Equal(t, "meanwhile", vals[0].(map[string]any)["req_id"])
	heapReturns(t, base, 3<<20) // the test's own 40 disconnected clients stay until it ends (about 1.5 MB)
	t.Logf("live heap: %d KB at the start, %d KB at the end", base>>10, liveHeap()>>10)
}

// TestHostileSilentComputerCluster: the same attack across two nodes. The
// Computer's node holds the library's ack of each request that came from
// another node (the adapter's broadcast with acknowledgement), and nothing
// there knows the request's deadline; the node drops every such entry once
// it is older than the longest deadline a request can have, plus a lease.
func TestHostileSilentComputerCluster(t *testing.T) {
	const inFlight, rounds = 16, 10
	r := startRedis(t)
	opts := []server.Option{
		server.WithRequestTimeout(100 * time.Millisecond), server.WithMaxInFlight(inFlight),
		server.WithMaxToolCallTimeout(100 * time.Millisecond), server.WithToolCallMargin(0),
		server.WithNodeLease(1500 * time.Millisecond),
	}
	n := startNodes(t, r, 2, opts...)
	c := dial(t, n[1].url).mustJoin(protocol.RoleComputer, "silent", "o1")
	_ = c.sock.On(protocol.EventGetTools, func(...any) {}) // never answered
	timeOutCalls(t, n[0].url, rounds, inFlight)
	held := n[1].srv.PendingAcks("silent")
	t.Logf("library acks held on the Computer's node after %d timed-out requests: %d", inFlight*rounds, held)
	require.True(t, eventually(func() bool { return n[1].srv.PendingAcks("silent") == 0 }),
		"the Computer's node still holds %d acks of requests past their deadline", n[1].srv.PendingAcks("silent"))
}

// timeOutCalls has a new Agent of office o1, in each of rounds, send
// inFlight get_tools to the Computer "silent" through the node at url, get
// every one's 408, leave and disconnect.
func timeOutCalls(t *testing.T, url string, rounds, inFlight int) {
	t.Helper()
	for round := range rounds {
		a := dial(t, url).mustJoin(protocol.RoleAgent, fmt.Sprint("agent", round), "o1")
		answers := make(chan []any, inFlight)
		for i := range inFlight {
			req := getTools(fmt.Sprint("agent", round), "silent", fmt.Sprint("r", round, "-", i))
			require.NoError(t, a.sock.Emit(protocol.EventGetTools, req, socket.Ack(func(v []any, _ error) { answers <- v })))
		}
		for range inFlight {
			select {
			case v := <-answers:
				requireError(t, v, protocol.CodeTimeout)
			case <-time.After(wait):
				t.Fatal("no 408 within the wait")
			}
		}
		require.Equal(t, []any{true, nil}, a.call(protocol.EventLeaveOffice, map[string]any{"office_id": "o1"}))
		a.sock.Disconnect()
	}
}
