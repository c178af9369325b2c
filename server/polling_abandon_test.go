package server_test

import (
	"fmt"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// TestHostileAbandonedPolls: clients that send a long-polling GET and
// leave at once, hundreds of times. net/http cancels such a request's
// context from its own goroutine; the Socket.IO library's polling
// transport raced with that while it took the request (its context
// watcher ran the request's Cleanup as the handler wrote it; seen under
// the race detector), so the Server hands the library a context of its
// own and ends an abandoned GET itself once the library has taken it
// (pollWait, engine.go); a handshake's poll, answered at once, gets a
// context nothing cancels. Every such request ends, and an office carries
// on.
func TestHostileAbandonedPolls(t *testing.T) {
	ts := startServer(t)
	a, cs := office(t, ts, "o1", "a1", "c1")
	cs[0].answer(protocol.EventGetTools, toolsAnswer)
	u, err := url.Parse(ts.url)
	require.NoError(t, err)

	const sessions, pollsEach = 100, 8
	for i := range sessions {
		poll, err := url.Parse(pollSession(t, ts.url))
		require.NoError(t, err)
		for j := range pollsEach {
			c, err := net.Dial("tcp", u.Host)
			require.NoError(t, err)
			_, err = fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", poll.RequestURI(), u.Host)
			require.NoError(t, err)
			if (i+j)%2 == 1 {
				time.Sleep(time.Duration(j*50) * time.Microsecond)
			}
			require.NoError(t, c.Close())
		}
	}
	// Handshakes abandoned as well: no session exists yet to end them.
	for i := range sessions * pollsEach / 2 {
		c, err := net.Dial("tcp", u.Host)
		require.NoError(t, err)
		_, err = fmt.Fprintf(c, "GET /socket.io/?EIO=4&transport=polling HTTP/1.1\r\nHost: %s\r\n\r\n", u.Host)
		require.NoError(t, err)
		if i%2 == 1 {
			time.Sleep(time.Duration(i%8*50) * time.Microsecond)
		}
		require.NoError(t, c.Close())
	}
	vals := a.call(protocol.EventGetTools, getTools("a1", "c1", "after"))
	require.Len(t, vals, 1)
	noGoroutineIn(t, "transports.(*polling).onPollRequest")
	noGoroutineIn(t, "engine/v3.(*server).HandleRequest")
}
