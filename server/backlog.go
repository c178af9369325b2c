package server

import "sync"

// backlog bounds what a peer can make a session hold between the
// connection's reader and the session's handlers (spec/decisions.md,
// Limits against hostile clients). The reader decodes a message and hands it to the socket's task
// queue, the library's, which has no bound: a peer sending large requests
// faster than their handling (schema check, routing) could fill memory with
// messages read and not yet handled. Every message read for a session is
// counted here until a task queued right behind it on the same queue runs;
// while more than the limit waits, the reader stops reading, so the peer's
// writes block on TCP flow control as they would on a slow Server.
//
// One limit of the largest message (WithMaxPayloadBytes) keeps a full-size
// message handled while the next one is read; a routed request of a few
// KB never waits.
type backlog struct {
	mu      sync.Mutex
	room    sync.Cond // signalled when pending shrinks or the backlog closes
	pending int64
	closed  bool
}

func (b *backlog) init() { b.room.L = &b.mu }

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
	b.room.Broadcast()
	b.mu.Unlock()
}

// wait holds the reader while more than limit bytes wait, until the queue
// catches up or the session ends.
func (b *backlog) wait(limit int64) {
	b.mu.Lock()
	for !b.closed && b.pending > limit {
		b.room.Wait()
	}
	b.mu.Unlock()
}

// close releases a waiting reader for good: the session is gone, and its
// queue may drop the tasks that would have uncounted its messages.
func (b *backlog) close() {
	b.mu.Lock()
	b.closed = true
	b.room.Broadcast()
	b.mu.Unlock()
}
