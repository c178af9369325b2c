package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/zishang520/socket.io/parsers/socket/v3/parser"
	"github.com/zishang520/socket.io/servers/socket/v3"
	"golang.org/x/time/rate"
)

// call is one routed request in flight: the Agent's ack waits for the
// Computer's single ack value, the timer, or the Computer's disconnect,
// whichever comes first. done and the table entries are guarded by Server.mu.
type call struct {
	seq           uint64
	event         string
	reqID         string
	agent         *session
	computer      *session
	computerName  string
	ackID         uint64 // the id of the Computer's ack in the library's table (admit)
	callerAware   bool   // the Computer is an smcp-go one (it declared extensions): the request names the caller's version (withCaller)
	remoteNode    string // cluster mode: the node holding the Computer (computer is nil), once looked up (checkTargets)
	remoteSid     string
	office        string  // cluster mode: the office the request was routed in
	rem           *remote // cluster mode: a request sent to the other nodes
	remoteID      string  // cluster mode: its request id between nodes (cluster.remote)
	reply         *reply
	timer         *time.Timer
	started       time.Time
	done          bool
	progress      bool          // a client:tool_call or client:read_resource that asked for notify:tool_progress (progress.go)
	progressLimit *rate.Limiter // its relays' rate; nil until the first
}

// route handles every client:* event (spec/protocol.md, Routed requests). The
// checks run in this order: schema (400), sender is an Agent (403) inside an
// office (4103), agent field is the sender's name (403), tool-call timeout
// within its bound (400), the Computer exists in the sender's office (404
// either way), the in-flight caps (429), neither side congested (503). The
// request is then emitted to
// that one Computer's socket with the Server's own timer, and the Computer's
// single ack value goes back to the Agent unchanged. Both travel as the bytes
// their sender wrote when they came from the wire (wireParser): raw holds the
// request's bytes, payload their decoded value, which the checks read. To an
// smcp-go Computer the request goes with the caller's generation appended
// (withCaller; spec/generations.md, Confirmation and extensions).
func (s *Server) route(sess *session, info *protocol.EventInfo, payload any, raw json.RawMessage, r *reply) {
	if err := sess.gen.ValidateValue(info.Name, protocol.Request, payload); err != nil {
		s.refuse(sess, info.Name, reqIDOf(payload), r, protocol.AsError(err))
		return
	}
	m := payload.(map[string]any)
	reqID := m["req_id"].(string)
	timeout := s.cfg.requestTimeout
	if info.Name == protocol.EventToolCall {
		secs, _ := m["timeout"].(float64)
		if limit := s.cfg.maxToolTimeout; secs > limit.Seconds() {
			s.refuse(sess, info.Name, reqID, r, protocol.NewBadRequest("timeout %gs exceeds this Server's maximum of %gs", secs, limit.Seconds()).With("max_timeout", limit.Seconds()))
			return
		}
		timeout = time.Duration(secs*float64(time.Second)) + s.cfg.toolCallMargin
	}
	var forward any = payload
	if raw != nil {
		forward = raw // the bytes the Agent sent, already validated
	}
	c, err := s.admit(sess, info.Name, m["agent"].(string), m["computer"].(string), reqID, r, timeout)
	if err == errElsewhere {
		s.routeRemote(sess, info, forward, m, m["agent"].(string), m["computer"].(string), reqID, r, timeout)
		return
	}
	if err != nil {
		s.refuse(sess, info.Name, reqID, r, notForwarded(err))
		return
	}
	if c.callerAware {
		forward = withCaller(forward, m, sess.gen)
	}
	if p, _ := m["progress"].(bool); p && asksProgress(info.Name) {
		s.mu.Lock()
		c.progress = true
		s.mu.Unlock()
	}
	s.emitCall(c, info.Name, forward)
}

// notForwarded marks a refusal for now (429, 503) of a routed request made
// before the request left the Server: its details say "forwarded": false,
// so that the Agent knows the Computer never saw it and may send it again,
// a client:tool_call included (spec/decisions.md, Agent: retries). A
// refusal once the request was forwarded (a 408, a 503 for a node that
// stopped answering, a relayed answer) carries no such mark, nor does a
// lasting refusal (400, 403, 404, 4103), which no retry changes.
func notForwarded(e *protocol.Error) *protocol.Error {
	if !e.Code.Retryable() {
		return e
	}
	return e.With("forwarded", false)
}

