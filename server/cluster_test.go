package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/zishang520/socket.io/servers/socket/v3"
)

// Cluster tests run several Server nodes in this process on one real
// redis-server (redis_test.go), with clients spread across the nodes.

type node struct {
	srv *server.Server
	hs  *httptest.Server
	url string
}

func startNode(t testing.TB, r *redisServer, opts ...server.Option) *node {
	t.Helper()
	// A 5 s lease: a loaded 2-core machine under -race can delay a
	// heartbeat by a second. The node-failure tests set a shorter one.
	opts = append([]server.Option{server.WithLogger(testLogger(t)), server.WithAPIKeys(testKey), server.WithRedis(r.url()), server.WithNodeLease(5 * time.Second)}, opts...)
	srv, err := server.New(opts...)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/socket.io/", srv.Handler())
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := srv.Ready(r.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		}
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		_ = srv.Close(ctx)
		hs.Close()
	})
	return &node{srv: srv, hs: hs, url: hs.URL}
}

func startNodes(t testing.TB, r *redisServer, n int, opts ...server.Option) []*node {
	var nodes []*node
	for range n {
		nodes = append(nodes, startNode(t, r, opts...))
	}
	return nodes
}

// kill stops a node as a SIGKILL would: no release in Redis, no message to
// the other nodes, every transport cut.
func (n *node) kill() {
	n.srv.KillNode()
	n.hs.CloseClientConnections()
}

// tryCall emits with an ack without failing the test (usable from any
// goroutine).
func tryCall(p *peer, ev string, payload any, d time.Duration) ([]any, error) {
	got := make(chan []any, 1)
	errc := make(chan error, 1)
	err := p.sock.Emit(ev, payload, socket.Ack(func(vals []any, err error) {
		if err != nil {
			errc <- err
			return
		}
		got <- vals
	}))
	if err != nil {
		return nil, err
	}
	select {
	case v := <-got:
		return v, nil
	case err := <-errc:
		return nil, err
	case <-time.After(d):
		return nil, fmt.Errorf("no ack for %s within %v", ev, d)
	}
}

func errorCode(vals []any) (protocol.Code, bool) {
	if len(vals) != 1 {
		return 0, false
	}
	raw, _ := json.Marshal(vals[0])
	e, ok := protocol.DecodeErrorPayload(raw)
	if !ok {
		return 0, false
	}
	return e.Code, true
}

