package window_test

import (
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/window"
)

type vectorFile struct {
	Valid []struct {
		URI        string                     `json:"uri"`
		Host       string                     `json:"host"`
		Segments   []string                   `json:"segments"`
		Priority   int                        `json:"priority"`
		Fullscreen bool                       `json:"fullscreen"`
		Query      map[string]json.RawMessage `json:"query"`
		Canonical  string                     `json:"canonical"`
		Note       string                     `json:"note"`
	} `json:"valid"`
	Invalid []struct {
		URI  string `json:"uri"`
		Note string `json:"note"`
	} `json:"invalid"`
}

func loadVectors(tb testing.TB) vectorFile {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "conformance", "window_uri.json"))
	require.NoError(tb, err)
	var f vectorFile
	require.NoError(tb, json.Unmarshal(raw, &f))
	require.NotEmpty(tb, f.Valid)
	require.NotEmpty(tb, f.Invalid)
	return f
}

func expectedQuery(t *testing.T, q map[string]json.RawMessage) url.Values {
	t.Helper()
	if len(q) == 0 {
		return nil
	}
	out := url.Values{}
	for k, raw := range q {
		var one string
		if json.Unmarshal(raw, &one) == nil {
			out[k] = []string{one}
			continue
		}
		var many []string
		require.NoError(t, json.Unmarshal(raw, &many))
		out[k] = many
	}
	return out
}

func TestParseVectors(t *testing.T) {
	f := loadVectors(t)
	for _, v := range f.Valid {
		t.Run("valid/"+v.URI, func(t *testing.T) {
			u, err := window.Parse(v.URI)
			require.NoError(t, err, v.Note)
			var segs []string
			if len(v.Segments) > 0 {
				segs = v.Segments
			}
			want := &window.URI{Host: v.Host, Segments: segs, Priority: v.Priority, Fullscreen: v.Fullscreen, Query: expectedQuery(t, v.Query)}
			assert.Equal(t, want, u, v.Note)
			assert.Equal(t, v.Canonical, u.String(), v.Note)
			again, err := window.Parse(u.String())
			require.NoError(t, err)
			assert.Equal(t, u, again, "Parse(String())")
			assert.True(t, window.IsValid(v.URI))
		})
	}
	for _, v := range f.Invalid {
		t.Run("invalid/"+v.URI, func(t *testing.T) {
			u, err := window.Parse(v.URI)
			require.Error(t, err, v.Note)
			assert.Nil(t, u)
			var perr *protocol.Error
			require.True(t, errors.As(err, &perr))
			assert.Equal(t, protocol.CodeBadRequest, perr.Code)
			assert.Equal(t, v.URI, perr.Details["uri"])
			assert.NotEmpty(t, perr.Details["reason"])
			assert.Contains(t, perr.Message, perr.Details["reason"])
			assert.False(t, window.IsValid(v.URI))
		})
	}
}

func TestBuild(t *testing.T) {
	tests := []struct {
		host       string
		segments   []string
		priority   int
		fullscreen bool
		want       string
	}{
		{"com.example.mcp", []string{"dashboard", "main"}, 80, false, "window://com.example.mcp/dashboard/main?priority=80"},
		{"h", []string{"A B", "c/d"}, 0, false, "window://h/A%20B/c%2Fd"},
		{"h", nil, 0, false, "window://h"},
		{"h", []string{"w"}, 0, true, "window://h/w?fullscreen=true"},
		{"h", []string{"w"}, 100, true, "window://h/w?priority=100&fullscreen=true"},
	}
	for _, tt := range tests {
		got := window.Build(tt.host, tt.segments, tt.priority, tt.fullscreen)
		assert.Equal(t, tt.want, got)
		u, err := window.Parse(got)
		require.NoError(t, err)
		assert.Equal(t, tt.host, u.Host)
		assert.Equal(t, tt.priority, u.Priority)
		assert.Equal(t, tt.fullscreen, u.Fullscreen)
		if len(tt.segments) == 0 {
			assert.Nil(t, u.Segments)
		} else {
			assert.Equal(t, tt.segments, u.Segments)
		}
	}
	// Build does not validate; Parse refuses what it cannot accept.
	assert.False(t, window.IsValid(window.Build("h", nil, 101, false)))
	assert.False(t, window.IsValid(window.Build("", nil, 0, false)))
	assert.False(t, window.IsValid(window.Build("h", []string{"a", ""}, 0, false)))
}

// The fields, not Query, give priority and fullscreen in String.
func TestStringUsesFields(t *testing.T) {
	u, err := window.Parse("window://h/w?priority=5&fullscreen=yes")
	require.NoError(t, err)
	u.Priority, u.Fullscreen = 0, false
	assert.Equal(t, "window://h/w?priority=0&fullscreen=false", u.String())
	assert.Equal(t, "window://h?priority=3", (&window.URI{Host: "h", Priority: 3}).String())
}

func TestQueryValuesIndependent(t *testing.T) {
	u, err := window.Parse("window://h?a=1&b=2")
	require.NoError(t, err)
	u.Query["a"] = append(u.Query["a"], "x")
	assert.Equal(t, []string{"2"}, u.Query["b"])
}

func TestEqual(t *testing.T) {
	a, err := window.Parse("window://h/a?priority=1&x=y")
	require.NoError(t, err)
	b, err := window.Parse("WINDOW://H/a?x=y&priority=01")
	require.NoError(t, err)
	assert.True(t, a.Equal(b))
	b.Segments = append(b.Segments, "c")
	assert.False(t, a.Equal(b))
	assert.True(t, (*window.URI)(nil).Equal(nil))
	assert.False(t, a.Equal(nil))
}
