package skills_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
	"github.com/a2c-smcp/smcp-go/computer/skills"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// entry is one archive entry: a file (body), a directory (dir) or a
// symlink (link).
type entry struct {
	name, body, link string
	dir              bool
}

func zipOf(t *testing.T, es ...entry) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range es {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		body := e.body
		switch {
		case e.link != "":
			h.SetMode(fs.ModeSymlink | 0o777)
			body = e.link
		case e.dir:
			h.SetMode(fs.ModeDir | 0o755)
		default:
			h.SetMode(0o644)
		}
		w, err := zw.CreateHeader(h)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func tarGzOf(t *testing.T, es ...entry) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range es {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: tar.TypeReg}
		switch {
		case e.link != "":
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, e.link, 0
		case e.dir:
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
		}
		require.NoError(t, tw.WriteHeader(h))
		if h.Typeflag == tar.TypeReg {
			_, err := tw.Write([]byte(e.body))
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

func skillMD(name, desc string) entry {
	return entry{name: "SKILL.md", body: "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\n"}
}

// archives is an HTTP server of archives by path, changeable.
type archives struct {
	mu    sync.Mutex
	files map[string][]byte
	*httptest.Server
}

func serveArchives(t *testing.T) *archives {
	a := &archives{files: map[string][]byte{}}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		b, ok := a.files[r.URL.Path]
		a.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *archives) put(p string, b []byte) string {
	a.mu.Lock()
	a.files[p] = b
	a.mu.Unlock()
	return a.URL + p
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// An MCP server (a real testmcp process) offering skills as archives
// (_meta.source "archive", the archive over HTTP): the good ones, zip and
// tar.gz, are expanded into the cache and served as local folders; the
// hostile ones (a zip bomb, an entry too large, too many entries, "..",
// an absolute name, symlinks, a wrong sha256, a 404) are refused whole,
// leaving nothing behind, and do not hold up the others.
func TestMCPArchiveSkills(t *testing.T) {
	ctx := context.Background()
	a := serveArchives(t)
	zeros := strings.Repeat("\x00", 400<<10)
	var many []entry
	for i := range 60 {
		many = append(many, entry{name: "f/" + strings.Repeat("x", i+1), body: "x"})
	}
	good := zipOf(t, skillMD("bundle", "A zipped skill"), entry{name: "docs/", dir: true}, entry{name: "docs/guide.txt", body: "zip guide"})
	type arch struct {
		leaf, format string
		data         []byte
		sha          string
	}
	list := []arch{
		{"good", "zip", good, sum(good)},
		{"packed", "tar.gz", tarGzOf(t, entry{name: "./", dir: true}, skillMD("packed", "A tarred skill"), entry{name: "notes/a.md", body: "tar notes"}), ""},
		{"bomb", "zip", zipOf(t, skillMD("bomb", "b"), entry{name: "1", body: zeros}, entry{name: "2", body: zeros}, entry{name: "3", body: zeros}), ""},
		{"bombtar", "tar.gz", tarGzOf(t, skillMD("bombtar", "b"), entry{name: "1", body: zeros}, entry{name: "2", body: zeros}, entry{name: "3", body: zeros}), ""},
		{"huge", "zip", zipOf(t, skillMD("huge", "h"), entry{name: "big.bin", body: strings.Repeat("\x00", 600<<10)}), ""},
		{"many", "zip", zipOf(t, append([]entry{skillMD("many", "m")}, many...)...), ""},
		{"dotdot", "zip", zipOf(t, skillMD("dotdot", "d"), entry{name: "../../evil.txt", body: "evil"}), ""},
		{"dotdottar", "tar.gz", tarGzOf(t, skillMD("dotdottar", "d"), entry{name: "a/../../evil.txt", body: "evil"}), ""},
		{"abs", "tar.gz", tarGzOf(t, skillMD("abs", "a"), entry{name: "/tmp/evil-abs.txt", body: "evil"}), ""},
		{"linkzip", "zip", zipOf(t, skillMD("linkzip", "l"), entry{name: "passwd", link: "/etc/passwd"}), ""},
		{"linktar", "tar.gz", tarGzOf(t, skillMD("linktar", "l"), entry{name: "up", link: ".."}, entry{name: "up/evil.txt", body: "evil"}), ""},
		{"badsha", "zip", good, strings.Repeat("0", 64)},
		{"nomd", "zip", zipOf(t, entry{name: "README.md", body: "no skill"}), ""},
		{"rar", "rar", good, ""},
	}
	args := []string{"-skills=false", "-host", "h"}
	for _, x := range list {
		uri := a.put("/"+x.leaf+"."+x.format, x.data)
		args = append(args, "-archive-skill", strings.TrimSpace(x.leaf+" "+x.format+" "+uri+" "+x.sha))
	}
	args = append(args, "-archive-skill", "gone zip "+a.URL+"/missing.zip")
	cfg := protocol.MCPServerConfig{Stdio: &protocol.MCPStdioConfig{Name: "arc", ForbiddenTools: []string{}, ToolMeta: map[string]protocol.ToolMeta{},
		ServerParameters: protocol.MCPStdioParameters{Command: testmcp.Binary(t), Args: args}}}
	m := mcpclient.NewManager([]protocol.MCPServerConfig{cfg})
	t.Cleanup(func() { _ = m.Close(ctx) })
	require.NoError(t, m.Start(ctx))

	top := t.TempDir()
	cache := filepath.Join(top, "cache")
	changes := 0
	s := skills.New(skills.WithCacheDir(cache), skills.WithOnChange(func() { changes++ }),
		skills.WithArchiveLimits(skills.ArchiveLimits{Extracted: 1 << 20, File: 512 << 10, Entries: 50}),
		skills.WithMCPServers(func() []skills.MCPServer {
			if c := m.Conn("arc"); c != nil {
				return []skills.MCPServer{conn{c, "arc"}}
			}
			return nil
		}))
	require.True(t, s.RefreshMCP(ctx))
	assert.Equal(t, 1, changes)
	got := s.List(ctx)
	var names []string
	for _, r := range got {
		names = append(names, r.Name)
	}
	require.Equal(t, []string{"mcp:arc:bundle", "mcp:arc:packed"}, names, "only the good archives are skills")
	assert.Equal(t, "mcp:arc", got[0].Source)
	assert.Equal(t, "skill://h/good", got[0].URI)
	assert.Equal(t, filepath.Join(cache, "mcp", "arc", "bundle"), got[0].Path)
	assert.Equal(t, "A zipped skill", got[0].Description)

	ret, err := s.Get(ctx, "o", protocol.GetSkillReq{Name: "mcp:arc:bundle"})
	require.NoError(t, err)
	assert.Equal(t, "# bundle\n", *ret.Body)
	ret, err = s.Get(ctx, "o", protocol.GetSkillReq{Name: "mcp:arc:bundle", RelPath: "docs/guide.txt"})
	require.NoError(t, err)
	assert.Equal(t, "zip guide", *ret.Body)
	ret, err = s.Get(ctx, "o", protocol.GetSkillReq{Name: "mcp:arc:packed", RelPath: "notes/a.md"})
	require.NoError(t, err)
	assert.Equal(t, "tar notes", *ret.Body)
	_, err = s.Get(ctx, "o", protocol.GetSkillReq{Name: "mcp:arc:bundle", RelPath: "../packed/SKILL.md"})
	assert.Equal(t, "traversal", refusal(t, err, protocol.CodeSkillResourceNotAccessible).Details["reason"])
	_, err = s.Get(ctx, "o", protocol.GetSkillReq{Name: "mcp:arc:bomb"})
	refusal(t, err, protocol.CodeMCPServerNotFound)

	// Nothing of the refused archives is left, in the cache or outside.
	assertTree(t, filepath.Join(cache, "mcp", "arc"), []string{"bundle", "packed"})
	var stray []string
	_ = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), "evil") {
			stray = append(stray, p)
		}
		return nil
	})
	assert.Empty(t, stray)
	_, err = os.Lstat("/tmp/evil-abs.txt")
	assert.ErrorIs(t, err, fs.ErrNotExist)

	// The same archives again: nothing changed, nothing expanded again.
	fi, err := os.Stat(filepath.Join(cache, "mcp", "arc", "packed", "SKILL.md"))
	require.NoError(t, err)
	assert.False(t, s.RefreshMCP(ctx))
	fi2, err := os.Stat(filepath.Join(cache, "mcp", "arc", "packed", "SKILL.md"))
	require.NoError(t, err)
	assert.Equal(t, fi.ModTime(), fi2.ModTime())

	// A new archive at the same URI (no sha256 declared): fetched again,
	// the change reported (server:update_skills).
	a.put("/packed.tar.gz", tarGzOf(t, skillMD("packed", "A tarred skill, again"), entry{name: "notes/a.md", body: "new notes"}))
	require.True(t, s.RefreshMCP(ctx))
	assert.Equal(t, 2, changes)
	ret, err = s.Get(ctx, "o", protocol.GetSkillReq{Name: "mcp:arc:packed", RelPath: "notes/a.md"})
	require.NoError(t, err)
	assert.Equal(t, "new notes", *ret.Body)
	assertTree(t, filepath.Join(cache, "mcp", "arc"), []string{"bundle", "packed"})

	// The server goes: its skills go, and their folders.
	require.NoError(t, m.StopServer(ctx, "arc"))
	require.True(t, s.RefreshMCP(ctx))
	assert.Empty(t, s.List(ctx))
	assertTree(t, filepath.Join(cache, "mcp", "arc"), nil)
}

