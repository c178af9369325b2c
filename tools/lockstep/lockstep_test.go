// Package lockstep holds the lockstep check of smcp-go against the Python
// reference SDK (a2c-smcp 0.1.2): the SDK itself, through a small Python
// script, says which events and payload types it defines, and the test
// compares them with schema/ (spec/lockstep.md).
package lockstep

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// root is the repository root, two levels above this package.
var root = filepath.Join("..", "..")

// pySDK is what testdata/dump_smcp.py prints.
type pySDK struct {
	Namespace string                                                  `json:"namespace"`
	Events    map[string]string                                       `json:"events"`
	Types     map[string]map[string]struct{ Required, Nullable bool } `json:"types"`
}

// lockstepFile is conformance/lockstep-python.json.
type lockstepFile struct {
	SDK         string            `json:"sdk"`
	Types       map[string]string `json:"types"` // Python TypedDict -> schema file
	Differences []struct {
		ID     string `json:"id"`
		Reason string `json:"reason"`
	} `json:"differences"`
}

func python(t *testing.T) string {
	t.Helper()
	py := os.Getenv("SMCP_INTEROP_PYTHON")
	if py == "" {
		py, _ = filepath.Abs(filepath.Join(root, ".cache", "venv", "bin", "python"))
	}
	if _, err := os.Stat(py); err != nil {
		if os.Getenv("SMCP_INTEROP") == "1" {
			t.Fatalf("SMCP_INTEROP=1 but there is no Python virtualenv at %s (run `go run mage.go setup`)", py)
		}
		t.Skipf("Python reference SDK not installed at %s (run `go run mage.go setup`)", py)
	}
	return py
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestLockstepWithPythonSDK(t *testing.T) {
	py := python(t)
	cmd := exec.Command(py, filepath.Join("testdata", "dump_smcp.py"))
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("asking the Python SDK: %v\n%s", err, stderr)
	}
	var sdk pySDK
	if err := json.Unmarshal(out, &sdk); err != nil {
		t.Fatalf("decoding the Python SDK's answer: %v", err)
	}
	if len(sdk.Events) == 0 || len(sdk.Types) == 0 {
		t.Fatalf("the Python SDK reported nothing: %s", out)
	}
	var lock lockstepFile
	readJSON(t, filepath.Join(root, "conformance", "lockstep-python.json"), &lock)

	found := compare(t, sdk, lock.Types)
	listed := map[string]string{}
	for _, d := range lock.Differences {
		if strings.TrimSpace(d.Reason) == "" {
			t.Errorf("conformance/lockstep-python.json: %s has no reason", d.ID)
		}
		listed[d.ID] = d.Reason
	}
	for _, id := range found {
		if _, ok := listed[id]; !ok {
			t.Errorf("difference from the Python SDK that conformance/lockstep-python.json does not list: %s", id)
		}
	}
	for id := range listed {
		if !slices.Contains(found, id) {
			t.Errorf("conformance/lockstep-python.json lists %s, which is no longer a difference: remove it", id)
		}
	}
}

// compare lists every difference between the SDK and schema/, as the ids
// the lockstep file uses.
func compare(t *testing.T, sdk pySDK, mapping map[string]string) []string {
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }

	var manifest struct {
		Namespace string `json:"namespace"`
		Events    []struct {
			Name      string `json:"name"`
			Direction string `json:"direction"`
		} `json:"events"`
	}
	readJSON(t, filepath.Join(root, "schema", "events.json"), &manifest)
	if sdk.Namespace != manifest.Namespace {
		add("namespace %s", sdk.Namespace)
	}
	ours := map[string]string{}
	for _, e := range manifest.Events {
		ours[e.Name] = e.Direction
	}
	for name := range sdk.Events {
		dir, ok := ours[name]
		if !ok {
			add("event %s only in the Python SDK", name)
			continue
		}
		if prefix, _, _ := strings.Cut(name, ":"); prefix != dir {
			add("event %s direction %s", name, dir)
		}
	}
	for name := range ours {
		if _, ok := sdk.Events[name]; !ok {
			add("event %s only in smcp-go", name)
		}
	}

	s := schemas{dir: filepath.Join(root, "schema"), cache: map[string]map[string]any{}}
	for typ, keys := range sdk.Types {
		file, ok := mapping[typ]
		if !ok {
			add("type %s has no schema", typ)
			continue
		}
		props, required := s.object(t, file)
		for key, k := range keys {
			p, ok := props[key]
			if !ok {
				add("type %s key %s only in the Python SDK", typ, key)
				continue
			}
			if k.Required != required[key] {
				add("type %s key %s required: Python %v, smcp-go %v", typ, key, k.Required, required[key])
			}
			if n := s.nullable(t, file, p); k.Nullable != n {
				add("type %s key %s nullable: Python %v, smcp-go %v", typ, key, k.Nullable, n)
			}
		}
		for key := range props {
			if _, ok := keys[key]; !ok {
				add("type %s key %s only in smcp-go", typ, key)
			}
		}
	}
	for typ, file := range mapping {
		if _, ok := sdk.Types[typ]; !ok {
			t.Errorf("conformance/lockstep-python.json maps %s (to %s), which the Python SDK does not define", typ, file)
		}
	}
	sort.Strings(diffs)
	return diffs
}

// schemas reads schema/ files and resolves what an object schema holds.
type schemas struct {
	dir   string
	cache map[string]map[string]any
}

func (s schemas) load(t *testing.T, file string) map[string]any {
	if m, ok := s.cache[file]; ok {
		return m
	}
	var m map[string]any
	readJSON(t, filepath.Join(s.dir, file), &m)
	s.cache[file] = m
	return m
}

// object collects the properties and required names of an object schema,
// following allOf and $ref (to other files of schema/).
func (s schemas) object(t *testing.T, file string) (map[string]any, map[string]bool) {
	props, required := map[string]any{}, map[string]bool{}
	var walk func(node map[string]any, file string)
	walk = func(node map[string]any, file string) {
		if ref, ok := node["$ref"].(string); ok {
			walk(s.load(t, ref), ref)
		}
		if p, ok := node["properties"].(map[string]any); ok {
			for k, v := range p {
				props[k] = v
			}
		}
		if r, ok := node["required"].([]any); ok {
			for _, k := range r {
				required[k.(string)] = true
			}
		}
		if all, ok := node["allOf"].([]any); ok {
			for _, sub := range all {
				walk(sub.(map[string]any), file)
			}
		}
	}
	walk(s.load(t, file), file)
	return props, required
}

// nullable reports whether a property schema admits null.
func (s schemas) nullable(t *testing.T, file string, p any) bool {
	node, ok := p.(map[string]any)
	if !ok {
		return false
	}
	switch ty := node["type"].(type) {
	case string:
		if ty == "null" {
			return true
		}
	case []any:
		for _, x := range ty {
			if x == "null" {
				return true
			}
		}
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if alts, ok := node[key].([]any); ok {
			for _, a := range alts {
				if s.nullable(t, file, a) {
					return true
				}
			}
		}
	}
	if ref, ok := node["$ref"].(string); ok {
		return s.nullable(t, ref, s.load(t, ref))
	}
	return false
}
