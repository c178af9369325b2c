package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/sio"
	"github.com/a2c-smcp/smcp-go/server"
)

// recorder is a slog handler that keeps the messages of Warn and above.
type recorder struct {
	mu   *sync.Mutex
	msgs *[]string
}

func newRecorder() recorder { return recorder{mu: &sync.Mutex{}, msgs: &[]string{}} }

func (r recorder) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (r recorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	r.mu.Lock()
	*r.msgs = append(*r.msgs, b.String())
	r.mu.Unlock()
	return nil
}
func (r recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r recorder) WithGroup(string) slog.Handler      { return r }

func (r recorder) matching(sub string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, m := range *r.msgs {
		if strings.Contains(m, sub) {
			out = append(out, m)
		}
	}
	return out
}

// TestNoPingTimeoutUnderLoad runs sustained routed requests from several
// goroutines across eight heartbeats (a 500 ms ping interval, a 1 s pong
// timeout) and checks that neither the Agent nor the Computer was
// disconnected and that every request was answered. Socket.IO's usual
// heartbeat shape (pong timeout shorter than the ping interval) let a race
// in servers/engine close healthy sessions for "ping timeout" under load
// (spec/decisions.md, Socket.IO library).
func TestNoPingTimeoutUnderLoad(t *testing.T) {
	const interval = 500 * time.Millisecond
	d := startServer(t, server.WithHeartbeat(interval, 2*interval))
	rec := newRecorder()
	log := slog.New(rec)

	raw, err := json.Marshal([]mcpServer{toolServer(t, "tools")})
	require.NoError(t, err)
	cfg, err := config.Parse(raw)
	require.NoError(t, err)
	c := computer.New(cfg, computer.WithLogger(logger(t)))
	ctx := testContext(t)
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = c.Close(cctx)
	})
	require.NoError(t, c.Connect(ctx, d.URL, "o1", "desk", sio.WithAPIKey(d.APIKey), sio.WithLogger(log)))
	a := dialAgent(t, d, "o1", "bot", agent.WithLogger(log))

	const (
		workers = 4
		span    = 8 * interval // ≥ 3 heartbeats, with margin
	)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var answered int
	var failures []error
	stop := time.Now().Add(span)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; time.Now().Before(stop); i++ {
				var err error
				if i%2 == 0 {
					_, err = a.GetTools(ctx, "desk")
				} else {
					var res any
					res, err = a.CallTool(ctx, "desk", "echo", map[string]any{"text": fmt.Sprint(w, i)}, 10*time.Second)
					_ = res
				}
				mu.Lock()
				if err != nil {
					failures = append(failures, err)
				} else {
					answered++
				}
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	t.Logf("%d requests answered over %v with a %v ping interval", answered, span, interval)
	require.Empty(t, failures)
	require.Empty(t, rec.matching("disconnected"), "a role was disconnected")
	require.Empty(t, rec.matching("ping timeout"))
	require.Greater(t, answered, 0)
}
