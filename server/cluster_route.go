package server

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/zishang520/socket.io/parsers/socket/v3/parser"
	"github.com/zishang520/socket.io/servers/socket/v3"
	"github.com/zishang520/socket.io/v3/pkg/types"
)

// This file holds what the office and routing handlers do in cluster mode
// (README.md, Cluster mode): the same rules and codes as on one node, with
// the cluster-wide part of each decision taken atomically in Redis.

// errElsewhere tells route that the target is not on this node.
var errElsewhere = &protocol.Error{Code: protocol.CodeNotFound, Message: "elsewhere"}

// joinCluster is join for a cluster node: the session checks here, the
// name, one-Agent and office-size checks in one Redis script.
func (s *Server) joinCluster(sess *session, role protocol.Role, name, office string, ext []string) (bool, *protocol.Error) {
	sess.opMu.Lock()
	defer sess.opMu.Unlock()
	s.mu.Lock()
	if noop, err := s.sessionChecksLocked(sess, role, name, office); noop || err != nil {
		s.mu.Unlock()
		return noop, err
	}
	if err := s.allowOfficeEventLocked(office, protocol.EventJoinOffice); err != nil {
		s.mu.Unlock()
		return false, err
	}
	oldOffice, oldName := sess.office, sess.name
	s.mu.Unlock()
	if err := s.cl.join(sess, role, name, office, oldOffice, oldName, ext); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applyJoinLocked(sess, role, name, office, ext)
	return false, nil
}

// leaveCluster is leave for a cluster node, for an office the session's
// key may enter.
func (s *Server) leaveCluster(sess *session, office string) (string, *protocol.Error) {
	sess.opMu.Lock()
	defer sess.opMu.Unlock()
	s.mu.Lock()
	if sess.office != office {
		s.mu.Unlock()
		if members, err := s.cl.members(office); err == nil && len(members) == 0 {
			return "", protocol.NewRoomNotFound("office %q does not exist", office)
		}
		return "", protocol.NewNotInRoom("this session is not in office %q", office)
	}
	e := entry{Node: s.cl.node, Sid: sess.id, Role: sess.role, Name: sess.name, Office: office}
	s.leaveLocked(sess)
	s.mu.Unlock()
	s.cl.release(e)
	return e.Name, nil
}

// clusterGone runs after a session's local cleanup: its entry leaves Redis,
// and the other nodes fail at once what they routed to it.
func (s *Server) clusterGone(sess *session, role protocol.Role, name, office string) {
	if s.cl.ctx.Err() != nil {
		return // closing: the node released everything and told the others
	}
	s.cl.release(entry{Node: s.cl.node, Sid: sess.id, Role: role, Name: name, Office: office})
	if role == protocol.RoleComputer {
		s.cl.publish(msgGone, map[string]any{"sid": sess.id, "name": name, "office": office})
	}
}

