package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// The 0.4 capabilities of the Go Computer (issue 26) used by a reference
// Agent through smcp-server, both in 0.4: a tool result's large image
// reaches the Rust 0.4.1 and the a2c-smcp 0.4.2 Agents whole (the Computer spooled it, the Agent
// drained its handle with client:get_blob), the Computer's resources page
// by page, its skills, an upload landing in its landing root, and the
// hostile requests answered with their codes.

// capsImageBytes is the image the caps server's image tool returns: above
// the 32 KiB inline budget, below the references' 1 MB message limit.
func capsImageBytes(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// runCapsServer is the caps MCP server (role "capsserver"): the tool image
// (a PNG-typed image of size bytes) and five text resources, listed two
// per page.
func runCapsServer() int {
	s := mcpserver.NewMCPServer("e2e-caps", "1.0.0", mcpserver.WithToolCapabilities(true),
		mcpserver.WithResourceCapabilities(false, true), mcpserver.WithPaginationLimit(2), mcpserver.WithRecovery())
	for i := 1; i <= 5; i++ {
		uri := fmt.Sprintf("note://caps/%d", i)
		s.AddResource(mcp.NewResource(uri, fmt.Sprintf("note %d", i), mcp.WithMIMEType("text/plain")),
			func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: uri}}, nil
			})
	}
	s.AddTool(mcp.NewTool("image", mcp.WithDescription("Returns an image of size bytes."), mcp.WithNumber("size", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			data := capsImageBytes(req.GetInt("size", 0))
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("an image"),
				mcp.NewImageContent(base64.StdEncoding.EncodeToString(data), "image/png")}}, nil
		})
	if err := mcpserver.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, "capsserver:", err)
		return 1
	}
	return 0
}

// capsComputer starts the Go Computer "go-pc" in office "caps" of d over
// the caps server, with a landing root and a skill home whose skill
// "review" has a 300 KiB binary file (assets/logo.png).
func capsComputer(t *testing.T, d *deployment) (landing, home string, logo []byte) {
	landing = t.TempDir()
	home = t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, "user", "review"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "user", "review", "SKILL.md"), []byte("---\ndescription: Reviews code\n---\n# Review\nRead the diff.\n"), 0o644))
	logo = capsImageBytes(300 << 10) // two chunks
	require.NoError(t, os.MkdirAll(filepath.Join(home, "user", "review", "assets"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "user", "review", "assets", "logo.png"), logo, 0o644))
	caps := reexec(t, "caps", "capsserver")
	caps["default_tool_meta"] = map[string]any{"auto_apply": true}
	c := startComputerDialing(t, d, "caps", "go-pc", []mcpServer{caps},
		[]computer.Option{computer.WithLandingRoot(landing), computer.WithSkillHome(home)})
	require.Equal(t, protocol.Gen04, c.Client().Generation())
	return landing, home, logo
}

func TestCapabilitiesRefAgentsThroughSmcpServer(t *testing.T) {
	for _, sdk := range []refSDK{refRust04, refPy04} {
		t.Run(sdk.Lang, func(t *testing.T) { refAgentCaps(t, sdk) })
	}
}

