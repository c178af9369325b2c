package server

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zishang520/socket.io/parsers/socket/v3/parser"
)

// libDecode runs the library's own decoder on one text packet.
func libDecode(s string) (*parser.Packet, error) {
	d := parser.NewDecoder()
	var got *parser.Packet
	_ = d.On("decoded", func(args ...any) { got, _ = args[0].(*parser.Packet) })
	if err := d.Add(s); err != nil {
		return nil, err
	}
	return got, nil
}

// ourDecode runs wireParser's decoder and decodes the raw arguments, so the
// result compares with the library's generic values.
func ourDecode(s string) (*parser.Packet, error) {
	d := wireParser{}.NewDecoder()
	var got *parser.Packet
	_ = d.On("decoded", func(args ...any) { got, _ = args[0].(*parser.Packet) })
	if err := d.Add(s); err != nil {
		return nil, err
	}
	if got == nil {
		return nil, nil
	}
	if data, ok := got.Data.([]any); ok {
		out := make([]any, len(data))
		for i, v := range data {
			dv, err := decodeArg(v)
			if err != nil {
				return nil, err
			}
			out[i] = dv
		}
		cp := *got
		cp.Data = out
		got = &cp
	}
	return got, nil
}

// singleJSONValue reports whether the packet's payload is one JSON value
// with nothing after it. The library decodes the first value and ignores
// the rest; wireParser refuses trailing bytes, the one deliberate difference.
func singleJSONValue(s string) bool {
	i := strings.IndexAny(s, "[{")
	if i < 0 {
		return true
	}
	return json.Valid([]byte(s[i:]))
}

func checkSameAsLibrary(t *testing.T, s string) {
	want, werr := libDecode(s)
	got, gerr := ourDecode(s)
	if gerr != nil {
		if werr == nil && want != nil && (want.Type == parser.EVENT || want.Type == parser.ACK) && singleJSONValue(s) {
			t.Fatalf("%q: wireParser refused (%v) a packet the library accepts: %+v", s, gerr, want)
		}
		return
	}
	require.NoError(t, werr, "%q: wireParser accepted a packet the library refuses", s)
	if want == nil || got == nil {
		require.Equal(t, want == nil, got == nil, "%q", s)
		return
	}
	require.Equal(t, want.Type, got.Type, "%q type", s)
	require.Equal(t, want.Nsp, got.Nsp, "%q namespace", s)
	require.Equal(t, want.Id, got.Id, "%q id", s)
	require.True(t, reflect.DeepEqual(want.Data, got.Data), "%q data: library %#v, ours %#v", s, want.Data, got.Data)
}

var wireSeeds = []string{
	`2["server:join_office",{"role":"agent","name":"a","office_id":"o"}]`,
	`2/smcp,["client:get_tools",{"agent":"a","req_id":"r","computer":"c"}]`,
	`2/smcp,17["client:tool_call",{"a":[1,2.5,-3e2,true,null,"x\u00e9"]}]`,
	`3/smcp,17[{"tools":[],"req_id":"r"}]`,
	`3/smcp,4[true,null]`,
	`3/smcp,4[]`,
	`2/smcp,1[42,{}]`,
	`2/smcp,1["connect"]`,
	`2/smcp,1[]`,
	`2/smcp,1[{"x":1}]`,
	`2/smcp,99999999999999999999999["a"]`,
	`2/smcp`,
	`2/smcp,`,
	`3`,
	`3null`,
	`3 [1]`,
	`2["a"] trailing`,
	`2/smcp,["a",{"b":1}]  `,
	`3/smcp,1{"not":"array"}`,
	`0/smcp,{"token":"x"}`,
	`1/smcp,`,
	`2/` + strings.Repeat("n", 600) + `,["a"]`,
}

func TestWireDecoderMatchesLibrary(t *testing.T) {
	for _, s := range wireSeeds {
		checkSameAsLibrary(t, s)
	}
}

func FuzzWireDecoder(f *testing.F) {
	for _, s := range wireSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkSameAsLibrary(t, s)
	})
}

func TestWireDecoderRefusesBinary(t *testing.T) {
	d := wireParser{}.NewDecoder()
	require.ErrorIs(t, d.Add(`510-/smcp,["x",{"_placeholder":true,"num":0}]`), errBinaryPacket)
	require.ErrorIs(t, d.Add(`61-/smcp,3[{"_placeholder":true,"num":0}]`), errBinaryPacket)
	require.ErrorIs(t, d.Add([]byte{1, 2, 3}), errBinaryPacket)
}
