package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var jsonInputs = []string{
	`{"agent":"a","blob":"` + strings.Repeat("QUJD", 1<<12) + `","eof":true,"chunk_offset":262144}`,
	`null`, `true`, `false`, `0`, `-1.5e3`, `1e400`, `-0`, `12345678901234567890`, `""`, `"\u00e9\n\"\\\/"`,
	`"\ud800"`, `"\udc00\ud800x"`, `"\ud83d\ude00"`, "\"\xff\xfe\"", "\"a\xc3\"", `[]`, `{}`, `[1,[2,[3,{}]]]`,
	`{"a":1,"a":2}`, `{"a":{"b":[null,true]}}`, ` {"a" : [ 1 , 2 ] } `, "{\"\xff\":1}",
	`{"a":1}x`, `{"a":1} {}`, `{"a":}`, `{"a" 1}`, `[1,]`, `{,}`, `[`, `{"a":1`, ``, ` `, `01`, `1.`, `.5`, `+1`,
	`"\x"`, "\"\x01\"", `tru`, `nul`, `[1 2]`, `{"a":1,}`, `{1:2}`, `"abc`, `1e`, `-`, `[]]`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

// DecodeJSON gives what encoding/json's Unmarshal into an any gives, and
// refuses what it refuses; with numbers as json.Number, what
// jsonschema.UnmarshalJSON gives (the decoding Validate replaced).
func TestDecodeJSONAsEncodingJSON(t *testing.T) {
	for _, in := range jsonInputs {
		checkDecodeJSON(t, []byte(in))
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, in := range jsonInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(checkDecodeJSON)
}

func checkDecodeJSON(t *testing.T, b []byte) {
	name := string(b)
	if len(name) > 60 {
		name = name[:60] + "…"
	}
	var want any
	werr := json.Unmarshal(b, &want)
	got, gerr := DecodeJSON(b)
	if werr != nil {
		require.Error(t, gerr, "%q: encoding/json: %v", name, werr)
	} else {
		require.NoError(t, gerr, "%q", name)
		assert.Equal(t, want, got, "%q", name)
	}
	want, werr = jsonschema.UnmarshalJSON(bytes.NewReader(b))
	got, gerr = decodeJSON(b, true)
	if werr != nil {
		require.Error(t, gerr, "%q with numbers: jsonschema: %v", name, werr)
	} else {
		require.NoError(t, gerr, "%q with numbers", name)
		assert.Equal(t, want, got, "%q with numbers", name)
	}
}

// The payload of a put_blob chunk of 256 KiB, decoded for validation.
func BenchmarkDecodeJSONChunk(b *testing.B) {
	raw := []byte(jsonInputs[0])
	raw = bytes.Replace(raw, []byte(strings.Repeat("QUJD", 1<<12)), []byte(strings.Repeat("QUJD", 1<<16)), 1)
	b.Run("DecodeJSON", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, err := decodeJSON(raw, true); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsonschema.UnmarshalJSON", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