// emitCall writes an admitted request to its Computer, as the library's
// Emit with an acknowledgement would, with the ack id admit registered.
// Emit takes the id itself and keeps the ack in the socket's table until
// the Computer answers (or disconnects), whatever became of the call
// meanwhile: a Computer that never answers would grow that table by one
// entry per timed-out request, each holding the call and the Agent's own
// ack, so every Agent session it was sent from, for as long as it stays
// connected (spec/decisions.md, Limits against hostile clients). With the
// id known, removeCallLocked drops the entry with the call. A connection
// that is no longer open writes nothing, as Emit would; its disconnect
// fails the call.
func (s *Server) emitCall(c *call, event string, payload any) {
	sock := c.computer.sock
	if sock.Conn().ReadyState() != "open" {
		return
	}
	id := c.ackID
	p := &parser.Packet{Type: parser.EVENT, Nsp: protocol.Namespace, Id: &id, Data: []any{event, payload}}
	sock.Client().WriteToEngine(s.io.Encoder().Encode(p), &socket.WriteOptions{})
}

// admit runs the sender and target checks and registers the call, under one
// lock so that a Computer disconnecting concurrently either is not found or
// fails the call at once.
func (s *Server) admit(sess *session, event, agent, computer, reqID string, r *reply, timeout time.Duration) (*call, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return nil, protocol.NewInternal("server is shutting down")
	}
	if err := s.checkAgentLocked(sess, agent, event); err != nil {
		return nil, err
	}
	// An unknown name and a name in another office get the same answer, so
	// that no key holder learns which names exist elsewhere
	// (spec/decisions.md, Uniform answer for an unreachable Computer).
	target := s.names[computer]
	if target == nil && s.cl != nil {
		return nil, errElsewhere // not on this node: Redis knows (cluster_route.go)
	}
	if target == nil || target.role != protocol.RoleComputer || target.office != sess.office {
		return nil, protocol.ComputerNotFound(sess.gen, clip(computer, 64))
	}
	if !target.answers(event) {
		// At once: relayed, it would wait for an answer that never comes
		// (spec/generations.md, Confirmation and extensions).
		return nil, notSupported(event, computer, target.gen)
	}
	if len(sess.outbound) >= s.cfg.maxInFlight {
		return nil, protocol.NewTooManyRequests("this agent already has %d requests in flight", len(sess.outbound))
	}
	if len(target.inbound) >= s.cfg.maxInFlight {
		return nil, protocol.NewTooManyRequests("computer %q already has %d requests in flight", computer, len(target.inbound))
	}
	if target.conn != nil && target.conn.out.congested() {
		return nil, protocol.NewUnavailable("computer %q is not reading its connection", computer)
	}
	if sess.conn != nil && sess.conn.out.congested() {
		return nil, protocol.NewUnavailable("this agent is not reading its connection")
	}
	c := &call{event: event, reqID: reqID, agent: sess, computer: target, computerName: computer, reply: r, callerAware: target.extensions != nil}
	if target.inbound == nil {
		target.inbound = map[*call]struct{}{}
	}
	target.inbound[c] = struct{}{}
	s.startCallLocked(c, timeout)
	// The Computer's ack, registered under the lock so that whatever ends
	// the call (removeCallLocked) finds it there.
	c.ackID = s.nsp.Ids()
	target.sock.Acks().Store(c.ackID, func(args []any, _ error) { s.answered(c, args) })
	return c, nil
}

// startCallLocked registers an admitted call, routed to a Computer on this
// node (c.computer) or, in cluster mode, on another one, and arms its timer.
func (s *Server) startCallLocked(c *call, timeout time.Duration) {
	s.seq++
	c.seq, c.started = s.seq, time.Now()
	s.calls[c] = struct{}{}
	if c.agent.outbound == nil {
		c.agent.outbound = map[*call]struct{}{}
	}
	c.agent.outbound[c] = struct{}{}
	c.timer = time.AfterFunc(timeout, func() {
		s.m.timeout(c.event)
		if s.finish(c, protocol.NewTimeout("computer %q did not answer %s within %v", c.computerName, c.event, timeout).With("req_id", c.reqID)) {
			s.log.Warn("request timed out", "event", c.event, "req_id", c.reqID, "computer", c.computerName, "timeout", timeout.String())
		}
	})
}

