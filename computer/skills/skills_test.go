package skills_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/computer/blob"
	"github.com/a2c-smcp/smcp-go/computer/skills"
	"github.com/a2c-smcp/smcp-go/protocol"
)

func write(t *testing.T, p, text string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
}

const reviewMD = "---\nname: review\ndescription: Reviews code\nlicense: MIT\nallowed-tools: [Read, Grep]\ntags: [dev, qa]\nmetadata:\n  owner: team\n---\n# Review\nRead the diff.\n"

// home lays out a skill home and a plugin as the references do.
func home(t *testing.T) (string, string) {
	t.Helper()
	h := t.TempDir()
	write(t, filepath.Join(h, "user/review/SKILL.md"), reviewMD)
	write(t, filepath.Join(h, "user/review/docs/guide.txt"), "guide")
	write(t, filepath.Join(h, "user/review/.skillenv"), "TOKEN=secret")
	write(t, filepath.Join(h, "user/Bad_Name/SKILL.md"), "---\ndescription: x\n---\n")
	write(t, filepath.Join(h, "user/no-desc/SKILL.md"), "---\nname: no-desc\n---\nbody")
	write(t, filepath.Join(h, "user/no-file/README.md"), "x")
	p := t.TempDir()
	write(t, filepath.Join(p, "skills/deploy/SKILL.md"), "---\ndescription: Deploys\n---\nSteps.")
	return h, p
}

func refusal(t *testing.T, err error, code protocol.Code) *protocol.Error {
	t.Helper()
	var perr *protocol.Error
	require.True(t, errors.As(err, &perr), "%v", err)
	require.Equal(t, code, perr.Code, "%v", perr)
	return perr
}

func TestListAndNames(t *testing.T) {
	ctx := context.Background()
	h, p := home(t)
	s := skills.New(skills.WithHome(h), skills.WithPlugin("ops", p), skills.WithPlugin("Not_Kebab", p))
	list := s.List(ctx)
	require.Len(t, list, 2, "%+v", list)
	r := list[0]
	assert.Equal(t, "review", r.Name)
	assert.Equal(t, "user", r.Source)
	assert.Equal(t, filepath.Join(h, "user/review"), r.Path)
	assert.Equal(t, "Reviews code", r.Description)
	assert.Equal(t, "MIT", r.License)
	assert.Equal(t, []string{"Read", "Grep"}, r.AllowedTools)
	assert.Equal(t, []string{"dev", "qa"}, r.Tags)
	assert.Equal(t, map[string]any{"owner": "team"}, r.SkillMetadata)
	assert.Equal(t, "ops:deploy", list[1].Name)
	assert.Equal(t, "marketplace", list[1].Source)
	for _, ref := range list {
		b, _ := json.Marshal(ref)
		assert.NoError(t, protocol.Gen04.ValidateSchema("a2c_skill_ref.json", b), string(b))
	}

	for name, ok := range map[string]bool{
		"review": true, "ops:deploy": true, "mcp:fs_1:tok": true, "a-b-c": true,
		"": false, "Review": false, "a--b": false, "-a": false, "a:b:c": false, "mcp:a__b:c": false,
		"mcp:fs:Tok": false, "a:b:c:d": false, strings.Repeat("a", 65): false, "a b": false, "../x": false,
	} {
		assert.Equal(t, ok, skills.ValidName(name), "%q", name)
	}
	assert.Empty(t, skills.New().List(ctx))
}

