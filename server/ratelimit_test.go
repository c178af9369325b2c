package server_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/stretchr/testify/require"
)

// TestUpdatesFolded: a burst of updates of one kind from one Computer
// reaches its office as one notification at once and one more when the
// interval has passed, whatever the burst's length; each kind is folded on
// its own; a folded notification of a Computer that left is dropped.
func TestUpdatesFolded(t *testing.T) {
	ts := startServer(t)
	a, cs := office(t, ts, "o1", "a1", "c1", "c2")
	for range 50 {
		cs[0].emit(protocol.EventUpdateToolList, map[string]any{"computer": "c1"})
	}
	cs[0].emit(protocol.EventUpdateFinder, map[string]any{"computer": "c1"})
	cs[0].barrier()
	require.Equal(t, map[string]any{"computer": "c1"}, a.next(protocol.NotifyUpdateToolList), "the first at once")
	require.Equal(t, map[string]any{"computer": "c1"}, a.next(protocol.NotifyUpdateFinder), "another kind is not held back")
	require.Equal(t, map[string]any{"computer": "c1"}, a.next(protocol.NotifyUpdateToolList), "the rest folded into one")
	time.Sleep(300 * time.Millisecond)
	a.noEvent(protocol.NotifyUpdateToolList)
	a.noEvent(protocol.NotifyUpdateFinder)

	// c2: the second update waits for the interval, and c2 leaves first.
	cs[1].emit(protocol.EventUpdateConfig, map[string]any{"computer": "c2"})
	cs[1].emit(protocol.EventUpdateConfig, map[string]any{"computer": "c2"})
	require.Equal(t, []any{true, nil}, cs[1].call(protocol.EventLeaveOffice, map[string]any{"office_id": "o1"}))
	require.Equal(t, map[string]any{"computer": "c2"}, a.next(protocol.NotifyUpdateConfig))
	a.next(protocol.NotifyLeaveOffice)
	time.Sleep(300 * time.Millisecond)
	a.noEvent(protocol.NotifyUpdateConfig)
}

// TestEventRate: joins, leaves, room listings and cancels share one token
// bucket per session; over it they are answered 429 and do nothing, and
// the bucket refills; another session is not affected.
func TestEventRate(t *testing.T) {
	ts := startServer(t, server.WithMaxEventRate(5)) // bursts of 10
	a, cs := office(t, ts, "o1", "a1", "c1")
	list := map[string]any{"agent": "a1", "req_id": "l", "office_id": "o1"}
	ok, refused := 0, 0
	for range 30 {
		if tooMany(a.call(protocol.EventListRoom, list)) {
			refused++
			continue
		}
		ok++
	}
	require.GreaterOrEqual(t, ok, 9, "the burst, less the join")
	require.Less(t, ok, 30, "the rate")
	require.Positive(t, refused)
	e := requireError(t, a.call(protocol.EventCancelToolCall, map[string]any{"agent": "a1", "req_id": "x"}), protocol.CodeTooManyRequests)
	require.Equal(t, float64(5), e.Details["max_event_rate"])
	cs[0].noEvent(protocol.NotifyCancelToolCall)

	// Another session's bucket is its own.
	require.Equal(t, []any{true, nil}, cs[0].call(protocol.EventLeaveOffice, map[string]any{"office_id": "o1"}))
	// And the bucket refills.
	require.Eventually(t, func() bool {
		return !tooMany(a.call(protocol.EventListRoom, list))
	}, wait, 100*time.Millisecond)
}

// tooMany reports whether an ack is a 429.
func tooMany(vals []any) bool {
	if len(vals) != 1 {
		return false
	}
	raw, err := json.Marshal(vals[0])
	if err != nil {
		return false
	}
	e, ok := protocol.DecodeErrorPayload(raw)
	return ok && e.Code == protocol.CodeTooManyRequests
}

// TestRefusalLogsBounded: a session sending refused events as fast as it
// can gets every answer, but not a log line for each: after a burst the
// lines are rate limited, and the next one says how many were left out.
func TestRefusalLogsBounded(t *testing.T) {
	logs, logOpt := captureLogs(t)
	ts := startServer(t, logOpt)
	p := dial(t, ts.url)
	for i := range 300 {
		requireError(t, p.call("no:such_event", map[string]any{"i": i}), protocol.CodeBadRequest)
	}
	// Every refusal of the session counts, the test:ping of dial included:
	// the burst is 100 lines, and 300 calls take long enough for a few more.
	n := logs.count("request refused", nil)
	require.GreaterOrEqual(t, n, 100, "the first ones are logged")
	require.Less(t, n, 200, "not every one")
	require.GreaterOrEqual(t, logs.count("request refused", map[string]any{"event": "no:such_event"}), 99)
	time.Sleep(300 * time.Millisecond)
	requireError(t, p.call("no:such_event", map[string]any{}), protocol.CodeBadRequest)
	var skipped float64
	for _, m := range logs.lines("request refused") {
		if v, ok := m["refusals_not_logged"].(float64); ok {
			skipped += v
		}
	}
	require.Positive(t, skipped, "a later line counts the refusals left out")
}