func refAgentCaps(t *testing.T, sdk refSDK) {
	d := startServer(t)
	landing, _, logo := capsComputer(t, d)

	a := startRefAgent(t, sdk, d.URL, d.APIKey, "caps", "ref-agent", "SMCP_TIMEOUT=60")
	a.ok(t, map[string]any{"op": "join"})

	// Blobs out: the Agent gets the image whole.
	want := capsImageBytes(200 << 10)
	res := a.ok(t, map[string]any{"op": "tool_call", "computer": "go-pc", "tool": "caps__image", "params": map[string]any{"size": len(want)}}).(map[string]any)
	require.NotEqual(t, true, res["isError"], "%v", res)
	content := res["content"].([]any)
	require.Len(t, content, 2, "%v", res)
	img := content[1].(map[string]any)
	require.Equal(t, base64.StdEncoding.EncodeToString(want), img["data"], "the drained image: %.300v", img)
	// (The reference Agents take the sideband off the item once drained.)

	// A skill file too large to be inline comes as a handle, read by offset:
	// stateless chunks.
	skill := a.ok(t, map[string]any{"op": "get_skill", "computer": "go-pc", "name": "review", "rel_path": "assets/logo.png"}).(map[string]any)
	handle, _ := skill["blob_handle"].(string)
	require.NotEmpty(t, handle, "%v", skill)
	assert.Nil(t, skill["body"], "%v", skill)
	sum := sha256.Sum256(logo)
	assert.Equal(t, hex.EncodeToString(sum[:]), skill["sha256"], "%v", skill)
	chunk := a.ok(t, map[string]any{"op": "get_blob", "computer": "go-pc", "blob_handle": handle, "chunk_offset": 1000, "max_chunk_bytes": 10}).(map[string]any)
	got, err := base64.StdEncoding.DecodeString(chunk["blob"].(string))
	require.NoError(t, err)
	require.Equal(t, logo[1000:1010], got)
	require.Equal(t, false, chunk["eof"])
	require.EqualValues(t, len(logo), chunk["total_size"])
	require.Equal(t, "image/png", chunk["mime_type"])
	var all []byte
	for i := 0; !false; i++ {
		require.Less(t, i, 100)
		c := a.ok(t, map[string]any{"op": "get_blob", "computer": "go-pc", "blob_handle": handle, "chunk_offset": len(all)}).(map[string]any)
		b, err := base64.StdEncoding.DecodeString(c["blob"].(string))
		require.NoError(t, err)
		require.LessOrEqual(t, len(b), 256<<10)
		all = append(all, b...)
		if c["eof"] == true {
			break
		}
	}
	require.Equal(t, logo, all)

	// Hostile reads: a guessed handle, a range past the end.
	for step, code := range map[string]map[string]any{
		"4018 guessed": {"op": "get_blob", "computer": "go-pc", "blob_handle": "sp1." + strings.Repeat("A", 43)},
		"4018 range":   {"op": "get_blob", "computer": "go-pc", "blob_handle": handle, "chunk_offset": len(logo) + 1},
		"4017 skill":   {"op": "get_skill", "computer": "go-pc", "name": "review", "rel_path": "../../etc/passwd"},
		"4016 name":    {"op": "get_skill", "computer": "go-pc", "name": "Bad Name"},
		"4014 server":  {"op": "get_resources", "computer": "go-pc", "mcp_server": "nope"},
	} {
		m := a.do(t, code)
		require.Equal(t, false, m["ok"], "%s: %v", step, m)
		require.NotEqual(t, true, m["hung"], "%s: %v", step, m)
		require.Contains(t, fmt.Sprint(m["error"]), step[:4], "%s: %v", step, m)
	}

	// Resources, page by page.
	var uris []string
	cursor := ""
	for i := 0; ; i++ {
		require.Less(t, i, 10)
		step := map[string]any{"op": "get_resources", "computer": "go-pc", "mcp_server": "caps"}
		if cursor != "" {
			step["cursor"] = cursor
		}
		page := a.ok(t, step).(map[string]any)
		for _, r := range page["resources"].([]any) {
			uris = append(uris, r.(map[string]any)["uri"].(string))
		}
		next, _ := page["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	require.Equal(t, []string{"note://caps/1", "note://caps/2", "note://caps/3", "note://caps/4", "note://caps/5"}, uris)

	// Skills.
	skills := a.ok(t, map[string]any{"op": "get_skills", "computer": "go-pc"})
	if m, ok := skills.(map[string]any); ok {
		skills = m["skills"]
	}
	require.Len(t, skills, 1, "%v", skills)
	require.Equal(t, "review", skills.([]any)[0].(map[string]any)["name"])
	skill = a.ok(t, map[string]any{"op": "get_skill", "computer": "go-pc", "name": "review"}).(map[string]any)
	require.Equal(t, "# Review\nRead the diff.\n", skill["body"], "%v", skill)

	// Blobs in: an upload lands in the landing root.
	up := a.ok(t, map[string]any{"op": "put_blob", "computer": "go-pc", "text": "uploaded by rust", "name_hint": "../notes.txt"}).(map[string]any)
	path, _ := up["landing_path"].(string)
	assert.Equal(t, landing, filepath.Dir(path), "%v", up)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "uploaded by rust", string(b))
}

// The same with the Go Agent: the image drained into the tool result (and
// kept a handle when asked not to drain, streamed with OpenBlob), the
// skill file streamed and checked, resources followed across cursors, an
// upload from an io.ReadSeeker with progress, and the refusals as
// *protocol.Error codes.
func TestCapabilitiesGoAgentThroughSmcpServer(t *testing.T) {
	d := startServer(t)
	landing, home, logo := capsComputer(t, d)
	changed := make(chan []protocol.A2CSkillRef, 16)
	a := dialAgent(t, d, "caps", "go-agent", agent.OnSkillsChanged(func(_ string, sk []protocol.A2CSkillRef) { changed <- sk }))
	require.Equal(t, protocol.Gen04, a.Generation())
	ctx := testContext(t)

	want := capsImageBytes(200 << 10)
	res, err := a.CallTool(ctx, "go-pc", "caps__image", map[string]any{"size": len(want)}, 0)
	require.NoError(t, err)
	require.Len(t, res.Content, 2)
	img := res.Content[1]
	require.Equal(t, base64.StdEncoding.EncodeToString(want), *img.Data, "drained")
	sum := sha256.Sum256(want)
	require.Equal(t, hex.EncodeToString(sum[:]), img.Meta[agent.MetaSHA256], "the sideband stays")

	// A new skill folder: the Computer sends server:update_skills, the
	// Agent re-fetches the skills (the wait is for that event, bounded
	// generously: the Computer looks every 5 s).
	require.NoError(t, os.MkdirAll(filepath.Join(home, "user", "deploy"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "user", "deploy", "SKILL.md"), []byte("---\ndescription: Deploys\n---\nSteps."), 0o644))
	select {
	case sk := <-changed:
		names := []string{}
		for _, r := range sk {
			names = append(names, r.Name)
		}
		require.ElementsMatch(t, []string{"review", "deploy"}, names)
	case <-time.After(2 * time.Minute):
		t.Fatal("no notify:update_skills after a new skill")
	}

	raw := dialAgent(t, d, "", "go-agent-raw", agent.WithBlobDrain(0))
	require.NoError(t, a.LeaveOffice(ctx)) // an office has one Agent
	require.NoError(t, raw.JoinOffice(ctx, "caps"))
	res, err = raw.CallTool(ctx, "go-pc", "caps__image", map[string]any{"size": len(want)}, 0)
	require.NoError(t, err)
	require.Equal(t, "", *res.Content[1].Data, "not drained")
	handle := res.Content[1].Meta[agent.MetaBlobHandle].(string)
	r := raw.OpenBlob(ctx, "go-pc", handle)
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, "image/png", r.MimeType())

	// The skill's large file, streamed and checked against its sha256.
	sk, err := raw.Skills(ctx, "go-pc")
	require.NoError(t, err)
	require.Len(t, sk, 2)
	one, err := raw.Skill(ctx, "go-pc", "review", "assets/logo.png")
	require.NoError(t, err)
	require.Nil(t, one.Body)
	data, err := raw.ReadBlob(ctx, "go-pc", *one.BlobHandle, 1<<20)
	require.NoError(t, err)
	require.Equal(t, logo, data)
	_, err = raw.ReadBlob(ctx, "go-pc", *one.BlobHandle, 1000)
	require.Equal(t, protocol.CodePayloadTooLarge, protocol.CodeOf(err))

	var uris []string
	for res, err := range raw.Resources(ctx, "go-pc", "caps") {
		require.NoError(t, err)
		uris = append(uris, res.URI)
	}
	require.Equal(t, []string{"note://caps/1", "note://caps/2", "note://caps/3", "note://caps/4", "note://caps/5"}, uris)

	upload := capsImageBytes(600 << 10) // three chunks
	var seen []int64
	up, err := raw.PutBlob(ctx, "go-pc", bytes.NewReader(upload), "report.bin", func(sent, total int64) {
		require.EqualValues(t, len(upload), total)
		seen = append(seen, sent)
	})
	require.NoError(t, err)
	require.Equal(t, []int64{256 << 10, 512 << 10, 600 << 10}, seen)
	require.Equal(t, landing, filepath.Dir(up.LandingPath))
	b, err := os.ReadFile(up.LandingPath)
	require.NoError(t, err)
	require.Equal(t, upload, b)

	for code, err := range map[protocol.Code]error{
		protocol.CodeBlobNotAccessible:          second(raw.GetBlob(ctx, "go-pc", "sp1."+strings.Repeat("A", 43), 0, 0)),
		protocol.CodeSkillResourceNotAccessible: second(raw.Skill(ctx, "go-pc", "review", "../../etc/passwd")),
		protocol.CodeSkillNameInvalid:           second(raw.Skill(ctx, "go-pc", "Bad Name", "")),
		protocol.CodeMCPServerNotFound:          second(raw.Skill(ctx, "go-pc", "nope", "")),
	} {
		var perr *protocol.Error
		require.ErrorAs(t, err, &perr, "%d", code)
		require.Equal(t, code, perr.Code, "%v", perr)
	}
	for _, err := range raw.Resources(ctx, "go-pc", "nope") {
		require.Equal(t, protocol.CodeMCPServerNotFound, protocol.CodeOf(err))
	}
}

