package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/siotest"
	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testmcp.Cleanup()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// binary builds smcp-computer once per test process.
func binary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "smcp-computer-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "smcp-computer")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	require.NoError(t, binErr)
	return binPath
}

// runBinary starts "smcp-computer run" against srv with the config at cfg
// and waits until it joined; its stderr is in the returned buffer.
func runBinary(t *testing.T, srv *siotest.Server, cfg string, extra ...string) (*exec.Cmd, <-chan error, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"run", "--server", srv.URL(), "--office", "o1", "--name", "pc", "--config", cfg}, extra...)...)
	logs := &syncBuffer{}
	cmd.Stderr = logs
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	select {
	case <-srv.Joined:
	case err := <-exited:
		t.Fatalf("exited early: %v\n%s", err, logs.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("did not join\n%s", logs.String())
	}
	return cmd, exited, logs
}

// syncBuffer is a bytes.Buffer safe for a process's writes and a test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// childPID calls the pid tool through the Server until the MCP server is up
// (the Computer joins before its servers are) and returns its answer.
func childPID(t *testing.T, srv *siotest.Server) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		vals := srv.Request(protocol.EventToolCall, map[string]any{"agent": "a", "req_id": "1", "computer": "pc", "tool_name": "pid", "params": map[string]any{}, "timeout": 10})
		require.Len(t, vals, 1)
		b, _ := json.Marshal(vals[0])
		var res protocol.CallToolResult
		require.NoError(t, json.Unmarshal(b, &res))
		if res.IsError != nil && *res.IsError || len(res.Content) == 0 || res.Content[0].Text == nil {
			return false
		}
		var err error
		pid, err = strconv.Atoi(*res.Content[0].Text)
		return err == nil
	}, 30*time.Second, 50*time.Millisecond)
	return pid
}

// writeConfig writes a Python-format config: one stdio testmcp server whose
// docs count comes from input DOCS.
func writeConfig(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "computer.json")
	cfg := fmt.Sprintf(`{"name":"docs","type":"stdio","default_tool_meta":{"auto_apply":true},
	  "server_parameters":{"command":%q,"args":["-host","h1","-docs","${input:DOCS}"],"env":null,"cwd":null,"encoding":"utf-8","encoding_error_handler":"strict"}}`,
		testmcp.Binary(t))
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	return path
}

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestOneShotCommands(t *testing.T) {
	cfg := writeConfig(t)
	code, out, errs := runCmd("tools", "--config", cfg, "--input", "DOCS=3", "--log-level", "warn")
	require.Equal(t, 0, code, errs)
	var tools []protocol.SMCPTool
	require.NoError(t, json.Unmarshal([]byte(out), &tools))
	assert.Len(t, tools, len(testmcp.AllTools))

	code, out, errs = runCmd("finder", "--config", "@"+cfg, "--input", "DOCS=3", "--keywords", "doc-2", "--log-format", "json")
	require.Equal(t, 0, code, errs)
	var ret protocol.GetFinderRet
	require.NoError(t, json.Unmarshal([]byte(out), &ret))
	assert.Equal(t, 1, ret.TotalCount)
	assert.Equal(t, "docs", ret.Documents[0].Server)
	require.NoError(t, protocol.Validate(protocol.EventGetFinder, protocol.Ack, []byte(out)))

	t.Setenv("SMCP_INPUT_DOCS", "1")
	t.Setenv("SMCP_CONFIG", cfg)
	code, out, errs = runCmd("desktop", "--size", "1")
	require.Equal(t, 0, code, errs)
	var d []string
	require.NoError(t, json.Unmarshal([]byte(out), &d))
	require.Len(t, d, 1)
	assert.Contains(t, d[0], "window://h1/main")
}

func TestCommandErrors(t *testing.T) {
	cfg := writeConfig(t)
	t.Setenv("SMCP_CONFIG", "")
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, "usage"},
		{[]string{"fly"}, 2, "unknown command"},
		{[]string{"tools"}, 2, "--config FILE is required"},
		{[]string{"tools", "--config", "/nonexistent.json"}, 2, "read config"},
		{[]string{"run", "--config", cfg, "--input", "DOCS=1"}, 2, "missing"},
		{[]string{"tools", "--config", cfg, "--log-level", "loud"}, 2, "log-level"},
		{[]string{"tools", "--config", cfg, "--input", "novalue"}, 2, "ID=VALUE"},
		{[]string{"tools", "--config", cfg}, 1, `input "DOCS"`},
		{[]string{"run", "--config", cfg, "--input", "DOCS=1", "--server", "http://127.0.0.1:1", "--office", "o", "--name", "n",
			"--max-blob-bytes", "0"}, 2, "--max-blob-bytes must be positive"},
		{[]string{"run", "--config", cfg, "--input", "DOCS=1", "--server", "http://127.0.0.1:1", "--office", "o", "--name", "n",
			"--max-mcp-message-bytes", "-1"}, 2, "--max-mcp-message-bytes must be positive"},
		{[]string{"run", "--config", cfg, "--input", "DOCS=1", "--server", "http://127.0.0.1:1", "--office", "o", "--name", "n",
			"--skill-settings", "/nonexistent/settings.json"}, 2, "--skill-settings"},
	}
	for _, tt := range tests {
		code, _, errs := runCmd(tt.args...)
		assert.Equal(t, tt.code, code, "%v: %s", tt.args, errs)
		assert.Contains(t, errs, tt.msg, "%v", tt.args)
	}
	t.Setenv("SMCP_SPOOL_MAX_BYTES", "1GiB")
	code, _, errs := runCmd("run", "--config", cfg)
	assert.Equal(t, 2, code, errs)
	assert.Contains(t, errs, `SMCP_SPOOL_MAX_BYTES: not a positive number: "1GiB"`)
}

