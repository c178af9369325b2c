package computer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/computer/blob"
	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// imageServer is a config with one stdio server serving echo and image, and
// one serving tools only.
func imageServer(t *testing.T) *config.Config {
	bin := testmcp.Binary(t)
	raw := fmt.Sprintf(`{"servers": {
	  "pics": {"type": "stdio", "default_tool_meta": {"auto_apply": true},
	        "server_parameters": {"command": %q, "args": ["-tools", "echo,image", "-docs", "3", "-page", "2", "-skills", "-host", "ph"]}},
	  "bare": {"type": "stdio", "default_tool_meta": {"auto_apply": true},
	        "server_parameters": {"command": %q, "args": ["-no-resources", "-tools", "pid"]}}
	}}`, bin, bin)
	cfg, err := config.Parse([]byte(raw))
	require.NoError(t, err)
	return cfg
}

func callGen(c *Computer, g protocol.Generation, tool string, params map[string]any) protocol.CallToolResult {
	return c.CallTool(context.Background(), g, protocol.ToolCallReq{Agent: "ag", Computer: "pc", ReqID: "r-" + tool, ToolName: tool, Params: params, Timeout: 30})
}

func drainBlob(t *testing.T, h handler, handle string) ([]byte, protocol.GetBlobRet) {
	t.Helper()
	var out []byte
	for i := 0; ; i++ {
		require.Less(t, i, 1000)
		ret, err := h.GetBlob(context.Background(), protocol.Gen04, protocol.GetBlobReq{BlobHandle: handle, ChunkOffset: len(out)})
		require.NoError(t, err)
		b, err := base64.StdEncoding.DecodeString(ret.Blob)
		require.NoError(t, err)
		out = append(out, b...)
		if ret.Eof {
			return out, ret
		}
	}
}

// The capabilities through the Computer's handler, with real MCP servers:
// a 0.4 session's large image and embedded resource come as handles that
// drain to the server's bytes, a 0.2 session's stay inline; resources page
// by page; skills; uploads into the landing root; everything the spool
// held is gone after Close.
func TestCapabilitiesThroughTheComputer(t *testing.T) {
	spool := filepath.Join(t.TempDir(), "spool")
	landing := t.TempDir()
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, "user", "review"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "user", "review", "SKILL.md"), []byte("---\ndescription: Reviews\n---\nBody."), 0o644))
	c := newComputer(t, imageServer(t), WithSpoolDir(spool), WithLandingRoot(landing), WithSkillHome(home), WithSkillRescan(-1))
	h := handler{c}
	ctx := context.Background()
	want := testmcp.Bytes(100<<10, 7)
	sum := sha256.Sum256(want)

	res := callGen(c, protocol.Gen04, "pics__image", map[string]any{"size": len(want), "seed": 7, "resource": true})
	require.Nil(t, res.IsError, "%+v", res)
	require.Len(t, res.Content, 3)
	img, er := res.Content[1], res.Content[2]
	assert.Equal(t, "", *img.Data)
	assert.Equal(t, "", *er.Resource.Blob)
	for _, it := range []protocol.ContentBlock{img, er} {
		assert.Equal(t, hex.EncodeToString(sum[:]), it.Meta[blob.MetaSHA256])
		got, last := drainBlob(t, h, it.Meta[blob.MetaBlobHandle].(string))
		assert.Equal(t, want, got)
		assert.Equal(t, hex.EncodeToString(sum[:]), last.Sha256)
	}
	res = callGen(c, protocol.Gen02, "image", map[string]any{"size": len(want), "seed": 7})
	assert.Equal(t, base64.StdEncoding.EncodeToString(want), *res.Content[1].Data, "0.2.0: inline")

	// Resources, page by page, and the refusals.
	var uris []string
	cursor := ""
	for i := 0; ; i++ {
		require.Less(t, i, 100)
		ret, err := h.GetResources(ctx, protocol.Gen04, protocol.GetResourcesReq{MCPServer: "pics", Cursor: cursor})
		require.NoError(t, err)
		for _, r := range ret.Resources {
			uris = append(uris, r.URI)
		}
		if cursor = ret.NextCursor; cursor == "" {
			break
		}
	}
	all, err := c.Manager().Conn("pics").ListResources(ctx)
	require.NoError(t, err)
	assert.Len(t, uris, len(all))
	assert.Contains(t, uris, "skill://ph/review", "every scheme is listed")
	_, err = h.GetResources(ctx, protocol.Gen04, protocol.GetResourcesReq{MCPServer: "bare"})
	assert.Equal(t, protocol.CodeMCPCapabilityNotSupported, protocol.CodeOf(err))
	_, err = h.GetResources(ctx, protocol.Gen04, protocol.GetResourcesReq{MCPServer: "nope"})
	assert.Equal(t, protocol.CodeMCPServerNotFound, protocol.CodeOf(err))

	// Skills: the skill home's, and the MCP server's once the Computer
	// listed them after the server came up (in the background: polled with
	// a generous bound).
	var sk *protocol.GetSkillsRet
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ret, err := h.GetSkills(ctx, protocol.Gen04, protocol.GetSkillsReq{ReqID: "r"})
		require.NoError(t, err)
		if len(ret.Skills) == 2 {
			sk = &ret
			break
		}
		require.True(t, time.Now().Before(deadline), "the MCP server's skill never listed: %+v", ret.Skills)
		time.Sleep(20 * time.Millisecond)
	}
	assert.Equal(t, "review", sk.Skills[0].Name)
	assert.Equal(t, "mcp:pics:review", sk.Skills[1].Name)
	one, err := h.GetSkill(ctx, protocol.Gen04, protocol.GetSkillReq{Name: "review"})
	require.NoError(t, err)
	assert.Equal(t, "Body.", *one.Body)
	one, err = h.GetSkill(ctx, protocol.Gen04, protocol.GetSkillReq{Name: "mcp:pics:review", RelPath: "docs/guide.txt"})
	require.NoError(t, err)
	assert.Equal(t, "guide from mcp", *one.Body)

	// An upload.
	data := []byte("uploaded bytes")
	ds := sha256.Sum256(data)
	put, err := h.PutBlob(ctx, protocol.Gen04, protocol.PutBlobReq{TotalSize: len(data), Sha256: hex.EncodeToString(ds[:]), NameHint: "../note.txt", Blob: base64.StdEncoding.EncodeToString(data), Eof: true})
	require.NoError(t, err)
	assert.Equal(t, landing, filepath.Dir(put.LandingPath))
	got, err := os.ReadFile(put.LandingPath)
	require.NoError(t, err)
	assert.Equal(t, data, got)

	handle := img.Meta[blob.MetaBlobHandle].(string)
	require.NoError(t, c.Close(ctx))
	_, err = os.Stat(spool)
	assert.True(t, errors.Is(err, os.ErrNotExist), "the spool is removed at Close")
	_, err = h.GetBlob(ctx, protocol.Gen04, protocol.GetBlobReq{BlobHandle: handle})
	assert.Equal(t, protocol.CodeBlobNotAccessible, protocol.CodeOf(err))
}

