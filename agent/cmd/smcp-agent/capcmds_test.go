package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent/agenttest"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// blobBytes is a deterministic blob of n bytes.
func blobBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// serveBlobs answers client:get_blob from blobs (handle → bytes) in
// offset-addressed chunks of at most 256 KiB, as a 0.4 Computer does;
// shas overrides the sha256 announced for a handle (a lying Computer).
func serveBlobs(p *agenttest.Peer, blobs map[string][]byte, shas map[string]string) {
	p.Handle(protocol.EventGetBlob, func(_ context.Context, req map[string]any) agenttest.Reply {
		h, _ := req["blob_handle"].(string)
		data, ok := blobs[h]
		if !ok {
			return failFlat(protocol.CodeBlobNotAccessible, "blob handle %s is not known", h)
		}
		off := num(req, "chunk_offset")
		if off > len(data) {
			return failFlat(protocol.CodeBlobNotAccessible, "offset %d beyond %d", off, len(data))
		}
		end := min(off+256<<10, len(data))
		sum := hexSum(data)
		if s, ok := shas[h]; ok {
			sum = s
		}
		return agenttest.Answer(protocol.GetBlobRet{ReqID: req["req_id"].(string), BlobHandle: h, ChunkOffset: off,
			Blob: base64.StdEncoding.EncodeToString(data[off:end]), Eof: end == len(data), MimeType: "image/png",
			TotalSize: len(data), Sha256: sum})
	})
}

// failFlat is a 0.3/0.4 error answer: code and message at the top level.
func failFlat(code protocol.Code, format string, args ...any) agenttest.Reply {
	return agenttest.Answer(map[string]any{"code": int(code), "message": fmt.Sprintf(format, args...)})
}

// num reads an integer member of a request (0 when omitted).
func num(req map[string]any, key string) int {
	f, _ := req[key].(float64)
	return int(f)
}

func TestBlobGet(t *testing.T) {
	p := startPeer(t)
	want := blobBytes(600 << 10) // three chunks
	serveBlobs(p, map[string][]byte{"h-good": want, "h-lying": want}, map[string]string{"h-lying": hexSum([]byte("other"))})
	dir := t.TempDir()

	out := filepath.Join(dir, "img.png")
	r := cli(t, p, nil, "blob", "get", "alpha", "h-good", "-o", out)
	requireOK(t, r)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, fmt.Sprintf("%s: %d bytes, image/png, sha256 %s\n", out, len(want), hexSum(want)), r.out)
	require.Len(t, p.Received(protocol.EventGetBlob), 3)

	r = cli(t, p, nil, "blob", "get", "alpha", "h-good", "--output", filepath.Join(dir, "j.png"), "--json")
	requireOK(t, r)
	var j map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.out), &j))
	require.Equal(t, hexSum(want), j["sha256"])
	require.Equal(t, float64(len(want)), j["total_size"])

	// A blob whose bytes do not match the announced sha256 leaves no file.
	bad := filepath.Join(dir, "bad.png")
	requireFail(t, cli(t, p, nil, "blob", "get", "alpha", "h-lying", "-o", bad), 1, "error 4018: blob h-lying: sha256")
	requireFail(t, cli(t, p, nil, "blob", "get", "alpha", "h-guessed", "-o", bad), 1, "error 4018: blob handle h-guessed is not known")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	names := []string{}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{"img.png", "j.png"}, names, "no partial file stays")

	requireFail(t, cli(t, p, nil, "blob", "get", "alpha", "h-good"), 2, "give the file to write with -o FILE")
	requireFail(t, cli(t, p, nil, "blob", "fetch", "alpha", "h-good"), 2, "usage: smcp-agent blob get")
}

func TestBlobPut(t *testing.T) {
	p := startPeer(t)
	var (
		mu     sync.Mutex
		got    bytes.Buffer
		hint   string
		sha    string
		chunks int
	)
	p.Handle(protocol.EventPutBlob, func(_ context.Context, req map[string]any) agenttest.Reply {
		mu.Lock()
		defer mu.Unlock()
		chunks++
		if off := num(req, "chunk_offset"); off != got.Len() {
			return failFlat(protocol.CodeBlobWriteFailed, "chunk at %d, expected %d", off, got.Len())
		}
		if got.Len() == 0 {
			hint, _ = req["name_hint"].(string)
			sha, _ = req["sha256"].(string)
		}
		b, err := base64.StdEncoding.DecodeString(req["blob"].(string))
		require.NoError(t, err)
		got.Write(b)
		ret := protocol.PutBlobRet{ReqID: req["req_id"].(string), UploadID: "up-1", ChunkOffset: got.Len()}
		if req["eof"] == true {
			ret.LandingPath = "/landing/" + hint
			ret.Sha256 = hexSum(got.Bytes())
		}
		return agenttest.Answer(ret)
	})
	want := blobBytes(300 << 10)
	file := filepath.Join(t.TempDir(), "report.bin")
	require.NoError(t, os.WriteFile(file, want, 0o644))

	r := cli(t, p, nil, "blob", "put", "alpha", file)
	requireOK(t, r)
	require.Equal(t, "/landing/report.bin\n", r.out)
	mu.Lock()
	require.Equal(t, want, got.Bytes())
	require.Equal(t, hexSum(want), sha)
	require.Equal(t, 2, chunks)
	got.Reset()
	mu.Unlock()

	r = cli(t, p, nil, "blob", "put", "alpha", file, "--as", "q3.bin", "--json")
	requireOK(t, r)
	var ret protocol.PutBlobRet
	require.NoError(t, json.Unmarshal([]byte(r.out), &ret))
	require.Equal(t, "/landing/q3.bin", ret.LandingPath)

	requireFail(t, cli(t, p, nil, "blob", "put", "alpha", filepath.Join(t.TempDir(), "missing")), 1, "error 400: blob put: open")
}

