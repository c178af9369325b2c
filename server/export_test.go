package server

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// WithTestHook runs hook at the start of every dispatched event, so tests can
// make a handler panic.
func WithTestHook(hook func(event string)) Option {
	return func(c *config) error {
		c.testHook = hook
		return nil
	}
}

// WithPollingLinger shortens how long a closed connection's long-polling
// transport may keep its place (pollingLingerBound), so that a test sees
// the places come back without waiting for the library's 30 s.
func WithPollingLinger(d time.Duration) Option {
	return func(c *config) error {
		c.pollingLinger = d
		return nil
	}
}

// KillNode makes a cluster node stop as if its process had been killed:
// its heartbeat stops and its Redis connections close at once, without
// releasing anything.
func (s *Server) KillNode() {
	s.cl.cancel()
	_ = s.cl.rdb.Close()
}

// RemoteCalls is how many requests a cluster node routed to other nodes
// and still holds (cluster.remote).
func (s *Server) RemoteCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.cl.remote)
}

// NodeID is a cluster node's id.
func (s *Server) NodeID() string { return s.cl.node }

// Publisher is the cluster's publisher (cluster_publish.go) for tests.
type Publisher = publisher

// NewPublisher makes a publisher on rdb; failures go to fail.
func NewPublisher(ctx context.Context, rdb *redis.Client, fail func(error)) *Publisher {
	return &publisher{rdb: rdb, ctx: ctx, fail: fail}
}

func (p *publisher) Publish(channel string, payload []byte) error {
	return p.publish(channel, payload)
}

func (p *publisher) PublishWait(ctx context.Context, channel string, payload []byte) error {
	return p.publishWait(ctx, channel, payload)
}

func (p *publisher) Flush(ctx context.Context) { p.flush(ctx) }

// MaxPublishPending is the publisher's bound on pending bytes.
const MaxPublishPending = maxPublishPending

// RedisOptions is the go-redis configuration WithRedis makes of url.
func RedisOptions(url string) (*redis.Options, error) {
	var c config
	if err := WithRedis(url)(&c); err != nil {
		return nil, err
	}
	return c.redis, nil
}

// PendingAcks is how many acknowledgements the Socket.IO library holds for
// the session registered under name: requests sent to it that it has not
// answered (0 when no session has that name).
func (s *Server) PendingAcks(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.names[name]
	if sess == nil {
		return 0
	}
	return sess.sock.Acks().Len()
}
