package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/stretchr/testify/require"
)

// Interop tests run the official JavaScript socket.io-client and the Python
// reference SDK a2c-smcp 0.1.2 against the Server, as installed by
// `go run mage.go setup` (pinned in testdata/interop). `go run mage.go test`
// sets SMCP_INTEROP=1 and the peers' locations; then a missing peer fails
// the test. Without SMCP_INTEROP the tests look in the default locations and
// skip when the peers are not installed.

func interopRequired() bool { return os.Getenv("SMCP_INTEROP") == "1" }

func missingPeer(t *testing.T, format string, args ...any) {
	t.Helper()
	if interopRequired() {
		t.Fatalf("SMCP_INTEROP=1 but "+format+" (run `go run mage.go setup`)", args...)
	}
	t.Skipf("interop peer not installed: "+format+" (run `go run mage.go setup`)", args...)
}

// nodeModules returns the node_modules holding socket.io-client.
func nodeModules(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SMCP_INTEROP_NODE_MODULES")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("testdata", "interop", "node_modules"))
	}
	if _, err := exec.LookPath("node"); err != nil {
		missingPeer(t, "node is not on PATH")
	}
	if _, err := os.Stat(filepath.Join(dir, "socket.io-client", "package.json")); err != nil {
		missingPeer(t, "socket.io-client is not installed in %s", dir)
	}
	return dir
}

// python returns the interpreter of the virtualenv holding a2c-smcp.
func python(t *testing.T) string {
	t.Helper()
	py := os.Getenv("SMCP_INTEROP_PYTHON")
	if py == "" {
		py, _ = filepath.Abs(filepath.Join("..", ".cache", "venv", "bin", "python"))
	}
	if _, err := os.Stat(py); err != nil {
		missingPeer(t, "no Python virtualenv at %s", py)
	}
	if out, err := exec.Command(py, "-c", "import a2c_smcp").CombinedOutput(); err != nil {
		missingPeer(t, "a2c-smcp is not importable by %s: %s", py, out)
	}
	return py
}

// peerProcess is a running interop peer whose stdout lines are JSON objects.
type peerProcess struct {
	cmd   *exec.Cmd
	lines chan map[string]any
	raw   chan string
	stdin io.WriteCloser
	done  chan struct{} // closed when the process has exited
	err   error         // its exit status, once done is closed
}

// wait returns the peer's exit status.
func (p *peerProcess) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(90 * time.Second):
		t.Fatal("the peer did not exit")
		return nil
	}
}

func startPeer(t *testing.T, env []string, name string, args ...string) *peerProcess {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = filepath.Join("testdata", "interop")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stderr := &lockedWriter{w: &strings.Builder{}}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	p := &peerProcess{cmd: cmd, lines: make(chan map[string]any, 64), raw: make(chan string, 64), stdin: stdin, done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				p.lines <- m
			} else {
				select {
				case p.raw <- sc.Text():
				default:
				}
			}
		}
		close(p.lines)
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		cancel()
		<-p.done
		if t.Failed() {
			t.Logf("%s stderr:\n%s", name, stderr.String())
		}
	})
	return p
}

// next returns the next JSON line; a line with "step":"error" or "error"
// fails the test.
func (p *peerProcess) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m, ok := <-p.lines:
		require.True(t, ok, "the peer exited early")
		if m["step"] == "error" || m["error"] != nil {
			t.Fatalf("peer error: %v", m)
		}
		return m
	case <-time.After(90 * time.Second):
		t.Fatal("no output from the peer")
		return nil
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.(*strings.Builder).String()
}

// TestInteropJavaScriptAgent: the official socket.io-client 4.8 joins as an
// Agent reading both ack values, performs a routed client:get_finder
// answered by a Go Computer, sees a refusal, and receives notify:* events;
// over websocket and over HTTP long-polling.
func TestInteropJavaScriptAgent(t *testing.T) {
	nm := nodeModules(t)
	for _, transport := range []string{"websocket", "polling"} {
		t.Run(transport, func(t *testing.T) {
			ts := startServer(t, server.WithValidateAnswers(true))
			c1 := dial(t, ts.url).mustJoin(computerRole, "c1", "o1")
			requests := make(chan map[string]any, 1)
			c1.answer(protocol.EventGetFinder, func(req map[string]any) []any {
				requests <- req
				return []any{finderAnswer(req["req_id"].(string), 2)}
			})
			node := startPeer(t, []string{
				"NODE_PATH=" + nm,
				"SMCP_URL=" + ts.url, "SMCP_API_KEY=" + testKey, "SMCP_OFFICE=o1", "SMCP_AGENT=js", "SMCP_COMPUTER=c1",
				"SMCP_TRANSPORT=" + transport,
				"SMCP_EXPECT=notify:update_finder,notify:enter_office,notify:leave_office",
			}, "node", "js_agent.js")

			require.Equal(t, map[string]any{"step": "joined", "ok": true, "reason": nil}, node.next(t))
			require.Equal(t, map[string]any{"agent": "js", "req_id": "js-1", "computer": "c1", "keywords": []any{"bench"}, "limit": 5.0}, <-requests)
			finder := node.next(t)
			require.Equal(t, "finder", finder["step"])
			require.Equal(t, finderAnswer("js-1", 2), finder["ret"])
			refused := node.next(t)
			require.Equal(t, "refused", refused["step"])
			require.Equal(t, false, refused["ok"])
			require.Regexp(t, `^403 Forbidden: agent "js" is already in office "o1"`, refused["reason"])
			require.Equal(t, "ready", node.next(t)["step"])

			// The update is broadcast before c1 leaves: an event still in the
			// library's queue when its sender's transport closes is processed
			// after the session is gone (or not at all), by design of the
			// library's per-socket queue.
			c1.emit(protocol.EventUpdateFinder, map[string]any{"computer": "c1"})
			got := map[string]any{}
			m := node.next(t)
			require.Equal(t, "notify", m["step"], "%v", m)
			got[m["event"].(string)] = m["data"]
			dial(t, ts.url).mustJoin(computerRole, "c2", "o1")
			c1.sock.Disconnect()
			for len(got) < 3 {
				m := node.next(t)
				require.Equal(t, "notify", m["step"], "%v", m)
				got[m["event"].(string)] = m["data"]
			}
			require.Equal(t, map[string]any{
				protocol.NotifyUpdateFinder: map[string]any{"computer": "c1"},
				protocol.NotifyEnterOffice:  map[string]any{"office_id": "o1", "computer": "c2"},
				protocol.NotifyLeaveOffice:  map[string]any{"office_id": "o1", "computer": "c1"},
			}, got)
			require.Equal(t, "done", node.next(t)["step"])
			require.NoError(t, node.wait(t))
		})
	}
}

