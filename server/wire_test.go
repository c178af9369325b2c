package server

import (
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zishang520/socket.io/parsers/socket/v3/parser"
	"github.com/zishang520/socket.io/v3/pkg/types"
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
	`2/smcp,5[ "a" , {"s":"x,]\\\"}{["} , [1,[2,{"k":[]}]] , "\\\\" ]`,
	`3/smcp,6[ ]`,
	`3/smcp,6[{"t":"\u005d,"}, -0.5e-3 ,false]`,
	`2/,[1,1e400]`, // beyond float64: raw it passes, decoded it does not
	// What encoding/json takes and a stricter parser might not: lone
	// surrogate escapes (JSON.stringify writes them), invalid UTF-8 bytes,
	// a member name given twice (the last one wins).
	`3/smcp,7[{"s":"\ud800 \udc00x"}]`,
	"3/smcp,7[{\"s\":\"\xff\xfe\xc0\"}]",
	`2/smcp,8["a",{"k":1,"k":{"x":2},"k":[3]}]`,
	"3/smcp,9[\"raw \x01 control\"]",
	`3/smcp,9[1,]`,
	`3/smcp,9[,1]`,
	`3/smcp,9[1 2]`,
	`3/smcp,9[1]]`,
	`3/smcp,9[[1],[2]`,
	`3/smcp,9[01]`,
	`3/smcp,9["a"` + "\t\r\n ]\n",
	`3/smcp,9` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	`3/smcp,9` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999),
	`3/smcp,9` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
}

// checkEncodeRoundTrip encodes what wireParser decoded (arguments raw) with
// wireParser's encoder and checks that the library's decoder reads it as
// the original packet.
func checkEncodeRoundTrip(t *testing.T, s string) {
	d := wireParser{}.NewDecoder()
	var got *parser.Packet
	_ = d.On("decoded", func(args ...any) { got, _ = args[0].(*parser.Packet) })
	if d.Add(s) != nil || got == nil {
		return
	}
	want, err := libDecode(s)
	if err != nil || want == nil {
		// The raw decoder keeps arguments undecoded, so it also takes
		// numbers beyond float64 that the library's decoder refuses
		// (checkSameAsLibrary compares the decoded values): the round trip
		// is defined for packets both accept.
		return
	}
	bufs := wireParser{}.NewEncoder().Encode(got)
	require.Len(t, bufs, 1, "%q", s)
	again, err := libDecode(bufs[0].String())
	require.NoError(t, err, "%q encoded as %q", s, bufs[0].String())
	require.Equal(t, want.Type, again.Type, "%q", s)
	require.Equal(t, want.Nsp, again.Nsp, "%q", s)
	require.Equal(t, want.Id, again.Id, "%q", s)
	require.True(t, reflect.DeepEqual(want.Data, again.Data), "%q data: library %#v, after our encoder %#v", s, want.Data, again.Data)
}

func TestWireEncoderRoundTrip(t *testing.T) {
	for _, s := range wireSeeds {
		checkEncodeRoundTrip(t, s)
	}
}

func TestWireEncoderMatchesLibrary(t *testing.T) {
	id := uint64(42)
	for _, p := range []*parser.Packet{
		{Type: parser.EVENT, Nsp: "/smcp", Data: []any{"client:tool_call", json.RawMessage(`{"a":1}`)}},
		{Type: parser.EVENT, Nsp: "/smcp", Id: &id, Data: []any{"x", json.RawMessage(`[1,"2"]`), json.RawMessage(`null`)}},
		{Type: parser.ACK, Nsp: "/smcp", Id: &id, Data: []any{json.RawMessage(`{"ok":true}`)}},
		{Type: parser.ACK, Nsp: "/", Id: &id, Data: []any{json.RawMessage(nil)}},
		{Type: parser.EVENT, Nsp: "/", Data: []any{float64(7), json.RawMessage(`"a b"`)}},
	} {
		ours, ok := encodeRaw(p)
		require.True(t, ok, "%+v", p)
		lib := parser.NewEncoder().Encode(p)
		require.Len(t, lib, 1)
		require.Equal(t, lib[0].String(), string(ours), "%+v", p)
	}
	// Raw arguments are written as they are, where json.Marshal would
	// compact them and escape <, > and &: the same value on every decoder.
	p := &parser.Packet{Type: parser.ACK, Nsp: "/smcp", Id: &id, Data: []any{json.RawMessage(`{ "h" : "<&>" }`)}}
	ours, ok := encodeRaw(p)
	require.True(t, ok)
	require.Equal(t, `3/smcp,42[{ "h" : "<&>" }]`, string(ours))
	a, err := libDecode(string(ours))
	require.NoError(t, err)
	b, err := libDecode(parser.NewEncoder().Encode(p)[0].String())
	require.NoError(t, err)
	require.Equal(t, b.Data, a.Data)
	// Anything else is the library's to encode.
	_, ok = encodeRaw(&parser.Packet{Type: parser.EVENT, Nsp: "/smcp", Data: []any{"n", map[string]any{"a": 1}}})
	require.False(t, ok)
	_, ok = encodeRaw(&parser.Packet{Type: parser.CONNECT, Nsp: "/smcp", Data: map[string]any{"sid": "x"}})
	require.False(t, ok)
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
		checkEncodeRoundTrip(t, s)
	})
}

func TestWireDecoderRefusesBinary(t *testing.T) {
	d := wireParser{}.NewDecoder()
	require.ErrorIs(t, d.Add(`510-/smcp,["x",{"_placeholder":true,"num":0}]`), errBinaryPacket)
	require.ErrorIs(t, d.Add(`61-/smcp,3[{"_placeholder":true,"num":0}]`), errBinaryPacket)
	require.ErrorIs(t, d.Add([]byte{1, 2, 3}), errBinaryPacket)
}

// TestWireEncoderClone: the library clones every encoded packet before
// writing it; a clone of the Server's encoded packet is a
// *types.StringBuffer with the same bytes and a read offset of its own, so
// that reading one (as the engine's parser does) leaves the others whole.
func TestWireEncoderClone(t *testing.T) {
	id := uint64(3)
	bufs := wireParser{}.NewEncoder().Encode(&parser.Packet{Type: parser.ACK, Nsp: "/smcp", Id: &id, Data: []any{json.RawMessage(`{"ok":true}`)}})
	require.Len(t, bufs, 1)
	const want = `3/smcp,3[{"ok":true}]`
	a, b := bufs[0].Clone(), bufs[0].Clone()
	require.IsType(t, &types.StringBuffer{}, a)
	all, err := io.ReadAll(a)
	require.NoError(t, err)
	require.Equal(t, want, string(all))
	require.Equal(t, 0, a.Len())
	require.Equal(t, want, b.String())
	require.Equal(t, want, bufs[0].String())
}

// BenchmarkWireDecode measures the Server's decoding of the packets of a
// routed request (docs/performance.md): the Agent's request, and answers
// of 1 KB and 9 KB as the Computer sends them.
func BenchmarkWireDecode(b *testing.B) {
	answer := func(n int) string {
		v, err := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.Repeat("r", n)}}, "isError": false})
		require.NoError(b, err)
		return `3/smcp,17[` + string(v) + `]`
	}
	for _, c := range []struct{ name, packet string }{
		{"request", `2/smcp,17["client:tool_call",{"agent":"a1","req_id":"r-000017","computer":"c1","tool_name":"echo","params":{"text":"hello"},"timeout":30}]`},
		{"answer-1KB", answer(1 << 10)},
		{"answer-9KB", answer(9 << 10)},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := []byte(c.packet)
			b.SetBytes(int64(len(p)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeRaw(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
