package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCapabilitiesAgentCLI runs the built smcp-agent against the Go Server
// and the Go Computer of the caps tests (a skill home, a landing root, a
// tool returning a 200 KiB image): a server's resources across its pages,
// the skills and a skill's files (the binary one a blob handle the CLI
// streams), a tool call whose image the Computer spooled saved with blob
// get, and a file uploaded with blob put landing under the landing root.
func TestCapabilitiesAgentCLI(t *testing.T) {
	d := startServer(t)
	landing, _, logo := capsComputer(t, d)
	cli := buildAgentCLI(t)
	ctx := testContext(t)
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, cli, append([]string{"--server", d.URL, "--office", "caps", "--name", "cli", "--api-key", d.APIKey}, args...)...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		require.NoError(t, cmd.Run(), "smcp-agent %s: %s", strings.Join(args, " "), errOut.String())
		assert.Empty(t, errOut.String(), "no progress bar: stderr is not a terminal")
		return out.String()
	}
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

	out := run("resources", "go-pc", "caps")
	for i := 1; i <= 5; i++ {
		assert.Contains(t, out, fmt.Sprintf("note://caps/%d", i), "every page (two a page)")
	}
	var res []map[string]any
	require.NoError(t, json.Unmarshal([]byte(run("resources", "go-pc", "caps", "--json")), &res))
	require.Len(t, res, 5)
	assert.Equal(t, "text/plain", res[0]["mime_type"], "the snake_case shape")

	out = run("skills", "go-pc")
	assert.Contains(t, out, "review")
	assert.Contains(t, out, "Reviews code")
	assert.Equal(t, "# Review\nRead the diff.\n", run("skill", "go-pc", "review"))
	logoFile := filepath.Join(dir, "logo.png")
	run("skill", "go-pc", "review", "assets/logo.png", "-o", logoFile)
	b, err := os.ReadFile(logoFile)
	require.NoError(t, err)
	assert.Equal(t, logo, b, "the 300 KiB file came as a blob handle")

	// The image was spooled (its handle stays in the drained item's
	// metadata); blob get saves it.
	want := capsImageBytes(200 << 10)
	var call struct {
		Content []struct {
			Type string         `json:"type"`
			Meta map[string]any `json:"_meta"`
		} `json:"content"`
	}
	require.NoError(t, json.Unmarshal([]byte(run("call", "go-pc", "caps__image", fmt.Sprintf("size:=%d", len(want)), "--json")), &call))
	require.Len(t, call.Content, 2)
	handle, _ := call.Content[1].Meta["a2c_blob_handle"].(string)
	require.NotEmpty(t, handle, "spooled: %v", call.Content[1].Meta)
	assert.Contains(t, run("call", "go-pc", "caps__image", fmt.Sprintf("size:=%d", len(want))), "[image image/png blob ")
	img := filepath.Join(dir, "image.png")
	out = run("blob", "get", "go-pc", handle, "-o", img)
	b, err = os.ReadFile(img)
	require.NoError(t, err)
	assert.Equal(t, sum(want), sum(b))
	assert.Equal(t, fmt.Sprintf("%s: %d bytes, image/png, sha256 %s\n", img, len(want), sum(want)), out)

	upload := capsImageBytes(600 << 10) // three chunks
	src := filepath.Join(dir, "report.bin")
	require.NoError(t, os.WriteFile(src, upload, 0o644))
	landed := strings.TrimSpace(run("blob", "put", "go-pc", src, "--as", "q3.bin"))
	rel, err := filepath.Rel(landing, landed)
	require.NoError(t, err)
	require.False(t, strings.HasPrefix(rel, ".."), "%s outside %s", landed, landing)
	b, err = os.ReadFile(landed)
	require.NoError(t, err)
	assert.Equal(t, upload, b)

	// A refusal is the Computer's code, exit status 1.
	cmd := exec.CommandContext(ctx, cli, "--server", d.URL, "--office", "caps", "--name", "cli", "--api-key", d.APIKey,
		"skill", "go-pc", "review", "../../etc/passwd")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	err = cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 1, exit.ExitCode())
	assert.Contains(t, errOut.String(), "error 4017:")
}