// TestClusterRules checks every office and routing rule with the members
// of one office on three nodes.
func TestClusterRules(t *testing.T) {
	r := startRedis(t)
	n := startNodes(t, r, 3, server.WithRequestTimeout(3*time.Second))

	c1 := dial(t, n[1].url).mustJoin(protocol.RoleComputer, "c1", "o1")
	c2 := dial(t, n[2].url).mustJoin(protocol.RoleComputer, "c2", "o1")
	agent := dial(t, n[0].url).mustJoin(protocol.RoleAgent, "a1", "o1")
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "c2"}, c1.next(protocol.NotifyEnterOffice))
	require.Equal(t, map[string]any{"office_id": "o1", "agent": "a1"}, c1.next(protocol.NotifyEnterOffice))
	require.Equal(t, map[string]any{"office_id": "o1", "agent": "a1"}, c2.next(protocol.NotifyEnterOffice))

	// Routing from node 0 to nodes 1 and 2.
	c1.answer(protocol.EventGetTools, toolsAnswer)
	c2.answer(protocol.EventGetTools, toolsAnswer)
	for _, name := range []string{"c1", "c2"} {
		vals := agent.call(protocol.EventGetTools, getTools("a1", name, "r-"+name))
		require.Len(t, vals, 1)
		require.Equal(t, "r-"+name, vals[0].(map[string]any)["req_id"])
	}

	// The office rules hold across nodes, with the same codes.
	ok, reason := dial(t, n[2].url).join(protocol.RoleAgent, "a2", "o1")
	requireReason(t, ok, reason, protocol.CodeRoomFull)
	ok, reason = dial(t, n[0].url).join(protocol.RoleComputer, "c1", "o1")
	require.Contains(t, requireReason(t, ok, reason, protocol.CodeForbidden), "already in office")
	ok, reason = dial(t, n[2].url).join(protocol.RoleAgent, "c1", "o2")
	require.Contains(t, requireReason(t, ok, reason, protocol.CodeForbidden), "already registered")
	x := dial(t, n[1].url).mustJoin(protocol.RoleComputer, "x", "o2")
	requireError(t, agent.call(protocol.EventGetTools, getTools("a1", "x", "r3")), protocol.CodeNotFound)
	requireError(t, agent.call(protocol.EventGetTools, getTools("a1", "nobody", "r4")), protocol.CodeNotFound)
	requireError(t, c1.call(protocol.EventGetTools, getTools("c1", "c2", "r5")), protocol.CodeForbidden)

	// server:list_room lists the sessions of every node.
	vals := agent.call(protocol.EventListRoom, map[string]any{"agent": "a1", "office_id": "o1", "req_id": "l1"})
	require.Len(t, vals, 1)
	raw, _ := json.Marshal(vals[0])
	var list protocol.ListRoomRet
	require.NoError(t, json.Unmarshal(raw, &list))
	var names []string
	for _, s := range list.Sessions {
		names = append(names, s.Name)
	}
	require.Equal(t, []string{"a1", "c1", "c2"}, names)

	// notify:* reach members on other nodes, the sender excepted.
	vals = c1.call(protocol.EventUpdateToolList, map[string]any{"computer": "c1"})
	require.Empty(t, vals)
	require.Equal(t, map[string]any{"computer": "c1"}, agent.next(protocol.NotifyUpdateToolList))
	require.Equal(t, map[string]any{"computer": "c1"}, c2.next(protocol.NotifyUpdateToolList))
	c1.noEvent(protocol.NotifyUpdateToolList)
	x.noEvent(protocol.NotifyUpdateToolList)

	// Cancel by the owning Agent reaches the Computers on other nodes.
	agent.call(protocol.EventCancelToolCall, map[string]any{"agent": "a1", "req_id": "t1"})
	require.Equal(t, "t1", c1.next(protocol.NotifyCancelToolCall).(map[string]any)["req_id"])
	require.Equal(t, "t1", c2.next(protocol.NotifyCancelToolCall).(map[string]any)["req_id"])

	// A Computer on another node that does not answer: 408.
	requireError(t, agent.call(protocol.EventGetConfig, map[string]any{"agent": "a1", "computer": "c2", "req_id": "r6"}), protocol.CodeTimeout)

	// Its disconnect fails the request in flight at once (404, not 408).
	pending := make(chan []any, 1)
	go func() {
		vals, _ := tryCall(agent, protocol.EventGetConfig, map[string]any{"agent": "a1", "computer": "c2", "req_id": "r7"}, wait)
		pending <- vals
	}()
	for {
		got := c2.next(protocol.EventGetConfig).(map[string]any)
		if got["req_id"] == "r7" {
			break
		}
	}
	c2.sock.Disconnect()
	e := requireError(t, <-pending, protocol.CodeNotFound)
	require.Equal(t, "computer_disconnected", e.Details["reason"])
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "c2"}, agent.next(protocol.NotifyLeaveOffice))

	// The name is free again, on any node.
	dial(t, n[0].url).mustJoin(protocol.RoleComputer, "c2", "o3")

	// Office switch: o1 hears c1 leave, o2 hears it enter.
	c1.mustJoin(protocol.RoleComputer, "c1", "o2")
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "c1"}, agent.next(protocol.NotifyLeaveOffice))
	require.Equal(t, map[string]any{"office_id": "o2", "computer": "c1"}, x.next(protocol.NotifyEnterOffice))
	requireError(t, agent.call(protocol.EventGetTools, getTools("a1", "c1", "r8")), protocol.CodeNotFound)
}

