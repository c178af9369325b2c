package config

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/require"
)

// The Python reference SDK of each generation accepts the client:get_config
// answer of a Go Computer: its TypeAdapter(GetComputerConfigRet) validates
// what Ret encodes for that generation, for minimal stdio, streamable and
// SSE configs, a name the bundle_id is derived from, an explicit bundle_id
// and a pickString input (spec/decisions.md, Configuration answers; the
// 0.4.2 Python Server validates the answer so). Needs the SDKs of
// `go run mage.go setup`; under `go run mage.go test` (SMCP_INTEROP=1) a
// missing SDK fails the test.
func TestRetAcceptedByPythonSDK(t *testing.T) {
	c, err := Parse([]byte(`{"servers": [
	  {"name":"fs","type":"stdio","server_parameters":{"command":"x"}},
	  {"name":"my web","type":"streamable","server_parameters":{"url":"http://127.0.0.1:9/mcp"}},
	  {"name":"old","bundle_id":"legacy-sse","type":"sse","server_parameters":{"url":"http://127.0.0.1:9/sse","headers":null}}
	], "inputs": [
	  {"id":"color","type":"pickString","description":"a color","options":["red","blue"],"default":"red"}
	]}`))
	require.NoError(t, err)
	for _, p := range []struct {
		env, venv string
		g         protocol.Generation
	}{
		{"SMCP_INTEROP_PYTHON", "venv", protocol.Gen02},
		{"SMCP_INTEROP_PYTHON_03", "venv-0.3.3", protocol.Gen03},
		{"SMCP_INTEROP_PYTHON_04", "venv-0.4.2", protocol.Gen04},
	} {
		t.Run(p.g.String(), func(t *testing.T) {
			py := os.Getenv(p.env)
			if py == "" {
				py, _ = filepath.Abs(filepath.Join("..", "..", ".cache", p.venv, "bin", "python"))
			}
			if _, err := os.Stat(py); err != nil {
				if os.Getenv("SMCP_INTEROP") == "1" {
					t.Fatalf("SMCP_INTEROP=1 but there is no Python virtualenv at %s (run `go run mage.go setup`)", py)
				}
				t.Skipf("Python reference SDK not installed at %s", py)
			}
			b, err := json.Marshal(c.Ret(p.g))
			require.NoError(t, err)
			const check = `import json, sys
from pydantic import TypeAdapter
from a2c_smcp.smcp import GetComputerConfigRet
TypeAdapter(GetComputerConfigRet).validate_python(json.load(sys.stdin))
print("ok")`
			cmd := exec.Command(py, "-c", check)
			cmd.Stdin = bytes.NewReader(b)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "the Python SDK refuses %s:\n%s", b, out)
			require.Equal(t, "ok\n", string(out))
		})
	}
}