// TestOneShotWithAServerDown: a server whose command does not exist is
// named on stderr, the others' tools are still printed, and the exit
// status is 1.
func TestOneShotWithAServerDown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "computer.json")
	cfg := fmt.Sprintf(`[{"name":"good","type":"stdio","server_parameters":{"command":%q,"args":["-no-resources","-tools","echo"]}},
	  {"name":"typo","type":"stdio","server_parameters":{"command":"smcp-no-such-command-i28"}}]`, testmcp.Binary(t))
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	code, out, errs := runCmd("tools", "--config", path, "--log-level", "error")
	assert.Equal(t, 1, code, errs)
	assert.Contains(t, errs, "MCP servers not up: typo")
	assert.Contains(t, errs, "executable file not found")
	var tools []protocol.SMCPTool
	require.NoError(t, json.Unmarshal([]byte(out), &tools), out)
	require.Len(t, tools, 1)
	assert.Equal(t, "echo", tools[0].Name)
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// The binary joins its office, answers through the Server, and on SIGINT
// leaves and stops its MCP child (no orphan).
func TestRunShutsDownOnSignal(t *testing.T) {
	srv := siotest.Start(t, "127.0.0.1:0", "k3y")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ops := ln.Addr().String()
	require.NoError(t, ln.Close())
	t.Setenv("SMCP_API_KEY", "k3y")
	cmd, exited, logs := runBinary(t, srv, writeConfig(t), "--input", "DOCS=2", "--metrics-listen", ops)
	child := childPID(t, srv)
	require.True(t, processAlive(child))

	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + ops + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	code, body := get("/healthz")
	require.Equal(t, http.StatusOK, code, body)
	require.Eventually(t, func() bool { code, _ := get("/readyz"); return code == http.StatusOK }, 30*time.Second, 50*time.Millisecond, "joined and its MCP server up")
	_, body = get("/metrics")
	for _, want := range []string{
		`smcp_computer_mcp_servers{state="up"} 1`,
		`smcp_computer_tool_calls_total{outcome="ok"} 1`,
		`smcp_computer_finder_documents 2`,
		`smcp_computer_joined 1`,
		`smcp_computer_mcp_server_restarts_total{server="docs"} 0`,
	} {
		assert.Contains(t, body, want)
	}

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	select {
	case err := <-exited:
		require.NoError(t, err, "clean exit on the first SIGINT\n%s", logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("did not exit on SIGINT\n%s", logs.String())
	}
	assert.False(t, processAlive(child), "MCP child %d left behind", child)
	assert.Contains(t, logs.String(), "shutting down")
}

// SIGQUIT dumps the goroutines and exits with status 2 (Go's default),
// although the Socket.IO client library traps it in an init function.
func TestSIGQUITDumpsGoroutines(t *testing.T) {
	srv := siotest.Start(t, "127.0.0.1:0", "")
	cmd, exited, logs := runBinary(t, srv, writeConfig(t), "--input", "DOCS=1")
	child := childPID(t, srv) // the Computer runs an MCP server
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	require.NoError(t, cmd.Process.Signal(syscall.SIGQUIT))
	select {
	case err := <-exited:
		var xe *exec.ExitError
		require.ErrorAs(t, err, &xe, logs.String())
		assert.Equal(t, 2, xe.ExitCode())
	case <-time.After(30 * time.Second):
		t.Fatalf("SIGQUIT ignored\n%s", logs.String())
	}
	assert.Contains(t, logs.String(), "SIGQUIT")
	assert.Contains(t, logs.String(), "goroutine ")
}

// TestHelp: -h prints a command's flags on stdout, once, and never the API
// key the environment holds.
func TestHelp(t *testing.T) {
	t.Setenv("SMCP_API_KEY", "s3cret-from-env")
	for _, args := range [][]string{{"-h"}, {"run", "-h"}, {"tools", "--help"}, {"finder", "-h"}} {
		code, out, errs := runCmd(args...)
		assert.Equal(t, 0, code, "%v", args)
		assert.Empty(t, errs, "%v", args)
		assert.NotEmpty(t, out, "%v", args)
		assert.NotContains(t, out, "s3cret", "%v", args)
	}
	_, out, _ := runCmd("run", "-h")
	assert.Contains(t, out, "-api-key")
	assert.Contains(t, out, "-verbose")
	_, out, _ = runCmd("finder", "-h")
	assert.Contains(t, out, "-file-type")
	code, out, errs := runCmd("tools", "--nope")
	assert.Equal(t, 2, code)
	assert.Empty(t, out)
	assert.Contains(t, errs, "flag provided but not defined: -nope")
	assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %s", errs)
}

// TestProtocolVersionsFlag: --protocol-versions lists every generation,
// newest first, by default, and a version smcp-go speaks no generation of
// is a usage error before anything starts.
func TestProtocolVersionsFlag(t *testing.T) {
	_, out, _ := runCmd("run", "-h")
	assert.Contains(t, out, "-protocol-versions")
	assert.Contains(t, out, `(default "0.4,0.3,0.2")`)
	code, _, errs := runCmd("run", "--server", "http://127.0.0.1:1", "--office", "o", "--name", "n", "--protocol-versions", "0.5")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--protocol-versions")
	assert.Contains(t, errs, `"0.5"`)
}
