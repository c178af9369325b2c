package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/computer/blob"
	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
)

func liftSpool(t *testing.T, opts ...blob.SpoolOption) *blob.Spool {
	t.Helper()
	sp, err := blob.OpenSpool(t.TempDir(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { sp.Close() })
	return sp
}

// liftAll runs msg through a lifter in fragments of step bytes.
func liftAll(l *lifter, msg []byte, step int) []byte {
	l.reset(nil)
	for i := 0; i < len(msg); i += step {
		l.write(msg[i:min(i+step, len(msg))])
	}
	return l.end()
}

// A tool result's large image and embedded resource are lifted into the
// spool whatever the fragments the message arrives in (escapes and line
// breaks split anywhere included); everything else of the message is
// unchanged, and Mint turns the staged values into handles that read the
// same bytes.
func TestLifterMovesBinaryItemsToTheSpool(t *testing.T) {
	data := make([]byte, 300<<10)
	_, _ = rand.Read(data)
	b64 := base64.StdEncoding.EncodeToString(data)
	// The resource's copy escapes its slashes and breaks its lines, as JSON
	// and MIME base64 may.
	var mime strings.Builder
	for i := 0; i < len(b64); i += 76 {
		mime.WriteString(b64[i:min(i+76, len(b64))])
		mime.WriteString("\n")
	}
	esc, _ := json.Marshal(mime.String())
	escaped := strings.ReplaceAll(string(esc), "/", `\/`)
	escaped = strings.Replace(escaped, "A", `\u0041`, 3)
	small := base64.StdEncoding.EncodeToString(data[:1000])
	msg := []byte(`{"jsonrpc":"2.0","id":"smcp-7","result":{"content":[{"type":"text","text":"data \"x\" [{"},` +
		`{"type":"image","data":"` + b64 + `","mimeType":"image/png"},` +
		`{"type":"image","data":"` + small + `","mimeType":"image/png"},` +
		`{"type":"resource","resource":{"uri":"file:///a.bin","blob":` + escaped + `,"mimeType":"application/x-test"}}],` +
		`"structuredContent":{"data":"` + b64[:liftFloor+10] + `"}}}` + "\n")

	for _, step := range []int{len(msg), 65536, 4099, 1, 7} {
		if step == 1 && testing.Short() {
			continue
		}
		t.Run(fmt.Sprint(step), func(t *testing.T) {
			sp := liftSpool(t)
			l := newLifter(sp, DefaultMaxMessageBytes)
			out := liftAll(l, msg, step)
			require.Nil(t, l.fail)
			require.True(t, json.Valid(out), "%.300s", out)
			assert.Less(t, len(out), liftFloor+5000, "the large items left the message")
			require.Len(t, l.refs, 2)
			assert.Equal(t, int64(2*len(data)), sp.Bytes())

			var resp struct {
				Result protocol.CallToolResult `json:"result"`
			}
			require.NoError(t, json.Unmarshal(out, &resp))
			res := resp.Result
			assert.Equal(t, small, *res.Content[2].Data, "within the floor: left to Mint")
			assert.Equal(t, `data "x" [{`, *res.Content[0].Text)
			assert.Contains(t, string(out), `"structuredContent":{"data":"`+b64[:liftFloor+10]+`"}`, "not a content item: untouched")
			assert.Equal(t, 2, sp.Mint("office", &res))
			for _, i := range []int{1, 3} {
				it := res.Content[i]
				h := it.Meta[blob.MetaBlobHandle].(string)
				assert.EqualValues(t, len(data), it.Meta[blob.MetaTotalSize])
				var got []byte
				for {
					ret, err := sp.Read("office", protocol.GetBlobReq{BlobHandle: h, ChunkOffset: len(got)})
					require.NoError(t, err)
					b, err := base64.StdEncoding.DecodeString(ret.Blob)
					require.NoError(t, err)
					got = append(got, b...)
					if ret.Eof {
						break
					}
				}
				require.True(t, bytes.Equal(data, got), "item %d", i)
			}
			assert.Equal(t, "image/png", mustRead(t, sp, res.Content[1]).MimeType)
			assert.Equal(t, "application/x-test", mustRead(t, sp, res.Content[3]).MimeType)
		})
	}
}

func mustRead(t *testing.T, sp *blob.Spool, it protocol.ContentBlock) protocol.GetBlobRet {
	ret, err := sp.Read("office", protocol.GetBlobReq{BlobHandle: it.Meta[blob.MetaBlobHandle].(string), MaxChunkBytes: 1})
	require.NoError(t, err)
	return ret
}

// Staged blobs are not readable before Mint claims them, and a 0.2.0
// answer gets them back inline.
func TestStagedBlobsUnclaimedAndInline(t *testing.T) {
	data := make([]byte, 400<<10)
	_, _ = rand.Read(data)
	b64 := base64.StdEncoding.EncodeToString(data)
	msg := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"audio","data":"` + b64 + `","mimeType":"audio/wav"}]}}`)
	sp := liftSpool(t)
	l := newLifter(sp, DefaultMaxMessageBytes)
	out := liftAll(l, msg, 1000)
	var resp struct {
		Result protocol.CallToolResult `json:"result"`
	}
	require.NoError(t, json.Unmarshal(out, &resp))
	ref := *resp.Result.Content[0].Data
	require.True(t, strings.HasPrefix(ref, "a2c-staged:sp1."), ref)
	h := strings.Split(ref, ":")[1]
	_, err := sp.Read("", protocol.GetBlobReq{BlobHandle: h})
	assert.Equal(t, "gone", protocol.AsError(err).Details["reason"], "staged, not claimed: served to nobody")
	sp.Inline(&resp.Result)
	assert.Equal(t, b64, *resp.Result.Content[0].Data)
	assert.Zero(t, sp.Bytes(), "taken out of the spool")
}

// A message is refused, with the JSON-RPC error naming the bound, and what
// it staged removed, when a binary item is above the mint cap or the
// spool's room, is not base64, or the rest passes the message bound.
func TestLifterRefusals(t *testing.T) {
	data := make([]byte, 600<<10)
	_, _ = rand.Read(data)
	b64 := base64.StdEncoding.EncodeToString(data)
	item := `{"type":"image","data":"` + b64 + `","mimeType":"image/png"}`
	wrap := func(items ...string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[` + strings.Join(items, ",") + `]}}`)
	}
	for _, tc := range []struct {
		name   string
		opts   []blob.SpoolOption
		max    int
		msg    []byte
		code   int
		reason string
		text   string
	}{
		{"mint cap", []blob.SpoolOption{blob.WithMintCap(500 << 10)}, 0, wrap(item, item), 413, "above_mint_cap", "limit of 512000 bytes per binary item; raise it with smcp-computer --max-blob-bytes"},
		{"spool room", []blob.SpoolOption{blob.WithMaxBytes(1 << 20)}, 0, wrap(item, item), 413, "spool_full", "blob spool of 1048576 bytes; raise it with smcp-computer --spool-max-bytes"},
		{"not base64", nil, 0, wrap(item, strings.Replace(item, "A", "*", 1)), 400, "invalid_base64", "not valid base64"},
		{"padding inside", nil, 0, wrap(strings.Replace(item, b64, b64[:400000]+"===="+b64[400004:], 1)), 400, "invalid_base64", "not valid base64"},
		{"cut quantum", nil, 0, wrap(strings.Replace(item, b64, b64[:len(b64)-1], 1)), 400, "invalid_base64", "multiple of 4"},
		{"message bound", nil, 1 << 20, wrap(item, `{"type":"text","text":"`+strings.Repeat("x", 2<<20)+`"}`), 413, "", "limit of 1048576 bytes per MCP message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := liftSpool(t, tc.opts...)
			limit := tc.max
			if limit == 0 {
				limit = DefaultMaxMessageBytes
			}
			ch := &child{log: discardLogger(), maxMessage: limit, lift: newLifter(sp, limit)}
			r := bufioReader(append(tc.msg, '\n'))
			line, err := ch.readLine(r, nil)
			require.NoError(t, err)
			var ans struct {
				ID    int `json:"id"`
				Error struct {
					Code    int            `json:"code"`
					Message string         `json:"message"`
					Data    map[string]any `json:"data"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal(line, &ans), "%s", line)
			assert.Equal(t, 42, ans.ID)
			assert.Equal(t, tc.code, ans.Error.Code)
			assert.Contains(t, ans.Error.Message, tc.text)
			if tc.reason != "" {
				assert.Equal(t, tc.reason, ans.Error.Data["reason"])
			}
			assert.Zero(t, sp.Bytes(), "what the message staged is removed")
			assert.Empty(t, ch.lift.refs)

			// The same in fragments of 300 KiB: the failure and the item's
			// end may come in one fragment, after the item was lifted.
			l := newLifter(sp, limit)
			assert.Nil(t, liftAll(l, tc.msg, 300<<10))
			require.NotNil(t, l.fail)
			assert.Equal(t, tc.code, l.fail.code)
			assert.Zero(t, sp.Bytes())
		})
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func bufioReader(b []byte) *bufio.Reader {
	return bufio.NewReaderSize(bytes.NewReader(b), idPrefixBytes)
}

// Over each transport, a tool result's image larger than one MCP message
// may be (3 MiB of image, 4 MiB of base64, a 1 MiB bound) reaches mcp-go
// without its bytes, which are in the spool, and Mint makes them a handle
// that reads them back; a larger one than the mint cap fails the call at
// once with 413 naming the bound, leaving nothing in the spool.
func TestLargeToolResultOverEachTransport(t *testing.T) {
	want := testmcp.Bytes(3<<20, 4)
	for _, tr := range []string{"stdio", "streamable", "sse"} {
		t.Run(tr, func(t *testing.T) {
			var cfg protocol.MCPServerConfig
			switch tr {
			case "stdio":
				cfg = stdioConfig(t, "a", "-tools", "image")
			case "streamable":
				cfg = httpConfig("a", testmcp.StartHTTP(t, "127.0.0.1:0", "-tools", "image").URL)
			case "sse":
				p := testmcp.StartSSE(t, "127.0.0.1:0", "-tools", "image")
				cfg = protocol.MCPServerConfig{SSE: &protocol.MCPSSEConfig{Name: "a", ForbiddenTools: []string{}, ToolMeta: map[string]protocol.ToolMeta{},
					ServerParameters: protocol.MCPSSEParameters{URL: p.URL}}}
			}
			sp := liftSpool(t, blob.WithMintCap(4<<20))
			m := startManager(t, []protocol.MCPServerConfig{cfg}, WithSpool(sp), WithMaxMessageBytes(1<<20))
			c := m.Conn("a")
			require.NotNil(t, c)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			raw, err := c.CallTool(ctx, "image", map[string]any{"size": len(want), "seed": 4})
			require.NoError(t, err)
			assert.Less(t, len(raw), 64<<10, "the bytes are not in the answer")
			var res protocol.CallToolResult
			require.NoError(t, json.Unmarshal(raw, &res))
			require.Equal(t, 1, sp.Mint("o", &res))
			var got []byte
			for {
				ret, err := sp.Read("o", protocol.GetBlobReq{BlobHandle: res.Content[1].Meta[blob.MetaBlobHandle].(string), ChunkOffset: len(got)})
				require.NoError(t, err)
				b, _ := base64.StdEncoding.DecodeString(ret.Blob)
				got = append(got, b...)
				if ret.Eof {
					break
				}
			}
			require.True(t, bytes.Equal(want, got))
			held := sp.Bytes()

			_, err = c.CallTool(ctx, "image", map[string]any{"size": 5 << 20, "seed": 4})
			var rpc *mcpsource.RPCError
			require.True(t, errors.As(err, &rpc), "got %v", err)
			assert.Equal(t, 413, rpc.Code)
			assert.Contains(t, rpc.Message, "--max-blob-bytes")
			assert.NoError(t, ctx.Err(), "answered at once")
			assert.Equal(t, held, sp.Bytes(), "nothing of it left in the spool")
		})
	}
}

// A message of nested brackets (8,000 deep: encoding/json stops at 10,000)
// costs the lifter no memory per bracket,
// and what follows them is still read right.
func TestLifterNestingBounded(t *testing.T) {
	data := make([]byte, 300<<10)
	_, _ = rand.Read(data)
	b64 := base64.StdEncoding.EncodeToString(data)
	deep := strings.Repeat(`[{"a":`, 4000) + `"x"` + strings.Repeat(`}]`, 4000)
	msg := []byte(`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":` + deep + `,"content":[{"type":"image","data":"` + b64 + `"}]}}`)
	sp := liftSpool(t)
	l := newLifter(sp, DefaultMaxMessageBytes)
	l.reset(nil)
	for i := 0; i < len(msg); i += 4096 {
		l.write(msg[i:min(i+4096, len(msg))])
		require.LessOrEqual(t, cap(l.stack), 2*maxFrames)
	}
	out := l.end()
	require.True(t, json.Valid(out))
	assert.Len(t, l.refs, 1, "the image after the nesting is lifted")
}

// Mangled messages in random fragments never upset the lifter: each ends
// forwarded or refused, and once what it staged is discarded (as the
// filter does for a message it does not forward) the spool is empty.
func TestLifterMangledMessages(t *testing.T) {
	data := make([]byte, 400<<10)
	_, _ = rand.Read(data)
	b64 := base64.StdEncoding.EncodeToString(data)
	base := []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"image","data":"` + b64[:len(b64)/2] + `\/` + b64[len(b64)/2+1:] +
		`"},{"type":"resource","resource":{"blob":"` + b64 + `"}}]}}`)
	rng := mrand.New(mrand.NewPCG(1, 2))
	sp := liftSpool(t, blob.WithMaxBytes(600<<10))
	alphabet := []byte(`{}[]",:\ A=/u0n`)
	for i := 0; i < 150; i++ {
		msg := bytes.Clone(base)
		for k := rng.IntN(4); k > 0; k-- {
			msg[rng.IntN(len(msg))] = alphabet[rng.IntN(len(alphabet))]
		}
		if rng.IntN(4) == 0 {
			msg = msg[:rng.IntN(len(msg))]
		}
		l := newLifter(sp, 1<<20)
		out := liftAll(l, msg, 1+rng.IntN(200<<10))
		if out == nil {
			require.NotNil(t, l.fail)
			require.Empty(t, l.refs)
		}
		l.discard()
		require.Zero(t, sp.Bytes(), "message %d", i)
	}
}
