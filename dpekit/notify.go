package dpekit

import (
	"context"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// subscriptions tracks, per MCP session, the URIs it subscribed to
// (resources/subscribe) and delivers the kit's notifications to it
// (spec/finder.md, Writing a DPE server).
//
// mcp-go keeps no subscription registry and its own sends drop a
// notification silently when the session's queue (100 entries) is full. The
// kit therefore gives each session an ordered, de-duplicated set of pending
// notifications — one resources/updated per URI, one list_changed — drained
// by a goroutine that blocks on the session's channel until the notification
// is taken, the session ends or the Server closes. A burst of changes thus
// costs at most one pending entry per subscribed URI, and the last change of
// every URI is always followed by a notification.
type subscriptions struct {
	srv       *Server
	stallWarn time.Duration

	mu       sync.Mutex
	sessions map[string]*sessionState
}

type sessionState struct {
	id      string
	session server.ClientSession // nil until the session registers
	uris    map[string]*dpe.URI  // subscribed URI → parsed (nil when not a dpe URI of ours)

	pending []pendingNote
	queued  map[pendingNote]bool
	wake    chan struct{}
	stop    chan struct{}
	running bool
}

type pendingNote struct {
	method string
	uri    string
}

func newSubscriptions(s *Server, stallWarn time.Duration) *subscriptions {
	return &subscriptions{srv: s, stallWarn: stallWarn, sessions: map[string]*sessionState{}}
}

func (m *subscriptions) install(h *server.Hooks) {
	h.AddOnRegisterSession(func(_ context.Context, cs server.ClientSession) {
		m.register(cs)
	})
	h.AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) {
		m.unregister(cs.SessionID())
	})
	h.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		if cs := server.ClientSessionFromContext(ctx); cs != nil {
			m.subscribe(cs, req.Params.URI)
		}
	})
	h.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		if cs := server.ClientSessionFromContext(ctx); cs != nil {
			m.unsubscribe(cs.SessionID(), req.Params.URI)
		}
	})
}

// state returns the session's state, creating it; m.mu must be held.
func (m *subscriptions) state(id string) *sessionState {
	st := m.sessions[id]
	if st == nil {
		st = &sessionState{
			id:     id,
			uris:   map[string]*dpe.URI{},
			queued: map[pendingNote]bool{},
			wake:   make(chan struct{}, 1),
			stop:   make(chan struct{}),
		}
		m.sessions[id] = st
	}
	return st
}

func (m *subscriptions) register(cs server.ClientSession) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.srv.ctx.Err() != nil {
		return
	}
	st := m.state(cs.SessionID())
	st.session = cs
	if !st.running {
		st.running = true
		m.srv.wg.Add(1)
		go m.deliver(st)
	}
}

func (m *subscriptions) unregister(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st := m.sessions[id]; st != nil {
		delete(m.sessions, id)
		close(st.stop)
	}
}

func (m *subscriptions) subscribe(cs server.ClientSession, uri string) {
	var parsed *dpe.URI
	if u, err := dpe.Parse(uri); err == nil && u.Host == m.srv.host {
		parsed = u
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.sessions[cs.SessionID()]
	if st == nil {
		// Not registered with the server (no transport delivers to it):
		// nothing can reach it, so there is nothing to record.
		m.srv.log.Warn("dpekit: subscribe from an unregistered session ignored", "session", cs.SessionID(), "uri", uri)
		return
	}
	st.uris[uri] = parsed
}

func (m *subscriptions) unsubscribe(id, uri string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st := m.sessions[id]; st != nil {
		delete(st.uris, uri)
	}
}

// enqueue adds a notification to the session's pending set; m.mu must be
// held.
func (st *sessionState) enqueue(n pendingNote) {
	if st.queued[n] {
		return
	}
	st.queued[n] = true
	st.pending = append(st.pending, n)
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// listChanged queues resources/list_changed for every initialised session.
func (m *subscriptions) listChanged() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, st := range m.sessions {
		if st.session != nil && st.session.Initialized() {
			st.enqueue(pendingNote{method: mcp.MethodNotificationResourcesListChanged})
		}
	}
}

// updated queues resources/updated for every URI a session subscribed to
// that belongs to one of the documents, or is the catalog.
func (m *subscriptions) updated(docRefs []string) {
	set := make(map[string]bool, len(docRefs))
	for _, r := range docRefs {
		set[r] = true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, st := range m.sessions {
		for raw, u := range st.uris {
			if u != nil && (u.Level() == dpe.LevelCatalog || set[u.DocRef]) {
				st.enqueue(pendingNote{method: mcp.MethodNotificationResourceUpdated, uri: raw})
			}
		}
	}
}

func (m *subscriptions) next(st *sessionState) (pendingNote, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(st.pending) == 0 {
		return pendingNote{}, false
	}
	n := st.pending[0]
	st.pending[0] = pendingNote{}
	st.pending = st.pending[1:]
	if len(st.pending) == 0 {
		st.pending = nil
	}
	delete(st.queued, n)
	return n, true
}

// deliver drains one session's pending notifications into its channel.
func (m *subscriptions) deliver(st *sessionState) {
	defer m.srv.wg.Done()
	done := m.srv.ctx.Done()
	for {
		select {
		case <-done:
			return
		case <-st.stop:
			return
		case <-st.wake:
		}
		for {
			n, ok := m.next(st)
			if !ok {
				break
			}
			if !m.send(st, n) {
				return
			}
		}
	}
}

// send blocks until the session takes the notification; it returns false
// when the session ended or the Server closed first.
func (m *subscriptions) send(st *sessionState, n pendingNote) bool {
	note := mcp.JSONRPCNotification{
		JSONRPC:      mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: n.method},
	}
	if n.uri != "" {
		note.Params.AdditionalFields = map[string]any{"uri": n.uri}
	}
	cs := st.session
	if up, ok := cs.(server.SessionWithStreamableHTTPConfig); ok {
		up.UpgradeToSSEWhenReceiveNotification()
	}
	var stall <-chan time.Time
	if m.stallWarn > 0 {
		t := time.NewTimer(m.stallWarn)
		defer t.Stop()
		stall = t.C
	}
	for {
		select {
		case cs.NotificationChannel() <- note:
			return true
		case <-st.stop:
			return false
		case <-m.srv.ctx.Done():
			return false
		case <-stall:
			stall = nil
			m.srv.log.Warn("dpekit: session is not reading its notifications; still waiting",
				"session", st.id, "method", n.method, "uri", n.uri)
		}
	}
}
