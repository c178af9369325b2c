// Package lockstep holds the lockstep checks of smcp-go against the Python
// reference SDKs, one per generation (spec/lockstep.md): a2c-smcp 0.1.2
// against generation 0.2.0 and a2c-smcp 0.4.2 against generation 0.4.0.
// The SDK itself, through a small Python script, says which events and
// payload types it defines, and the test compares them with the
// generation's projection of schema/ (protocol/schema/<generation>/) and
// its events in schema/events.json. The 0.4.2 SDK also recomputes the
// conformance vectors that were produced by running it.
package lockstep

import (
	"bytes"
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

// peer is one Python reference SDK and the generation it is checked
// against.
type peer struct {
	env, venv, generation, lockfile string
}

var (
	py012 = peer{env: "SMCP_INTEROP_PYTHON", venv: "venv", generation: "0.2.0", lockfile: "lockstep-python.json"}
	py042 = peer{env: "SMCP_INTEROP_PYTHON_04", venv: "venv-0.4.2", generation: "0.4.0", lockfile: "lockstep-python-0.4.json"}
)

func python(t *testing.T, p peer) string {
	t.Helper()
	py := os.Getenv(p.env)
	if py == "" {
		py, _ = filepath.Abs(filepath.Join(root, ".cache", p.venv, "bin", "python"))
	}
	if _, err := os.Stat(py); err != nil {
		if os.Getenv("SMCP_INTEROP") == "1" {
			t.Fatalf("SMCP_INTEROP=1 but there is no Python virtualenv at %s (run `go run mage.go setup`)", py)
		}
		t.Skipf("Python reference SDK not installed at %s (run `go run mage.go setup`, or set %s)", py, p.env)
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

// ask runs a script of testdata with the SDK's Python, stdin as its input,
// and returns what it prints.
func ask(t *testing.T, py, script string, stdin []byte) []byte {
	t.Helper()
	cmd := exec.Command(py, filepath.Join("testdata", script))
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("asking the Python SDK (%s): %v\n%s", script, err, stderr)
	}
	return out
}

// a2c-smcp 0.1.2 against generation 0.2.0.
func TestLockstepWithPythonSDK(t *testing.T) { lockstep(t, py012) }

// a2c-smcp 0.4.2 against generation 0.4.0.
func TestLockstepWithPythonSDK04(t *testing.T) { lockstep(t, py042) }

func lockstep(t *testing.T, p peer) {
	out := ask(t, python(t, p), "dump_smcp.py", nil)
	var sdk pySDK
	if err := json.Unmarshal(out, &sdk); err != nil {
		t.Fatalf("decoding the Python SDK's answer: %v", err)
	}
	if len(sdk.Events) == 0 || len(sdk.Types) == 0 {
		t.Fatalf("the Python SDK reported nothing: %s", out)
	}
	var lock lockstepFile
	readJSON(t, filepath.Join(root, "conformance", p.lockfile), &lock)

	found := compare(t, sdk, lock.Types, p.generation)
	listed := map[string]string{}
	for _, d := range lock.Differences {
		if strings.TrimSpace(d.Reason) == "" {
			t.Errorf("conformance/%s: %s has no reason", p.lockfile, d.ID)
		}
		listed[d.ID] = d.Reason
	}
	for _, id := range found {
		if _, ok := listed[id]; !ok {
			t.Errorf("difference from the Python SDK that conformance/%s does not list: %s", p.lockfile, id)
		}
	}
	for id := range listed {
		if !slices.Contains(found, id) {
			t.Errorf("conformance/%s lists %s, which is no longer a difference: remove it", p.lockfile, id)
		}
	}
}

// compare lists every difference between the SDK and generation gen of
// schema/, as the ids the lockstep file uses.
func compare(t *testing.T, sdk pySDK, mapping map[string]string, gen string) []string {
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }

	var manifest struct {
		Namespace string `json:"namespace"`
		Events    []struct {
			Name        string                     `json:"name"`
			Direction   string                     `json:"direction"`
			Generations map[string]json.RawMessage `json:"generations"`
		} `json:"events"`
	}
	readJSON(t, filepath.Join(root, "schema", "events.json"), &manifest)
	if sdk.Namespace != manifest.Namespace {
		add("namespace %s", sdk.Namespace)
	}
	ours := map[string]string{}
	for _, e := range manifest.Events {
		if _, ok := e.Generations[gen]; ok {
			ours[e.Name] = e.Direction
		}
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

	s := schemas{dir: filepath.Join(root, "protocol", "schema", gen), cache: map[string]map[string]any{}}
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
			t.Errorf("the lockstep file maps %s (to %s), which the Python SDK does not define", typ, file)
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

// The conformance vectors that were produced by running a2c-smcp 0.4.2 are
// what it answers still: bundle ids (conformance/bundle_id.json) and the
// version, handshake and error cases (conformance/generations-0.4.json).
func TestVectorsFromPythonSDK04(t *testing.T) {
	py := python(t, py042)

	var bundle struct {
		Cases []struct {
			Config json.RawMessage `json:"config"`
			Expect json.RawMessage `json:"expect"`
		} `json:"cases"`
	}
	raw, err := os.ReadFile(filepath.Join(root, "conformance", "bundle_id.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &bundle); err != nil {
		t.Fatal(err)
	}
	var answers []json.RawMessage
	if err := json.Unmarshal(ask(t, py, "bundle_id.py", raw), &answers); err != nil {
		t.Fatal(err)
	}
	if len(answers) != len(bundle.Cases) {
		t.Fatalf("bundle_id.py answered %d cases of %d", len(answers), len(bundle.Cases))
	}
	for i, c := range bundle.Cases {
		if !sameJSON(t, c.Expect, answers[i]) {
			t.Errorf("conformance/bundle_id.json case %d (%s): the reference now answers %s, the file says %s", i, c.Config, answers[i], c.Expect)
		}
	}

	var vec struct {
		SDKProtocolVersion string `json:"sdk_protocol_version"`
		Versions           []struct {
			Client string          `json:"client"`
			Server string          `json:"server"`
			Expect json.RawMessage `json:"expect"`
		} `json:"versions"`
		Handshake []struct {
			Query  string          `json:"query"`
			Expect json.RawMessage `json:"expect"`
		} `json:"handshake"`
		Errors map[string]string `json:"errors"`
	}
	raw, err = os.ReadFile(filepath.Join(root, "conformance", "generations-0.4.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &vec); err != nil {
		t.Fatal(err)
	}
	var now struct {
		SDKProtocolVersion string            `json:"sdk_protocol_version"`
		Versions           []json.RawMessage `json:"versions"`
		Handshake          []json.RawMessage `json:"handshake"`
		Errors             map[string]string `json:"errors"`
	}
	if err := json.Unmarshal(ask(t, py, "vectors04.py", raw), &now); err != nil {
		t.Fatal(err)
	}
	if now.SDKProtocolVersion != vec.SDKProtocolVersion {
		t.Errorf("the SDK speaks %s, the vectors were made with %s", now.SDKProtocolVersion, vec.SDKProtocolVersion)
	}
	if len(now.Versions) != len(vec.Versions) || len(now.Handshake) != len(vec.Handshake) {
		t.Fatalf("vectors04.py answered %d/%d cases of %d/%d", len(now.Versions), len(now.Handshake), len(vec.Versions), len(vec.Handshake))
	}
	for i, c := range vec.Versions {
		if !sameJSON(t, c.Expect, now.Versions[i]) {
			t.Errorf("version case %q with %q: the reference now answers %s, the file says %s", c.Client, c.Server, now.Versions[i], c.Expect)
		}
	}
	for i, c := range vec.Handshake {
		if !sameJSON(t, c.Expect, now.Handshake[i]) {
			t.Errorf("handshake %q: the reference now answers %s, the file says %s", c.Query, now.Handshake[i], c.Expect)
		}
	}
	for name, text := range vec.Errors {
		if now.Errors[name] != text {
			t.Errorf("error %s: the reference now writes %s, the file says %s", name, now.Errors[name], text)
		}
	}
}

func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
