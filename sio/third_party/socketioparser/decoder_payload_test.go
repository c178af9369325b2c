package parser

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A payload decodes to encoding/json's generic values; bytes after it are
// refused, as the JavaScript parser refuses them (smcp-go patch 19).
func TestDecodePayload(t *testing.T) {
	var got []*Packet
	d := NewDecoder()
	d.On("decoded", func(args ...any) { got = append(got, args[0].(*Packet)) })
	require.NoError(t, d.Add(`2/smcp,7["client:put_blob",{"eof":true,"chunk_offset":3,"blob":"QUJD","x":null}]`))
	require.Len(t, got, 1)
	assert.Equal(t, []any{"client:put_blob", map[string]any{"eof": true, "chunk_offset": 3.0, "blob": "QUJD", "x": nil}}, got[0].Data)
	for _, bad := range []string{`2["e",{}]x`, `2["e",{}] []`, `2["e",`, `2["e",{"a":}]`} {
		assert.ErrorIs(t, NewDecoder().Add(bad), ErrInvalidPayload, bad)
	}
}