// assertTree checks the names directly in dir.
func assertTree(t *testing.T, dir string, want []string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var got []string
	for _, e := range es {
		got = append(got, e.Name())
	}
	assert.Equal(t, want, got, dir)
}

// Without a cache directory an archive skill is not offered (nowhere to
// expand it); the server's other skills are.
func TestMCPArchiveSkillNeedsCache(t *testing.T) {
	ctx := context.Background()
	a := serveArchives(t)
	uri := a.put("/good.zip", zipOf(t, skillMD("bundle", "z")))
	cfg := protocol.MCPServerConfig{Stdio: &protocol.MCPStdioConfig{Name: "arc", ForbiddenTools: []string{}, ToolMeta: map[string]protocol.ToolMeta{},
		ServerParameters: protocol.MCPStdioParameters{Command: testmcp.Binary(t), Args: []string{"-skills", "-host", "h", "-archive-skill", "good zip " + uri}}}}
	m := mcpclient.NewManager([]protocol.MCPServerConfig{cfg})
	t.Cleanup(func() { _ = m.Close(ctx) })
	require.NoError(t, m.Start(ctx))
	s := skills.New(skills.WithMCPServers(func() []skills.MCPServer { return []skills.MCPServer{conn{m.Conn("arc"), "arc"}} }))
	require.True(t, s.RefreshMCP(ctx))
	list := s.List(ctx)
	require.Len(t, list, 1)
	assert.Equal(t, "mcp:arc:review", list[0].Name)
}
