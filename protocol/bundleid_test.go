package protocol_test

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// bundleCases is conformance/bundle_id.json: configs and what the Python
// reference a2c-smcp 0.4.2 computes for them (tools/lockstep checks the
// file against the reference itself).
type bundleCases struct {
	Cases []struct {
		Description string          `json:"description"`
		Config      json.RawMessage `json:"config"`
		Expect      struct {
			Derived  string `json:"derived"`
			Resolved string `json:"resolved"`
			Error    string `json:"error"`
			Identity string `json:"identity"`
		} `json:"expect"`
	} `json:"cases"`
}

// smcp-go derives, resolves and refuses bundle ids byte for byte as the
// Python reference does, fallback digest included.
func TestBundleIDConformance(t *testing.T) {
	raw, err := os.ReadFile(repoFile("conformance", "bundle_id.json"))
	require.NoError(t, err)
	var file bundleCases
	require.NoError(t, json.Unmarshal(raw, &file))
	require.GreaterOrEqual(t, len(file.Cases), 30)
	fallbacks := 0
	for _, c := range file.Cases {
		t.Run(c.Description, func(t *testing.T) {
			var cfg protocol.MCPServerConfig
			require.NoError(t, json.Unmarshal(c.Config, &cfg))
			assert.Equal(t, c.Expect.Identity, hex.EncodeToString(protocol.ConnectionIdentity(cfg)))
			assert.Equal(t, c.Expect.Derived, protocol.DeriveBundleID(cfg))
			// The 0.4 generation's schema refuses what the reference refuses
			// when it reads the config (an empty or malformed explicit id),
			// and ResolveBundleID refuses the same.
			schemaErr := protocol.Gen04.ValidateSchema("mcp_server_config.json", c.Config)
			got, err := protocol.ResolveBundleID(cfg)
			if c.Expect.Error != "" {
				assert.Error(t, schemaErr, "the 0.4.0 schema accepts an id the reference refuses")
				if c.Expect.Resolved == "" && err == nil {
					var explicit struct {
						BundleID *string `json:"bundle_id"`
					}
					require.NoError(t, json.Unmarshal(c.Config, &explicit))
					require.NotNil(t, explicit.BundleID)
					assert.Empty(t, *explicit.BundleID, "only an empty id may get past ResolveBundleID: it reads as absent")
				}
				return
			}
			require.NoError(t, schemaErr)
			require.NoError(t, err)
			assert.Equal(t, c.Expect.Resolved, got)
			assert.NoError(t, protocol.ValidateBundleID(got), "a resolved id is valid")
		})
		if len(c.Expect.Derived) == len("bundle_")+16 && c.Expect.Derived[:7] == "bundle_" {
			fallbacks++
		}
	}
	assert.GreaterOrEqual(t, fallbacks, 8, "the fallback digest is exercised")
}

func TestExposedToolName(t *testing.T) {
	assert.Equal(t, "fs__read_file", protocol.ExposedToolName("fs", "read_file", ""))
	assert.Equal(t, "fs__read", protocol.ExposedToolName("fs", "read_file", "read"))
	for _, bad := range []string{"", "a__b", "my.api", "服务", "a b"} {
		var perr *protocol.Error
		require.ErrorAs(t, protocol.ValidateBundleID(bad), &perr, bad)
		assert.Equal(t, protocol.CodeBadRequest, perr.Code)
	}
	for _, ok := range []string{"a", "_leading-ok", "trailing-ok_", "bundle_0123456789abcdef", "Tool-Box_2"} {
		assert.NoError(t, protocol.ValidateBundleID(ok), ok)
	}
}