// A tool result's binary items larger than one MCP message may be stream
// into the spool: with the bound of one message at 1 MiB, a 3 MiB image
// and its embedded copy (8 MiB of base64 in one line) drain to the
// server's bytes, and 0.2.0 gets them inline. Past the mint cap the call
// fails with 413 naming the flag that raises it, and nothing is left in
// the spool.
func TestLargeBinaryItemsBypassTheMessageBound(t *testing.T) {
	c := newComputer(t, imageServer(t), WithMaxMCPMessageBytes(1<<20), WithSpoolOptions(blob.WithMintCap(4<<20)))
	h := handler{c}
	want := testmcp.Bytes(3<<20, 9)
	sum := sha256.Sum256(want)
	res := callGen(c, protocol.Gen04, "pics__image", map[string]any{"size": len(want), "seed": 9, "resource": true})
	require.Nil(t, res.IsError, "%+v", res)
	require.Len(t, res.Content, 3)
	for i, mime := range []string{"", "image/png", "application/x-test"} {
		if i == 0 {
			continue // the text
		}
		it := res.Content[i]
		assert.EqualValues(t, len(want), it.Meta[blob.MetaTotalSize])
		got, last := drainBlob(t, h, it.Meta[blob.MetaBlobHandle].(string))
		require.True(t, bytes.Equal(want, got))
		assert.Equal(t, hex.EncodeToString(sum[:]), last.Sha256)
		assert.Equal(t, mime, last.MimeType)
	}
	held := c.Spool().Bytes()
	assert.Equal(t, int64(2*len(want)), held)

	res = callGen(c, protocol.Gen02, "image", map[string]any{"size": len(want), "seed": 9})
	require.Nil(t, res.IsError, "%+v", res)
	assert.Equal(t, base64.StdEncoding.EncodeToString(want), *res.Content[1].Data, "0.2.0: inline")
	assert.Equal(t, held, c.Spool().Bytes(), "taken back out of the spool")

	res = callGen(c, protocol.Gen04, "pics__image", map[string]any{"size": 5 << 20, "seed": 9})
	require.NotNil(t, res.IsError)
	require.True(t, *res.IsError)
	assert.Contains(t, *res.Content[0].Text, "limit of 4194304 bytes per binary item; raise it with smcp-computer --max-blob-bytes")
	assert.Equal(t, held, c.Spool().Bytes(), "nothing of it left in the spool")
	assert.Equal(t, "hi", *callGen(c, protocol.Gen04, "pics__echo", map[string]any{"text": "hi"}).Content[0].Text, "the server keeps serving")
}

// Without a landing root or skills, the refusals are the references'.
func TestCapabilitiesNotConfigured(t *testing.T) {
	c := newComputer(t, imageServer(t))
	h := handler{c}
	ctx := context.Background()
	_, err := h.PutBlob(ctx, protocol.Gen04, protocol.PutBlobReq{TotalSize: 1, Sha256: "00", Blob: "AA=="})
	var perr *protocol.Error
	require.True(t, errors.As(err, &perr))
	assert.Equal(t, "landing root not configured", perr.Message)
	sk, err := h.GetSkills(ctx, protocol.Gen04, protocol.GetSkillsReq{})
	require.NoError(t, err)
	assert.NotNil(t, sk.Skills)
	for _, r := range sk.Skills {
		assert.Equal(t, "mcp:pics", r.Source, "no skill home: the MCP server's skills only")
	}
	_, err = h.GetSkill(ctx, protocol.Gen04, protocol.GetSkillReq{Name: "review"})
	assert.Equal(t, protocol.CodeMCPServerNotFound, protocol.CodeOf(err))
	_, err = h.GetSkill(ctx, protocol.Gen04, protocol.GetSkillReq{Name: "Bad Name"})
	assert.Equal(t, protocol.CodeSkillNameInvalid, protocol.CodeOf(err))
	_, err = h.GetBlob(ctx, protocol.Gen04, protocol.GetBlobReq{BlobHandle: "nope"})
	assert.Equal(t, protocol.CodeBlobNotAccessible, protocol.CodeOf(err))
	dir := c.Spool().Dir()
	require.NoError(t, c.Close(ctx))
	_, err = os.Stat(dir)
	assert.True(t, errors.Is(err, os.ErrNotExist), "the default spool directory is removed too")
}
