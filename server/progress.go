package server

import (
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/zishang520/socket.io/servers/socket/v3"
	"golang.org/x/time/rate"
)

// asksProgress reports whether a routed request of event may ask for its
// progress (a progress member): client:tool_call and client:read_resource.
func asksProgress(event string) bool {
	return event == protocol.EventToolCall || event == protocol.EventReadResource
}

// The notify:tool_progress the Server relays for one call: at most
// progressRate a second, in bursts of progressBurst; the others are
// dropped (a Computer sends at most one every 100 ms).
const (
	progressRate  = 20
	progressBurst = 10
)

// toolProgress handles server:tool_progress, an smcp-go extension
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#updates-and-notifications,
// Tool-call progress): a Computer reports the progress of a client:tool_call
// or client:read_resource routed to it that asked for progress. The Server
// relays it as notify:tool_progress to the one Agent that made the request,
// and only when the sender is a Computer in an office naming itself (403),
// the request with that agent and req_id is in flight to this very Computer
// (404) and asked for progress (403). Relays beyond progressRate a second
// for one request are dropped.
func (s *Server) toolProgress(sess *session, payload any, r *reply) {
	const ev = protocol.EventToolProgress
	if err := sess.gen.ValidateValue(ev, protocol.Request, payload); err != nil {
		s.refuse(sess, ev, reqIDOf(payload), r, protocol.AsError(err))
		return
	}
	m := payload.(map[string]any)
	reqID := m["req_id"].(string)
	relayed, send, err := s.relayProgress(sess, m)
	if send != nil {
		send() // to the node the request came from (cluster_progress.go)
	}
	if err != nil {
		s.refuse(sess, ev, reqID, r, err)
		return
	}
	if !relayed {
		s.log.Debug("tool progress dropped: too frequent", "req_id", reqID, "computer", m["computer"])
	}
	r.ok()
}

// relayProgress relays a report of a request routed from this node, or
// returns in send the function that sends one routed from another node to
// that node (to run without s.mu).
func (s *Server) relayProgress(sess *session, m map[string]any) (relayed bool, send func(), err *protocol.Error) {
	const ev = protocol.EventToolProgress
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess.role != protocol.RoleComputer {
		return false, nil, protocol.NewForbidden("%s may only be sent by a computer", ev)
	}
	if sess.office == "" {
		return false, nil, protocol.NewNotInRoom("join an office before sending %s", ev)
	}
	if computer := m["computer"].(string); computer != sess.name {
		return false, nil, protocol.NewForbidden("computer field %q is not the sender's registered name", clip(computer, 64))
	}
	agent, reqID := m["agent"].(string), m["req_id"].(string)
	var c *call
	for in := range sess.inbound {
		if asksProgress(in.event) && in.reqID == reqID && in.agent.name == agent {
			c = in
			break
		}
	}
	if c == nil && s.cl != nil {
		if send, found := s.remoteProgressLocked(sess, m); found {
			return send != nil, send, nil
		}
	}
	if c == nil || c.done {
		return false, nil, protocol.NewNotFound("no tool call or read %q of agent %q is in flight to this computer", clip(reqID, 128), clip(agent, 64)).
			With("req_id", clip(reqID, 128))
	}
	if !c.progress {
		return false, nil, protocol.NewForbidden("request %q did not ask for progress", clip(reqID, 128))
	}
	if c.progressLimit == nil {
		c.progressLimit = rate.NewLimiter(progressRate, progressBurst)
	}
	if !c.progressLimit.Allow() {
		return false, nil, nil
	}
	out := map[string]any{"computer": sess.name, "agent": agent, "req_id": reqID, "progress": m["progress"]}
	for _, k := range []string{"total", "message"} {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	if err := s.nsp.To(socket.Room(c.agent.sock.Id())).Emit(protocol.NotifyToolProgress, out); err != nil {
		s.log.Error("progress relay failed", "req_id", reqID, "agent", agent, "error", err.Error())
	}
	return true, nil, nil
}
