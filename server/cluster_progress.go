package server

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	clusteradapter "github.com/zishang520/socket.io/adapters/adapter/v3"
	"github.com/zishang520/socket.io/servers/socket/v3"
	"golang.org/x/time/rate"
)

// Progress across cluster nodes
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#updates-and-notifications,
// Tool-call progress). A client:tool_call or client:read_resource that
// asked for progress and is routed to a Computer on another node crosses
// with its progress reference (nodeProgress, in its nodeCaller): the
// requesting node's adapter uid, the request's id between nodes, and the
// Agent's name and req_id. The Computer's node notes it when it writes the
// request to its Computer (wireEncoder.relayed) and forgets it when the
// Computer's answer leaves (answerAdapter.DoPublishResponse), when the
// Computer's session ends, or past the longest any request may run. While it
// holds it, that Computer's server:tool_progress for that agent and req_id
// is checked and rate-limited there as on one node and sent to the
// requesting node's answer channel (sendProgress), ahead of the answer,
// which relays it as notify:tool_progress to the Agent if the call is still
// in flight and asked for progress. A routed
// request that did not ask crosses without a reference: on the Computer's
// node its reports are 404, as for a request it does not know.

// nodeProgress is the progress reference of a routed request crossing
// nodes (nodeCaller.Progress).
type nodeProgress struct {
	Uid   string `json:"u"` // the requesting node's adapter uid
	ID    string `json:"i"` // the request's id between nodes (cluster.requestID)
	Agent string `json:"a"`
	ReqID string `json:"r"`
}

func (p *nodeProgress) valid() bool {
	return p.Uid != "" && len(p.Uid) <= 64 && strings.HasPrefix(p.ID, nodeRequestPrefix) && len(p.ID) <= 64 &&
		p.Agent != "" && len(p.Agent) <= maxFieldLen && p.ReqID != "" && len(p.ReqID) <= 128
}

// remoteRef names a request routed from another node: its node's adapter
// uid and its id there.
type remoteRef struct{ uid, id string }

// remoteIn is a request that asked for progress, routed from another node
// to a Computer of this one, guarded by Server.mu.
type remoteIn struct {
	ref      remoteRef
	sess     *session // the Computer's
	agent    string
	reqID    string
	computer string
	office   string
	until    time.Time
	limit    *rate.Limiter
}

// maxRemoteIn bounds the requests from other nodes one Computer session
// holds progress references for; past it a request's progress is refused
// (404) on this node.
const maxRemoteIn = 1024

func remoteInKey(agent, reqID string) string { return agent + "\x00" + reqID }

// noteRemoteProgress records the progress reference of a request from
// another node written to the Computer office/name of this node.
func (s *Server) noteRemoteProgress(office, name string, p *nodeProgress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.names[name]
	if sess == nil || sess.role != protocol.RoleComputer || sess.office != office {
		return
	}
	now := time.Now()
	if len(sess.remoteIn) >= maxRemoteIn {
		for k, in := range sess.remoteIn {
			if now.After(in.until) {
				s.dropRemoteInLocked(sess, k, in)
			}
		}
		if len(sess.remoteIn) >= maxRemoteIn {
			s.log.Warn("progress of a request from another node not relayed: too many in flight to this computer", "computer", clip(name, 64), "req_id", clip(p.ReqID, 128))
			return
		}
	}
	if sess.remoteIn == nil {
		sess.remoteIn = map[string]*remoteIn{}
	}
	if s.remoteIn == nil {
		s.remoteIn = map[remoteRef]*remoteIn{}
	}
	k := remoteInKey(p.Agent, p.ReqID)
	if old := sess.remoteIn[k]; old != nil {
		s.dropRemoteInLocked(sess, k, old)
	}
	in := &remoteIn{ref: remoteRef{p.Uid, p.ID}, sess: sess, agent: p.Agent, reqID: p.ReqID, computer: name, office: office,
		until: now.Add(s.cfg.maxToolTimeout + s.cfg.toolCallMargin + s.cfg.requestTimeout)}
	sess.remoteIn[k] = in
	s.remoteIn[in.ref] = in
}

func (s *Server) dropRemoteInLocked(sess *session, k string, in *remoteIn) {
	if sess.remoteIn[k] == in {
		delete(sess.remoteIn, k)
	}
	if s.remoteIn[in.ref] == in {
		delete(s.remoteIn, in.ref)
	}
}

// remoteAnswerSent forgets the request from another node whose answer this
// node sends back.
func (s *Server) remoteAnswerSent(uid, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in := s.remoteIn[remoteRef{uid, id}]; in != nil {
		s.dropRemoteInLocked(in.sess, remoteInKey(in.agent, in.reqID), in)
	}
}

