package computer

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/internal/siotest"
	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Computer joins its office at once (issue: joins first): one MCP server
// hangs on initialize, another has a document whose Level-1 read takes a
// minute and that dies when a read is cancelled. The join happens while
// the Finder is still being built; the tools come first; the Finder is
// filled in the background without the slow document and announced with
// server:update_finder; the server is not restarted (no cancel was sent).
func TestJoinsFirstFillsFinderInBackground(t *testing.T) {
	const readTimeout = 5 * time.Second
	bin := testmcp.Binary(t)
	raw := fmt.Sprintf(`{"servers": {
	  "slow": {"type": "stdio", "default_tool_meta": {"auto_apply": true},
	           "server_parameters": {"command": %q, "args": ["-host", "hs", "-docs", "3", "-slow-docs", "doc-2", "-read-delay", "1m", "-die-on-cancel"]}},
	  "hang": {"type": "stdio", "server_parameters": {"command": %q, "args": ["-host", "hh", "-hang-initialize"]}}
	}}`, bin, bin)
	cfg, err := config.Parse([]byte(raw))
	require.NoError(t, err)
	srv := siotest.Start(t, "127.0.0.1:0", "")
	c := New(cfg, WithDebounce(20*time.Millisecond), WithCatalogReadTimeout(readTimeout),
		WithManagerOptions(mcpclient.WithTimeouts(time.Minute, 30*time.Second)))
	t.Cleanup(func() { c.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, c.Launch(ctx))
	require.NoError(t, c.Connect(ctx, srv.URL(), "o", "pc"))
	select {
	case <-srv.Joined:
	case <-time.After(30 * time.Second):
		t.Fatal("not joined")
	}
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	assert.ErrorIs(t, c.Ready(short), context.DeadlineExceeded, "joined while servers were still coming up")

	// The tools of slow come before its Finder (and hang holds nothing).
	require.Eventually(t, func() bool {
		var ret protocol.GetToolsRet
		decode(t, srv.Request(protocol.EventGetTools, map[string]any{"agent": "ag", "req_id": "t", "computer": "pc"}), &ret)
		return len(ret.Tools) == len(testmcp.AllTools)
	}, 30*time.Second, 20*time.Millisecond)
	pid := c.Manager().Conn("slow").PID()

	// The Finder comes in the background, announced (its first document
	// at once, the others as they are read), without doc-2.
	waitEvent(t, srv, protocol.EventUpdateFinder, 30*time.Second)
	var fin protocol.GetFinderRet
	require.Eventually(t, func() bool {
		fin = protocol.GetFinderRet{}
		decode(t, srv.Request(protocol.EventGetFinder, map[string]any{"agent": "ag", "req_id": "f", "computer": "pc"}), &fin)
		return fin.TotalCount == 2
	}, 30*time.Second, 20*time.Millisecond, "doc-1 and doc-3; doc-2 times out")
	for _, d := range fin.Documents {
		assert.NotEqual(t, "doc-2", d.DocRef)
	}
	// The server that dies on cancel was not cancelled: no restart loop.
	time.Sleep(500 * time.Millisecond)
	for _, s := range c.Status() {
		if s.Name == "slow" {
			assert.Equal(t, mcpclient.StateUp, s.State)
			assert.Zero(t, s.Restarts)
			assert.Equal(t, pid, s.PID)
		} else {
			assert.NotEqual(t, mcpclient.StateUp, s.State, "hang never initialises")
		}
	}
}

func decode(t *testing.T, vals []any, v any) {
	t.Helper()
	require.Len(t, vals, 1)
	b, err := json.Marshal(vals[0])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v), string(b))
}

func waitEvent(t *testing.T, srv *siotest.Server, event string, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev := <-srv.Events:
			if ev == event {
				return
			}
		case <-deadline:
			t.Fatalf("%s not emitted", event)
		}
	}
}
