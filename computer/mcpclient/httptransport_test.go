package mcpclient

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// eventStream serves text/event-stream: events comments every tick for
// active, then silence until the client goes away.
func eventStream(t *testing.T, tick, active time.Duration) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		end := time.After(active)
		ticker := time.NewTicker(tick)
		defer ticker.Stop()
		for {
			select {
			case <-ticker.C:
				_, _ = io.WriteString(w, ": keep\n\n")
				w.(http.Flusher).Flush()
			case <-end:
				<-r.Context().Done()
				return
			case <-r.Context().Done():
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestSSEReadTimeout(t *testing.T) {
	t.Run("a silent stream is closed", func(t *testing.T) {
		// Events every 20 ms for 300 ms (longer than the timeout in all),
		// then nothing: the stream lives while it talks and ends once silent.
		srv := eventStream(t, 20*time.Millisecond, 300*time.Millisecond)
		hc := httpSettings{sseRead: 150 * time.Millisecond}.client()
		resp, err := hc.Get(srv.URL)
		require.NoError(t, err)
		defer resp.Body.Close()
		done := make(chan struct{})
		var n int
		var readErr error
		go func() {
			defer close(done)
			var b []byte
			b, readErr = io.ReadAll(resp.Body)
			n = len(b)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("a silent stream stayed open")
		}
		require.Error(t, readErr)
		assert.Contains(t, readErr.Error(), "sse_read_timeout")
		assert.Greater(t, n, 8*len(": keep\n\n"), "the stream was cut while it was still talking")
	})
	t.Run("without a timeout the stream stays open", func(t *testing.T) {
		srv := eventStream(t, 20*time.Millisecond, 50*time.Millisecond)
		resp, err := httpSettings{}.client().Get(srv.URL)
		require.NoError(t, err)
		defer resp.Body.Close()
		read := make(chan error, 1)
		go func() { _, err := io.ReadAll(resp.Body); read <- err }()
		select {
		case err := <-read:
			t.Fatalf("stream ended: %v", err)
		case <-time.After(500 * time.Millisecond):
		}
	})
	t.Run("other answers are untouched", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"ok":true}`)
		}))
		defer srv.Close()
		resp, err := httpSettings{sseRead: time.Millisecond}.client().Get(srv.URL)
		require.NoError(t, err)
		defer resp.Body.Close()
		_, isIdle := resp.Body.(*idleBody)
		assert.False(t, isIdle)
		time.Sleep(20 * time.Millisecond)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, `{"ok":true}`, string(b))
	})
}

// TestTerminateOnClose runs a real streamable HTTP MCP server behind a
// reverse proxy that counts the session DELETEs a closing Computer sends.
func TestTerminateOnClose(t *testing.T) {
	p := testmcp.StartHTTP(t, "127.0.0.1:0")
	target, err := url.Parse(p.URL)
	require.NoError(t, err)
	var deletes atomic.Int32
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			deletes.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	proxied := proxy.URL + target.Path

	for _, tt := range []struct {
		name    string
		setting *bool
		deletes int32
	}{
		{"default ends the session", nil, 1},
		{"true ends the session", ptrTo(true), 1},
		{"false keeps it", ptrTo(false), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			deletes.Store(0)
			cfg := httpConfig("a", proxied)
			cfg.Streamable.ServerParameters.TerminateOnClose = tt.setting
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := dial(ctx, cfg, NewManager(nil).opts)
			require.NoError(t, err)
			tools, err := c.ListTools(ctx)
			require.NoError(t, err)
			require.NotEmpty(t, tools)
			c.close()
			assert.Equal(t, tt.deletes, deletes.Load())
		})
	}
}

// TestSSEReadTimeoutLosesConnection: over the SSE transport a stream that
// stays silent longer than sse_read_timeout is a lost connection, which the
// Manager restarts like any other.
func TestSSEReadTimeoutLosesConnection(t *testing.T) {
	p := testmcp.StartSSE(t, "127.0.0.1:0")
	secs := 0.3
	cfg := protocol.MCPServerConfig{SSE: &protocol.MCPSSEConfig{Name: "a", ForbiddenTools: []string{}, ToolMeta: map[string]protocol.ToolMeta{},
		ServerParameters: protocol.MCPSSEParameters{URL: p.URL, SSEReadTimeout: &secs}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := NewManager(nil).opts
	o.healthInterval = time.Minute // the health pings' answers would keep the stream talking
	c, err := dial(ctx, cfg, o)
	require.NoError(t, err)
	defer c.close()
	select {
	case <-c.Lost():
	case <-ctx.Done():
		t.Fatal("a silent SSE stream was not noticed")
	}
	require.Error(t, c.LostErr())
	assert.Contains(t, c.LostErr().Error(), "sse_read_timeout")
}

func ptrTo[T any](v T) *T { return &v }
