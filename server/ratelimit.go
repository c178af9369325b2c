package server

import (
	"log/slog"
	"sync"
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
//   - An office's own events share a budget per office on each node:
//     officeEventFactor times a session's rate, in bursts of twice as
//     many. A session's rate bounds what one member makes the Server
//     send; without an office's bound, its 256 members each at their own
//     rate made it send 256 times more (a member's join or update reaches
//     every other member). Joins and cancels over it are answered 429 and
//     have no effect; leaves (explicit, by a switch or a disconnect) are
//     never refused but spend from it; updates wait for it, folded as
//     above, so nothing is lost.
//   - The log line of a refused event is written for the first
//     refusalLogBurst refusals of a session and then at most
//     refusalLogRate a second, and within a Server-wide budget for all
//     sessions (serverRefusalLogBurst, then serverRefusalLogRate a
//     second); the next line written says how many were left out. A
//     client cannot fill the operator's disk with refusals, not even by
//     opening session after session.

// updateInterval is the least time between two notify:update_* of one kind
// for one Computer.
const updateInterval = 100 * time.Millisecond

const (
	refusalLogRate  = 10
	refusalLogBurst = 100
)

// officeEventFactor is how many sessions' worth of events an office's
// members may send together (see above).
const officeEventFactor = 4

// officeLimiterLocked returns the budget of an office that has members on
// this node, made on first use; it goes with the office (leaveLocked).
// s.mu is held.
func (s *Server) officeLimiterLocked(office string) *rate.Limiter {
	l := s.officeRates[office]
	if l == nil {
		n := officeEventFactor * s.cfg.maxEventRate
		l = rate.NewLimiter(rate.Limit(n), 2*n)
		s.officeRates[office] = l
		s.officeRatesPeak.grew(len(s.officeRates))
	}
	return l
}

// allowOfficeEventLocked takes a token from office's budget for a join or
// a cancel that would reach its members here, or returns the 429 that
// refuses it. An office without members here costs nothing. s.mu is held.
func (s *Server) allowOfficeEventLocked(office, event string) *protocol.Error {
	if len(s.offices[office]) == 0 {
		return nil
	}
	if s.officeLimiterLocked(office).Allow() {
		return nil
	}
	n := officeEventFactor * s.cfg.maxEventRate
	return protocol.NewTooManyRequests("%s: office %q has more than %d events a second", event, office, n).
		With("max_office_event_rate", n)
}

// chargeOfficeLocked spends a token of office's budget for an event that
// is never refused (a leave), going into debt if need be, when it may reach
// another member. s.mu is held.
func (s *Server) chargeOfficeLocked(office string) {
	if s.othersMayHearLocked(office) {
		s.officeLimiterLocked(office).Reserve()
	}
}

// officeDelayLocked reserves a token of office's budget for a notification
// from one of its members and returns how long it must wait for it (0:
// now), when it may reach another member. s.mu is held.
func (s *Server) officeDelayLocked(office string, now time.Time) time.Duration {
	if !s.othersMayHearLocked(office) {
		return 0
	}
	return s.officeLimiterLocked(office).ReserveN(now, 1).DelayFrom(now)
}

// othersMayHearLocked reports whether an event of a member of office on
// this node may reach another member: on one node, when another member is
// here; in a cluster, always (members on other nodes are not known here,
// and a member alone on its node must not escape the budget). s.mu is
// held.
func (s *Server) othersMayHearLocked(office string) bool {
	return s.cl != nil || len(s.offices[office]) > 1
}

// sessionRates is a session's share of the limits above.
type sessionRates struct {
	events   *rate.Limiter                // office events; made on the first one
	logs     atomic.Pointer[rate.Limiter] // refusal log lines; made on the first refusal
	unlogged atomic.Int64                 // refusals not logged since the last line

	// updates, under Server.mu, one per server:update_* kind.
	updates [5]updateThrottle
}

// updateThrottle is the folding of one kind of update of one Computer.
type updateThrottle struct {
	last     int64       // when the last notification of this kind went out (Unix ns)
	pending  *time.Timer // the folded notification, while one waits
	reserved bool        // pending has its office token (officeDelayLocked)
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

// Server-wide, the refusal lines of all sessions together: a client with a
// key opening sessions one after another had each one's burst logged.
const (
	serverRefusalLogRate  = 100
	serverRefusalLogBurst = 1000
)

// logRefusal reports whether a refusal of sess may be logged now, and how
// many earlier ones were not: of this session, and (over the Server-wide
// budget) of all sessions.
func (s *Server) logRefusal(sess *session) (ok bool, unlogged, serverUnlogged int64) {
	lim := sess.rates.loadLogs()
	if !lim.Allow() {
		sess.rates.unlogged.Add(1)
		return false, 0, 0
	}
	if ok, serverUnlogged = s.refusalLogs.allow(); !ok {
		sess.rates.unlogged.Add(1)
		return false, 0, 0
	}
	return true, sess.rates.unlogged.Swap(0), serverUnlogged
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
	case protocol.EventUpdateSkills:
		return 4
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
	now := time.Now()
	if wait := time.Duration(t.last + int64(updateInterval) - now.UnixNano()); wait > 0 {
		t.pending = time.AfterFunc(wait, func() { s.sendFoldedUpdate(sess, info) })
		return
	}
	if s.waitOfficeLocked(sess, info, t, now) {
		return
	}
	t.last = now.UnixNano()
	s.broadcastLocked(sess.office, sess, info.Broadcasts, map[string]any{"computer": sess.name})
}

// waitOfficeLocked reserves the office's token for the notification of t
// and, when it is not there yet, makes the notification wait for it,
// folded (it reports true then). s.mu is held.
func (s *Server) waitOfficeLocked(sess *session, info *protocol.EventInfo, t *updateThrottle, now time.Time) bool {
	if t.reserved {
		t.reserved = false
		return false
	}
	d := s.officeDelayLocked(sess.office, now)
	if d <= 0 {
		return false
	}
	t.reserved = true
	t.pending = time.AfterFunc(d, func() { s.sendFoldedUpdate(sess, info) })
	return true
}

// sendFoldedUpdate sends a folded notification, unless the Computer has
// left its office or disconnected meanwhile (its peers were told so).
func (s *Server) sendFoldedUpdate(sess *session, info *protocol.EventInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &sess.rates.updates[updateKind(info.Name)]
	t.pending = nil
	if sess.closed || sess.office == "" {
		t.reserved = false
		return
	}
	now := time.Now()
	if s.waitOfficeLocked(sess, info, t, now) {
		return
	}
	t.last = now.UnixNano()
	s.broadcastLocked(sess.office, sess, info.Broadcasts, map[string]any{"computer": sess.name})
}

// stopUpdatesLocked drops the folded notifications of sess that wait: it
// left its office or disconnected. s.mu is held.
func stopUpdatesLocked(sess *session) {
	for i := range sess.rates.updates {
		if t := &sess.rates.updates[i]; t.pending != nil {
			t.pending.Stop()
			t.pending, t.reserved = nil, false
		}
	}
}

// logBudget bounds a kind of log line that clients without a session (or
// without a key) can cause, Server-wide: the first refusalLogBurst lines,
// then refusalLogRate a second; the next line written says how many were
// left out (spec/decisions.md, Limits against hostile clients). A line
// per refused CONNECT let a client without a key have the Server write
// lines as fast as it could open connections.
type logBudget struct {
	every rate.Limit // lines a second after the burst; 0: refusalLogRate
	burst int        // 0: refusalLogBurst

	once     sync.Once
	lim      *rate.Limiter
	unlogged atomic.Int64
}

// allow reports whether a line may be written now, and how many were not
// since the last one.
func (b *logBudget) allow() (bool, int64) {
	b.once.Do(func() {
		every, burst := b.every, b.burst
		if every == 0 {
			every, burst = refusalLogRate, refusalLogBurst
		}
		b.lim = rate.NewLimiter(every, burst)
	})
	if !b.lim.Allow() {
		b.unlogged.Add(1)
		return false, 0
	}
	return true, b.unlogged.Swap(0)
}

// warn writes a Warn line within the budget, with "not_logged" when
// earlier ones were left out.
func (b *logBudget) warn(log *slog.Logger, msg string, attrs ...any) {
	ok, n := b.allow()
	if !ok {
		return
	}
	if n > 0 {
		attrs = append(attrs, "not_logged", n)
	}
	log.Warn(msg, attrs...)
}

// everySecond lets a repeated log line through at most once a second (the
// Server's refused connections, the cluster's Redis errors).
type everySecond struct{ last atomic.Int64 } // unix ns of the last line let through

func (e *everySecond) allow() bool {
	now, last := time.Now().UnixNano(), e.last.Load()
	return now-last >= int64(time.Second) && e.last.CompareAndSwap(last, now)
}
