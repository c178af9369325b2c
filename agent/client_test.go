package agent_test

import (
	"context"
	"net"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/agent/agenttest"
	"github.com/a2c-smcp/smcp-go/protocol"
)

func TestDialURLs(t *testing.T) {
	p := startPeer(t)
	for _, u := range []string{p.URL, p.URL + "/", p.URL + "/smcp", p.URL + "/smcp/", "ws://" + p.Addr()} {
		t.Run(u, func(t *testing.T) {
			c, err := agent.Dial(ctxT(t), u, testLog())
			require.NoError(t, err)
			require.True(t, c.Connected())
			require.Equal(t, agent.DefaultName, c.Name())
			require.NoError(t, c.Close())
		})
	}
	for _, u := range []string{"", "ftp://x", "http://", "http://h:1/other", "://x", "http://a b"} {
		t.Run("bad "+u, func(t *testing.T) {
			_, err := agent.Dial(ctxT(t), u, testLog())
			requireCode(t, err, protocol.CodeBadRequest)
		})
	}
	t.Run("empty name", func(t *testing.T) {
		_, err := agent.Dial(ctxT(t), p.URL, agent.WithName(""), testLog())
		requireCode(t, err, protocol.CodeBadRequest)
	})
	t.Run("polling first", func(t *testing.T) {
		c, _ := dial(t, p, agent.WithPolling(), agent.WithName("poller"))
		require.NoError(t, c.JoinOffice(ctxT(t), "o"))
		_, err := c.GetTools(ctxT(t), "alpha")
		require.NoError(t, err)
	})
}

func TestDialUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	_, err = agent.Dial(ctxT(t), "http://"+addr, testLog())
	perr := requireCode(t, err, protocol.CodeUnavailable)
	require.True(t, perr.Code.Retryable())
	require.Contains(t, perr.Message, addr)
	require.ErrorIs(t, err, agent.ErrUnreachable)
	var op *net.OpError
	require.ErrorAs(t, err, &op, "the dial's error is wrapped")
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
	require.NotErrorIs(t, err, context.DeadlineExceeded)
}

// TestDialCanceled: a Dial whose context the caller cancels is a 408 that
// wraps context.Canceled, not a Server's refusal nor an unreachable Server.
func TestDialCanceled(t *testing.T) {
	ln := silentListener(t)
	ctx, cancel := context.WithCancel(ctxT(t))
	// Cancel once the Server's address has accepted the connection.
	go func() {
		c, err := ln.Accept()
		if err == nil {
			defer c.Close()
			cancel()
			<-t.Context().Done()
		}
	}()
	_, err := agent.Dial(ctx, "http://"+ln.Addr().String(), testLog())
	requireCode(t, err, protocol.CodeTimeout)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, agent.ErrUnreachable)
}

// silentListener accepts TCP connections and never answers on them.
func silentListener(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	return ln
}

func TestDialDeadline(t *testing.T) {
	// A listener that accepts and never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(ctxT(t), 300*time.Millisecond)
	defer cancel()
	_, err = agent.Dial(ctx, "http://"+ln.Addr().String(), testLog())
	requireCode(t, err, protocol.CodeTimeout)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestAPIKey(t *testing.T) {
	p := startPeer(t, func(o *agenttest.Options) { o.APIKey = "s3cret" })
	t.Run("sent as header and auth payload", func(t *testing.T) {
		c, err := agent.Dial(ctxT(t), p.URL, agent.WithAPIKey("s3cret"), testLog())
		require.NoError(t, err)
		defer c.Close()
		hs := p.Handshakes()
		last := hs[len(hs)-1]
		require.Equal(t, "s3cret", last.Header.Get("x-api-key"))
		require.Equal(t, "s3cret", last.Auth["api_key"])
	})
	for _, key := range []string{"", "wrong"} {
		t.Run("refused with "+key, func(t *testing.T) {
			opts := []agent.Option{testLog()}
			if key != "" {
				opts = append(opts, agent.WithAPIKey(key))
			}
			_, err := agent.Dial(ctxT(t), p.URL, opts...)
			perr := requireCode(t, err, protocol.CodeUnauthorized)
			require.Contains(t, perr.Message, "unauthorized")
		})
	}
}

// TestRequestIDs: ids are unique within a Client and across Clients.
func TestRequestIDs(t *testing.T) {
	p := startPeer(t)
	a, _ := joined(t, p)
	b, _ := dial(t, p, agent.WithName("other"))
	require.NoError(t, b.JoinOffice(ctxT(t), "office-2"))
	done := make(chan error, 40)
	for i := 0; i < 20; i++ {
		go func() { _, err := a.GetTools(ctxT(t), "alpha"); done <- err }()
		go func() { _, err := b.GetTools(ctxT(t), "beta"); done <- err }()
	}
	for i := 0; i < 40; i++ {
		require.NoError(t, <-done)
	}
	seen := map[string]bool{}
	prefixes := map[string]bool{}
	for _, r := range p.Received(protocol.EventGetTools, protocol.EventListRoom) {
		id := r.Payload["req_id"].(string)
		require.False(t, seen[id], "duplicate req_id %s", id)
		seen[id] = true
		prefixes[id[:strings.LastIndex(id, "-")]] = true
	}
	require.Len(t, prefixes, 2, "one random prefix per Client")
}

// TestNoGoroutineLeak: Clients that came and went, with notifications,
// refreshes and a reconnection, leave no goroutine of theirs running. Only
// goroutines running code of package agent are counted: the Socket.IO client
// library itself keeps two goroutines per connection after Disconnect (its
// manager's and engine socket's task queues are never closed, v3.0.1 and
// v3.0.6 alike), which is outside this package's reach.
func TestNoGoroutineLeak(t *testing.T) {
	p := startPeer(t)
	for i := 0; i < 5; i++ {
		r := newRecorder()
		log, _ := newLogger()
		c, err := agent.Dial(ctxT(t), p.URL, append(r.options(), agent.WithName("leak"), agent.WithLogger(log))...)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() }) // when a check below fails first
		require.NoError(t, c.JoinOffice(ctxT(t), "office-1"))
		require.NoError(t, p.Broadcast(protocol.NotifyUpdateFinder, notifyPayload("computer", "alpha")))
		r.until(t, "catalog", func(r *recorder) bool { return len(r.finder) == 1 })
		p.Reply(protocol.EventGetDesktop, agenttest.Silent())
		require.NoError(t, p.Broadcast(protocol.NotifyUpdateDesktop, notifyPayload("computer", "alpha")))
		require.NoError(t, p.WaitCount(ctxT(t), protocol.EventGetDesktop, i+1))
		// The detector sees the dispatcher and the waiting refresh.
		require.GreaterOrEqual(t, len(agentGoroutines()), 2)
		// Close while a refresh waits for its answer.
		require.NoError(t, c.Close())
		left := agentGoroutines()
		require.Empty(t, left, "goroutines of package agent still running after Close:\n%s", strings.Join(left, "\n\n"))
	}
}

// agentGoroutines returns the stacks of the goroutines executing a
// function of package agent (not its tests, not the peer).
func agentGoroutines() []string {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "smcp-go/agent.(") || strings.Contains(g, "smcp-go/agent.call") || strings.Contains(g, "smcp-go/agent.decode") {
			out = append(out, g)
		}
	}
	return out
}
