package computer

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/skills"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// A marketplace given to the Computer (a real local git repository) is
// cloned after Start into the cache the Computer made, its skills served
// through the handler; the cache goes at Close.
func TestSkillMarketplaceThroughTheComputer(t *testing.T) {
	repo := t.TempDir()
	for rel, body := range map[string]string{
		".tfrobot-plugin/marketplace.json":     `{"plugins":[{"name":"audit","source":"audit"}]}`,
		"plugins/audit/skills/review/SKILL.md": "---\ndescription: Reviews\n---\nBody.",
	} {
		p := filepath.Join(repo, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "c"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir, cmd.Env = repo, append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+repo)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	cfg, err := config.Parse([]byte(`{"servers": {}}`))
	require.NoError(t, err)
	c := newComputer(t, cfg, WithSkillRescan(-1), WithSkillMarketplaces(skills.Marketplace{Name: "acme", URL: "file://" + repo}))
	h := handler{c}
	ctx := context.Background()
	var ret protocol.GetSkillsRet
	require.Eventually(t, func() bool {
		ret, err = h.GetSkills(ctx, protocol.Gen04, protocol.GetSkillsReq{ReqID: "r"})
		return err == nil && len(ret.Skills) == 1
	}, 2*time.Minute, 20*time.Millisecond, "the marketplace is cloned in the background")
	assert.Equal(t, "audit:review", ret.Skills[0].Name)
	assert.Equal(t, "marketplace:acme", ret.Skills[0].Source)
	one, err := h.GetSkill(ctx, protocol.Gen04, protocol.GetSkillReq{Name: "audit:review", ReqID: "r"})
	require.NoError(t, err)
	assert.Equal(t, "Body.", *one.Body)

	cache, _, ok := strings.Cut(ret.Skills[0].Path, string(filepath.Separator)+"marketplace"+string(filepath.Separator))
	require.True(t, ok, ret.Skills[0].Path)
	require.DirExists(t, cache)
	require.NoError(t, c.Close(ctx))
	assert.NoDirExists(t, cache, "the Computer's own cache goes at Close")
}
