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
	os.Exit(code)
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
	}
	for _, tt := range tests {
		code, _, errs := runCmd(tt.args...)
		assert.Equal(t, tt.code, code, "%v: %s", tt.args, errs)
		assert.Contains(t, errs, tt.msg, "%v", tt.args)
	}
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// The binary joins its office, answers through the Server, and on SIGINT
// leaves and stops its MCP child (no orphan).
func TestRunShutsDownOnSignal(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "smcp-computer")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))
	srv := siotest.Start(t, "127.0.0.1:0", "k3y")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ops := ln.Addr().String()
	require.NoError(t, ln.Close())
	cmd := exec.Command(bin, "run", "--server", srv.URL(), "--office", "o1", "--name", "pc", "--config", writeConfig(t), "--input", "DOCS=2", "--metrics-listen", ops)
	cmd.Env = append(os.Environ(), "SMCP_API_KEY=k3y")
	var logs bytes.Buffer
	cmd.Stderr = &logs
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
	vals := srv.Request(protocol.EventToolCall, map[string]any{"agent": "a", "req_id": "1", "computer": "pc", "tool_name": "pid", "params": map[string]any{}, "timeout": 10})
	require.Len(t, vals, 1)
	b, _ := json.Marshal(vals[0])
	var res protocol.CallToolResult
	require.NoError(t, json.Unmarshal(b, &res))
	require.NotEmpty(t, res.Content, string(b))
	child, err := strconv.Atoi(*res.Content[0].Text)
	require.NoError(t, err)
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
