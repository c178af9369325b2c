package protocol

import (
	"encoding/json"
	"slices"
)

// toolMetaFields are the members of ToolMeta the schema names; every other
// member is kept in Extra (schema/tool_meta.json allows any, as the Python
// SDK's ToolMeta does, so that a config's own keys reach a2c_tool_meta).
var toolMetaFields = []string{"auto_apply", "ret_object_mapper", "alias", "tags"}

// MarshalJSON writes the named members, then the members of Extra that do
// not collide with a named one.
func (m ToolMeta) MarshalJSON() ([]byte, error) {
	type plain ToolMeta
	b, err := json.Marshal(plain(m))
	if err != nil || len(m.Extra) == 0 {
		return b, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	for k, v := range m.Extra {
		if !slices.Contains(toolMetaFields, k) {
			out[k] = v
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads the named members and keeps the others in Extra.
func (m *ToolMeta) UnmarshalJSON(b []byte) error {
	type plain ToolMeta
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	var all map[string]any
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for _, k := range toolMetaFields {
		delete(all, k)
	}
	p.Extra = nil
	if len(all) > 0 {
		p.Extra = all
	}
	*m = ToolMeta(p)
	return nil
}

// Merge returns the shallow merge of m over base, member by member: a
// member m sets (not null) wins, the others come from base. Extra members
// merge the same way. It is how a tool's tool_meta entry combines with its
// server's default_tool_meta (spec/protocol.md, Routed requests).
func (m ToolMeta) Merge(base ToolMeta) ToolMeta {
	out := base
	out.Extra = nil
	for _, extra := range []map[string]any{base.Extra, m.Extra} {
		for k, v := range extra {
			if v == nil {
				continue
			}
			if out.Extra == nil {
				out.Extra = map[string]any{}
			}
			out.Extra[k] = v
		}
	}
	if m.Alias != "" {
		out.Alias = m.Alias
	}
	if m.AutoApply != nil {
		out.AutoApply = m.AutoApply
	}
	if m.RetObjectMapper != nil {
		out.RetObjectMapper = m.RetObjectMapper
	}
	if m.Tags != nil {
		out.Tags = m.Tags
	}
	return out
}

// Keys of SMCPTool.Meta that spec/protocol.md defines (SMCPTool): both carry a
// JSON document encoded as a string.
const (
	// MetaKeyToolMeta holds the tool's merged ToolMeta.
	MetaKeyToolMeta = "a2c_tool_meta"
	// MetaKeyAnnotation holds the MCP tool annotations.
	MetaKeyAnnotation = "MCP_TOOL_ANNOTATION"
)

// ToolMeta decodes the tool's a2c_tool_meta, the merged ToolMeta its
// Computer configured (auto_apply, alias, tags, ...). It returns nil and no
// error when the tool has none.
func (t SMCPTool) ToolMeta() (*ToolMeta, error) {
	var m ToolMeta
	ok, err := t.metaJSON(MetaKeyToolMeta, &m)
	if !ok || err != nil {
		return nil, err
	}
	return &m, nil
}

// Annotations decodes the tool's MCP_TOOL_ANNOTATION, the MCP server's
// annotations (title, readOnlyHint, destructiveHint, ...). It returns nil
// and no error when the tool has none.
func (t SMCPTool) Annotations() (map[string]any, error) {
	var a map[string]any
	if _, err := t.metaJSON(MetaKeyAnnotation, &a); err != nil {
		return nil, err
	}
	return a, nil
}

func (t SMCPTool) metaJSON(key string, v any) (bool, error) {
	raw, ok := t.Meta[key]
	if !ok || raw == nil {
		return false, nil
	}
	s, isString := raw.(string)
	if !isString {
		return false, NewBadRequest("tool %q: meta %s is a %T, not a JSON string", t.Name, key, raw).With("tool", t.Name)
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return false, NewBadRequest("tool %q: meta %s: %v", t.Name, key, err).With("tool", t.Name)
	}
	return true, nil
}
