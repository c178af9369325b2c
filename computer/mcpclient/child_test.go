package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logSink collects JSON log records.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *logSink) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(s, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// records are the records whose message is msg.
func (s *logSink) records(msg string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(s.buf.String(), "\n") {
		var r map[string]any
		if json.Unmarshal([]byte(line), &r) == nil && r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

// waitRecords waits until at least n records with message msg were logged.
func (s *logSink) waitRecords(t *testing.T, msg string, n int) []map[string]any {
	t.Helper()
	var recs []map[string]any
	require.Eventually(t, func() bool { recs = s.records(msg); return len(recs) >= n }, 20*time.Second, 20*time.Millisecond,
		"%d records %q", n, msg)
	return recs
}

// A server that exits at start: the WARN says how it exited and what it
// last wrote on stderr (the last 20 lines).
func TestStartFailureReportsExitStatusAndStderr(t *testing.T) {
	var logs logSink
	m := NewManager([]protocol.MCPServerConfig{stdioConfig(t, "a", "-stderr-lines", "30", "-exit-after", "0", "-exit-code", "3")},
		WithLogger(logs.logger()), WithBackoff(50*time.Millisecond, 100*time.Millisecond))
	defer m.Close(context.Background())
	require.NoError(t, m.Launch())
	r := logs.waitRecords(t, "mcp server failed to start", 1)[0]
	assert.Equal(t, "WARN", r["level"])
	assert.Equal(t, "exit status 3", r["exit"])
	assert.Contains(t, r["err"], "exit status 3")
	lines := strings.Split(r["stderr"].(string), "\n")
	require.Len(t, lines, stderrTailLines)
	assert.Equal(t, "stderr line 11", lines[0])
	assert.Equal(t, "stderr line 30", lines[19])
	assert.EqualValues(t, 50*time.Millisecond, r["retry_in"])
}

// A server lost after a run: the WARN has its exit status, and retry_in is
// the wait actually made: after a stable run, the first wait again.
func TestLossReportsExitStatusAndRetryIn(t *testing.T) {
	var logs logSink
	r := newRecorder()
	m := NewManager([]protocol.MCPServerConfig{stdioConfig(t, "a", "-exit-after", "700ms", "-exit-code", "4")},
		WithLogger(logs.logger()), WithHooks(r.hooks()), WithBackoff(100*time.Millisecond, 5*time.Second))
	m.stableAfter = 300 * time.Millisecond
	defer m.Close(context.Background())
	require.NoError(t, m.Launch())
	recs := logs.waitRecords(t, "mcp server lost", 2)
	for _, rec := range recs[:2] {
		assert.Equal(t, "exit status 4", rec["exit"])
		assert.Contains(t, rec["err"], "exit status 4")
		assert.EqualValues(t, 100*time.Millisecond, rec["retry_in"], "a stable run starts the backoff over")
	}
	d := r.wait(t, is("down", "a"))
	var pe *ProcessError
	require.ErrorAs(t, d.err, &pe)
	assert.Equal(t, "exit status 4", pe.Status)
}

// Lines on a server's stdout that are no JSON object (plain text, a JSON
// array) are dropped before mcp-go sees them,
// counted and logged: the first verbatim, then a count.
func TestStdoutGarbageCountedAndLogged(t *testing.T) {
	var logs logSink
	r := newRecorder()
	m := NewManager([]protocol.MCPServerConfig{stdioConfig(t, "a", "-stdout-garbage", "5")},
		WithLogger(logs.logger()), WithHooks(r.hooks()))
	defer m.Close(context.Background())
	require.NoError(t, m.Start(context.Background()))
	c := m.Conn("a")
	require.NotNil(t, c, "the server works despite the garbage")
	assert.Equal(t, "hi", callText(t, c, "echo", map[string]any{"text": "hi"}))
	assert.Equal(t, 5, c.NonJSONLines())
	first := logs.records("mcp server wrote a non-JSON line on stdout (dropped)")
	require.Len(t, first, 1)
	assert.Equal(t, "garbage line 1: not JSON", first[0]["line"])
	assert.Equal(t, "WARN", first[0]["level"])
	require.NoError(t, m.StopServer(context.Background(), "a"))
	counts := logs.waitRecords(t, "mcp server wrote non-JSON lines on stdout (dropped)", 1)
	assert.EqualValues(t, 5, counts[len(counts)-1]["count"])
}

// Child stderr is logged at Info, at most 20 lines per window; the others
// are counted.
func TestStderrLoggedAtInfoWithRateLimit(t *testing.T) {
	var logs logSink
	m := NewManager([]protocol.MCPServerConfig{stdioConfig(t, "a", "-stderr-lines", "50")}, WithLogger(logs.logger()))
	defer m.Close(context.Background())
	require.NoError(t, m.Start(context.Background()))
	recs := logs.waitRecords(t, "mcp server stderr", stderrLogBudget)
	assert.Equal(t, "INFO", recs[0]["level"])
	assert.Equal(t, "stderr line 1", recs[0]["line"])
	require.NoError(t, m.StopServer(context.Background(), "a"))
	assert.Len(t, logs.records("mcp server stderr"), stderrLogBudget)
	over := logs.waitRecords(t, "mcp server stderr lines not logged (rate limit)", 1)
	assert.EqualValues(t, 30, over[0]["count"])
}

// One server that never answers initialize neither delays Launch nor the
// other servers; it is reported with the reason and retried.
func TestHangingInitializeHoldsNothing(t *testing.T) {
	t.Run("others come up", func(t *testing.T) {
		r := newRecorder()
		m := NewManager([]protocol.MCPServerConfig{stdioConfig(t, "hang", "-hang-initialize"), stdioConfig(t, "good")},
			WithHooks(r.hooks()), WithTimeouts(time.Minute, 5*time.Second))
		defer m.Close(context.Background())
		require.NoError(t, m.Launch())
		r.wait(t, is("up", "good"))
		assert.Nil(t, m.Conn("hang"))
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		assert.ErrorIs(t, m.Ready(ctx), context.DeadlineExceeded, "hang is still in its first attempt")
	})
	t.Run("reported and retried", func(t *testing.T) {
		var logs logSink
		r := newRecorder()
		m := NewManager([]protocol.MCPServerConfig{stdioConfig(t, "hang", "-hang-initialize")},
			WithLogger(logs.logger()), WithHooks(r.hooks()), WithTimeouts(500*time.Millisecond, 5*time.Second),
			WithBackoff(100*time.Millisecond, 200*time.Millisecond))
		defer m.Close(context.Background())
		require.NoError(t, m.Launch())
		recs := logs.waitRecords(t, "mcp server failed to start", 2)
		for _, rec := range recs {
			assert.Equal(t, "WARN", rec["level"])
			assert.Equal(t, "hang", rec["server"])
			assert.Contains(t, rec["err"], "initialize")
			assert.Contains(t, rec["err"], "deadline exceeded")
			assert.Contains(t, rec["stderr"], "hanging before initialize")
		}
		assert.Equal(t, 0, r.count("up", "hang"))
	})
}

// A child that ignores the end of its stdin and SIGTERM is killed (with
// its group) when its server is stopped.
func TestStopKillsStubbornChild(t *testing.T) {
	r := newRecorder()
	m := NewManager([]protocol.MCPServerConfig{stdioConfig(t, "a", "-ignore-stdin-eof")}, WithHooks(r.hooks()))
	defer m.Close(context.Background())
	require.NoError(t, m.Start(context.Background()))
	pid := m.Conn("a").PID()
	require.NotZero(t, pid)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, m.StopServer(ctx, "a"))
	assert.False(t, processAlive(pid), "stubborn child %d left behind", pid)
}
