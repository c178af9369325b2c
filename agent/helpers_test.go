package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/agent/agenttest"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// wait is the generous bound of every test wait (loaded 2-core machines).
const wait = 20 * time.Second

func startPeer(t *testing.T, opts ...func(*agenttest.Options)) *agenttest.Peer {
	t.Helper()
	var o agenttest.Options
	for _, f := range opts {
		f(&o)
	}
	p, err := agenttest.Start(o)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = p.Close()
		if t.Failed() {
			t.Logf("peer trace:\n%s", p.Trace())
		}
	})
	return p
}

// logBuffer collects the Client's log lines for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(b)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) Contains(s string) bool { return strings.Contains(l.String(), s) }

func newLogger() (*slog.Logger, *logBuffer) {
	lb := &logBuffer{}
	return slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug})), lb
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// dial connects a Client to p and closes it at the end of the test.
func dial(t *testing.T, p *agenttest.Peer, opts ...agent.Option) (*agent.Client, *logBuffer) {
	t.Helper()
	log, lb := newLogger()
	opts = append([]agent.Option{agent.WithLogger(log), agent.WithName("tester")}, opts...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("client log:\n%s", lb.String())
		}
	})
	c, err := agent.Dial(ctxT(t), p.URL, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c, lb
}

// joined dials and joins office "office-1".
func joined(t *testing.T, p *agenttest.Peer, opts ...agent.Option) (*agent.Client, *logBuffer) {
	t.Helper()
	c, lb := dial(t, p, opts...)
	require.NoError(t, c.JoinOffice(ctxT(t), "office-1"))
	return c, lb
}

// requireCode checks that err is a *protocol.Error with code.
func requireCode(t *testing.T, err error, code protocol.Code) *protocol.Error {
	t.Helper()
	require.Error(t, err)
	var perr *protocol.Error
	require.True(t, errors.As(err, &perr), "not a *protocol.Error: %T %v", err, err)
	require.Equal(t, code, perr.Code, "error: %v", err)
	return perr
}

// mustJSON returns v as the generic JSON value a Socket.IO peer sees.
func mustJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// testLog is a Dial option that keeps the Client's log out of the output.
func testLog() agent.Option {
	log, _ := newLogger()
	return agent.WithLogger(log)
}