// TestClusterAdmissionRace makes two nodes admit the same name, and the
// Agent seat of the same office, at the same instant, many times: exactly
// one admission succeeds each time.
func TestClusterAdmissionRace(t *testing.T) {
	r := startRedis(t)
	// Each session joins 200 offices as fast as it can: far over the event
	// rate a real client needs (ratelimit.go), which is not what is tested.
	n := startNodes(t, r, 2, server.WithMaxEventRate(100_000))
	const rounds = 200
	compA, compB := dial(t, n[0].url), dial(t, n[1].url)
	agentA, agentB := dial(t, n[0].url), dial(t, n[1].url)
	race := func(a, b *peer, role protocol.Role, name func(*peer) string, office string) (okA, okB bool) {
		var wg sync.WaitGroup
		res := make([]bool, 2)
		for i, p := range []*peer{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				vals, err := tryCall(p, protocol.EventJoinOffice, map[string]any{"role": string(role), "name": name(p), "office_id": office}, wait)
				if err == nil && len(vals) == 2 {
					res[i], _ = vals[0].(bool)
				}
			}()
		}
		wg.Wait()
		return res[0], res[1]
	}
	for i := range rounds {
		// Two Computers, one name: each round in a new office (a Computer
		// switches offices), so the winner's old name is freed too.
		name := fmt.Sprintf("pc-%d", i)
		okA, okB := race(compA, compB, protocol.RoleComputer, func(*peer) string { return name }, fmt.Sprintf("race-%d", i))
		require.True(t, okA != okB, "round %d: name %q admitted on both nodes or on none (%v, %v)", i, name, okA, okB)

		// Two Agents, one office, different names.
		office := fmt.Sprintf("seat-%d", i)
		okA, okB = race(agentA, agentB, protocol.RoleAgent, func(p *peer) string {
			if p == agentA {
				return "agent-a"
			}
			return "agent-b"
		}, office)
		require.True(t, okA != okB, "round %d: two Agents admitted in office %q, or none (%v, %v)", i, office, okA, okB)
		winner := agentA
		if okB {
			winner = agentB
		}
		vals := winner.call(protocol.EventLeaveOffice, map[string]any{"office_id": office})
		require.Equal(t, true, vals[0])
	}
	t.Logf("%d name races and %d Agent-seat races: one admission each", rounds, rounds)
}