// dropSessionRemoteInLocked forgets every request from other nodes to a
// Computer session that ended.
func (s *Server) dropSessionRemoteInLocked(sess *session) {
	for k, in := range sess.remoteIn {
		s.dropRemoteInLocked(sess, k, in)
	}
}

// remoteProgressLocked checks a Computer's report for a request routed to
// it from another node, as relayProgress does for its own; it returns the
// function that sends it to the requesting node, to run without Server.mu,
// nil when the rate drops it, or found false when no such request is held.
func (s *Server) remoteProgressLocked(sess *session, m map[string]any) (send func(), found bool) {
	agent, reqID := m["agent"].(string), m["req_id"].(string)
	k := remoteInKey(agent, reqID)
	in := sess.remoteIn[k]
	if in == nil {
		return nil, false
	}
	if time.Now().After(in.until) {
		s.dropRemoteInLocked(sess, k, in)
		return nil, false
	}
	if in.limit == nil {
		in.limit = rate.NewLimiter(progressRate, progressBurst)
	}
	if !in.limit.Allow() {
		return nil, true
	}
	out := map[string]any{"computer": in.computer, "agent": agent, "req_id": reqID, "progress": m["progress"]}
	for _, key := range []string{"total", "message"} {
		if v, ok := m[key]; ok {
			out[key] = v
		}
	}
	cl, ref := s.cl, in.ref
	return func() { cl.sendProgress(ref, out) }, true
}

// progressAnswer is the type of a progress report on a node's answer
// channel (nodeAnswer), beyond the adapter's own types.
const progressAnswer clusteradapter.MessageType = 64

// sendProgress sends a report to the node that routed the request ref, on
// its answer channel, where the Computer's answer goes too, in the same
// order (the node's publisher keeps it): a report sent before the answer
// is relayed before it.
func (cl *cluster) sendProgress(ref remoteRef, out map[string]any) {
	b, err := json.Marshal(out)
	if err != nil {
		return
	}
	if cl.adapter == nil {
		return
	}
	if string(cl.adapter.Uid()) == ref.uid {
		// Routed from this node to a Computer that joined here meanwhile.
		cl.s.mu.Lock()
		c := cl.remote[ref.id]
		cl.s.mu.Unlock()
		if c != nil {
			cl.onProgress(c, b)
		}
		return
	}
	var msg nodeAnswer
	msg.Nsp, msg.Type = cl.s.nsp.Name(), progressAnswer
	msg.Data.RequestID, msg.Data.Progress = ref.id, b
	payload, err := encodeMsgpack(&msg, len(b)+128)
	if err == nil {
		err = cl.adapter.pub.publish(cl.adapter.answerChannel(clusteradapter.ServerId(ref.uid)), payload)
	}
	if err != nil {
		cl.s.log.Warn("progress not sent to the requesting node", "req_id", out["req_id"], "error", err.Error())
	}
}

// onProgress relays a report another node accepted from its Computer for
// the request c this node routed there: to the one Agent that made it, if
// the request is still in flight, asked for progress, and the report names
// its Computer, Agent and req_id. Anything else is dropped: refused (logged)
// when malformed, at debug level otherwise.
func (cl *cluster) onProgress(c *call, raw []byte) {
	s := cl.s
	var out map[string]any
	if len(raw) > 4096 || json.Unmarshal(raw, &out) != nil {
		if cl.answerErrs.allow() {
			s.log.Warn("cluster message refused on the answer channel: unreadable progress")
		}
		return
	}
	if err := protocol.ValidateValue(protocol.EventToolProgress, protocol.Request, out); err != nil {
		if cl.answerErrs.allow() {
			s.log.Warn("cluster message refused on the answer channel: invalid progress", "error", err.Error())
		}
		return
	}
	s.mu.Lock()
	ok := !c.done && c.progress && c.computerName == out["computer"] && c.agent.name == out["agent"] && c.reqID == out["req_id"]
	var sid socket.SocketId
	if ok {
		sid = c.agent.sock.Id()
	}
	s.mu.Unlock()
	if !ok {
		s.log.Debug("progress from another node dropped: not in flight or not asked for", "req_id", clip(c.reqID, 128))
		return
	}
	if err := s.nsp.To(socket.Room(sid)).Emit(protocol.NotifyToolProgress, out); err != nil {
		s.log.Error("progress relay failed", "req_id", c.reqID, "agent", c.agent.name, "error", err.Error())
	}
}
