package server

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBacklog: the reader goes on while the backlog is within the limit,
// waits while it is over, and is released by the queue catching up or by
// the session ending.
func TestBacklog(t *testing.T) {
	var b backlog
	b.read(60)
	b.wait(100) // within the limit: no wait

	b.read(60)
	released := make(chan struct{})
	go func() {
		b.wait(100)
		close(released)
	}()
	select {
	case <-released:
		t.Fatal("the reader went on with 120 bytes over a limit of 100")
	case <-time.After(50 * time.Millisecond):
	}
	b.handled(60)
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatal("the reader was not released when the queue caught up")
	}

	b.read(200)
	released = make(chan struct{})
	go func() {
		b.wait(100)
		close(released)
	}()
	b.close()
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatal("closing the backlog did not release the reader")
	}
	b.wait(100) // closed: never waits again
	b.handled(200)
	require.True(t, b.closed)
}