// TestInteropPythonAgent: the reference SDK's Agent client joins an office
// on this Server, lists it, gets the tools of a Go Computer and calls one.
func TestInteropPythonAgent(t *testing.T) {
	py := python(t)
	ts := startServer(t, server.WithValidateAnswers(true))
	c := dial(t, ts.url).mustJoin(computerRole, "goc", "o1")
	c.answer(protocol.EventGetTools, toolsAnswer)
	calls := make(chan map[string]any, 1)
	c.answer(protocol.EventToolCall, func(req map[string]any) []any {
		calls <- req
		text := req["params"].(map[string]any)["text"]
		return []any{map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": false}}
	})
	agent := startPeer(t, []string{
		"SMCP_URL=" + ts.url, "SMCP_API_KEY=" + testKey, "SMCP_OFFICE=o1", "SMCP_AGENT=py-agent", "SMCP_COMPUTER=goc",
	}, py, "py_agent.py")
	out := agent.next(t)
	require.Equal(t, []any{true, nil}, out["join"])
	require.Equal(t, []any{"goc"}, out["computers"])
	require.Equal(t, []any{"echo"}, out["tools"])
	call := out["call"].(map[string]any)
	require.Equal(t, false, call["isError"])
	require.Equal(t, "hello from python", call["content"].([]any)[0].(map[string]any)["text"])
	req := <-calls
	require.Equal(t, "py-agent", req["agent"])
	require.Equal(t, "echo", req["tool_name"])
	require.Equal(t, 10.0, req["timeout"])
	require.NoError(t, agent.wait(t))
}

// TestInteropPythonComputer: a Go Agent calls a tool on the reference SDK's
// Computer client, which runs a real stdio MCP server (FastMCP). The Server
// validates the Python Computer's answers against our schemas: they must
// hold for the reference SDK's output (nulls for absent fields included).
func TestInteropPythonComputer(t *testing.T) {
	py := python(t)
	ts := startServer(t, server.WithValidateAnswers(true))
	comp := startPeer(t, []string{
		"SMCP_URL=" + ts.url, "SMCP_API_KEY=" + testKey, "SMCP_OFFICE=o1", "SMCP_COMPUTER=pyc",
	}, py, "py_computer.py")
	require.Equal(t, map[string]any{"ready": true}, comp.next(t))

	a := dial(t, ts.url).mustJoin(agentRole, "go-agent", "o1")
	vals := a.call(protocol.EventGetTools, getTools("go-agent", "pyc", "t1"))
	require.Len(t, vals, 1)
	ret, ok := vals[0].(map[string]any)
	require.True(t, ok, "%v", vals)
	require.Equal(t, "t1", ret["req_id"], "%v", ret)
	var names []any
	for _, tool := range ret["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"])
	}
	require.Equal(t, []any{"echo"}, names)

	vals = a.call(protocol.EventToolCall, map[string]any{
		"agent": "go-agent", "req_id": "c1", "computer": "pyc", "tool_name": "echo",
		"params": map[string]any{"text": "hello from go"}, "timeout": 20.0,
	})
	result := vals[0].(map[string]any)
	t.Logf("python computer answered %s", mustJSON(t, result))
	require.NotEqual(t, true, result["isError"], "%v", result)
	require.Equal(t, "hello from go", result["content"].([]any)[0].(map[string]any)["text"])

	// The Python Computer leaving is broadcast to the office.
	require.NoError(t, comp.stdin.Close())
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "pyc"}, a.next(protocol.NotifyLeaveOffice))
	require.NoError(t, comp.wait(t))
}
