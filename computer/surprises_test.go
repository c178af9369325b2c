package computer

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/internal/sourcetest"
	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestToolsOnlyServerIsQuiet: an MCP server that serves tools and declares
// no resources is a normal server, not a failure: its tools are published
// and nothing is logged at WARN or above (no "aggregating failed", no
// advice about documents it never had).
func TestToolsOnlyServerIsQuiet(t *testing.T) {
	cfg, err := config.Parse([]byte(fmt.Sprintf(`{"name":"calc","type":"stdio","default_tool_meta":{"auto_apply":true},
	  "server_parameters":{"command":%q,"args":["-no-resources","-tools","echo"]}}`, testmcp.Binary(t))))
	require.NoError(t, err)
	var rec sourcetest.LogRecorder // WARN and above
	c := newComputer(t, cfg, WithLogger(rec.Logger()))
	assert.Equal(t, []string{"echo"}, toolNames(c))
	assert.Equal(t, "hi", *call(c, "echo", map[string]any{"text": "hi"}).Content[0].Text)
	assert.Empty(t, c.Documents())
	require.NoError(t, c.Close(context.Background()))
	assert.Empty(t, rec.Warnings(), "a tools-only server logs no warning")
}

// TestStartFailsWhenAServerDoesNotStart: Start reports a server whose
// command does not exist (503, naming it, wrapping exec.ErrNotFound), and
// the Computer keeps serving the servers that came up.
func TestStartFailsWhenAServerDoesNotStart(t *testing.T) {
	cfg, err := config.Parse([]byte(fmt.Sprintf(`{"servers": {
	  "good": {"type":"stdio","default_tool_meta":{"auto_apply":true},"server_parameters":{"command":%q,"args":["-no-resources","-tools","echo"]}},
	  "typo": {"type":"stdio","server_parameters":{"command":"smcp-no-such-command-i28"}}
	}}`, testmcp.Binary(t))))
	require.NoError(t, err)
	c := New(cfg, WithLogger(slog.New(slog.DiscardHandler)), WithManagerOptions(mcpclient.WithBackoff(time.Hour, time.Hour)))
	t.Cleanup(func() { c.Close(context.Background()) })
	err = c.Start(context.Background())
	require.Error(t, err)
	perr := protocol.AsError(err)
	assert.Equal(t, protocol.CodeUnavailable, perr.Code, "%v", err)
	assert.Contains(t, perr.Message, "typo")
	assert.NotContains(t, perr.Message, "good")
	assert.Contains(t, perr.Details["servers"], "typo")
	assert.ErrorIs(t, err, exec.ErrNotFound)
	var se *mcpclient.ServerError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "typo", se.Name)

	// The server that came up serves.
	assert.Equal(t, []string{"echo"}, toolNames(c))
	assert.Equal(t, "ok", *call(c, "echo", map[string]any{"text": "ok"}).Content[0].Text)
}
