package server

import "sync"

// backlog bounds what a peer can make a session hold between the
// connection's reader and the session's handlers (spec/decisions.md,
// Limits against hostile clients). The reader decodes a message and hands
// it to the socket's task queue, the library's, which has no bound: a peer
// sending large requests faster than their handling (schema check,
// routing) could fill memory with messages read and not yet handled. Every
// message read for a session is counted here until a task queued just
// before its own on the same queue runs (the one being handled no longer
// counts); while more than the limit waits, the reader stops reading, so
// the peer's writes block on TCP flow control as they would on a slow
// Server.
//
// A limit of one largest message (WithMaxPayloadBytes) keeps a full-size
// message handled while the next one is read; a routed request of a few
// KB never waits. A session holds no channel unless its reader waits.
type backlog struct {
	mu      sync.Mutex
	pending int64
	closed  bool
	room    chan struct{} // made by a waiting reader, closed when pending shrinks or the backlog closes
}

// read counts a message of n bytes handed to the session's queue.
func (b *backlog) read(n int64) {
	b.mu.Lock()
	b.pending += n
	b.mu.Unlock()
}

// handled uncounts a message once the queue has reached it.
func (b *backlog) handled(n int64) {
	b.mu.Lock()
	b.pending -= n
	b.wakeLocked()
	b.mu.Unlock()
}

// wait holds the reader while more than limit bytes wait, until the queue
// catches up or the session ends.
func (b *backlog) wait(limit int64) {
	b.mu.Lock()
	for !b.closed && b.pending > limit {
		if b.room == nil {
			b.room = make(chan struct{})
		}
		room := b.room
		b.mu.Unlock()
		<-room
		b.mu.Lock()
	}
	b.mu.Unlock()
}

// close releases a waiting reader for good: the session is gone, and its
// queue may drop the tasks that would have uncounted its messages.
func (b *backlog) close() {
	b.mu.Lock()
	b.closed = true
	b.wakeLocked()
	b.mu.Unlock()
}

func (b *backlog) wakeLocked() {
	if b.room != nil {
		close(b.room)
		b.room = nil
	}
}