// roomSessionsCluster lists the office's sessions on every live node.
func (s *Server) roomSessionsCluster(sess *session, agent, office string) (*protocol.ListRoomRet, *protocol.Error) {
	s.mu.Lock()
	err := s.checkAgentLocked(sess, agent, protocol.EventListRoom)
	if err == nil && office != sess.office {
		err = protocol.NewCrossRoomAccess("an agent may only list its own office %q", sess.office)
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	members, rerr := s.cl.members(office)
	if rerr != nil {
		return nil, protocol.NewUnavailable("cluster state unreachable; try again")
	}
	ret := &protocol.ListRoomRet{Sessions: []protocol.SessionInfo{}}
	for _, m := range members {
		if m.Office != office {
			continue
		}
		ret.Sessions = append(ret.Sessions, sessionInfo(m.Sid, m.Name, m.Role, office, m.Version, m.Ext))
	}
	slices.SortFunc(ret.Sessions, func(a, b protocol.SessionInfo) int {
		return cmp.Or(cmp.Compare(a.Role, b.Role), cmp.Compare(a.Name, b.Name))
	})
	return ret, nil
}

// computerRoom is the Socket.IO room a Computer joins on a cluster node for
// its office and name: a request emitted to it from another node reaches
// that Computer only if it is in that office, so office isolation does not
// depend on a lookup. The lengths make the name unambiguous.
func computerRoom(office, name string) socket.Room {
	return socket.Room(fmt.Sprintf("computer:%d:%s:%d:%s", len(office), office, len(name), name))
}

// computerEventRoom is the room a Computer joins on a cluster node for one
// client:* event that not every generation's Computers answer, when it
// answers it (computerRooms, generation.go).
func computerEventRoom(office, name, event string) socket.Room {
	return computerRoom(office, name) + socket.Room(":"+event)
}

// remoteWait is how long a request sent to another node waits for a node
// to count its Computer before the cluster state is asked where it is, and
// how long a Computer the state places on a live node, but that no node
// counted, is given before the request fails as not confirmed.
const remoteWait = time.Second

// remote is what a node knows of a request it sent to the other nodes,
// guarded by Server.mu.
type remote struct {
	expected int  // nodes expected to count: the live nodes when it was sent
	reported int  // nodes that counted
	reached  bool // a node counted the Computer: its answer is awaited
	timer    *time.Timer
}

// routeRemote routes a request to a Computer that is not on this node: the
// same checks and answers as on one node, then a cross-node broadcast with
// acknowledgement, in the Socket.IO adapter's own message (a BROADCAST with
// a request id), to the room of that office and name (computerRoom), which
// exists on at most one node. Each node's adapter delivers it to its
// clients in that room as it does any such broadcast, and reports how many
// it reached and the Computer's ack; both come back on this node's answer
// channel (answerAdapter), read by the node's own loop (cluster.answers)
// and matched to the call by its request id here, so the answer is relayed
// as soon as it arrives and nothing of the request outlives the call.
// Nothing else reaches Redis on the request's path: the adapter's own
// completeness check (every subscribed node counted, every counted client
// answered) would first ask Redis how many nodes there are, one more round
// trip per request, and wait for the slowest node's count. The number of
// nodes comes from the heartbeat instead (cluster.peers), and only decides
// when "no node has it" is known. Then, or when no node has counted the
// Computer within remoteWait, the cluster state says where it is
// (remoteMissed): nowhere in this office is 404, as on one node; on a node
// whose lease expired is 503 at once. Which node holds a Computer that was
// reached is looked up by the heartbeat for the calls still in flight then
// (cluster.go, checkTargets), so that the request fails with 503 once that
// node's lease has expired. forward is the request as the Agent sent it
// (its bytes when it came from the wire), m its decoded value; the
// request crosses with its caller (nodeCaller), which the Computer's node
// turns into protocol.CallerVersionMember for an smcp-go Computer.
func (s *Server) routeRemote(sess *session, info *protocol.EventInfo, forward any, m map[string]any, agent, computer, reqID string, r *reply, timeout time.Duration) {
	c, perr := s.admitRemote(sess, info.Name, agent, computer, reqID, r, timeout)
	if perr != nil {
		s.refuse(sess, info.Name, reqID, r, notForwarded(perr))
		return
	}
	room := routeRoom(c.office, computer, info.Name)
	_, forged := m[protocol.CallerVersionMember]
	caller := &nodeCaller{Version: sess.gen.String(), Office: c.office, Name: computer, Forged: forged}
	if p, _ := m["progress"].(bool); p && asksProgress(info.Name) {
		s.mu.Lock()
		c.progress = true
		s.mu.Unlock()
		caller.Progress = &nodeProgress{Uid: string(s.cl.adapter.Uid()), ID: c.remoteID, Agent: agent, ReqID: reqID}
	}
	packet := &parser.Packet{Type: parser.EVENT, Data: []any{info.Name, forward, caller}}
	if err := s.cl.adapter.publishRequest(c.remoteID, packet, room); err != nil {
		s.finish(c, notForwarded(protocol.NewUnavailable("cluster state unreachable; try again")))
		return
	}
	// This node's own count, as the adapter's broadcast would make it: a
	// Computer of that name that joined here since route looked is
	// reached here (rare); otherwise none.
	if _, ok := s.nsp.Adapter().Rooms().Load(room); ok {
		s.nsp.Adapter().BroadcastWithAck(packet, &socket.BroadcastOptions{
			Rooms:  types.NewSet(room),
			Except: types.NewSet[socket.Room](),
			Flags:  &socket.BroadcastFlags{Local: true},
		}, func(n uint64) { s.remoteCounted(c, n) }, func(args []any, _ error) { s.remoteAnswered(c, args) })
		return
	}
	s.remoteCounted(c, 0)
}

func (s *Server) admitRemote(sess *session, event, agent, computer, reqID string, r *reply, timeout time.Duration) (*call, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return nil, protocol.NewInternal("server is shutting down")
	}
	if err := s.checkAgentLocked(sess, agent, event); err != nil {
		return nil, err
	}
	if !s.cl.up.Load() || s.cl.pub.congested() { // the request could not reach another node
		return nil, protocol.NewUnavailable("cluster state unreachable; try again")
	}
	if len(sess.outbound) >= s.cfg.maxInFlight {
		return nil, protocol.NewTooManyRequests("this agent already has %d requests in flight", len(sess.outbound))
	}
	if sess.conn != nil && sess.conn.out.congested() {
		return nil, protocol.NewUnavailable("this agent is not reading its connection")
	}
	c := &call{event: event, reqID: reqID, agent: sess, computerName: computer, office: sess.office, reply: r}
	c.rem = &remote{expected: max(1, int(s.cl.peers.Load()))}
	c.remoteID = s.cl.requestID()
	s.cl.remote[c.remoteID] = c
	c.rem.timer = time.AfterFunc(remoteWait, func() { s.remoteMissed(c, false) })
	s.startCallLocked(c, timeout)
	return c, nil
}

