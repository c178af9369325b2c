package skills

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The plugin sources of a catalog entry, as the references resolve them.
func TestResolveSource(t *testing.T) {
	sha := "0123456789abcdef0123456789abcdef01234567"
	for name, tt := range map[string]struct {
		raw  any
		want pluginSource
	}{
		"dot path":   {"./tools/x", pluginSource{rel: "tools/x"}},
		"bare":       {"x", pluginSource{rel: "plugins/x"}},
		"url":        {map[string]any{"source": "url", "url": "https://h/r.git", "ref": "v1"}, pluginSource{url: "https://h/r.git", ref: "v1"}},
		"github":     {map[string]any{"source": "github", "repo": "o/r", "sha": sha}, pluginSource{url: "https://github.com/o/r.git", sha: sha}},
		"cnb":        {map[string]any{"source": "cnb", "repo": "g/p.git"}, pluginSource{url: "https://cnb.cool/g/p.git"}},
		"git-subdir": {map[string]any{"source": "git-subdir", "url": "o/r", "path": "./a/b"}, pluginSource{url: "https://github.com/o/r.git", subdir: "a/b"}},
	} {
		got, err := resolveSource(tt.raw, "./plugins")
		require.NoError(t, err, name)
		assert.Equal(t, tt.want, got, name)
	}
	for name, raw := range map[string]any{
		"dotdot":      "./a/../../x",
		"slash":       "a/b",
		"kind":        map[string]any{"source": "svn", "url": "https://h/r"},
		"short sha":   map[string]any{"source": "url", "url": "https://h/r.git", "sha": "abc"},
		"option ref":  map[string]any{"source": "url", "url": "https://h/r.git", "ref": "--upload-pack=x"},
		"option url":  map[string]any{"source": "url", "url": "--upload-pack=x"},
		"github url":  map[string]any{"source": "github", "repo": "https://github.com/o/r"},
		"subdir up":   map[string]any{"source": "git-subdir", "url": "o/r", "path": "../x"},
		"not a thing": 42,
	} {
		_, err := resolveSource(raw, "./plugins")
		assert.Error(t, err, name)
	}
}

func TestSSHToHTTPSAndRedaction(t *testing.T) {
	assert.Equal(t, "https://github.com/o/r.git", sshToHTTPS("git@github.com:o/r.git"))
	assert.Equal(t, "https://h.example/o/r.git", sshToHTTPS("ssh://git@h.example:2222/o/r.git"))
	assert.Equal(t, "", sshToHTTPS("https://h/r.git"))
	assert.Equal(t, "https://u:xxxxx@h/r.git", redactURL("https://u:tok@h/r.git"))
	assert.Equal(t, "https://u@h/r.git", redactURL("https://u@h/r.git"))
}