func second[T any](_ T, err error) error { return err }

// The other direction: the Go Agent with the reference Computers (a2c-smcp
// 0.4.2 and Rust 0.4.1) through smcp-server. The Computer spools the
// caps server's image and the Go Agent drains its handle; the Computer's
// skill is listed and read; its resources are followed across cursors; an
// upload lands in its landing root; a guessed handle is refused 4018.
func TestCapabilitiesGoAgentRefComputers(t *testing.T) {
	for _, sdk := range []refSDK{refRust04, refPy04} {
		t.Run(sdk.Lang, func(t *testing.T) {
			d := startServer(t)
			caps := reexec(t, "caps", "capsserver")
			rc := startRefComputer(t, sdk, d.URL, d.APIKey, "caps", "ref-pc", withRefServers(caps))
			a := dialAgent(t, d, "caps", "go-agent", agent.WithTimeout(60*time.Second))
			ctx := testContext(t)

			want := capsImageBytes(200 << 10)
			res, err := a.CallTool(ctx, rc.Name, "caps__image", map[string]any{"size": len(want)}, 0)
			require.NoError(t, err)
			require.NotEqual(t, true, res.IsError != nil && *res.IsError, "%+v", res)
			require.Len(t, res.Content, 2)
			img := res.Content[1]
			require.Equal(t, base64.StdEncoding.EncodeToString(want), *img.Data, "drained from the reference Computer's spool")
			require.NotEmpty(t, img.Meta[agent.MetaBlobHandle], "the reference Computer minted a handle: %v", img.Meta)

			sk, err := a.Skills(ctx, rc.Name)
			require.NoError(t, err)
			require.Len(t, sk, 1, "%+v", sk)
			require.Equal(t, refSkill, sk[0].Name)
			one, err := a.Skill(ctx, rc.Name, refSkill, "")
			require.NoError(t, err)
			require.NotNil(t, one.Body)
			require.Contains(t, *one.Body, "A skill served by every reference Computer.")

			var uris []string
			for r, err := range a.Resources(ctx, rc.Name, "caps") {
				require.NoError(t, err)
				uris = append(uris, r.URI)
			}
			require.Equal(t, []string{"note://caps/1", "note://caps/2", "note://caps/3", "note://caps/4", "note://caps/5"}, uris)

			upload := capsImageBytes(300 << 10)
			up, err := a.PutBlob(ctx, rc.Name, bytes.NewReader(upload), "from-go.bin", nil)
			require.NoError(t, err)
			rel, err := filepath.Rel(rc.LandingRoot, up.LandingPath)
			require.NoError(t, err, "%+v", up)
			require.False(t, strings.HasPrefix(rel, ".."), "%s outside %s", up.LandingPath, rc.LandingRoot)
			b, err := os.ReadFile(up.LandingPath)
			require.NoError(t, err)
			require.Equal(t, upload, b)

			_, err = a.GetBlob(ctx, rc.Name, "not-a-handle", 0, 0)
			require.Equal(t, protocol.CodeBlobNotAccessible, protocol.CodeOf(err), "%v", err)
			var miss []error
			for _, err := range a.Resources(ctx, rc.Name, "nope") {
				miss = append(miss, err)
			}
			require.Len(t, miss, 1)
			require.Equal(t, protocol.CodeMCPServerNotFound, protocol.CodeOf(miss[0]), "%v", miss[0])
		})
	}
}
