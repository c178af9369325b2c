package parser

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Arguments that are strings and raw JSON are written as json.Marshal
// writes them (smcp-go patch 18), and the packet decodes to the same
// values; any other argument takes json.Marshal.
func TestEncodeRawArgs(t *testing.T) {
	payload := map[string]any{"blob": strings.Repeat("QUJD", 1<<10), "eof": true, "chunk_offset": 262144.0, "name": "<a & b>"}
	raw, err := json.Marshal(payload)
	require.NoError(t, err)
	id := uint64(7)
	for _, tc := range []struct {
		name    string
		typ     PacketType
		raw     []any
		generic []any
	}{
		{"event", EVENT, []any{"client:put_blob", json.RawMessage(raw)}, []any{"client:put_blob", payload}},
		{"ack", ACK, []any{json.RawMessage(raw)}, []any{payload}},
		{"strings only", EVENT, []any{"notify:x", "<é>"}, []any{"notify:x", "<é>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := NewEncoder().Encode(&Packet{Type: tc.typ, Nsp: "/smcp", Id: &id, Data: tc.raw})
			want := NewEncoder().Encode(&Packet{Type: tc.typ, Nsp: "/smcp", Id: &id, Data: tc.generic})
			require.Len(t, got, 1)
			require.Len(t, want, 1)
			assert.Equal(t, want[0].String(), got[0].String())
		})
	}
	_, ok := encodeRawArgs([]any{"e", json.RawMessage(raw), 1.5})
	assert.False(t, ok, "a number takes json.Marshal")
	_, ok = encodeRawArgs([]any{"e", json.RawMessage(nil)})
	assert.False(t, ok, "an empty raw message is no JSON")
}