// TestClusterRandomizedOffices spreads 24 offices' Agents and Computers
// over three nodes and routes thousands of requests at random: every one
// is answered by the Computer it names, and no Computer ever receives a
// request from another office.
func TestClusterRandomizedOffices(t *testing.T) {
	r := startRedis(t)
	n := startNodes(t, r, 3)
	const offices, computers, requests, parallel = 24, 3, 100, 8
	rng := rand.New(rand.NewPCG(1, 2))
	var crossOffice, received, notConfirmed atomic.Int64
	type office struct {
		agent *peer
		names []string
	}
	var all []office
	for o := range offices {
		id := fmt.Sprintf("office-%d", o)
		var of office
		for c := range computers {
			name := fmt.Sprintf("pc-%d-%d", o, c)
			p := dial(t, n[rng.IntN(len(n))].url).mustJoin(protocol.RoleComputer, name, id)
			agentName := fmt.Sprintf("agent-%d", o)
			p.answer(protocol.EventGetTools, func(req map[string]any) []any {
				received.Add(1)
				if req["agent"] != agentName || req["computer"] != name {
					crossOffice.Add(1)
				}
				return []any{map[string]any{"req_id": req["req_id"], "tools": []any{map[string]any{
					"name": name, "description": id, "params_schema": map[string]any{"type": "object"}, "return_schema": nil,
				}}}}
			})
			of.names = append(of.names, name)
		}
		of.agent = dial(t, n[rng.IntN(len(n))].url).mustJoin(protocol.RoleAgent, fmt.Sprintf("agent-%d", o), id)
		all = append(all, of)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, offices*parallel)
	for o, of := range all {
		for w := range parallel {
			wg.Add(1)
			seed := uint64(o*parallel + w)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(seed, 7))
				for i := range requests / parallel {
					if ctx.Err() != nil {
						errs <- ctx.Err()
						return
					}
					target := of.names[rng.IntN(len(of.names))]
					reqID := fmt.Sprintf("%d-%d-%d", o, w, i)
					vals, err := tryCall(of.agent, protocol.EventGetTools, getTools(fmt.Sprintf("agent-%d", o), target, reqID), wait)
					if err != nil {
						errs <- err
						return
					}
					if code, isErr := errorCode(vals); isErr {
						// Redis Pub/Sub delivers at most once: a request whose
						// delivery the adapter could not confirm is answered
						// 503 not_confirmed at once (README.md, Cluster mode).
						raw, _ := json.Marshal(vals[0])
						if e, _ := protocol.DecodeErrorPayload(raw); code == protocol.CodeUnavailable && e.Details["reason"] == "not_confirmed" {
							notConfirmed.Add(1)
							continue
						}
						errs <- fmt.Errorf("request %s to %s answered %v", reqID, target, vals)
						return
					}
					m, _ := vals[0].(map[string]any)
					tools, _ := m["tools"].([]any)
					if m["req_id"] != reqID || len(tools) != 1 || tools[0].(map[string]any)["name"] != target {
						errs <- fmt.Errorf("request %s to %s answered %v", reqID, target, vals)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	total := int64(offices * parallel * (requests / parallel))
	require.Zero(t, crossOffice.Load(), "cross-office deliveries")
	require.LessOrEqual(t, received.Load(), total, "no request delivered twice")
	require.GreaterOrEqual(t, received.Load(), total-notConfirmed.Load(), "every confirmed answer came from a delivery")
	// Rare by nature (a Pub/Sub message lost or miscounted under load);
	// more than 1% would be a defect of the Server, not of the bus.
	require.LessOrEqual(t, notConfirmed.Load()*100, total, "requests answered 503 not_confirmed")
	for i, node := range n {
		require.Zero(t, node.srv.RemoteCalls(), "node %d still holds answered cross-node requests", i)
	}
	t.Logf("%d offices on 3 nodes, %d requests answered (%d of them 503 not_confirmed), 0 cross-office deliveries",
		offices, total, notConfirmed.Load())
}

// TestClusterNodeKill kills a node abruptly: within its lease the other
// nodes free its names, tell its offices and fail the requests routed to
// its Computers with 503.
func TestClusterNodeKill(t *testing.T) {
	r := startRedis(t)
	const lease = 1500 * time.Millisecond
	n := startNodes(t, r, 3, server.WithNodeLease(lease))
	doomed := dial(t, n[1].url).mustJoin(protocol.RoleComputer, "doomed", "o1")
	other := dial(t, n[2].url).mustJoin(protocol.RoleComputer, "other", "o1")
	agent := dial(t, n[0].url).mustJoin(protocol.RoleAgent, "a1", "o1")
	other.next(protocol.NotifyEnterOffice) // the Agent

	pending := make(chan []any, 1)
	go func() {
		vals, _ := tryCall(agent, protocol.EventGetConfig, map[string]any{"agent": "a1", "computer": "doomed", "req_id": "r1"}, wait)
		pending <- vals
	}()
	doomed.next(protocol.EventGetConfig) // in flight on node 1

	killed := time.Now()
	n[1].kill()
	e := requireError(t, <-pending, protocol.CodeUnavailable)
	failedAfter := time.Since(killed)
	require.Equal(t, "node_down", e.Details["reason"])
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "doomed"}, agent.next(protocol.NotifyLeaveOffice))
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "doomed"}, other.next(protocol.NotifyLeaveOffice))
	toldAfter := time.Since(killed)
	t.Logf("lease %v: request failed with 503 after %v, offices told after %v", lease, failedAfter.Round(time.Millisecond), toldAfter.Round(time.Millisecond))
	// Bounded by the lease plus one heartbeat period; a generous margin for
	// a loaded machine keeps this a check of the mechanism, not of speed.
	require.Less(t, toldAfter, 2*lease+lease/3+2*time.Second)

	// The name is free: the Computer reconnects through another node.
	dial(t, n[2].url).mustJoin(protocol.RoleComputer, "doomed", "o1")
	// "other" joined on node 2 just before the Agent joined on node 0: its
	// enter_office, crossing Redis, may reach the Agent's node after the
	// Agent's join (a loaded run saw it), so the Agent skips it.
	for {
		m := agent.next(protocol.NotifyEnterOffice)
		if e, _ := m.(map[string]any); e["computer"] == "other" {
			continue
		}
		require.Equal(t, map[string]any{"office_id": "o1", "computer": "doomed"}, m)
		break
	}
}

