package agent

import (
	"context"
	"errors"
	"sync"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/sio"
)

// Notification is one notify:* event as the Client received it
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#updates-and-notifications).
type Notification struct {
	// Event is the notify:* event name, e.g. protocol.NotifyUpdateFinder.
	Event string `json:"event"`
	// OfficeID is set for notify:enter_office and notify:leave_office.
	OfficeID string `json:"office_id,omitempty"`
	// Computer names the Computer concerned (enter/leave of a Computer,
	// every notify:update_*).
	Computer string `json:"computer,omitempty"`
	// Agent names the Agent concerned (enter/leave of an Agent,
	// notify:tool_call_cancel).
	Agent string `json:"agent,omitempty"`
	// ReqID is the cancelled call of notify:tool_call_cancel.
	ReqID string `json:"req_id,omitempty"`
}

// notifyEvents are the events the Client listens to.
var notifyEvents = []string{
	protocol.NotifyEnterOffice,
	protocol.NotifyLeaveOffice,
	protocol.NotifyUpdateConfig,
	protocol.NotifyUpdateToolList,
	protocol.NotifyUpdateDesktop,
	protocol.NotifyUpdateFinder,
	protocol.NotifyUpdateSkills,
	protocol.NotifyCancelToolCall,
}

// Refresh work a Computer may owe after notifications. Bits accumulate
// while a refresh runs: a burst of notifications costs at most one refresh
// in flight and one after it (per-Computer single flight + dirty flags).
type dirty uint8

const (
	dirtyTools dirty = 1 << iota
	dirtyConfig
	dirtyDesktop
	dirtyFinder
	dirtySkills
	dirtySync // the office as a whole: list it and refresh every Computer
)

// maxQueued bounds the notifications waiting for the dispatcher; beyond it
// they are dropped with an error log (a callback that never returns).
const maxQueued = 4096

type itemKind int

const (
	itemNotification itemKind = iota
	itemSync
	itemReconnected
)

type item struct {
	kind itemKind
	n    Notification
	err  error
}

// notifier moves notifications off the Socket.IO event queue: the socket's
// handlers only validate, decode and enqueue (the Socket.IO client
// threading trap: waiting for an ack there deadlocks). One dispatcher
// goroutine runs the callbacks in arrival order and schedules refreshes;
// each Computer has at most one refresh goroutine. All of them belong to the
// Client and end with it.
type notifier struct {
	c    *Client
	mu   sync.Mutex
	q    []item
	wake chan struct{}
	work map[string]*refresh // by Computer; "" is the office
}

type refresh struct {
	bits    dirty
	running bool
}

func newNotifier(c *Client) *notifier {
	return &notifier{c: c, wake: make(chan struct{}, 1), work: map[string]*refresh{}}
}

func (n *notifier) register(sock *sio.Socket) {
	for _, ev := range notifyEvents {
		_ = sock.On(sio.EventName(ev), func(args ...any) { n.receive(ev, args) })
	}
}

// start runs the dispatcher; it and the refreshes end with the Client's
// context, and Close waits for them.
func (n *notifier) start() { n.c.conn.Go(n.dispatch) }

