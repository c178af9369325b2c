package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/computer/skills"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// The skill sources the reference Computers fetch, offered by the Go
// Computer and used by the a2c-smcp 0.4.2 Agent through smcp-server: an
// MCP server's archive skill (a zip over HTTP, expanded by the Computer)
// and a git marketplace's plugin skill (a real local repository, cloned
// with git).

// runArchiveSkillServer is the MCP server of role "archiveskillserver":
// the skill root skill://arch/pack offered as the zip at its first
// argument.
func runArchiveSkillServer(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "archiveskillserver: want the archive's URL")
		return 2
	}
	s := mcpserver.NewMCPServer("e2e-archive-skill", "1.0.0", mcpserver.WithToolCapabilities(false),
		mcpserver.WithResourceCapabilities(false, true), mcpserver.WithRecovery())
	// A tool too: the Rust Computer requires servers to list tools.
	s.AddTool(mcp.NewTool("noop", mcp.WithDescription("Does nothing.")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	r := mcp.NewResource("skill://arch/pack", "skill pack")
	r.Meta = &mcp.Meta{AdditionalFields: map[string]any{"source": "archive", "archive_uri": args[0], "archive_format": "zip"}}
	s.AddResource(r, func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: args[0]}}, nil
	})
	if err := mcpserver.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, "archiveskillserver:", err)
		return 1
	}
	return 0
}

// gitRepo makes a real git repository of files, committed.
func gitRepo(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "catalog"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	return dir
}

func TestSkillSourcesRefAgentThroughSmcpServer(t *testing.T) {
	d := startServer(t)

	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for name, body := range map[string]string{
		"SKILL.md":       "---\nname: pack\ndescription: A zipped skill\n---\n# Pack\nFrom an archive.\n",
		"docs/guide.txt": "archive guide",
	} {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(zbuf.Bytes()) }))
	t.Cleanup(hs.Close)

	repo := gitRepo(t, map[string]string{
		".tfrobot-plugin/marketplace.json":      `{"plugins":[{"name":"audit","source":"./plugins/audit","version":"1.2.0"}]}`,
		"plugins/audit/skills/review/SKILL.md":  "---\ndescription: Reviews code, from a marketplace\n---\n# Review\nRead the diff.\n",
		"plugins/audit/skills/review/notes.txt": "marketplace notes",
	})
	cache := t.TempDir()
	c := startComputer(t, d, "sources", "go-pc", []mcpServer{reexec(t, "arch", "archiveskillserver", hs.URL+"/pack.zip")},
		computer.WithSkillCacheDir(cache),
		computer.WithSkillMarketplaces(skills.Marketplace{Name: "acme", URL: "file://" + repo}))

	// Both sources are fetched in the background after Launch: wait for
	// them (bounded generously; nothing here is a speed requirement).
	ctx := testContext(t)
	require.Eventually(t, func() bool { return len(c.Skills().List(ctx)) == 2 }, 2*time.Minute, 100*time.Millisecond)

	a := startRefAgent(t, refPy04, d.URL, d.APIKey, "sources", "ref-agent", "SMCP_TIMEOUT=60")
	a.ok(t, map[string]any{"op": "join"})
	list := a.ok(t, map[string]any{"op": "get_skills", "computer": "go-pc"})
	if m, ok := list.(map[string]any); ok {
		list = m["skills"]
	}
	bySkill := map[string]map[string]any{}
	var names []string
	for _, r := range list.([]any) {
		ref := r.(map[string]any)
		bySkill[ref["name"].(string)] = ref
		names = append(names, ref["name"].(string))
	}
	sort.Strings(names)
	require.Equal(t, []string{"audit:review", "mcp:arch:pack"}, names, "%v", list)
	require.Equal(t, "marketplace:acme", bySkill["audit:review"]["source"])
	require.Equal(t, "1.2.0", bySkill["audit:review"]["version"])
	require.Equal(t, "mcp:arch", bySkill["mcp:arch:pack"]["source"])
	require.Equal(t, "skill://arch/pack", bySkill["mcp:arch:pack"]["uri"])
	require.True(t, strings.HasPrefix(bySkill["mcp:arch:pack"]["path"].(string), cache), "%v", bySkill["mcp:arch:pack"])

	for _, step := range []struct{ name, rel, body string }{
		{"mcp:arch:pack", "", "# Pack\nFrom an archive.\n"},
		{"mcp:arch:pack", "docs/guide.txt", "archive guide"},
		{"audit:review", "", "# Review\nRead the diff.\n"},
		{"audit:review", "notes.txt", "marketplace notes"},
	} {
		req := map[string]any{"op": "get_skill", "computer": "go-pc", "name": step.name}
		if step.rel != "" {
			req["rel_path"] = step.rel
		}
		got := a.ok(t, req).(map[string]any)
		require.Equal(t, step.body, got["body"], "%s %s: %v", step.name, step.rel, got)
	}
	m := a.do(t, map[string]any{"op": "get_skill", "computer": "go-pc", "name": "mcp:arch:pack", "rel_path": "../audit/SKILL.md"})
	require.Equal(t, false, m["ok"], "%v", m)
	require.Contains(t, fmt.Sprint(m["error"]), "4017", "%v", m)
}

// The same archive skill offered by the same MCP server to the a2c-smcp
// 0.4.2 Computer: it lists and serves it under the name, source and uri
// the Go Computer gives it, so the Go Computer reads the archive's _meta
// as the reference does. (The Rust 0.4.1 Computer stages MCP servers'
// skills at boot, before its peer's servers are connected, and again only
// on notifications/resources/list_changed, which this server does not
// send: it is left out.)
func TestArchiveSkillRefComputers(t *testing.T) {
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	w, err := zw.Create("SKILL.md")
	require.NoError(t, err)
	_, err = w.Write([]byte("---\nname: pack\ndescription: A zipped skill\n---\n# Pack\nFrom an archive.\n"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(zbuf.Bytes()) }))
	t.Cleanup(hs.Close)
	for _, sdk := range []refSDK{refPy04} {
		t.Run(sdk.Lang, func(t *testing.T) {
			d := startServer(t)
			rc := startRefComputer(t, sdk, d.URL, d.APIKey, "arch", "ref-pc", withRefServers(reexec(t, "arch", "archiveskillserver", hs.URL+"/pack.zip")))
			a := dialAgent(t, d, "arch", "go-agent", agent.WithTimeout(60*time.Second))
			ctx := testContext(t)
			var refs []protocol.A2CSkillRef
			require.Eventually(t, func() bool {
				refs, err = a.Skills(ctx, rc.Name)
				return err == nil && len(refs) == 2
			}, time.Minute, 200*time.Millisecond, "the reference Computer lists the archive skill")
			var got protocol.A2CSkillRef
			for _, r := range refs {
				if r.Name != refSkill {
					got = r
				}
			}
			require.Equal(t, "mcp:arch:pack", got.Name, "%+v", refs)
			require.Equal(t, "mcp:arch", got.Source)
			require.Equal(t, "skill://arch/pack", got.URI)
			one, err := a.Skill(ctx, rc.Name, got.Name, "")
			require.NoError(t, err)
			require.NotNil(t, one.Body)
			require.Equal(t, "# Pack\nFrom an archive.\n", *one.Body)
		})
	}
}