// TestClusterRedisRestart restarts Redis empty under a running cluster:
// same-node routing keeps working, the nodes report not ready, then
// register their sessions again and route across nodes once it is back.
func TestClusterRedisRestart(t *testing.T) {
	r := startRedis(t)
	n := startNodes(t, r, 2)
	local := dial(t, n[0].url).mustJoin(protocol.RoleComputer, "local", "o1")
	remote := dial(t, n[1].url).mustJoin(protocol.RoleComputer, "remote", "o1")
	agent := dial(t, n[0].url).mustJoin(protocol.RoleAgent, "a1", "o1")
	local.answer(protocol.EventGetTools, toolsAnswer)
	remote.answer(protocol.EventGetTools, toolsAnswer)
	require.Len(t, agent.call(protocol.EventGetTools, getTools("a1", "remote", "r0")), 1)

	r.stop()
	require.Eventually(t, func() bool { return n[0].srv.Ready(context.Background()) != nil }, wait, 50*time.Millisecond)
	vals := agent.call(protocol.EventGetTools, getTools("a1", "local", "r1"))
	require.Equal(t, "r1", vals[0].(map[string]any)["req_id"], "same-node routing needs no Redis")
	requireError(t, agent.call(protocol.EventGetTools, getTools("a1", "remote", "r2")), protocol.CodeUnavailable)
	ok, reason := dial(t, n[1].url).join(protocol.RoleComputer, "late", "o1")
	requireReason(t, ok, reason, protocol.CodeUnavailable)

	r.start() // empty: the nodes must register their sessions again
	listed := func() int {
		vals, err := tryCall(agent, protocol.EventListRoom, map[string]any{"agent": "a1", "office_id": "o1", "req_id": "l1"}, wait)
		if err != nil || len(vals) != 1 {
			return -1
		}
		raw, _ := json.Marshal(vals[0])
		var list protocol.ListRoomRet
		if json.Unmarshal(raw, &list) != nil {
			return -1
		}
		return len(list.Sessions)
	}
	require.Eventually(t, func() bool {
		if n[0].srv.Ready(context.Background()) != nil || n[1].srv.Ready(context.Background()) != nil {
			return false
		}
		return listed() == 3 // every session registered again, by both nodes
	}, 3*wait, 200*time.Millisecond, "the nodes register their sessions again")
	require.Eventually(t, func() bool {
		vals, err := tryCall(agent, protocol.EventGetTools, getTools("a1", "remote", "r3"), wait)
		_, isErr := errorCode(vals)
		return err == nil && !isErr
	}, 3*wait, 200*time.Millisecond, "cross-node routing is back")
	ok, reason = dial(t, n[1].url).join(protocol.RoleComputer, "local", "o2")
	require.Contains(t, requireReason(t, ok, reason, protocol.CodeForbidden), "already registered")
}

// TestClusterForgedMessages publishes server-side messages straight to the
// cluster's channel on Redis, as a compromised or buggy node could: the
// ones with a field out of format or an unknown type are refused, so the
// requests in flight they would have failed stay in flight until the
// well-formed messages fail each with its own code. A long lease keeps the
// heartbeat from recording the requests' targets meanwhile (with a
// recorded target the malformed ones would not match anyway).
func TestClusterForgedMessages(t *testing.T) {
	r := startRedis(t)
	n := startNodes(t, r, 2, server.WithNodeLease(60*time.Second))
	c1 := dial(t, n[1].url).mustJoin(protocol.RoleComputer, "c1", "o1")
	c2 := dial(t, n[1].url).mustJoin(protocol.RoleComputer, "c2", "o1")
	agent := dial(t, n[0].url).mustJoin(protocol.RoleAgent, "a1", "o1")
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", r.port)})
	defer rdb.Close()
	held := func(name string) (node, sid string) {
		raw, err := rdb.Get(context.Background(), "{smcp}:name:"+name).Result()
		require.NoError(t, err)
		var e struct{ Node, Sid string }
		require.NoError(t, json.Unmarshal([]byte(raw), &e))
		return e.Node, e.Sid
	}
	node1, sid1 := held("c1")
	_, sid2 := held("c2")

	pending := map[string]chan []any{}
	for _, c := range []struct {
		p    *peer
		name string
	}{{c1, "c1"}, {c2, "c2"}} {
		ch := make(chan []any, 1)
		pending[c.name] = ch
		go func() {
			vals, _ := tryCall(agent, protocol.EventGetConfig, map[string]any{"agent": "a1", "computer": c.name, "req_id": "r-" + c.name}, 3*wait)
			ch <- vals
		}()
		c.p.next(protocol.EventGetConfig) // in flight on node 1
	}

	const forger = "0123456789abcdef"
	publish := func(msg map[string]any) {
		raw, err := json.Marshal(map[string]any{
			"uid": "forger", "nsp": protocol.Namespace, "type": 9, // SERVER_SIDE_EMIT
			"data": map[string]any{"packet": []any{"smcp:cluster", msg}},
		})
		require.NoError(t, err)
		require.NoError(t, rdb.SPublish(context.Background(), "smcp#"+protocol.Namespace+"#", raw).Err())
	}
	// Refused: each would fail a request if it were taken.
	publish(map[string]any{"type": "computer_gone", "node": "not-a-node-id", "sid": sid1, "name": "c1", "office": "o1"})
	publish(map[string]any{"type": "computer_lost", "node": forger, "sid": sid2, "name": "c2", "office": "o1", "dead": "not-a-node-id"})
	publish(map[string]any{"type": "computer_lost", "node": forger, "sid": sid2, "name": "c2", "office": "o1"})
	publish(map[string]any{"type": "computer_gone", "node": forger, "sid": sid1, "name": strings.Repeat("c", 300), "office": "o1"})
	publish(map[string]any{"type": "fail_everything", "node": forger})
	publish(map[string]any{"type": "computer_gone", "sid": sid1, "name": "c1", "office": "o1"})
	// Taken: in order, after the refused ones.
	publish(map[string]any{"type": "computer_lost", "node": forger, "sid": sid1, "name": "c1", "office": "o1", "dead": node1})
	publish(map[string]any{"type": "computer_gone", "node": node1, "sid": sid2, "name": "c2", "office": "o1"})

	e := requireError(t, <-pending["c1"], protocol.CodeUnavailable)
	require.Equal(t, "node_down", e.Details["reason"])
	e = requireError(t, <-pending["c2"], protocol.CodeNotFound)
	require.Equal(t, "computer_disconnected", e.Details["reason"])
}

