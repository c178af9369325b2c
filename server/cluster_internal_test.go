package server

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFromNode checks what a node accepts as a Computer's answer relayed
// by another node (answerAdapter): one JSON text per value, nothing else.
func TestFromNode(t *testing.T) {
	vals, ok := fromNode([]any{`{"req_id":"r1","tools":[]}`, `"text"`})
	require.True(t, ok)
	require.Equal(t, []any{json.RawMessage(`{"req_id":"r1","tools":[]}`), json.RawMessage(`"text"`)}, vals)
	for _, bad := range [][]any{
		{`{"req_id":`},                  // truncated
		{`{"a":1} {"b":2}`},             // two values
		{``},                            // empty
		{map[string]any{"req_id": "r"}}, // not relayed as text
		{42.0},
		{nil},
	} {
		_, ok := fromNode(bad)
		require.False(t, ok, "%#v", bad)
	}
}
