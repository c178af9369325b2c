package e2e

import (
	"fmt"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReferenceAgentsUnaffectedByProgress: an Agent of a reference SDK
// (Python 0.4.2, Rust 0.4.1) never asks for progress, so a call it makes to a
// Go Computer whose tool reports progress — even progress nobody asked for —
// is answered as before, and no notify:tool_progress reaches it: its SDK sees
// no event it does not know (spec/protocol.md, Tool-call progress).
func TestReferenceAgentsUnaffectedByProgress(t *testing.T) {
	for _, sdk := range []refSDK{refPy04, refRust04} {
		t.Run(sdk.String(), func(t *testing.T) {
			d := startServer(t)
			tools := toolServerExtras(t, "tools")
			tools["tool_meta"] = map[string]any{"progress": map[string]any{"auto_apply": true}}
			startComputer(t, d, "o1", "desk", []mcpServer{tools})
			ag := startRefAgent(t, sdk, d.URL, d.APIKey, "o1", "ref-agent")
			ag.ok(t, map[string]any{"op": "join"})

			res := ag.ok(t, map[string]any{"op": "tool_call", "computer": "desk", "tool": "progress",
				"params": map[string]any{"steps": 3}}).(map[string]any)
			require.Equal(t, "sent 0", firstText(res), "the reference Agent asked for no progress: no progressToken: %v", res)
			res = ag.ok(t, map[string]any{"op": "tool_call", "computer": "desk", "tool": "progress",
				"params": map[string]any{"steps": 3, "stray": true}}).(map[string]any)
			require.Equal(t, "sent 3", firstText(res), "%v", res)
			require.NotEqual(t, true, res["isError"], "%v", res)

			// Every line the Agent printed so far has been read: a
			// notification it got would be among them.
			ag.ok(t, map[string]any{"op": "list_room"})
			seen := append([]map[string]any{}, ag.seen...)
			for drained := false; !drained; {
				select {
				case m := <-ag.notes:
					seen = append(seen, m)
				default:
					drained = true
				}
			}
			for _, m := range seen {
				assert.NotContains(t, fmt.Sprint(m), "tool_progress", "%v", m)
			}
			assert.NotContains(t, ag.stderr.String(), "tool_progress", "the SDK logged no unknown event")
		})
	}
}
