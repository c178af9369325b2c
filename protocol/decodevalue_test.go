package protocol

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// DecodeValue gives what encoding/json gives (remarshal) for payloads with
// long strings, whether it sets them directly, drops them or leaves them
// to encoding/json.
func TestDecodeValueLongStringsAsJSON(t *testing.T) {
	long := strings.Repeat("QUJD", bigString) // 16 KiB of base64
	put := map[string]any{"agent": "a", "req_id": "r", "computer": "pc", "upload_id": "u",
		"chunk_offset": float64(262144), "eof": true, "blob": long, "name_hint": long}
	type embedded struct{ Blob string }
	cases := []struct {
		name    string
		payload map[string]any
		out     func() any
	}{
		{"put_blob request", put, func() any { return new(PutBlobReq) }},
		{"only the target", put, func() any {
			return new(struct {
				Computer string `json:"computer"`
			})
		}},
		{"a field matching case-insensitively", map[string]any{"BLOB": long, "computer": "pc"}, func() any { return new(PutBlobReq) }},
		{"a field that is no string", map[string]any{"blob": long}, func() any {
			return new(struct {
				Blob []byte `json:"blob"`
			})
		}},
		{"a string option", map[string]any{"blob": `"` + long + `"`}, func() any {
			return new(struct {
				Blob string `json:"blob,string"`
			})
		}},
		{"an embedded struct", map[string]any{"Blob": long}, func() any { return new(struct{ embedded }) }},
		{"an untagged field", map[string]any{"Blob": long}, func() any { return new(struct{ Blob string }) }},
		{"the wrong type", map[string]any{"blob": long, "eof": "yes"}, func() any { return new(PutBlobReq) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, want := c.out(), c.out()
			gerr, werr := DecodeValue(c.payload, got), remarshal(c.payload, want)
			if werr != nil {
				require.Error(t, gerr)
				return
			}
			require.NoError(t, gerr)
			assert.Equal(t, want, got)
		})
	}
	var req PutBlobReq
	require.NoError(t, DecodeValue(put, &req))
	assert.Equal(t, long, req.Blob, "set directly")
	assert.Equal(t, 262144, req.ChunkOffset)
}