// receive runs on the Socket.IO event queue: validate, decode, enqueue.
func (n *notifier) receive(event string, args []any) {
	log := n.c.log.With("event", event)
	if len(args) == 0 {
		log.Warn("notification without payload dropped")
		return
	}
	v := args[0]
	if err := protocol.ValidateAnyGeneration(event, protocol.Request, v); err != nil {
		log.Warn("invalid notification dropped", "error", err)
		return
	}
	var note Notification
	switch event {
	case protocol.NotifyEnterOffice, protocol.NotifyLeaveOffice:
		var p protocol.EnterOfficeNotification
		if err := protocol.DecodeValue(v, &p); err != nil {
			log.Warn("invalid notification dropped", "error", err)
			return
		}
		note = Notification{OfficeID: p.OfficeID, Computer: deref(p.Computer), Agent: deref(p.Agent)}
		if office := n.c.Office(); office != "" && office != p.OfficeID {
			log.Warn("notification for another office dropped", "office_id", p.OfficeID, "office", office)
			return
		}
	case protocol.NotifyCancelToolCall:
		var p protocol.CancelToolCallReq
		if err := protocol.DecodeValue(v, &p); err != nil {
			log.Warn("invalid notification dropped", "error", err)
			return
		}
		note = Notification{Agent: p.Agent, ReqID: p.ReqID}
	default:
		var p protocol.UpdateComputerConfigReq
		if err := protocol.DecodeValue(v, &p); err != nil {
			log.Warn("invalid notification dropped", "error", err)
			return
		}
		note = Notification{Computer: p.Computer}
	}
	note.Event = event
	n.enqueue(item{kind: itemNotification, n: note})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (n *notifier) enqueue(it item) {
	n.mu.Lock()
	if len(n.q) >= maxQueued {
		n.mu.Unlock()
		n.c.log.Error("notification queue full; notification dropped", "event", it.n.Event, "computer", it.n.Computer)
		return
	}
	n.q = append(n.q, it)
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// syncOffice lists the office and refreshes every Computer's tools (after
// a join or a rejoin).
func (n *notifier) syncOffice() { n.enqueue(item{kind: itemSync}) }

// reconnected reports the end of a reconnection to the OnReconnect hook.
func (n *notifier) reconnected(err error) { n.enqueue(item{kind: itemReconnected, err: err}) }

func (n *notifier) dispatch() {
	ctx := n.c.ctx
	for {
		n.mu.Lock()
		batch := n.q
		n.q = nil
		n.mu.Unlock()
		for _, it := range batch {
			if ctx.Err() != nil {
				return
			}
			n.handle(it)
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-n.wake:
		case <-ctx.Done():
			return
		}
	}
}

func (n *notifier) handle(it item) {
	h := n.c.cfg.hooks
	switch it.kind {
	case itemSync:
		n.schedule("", dirtySync)
		return
	case itemReconnected:
		if h.reconnect != nil {
			h.reconnect(it.err)
		}
		return
	}
	note := it.n
	switch note.Event {
	case protocol.NotifyEnterOffice:
		if note.Computer != "" {
			n.schedule(note.Computer, dirtyTools)
		}
		if h.enterOffice != nil {
			h.enterOffice(enterPayload(note))
		}
	case protocol.NotifyLeaveOffice:
		if note.Computer != "" {
			n.forget(note.Computer)
			n.c.tools.drop(note.Computer)
			if h.toolsChanged != nil {
				h.toolsChanged(note.Computer, nil)
			}
		}
		if h.leaveOffice != nil {
			p := enterPayload(note)
			h.leaveOffice(protocol.LeaveOfficeNotification(p))
		}
	case protocol.NotifyUpdateToolList:
		n.schedule(note.Computer, dirtyTools)
	case protocol.NotifyUpdateConfig:
		bits := dirtyTools // a new configuration may change the tool set
		if h.configChanged != nil {
			bits |= dirtyConfig
		}
		n.schedule(note.Computer, bits)
	case protocol.NotifyUpdateDesktop:
		if h.desktop != nil {
			n.schedule(note.Computer, dirtyDesktop)
		}
	case protocol.NotifyUpdateFinder:
		if h.finder != nil {
			n.schedule(note.Computer, dirtyFinder)
		}
	case protocol.NotifyUpdateSkills:
		if h.skills != nil {
			n.schedule(note.Computer, dirtySkills)
		}
	case protocol.NotifyCancelToolCall:
		if h.cancel != nil {
			h.cancel(protocol.CancelToolCallReq{Agent: note.Agent, ReqID: note.ReqID})
		}
	}
	if h.notification != nil {
		h.notification(note)
	}
}

func enterPayload(note Notification) protocol.EnterOfficeNotification {
	p := protocol.EnterOfficeNotification{OfficeID: note.OfficeID}
	if note.Computer != "" {
		s := note.Computer
		p.Computer = &s
	}
	if note.Agent != "" {
		s := note.Agent
		p.Agent = &s
	}
	return p
}

// schedule marks work for a Computer and starts its refresh goroutine
// unless one is running; a running one picks the bits up when it loops.
func (n *notifier) schedule(computer string, bits dirty) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.c.ctx.Err() != nil {
		return
	}
	r := n.work[computer]
	if r == nil {
		r = &refresh{}
		n.work[computer] = r
	}
	r.bits |= bits
	if r.running {
		return
	}
	r.running = true
	n.c.conn.Go(func() { n.run(computer, r) })
}

// forget drops the work owed to a Computer that left.
func (n *notifier) forget(computer string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if r := n.work[computer]; r != nil {
		r.bits = 0
	}
}

func (n *notifier) run(computer string, r *refresh) {
	for {
		n.mu.Lock()
		bits := r.bits
		r.bits = 0
		if bits == 0 || n.c.ctx.Err() != nil {
			r.running = false
			delete(n.work, computer)
			n.mu.Unlock()
			return
		}
		n.mu.Unlock()
		n.refresh(computer, bits)
	}
}

// refresh performs the fetches bits ask for, then hands the results over.
func (n *notifier) refresh(computer string, bits dirty) {
	c := n.c
	ctx := c.ctx
	h := c.cfg.hooks
	log := c.log.With("computer", computer)
	failed := func(what string, err error) {
		if errors.Is(err, ErrClosed) || ctx.Err() != nil {
			return
		}
		log.Warn("refresh after a notification failed", "what", what, "error", err)
	}
	if bits&dirtySync != 0 {
		n.syncNow(ctx)
	}
	if bits&dirtyTools != 0 {
		epoch := c.tools.epoch(computer)
		tools, err := c.fetchTools(ctx, computer)
		switch {
		case err != nil:
			failed("tools", err)
		case c.tools.store(computer, epoch, tools):
			if h.toolsChanged != nil {
				h.toolsChanged(computer, tools)
			}
		default:
			log.Debug("tools discarded: the Computer left or the office changed during the fetch")
		}
	}
	if bits&dirtyConfig != 0 && h.configChanged != nil {
		if cfg, err := c.GetConfig(ctx, computer); err != nil {
			failed("config", err)
		} else {
			h.configChanged(computer, cfg)
		}
	}
	if bits&dirtyDesktop != 0 && h.desktop != nil {
		if d, err := c.GetDesktop(ctx, computer, DesktopQuery{}); err != nil {
			failed("desktop", err)
		} else {
			h.desktop(computer, d)
		}
	}
	if bits&dirtySkills != 0 && h.skills != nil {
		if sk, err := c.Skills(ctx, computer); err != nil {
			failed("skills", err)
		} else {
			h.skills(computer, sk)
		}
	}
	if bits&dirtyFinder != 0 && h.finder != nil {
		if cat, err := c.GetFinder(ctx, computer, FinderQuery{Limit: FinderRefreshLimit}); err != nil {
			failed("finder", err)
		} else {
			h.finder(computer, cat)
		}
	}
}

// syncNow lists the office, forgets Computers that are gone and schedules
// a tool refresh for every Computer present.
func (n *notifier) syncNow(ctx context.Context) {
	c := n.c
	if c.Office() == "" {
		return
	}
	sessions, err := c.ListRoom(ctx)
	if err != nil {
		if !errors.Is(err, ErrClosed) && ctx.Err() == nil {
			c.log.Warn("listing the office failed", "error", err)
		}
		return
	}
	names := ComputerNames(sessions)
	c.tools.keep(names)
	for _, name := range names {
		n.schedule(name, dirtyTools)
	}
}
