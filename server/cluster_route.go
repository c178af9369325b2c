package server

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/zishang520/socket.io/servers/socket/v3"
)

// This file holds what the office and routing handlers do in cluster mode
// (README.md, Cluster mode): the same rules and codes as on one node, with
// the cluster-wide part of each decision taken atomically in Redis.

// errElsewhere tells route that the target is not on this node.
var errElsewhere = &protocol.Error{Code: protocol.CodeNotFound, Message: "elsewhere"}

// joinCluster is join for a cluster node: the session checks here, the
// name, one-Agent and office-size checks in one Redis script.
func (s *Server) joinCluster(sess *session, role protocol.Role, name, office string) (bool, *protocol.Error) {
	sess.opMu.Lock()
	defer sess.opMu.Unlock()
	s.mu.Lock()
	if noop, err := s.sessionChecksLocked(sess, role, name, office); noop || err != nil {
		s.mu.Unlock()
		return noop, err
	}
	oldOffice, oldName := sess.office, sess.name
	s.mu.Unlock()
	if err := s.cl.join(sess, role, name, office, oldOffice, oldName); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applyJoinLocked(sess, role, name, office)
	return false, nil
}

// leaveCluster is leave for a cluster node.
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
		ret.Sessions = append(ret.Sessions, protocol.SessionInfo{Sid: m.Sid, Name: m.Name, Role: m.Role, OfficeID: office})
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

// routeRemote routes a request to a Computer that is not on this node: the
// same checks and answers as on one node, then the Socket.IO adapter's
// cross-node emit to the room of that office and name, whose single ack
// comes back here. No Computer in the room on any node: 404, as for an
// unknown name. Nothing else reaches Redis on the request's path: which
// node holds the Computer is looked up by the heartbeat, for the calls
// still in flight then (cluster.go, checkTargets), so that the request
// fails with 503 once that node's lease has expired. forward is the
// request as the Agent sent it (its bytes when it came from the wire).
func (s *Server) routeRemote(sess *session, info *protocol.EventInfo, forward any, agent, computer, reqID string, r *reply, timeout time.Duration) {
	c, perr := s.admitRemote(sess, info.Name, agent, computer, reqID, r, timeout)
	if perr != nil {
		s.refuse(sess, info.Name, reqID, r, perr)
		return
	}
	ack := socket.Ack(func(args []any, err error) { s.answeredRemote(c, args, err) })
	// The adapter's own timer only frees its state: the Server's timer
	// answers first.
	if err := s.nsp.To(computerRoom(c.office, computer)).Timeout(timeout+time.Second).Emit(info.Name, forward, ack); err != nil {
		s.finish(c, protocol.NewInternal("could not forward %s: %v", info.Name, err))
	}
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
	if !s.cl.up.Load() { // the emit could not reach another node
		return nil, protocol.NewUnavailable("cluster state unreachable; try again")
	}
	if len(sess.outbound) >= s.cfg.maxInFlight {
		return nil, protocol.NewTooManyRequests("this agent already has %d requests in flight", len(sess.outbound))
	}
	if sess.conn != nil && sess.conn.out.congested() {
		return nil, protocol.NewUnavailable("this agent is not reading its connection")
	}
	c := &call{event: event, reqID: reqID, agent: sess, computerName: computer, office: sess.office, reply: r}
	s.startCallLocked(c, timeout)
	return c, nil
}

// answeredRemote receives the adapter's merged acks: one entry per client
// that answered. None: no node counted a Computer of that name in the
// office. Then the lookup decides: no such Computer is 404, as on one
// node; a Computer registered there on a live node means the adapter's
// count missed it (Redis Pub/Sub delivers at most once), and the request
// may or may not have reached it: 503 with reason "not_confirmed", at once,
// instead of a 404 that would be wrong or a wait for the timeout.
func (s *Server) answeredRemote(c *call, args []any, err error) {
	if len(args) > 0 {
		vals, ok := fromNode(args)
		if !ok {
			s.finishLogged(c, protocol.NewInternal("the answer of computer %q came from its node unreadable", c.computerName))
			return
		}
		s.answered(c, vals)
		return
	}
	if err != nil {
		return // the adapter timed out: the Server's own timer answers
	}
	s.cl.spawn(func() {
		e, alive, lerr := s.cl.lookupName(c.computerName)
		switch {
		case lerr != nil:
			s.finish(c, protocol.NewUnavailable("cluster state unreachable; try again"))
		case e == nil || e.Office != c.office || e.Role != protocol.RoleComputer:
			s.finish(c, protocol.NewNotFound("no computer named %q in this office", clip(c.computerName, 64)))
		case !alive:
			if s.finish(c, protocol.NewUnavailable("computer %q is on a node that stopped answering", c.computerName).With("reason", "node_down")) {
				s.log.Warn("request failed: the computer's node lease has expired", "event", c.event, "req_id", c.reqID, "computer", c.computerName, "node", e.Node)
			}
		default:
			if s.finish(c, protocol.NewUnavailable("delivery of %s to computer %q could not be confirmed; try again", c.event, c.computerName).With("reason", "not_confirmed")) {
				s.log.Warn("cross-node delivery not confirmed", "event", c.event, "req_id", c.reqID, "computer", c.computerName, "node", e.Node)
			}
		}
	})
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
		c.reply.send(e)
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
