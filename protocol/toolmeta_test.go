package protocol_test

import (
	"encoding/json"
	"testing"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToolMetaKeepsExtraMembers(t *testing.T) {
	tests := []struct {
		name, in, out string
		extra         map[string]any
	}{
		{"named only", `{"auto_apply":true,"tags":["a"]}`, `{"auto_apply":true,"tags":["a"]}`, nil},
		{"extra members", `{"alias":"x","icon":"gear","ui":{"order":2}}`, `{"alias":"x","icon":"gear","ui":{"order":2}}`,
			map[string]any{"icon": "gear", "ui": map[string]any{"order": 2.0}}},
		{"null named member", `{"auto_apply":null,"x":1}`, `{"x":1}`, map[string]any{"x": 1.0}},
		{"empty", `{}`, `{}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m protocol.ToolMeta
			require.NoError(t, json.Unmarshal([]byte(tt.in), &m))
			assert.Equal(t, tt.extra, m.Extra)
			b, err := json.Marshal(m)
			require.NoError(t, err)
			assert.JSONEq(t, tt.out, string(b))
			require.NoError(t, protocol.ValidateSchema("tool_meta.json", b))
		})
	}
	// A named member always wins over an Extra key of the same name.
	b, err := json.Marshal(protocol.ToolMeta{Alias: "real", Extra: map[string]any{"alias": "shadow", "tags": "bad"}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"alias":"real"}`, string(b))

	var m protocol.ToolMeta
	assert.Error(t, json.Unmarshal([]byte(`{"tags":"not a list"}`), &m))
	assert.Error(t, json.Unmarshal([]byte(`[1]`), &m))
}

func TestToolMetaMerge(t *testing.T) {
	base := protocol.ToolMeta{AutoApply: ptr(true), Tags: []string{"d"}, Extra: map[string]any{"icon": "gear", "team": "docs", "gone": nil}}
	over := protocol.ToolMeta{AutoApply: ptr(false), Alias: "y", Extra: map[string]any{"icon": "search", "team": nil}}
	got := over.Merge(base)
	assert.Equal(t, protocol.ToolMeta{AutoApply: ptr(false), Alias: "y", Tags: []string{"d"},
		Extra: map[string]any{"icon": "search", "team": "docs"}}, got)
	assert.Equal(t, map[string]any{"icon": "gear", "team": "docs", "gone": nil}, base.Extra, "base unchanged")
	assert.Equal(t, protocol.ToolMeta{}, protocol.ToolMeta{}.Merge(protocol.ToolMeta{}))
}

func ptr[T any](v T) *T { return &v }

func TestSMCPToolMetaAccessors(t *testing.T) {
	tool := protocol.SMCPTool{Name: "search", Meta: map[string]any{
		protocol.MetaKeyToolMeta:   `{"auto_apply":true,"tags":["docs"],"icon":"magnifier"}`,
		protocol.MetaKeyAnnotation: `{"title":"Search","readOnlyHint":true}`,
	}}
	m, err := tool.ToolMeta()
	require.NoError(t, err)
	assert.Equal(t, &protocol.ToolMeta{AutoApply: ptr(true), Tags: []string{"docs"}, Extra: map[string]any{"icon": "magnifier"}}, m)
	a, err := tool.Annotations()
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"title": "Search", "readOnlyHint": true}, a)

	m, err = protocol.SMCPTool{Name: "plain"}.ToolMeta()
	assert.NoError(t, err)
	assert.Nil(t, m)
	a, err = protocol.SMCPTool{Name: "plain", Meta: map[string]any{"other": 1}}.Annotations()
	assert.NoError(t, err)
	assert.Nil(t, a)

	for _, bad := range []any{`{"auto_apply":"yes"}`, `not json`, 42.0} {
		_, err := protocol.SMCPTool{Name: "bad", Meta: map[string]any{protocol.MetaKeyToolMeta: bad}}.ToolMeta()
		assert.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err), "%v", bad)
	}
}
