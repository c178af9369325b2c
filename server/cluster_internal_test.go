package server

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/zishang520/socket.io/parsers/socket/v3/parser"
)

// TestFromNode checks what a node accepts as a Computer's answer relayed
// by another node (answerAdapter): one JSON text per value, carried as a
// nodeJSON, nothing else.
func TestFromNode(t *testing.T) {
	a, b := nodeJSON(`{"req_id":"r1","tools":[]}`), nodeJSON(`"text"`)
	vals, ok := fromNode([]any{&a, &b})
	require.True(t, ok)
	require.Equal(t, []any{json.RawMessage(`{"req_id":"r1","tools":[]}`), json.RawMessage(`"text"`)}, vals)
	for _, bad := range [][]any{
		{`{"req_id":"r1"}`},             // a string: what the previous version sent
		{[]byte(`{"req_id":"r1"}`)},     // a binary string
		{map[string]any{"req_id": "r"}}, // not relayed as text
		{42.0},
		{nil},
	} {
		_, ok := fromNode(bad)
		require.False(t, ok, "%#v", bad)
	}
}

// TestNodeJSON sends JSON texts through MessagePack as the adapter's
// messages carry them between nodes: they arrive as the same text, and a
// text that is not exactly one JSON value fails to decode.
func TestNodeJSON(t *testing.T) {
	args := []any{"client:get_tools", json.RawMessage(`{"agent":"a1","req_id":"r1","computer":"c1"}`), 42.0}
	b, err := msgpack.Marshal(toNode(args))
	require.NoError(t, err)
	var got []any
	require.NoError(t, msgpack.Unmarshal(b, &got))
	require.Len(t, got, 3)
	require.Equal(t, "client:get_tools", got[0])
	require.IsType(t, (*nodeJSON)(nil), got[1])
	require.Equal(t, `{"agent":"a1","req_id":"r1","computer":"c1"}`, string(*got[1].(*nodeJSON)))

	for _, bad := range []string{`{"req_id":`, `{"a":1} {"b":2}`, ``, "\"\x00\""} {
		j := nodeJSON(bad)
		b, err := msgpack.Marshal([]any{&j})
		require.NoError(t, err)
		require.Error(t, msgpack.Unmarshal(b, &got), "%q", bad)
	}

	// The encoder writes a request from another node as its text.
	j := nodeJSON(`{"req_id":"r2"}`)
	out, ok := encodeRaw(&parser.Packet{Type: parser.EVENT, Nsp: "/smcp", Data: []any{"client:get_tools", &j}})
	require.True(t, ok)
	require.Equal(t, `2/smcp,["client:get_tools",{"req_id":"r2"}]`, string(out))
}