// TestClusterPeerCount routes across nodes while the number of live nodes
// a node knows from its heartbeat is wrong, both ways: a node started after
// the last heartbeat (the request reaches its Computer and is answered, not
// refused as unconfirmed), and a node killed before its lease expired (a
// request for a name no node has is answered 404 without waiting for the
// lease or the request's timeout).
func TestClusterPeerCount(t *testing.T) {
	r := startRedis(t)
	// A lease of a minute: no heartbeat corrects the count during the test.
	opts := []server.Option{server.WithNodeLease(time.Minute), server.WithRequestTimeout(30 * time.Second)}
	first := startNode(t, r, opts...)
	agent := dial(t, first.url).mustJoin(protocol.RoleAgent, "a1", "o1")
	late := startNodes(t, r, 2, opts...)
	c1 := dial(t, late[0].url).mustJoin(protocol.RoleComputer, "c1", "o1")
	agent.next(protocol.NotifyEnterOffice)
	c1.answer(protocol.EventGetTools, toolsAnswer)
	for i := range 3 {
		vals, err := tryCall(agent, protocol.EventGetTools, getTools("a1", "c1", fmt.Sprint("late-", i)), 10*time.Second)
		require.NoError(t, err)
		_, isErr := errorCode(vals)
		require.False(t, isErr, "answer from a node the sender had not counted: %v", vals)
	}

	late[1].kill()
	start := time.Now()
	vals, err := tryCall(agent, protocol.EventGetTools, getTools("a1", "ghost", "dead-counted"), 20*time.Second)
	require.NoError(t, err)
	requireError(t, vals, protocol.CodeNotFound)
	t.Logf("404 with a dead node still counted after %v", time.Since(start).Round(time.Millisecond))
	vals, err = tryCall(agent, protocol.EventGetTools, getTools("a1", "c1", "after-kill"), 10*time.Second)
	require.NoError(t, err)
	_, isErr := errorCode(vals)
	require.False(t, isErr, "answer with a dead node still counted: %v", vals)
}

