package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/sio"
	"github.com/a2c-smcp/smcp-go/server"
)

// smcpPython returns the interpreter of the Python reference SDK a2c-smcp
// 0.1.2 (.cache/venv, installed by `go run mage.go setup`).
func smcpPython(t *testing.T) string {
	t.Helper()
	return interopPython(t, "a2c_smcp", "the a2c-smcp Python SDK")
}

// interopPython returns the interpreter of .cache/venv (or
// SMCP_INTEROP_PYTHON) once it imports module (what). Under SMCP_INTEROP=1
// (mage test) a missing one fails the test; otherwise it is skipped.
func interopPython(t *testing.T, module, what string) string {
	t.Helper()
	py := os.Getenv("SMCP_INTEROP_PYTHON")
	if py == "" {
		py, _ = filepath.Abs(filepath.Join("..", ".cache", "venv", "bin", "python"))
	}
	out, err := exec.Command(py, "-c", "import "+module).CombinedOutput()
	if err != nil {
		peerMissing(t, what+" is not importable by "+py+": "+string(out))
	}
	return py
}

// pyEvent is one line the Python Agent reports.
type pyEvent struct {
	Event    string    `json:"event"`
	Computer string    `json:"computer"`
	Tools    *[]string `json:"tools"`
	OK       bool      `json:"ok"`
	Error    string    `json:"error"`
}

// TestPythonAgentMeetsFreshComputer: the Python SDK's Agent fetches a
// Computer's tools as soon as the Computer enters its office, and a
// Computer enters before its MCP servers are up (issue 24: it answered
// {"tools": null}, which the Server's answer validation, on here, turned
// into a 500). It now gets an empty list; when the MCP server comes up,
// notify:update_tool_list follows and the Agent gets the tools.
func TestPythonAgentMeetsFreshComputer(t *testing.T) {
	py := smcpPython(t)
	d := startServer(t, server.WithValidateAnswers(true))
	ctx := testContext(t)

	script, err := filepath.Abs("testdata/py_fresh_agent.py")
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, py, script)
	cmd.Env = append(os.Environ(), "SMCP_URL="+d.URL, "SMCP_API_KEY="+d.APIKey, "SMCP_OFFICE=o1", "SMCP_AGENT=py-agent")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = testWriter{t}
	require.NoError(t, cmd.Start())
	events := make(chan pyEvent, 64)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var e pyEvent
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				t.Logf("python agent: %s", sc.Bytes())
				events <- e
			}
		}
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		for range events { // the script leaves when its stdin closes
		}
		_ = cmd.Wait()
	})
	next := func(want string) pyEvent {
		t.Helper()
		for {
			select {
			case e, ok := <-events:
				require.True(t, ok, "the Python Agent ended before %s", want)
				require.NotEqual(t, "error", e.Event, e.Error)
				require.NotEqual(t, "tools_error", e.Event, "a tools request failed: %s", e.Error)
				if e.Event == want {
					return e
				}
			case <-ctx.Done():
				t.Fatalf("no %s from the Python Agent", want)
			}
		}
	}
	require.True(t, next("joined").OK)

	// A Computer whose MCP server holds its initialize joins at once.
	hold := filepath.Join(t.TempDir(), "up")
	srv := toolServer(t, "tools")
	srv["server_parameters"].(map[string]any)["env"].(map[string]string)[holdEnv] = hold
	raw, err := json.Marshal([]mcpServer{srv})
	require.NoError(t, err)
	cfg, err := config.Parse(raw)
	require.NoError(t, err)
	c := computer.New(cfg, computer.WithLogger(logger(t)), computer.WithDebounce(50*time.Millisecond))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = os.WriteFile(hold, nil, 0o644) // a held child would outlive the stop's grace
		require.NoError(t, c.Close(ctx))
	})
	require.NoError(t, c.Launch(ctx))
	require.NoError(t, c.Connect(ctx, d.URL, "o1", "fresh", sio.WithAPIKey(d.APIKey), sio.WithLogger(logger(t))))

	require.Equal(t, "fresh", next("enter").Computer)
	first := next("tools")
	require.NotNil(t, first.Tools, "an empty list, not null")
	require.Empty(t, *first.Tools)

	// The MCP server comes up: the tools are announced and fetched.
	require.NoError(t, os.WriteFile(hold, nil, 0o644))
	require.Equal(t, "fresh", next("update_tool_list").Computer)
	got := next("tools_received")
	require.NotNil(t, got.Tools)
	// The Computer speaks 0.4 by default; smcp-server names the caller's
	// generation in each request, so the 0.2 Agent gets the bare names.
	require.ElementsMatch(t, []string{"echo", "slow", "fail"}, *got.Tools, "the tools reach the Agent's handler")
}
