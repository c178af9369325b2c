package computer

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/internal/siotest"
	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/computer/sio"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/require"
)

// TestFreshComputerAnswersValidate: a Computer joins its office before its
// MCP servers are up, so its first answers are those of a Computer with
// nothing: each of them, for every client:* event, is valid against its ack
// schema, and so is each once the server is up (issue 24: the tools answer
// was {"tools": null} until the first tools were known, which the Server's
// answer validation turned into a 500 and the Python SDK's Agent got on
// every Computer's entry). The MCP server holds its initialize until the
// test lets it go; its arrival is announced with server:update_tool_list.
// Its config is the least one (no forbidden_tools, no tool_meta, no env):
// what a user writes. In each generation, against the schemas of that
// generation, every event of it included.
func TestFreshComputerAnswersValidate(t *testing.T) {
	for _, g := range []protocol.Generation{protocol.Gen02, protocol.Gen04} {
		t.Run(g.String(), func(t *testing.T) { freshComputerAnswersValidate(t, g) })
	}
}

func freshComputerAnswersValidate(t *testing.T, g protocol.Generation) {
	bin := testmcp.Binary(t)
	hold := filepath.Join(t.TempDir(), "up")
	raw := fmt.Sprintf(`{"servers": {"late": {"type": "stdio", "default_tool_meta": {"auto_apply": true},
	  "server_parameters": {"command": %q, "args": ["-host", "hl", "-docs", "2", "-hold-initialize", %q]}}}}`, bin, hold)
	cfg, err := config.Parse([]byte(raw))
	require.NoError(t, err)
	srv := siotest.Start(t, "127.0.0.1:0", "")
	srv.Confirm.Store(true) // as smcp-go: the extension events are routed
	c := New(cfg, WithDebounce(20*time.Millisecond))
	t.Cleanup(func() { c.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, c.Launch(ctx))
	require.NoError(t, c.Connect(ctx, srv.URL(), "o", "pc", sio.WithGenerations(g)))
	require.Equal(t, g, c.Client().Generation())
	tool := "echo"
	if g.Handshake() {
		tool = "late__echo"
	}
	select {
	case <-srv.Joined:
	case <-ctx.Done():
		t.Fatal("not joined")
	}

	// answers sends every client:* request and checks each answer against
	// its schema; it returns them by event.
	answers := func(phase, window string) map[string]map[string]any {
		t.Helper()
		base := map[string]any{"agent": "ag", "computer": "pc"}
		with := func(kv ...any) map[string]any {
			m := map[string]any{"req_id": fmt.Sprintf("%s-%d", phase, len(kv))}
			for k, v := range base {
				m[k] = v
			}
			for i := 0; i < len(kv); i += 2 {
				m[kv[i].(string)] = kv[i+1]
			}
			return m
		}
		payloads := map[string]map[string]any{
			protocol.EventGetTools:     with(),
			protocol.EventToolCall:     with("tool_name", tool, "params", map[string]any{"text": "hi"}, "timeout", 10),
			protocol.EventGetConfig:    with(),
			protocol.EventGetDesktop:   with(),
			protocol.EventGetFinder:    with(),
			protocol.EventReadResource: with("uri", window),
			protocol.EventGetResources: with("mcp_server", "late"),
			protocol.EventGetSkills:    with(),
			protocol.EventGetSkill:     with("name", "a-skill"),
			protocol.EventGetBlob:      with("blob_handle", "h"),
			protocol.EventPutBlob:      with("blob", "", "chunk_offset", 0, "eof", true),
		}
		out := map[string]map[string]any{}
		for _, info := range g.Events() {
			if info.Direction != protocol.DirectionClient {
				continue
			}
			payload, ok := payloads[info.Name]
			require.True(t, ok, "no request for %s: add one", info.Name)
			vals := srv.Request(info.Name, payload)
			require.Len(t, vals, 1, "%s %s: one ack value", phase, info.Name)
			b, _ := json.Marshal(vals[0])
			require.NoError(t, g.ValidateValue(info.Name, protocol.Ack, vals[0]), "%s %s answered %s", phase, info.Name, b)
			m, _ := vals[0].(map[string]any)
			out[info.Name] = m
		}
		return out
	}

	before := answers("before", "window://hl/main")
	tools, ok := before[protocol.EventGetTools]["tools"].([]any)
	require.True(t, ok, "tools is a list: %v", before[protocol.EventGetTools])
	require.Empty(t, tools)
	require.Equal(t, true, before[protocol.EventToolCall]["isError"], "no tool yet")

	require.NoError(t, os.WriteFile(hold, nil, 0o644))
	waitEvent(t, srv, protocol.EventUpdateToolList, time.Minute)
	desktop := func() []string {
		d, err := c.Desktop(ctx, nil, "")
		require.NoError(t, err)
		return d
	}
	require.Eventually(t, func() bool { return len(desktop()) > 0 }, time.Minute, 20*time.Millisecond)
	window := strings.SplitN(desktop()[0], "\n", 2)[0]
	after := answers("after", window)
	require.Len(t, after[protocol.EventGetTools]["tools"], len(testmcp.AllTools))
	require.NotEqual(t, true, after[protocol.EventToolCall]["isError"], "echo answered: %v", after[protocol.EventToolCall])
	require.NotContains(t, after[protocol.EventReadResource], "error")
	require.NotContains(t, after[protocol.EventReadResource], "code")
	if g.Handshake() {
		for _, tl := range after[protocol.EventGetTools]["tools"].([]any) {
			require.Equal(t, "late", tl.(map[string]any)["bundle_id"])
		}
		require.Contains(t, after[protocol.EventGetConfig]["servers"], "late")
		// Up, the server's resources are listed, a page at a time.
		require.NotContains(t, after[protocol.EventGetResources], "code", "%v", after[protocol.EventGetResources])
		require.NotEmpty(t, after[protocol.EventGetResources]["resources"], "%v", after[protocol.EventGetResources])
	}
}
