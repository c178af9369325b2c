package protocol

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
)

// asWritten loads the embedded schemas of one wire generation exactly as
// written, for comparison.
type asWritten struct{ dir string }

func (w asWritten) Load(url string) (any, error) {
	name, _ := strings.CutPrefix(url, SchemaBase)
	b, err := embeddedLoader{dir: w.dir}.read(name)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

func compileWith(t *testing.T, loader jsonschema.URLLoader, file string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(loader)
	s, err := c.Compile(SchemaBase + file)
	require.NoError(t, err, file)
	return s
}

// verdict is what a caller sees of a validation: ok, or the violations.
func verdict(s *jsonschema.Schema, v any) string {
	err := violations(s.Validate(v), "x", map[string]any{})
	if err == nil {
		return "ok"
	}
	var parts []string
	for _, v := range AsError(err).Details["violations"].([]Violation) {
		// One "required" reports the names it misses together: the merged
		// schema lists in one message what the branches listed in two.
		if names, ok := strings.CutPrefix(v.Message, "missing properties "); ok {
			for _, n := range strings.Split(names, ", ") {
				parts = append(parts, fmt.Sprintf("%s: missing property %s", v.Path, n))
			}
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: %s", v.Path, v.Message))
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

// TestFlattenedSchemasJudgeAlike checks, for every schema the merge
// applies to, that random instances built from the schema's own property
// names (present or missing, of every JSON type, at and beyond the length
// limits, with extra keys) get the same verdict and the same violations
// from the merged schema as from the schema as written (missing required
// names may be listed in one message instead of one per branch).
func TestFlattenedSchemasJudgeAlike(t *testing.T) {
	merged := 0
	for _, g := range []Generation{Gen02, Gen04} {
		dir := g.String()
		for _, file := range g.SchemaFiles() {
			merged += judgeAlike(t, dir, file)
		}
	}
	require.GreaterOrEqual(t, merged, 20, "the routed requests' schemas are merged")
}

// judgeAlike compares one schema file of one wire generation as written
// and as merged, and reports 1 when it was merged.
func judgeAlike(t *testing.T, dir, file string) int {
	{
		loader := embeddedLoader{dir: dir}
		raw, err := loader.read(file)
		require.NoError(t, err)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		require.NoError(t, err)
		flat := flattenAllOf(doc, loader.read)
		if _, hadAllOf := doc.(map[string]any)["allOf"]; !hadAllOf {
			return 0
		}
		if _, still := flat.(map[string]any)["allOf"]; still {
			return 0 // not a plain merge: left as written
		}
		props := flat.(map[string]any)["properties"].(map[string]any)
		written, ours := compileWith(t, asWritten{dir: dir}, file), compileWith(t, loader, file)
		rng := rand.New(rand.NewPCG(uint64(len(file)), 1))
		valid := 0
		for range 3000 {
			v := randomInstance(rng, props)
			want, got := verdict(written, v), verdict(ours, v)
			require.Equal(t, want, got, "%s: %v", file, v)
			if want == "ok" {
				valid++
			}
		}
		t.Logf("%s %s: merged; 3000 instances judged alike (%d valid)", dir, file, valid)
	}
	return 1
}

// typical returns a value of the property's declared type, or nil.
func typical(name string, schema any) any {
	s, _ := schema.(map[string]any)
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	switch s["type"] {
	case "string":
		return "v-" + name
	case "integer":
		return 5.0
	case "number":
		return 2.5
	case "boolean":
		return true
	case "object":
		return map[string]any{}
	case "array":
		return []any{}
	}
	return nil
}

func randomInstance(rng *rand.Rand, props map[string]any) any {
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	pool := []any{
		"", "a", "agent-1", strings.Repeat("n", 128), strings.Repeat("n", 129), strings.Repeat("n", 257),
		0.0, 1.0, -1.0, 2.5, 30.0, 1e9, true, false, nil,
		map[string]any{}, map[string]any{"k": "v"}, []any{}, []any{"x"},
	}
	m := map[string]any{}
	for _, n := range names {
		if rng.IntN(8) == 0 {
			continue // missing
		}
		if v := typical(n, props[n]); v != nil && rng.IntN(4) != 0 {
			m[n] = v // of the declared type
			continue
		}
		m[n] = pool[rng.IntN(len(pool))]
	}
	if rng.IntN(4) == 0 {
		m["extra"] = pool[rng.IntN(len(pool))]
	}
	if rng.IntN(30) == 0 {
		return pool[rng.IntN(len(pool))] // not an object at all
	}
	return m
}