func TestSkills(t *testing.T) {
	p := startPeer(t)
	logo := blobBytes(300 << 10)
	serveBlobs(p, map[string][]byte{"h-logo": logo}, nil)
	p.Handle(protocol.EventGetSkills, func(_ context.Context, req map[string]any) agenttest.Reply {
		return agenttest.Answer(protocol.GetSkillsRet{ReqID: req["req_id"].(string), Skills: []protocol.A2CSkillRef{
			{Name: "review", Description: "Reviews code", Path: "/home/u/.claude/skills/review"},
			{Name: "mcp:docs:cite", Description: "Cites sources\nsecond line", Path: "mcp://docs/cite"}}})
	})
	p.Handle(protocol.EventGetSkill, func(_ context.Context, req map[string]any) agenttest.Reply {
		id, rel := req["req_id"].(string), req["rel_path"]
		switch {
		case req["name"] != "review":
			return failFlat(protocol.CodeMCPServerNotFound, "skill %v not found", req["name"])
		case rel == nil || rel == "":
			body := "# Review\nRead the diff.\n"
			return agenttest.Answer(protocol.GetSkillRet{ReqID: id, Name: "review", RelPath: "SKILL.md", Body: &body, MimeType: "text/markdown", TotalSize: len(body), Sha256: hexSum([]byte(body))})
		case rel == "assets/logo.png":
			h := "h-logo"
			return agenttest.Answer(protocol.GetSkillRet{ReqID: id, Name: "review", RelPath: "assets/logo.png", BlobHandle: &h, MimeType: "image/png", TotalSize: len(logo), Sha256: hexSum(logo)})
		}
		return failFlat(protocol.CodeSkillResourceNotAccessible, "%v: traversal", rel)
	})

	r := cli(t, p, nil, "skills", "alpha")
	requireOK(t, r)
	require.Equal(t, []string{"SKILL DESCRIPTION PATH", "review Reviews code /home/u/.claude/skills/review", "mcp:docs:cite Cites sources mcp://docs/cite"}, lines(r.out))
	r = cli(t, p, nil, "skills", "alpha", "--json")
	requireOK(t, r)
	var refs []protocol.A2CSkillRef
	require.NoError(t, json.Unmarshal([]byte(r.out), &refs))
	require.Len(t, refs, 2)

	r = cli(t, p, nil, "skill", "alpha", "review")
	requireOK(t, r)
	require.Equal(t, "# Review\nRead the diff.\n", r.out)
	require.Empty(t, p.Received(protocol.EventGetSkill)[0].Payload["rel_path"], "SKILL.md is the Computer's default")

	// A binary file comes as a blob handle, streamed to the file.
	out := filepath.Join(t.TempDir(), "logo.png")
	r = cli(t, p, nil, "skill", "alpha", "review", "assets/logo.png", "-o", out)
	requireOK(t, r)
	require.Empty(t, r.out)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, logo, b)

	requireFail(t, cli(t, p, nil, "skill", "alpha", "review", "../../etc/passwd"), 1, "error 4017: ../../etc/passwd: traversal")
	requireFail(t, cli(t, p, nil, "skill", "alpha", "nope"), 1, "error 4014: skill nope not found")
}

func TestResources(t *testing.T) {
	p := startPeer(t)
	size := 42
	pages := map[string]protocol.GetResourcesRet{
		"":   {Resources: []protocol.A2CResource{{URI: "note://1", Name: "one", MimeType: "text/plain", Size: &size}, {URI: "note://2", Name: "two"}}, NextCursor: "c2"},
		"c2": {Resources: []protocol.A2CResource{{URI: "note://3", Name: "three", Description: "the last"}}},
	}
	p.Handle(protocol.EventGetResources, func(_ context.Context, req map[string]any) agenttest.Reply {
		if req["mcp_server"] != "notes" {
			return failFlat(protocol.CodeMCPServerNotFound, "no MCP server %v", req["mcp_server"])
		}
		cur, _ := req["cursor"].(string)
		ret := pages[cur]
		ret.ReqID = req["req_id"].(string)
		return agenttest.Answer(ret)
	})
	r := cli(t, p, nil, "resources", "alpha", "notes")
	requireOK(t, r)
	require.Equal(t, []string{"URI NAME MIME SIZE DESCRIPTION", "note://1 one text/plain 42 -", "note://2 two - - -", "note://3 three - - the last"}, lines(r.out))
	require.Len(t, p.Received(protocol.EventGetResources), 2, "both pages")

	r = cli(t, p, nil, "resources", "alpha", "notes", "--json")
	requireOK(t, r)
	var res []protocol.A2CResource
	require.NoError(t, json.Unmarshal([]byte(r.out), &res))
	require.Len(t, res, 3)
	require.Equal(t, "note://3", res[2].URI)

	requireFail(t, cli(t, p, nil, "resources", "alpha", "ghost"), 1, "error 4014: no MCP server ghost")
	requireFail(t, cli(t, p, nil, "resources", "alpha"), 2, "usage: smcp-agent resources COMPUTER BUNDLE")
}

func TestBytesBarOnlyOnATerminal(t *testing.T) {
	var buf bytes.Buffer
	report, done := withBytesBar(&buf)
	report(1, 2)
	done()
	require.Empty(t, buf.String(), "not a terminal")
	require.Equal(t, "[###############...............] 131072/262144 bytes", progressLine(bytesProgress(128<<10, 256<<10), 30))
}
