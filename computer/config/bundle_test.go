package config

import (
	"encoding/json"
	"testing"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bundle ids: explicit, else derived from the name; the first server keeps
// a bundle_id two resolve to, the later one is refused with a 400 naming
// both; an invalid explicit one fails the config's load.
func TestBundleIDs(t *testing.T) {
	c, err := Parse([]byte(`[
	  {"name":"my.server","type":"stdio","server_parameters":{"command":"a"}},
	  {"name":"my server","type":"stdio","server_parameters":{"command":"b"}},
	  {"name":"x","bundle_id":"given","type":"stdio","server_parameters":{"command":"c"}},
	  {"name":"中文","type":"stdio","server_parameters":{"command":"d"}}
	]`))
	require.NoError(t, err)
	ids, refused := c.BundleIDs()
	cjk, _ := c.Server("中文")
	assert.Equal(t, map[string]string{"my.server": "my_server", "x": "given", "中文": protocol.DeriveBundleID(cjk)}, ids)
	assert.Regexp(t, `^bundle_[0-9a-f]{16}$`, ids["中文"], "nothing of the name is left: the hash of the connection")
	require.Len(t, refused, 1)
	e := refused["my server"]
	require.NotNil(t, e)
	assert.Equal(t, protocol.CodeBadRequest, e.Code)
	assert.Equal(t, "my_server", e.Details["bundle_id"])
	assert.Equal(t, "my.server", e.Details["held_by"])

	for _, bad := range []string{`"a__b"`, `"a.b"`} {
		_, err := Parse([]byte(`{"name":"n","bundle_id":` + bad + `,"type":"stdio","server_parameters":{"command":"a"}}`))
		require.Error(t, err, bad)
		assert.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err))
		assert.Equal(t, "n", protocol.AsError(err).Details["server"])
	}
}

// client:get_config per generation: keyed by name without bundle_id in
// 0.2.0, keyed by bundle_id with each entry's bundle_id from 0.3.0 on (a
// refused server left out), pickString options in each generation's form;
// valid in the generation's schema.
func TestRetPerGeneration(t *testing.T) {
	c, err := Parse([]byte(`{"servers": [
	  {"name":"my.server","type":"stdio","server_parameters":{"command":"a"}},
	  {"name":"my server","type":"stdio","server_parameters":{"command":"b"}},
	  {"name":"x","bundle_id":"given","type":"stdio","server_parameters":{"command":"c"}}
	], "inputs": [{"id":"pick","type":"pickString","description":"d","options":["a","b"]}]}`))
	require.NoError(t, err)
	decode := func(g protocol.Generation) map[string]any {
		b, err := json.Marshal(c.Ret(g))
		require.NoError(t, err)
		require.NoError(t, g.Validate(protocol.EventGetConfig, protocol.Ack, b), string(b))
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		return m
	}
	m := decode(protocol.Gen02)
	servers := m["servers"].(map[string]any)
	assert.ElementsMatch(t, []string{"my.server", "my server", "x"}, keys(servers))
	for _, s := range servers {
		assert.NotContains(t, s, "bundle_id")
	}
	assert.Equal(t, []any{"a", "b"}, m["inputs"].([]any)[0].(map[string]any)["options"])

	for _, g := range []protocol.Generation{protocol.Gen03, protocol.Gen04} {
		m := decode(g)
		servers := m["servers"].(map[string]any)
		assert.ElementsMatch(t, []string{"my_server", "given"}, keys(servers))
		for k, s := range servers {
			assert.Equal(t, k, s.(map[string]any)["bundle_id"])
		}
		assert.Equal(t, "my.server", servers["my_server"].(map[string]any)["name"], "the first keeps the bundle_id")
		assert.Equal(t, []any{map[string]any{"label": "a", "value": "a"}, map[string]any{"label": "b", "value": "b"}},
			m["inputs"].([]any)[0].(map[string]any)["options"])
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
