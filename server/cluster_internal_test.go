package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/zishang520/socket.io/parsers/socket/v3/parser"
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

// TestNodeJSON sends a request's JSON text through MessagePack as the
// adapter's messages carry it between nodes: it arrives as the same text, a
// text that is not exactly one JSON value fails to decode and is counted,
// and the encoder writes it to the Computer unchanged.
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

	before := nodeJSONRefused.Load()
	for _, bad := range []string{`{"req_id":`, `{"a":1} {"b":2}`, ``, "\"\x00\""} {
		j := nodeJSON(bad)
		b, err := msgpack.Marshal([]any{&j})
		require.NoError(t, err)
		var into []any
		require.Error(t, msgpack.Unmarshal(b, &into), "%q", bad)
	}
	require.Equal(t, int64(4), nodeJSONRefused.Load()-before)

	// The encoder writes a request from another node as its text.
	j := nodeJSON(`{"req_id":"r2"}`)
	out, ok := encodeRaw(&parser.Packet{Type: parser.EVENT, Nsp: "/smcp", Data: []any{"client:get_tools", &j}})
	require.True(t, ok)
	require.Equal(t, `2/smcp,["client:get_tools",{"req_id":"r2"}]`, string(out))
}

// TestValidJSON checks that validJSON accepts exactly what encoding/json's
// Valid accepts, on the edges a relayed text can have.
func TestValidJSON(t *testing.T) {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	for _, in := range []string{
		`{}`, ` {"a":1} `, "\n[1,2]\t", `"text"`, `42`, `-0.5e+3`, `true`, `null`,
		`{"a":1,"a":2}`, "\"\xff\"", `"\ud800"`, `"\u00e9"`, "\"\x00\"",
		``, ` `, `{"a":1} {"b":2}`, `[1,]`, `{"a":1`, `01`, `1.`, `.5`, `tru`, `"a`,
		`[1] x`, deep, strings.Repeat("[", 5000) + strings.Repeat("]", 5000),
	} {
		require.Equal(t, json.Valid([]byte(in)), validJSON([]byte(in)), "%.40q", in)
	}
}