// TestClusterForgedRequest publishes routed requests in the adapter's
// MessagePack form straight to Redis, as a rogue node would: a request whose
// JSON text is not one JSON value never reaches the Computer, and the same
// message with a valid text does (so the first one was refused, not lost);
// the refusal is logged at the node's next heartbeat.
func TestClusterForgedRequest(t *testing.T) {
	r := startRedis(t)
	var logs syncBuffer
	n := startNodes(t, r, 1, server.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), server.WithNodeLease(time.Second))
	c1 := dial(t, n[0].url).mustJoin(protocol.RoleComputer, "c1", "o1")
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", r.port)})
	defer rdb.Close()
	publish := func(text string) {
		// The JSON text as the Server's MessagePack extension (type 83).
		ext := append([]byte{0xc7, byte(len(text)), 83}, text...)
		raw, err := msgpack.Marshal(map[string]any{
			"uid": "forger", "nsp": protocol.Namespace, "type": 3, // BROADCAST
			"data": map[string]any{
				"packet":    map[string]any{"type": 2, "nsp": protocol.Namespace, "data": []any{protocol.EventGetConfig, msgpack.RawMessage(ext)}},
				"requestId": "forged",
				"opts":      map[string]any{"rooms": []string{"computer:2:o1:2:c1"}},
			},
		})
		require.NoError(t, err)
		require.NoError(t, rdb.SPublish(context.Background(), "smcp#"+protocol.Namespace+"#", raw).Err())
	}
	publish(`{"agent":"a1","computer":"c1","req_id":"bad"`)
	publish(`{"agent":"a1","computer":"c1","req_id":"good"}`)
	got := c1.next(protocol.EventGetConfig).(map[string]any)
	require.Equal(t, "good", got["req_id"])
	c1.noEvent(protocol.EventGetConfig)
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), "a relayed request was not one JSON value")
	}, wait, 50*time.Millisecond, "no log line for the refused request")
}

// TestClusterForgedAnswers publishes messages straight to the nodes' answer
// channels (where a node's routed requests are counted and answered), as a
// rogue node would: a message that is not the adapter's MessagePack
// response, or of another type, is refused with a log line; an answer to a
// request id no call has is dropped; an answer whose text is not one JSON
// value fails the request it names with 500, never reaching the Agent as
// it is. The Computer itself never answers.
func TestClusterForgedAnswers(t *testing.T) {
	r := startRedis(t)
	var logs syncBuffer
	n := startNodes(t, r, 2, server.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), server.WithNodeLease(60*time.Second))
	c1 := dial(t, n[1].url).mustJoin(protocol.RoleComputer, "c1", "o1")
	agent := dial(t, n[0].url).mustJoin(protocol.RoleAgent, "a1", "o1")
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", r.port)})
	defer rdb.Close()
	channels, err := rdb.PubSubShardChannels(context.Background(), "smcp#"+protocol.Namespace+"#*#answers#").Result()
	require.NoError(t, err)
	require.Len(t, channels, 2, "one answer channel per node")

	result := make(chan []any, 1)
	go func() {
		vals, _ := tryCall(agent, protocol.EventGetConfig, map[string]any{"agent": "a1", "computer": "c1", "req_id": "r1"}, 3*wait)
		result <- vals
	}()
	c1.next(protocol.EventGetConfig) // in flight: node 0's first routed request
	publish := func(msg any) {
		raw, ok := msg.([]byte)
		if !ok {
			raw, err = msgpack.Marshal(msg)
			require.NoError(t, err)
		}
		for _, ch := range channels {
			require.NoError(t, rdb.SPublish(context.Background(), ch, raw).Err())
		}
	}
	ack := func(id string, text string) map[string]any {
		return map[string]any{"uid": "forger", "nsp": protocol.Namespace, "type": 12, // BROADCAST_ACK
			"data": map[string]any{"requestId": id, "packet": []any{[]byte(text)}}}
	}
	publish([]byte("not MessagePack"))
	wrongType := ack("smcp-1", `{"forged":true}`)
	wrongType["type"] = 10 // SERVER_SIDE_EMIT_RESPONSE
	publish(wrongType)
	wrongNsp := ack("smcp-1", `{"forged":true}`)
	wrongNsp["nsp"] = "/other"
	publish(wrongNsp)
	publish(ack("smcp-99", `{"forged":true}`)) // no such call
	select {
	case vals := <-result:
		t.Fatalf("the request ended on a refused or unmatched message: %v", vals)
	case <-time.After(300 * time.Millisecond):
	}
	publish(ack("smcp-1", `{"forged":`))
	e := requireError(t, <-result, protocol.CodeInternal)
	require.Contains(t, e.Message, "unreadable")
	require.Contains(t, logs.String(), "cluster message refused on the answer channel")
}
