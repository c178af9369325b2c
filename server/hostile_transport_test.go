package server_test

// Hostile clients at the Engine.IO and Socket.IO levels, below the SMCP
// events: long-polling requests that overlap or trickle, packets no client
// library sends, and names that are not text (spec/protocol.md, Limits;
// spec/decisions.md, Limits against hostile clients).

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/stretchr/testify/require"
)

// pollSession opens an Engine.IO long-polling session without a key and
// returns the URL of its requests.
func pollSession(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/socket.io/?EIO=4&transport=polling")
	require.NoError(t, err)
	open, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	var hs struct{ Sid string }
	require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(string(open), "0")), &hs), "%s", open)
	return url + "/socket.io/?EIO=4&transport=polling&sid=" + hs.Sid
}

// noGoroutineIn waits until no goroutine has fn on its stack.
func noGoroutineIn(t *testing.T, fn string) {
	t.Helper()
	var n int
	ok := eventually(func() bool {
		var b strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
		n = 0
		for _, g := range strings.Split(b.String(), "\n\n") {
			if strings.Contains(g, fn) {
				c, _, _ := strings.Cut(g, " @")
				var k int
				_, _ = fmt.Sscan(c, &k)
				n += k
			}
		}
		return n == 0
	})
	require.True(t, ok, "%d goroutines still in %s", n, fn)
}

// TestHostileLongPolling: every long-polling request of a session ends
// within the heartbeat's interval plus its timeout, whatever the client
// does. Two overlapping polls close their session (the library's rule) and
// the one left waiting is answered, not held; a POST whose body trickles
// is cut off, not read for as long as the client likes after its session
// is gone. The goroutines return, and an office carries on meanwhile.
func TestHostileLongPolling(t *testing.T) {
	ts := startServer(t, server.WithHeartbeat(300*time.Millisecond, 600*time.Millisecond), server.WithConnectTimeout(time.Second))
	a, cs := office(t, ts, "o1", "a1", "c1")
	cs[0].answer(protocol.EventGetTools, toolsAnswer)
	// The test's bound, far above the Server's; no idle connections left
	// to count.
	client := &http.Client{Timeout: wait, Transport: &http.Transport{DisableKeepAlives: true}}

	const sessions = 10
	var wg sync.WaitGroup
	errs := make(chan error, 3*sessions)
	statuses := make(chan string, 3*sessions)
	for range sessions {
		u := pollSession(t, ts.url)
		for range 2 { // overlapping polls
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Get(u)
				if err == nil {
					b, _ := io.ReadAll(resp.Body)
					_ = resp.Body.Close()
					statuses <- fmt.Sprint(resp.StatusCode, " ", strings.TrimSpace(string(b)))
				}
				errs <- err
			}()
		}
		wg.Add(1)
		go func() { // a POST whose body never ends
			defer wg.Done()
			pr, pw := io.Pipe()
			stop := make(chan struct{})
			go func() {
				defer pw.Close()
				for {
					if _, err := pw.Write([]byte("6\x1e")); err != nil {
						return
					}
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond):
					}
				}
			}()
			resp, err := client.Post(pollSession(t, ts.url), "text/plain", pr)
			close(stop)
			_ = pr.Close()
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				statuses <- fmt.Sprint(resp.StatusCode, " ", strings.TrimSpace(string(b)))
			}
			// An answer, or a connection the Server closed: either ends
			// the request; only the client's own timeout would be a hang.
			if err != nil && isTimeout(err) {
				errs <- err
			}
		}()
	}
	vals := a.call(protocol.EventGetTools, getTools("a1", "c1", "during"))
	require.Equal(t, "during", vals[0].(map[string]any)["req_id"], "the office carries on")
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err, "every poll is answered; none is held until the client gives up")
	}
	close(statuses)
	count := map[string]int{}
	for st := range statuses {
		if strings.HasPrefix(st, "200 ") {
			st = "200" // a poll's payload, whatever the session sent
		}
		count[st]++
	}
	require.Equal(t, map[string]int{
		"200": sessions, // the first poll of each session, answered by a ping or a close
		`400 {"code":400,"message":"smcp server: overlapping long-polling request"}`: sessions,
		`408 {"code":408,"message":"smcp server: long-polling body not received in time"}`: sessions,
	}, count)
	// No request is still being served (the library's own timers of the
	// closed sessions run out on their own).
	noGoroutineIn(t, "engine/v3.(*server).HandleRequest")
}
