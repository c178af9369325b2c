package skills_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
	"github.com/a2c-smcp/smcp-go/computer/skills"
	"github.com/a2c-smcp/smcp-go/protocol"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testmcp.Cleanup()
	os.Exit(code)
}

type conn struct {
	*mcpclient.Conn
	id string
}

func (c conn) BundleID() string { return c.id }

// An MCP server (a real testmcp process) offering a skill as skill://
// resources: listed as mcp:<bundle_id>:<name> once refreshed, its files
// read through the server, nothing outside the skill's listed files.
func TestMCPServerSkills(t *testing.T) {
	ctx := context.Background()
	cfg := protocol.MCPServerConfig{Stdio: &protocol.MCPStdioConfig{Name: "fs", ForbiddenTools: []string{}, ToolMeta: map[string]protocol.ToolMeta{},
		ServerParameters: protocol.MCPStdioParameters{Command: testmcp.Binary(t), Args: []string{"-skills", "-host", "h"}}}}
	m := mcpclient.NewManager([]protocol.MCPServerConfig{cfg})
	t.Cleanup(func() { _ = m.Close(ctx) })
	require.NoError(t, m.Start(ctx))
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, "user", "review"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "user", "review", "SKILL.md"), []byte("---\ndescription: local\n---\nlocal body"), 0o644))

	changes := 0
	s := skills.New(skills.WithHome(home), skills.WithOnChange(func() { changes++ }),
		skills.WithMCPServers(func() []skills.MCPServer {
			if c := m.Conn("fs"); c != nil {
				return []skills.MCPServer{conn{c, "fs"}}
			}
			return nil
		}))
	require.Len(t, s.List(ctx), 1, "the MCP server's skills appear when refreshed")
	assert.True(t, s.RefreshMCP(ctx))
	assert.Equal(t, 1, changes)
	list := s.List(ctx)
	require.Len(t, list, 2)
	r := list[1]
	assert.Equal(t, "mcp:fs:review", r.Name)
	assert.Equal(t, "mcp:fs", r.Source)
	assert.Equal(t, "skill://h/review", r.URI)
	assert.Equal(t, "Reviews code, from an MCP server", r.Description)
	assert.False(t, s.RefreshMCP(ctx), "nothing changed")

	ret, err := s.Get(ctx, "o", protocol.GetSkillReq{Name: "mcp:fs:review"})
	require.NoError(t, err)
	assert.Equal(t, "# Review\nRead the diff.\n", *ret.Body)
	ret, err = s.Get(ctx, "o", protocol.GetSkillReq{Name: "mcp:fs:review", RelPath: "docs/guide.txt"})
	require.NoError(t, err)
	assert.Equal(t, "guide from mcp", *ret.Body)
	ret, err = s.Get(ctx, "o", protocol.GetSkillReq{Name: "review"})
	require.NoError(t, err)
	assert.Equal(t, "local body", *ret.Body, "the local skill is another one")

	for rel, reason := range map[string]string{"../x": "traversal", "missing.md": "not_found", "docs": "not_found", ".skillenv": "forbidden"} {
		_, err = s.Get(ctx, "o", protocol.GetSkillReq{Name: "mcp:fs:review", RelPath: rel})
		perr := refusal(t, err, protocol.CodeSkillResourceNotAccessible)
		assert.Equal(t, reason, perr.Details["reason"], rel)
	}
	_, err = s.Get(ctx, "o", protocol.GetSkillReq{Name: "mcp:other:review"})
	refusal(t, err, protocol.CodeMCPServerNotFound)

	// The server goes: its skills go at the next refresh.
	require.NoError(t, m.StopServer(ctx, "fs"))
	require.Nil(t, m.Conn("fs"))
	assert.True(t, s.RefreshMCP(ctx))
	assert.Equal(t, 2, changes)
	require.Len(t, s.List(ctx), 1)
	_, err = s.Get(ctx, "o", protocol.GetSkillReq{Name: "mcp:fs:review"})
	refusal(t, err, protocol.CodeMCPServerNotFound)
}
