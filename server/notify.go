package server

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/zishang520/socket.io/parsers/engine/v3/packet"
	"github.com/zishang520/socket.io/parsers/socket/v3/parser"
	engine "github.com/zishang520/socket.io/servers/engine/v3"
	"github.com/zishang520/socket.io/servers/engine/v3/transports"
	"github.com/zishang520/socket.io/servers/socket/v3"
)

// update handles server:update_{config,tool_list,desktop,finder,skills}
// (server:update_skills from 0.3.0 on): only a
// Computer inside an office may send them, naming itself; the Server
// broadcasts the matching notify:update_* {computer} to that office, skipping
// the sender (spec/protocol.md, Updates and notifications), folding updates
// of one kind closer together than updateInterval into one (ratelimit.go).
func (s *Server) update(sess *session, info *protocol.EventInfo, payload any, r *reply) {
	if err := sess.gen.ValidateValue(info.Name, protocol.Request, payload); err != nil {
		s.refuse(sess, info.Name, "", r, protocol.AsError(err))
		return
	}
	computer := payload.(map[string]any)["computer"].(string)
	if err := s.broadcastUpdate(sess, info, computer); err != nil {
		s.refuse(sess, info.Name, "", r, err)
		return
	}
	s.log.Debug("update broadcast", "event", info.Broadcasts, "computer", computer)
	r.ok()
}

func (s *Server) broadcastUpdate(sess *session, info *protocol.EventInfo, computer string) *protocol.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess.role != protocol.RoleComputer {
		return protocol.NewForbidden("%s may only be sent by a computer", info.Name)
	}
	if sess.office == "" {
		return protocol.NewNotInRoom("join an office before sending %s", info.Name)
	}
	if computer != sess.name {
		return protocol.NewForbidden("computer field %q is not the sender's registered name", clip(computer, 64))
	}
	s.announceUpdateLocked(sess, info)
	return nil
}

// cancelToolCall handles server:tool_call_cancel: only the Agent named in the
// request, inside an office, may cancel its own call; its agent and req_id
// are broadcast as notify:tool_call_cancel to that office, skipping the
// sender (spec/protocol.md, Updates and notifications).
func (s *Server) cancelToolCall(sess *session, payload any, r *reply) {
	const ev = protocol.EventCancelToolCall
	if err := sess.gen.ValidateValue(ev, protocol.Request, payload); err != nil {
		s.refuse(sess, ev, reqIDOf(payload), r, protocol.AsError(err))
		return
	}
	m := payload.(map[string]any)
	reqID := m["req_id"].(string)
	if err := s.broadcastCancel(sess, m); err != nil {
		s.refuse(sess, ev, reqID, r, err)
		return
	}
	s.log.Info("tool call cancel broadcast", "req_id", reqID, "agent", m["agent"])
	r.ok()
}

func (s *Server) broadcastCancel(sess *session, m map[string]any) *protocol.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	office := sess.office
	if sess.closed && sess.closedOffice != "" {
		// The cancel was read before its connection closed, and the close
		// was cleaned up first: the library runs "disconnect" on the
		// connection's reader as soon as the transport closes, while the
		// events that reader decoded just before wait on the socket's task
		// queue. An Agent that gives up on a call sends the cancel and
		// often closes at once (a CLI exiting): it is its last word on a
		// call it abandoned, so it still reaches the office the Agent was
		// in (spec/decisions.md, Socket.IO library defects).
		if agent := m["agent"].(string); sess.role != protocol.RoleAgent || agent != sess.closedName {
			return protocol.NewForbidden("agent field %q is not the sender's registered name", clip(agent, 64))
		}
		office = sess.closedOffice
	} else if err := s.checkAgentLocked(sess, m["agent"].(string), protocol.EventCancelToolCall); err != nil {
		return err
	}
	if err := s.allowOfficeEventLocked(office, protocol.EventCancelToolCall); err != nil {
		return err
	}
	// agent and req_id only: the schema does not forbid other members, and
	// relaying them made one cancel of up to the payload limit be written
	// to every member of the office (spec/decisions.md, Limits against
	// hostile clients).
	s.broadcastLocked(office, sess, protocol.NotifyCancelToolCall, map[string]any{"agent": m["agent"], "req_id": m["req_id"]})
	return nil
}

// maxShutdownFlush caps how long Close waits for its notifications to reach
// the transports.
const maxShutdownFlush = 2 * time.Second

// notifyShutdown makes every session leave its office as Close begins: each
// office peer receives notify:leave_office for the sessions leaving before
// it (Computers first, by name, then the Agent), written straight to the
// engine so that Close can wait, while ctx allows, until the transports have
// flushed them.
func (s *Server) notifyShutdown(ctx context.Context) {
	type note struct {
		to      *session
		payload map[string]any
	}
	var notes []note
	s.mu.Lock()
	for office, set := range s.offices {
		members := make([]*session, 0, len(set))
		for m := range set {
			members = append(members, m)
		}
		slices.SortFunc(members, func(a, b *session) int {
			return cmp.Or(-cmp.Compare(a.role, b.role), cmp.Compare(a.name, b.name))
		})
		for i, leaver := range members {
			p := presence(leaver)
			for _, to := range members[i+1:] {
				notes = append(notes, note{to, p})
			}
		}
		for _, m := range members {
			if s.names[m.name] == m {
				delete(s.names, m.name)
			}
			m.sock.Leave(socket.Room(office))
			m.office, m.name = "", ""
		}
		delete(s.offices, office)
	}
	s.mu.Unlock()
	if len(notes) == 0 {
		return
	}

	// Group the notes per recipient: the write callback of its last packet
	// fires once the transport has written all of them.
	order := []*session{}
	per := map[*session][]map[string]any{}
	for _, n := range notes {
		if per[n.to] == nil {
			order = append(order, n.to)
		}
		per[n.to] = append(per[n.to], n.payload)
	}
	enc := s.io.Encoder()
	var waits []<-chan struct{}
	for _, to := range order {
		conn := to.sock.Conn()
		if conn == nil || conn.ReadyState() != "open" {
			continue
		}
		flushed := make(chan struct{})
		var once sync.Once
		done := func(transports.Transport) { once.Do(func() { close(flushed) }) }
		payloads := per[to]
		for i, p := range payloads {
			bufs := enc.Encode(&parser.Packet{Type: parser.EVENT, Nsp: protocol.Namespace, Data: []any{protocol.NotifyLeaveOffice, p}})
			for j, b := range bufs {
				var cb engine.SendCallback
				if i == len(payloads)-1 && j == len(bufs)-1 {
					cb = done
				}
				conn.Write(b, &packet.Options{}, cb)
			}
		}
		waits = append(waits, flushed, to.gone)
	}
	// A live peer flushes in milliseconds; a polling peer that is gone
	// without closing never polls again, so the wait is capped as well.
	ctx, cancel := context.WithTimeout(ctx, maxShutdownFlush)
	defer cancel()
	for i := 0; i < len(waits); i += 2 {
		select {
		case <-waits[i]:
		case <-waits[i+1]: // the peer went away: nothing left to flush
		case <-ctx.Done():
			s.log.Warn("shutdown notifications not all flushed before the deadline")
			return
		}
	}
}
