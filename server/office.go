package server

import (
	"cmp"
	"slices"
	"sync"
	"unicode"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/zishang520/socket.io/servers/socket/v3"
)

// session is one socket admitted to /smcp. Everything below sock is guarded
// by Server.mu.
type session struct {
	id     string
	sock   *socket.Socket
	conn   *conn  // the Engine.IO connection's state (engine.go); nil if it closed first
	grant  *Grant // what the credential admits; nil: anything
	remote string

	opMu sync.Mutex // cluster mode: orders this session's join, leave and disconnect

	// gen is the generation its handshake negotiated, version the version
	// its client named ("" for none): fixed for the session's life.
	gen     protocol.Generation
	version string
	// extensions are the client:* events a Computer declared it answers
	// beyond its generation's core events, sorted; nil when it declared
	// none (generation.go, answers). Set by each join.
	extensions []string

	role   protocol.Role // fixed by the first successful join
	name   string        // registered while the session is in an office
	office string        // "" when in no office
	closed bool          // disconnect cleanup ran
	// The office and name it had when the cleanup ran, for the cancels it
	// sent before (broadcastCancel).
	closedOffice, closedName string
	gone                     chan struct{} // closed by the disconnect cleanup

	backlog backlog // messages read and not yet handled (backlog.go)

	rates sessionRates // its events' rates (ratelimit.go)

	inbound  map[*call]struct{}   // requests routed to this session (a Computer); nil until the first
	outbound map[*call]struct{}   // requests this session made (an Agent); nil until the first
	remoteIn map[string]*remoteIn // cluster mode: requests from other nodes that asked for progress, by agent and req_id (cluster_progress.go)
}

// identity returns the session's registered name and role for log lines.
func (sess *session) identity(s *Server) (string, protocol.Role) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sess.name, sess.role
}

// reply answers an event's ack at most once. A nil ack (the sender asked for
// none) makes every answer a no-op.
type reply struct {
	ack   socket.Ack
	arity int
	gen   protocol.Generation // the sender's: the shape of its errors
	event string
	once  sync.Once
}

func newReply(ack socket.Ack, arity int, gen protocol.Generation, event string) *reply {
	return &reply{ack: ack, arity: arity, gen: gen, event: event}
}

func (r *reply) asked() bool { return r != nil && r.ack != nil }

func (r *reply) send(values ...any) {
	if !r.asked() {
		return
	}
	r.once.Do(func() { r.ack(values, nil) })
}

// ok answers success: (true, nil) for the two-value office acks, no value for
// events that define no ack.
func (r *reply) ok() {
	if r.arity == 2 {
		r.send(true, nil)
		return
	}
	r.send()
}

// fail answers a refusal: (false, "<code> <Name>: message") for the
// two-value office acks (spec/protocol.md keeps (bool, reason) there, in
// every generation), the error payload in the sender's generation's shape
// otherwise (ackError).
func (r *reply) fail(e *protocol.Error) {
	if r.arity == 2 {
		r.send(false, e.Error())
		return
	}
	if !r.asked() {
		return
	}
	r.send(ackError(r.gen, r.event, e))
}

// joinOffice handles server:join_office (spec/protocol.md, Offices).
func (s *Server) joinOffice(sess *session, payload any, r *reply) {
	const ev = protocol.EventJoinOffice
	if err := sess.gen.ValidateValue(ev, protocol.Request, payload); err != nil {
		s.refuse(sess, ev, "", r, protocol.AsError(err))
		return
	}
	m := payload.(map[string]any)
	role := protocol.Role(m["role"].(string))
	var ext []string
	if role == protocol.RoleComputer {
		ext = declaredExtensions(m) // an Agent's are not recorded: nothing is routed to it
	}
	name := m["name"].(string)
	office := m["office_id"].(string)
	if err := printable(ev, "name", name); err != nil {
		s.refuse(sess, ev, "", r, err)
		return
	}
	if err := printable(ev, "office_id", office); err != nil {
		s.refuse(sess, ev, "", r, err)
		return
	}

	noop, err := s.join(sess, role, name, office, ext)
	if err != nil {
		s.refuse(sess, ev, "", r, err)
		return
	}
	if noop {
		s.log.Debug("join is a no-op", "sid", sess.id, "name", name, "office_id", office)
	} else {
		s.log.Info("joined office", "sid", sess.id, "role", string(role), "name", name, "office_id", office)
	}
	r.ok()
}

