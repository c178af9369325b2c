package sourcetest

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Wait and Tick are the generous bounds of event-driven waits in tests (a
// loaded 2-core machine).
const (
	Wait = 10 * time.Second
	Tick = 5 * time.Millisecond
)

// Events counts OnChange calls.
type Events struct{ n atomic.Int32 }

// Fn is the OnChange function to install.
func (e *Events) Fn() func() { return func() { e.n.Add(1) } }

// Count is the number of calls so far.
func (e *Events) Count() int { return int(e.n.Load()) }

// Expect waits for the n-th call (if n > 0), then checks that no further call
// follows for quiet.
func (e *Events) Expect(t testing.TB, n int, quiet time.Duration) {
	t.Helper()
	if n > 0 {
		require.Eventually(t, func() bool { return e.Count() >= n }, Wait, Tick, "waiting for %d OnChange", n)
	}
	require.Never(t, func() bool { return e.Count() > n }, quiet, Tick, "more than %d OnChange", n)
}

// LogRecorder is a slog.Handler keeping records at warning level or above as
// "message key=value ...".
type LogRecorder struct {
	mu   sync.Mutex
	msgs []string
}

// Logger returns a logger writing to r.
func (r *LogRecorder) Logger() *slog.Logger { return slog.New(r) }

// Enabled implements slog.Handler.
func (r *LogRecorder) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

// Handle implements slog.Handler.
func (r *LogRecorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	})
	r.mu.Lock()
	r.msgs = append(r.msgs, b.String())
	r.mu.Unlock()
	return nil
}

// WithAttrs implements slog.Handler.
func (r *LogRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }

// WithGroup implements slog.Handler.
func (r *LogRecorder) WithGroup(string) slog.Handler { return r }

// Warnings returns the recorded messages.
func (r *LogRecorder) Warnings() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.msgs)
}

// Ctx is a context bounded by 30 s and the test.
func Ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// Feature is what Finder, Desktop and bridge have in common for notifications.
type Feature interface {
	ResourceListChanged(ctx context.Context, name string)
}

// UpdateFeature also handles resources/updated.
type UpdateFeature interface {
	Feature
	ResourceUpdated(ctx context.Context, name, uri string)
}

// Wire forwards cl's resource notifications to f off the read loop, as the
// Computer's manager does.
func Wire(cl *Client, f Feature) {
	cl.OnResourceNotification(func(method, uri string) {
		go func() {
			c, cancel := context.WithTimeout(context.Background(), Wait)
			defer cancel()
			switch method {
			case "notifications/resources/list_changed":
				f.ResourceListChanged(c, cl.Name())
			case "notifications/resources/updated":
				if u, ok := f.(UpdateFeature); ok {
					u.ResourceUpdated(c, cl.Name(), uri)
				}
			}
		}()
	})
}
