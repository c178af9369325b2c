package computer

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/internal/sourcetest"
	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A DPE server flooding resources/updated for URIs it never listed (each
// would re-list it): the Computer keeps at most the bounded backlog, then
// re-reads the server once (resync); its documents stay in the Finder, its
// tools answer, and no goroutine is left per notification.
func TestNotificationFloodResyncs(t *testing.T) {
	raw := fmt.Sprintf(`{"servers": {"a": {"type": "stdio", "default_tool_meta": {"auto_apply": true},
	  "server_parameters": {"command": %q, "args": ["-host", "ha", "-docs", "2", "-flood-updates", "20000"]}}}}`, testmcp.Binary(t))
	cfg, err := config.Parse([]byte(raw))
	require.NoError(t, err)
	var logs sourcetest.LogRecorder
	before := runtime.NumGoroutine()
	c := newComputer(t, cfg, WithLogger(logs.Logger()))
	resynced := func() bool {
		for _, w := range logs.Warnings() {
			if strings.HasPrefix(w, "mcp server sent more notifications than were taken") {
				return true
			}
		}
		return false
	}
	require.Eventually(t, resynced, 60*time.Second, 20*time.Millisecond, "the backlog overflowed and was replaced by a resync")
	require.Eventually(t, func() bool { return c.Finder(protocol.GetFinderReq{}).TotalCount == 2 }, 30*time.Second, 20*time.Millisecond)
	res := call(c, "echo", map[string]any{"text": "hi"})
	assert.Nil(t, res.IsError)
	_, err = c.ReadResource(context.Background(), "dpe://ha/doc-1")
	assert.NoError(t, err)
	t.Logf("goroutines: %d before the Computer, %d after the flood", before, runtime.NumGoroutine())
	assert.Less(t, runtime.NumGoroutine(), before+100, "no goroutine per notification")
}