// join applies the office rules under the lock: fixed role, one office per
// Agent, one Agent per office, a name held by one live session, and the
// Computer's office switch (leave broadcast to the old office first).
func (s *Server) join(sess *session, role protocol.Role, name, office string, ext []string) (noop bool, _ *protocol.Error) {
	if s.cl != nil {
		return s.joinCluster(sess, role, name, office, ext)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if noop, err := s.sessionChecksLocked(sess, role, name, office); noop || err != nil {
		return noop, err // a no-op join changes nothing, its extensions included
	}
	if role == protocol.RoleAgent {
		for m := range s.offices[office] {
			if m.role == protocol.RoleAgent {
				return false, protocol.NewRoomFull("office %q already has an agent", office)
			}
		}
	}
	if len(s.offices[office]) >= s.cfg.maxOfficeSize {
		return false, protocol.NewOfficeFull("office %q has reached its maximum of %d members", office, s.cfg.maxOfficeSize)
	}
	if err := s.allowOfficeEventLocked(office, protocol.EventJoinOffice); err != nil {
		return false, err
	}
	s.applyJoinLocked(sess, role, name, office, ext)
	return false, nil
}

// sessionChecksLocked runs the join checks that depend on the session and
// this node's names only: fixed role, grant, the no-op and rename cases,
// one office per Agent, and a name held by another session here.
func (s *Server) sessionChecksLocked(sess *session, role protocol.Role, name, office string) (noop bool, _ *protocol.Error) {
	if sess.closed {
		return false, protocol.NewInternal("session is closing")
	}
	if !sess.grant.allows(office, role) {
		return false, protocol.NewForbidden("this connection's key may not join office %q as %s", office, role)
	}
	if sess.role != "" && sess.role != role {
		return false, protocol.NewForbidden("a session's role is fixed: this session joined as %s", sess.role)
	}
	if sess.office == office {
		if sess.name == name {
			return true, nil
		}
		return false, protocol.NewForbidden("already in office %q as %q; leave it before joining under another name", office, sess.name)
	}
	if role == protocol.RoleAgent && sess.office != "" {
		return false, protocol.NewForbidden("agent %q is already in office %q; leave it before joining another", sess.name, sess.office)
	}
	if other := s.names[name]; other != nil && other != sess {
		if other.office == office && other.role == protocol.RoleComputer && role == protocol.RoleComputer {
			return false, protocol.NewForbidden("a computer named %q is already in office %q", name, office)
		}
		return false, protocol.NewForbidden("name %q is already registered by another session", name)
	}
	return false, nil
}

// apply registers a checked join on this node and tells the office.
func (s *Server) applyJoinLocked(sess *session, role protocol.Role, name, office string, ext []string) {
	if sess.office != "" { // a Computer switching offices
		s.leaveLocked(sess)
	}
	sess.role, sess.name, sess.office, sess.extensions = role, name, office, ext
	s.names[name] = sess
	s.namesPeak.grew(len(s.names))
	members := s.offices[office]
	if members == nil {
		members = map[*session]struct{}{}
		s.offices[office] = members
		s.officesPeak.grew(len(s.offices))
	}
	members[sess] = struct{}{}
	sess.sock.Join(socket.Room(office))
	if s.cl != nil && role == protocol.RoleComputer {
		sess.sock.Join(computerRooms(sess)...) // the addresses of routed requests from other nodes
	}
	s.broadcastLocked(office, sess, protocol.NotifyEnterOffice, presence(sess))
}

// leaveOffice handles server:leave_office.
func (s *Server) leaveOffice(sess *session, payload any, r *reply) {
	const ev = protocol.EventLeaveOffice
	if err := sess.gen.ValidateValue(ev, protocol.Request, payload); err != nil {
		s.refuse(sess, ev, "", r, protocol.AsError(err))
		return
	}
	office := payload.(map[string]any)["office_id"].(string)
	name, err := s.leave(sess, office)
	if err != nil {
		s.refuse(sess, ev, "", r, err)
		return
	}
	s.log.Info("left office", "sid", sess.id, "name", name, "office_id", office)
	r.ok()
}

func (s *Server) leave(sess *session, office string) (string, *protocol.Error) {
	// Before anything else: a session is never in an office its key may
	// not enter (join refuses it), so the answer depends on nothing else.
	if !sess.grant.allowsOffice(office) {
		return "", outOfScopeLeave(office)
	}
	if s.cl != nil {
		return s.leaveCluster(sess, office)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess.office != office {
		if len(s.offices[office]) == 0 {
			return "", protocol.NewRoomNotFound("office %q does not exist", office)
		}
		return "", protocol.NewNotInRoom("this session is not in office %q", office)
	}
	name := sess.name
	s.leaveLocked(sess)
	return name, nil
}

// outOfScopeLeave answers a leave of an office the session's key may not
// enter: 4103 whether the office exists or not, so that a key scoped to
// some offices (a tenant's) learns nothing of the others
// (spec/decisions.md, Limits against hostile clients). The 4102 / 4103
// distinction of spec/protocol.md (Offices) stays for offices the key
// admits.
func outOfScopeLeave(office string) *protocol.Error {
	return protocol.NewNotInRoom("this session is not in office %q", office)
}

// leaveLocked broadcasts notify:leave_office to the session's office
// (skipping it), then unregisters its name and membership. The caller holds
// s.mu and has checked that the session is in an office.
func (s *Server) leaveLocked(sess *session) {
	office := sess.office
	stopUpdatesLocked(sess)
	s.chargeOfficeLocked(office)
	s.broadcastLocked(office, sess, protocol.NotifyLeaveOffice, presence(sess))
	if s.names[sess.name] == sess {
		delete(s.names, sess.name)
		s.names = shrunk(s.names, &s.namesPeak)
	}
	if members := s.offices[office]; members != nil {
		delete(members, sess)
		if len(members) == 0 {
			delete(s.offices, office)
			s.offices = shrunk(s.offices, &s.officesPeak)
			if _, ok := s.officeRates[office]; ok {
				delete(s.officeRates, office)
				s.officeRates = shrunk(s.officeRates, &s.officeRatesPeak)
			}
		}
	}
	sess.sock.Leave(socket.Room(office))
	if s.cl != nil && sess.role == protocol.RoleComputer {
		for _, room := range computerRooms(sess) {
			sess.sock.Leave(room)
		}
	}
	sess.office, sess.name = "", ""
}

// presence is the notify:enter_office / notify:leave_office payload.
func presence(sess *session) map[string]any {
	m := map[string]any{"office_id": sess.office}
	if sess.role == protocol.RoleComputer {
		m["computer"] = sess.name
	} else {
		m["agent"] = sess.name
	}
	return m
}

// broadcastLocked emits a notify:* event to an office, skipping one session.
// Emitting only queues the packets, so it is safe under s.mu and keeps the
// notifications in the order of the state changes.
//
// On a single node the office's members are all in s.offices: when skip is
// the only one (an Agent or Computer alone in its office joining, leaving,
// announcing an update), nobody would receive the packet, and the library's
// room lookup and encoding (~3 KB of garbage per join and leave) are
// skipped. In a cluster other nodes may hold members, so it always emits.
func (s *Server) broadcastLocked(office string, skip *session, event string, payload any) {
	if s.cl == nil {
		members := s.offices[office]
		if _, in := members[skip]; len(members) == 0 || len(members) == 1 && in {
			return
		}
	}
	op := s.nsp.To(socket.Room(office))
	if skip != nil {
		op = op.Except(socket.Room(skip.sock.Id()))
	}
	if except := notifyExcept(event); len(except) > 0 {
		op = op.Except(except...) // the generations that lack it (generation.go)
	}
	if err := op.Emit(event, payload); err != nil {
		s.log.Error("broadcast failed", "event", event, "office_id", office, "error", err.Error())
	}
}

// listRoom handles server:list_room: only an Agent inside that office may
// list it.
func (s *Server) listRoom(sess *session, payload any, r *reply) {
	const ev = protocol.EventListRoom
	if err := sess.gen.ValidateValue(ev, protocol.Request, payload); err != nil {
		s.refuse(sess, ev, reqIDOf(payload), r, protocol.AsError(err))
		return
	}
	m := payload.(map[string]any)
	reqID := m["req_id"].(string)
	ret, err := s.roomSessions(sess, m["agent"].(string), m["office_id"].(string))
	if err != nil {
		s.refuse(sess, ev, reqID, r, err)
		return
	}
	ret.ReqID = reqID
	r.send(ret)
}

func (s *Server) roomSessions(sess *session, agent, office string) (*protocol.ListRoomRet, *protocol.Error) {
	if s.cl != nil {
		return s.roomSessionsCluster(sess, agent, office)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkAgentLocked(sess, agent, protocol.EventListRoom); err != nil {
		return nil, err
	}
	if office != sess.office {
		return nil, protocol.NewCrossRoomAccess("an agent may only list its own office %q", sess.office)
	}
	ret := &protocol.ListRoomRet{Sessions: []protocol.SessionInfo{}}
	for m := range s.offices[office] {
		ret.Sessions = append(ret.Sessions, sessionInfo(m.id, m.name, m.role, office, m.displayVersion(), m.extensions))
	}
	slices.SortFunc(ret.Sessions, func(a, b protocol.SessionInfo) int {
		return cmp.Or(cmp.Compare(a.Role, b.Role), cmp.Compare(a.Name, b.Name))
	})
	return ret, nil
}

// checkAgentLocked is the sender check shared by routed requests,
// server:list_room and server:tool_call_cancel: an Agent (403 for a Computer)
// inside an office (4103) whose registered name is the request's agent field
// (403).
func (s *Server) checkAgentLocked(sess *session, agent, event string) *protocol.Error {
	if sess.role == protocol.RoleComputer {
		return protocol.NewForbidden("%s may only be sent by an agent", event)
	}
	if sess.office == "" {
		return protocol.NewNotInRoom("join an office as an agent before sending %s", event)
	}
	if agent != sess.name {
		return protocol.NewForbidden("agent field %q is not the sender's registered name", clip(agent, 64))
	}
	return nil
}

// disconnected cleans up after a socket: the leave broadcast, the name, and
// the routed requests in both directions. It is idempotent: the library may
// fire "disconnect" twice.
func (s *Server) disconnected(sess *session, reason string) {
	if s.cl != nil {
		sess.opMu.Lock()
		defer sess.opMu.Unlock()
	}
	s.mu.Lock()
	if sess.closed {
		s.mu.Unlock()
		return
	}
	sess.closed = true
	close(sess.gone)
	sess.backlog.close()
	if sess.conn != nil {
		sess.conn.smcp.CompareAndSwap(sess, nil)
	}
	name, office, role := sess.name, sess.office, sess.role
	sess.closedOffice, sess.closedName = office, name
	abandoned := abandonedToolCallsLocked(sess)
	if sess.office != "" {
		s.leaveLocked(sess)
	}
	for _, reqID := range abandoned {
		// The Agent can no longer receive the answer, and may have had no
		// time to send its own cancel: the Computers of its office stop
		// the calls it abandoned, as if it had (spec/protocol.md, Updates
		// and notifications). A Computer ignores a req_id it does not run.
		s.broadcastLocked(office, sess, protocol.NotifyCancelToolCall, map[string]any{"agent": name, "req_id": reqID})
	}
	delete(s.sessions, sess.sock.Id())
	s.sessions = shrunk(s.sessions, &s.sessionsPeak)
	failed := s.detachCallsLocked(sess)
	s.dropSessionRemoteInLocked(sess)
	s.mu.Unlock()

	for _, c := range failed {
		s.log.Warn("request failed: computer disconnected", "event", c.event, "req_id", c.reqID, "computer", c.computerName)
		e := computerGone(c)
		c.reply.fail(e)
		s.m.routedOutcome(c.event, e, c.started)
	}
	s.settled()
	if s.cl != nil && office != "" {
		s.clusterGone(sess, role, name, office)
	}
	s.log.Info("session disconnected", "sid", sess.id, "reason", reason, "name", name, "office_id", office)
}

// abandonedToolCallsLocked returns the req_ids of the tool calls an Agent
// session made that are still in flight, once its connection is gone. The
// caller holds s.mu.
func abandonedToolCallsLocked(sess *session) []string {
	if sess.role != protocol.RoleAgent || sess.office == "" {
		return nil
	}
	var ids []string
	for c := range sess.outbound {
		if c.event == protocol.EventToolCall && !c.done {
			ids = append(ids, c.reqID)
		}
	}
	return ids
}

func reqIDOf(payload any) string {
	if m, ok := payload.(map[string]any); ok {
		if id, ok := m["req_id"].(string); ok {
			return clip(id, 128)
		}
	}
	return ""
}

// printable refuses a name or an office id holding a control character
// (Unicode category Cc: NUL, line breaks, escape sequences) or an invisible
// character that reorders or hides text (hiddenFormat): every member of the
// office is told the name and may show or log it, a NUL ends it early for a
// C string, and a bidirectional override makes one name display as another
// (spec/protocol.md, Limits). The value is not echoed.
func printable(event, field, v string) *protocol.Error {
	for i, c := range v {
		switch {
		case unicode.IsControl(c):
			return protocol.NewBadRequest("%s request: /%s: control character U+%04X at byte %d", event, field, c, i).
				With("event", event)
		case hiddenFormat(c):
			return protocol.NewBadRequest("%s request: /%s: invisible formatting character U+%04X at byte %d", event, field, c, i).
				With("event", event)
		}
	}
	return nil
}

// hiddenFormat reports the format characters (Unicode category Cf) that no
// name needs: the bidirectional marks, embeddings, overrides and isolates,
// which reorder what follows them on screen, and the zero-width space, word
// joiner and byte order mark, which show nothing. The zero-width joiner and
// non-joiner, which some scripts write within words, are allowed.
func hiddenFormat(c rune) bool {
	switch {
	case c == 0x061C, c == 0x200E, c == 0x200F, // Arabic letter mark; left-to-right and right-to-left marks
		0x202A <= c && c <= 0x202E,            // embeddings and overrides
		0x2066 <= c && c <= 0x2069,            // isolates
		c == 0x200B, c == 0x2060, c == 0xFEFF: // zero-width space, word joiner, byte order mark
		return true
	}
	return false
}
