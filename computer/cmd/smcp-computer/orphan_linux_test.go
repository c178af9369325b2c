package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/siotest"
	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/stretchr/testify/require"
)

// gone reports whether pid no longer runs: it does not exist or it is a
// zombie waiting for its new parent to reap it.
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// waitGone fails the test unless pid is gone within d.
func waitGone(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	start := time.Now()
	for !gone(pid) {
		if time.Since(start) > d {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d still running %v later", pid, d)
		}
		time.Sleep(time.Millisecond)
	}
}

// kill -9 of the Computer leaves no MCP server behind, even one that
// ignores the end of its stdin (and SIGTERM): the kernel kills it
// (Pdeathsig, set on the thread that forked it).
func TestKill9LeavesNoOrphan(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "computer.json")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`{"name":"stubborn","type":"stdio","default_tool_meta":{"auto_apply":true},
	  "server_parameters":{"command":%q,"args":["-ignore-stdin-eof"]}}`, testmcp.Binary(t))), 0o600))
	srv := siotest.Start(t, "127.0.0.1:0", "")
	cmd, exited, logs := runBinary(t, srv, cfg)
	child := childPID(t, srv)
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	require.False(t, gone(child))

	killed := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("kill -9 did not end the Computer\n%s", logs.String())
	}
	waitGone(t, child, 5*time.Second)
	t.Logf("MCP child %d gone %v after the kill -9 of the Computer", child, time.Since(killed))
}