func TestGetSkillFiles(t *testing.T) {
	ctx := context.Background()
	h, p := home(t)
	sp, err := blob.OpenSpool("")
	require.NoError(t, err)
	t.Cleanup(func() { sp.Close() })
	big := strings.Repeat("line of text\n", 4000) // 52 KB: above the budget
	write(t, filepath.Join(h, "user/review/big.md"), big)
	bin := make([]byte, 100)
	_, _ = rand.Read(bin)
	require.NoError(t, os.WriteFile(filepath.Join(h, "user/review/logo.png"), bin, 0o644))
	s := skills.New(skills.WithHome(h), skills.WithPlugin("ops", p), skills.WithSpool(sp))

	ret, err := s.Get(ctx, "o", protocol.GetSkillReq{Name: "review", ReqID: "r1"})
	require.NoError(t, err)
	require.NotNil(t, ret.Body)
	assert.Nil(t, ret.BlobHandle)
	assert.Equal(t, "# Review\nRead the diff.\n", *ret.Body, "front matter stripped")
	assert.Equal(t, "SKILL.md", ret.RelPath)
	assert.Equal(t, "text/markdown", ret.MimeType)
	assert.Equal(t, len(*ret.Body), ret.TotalSize)
	sum := sha256.Sum256([]byte(*ret.Body))
	assert.Equal(t, hex.EncodeToString(sum[:]), ret.Sha256)
	assert.Equal(t, "r1", ret.ReqID)
	b, _ := json.Marshal(ret)
	assert.NoError(t, protocol.Gen04.Validate(protocol.EventGetSkill, protocol.Ack, b), string(b))

	ret, err = s.Get(ctx, "o", protocol.GetSkillReq{Name: "review", RelPath: "./docs//guide.txt"})
	require.NoError(t, err)
	assert.Equal(t, "guide", *ret.Body)
	assert.Equal(t, "./docs//guide.txt", ret.RelPath, "echoed as asked")

	ret, err = s.Get(ctx, "o", protocol.GetSkillReq{Name: "ops:deploy"})
	require.NoError(t, err)
	assert.Equal(t, "Steps.", *ret.Body)

	// Large text and binary go through the spool, for this office only.
	for rel, want := range map[string][]byte{"big.md": []byte(big), "logo.png": bin} {
		ret, err = s.Get(ctx, "o", protocol.GetSkillReq{Name: "review", RelPath: rel})
		require.NoError(t, err)
		require.Nil(t, ret.Body, rel)
		require.NotNil(t, ret.BlobHandle, rel)
		var got []byte
		for !false {
			c, err := sp.Read("o", protocol.GetBlobReq{BlobHandle: *ret.BlobHandle, ChunkOffset: len(got)})
			require.NoError(t, err)
			d, _ := base64.StdEncoding.DecodeString(c.Blob)
			got = append(got, d...)
			if c.Eof {
				assert.Equal(t, ret.Sha256, c.Sha256)
				break
			}
		}
		assert.Equal(t, want, got, rel)
		_, err = sp.Read("other", protocol.GetBlobReq{BlobHandle: *ret.BlobHandle})
		require.Error(t, err)
	}
	ret, _ = s.Get(ctx, "o", protocol.GetSkillReq{Name: "review", RelPath: "logo.png"})
	assert.Equal(t, "image/png", ret.MimeType)
}

