package inspector

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// Limits of the page's event streams.
const (
	maxStreams      = 32               // open event streams at once
	streamBuffer    = 256              // events queued for one slow page
	streamHeartbeat = 15 * time.Second // comment line that keeps proxies from closing an idle stream
)

// event is one Server-Sent Event.
type event struct {
	kind string
	data []byte
}

// hub fans the office's notifications out to the pages' event streams. A
// page that does not keep up loses its stream (its EventSource reconnects
// and the page reloads its view) rather than holding memory.
type hub struct {
	mu     sync.Mutex
	subs   map[chan event]struct{}
	closed bool
	done   chan struct{}
}

func newHub() *hub {
	return &hub{subs: map[chan event]struct{}{}, done: make(chan struct{})}
}

func (h *hub) publish(kind string, v any) {
	b, err := json.Marshal(map[string]any{"time": time.Now().UTC().Format(time.RFC3339Nano), "data": v})
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- event{kind, b}:
		default: // too slow: drop its stream
			delete(h.subs, ch)
			close(ch)
		}
	}
}

func (h *hub) subscribe() (chan event, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, protocol.Errorf(protocol.CodeUnavailable, "the inspector is closing")
	}
	if len(h.subs) >= maxStreams {
		return nil, protocol.Errorf(protocol.CodeTooManyRequests, "%d event streams are open already", maxStreams)
	}
	ch := make(chan event, streamBuffer)
	h.subs[ch] = struct{}{}
	return ch, nil
}

func (h *hub) unsubscribe(ch chan event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[ch]; ok {
		delete(h.subs, ch)
		close(ch)
	}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	close(h.done)
	for ch := range h.subs {
		delete(h.subs, ch)
		close(ch)
	}
}

// serveEvents streams the office's notifications to the page as
// Server-Sent Events until the page goes away or the Inspector closes.
func (in *Inspector) serveEvents(w http.ResponseWriter, r *http.Request) {
	ch, err := in.events.subscribe()
	if err != nil {
		writeError(w, err)
		return
	}
	defer in.events.unsubscribe(ch)
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": connected\n\n")
	if err := rc.Flush(); err != nil {
		return
	}
	tick := time.NewTicker(streamHeartbeat)
	defer tick.Stop()
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return
			}
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.kind, ev.data)
		case <-tick.C:
			fmt.Fprint(w, ": ping\n\n")
		case <-r.Context().Done():
			return
		case <-in.events.done:
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}