// remoteCounted receives one node's count of the clients it sent the
// request to.
func (s *Server) remoteCounted(c *call, n uint64) {
	s.mu.Lock()
	r := c.rem
	if c.done || r.reached {
		s.mu.Unlock()
		return
	}
	r.reported++
	if r.reported > r.expected {
		// A node joined since the last heartbeat: count it from now on.
		s.cl.sawPeers(int64(r.reported))
	}
	if n > 0 {
		r.reached = true
		r.timer.Stop()
	}
	none := !r.reached && r.reported >= r.expected
	if none {
		r.timer.Stop()
	}
	s.mu.Unlock()
	if none {
		s.remoteMissed(c, true)
	}
}

// remoteAnswered receives the Computer's ack: from another node, each value
// is a binary string holding the JSON text the Computer sent
// (answerAdapter); from this node (a Computer that joined here meanwhile),
// the raw values.
func (s *Server) remoteAnswered(c *call, args []any) {
	s.mu.Lock()
	if r := c.rem; !c.done && !r.reached && r.reported >= r.expected {
		// Every node counted had none: this one was not counted.
		s.cl.sawPeers(int64(r.reported + 1))
	}
	s.mu.Unlock()
	vals, ok := fromNode(args)
	if !ok {
		s.finishLogged(c, protocol.NewInternal("the answer of computer %q came from its node unreadable", c.computerName))
		return
	}
	s.answered(c, vals)
}

// remoteMissed asks the cluster state where the Computer is when no node
// has counted it: every node reported none (all), or remoteWait passed.
// Nowhere in the office: 404, as on one node. On a node whose lease
// expired: 503 at once. On a live node: the request may or may not reach
// it (a node that joined since the last heartbeat, a Computer joining or
// leaving, a message lost: Redis Pub/Sub delivers at most once); it is
// given remoteWait more for a count, then fails with 503 "not_confirmed"
// if every node had reported none, instead of a 404 that would be wrong
// or a wait for its timeout. Otherwise the heartbeat watches its node.
func (s *Server) remoteMissed(c *call, all bool) {
	s.cl.spawn(func() {
		e, alive, lerr := s.cl.lookupName(c.computerName)
		s.mu.Lock()
		reached := c.done || c.rem.reached
		s.mu.Unlock()
		switch {
		case reached: // answered, or a node counted it meanwhile
		case lerr != nil:
			s.finish(c, protocol.NewUnavailable("cluster state unreachable; try again"))
		case e == nil || e.Office != c.office || e.Role != protocol.RoleComputer:
			s.finish(c, protocol.ComputerNotFound(c.agent.gen, clip(c.computerName, 64)))
		case alive && !e.gen().Answers(c.event, e.Ext):
			// Not in the event's room on any node: it does not answer it.
			s.finish(c, notSupported(c.event, c.computerName, e.gen()))
		case !alive:
			if s.finish(c, protocol.NewUnavailable("computer %q is on a node that stopped answering", c.computerName).With("reason", "node_down")) {
				s.log.Warn("request failed: the computer's node lease has expired", "event", c.event, "req_id", c.reqID, "computer", c.computerName, "node", e.Node)
			}
		default:
			s.mu.Lock()
			defer s.mu.Unlock()
			if c.done || c.rem.reached {
				return
			}
			c.remoteNode, c.remoteSid = e.Node, e.Sid
			if all {
				c.rem.timer = time.AfterFunc(remoteWait, func() { s.notConfirmed(c, e.Node) })
			}
		}
	})
}

