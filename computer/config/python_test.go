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

// The Python reference SDK accepts the client:get_config answer of a Go
// Computer: its TypeAdapter(GetComputerConfigRet) validates what Ret
// encodes for minimal stdio, streamable and SSE configs (spec/decisions.md,
// Configuration answers). Needs the SDK of `go run mage.go setup`; under `go run mage.go
// test` (SMCP_INTEROP=1) a missing SDK fails the test.
func TestRetAcceptedByPythonSDK(t *testing.T) {
	py := os.Getenv("SMCP_INTEROP_PYTHON")
	if py == "" {
		py, _ = filepath.Abs(filepath.Join("..", "..", ".cache", "venv", "bin", "python"))
	}
	if _, err := os.Stat(py); err != nil {
		if os.Getenv("SMCP_INTEROP") == "1" {
			t.Fatalf("SMCP_INTEROP=1 but there is no Python virtualenv at %s (run `go run mage.go setup`)", py)
		}
		t.Skipf("Python reference SDK not installed at %s", py)
	}
	c, err := Parse([]byte(`[
	  {"name":"fs","type":"stdio","server_parameters":{"command":"x"}},
	  {"name":"web","type":"streamable","server_parameters":{"url":"http://127.0.0.1:9/mcp"}},
	  {"name":"old","type":"sse","server_parameters":{"url":"http://127.0.0.1:9/sse","headers":null}}
	]`))
	require.NoError(t, err)
	b, err := json.Marshal(c.Ret(protocol.Gen02))
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
}