// Names, paths and symlinks that try to leave the skill, and files that
// are not to be served, each answered with its code and reason.
func TestGetSkillRefusals(t *testing.T) {
	ctx := context.Background()
	h, _ := home(t)
	outside := t.TempDir()
	write(t, filepath.Join(outside, "secret.txt"), "outside")
	dir := filepath.Join(h, "user/review")
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "abs-link")))
	require.NoError(t, os.Symlink("../../../"+filepath.Base(outside)+"/secret.txt", filepath.Join(dir, "rel-link")))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "dir-link")))
	require.NoError(t, os.Symlink(".skillenv", filepath.Join(dir, "env-link")))
	require.NoError(t, os.Symlink("docs/guide.txt", filepath.Join(dir, "ok-link")))
	require.NoError(t, os.Symlink("loop-b", filepath.Join(dir, "loop-a")))
	require.NoError(t, os.Symlink("loop-a", filepath.Join(dir, "loop-b")))
	write(t, filepath.Join(dir, "huge.bin"), strings.Repeat("x", 2000))
	s := skills.New(skills.WithHome(h), skills.WithMaxFileBytes(1000))

	_, err := s.Get(ctx, "o", protocol.GetSkillReq{Name: "Bad Name"})
	perr := refusal(t, err, protocol.CodeSkillNameInvalid)
	b, _ := json.Marshal(perr.In(protocol.Gen04))
	assert.Equal(t, `{"code":4016,"message":"Invalid skill name","details":{"name":"Bad Name"}}`, string(b))
	_, err = s.Get(ctx, "o", protocol.GetSkillReq{Name: "mcp:fs:review"})
	perr = refusal(t, err, protocol.CodeMCPServerNotFound)
	b, _ = json.Marshal(perr.In(protocol.Gen04))
	assert.Equal(t, `{"code":4014,"message":"Skill not found","details":{"name":"mcp:fs:review"}}`, string(b))
	_, err = s.Get(ctx, "o", protocol.GetSkillReq{Name: "no-desc"})
	refusal(t, err, protocol.CodeMCPServerNotFound)

	for rel, reason := range map[string]string{
		"../no-desc/SKILL.md": "traversal",
		"docs/../../x":        "traversal",
		"/etc/passwd":         "traversal",
		`docs\guide.txt`:      "traversal",
		"c:/x":                "traversal",
		"a\x00b":              "traversal",
		"abs-link":            "traversal",
		"rel-link":            "traversal",
		"dir-link/secret.txt": "traversal",
		".skillenv":           "forbidden",
		".SKILLENV":           "forbidden",
		"env-link":            "forbidden",
		"missing.txt":         "not_found",
		"docs":                "not_found",
		"loop-a":              "traversal",
		"huge.bin":            "too_large",
	} {
		_, err := s.Get(ctx, "o", protocol.GetSkillReq{Name: "review", RelPath: rel})
		perr := refusal(t, err, protocol.CodeSkillResourceNotAccessible)
		assert.Equal(t, reason, perr.Details["reason"], "%q: %v", rel, perr)
		assert.Equal(t, rel, perr.Details["rel_path"])
		if reason == "too_large" {
			assert.EqualValues(t, 2000, perr.Details["total_size"])
		}
		assert.NotContains(t, perr.Error(), "outside")
	}
	ret, err := s.Get(ctx, "o", protocol.GetSkillReq{Name: "review", RelPath: "ok-link"})
	require.NoError(t, err)
	assert.Equal(t, "guide", *ret.Body)

	// Without a spool, what cannot be inline is refused.
	write(t, filepath.Join(dir, "mid.bin"), "\x00\x01")
	_, err = s.Get(ctx, "o", protocol.GetSkillReq{Name: "review", RelPath: "mid.bin"})
	perr = refusal(t, err, protocol.CodeSkillResourceNotAccessible)
	assert.Equal(t, "too_large", perr.Details["reason"])
}

// A change of a skill folder is seen by the next rescan, and only then.
func TestRescan(t *testing.T) {
	ctx := context.Background()
	h, _ := home(t)
	var calls atomic.Int32
	s := skills.New(skills.WithHome(h), skills.WithOnChange(func() { calls.Add(1) }))
	assert.False(t, s.Rescan(ctx))
	write(t, filepath.Join(h, "user/review/docs/new.txt"), "new")
	assert.True(t, s.Rescan(ctx))
	assert.False(t, s.Rescan(ctx))
	write(t, filepath.Join(h, "user/fresh/SKILL.md"), "---\ndescription: fresh\n---\n")
	assert.True(t, s.Rescan(ctx))
	require.NoError(t, os.RemoveAll(filepath.Join(h, "user/fresh")))
	assert.True(t, s.Rescan(ctx))
	assert.Equal(t, int32(3), calls.Load())
	assert.Len(t, s.List(ctx), 1)
}