// answered receives the Computer's ack. Exactly one value is relayed as is
// (after validation when WithValidateAnswers is on); any other count is a
// protocol violation answered with 500.
func (s *Server) answered(c *call, args []any) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("ack handler panicked", "event", c.event, "req_id", c.reqID)
			s.finish(c, protocol.NewInternal("internal error while relaying %s", c.event))
		}
	}()
	if len(args) != 1 {
		s.finishLogged(c, protocol.NewInternal("computer %q answered %s with %d values; the protocol expects one", c.computerName, c.event, len(args)))
		return
	}
	answer := s.forAgent(c, args[0])
	if _, relayed := answer.(json.RawMessage); s.cfg.validateAnswers && relayed {
		busy, err := s.validateAnswer(c.agent.gen, c.event, answer)
		if busy != nil {
			s.finishLogged(c, busy)
			return
		}
		if err != nil {
			e := protocol.AsError(err)
			out := protocol.NewInternal("computer %q answered %s with an invalid payload: %s", c.computerName, c.event, e.Message)
			if v, ok := e.Details["violations"]; ok {
				out = out.With("violations", v)
			}
			s.finishLogged(c, out)
			return
		}
	}
	first := s.finish(c, answer)
	// Checked first: the arguments of a disabled Debug call are still
	// built (a slice, boxed strings, the elapsed time formatted) on every
	// routed request.
	if !s.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	if first {
		s.log.Debug("request answered", "event", c.event, "req_id", c.reqID, "computer", c.computerName, "elapsed", time.Since(c.started).String())
	} else {
		s.log.Debug("late answer dropped", "event", c.event, "req_id", c.reqID, "computer", c.computerName)
	}
}

// validateAnswer checks a Computer's answer, as the Agent receives it
// (forAgent), against the ack schema of the Agent's generation g, decoding
// it within the bound on large decodes (decode.go): busy is the 503 when no
// place came in time, err what the check found.
func (s *Server) validateAnswer(g protocol.Generation, event string, arg any) (busy *protocol.Error, err error) {
	raw, _ := arg.(json.RawMessage)
	release, busy := s.acquireDecode(len(raw))
	if busy != nil {
		return busy, nil
	}
	defer release()
	v, err := decodeArg(arg)
	if err != nil {
		return nil, err
	}
	return nil, g.ValidateValue(event, protocol.Ack, v)
}

func (s *Server) finishLogged(c *call, e *protocol.Error) {
	if s.finish(c, e) {
		s.log.Warn("computer answer refused", "event", c.event, "req_id", c.reqID, "computer", c.computerName, "code", int(e.Code), "reason", e.Message)
	}
}

// finish answers the Agent once and removes the call from every table. It
// reports whether this was the first outcome.
func (s *Server) finish(c *call, value any) bool {
	s.mu.Lock()
	if c.done {
		s.mu.Unlock()
		return false
	}
	s.removeCallLocked(c)
	s.mu.Unlock()
	if e, ok := value.(*protocol.Error); ok {
		c.reply.fail(e) // in the Agent's shape
	} else {
		c.reply.send(value)
	}
	s.m.routedOutcome(c.event, value, c.started)
	s.settled()
	return true
}

func (s *Server) removeCallLocked(c *call) {
	c.done = true
	c.timer.Stop()
	if c.rem != nil {
		c.rem.timer.Stop()
		delete(s.cl.remote, c.remoteID)
	}
	delete(s.calls, c)
	delete(c.agent.outbound, c)
	if c.computer != nil {
		delete(c.computer.inbound, c)
		c.computer.sock.Acks().Delete(c.ackID) // unless its answer did already (emitCall)
	}
}

// settled tells a closing Server that the drain is over once no call is in
// flight. It runs after the answers of removed calls have been handed to
// their transports: Close goes on to disconnect every socket, and an answer
// sent after that would be dropped.
func (s *Server) settled() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closing || len(s.calls) > 0 {
		return
	}
	select {
	case <-s.drained:
	default:
		close(s.drained)
	}
}

// detachCallsLocked removes the calls of a disconnecting session: the ones
// routed to it (returned, to be failed at once) and the ones it made (its
// answer can no longer be delivered).
func (s *Server) detachCallsLocked(sess *session) []*call {
	var failed []*call
	for c := range sess.inbound {
		s.removeCallLocked(c)
		failed = append(failed, c)
	}
	for c := range sess.outbound {
		s.removeCallLocked(c)
	}
	return failed
}

// failAll answers every call in flight with e (used by Close).
func (s *Server) failAll(e *protocol.Error) {
	s.mu.Lock()
	var pending []*call
	for c := range s.calls {
		s.removeCallLocked(c)
		pending = append(pending, c)
	}
	s.mu.Unlock()
	for _, c := range pending {
		s.log.Warn("request failed: server closing", "event", c.event, "req_id", c.reqID, "computer", c.computerName)
		c.reply.fail(e.With("req_id", c.reqID))
		s.m.routedOutcome(c.event, e, c.started)
	}
}
