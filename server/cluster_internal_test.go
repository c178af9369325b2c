package server

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFromNode checks what a node accepts as a Computer's answer relayed
// by another node (answerAdapter): one JSON text per value as a binary
// string, nothing else.
func TestFromNode(t *testing.T) {
	vals, ok := fromNode([]any{[]byte(`{"req_id":"r1","tools":[]}`), []byte(`"text"`)})
	require.True(t, ok)
	require.Equal(t, []any{json.RawMessage(`{"req_id":"r1","tools":[]}`), json.RawMessage(`"text"`)}, vals)
	for _, bad := range [][]any{
		{[]byte(`{"req_id":`)},          // truncated
		{[]byte(`{"a":1} {"b":2}`)},     // two values
		{[]byte(``)},                    // empty
		{`{"req_id":"r1"}`},             // a text string: the previous version's form
		{map[string]any{"req_id": "r"}}, // not relayed as text
		{42.0},
		{nil},
	} {
		_, ok := fromNode(bad)
		require.False(t, ok, "%#v", bad)
	}
}
