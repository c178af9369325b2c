package skills_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/computer/skills"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// repo is a real git repository made by the test.
type repo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T) *repo {
	r := &repo{t, t.TempDir()}
	r.git("init", "-q", "-b", "main")
	return r
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+r.dir)
	out, err := cmd.CombinedOutput()
	require.NoError(r.t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

func (r *repo) write(rel, body string) {
	r.t.Helper()
	p := filepath.Join(r.dir, filepath.FromSlash(rel))
	require.NoError(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(r.t, os.WriteFile(p, []byte(body), 0o644))
}

func (r *repo) commit(msg string) string {
	r.git("add", "-A")
	r.git("commit", "-q", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

func (r *repo) url() string { return "file://" + r.dir }

// externalPlugin is a plugin's own repository, "ext" 3.0.0, with a skill
// "deploy" at two commits (first is the older one) and a nested plugin
// root holding "inner".
func externalPlugin(t *testing.T) (ext *repo, first string) {
	ext = newRepo(t)
	ext.write("skills/deploy/SKILL.md", skillFile("deploy v1"))
	ext.write(".tfrobot-plugin/plugin.json", `{"name":"ext","version":"3.0.0"}`)
	ext.write("nested/plug/skills/inner/SKILL.md", skillFile("inner"))
	first = ext.commit("v1")
	ext.write("skills/deploy/SKILL.md", skillFile("deploy v2"))
	ext.commit("v2")
	return ext, first
}

func skillFile(desc string) string {
	return "---\ndescription: " + desc + "\n---\n# body of " + desc + "\n"
}

// A marketplace as a reference Computer takes it: a git repository (here
// a real local one, file://) whose .tfrobot-plugin/marketplace.json lists
// plugins — a folder of the repository by "./path" or by bare name under
// pluginRoot, a repository of its own (url; pinned by sha; git-subdir) —
// declared by a reference settings.json (extraKnownMarketplaces,
// installedPlugins, enabledPlugins). Its skills are <plugin>:<skill>,
// source marketplace:<name>, with the entry's, plugin.json's or the
// commit's version; a link out of the clone offers nothing; a refresh of
// an autoUpdate marketplace pulls it and reports the change.
func TestMarketplaceSkills(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(outside, "secret"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret", "SKILL.md"), []byte(skillFile("outside")), 0o644))

	ext, first := externalPlugin(t)

	cat := newRepo(t)
	cat.write(".tfrobot-plugin/marketplace.json", `{"name":"acme","metadata":{"pluginRoot":"./plugins"},"plugins":[
		{"name":"audit","source":"./plugins/audit","version":"1.2.0"},
		{"name":"lint","source":"lint"},
		{"name":"ext","source":{"source":"url","url":"`+ext.url()+`"}},
		{"name":"pinned","source":{"source":"url","url":"`+ext.url()+`","sha":"`+first+`"}},
		{"name":"sub","source":{"source":"git-subdir","url":"`+ext.url()+`","path":"nested/plug"}},
		{"name":"escape","source":"./plugins/escape"},
		{"name":"up","source":"./../x"},
		{"name":"Bad Name","source":"./plugins/audit"},
		{"name":"hidden","source":"./plugins/hidden"}]}`)
	cat.write("plugins/audit/skills/review/SKILL.md", skillFile("review"))
	cat.write("plugins/lint/skills/style/SKILL.md", skillFile("style"))
	cat.write("plugins/hidden/skills/h/SKILL.md", skillFile("hidden"))
	require.NoError(t, os.MkdirAll(filepath.Join(cat.dir, "plugins", "escape"), 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(cat.dir, "plugins", "escape", "skills")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(cat.dir, "plugins", "audit", "skills", "linked")))
	catSHA := cat.commit("catalog")

	settings := filepath.Join(t.TempDir(), "settings.json")
	require.NoError(t, os.WriteFile(settings, []byte(`{
		"extraKnownMarketplaces": {"acme": {"source": {"type": "git", "url": "`+cat.url()+`"}, "autoUpdate": true}},
		"installedPlugins": ["audit@acme", "lint@acme", "ext@acme", "pinned@acme", "sub@acme", "escape@acme", "up@acme"],
		"enabledPlugins": {"audit@acme": true, "lint@acme": true, "ext@acme": true, "pinned@acme": true, "sub@acme": true,
			"escape@acme": true, "up@acme": true, "hidden@acme": true},
		"permissions": {}}`), 0o644))
	st, err := skills.ReadSettings(settings)
	require.NoError(t, err)
	ms := st.Marketplaces()
	require.Len(t, ms, 1)
	assert.Equal(t, skills.Marketplace{Name: "acme", URL: cat.url(), AutoUpdate: true,
		Plugins: []string{"audit", "escape", "ext", "lint", "pinned", "sub", "up"}}, ms[0])

	cache := t.TempDir()
	changes := 0
	s := skills.New(skills.WithCacheDir(cache), skills.WithMarketplace(ms[0]), skills.WithOnChange(func() { changes++ }))
	assert.Empty(t, s.List(ctx), "nothing before the first refresh")
	require.True(t, s.RefreshMarketplaces(ctx))
	assert.Equal(t, 1, changes)
	got := map[string]protocol.A2CSkillRef{}
	var names []string
	for _, r := range s.List(ctx) {
		got[r.Name] = r
		names = append(names, r.Name)
	}
	assert.Equal(t, []string{"audit:review", "lint:style", "ext:deploy", "pinned:deploy", "sub:inner"}, names, "in the catalog's order")
	assert.Equal(t, "marketplace:acme", got["audit:review"].Source)
	assert.Equal(t, "1.2.0", got["audit:review"].Version, "the entry's version")
	assert.Equal(t, catSHA, got["lint:style"].Version, "the catalog's commit")
	assert.Equal(t, "3.0.0", got["ext:deploy"].Version, "plugin.json's version")
	assert.Equal(t, "deploy v2", got["ext:deploy"].Description)
	assert.Equal(t, "deploy v1", got["pinned:deploy"].Description, "pinned to its sha")
	assert.Equal(t, filepath.Join(cache, "marketplace", "acme", "plugins", "audit", "skills", "review"), got["audit:review"].Path)
	assert.Equal(t, filepath.Join(cache, "marketplace", ".plugins", "acme", "ext", "skills", "deploy"), got["ext:deploy"].Path)

	ret, err := s.Get(ctx, "o", protocol.GetSkillReq{Name: "audit:review"})
	require.NoError(t, err)
	assert.Equal(t, "# body of review\n", *ret.Body)
	_, err = s.Get(ctx, "o", protocol.GetSkillReq{Name: "audit:linked"})
	refusal(t, err, protocol.CodeMCPServerNotFound)

	// Nothing new: no change. A new commit: pulled (autoUpdate), reported.
	assert.False(t, s.RefreshMarketplaces(ctx))
	cat.write("plugins/audit/skills/fix/SKILL.md", skillFile("fix"))
	cat.commit("fix")
	ext.write("skills/deploy/SKILL.md", skillFile("deploy v3"))
	ext.commit("v3")
	require.True(t, s.RefreshMarketplaces(ctx))
	assert.Equal(t, 2, changes)
	_, err = s.Get(ctx, "o", protocol.GetSkillReq{Name: "audit:fix"})
	require.NoError(t, err)
	got = map[string]protocol.A2CSkillRef{}
	for _, r := range s.List(ctx) {
		got[r.Name] = r
	}
	assert.Equal(t, "deploy v3", got["ext:deploy"].Description, "its own repository pulled too")
	assert.Equal(t, "deploy v1", got["pinned:deploy"].Description, "still pinned")
	// No stray clone left beside the clones.
	assertTree(t, filepath.Join(cache, "marketplace"), []string{".plugins", "acme"})
	assertTree(t, filepath.Join(cache, "marketplace", ".plugins", "acme"), []string{"ext", "pinned", "sub"})
}

// Reference settings that are not valid are refused with a coded error
// naming the marketplace.
func TestReadSettingsRefusals(t *testing.T) {
	for name, body := range map[string]string{
		"name": `{"extraKnownMarketplaces": {"Bad Name": {"source": {"type": "git", "url": "https://h/r.git"}}}}`,
		"type": `{"extraKnownMarketplaces": {"acme": {"source": {"type": "github", "url": "https://h/r.git"}}}}`,
		"url":  `{"extraKnownMarketplaces": {"acme": {"source": {"type": "git", "url": "--upload-pack=touch /tmp/x"}}}}`,
		"json": `{"extraKnownMarketplaces": [`,
	} {
		f := filepath.Join(t.TempDir(), "settings.json")
		require.NoError(t, os.WriteFile(f, []byte(body), 0o644))
		_, err := skills.ReadSettings(f)
		var perr *protocol.Error
		require.True(t, errors.As(err, &perr), name)
		assert.Equal(t, protocol.CodeBadRequest, perr.Code, name)
	}
}

// captureLogs sends slog's output to a buffer for the test.
func captureLogs(t *testing.T) *lockedBuffer {
	b := &lockedBuffer{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return b
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A git URL that never answers (a TCP listener that accepts and is
// silent) is given up at the fetch timeout: git and its HTTP helper are
// killed (the connection is closed), the marketplace offers nothing and
// leaves no clone, and the URL's password is not in the logs.
func TestMarketplaceGitHangs(t *testing.T) {
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	conns := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	logs := captureLogs(t)
	cache := t.TempDir()
	s := skills.New(skills.WithCacheDir(cache), skills.WithFetchTimeout(5*time.Second),
		skills.WithMarketplace(skills.Marketplace{Name: "slow", URL: "http://user:s3cret-token@" + ln.Addr().String() + "/repo.git"}))
	assert.False(t, s.RefreshMarketplaces(ctx))
	assert.Empty(t, s.List(ctx))
	assert.Contains(t, logs.String(), "timed out")
	assert.NotContains(t, logs.String(), "s3cret-token")
	assertTree(t, filepath.Join(cache, "marketplace"), nil)

	// git connected (it had seconds to); its connection is closed by the
	// kill, not left open. On a machine so loaded that git was stopped
	// before it connected there is no connection to check.
	select {
	case c := <-conns:
		defer c.Close()
		require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Minute)))
		_, err := io.Copy(io.Discard, c)
		assert.NoError(t, err, "the connection is closed by the killed helper, not left to the deadline")
	case <-time.After(30 * time.Second):
		t.Log("git was stopped before it connected")
	}
}

// A clone larger than WithMaxCloneBytes is refused and removed.
func TestMarketplaceCloneTooLarge(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	r.write(".tfrobot-plugin/marketplace.json", `{"plugins":[{"name":"big","source":"big"}]}`)
	r.write("plugins/big/skills/b/SKILL.md", skillFile("big"))
	noise := make([]byte, 1<<20)
	_, _ = rand.Read(noise)
	r.write("plugins/big/skills/b/noise.bin", string(noise))
	r.commit("big")
	logs := captureLogs(t)
	cache := t.TempDir()
	s := skills.New(skills.WithCacheDir(cache), skills.WithMaxCloneBytes(256<<10),
		skills.WithMarketplace(skills.Marketplace{Name: "big", URL: r.url()}))
	assert.False(t, s.RefreshMarketplaces(ctx))
	assert.Empty(t, s.List(ctx))
	assert.Contains(t, logs.String(), "exceeds")
	assertTree(t, filepath.Join(cache, "marketplace"), nil)

	// Within the bound it is offered, every plugin when none is named.
	s = skills.New(skills.WithCacheDir(cache), skills.WithMarketplace(skills.Marketplace{Name: "big", URL: r.url()}))
	require.True(t, s.RefreshMarketplaces(ctx))
	require.Len(t, s.List(ctx), 1)
	assert.Equal(t, "big:b", s.List(ctx)[0].Name)
}

// referencePython is the a2c-smcp 0.4.2 virtualenv's python (see
// computer/config's Python tests); the test is skipped without it, and
// fails under SMCP_INTEROP=1.
func referencePython(t *testing.T) string {
	py := os.Getenv("SMCP_INTEROP_PYTHON_04")
	if py == "" {
		py, _ = filepath.Abs(filepath.Join("..", "..", ".cache", "venv-0.4.2", "bin", "python"))
	}
	if _, err := os.Stat(py); err != nil {
		if os.Getenv("SMCP_INTEROP") == "1" {
			t.Fatalf("SMCP_INTEROP=1 but there is no Python virtualenv at %s (run `go run mage.go setup`)", py)
		}
		t.Skipf("Python reference SDK not installed at %s", py)
	}
	return py
}

// The same marketplace staged by the a2c-smcp 0.4.2 Computer's own code
// (stage_marketplace_skills, from the same git repositories) and by a
// Set: the same skills, by name, source, version and description.
func TestMarketplaceSkillsAsTheReference(t *testing.T) {
	py := referencePython(t)
	ext, first := externalPlugin(t)
	cat := newRepo(t)
	cat.write(".tfrobot-plugin/marketplace.json", `{"name":"acme","plugins":[
		{"name":"audit","source":"./plugins/audit","version":"1.2.0"},
		{"name":"lint","source":"lint"},
		{"name":"ext","source":{"source":"url","url":"`+ext.url()+`"}},
		{"name":"pinned","source":{"source":"url","url":"`+ext.url()+`","sha":"`+first+`"}},
		{"name":"sub","source":{"source":"git-subdir","url":"`+ext.url()+`","path":"nested/plug"}},
		{"name":"up","source":"./../x"},
		{"name":"extra","source":"./plugins/extra","skills":["./more","../../plugins/lint/skills","skills"]},
		{"name":"meta","source":"./plugins/meta"},
		{"name":"loose","source":"./plugins/loose","strict":false},
		{"name":"loose-ok","source":"./plugins/loose-ok","strict":false,"skills":"b"},
		{"name":"Bad Name","source":"./plugins/audit"}]}`)
	cat.write("plugins/extra/skills/s1/SKILL.md", skillFile("extra s1"))
	cat.write("plugins/extra/more/m1/SKILL.md", skillFile("extra m1"))
	cat.write("plugins/meta/.tfrobot-plugin/plugin.json", `{"skills":"extra-skills","version":2}`)
	cat.write("plugins/meta/extra-skills/x1/SKILL.md", skillFile("meta x1"))
	cat.write("plugins/loose/.tfrobot-plugin/plugin.json", `{"skills":["a"]}`)
	cat.write("plugins/loose/skills/l1/SKILL.md", skillFile("loose l1"))
	cat.write("plugins/loose-ok/skills/k1/SKILL.md", skillFile("loose-ok k1"))
	cat.write("plugins/loose-ok/b/k2/SKILL.md", skillFile("loose-ok k2"))
	cat.write("plugins/audit/skills/review/SKILL.md", skillFile("review"))
	cat.write("plugins/audit/skills/Not-Kebab/SKILL.md", skillFile("not kebab"))
	cat.write("plugins/audit/skills/nodesc/SKILL.md", "---\nname: nodesc\n---\nno description")
	cat.write("plugins/lint/skills/style/SKILL.md", skillFile("style"))
	cat.commit("catalog")

	type row struct{ Name, Source, Version, Description string }
	script := `import asyncio, json, sys
from pathlib import Path
from a2c_smcp.computer.skills.registry import SkillRegistry
from a2c_smcp.computer.skills.staging import stage_marketplace_skills
reg = SkillRegistry()
asyncio.run(stage_marketplace_skills("acme", {"type": "git", "url": sys.argv[1]}, reg, Path(sys.argv[2]), env={"HOME": sys.argv[2], "PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"}))
print(json.dumps([{"Name": r["name"], "Source": r["source"], "Version": r.get("version", ""), "Description": r["description"]} for r in reg.active_refs()]))`
	home := t.TempDir()
	cmd := exec.Command(py, "-c", script, cat.url(), home)
	cmd.Env = append(os.Environ(), "A2C_SKILL_HOME="+home)
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n") // its log goes to stdout too
	var want []row
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &want), "%s", out)
	require.NotEmpty(t, want)

	s := skills.New(skills.WithCacheDir(t.TempDir()), skills.WithMarketplace(skills.Marketplace{Name: "acme", URL: cat.url()}))
	s.RefreshMarketplaces(context.Background())
	var got []row
	for _, r := range s.List(context.Background()) {
		got = append(got, row{r.Name, r.Source, r.Version, r.Description})
	}
	assert.ElementsMatch(t, want, got)
	names := map[string]bool{}
	for _, r := range got {
		names[r.Name] = true
	}
	for _, n := range []string{"extra:s1", "extra:m1", "meta:x1", "loose-ok:k1", "loose-ok:k2"} {
		assert.True(t, names[n], "%s: the skills paths are read", n)
	}
	assert.False(t, names["extra:style"], "a skills path outside the plugin is not")
	assert.False(t, names["loose:l1"], "a strict=false conflict refuses the plugin")
}