// notConfirmed fails a request no node counted although its Computer is
// registered on a live node.
func (s *Server) notConfirmed(c *call, node string) {
	s.mu.Lock()
	reached := c.rem.reached
	s.mu.Unlock()
	if reached {
		return
	}
	if s.finish(c, protocol.NewUnavailable("delivery of %s to computer %q could not be confirmed; try again", c.event, c.computerName).With("reason", "not_confirmed")) {
		s.log.Warn("cross-node delivery not confirmed", "event", c.event, "req_id", c.reqID, "computer", c.computerName, "node", node)
	}
}

// failRemote answers at once the calls routed to other nodes that match.
func (s *Server) failRemote(match func(*call) bool, fail func(*call) *protocol.Error) {
	s.mu.Lock()
	var failed []*call
	for c := range s.calls {
		if c.computer == nil && match(c) {
			s.removeCallLocked(c)
			failed = append(failed, c)
		}
	}
	s.mu.Unlock()
	for _, c := range failed {
		e := fail(c)
		s.log.Warn("request failed", "event", c.event, "req_id", c.reqID, "computer", c.computerName, "code", int(e.Code), "reason", e.Message)
		c.reply.fail(e)
		s.m.routedOutcome(c.event, e, c.started)
	}
	s.settled()
}

// failNode fails the calls routed to the Computers of a node whose lease
// expired, with 503, instead of letting them wait for their timeout.
func (s *Server) failNode(node string) {
	s.failRemote(func(c *call) bool { return c.remoteNode == node }, nodeDown)
}

// failLost fails the calls routed to a Computer session of a node that was
// reaped, with 503 as failNode.
func (s *Server) failLost(node, sid, name, office string) {
	s.failRemote(matchTarget(node, sid, name, office), nodeDown)
}

func nodeDown(c *call) *protocol.Error {
	return protocol.NewUnavailable("computer %q is on a node that stopped answering", c.computerName).With("reason", "node_down")
}

// clusterShutdown tells the office members on other nodes that this node's
// sessions leave (the local ones are told by notifyShutdown), and the other
// nodes that its Computers are gone, then frees the node's state in Redis.
func (s *Server) clusterShutdown(ctx context.Context) {
	type leaving struct {
		office, sid string
		role        protocol.Role
		p           map[string]any
	}
	var ls []leaving
	var local []socket.Room
	s.mu.Lock()
	for _, sess := range s.sessions {
		local = append(local, socket.Room(sess.sock.Id()))
		if sess.office != "" {
			ls = append(ls, leaving{sess.office, sess.id, sess.role, presence(sess)})
		}
	}
	s.mu.Unlock()
	for _, l := range ls {
		if err := s.nsp.To(socket.Room(l.office)).Except(local...).Emit(protocol.NotifyLeaveOffice, l.p); err != nil {
			s.log.Warn("leave broadcast failed", "office_id", l.office, "error", err.Error())
		}
		if l.role == protocol.RoleComputer {
			s.cl.publish(msgGone, map[string]any{"sid": l.sid, "name": l.p["computer"], "office": l.office})
		}
	}
	s.cl.close(ctx)
}

// clusterReady is nil on a single node; a cluster node is ready while
// Redis answers.
func (s *Server) clusterReady(ctx context.Context) error {
	if s.cl == nil {
		return nil
	}
	return s.cl.ready(ctx)
}

// clusterPeers is the number of live nodes (0 on a single node).
func (s *Server) clusterPeers() int {
	if s.cl == nil {
		return 0
	}
	return int(s.cl.peers.Load())
}
