package server

import (
	"context"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"
)

// maxPublishPending bounds the bytes of cluster messages waiting to be
// published; past it a node refuses cross-node requests with 503
// (admitRemote) and further messages are dropped with a warning, as when
// Redis is unreachable.
const maxPublishPending = 16 << 20

// errPublishCongested is what a message past maxPublishPending gets.
var errPublishCongested = errors.New("cluster messages are not leaving this node fast enough")

// publisher sends a node's cluster messages (the Socket.IO adapter's
// requests and responses, README.md, Cluster mode) with SPUBLISH, in the
// order they were handed over, without making the caller wait for Redis:
// a goroutine, started when the first message arrives and gone once none is
// left, writes everything that accumulated meanwhile as one pipeline, one
// round trip. The library's adapter publishes each message synchronously,
// from the goroutine that reads a connection or the adapter's single
// receive loop, so every routed request waited for two or three Redis
// round trips one after the other on those goroutines.
type publisher struct {
	rdb  *redis.Client
	ctx  context.Context
	fail func(error) // reports a batch that could not be sent

	mu      sync.Mutex
	queue   []pubMsg
	bytes   int
	running bool
	idle    chan struct{} // closed when the queue drains, for flush
	next    *sent         // what the queued messages' waiters wait for
}

// sent is closed once a batch was sent; err is then its outcome.
type sent struct {
	done chan struct{}
	err  error
}

type pubMsg struct {
	channel string
	payload []byte
}

// publish queues one message; it fails only when too much is pending.
func (p *publisher) publish(channel string, payload []byte) error {
	_, err := p.enqueue(channel, payload, false)
	return err
}

// publishWait queues one message and waits until it was sent, with the
// others of its batch, or ctx ends. Messages whose order matters to
// clients (notifications, room changes, server-side messages) go this way,
// so that what a client did after them cannot overtake them.
func (p *publisher) publishWait(ctx context.Context, channel string, payload []byte) error {
	w, err := p.enqueue(channel, payload, true)
	if err != nil {
		return err
	}
	select {
	case <-w.done:
		return w.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *publisher) enqueue(channel string, payload []byte, wait bool) (*sent, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.ctx.Err(); err != nil {
		return nil, err // the node is closing
	}
	if p.bytes+len(payload) > maxPublishPending {
		p.fail(errPublishCongested)
		return nil, errPublishCongested
	}
	p.queue = append(p.queue, pubMsg{channel, payload})
	p.bytes += len(payload)
	if wait && p.next == nil {
		p.next = &sent{done: make(chan struct{})}
	}
	w := p.next
	if !p.running {
		p.running = true
		p.idle = make(chan struct{})
		go p.run()
	}
	return w, nil
}

// congested reports whether more than half the pending bound is in use.
func (p *publisher) congested() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bytes > maxPublishPending/2
}

func (p *publisher) run() {
	var batch []pubMsg
	for {
		p.mu.Lock()
		batch, p.queue = p.queue, batch[:0]
		w := p.next
		p.next = nil
		p.bytes = 0
		if len(batch) == 0 {
			p.running = false
			close(p.idle)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		var err error
		if len(batch) == 1 {
			err = p.rdb.SPublish(p.ctx, batch[0].channel, batch[0].payload).Err()
		} else {
			pipe := p.rdb.Pipeline()
			for _, m := range batch {
				pipe.SPublish(p.ctx, m.channel, m.payload)
			}
			_, err = pipe.Exec(p.ctx)
		}
		if err != nil {
			p.fail(err)
		}
		if w != nil {
			w.err = err
			close(w.done)
		}
		clear(batch)
	}
}

// flush waits until everything queued so far has been sent or ctx ends.
func (p *publisher) flush(ctx context.Context) {
	p.mu.Lock()
	if !p.running {
		p.mu.Unlock()
		return
	}
	idle := p.idle
	p.mu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
	}
}
