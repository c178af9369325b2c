package e2e

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReferenceAgentsUnaffectedByProgress: an Agent of a reference SDK
// (Python 0.4.2, Rust 0.4.1) never asks for progress, so a call it makes to a
// Go Computer whose tool reports progress — even progress nobody asked for —
// is answered as before, and no notify:tool_progress reaches it: its SDK sees
// no event it does not know (spec/protocol.md, Tool-call progress).
func TestReferenceAgentsUnaffectedByProgress(t *testing.T) {
	for _, sdk := range []refSDK{refPy04, refRust04} {
		t.Run(sdk.String(), func(t *testing.T) {
			d := startServer(t)
			tools := toolServerExtras(t, "tools")
			tools["tool_meta"] = map[string]any{"progress": map[string]any{"auto_apply": true}}
			startComputer(t, d, "o1", "desk", []mcpServer{tools})
			ag := startRefAgent(t, sdk, d.URL, d.APIKey, "o1", "ref-agent")
			ag.ok(t, map[string]any{"op": "join"})

			res := ag.ok(t, map[string]any{"op": "tool_call", "computer": "desk", "tool": "progress",
				"params": map[string]any{"steps": 3}}).(map[string]any)
			require.Equal(t, "sent 0", firstText(res), "the reference Agent asked for no progress: no progressToken: %v", res)
			res = ag.ok(t, map[string]any{"op": "tool_call", "computer": "desk", "tool": "progress",
				"params": map[string]any{"steps": 3, "stray": true}}).(map[string]any)
			require.Equal(t, "sent 3", firstText(res), "%v", res)
			require.NotEqual(t, true, res["isError"], "%v", res)

			// Every line the Agent printed so far has been read: a
			// notification it got would be among them.
			assertNoProgressSeen(t, ag)
		})
	}
}

// TestReferenceComputerWithoutFinder: a reference 0.4 Computer declares no
// extension, so smcp-agent room shows it without the Finder, and the Finder
// commands and completion through it fail at once with 4106 saying why,
// while a Go Computer of the same office offers them (spec/generations.md,
// Extensions a Computer offers).
func TestReferenceComputerWithoutFinder(t *testing.T) {
	d := startServer(t)
	root := copyDocs(t)
	startComputer(t, d, "o1", "desk", []mcpServer{docServer(t, "docs", root, docsHost)})
	startRefComputer(t, refPy04, d.URL, d.APIKey, "o1", "py-desk")
	ctx := testContext(t)
	cli := buildAgentCLI(t)
	run := func(args ...string) (string, string, error) {
		cmd := exec.CommandContext(ctx, cli, append([]string{"--server", d.URL, "--office", "o1", "--name", "cli", "--api-key", d.APIKey}, args...)...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), err
	}

	out, errOut, err := run("room")
	require.NoError(t, err, errOut)
	var rows []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		rows = append(rows, strings.Join(strings.Fields(l), " "))
	}
	assert.Contains(t, rows, "py-desk computer 0.4.0 no "+sidOf(rows, "py-desk"), "%s", out)
	assert.Contains(t, rows, "desk computer 0.4.0 yes "+sidOf(rows, "desk"), "%s", out)

	_, errOut, err = run("finder", "py-desk")
	require.Error(t, err)
	assert.Contains(t, errOut, `error 4106: computer "py-desk" does not offer the Finder`)
	_, errOut, err = run("complete", "--computer", "py-desk", "dpe://"+docsHost+"/q")
	require.Error(t, err)
	assert.Contains(t, errOut, `error 4106: computer "py-desk" does not offer the Finder`)

	// Without --computer, the Finder commands pick the Computer that has it.
	out, errOut, err = run("complete", "dpe://"+docsHost+"/q")
	require.NoError(t, err, errOut)
	assert.Equal(t, "dpe://"+docsHost+"/quarterly-report.md\n", out)
	out, errOut, err = run("open", "dpe://"+docsHost+"/quarterly-report.md")
	require.NoError(t, err, errOut)
	assert.NotEmpty(t, out)
}

// sidOf is the last column of the room row of name.
func sidOf(rows []string, name string) string {
	for _, r := range rows {
		if f := strings.Fields(r); len(f) > 0 && f[0] == name {
			return f[len(f)-1]
		}
	}
	return ""
}

// assertNoProgressSeen checks that a reference Agent received no progress
// notification and logged none as an unknown event: after a request
// answered, every line it printed so far has been read, so one it got
// would be among them.
func assertNoProgressSeen(t *testing.T, ag *refAgent) {
	t.Helper()
	ag.ok(t, map[string]any{"op": "list_room"})
	seen := append([]map[string]any{}, ag.seen...)
	for drained := false; !drained; {
		select {
		case m := <-ag.notes:
			seen = append(seen, m)
		default:
			drained = true
		}
	}
	for _, m := range seen {
		assert.NotContains(t, fmt.Sprint(m), "tool_progress", "%v", m)
	}
	assert.NotContains(t, ag.stderr.String(), "tool_progress", "the SDK logged no unknown event")
}
