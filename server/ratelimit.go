package server

import (
	"sync/atomic"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"golang.org/x/time/rate"
)

// The rates of a session's own events (spec/protocol.md, Limits). Some
// events make the Server write to a whole office: a join or a leave
// notifies every member, a cancel is broadcast, an update is announced,
// a room listing answers with every member. Without a bound one member
// could have the Server send each of its events 255 times over, as fast
// as it can send them.
//
//   - server:join_office, server:leave_office, server:list_room and
//     server:tool_call_cancel share one token bucket per session
//     (WithMaxEventRate: n a second, bursts of 2n); an event over it is
//     answered 429 and has no effect.
//   - server:update_* are never refused: they say "something changed,
//     fetch it again", so updates of one kind from one Computer closer
//     together than updateInterval are folded into one notify:update_*,
//     sent when the interval has passed (at most ten a second per kind).
//   - The log line of a refused event is written for the first
//     refusalLogBurst refusals of a session and then at most
//     refusalLogRate a second; the next line written says how many were
//     left out. A client cannot fill the operator's disk with refusals.

// updateInterval is the least time between two notify:update_* of one kind
// for one Computer.
const updateInterval = 100 * time.Millisecond

const (
	refusalLogRate  = 10
	refusalLogBurst = 100
)

// sessionRates is a session's share of the limits above.
type sessionRates struct {
	events   *rate.Limiter                // office events; made on the first one
	logs     atomic.Pointer[rate.Limiter] // refusal log lines; made on the first refusal
	unlogged atomic.Int64                 // refusals not logged since the last line

	// updates, under Server.mu, one per server:update_* kind.
	updates [4]updateThrottle
}

// updateThrottle is the folding of one kind of update of one Computer.
type updateThrottle struct {
	last    int64       // when the last notification of this kind went out (Unix ns)
	pending *time.Timer // the folded notification, while one waits
}

// allowEvent takes a token for an office event of sess, or returns the
// 429 that refuses it. It runs on the session's task goroutine.
func (s *Server) allowEvent(sess *session, event string) *protocol.Error {
	if sess.rates.events == nil {
		sess.rates.events = rate.NewLimiter(rate.Limit(s.cfg.maxEventRate), 2*s.cfg.maxEventRate)
	}
	if sess.rates.events.Allow() {
		return nil
	}
	return protocol.NewTooManyRequests("%s: more than %d office events a second", event, s.cfg.maxEventRate).
		With("max_event_rate", s.cfg.maxEventRate)
}

// logRefusal reports whether a refusal of sess may be logged now, and how
// many earlier ones were not.
func (s *Server) logRefusal(sess *session) (bool, int64) {
	lim := sess.rates.loadLogs()
	if !lim.Allow() {
		sess.rates.unlogged.Add(1)
		return false, 0
	}
	return true, sess.rates.unlogged.Swap(0)
}

// loadLogs returns the refusal log limiter, made once (refusals are
// answered from several goroutines).
func (r *sessionRates) loadLogs() *rate.Limiter {
	if l := r.logs.Load(); l != nil {
		return l
	}
	r.logs.CompareAndSwap(nil, rate.NewLimiter(refusalLogRate, refusalLogBurst))
	return r.logs.Load()
}

// updateKind is the index of a server:update_* event in
// sessionRates.updates.
func updateKind(event string) int {
	switch event {
	case protocol.EventUpdateConfig:
		return 0
	case protocol.EventUpdateToolList:
		return 1
	case protocol.EventUpdateDesktop:
		return 2
	default: // protocol.EventUpdateFinder
		return 3
	}
}

// announceUpdateLocked sends the notify:update_* of info for the Computer
// sess now, or folds it into the one that waits for the interval to pass.
// s.mu is held.
func (s *Server) announceUpdateLocked(sess *session, info *protocol.EventInfo) {
	t := &sess.rates.updates[updateKind(info.Name)]
	if t.pending != nil {
		return // the waiting notification tells of this change too
	}
	now := time.Now().UnixNano()
	if wait := time.Duration(t.last + int64(updateInterval) - now); wait > 0 {
		t.pending = time.AfterFunc(wait, func() { s.sendFoldedUpdate(sess, info) })
		return
	}
	t.last = now
	s.broadcastLocked(sess.office, sess, info.Broadcasts, map[string]any{"computer": sess.name})
}

// sendFoldedUpdate sends a folded notification, unless the Computer has
// left its office or disconnected meanwhile (its peers were told so).
func (s *Server) sendFoldedUpdate(sess *session, info *protocol.EventInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &sess.rates.updates[updateKind(info.Name)]
	t.pending = nil
	if sess.closed || sess.office == "" {
		return
	}
	t.last = time.Now().UnixNano()
	s.broadcastLocked(sess.office, sess, info.Broadcasts, map[string]any{"computer": sess.name})
}

// stopUpdatesLocked drops the folded notifications of sess that wait: it
// left its office or disconnected. s.mu is held.
func stopUpdatesLocked(sess *session) {
	for i := range sess.rates.updates {
		if t := &sess.rates.updates[i]; t.pending != nil {
			t.pending.Stop()
			t.pending = nil
		}
	}
}

// everySecond lets a repeated log line through at most once a second (the
// Server's refused connections, the cluster's Redis errors).
type everySecond struct{ last atomic.Int64 } // unix ns of the last line let through

func (e *everySecond) allow() bool {
	now, last := time.Now().UnixNano(), e.last.Load()
	return now-last >= int64(time.Second) && e.last.CompareAndSwap(last, now)
}
