//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// The chaos suite (issue 11): faults injected into real processes — a
// built smcp-server, a built smcp-computer and its stdio MCP server (the
// tool server, this binary re-executed) — with the Go Agent in this
// process. Each case asserts the coded error the Agent gets, that service
// comes back within a bound, and that no process is left running (by
// PID). Linux only: it reads /proc to find the Computer's children.

// Bounds of the chaos cases.
const (
	// errorBound: an in-flight request is answered (with an error) this
	// soon after its peer died.
	errorBound = 5 * time.Second
	// recoveryBound: tools answer again this soon after the fault ended.
	recoveryBound = 10 * time.Second
	// rejoinBound: after a Server restart both roles are back and a routed
	// request works this soon after the Server accepts connections (issue
	// 11 item 1).
	rejoinBound = 5 * time.Second
	// goneBound: a killed or stopped process is gone this soon.
	goneBound = 5 * time.Second
)

// chaos holds the binaries built once for the suite.
type chaos struct {
	dir      string
	server   string
	computer string
}

func buildChaos(t *testing.T) *chaos {
	t.Helper()
	c := &chaos{dir: t.TempDir()}
	c.server = filepath.Join(c.dir, "smcp-server")
	c.computer = filepath.Join(c.dir, "smcp-computer")
	for bin, pkg := range map[string]string{
		c.server:   "github.com/a2c-smcp/smcp-go/server/cmd/smcp-server",
		c.computer: "github.com/a2c-smcp/smcp-go/computer/cmd/smcp-computer",
	} {
		out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
		require.NoError(t, err, "build %s: %s", pkg, out)
	}
	return c
}

// proc is a process the suite started; it is killed at the end of the test
// and must then be gone.
type proc struct {
	name   string
	cmd    *exec.Cmd
	logs   *syncBuffer
	exited chan struct{}
}

func startProc(t *testing.T, name, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(bin, args...), logs: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	require.NoError(t, p.cmd.Start())
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		select {
		case <-p.exited:
		case <-time.After(goneBound):
			t.Errorf("%s (pid %d) still running", p.name, p.pid())
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", p.name, p.logs.String())
		}
	})
	return p
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(sig))
}

// waitExit waits until the process has exited and was reaped.
func (p *proc) waitExit(t *testing.T) {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(goneBound):
		t.Fatalf("%s (pid %d) still running %v after it was told to stop", p.name, p.pid(), goneBound)
	}
}

// running reports whether pid runs (exists and is not a zombie).
func running(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return !(i > 0 && i+2 < len(s) && s[i+2] == 'Z')
}

// children lists the running processes whose parent is pid.
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(pid) { // state, ppid

			out = append(out, n)
		}
	}
	return out
}

// waitGone fails unless pid stops running within goneBound.
func waitGone(t *testing.T, what string, pid int) {
	t.Helper()
	deadline := time.Now().Add(goneBound)
	for running(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s (pid %d) still running %v later", what, pid, goneBound)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// mcpChild waits until the Computer runs exactly one MCP server process and
// returns its pid.
func mcpChild(t *testing.T, computer *proc) int {
	t.Helper()
	var kids []int
	require.Eventually(t, func() bool { kids = children(computer.pid()); return len(kids) == 1 }, testTimeout, 10*time.Millisecond,
		"the Computer's MCP server process")
	return kids[0]
}

// freeAddr is a loopback address no one listens on (for a Server that must
// restart on the same port).
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// startServerProc runs smcp-server on addr and returns once it answers
// /healthz.
func (c *chaos) startServerProc(t *testing.T, addr, key string, extra ...string) *proc {
	t.Helper()
	p := startProc(t, "smcp-server", c.server, append([]string{"--listen", addr, "--api-keys", key, "--log-format", "text"}, extra...)...)
	deadline := time.Now().Add(testTimeout)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-p.exited:
			t.Fatalf("smcp-server exited:\n%s", p.logs.String())
		default:
		}
		require.True(t, time.Now().Before(deadline), "smcp-server not ready:\n%s", p.logs.String())
		time.Sleep(10 * time.Millisecond)
	}
}

// startComputerProc runs smcp-computer in office o1 as "desk" with the tool
// server as its one MCP server.
func (c *chaos) startComputerProc(t *testing.T, d *deployment) *proc {
	t.Helper()
	tools := toolServer(t, "tools")
	tools["default_tool_meta"] = map[string]any{"auto_apply": true}
	raw, err := json.Marshal(tools)
	require.NoError(t, err)
	cfg := filepath.Join(t.TempDir(), "computer.json")
	require.NoError(t, os.WriteFile(cfg, raw, 0o600))
	return startProc(t, "smcp-computer", c.computer, "run", "--server", d.URL, "--office", "o1", "--name", "desk",
		"--config", cfg, "--api-key", d.APIKey, "--log-level", "debug")
}

// echoWorks reports whether one echo call through the Server succeeds
// within a second.
func echoWorks(a *agent.Client) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	res, err := a.CallTool(ctx, "desk", "echo", map[string]any{"text": "ping"}, time.Second)
	return err == nil && agent.ToolError(res) == nil
}

// waitEcho waits until echo works, at most bound, and returns how long it
// took.
func waitEcho(t *testing.T, a *agent.Client, bound time.Duration, what string) time.Duration {
	t.Helper()
	start := time.Now()
	for !echoWorks(a) {
		if time.Since(start) > bound {
			t.Fatalf("%s: tools not back within %v", what, bound)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// callOutcome is how a call ended and when.
type callOutcome struct {
	res *protocol.CallToolResult
	err error
	at  time.Time
}

// slowCall starts a 30 s slow call and returns once it runs in the tool
// server (which says so on its stderr, which the Computer logs).
func slowCall(t *testing.T, a *agent.Client, comp *proc) <-chan callOutcome {
	t.Helper()
	const started = "slow: started"
	before := strings.Count(comp.logs.String(), started)
	ch := make(chan callOutcome, 1)
	go func() {
		res, err := a.CallTool(context.Background(), "desk", "slow", map[string]any{"seconds": 30}, 40*time.Second)
		ch <- callOutcome{res, err, time.Now()}
	}()
	require.Eventually(t, func() bool { return strings.Count(comp.logs.String(), started) > before }, testTimeout, time.Millisecond,
		"the slow call reaches the tool server")
	return ch
}

// outcomeErr is the coded error of a failed call: the error itself, or the
// error result's.
func outcomeErr(t *testing.T, o callOutcome) *protocol.Error {
	t.Helper()
	if o.err != nil {
		return protocol.AsError(o.err)
	}
	e := agent.ToolError(o.res)
	require.NotNil(t, e, "the in-flight call succeeded")
	return e
}

func awaitOutcome(t *testing.T, ch <-chan callOutcome, since time.Time, what string) callOutcome {
	t.Helper()
	select {
	case o := <-ch:
		t.Logf("%s: in-flight call answered after %v: err=%v result=%s", what, o.at.Sub(since).Round(time.Millisecond), o.err, resultText(o.res))
		return o
	case <-time.After(errorBound):
		t.Fatalf("%s: in-flight call not answered within %v", what, errorBound)
	}
	return callOutcome{}
}

func resultText(res *protocol.CallToolResult) string {
	if res == nil {
		return "<nil>"
	}
	b, _ := json.Marshal(res.StructuredContent)
	return string(b)
}

// chaosOffice is one fault case's office: a built smcp-server, a built
// smcp-computer with its stdio MCP server (child), and a joined Go Agent
// whose tool calls already work.
type chaosOffice struct {
	addr  string
	d     *deployment
	srv   *proc
	comp  *proc
	a     *agent.Client
	child int
}

func (c *chaos) startOffice(t *testing.T, serverArgs []string, agentOpts ...agent.Option) *chaosOffice {
	o := &chaosOffice{addr: freeAddr(t)}
	o.d = &deployment{URL: "http://" + o.addr, APIKey: randomKey(t)}
	o.srv = c.startServerProc(t, o.addr, o.d.APIKey, serverArgs...)
	o.comp = c.startComputerProc(t, o.d)
	o.a = dialAgent(t, o.d, "o1", "bot", agentOpts...)
	waitEcho(t, o.a, testTimeout, "start")
	o.child = mcpChild(t, o.comp)
	return o
}

// stop ends the Computer, checks its MCP server (pid) went with it, and
// ends the Server srv.
func (o *chaosOffice) stop(t *testing.T, srv *proc, pid int) {
	o.comp.signal(t, syscall.SIGTERM)
	o.comp.waitExit(t)
	waitGone(t, "MCP server after the Computer stopped", pid)
	srv.signal(t, syscall.SIGTERM)
	srv.waitExit(t)
}

func TestChaos(t *testing.T) {
	c := buildChaos(t)

	// kill -9 of the MCP server during a call: the Agent gets the
	// Computer's coded error at once, the tools come back.
	t.Run("mcp server killed mid-call", func(t *testing.T) {
		of := c.startOffice(t, nil)
		a, comp, child := of.a, of.comp, of.child

		call := slowCall(t, a, comp)
		killed := time.Now()
		require.NoError(t, syscall.Kill(child, syscall.SIGKILL))
		o := awaitOutcome(t, call, killed, "mcp kill")
		assert.Equal(t, protocol.CodeToolExecutionFailed, outcomeErr(t, o).Code)
		waitEcho(t, a, recoveryBound, "mcp kill")
		t.Logf("mcp kill: tools back %v after the kill", time.Since(killed).Round(time.Millisecond))
		waitGone(t, "killed MCP server", child)
		next := mcpChild(t, comp)
		assert.NotEqual(t, child, next, "a new MCP server process")
		of.stop(t, of.srv, next)
	})

	// kill -9 of the Computer: the in-flight call is answered with a coded
	// error, the office hears notify:leave_office, and the Computer's MCP
	// server dies with it.
	t.Run("computer killed", func(t *testing.T) {
		left := make(chan time.Time, 4)
		of := c.startOffice(t, nil, agent.OnLeaveOffice(func(n protocol.LeaveOfficeNotification) {
			if n.Computer != nil && *n.Computer == "desk" {
				left <- time.Now()
			}
		}))
		a, srv, comp, child := of.a, of.srv, of.comp, of.child

		call := slowCall(t, a, comp)
		killed := time.Now()
		comp.signal(t, syscall.SIGKILL)
		o := awaitOutcome(t, call, killed, "computer kill")
		e := outcomeErr(t, o)
		assert.Equal(t, protocol.CodeNotFound, e.Code)
		assert.Equal(t, "computer_disconnected", e.Details["reason"])
		select {
		case at := <-left:
			t.Logf("computer kill: notify:leave_office after %v", at.Sub(killed).Round(time.Millisecond))
		case <-time.After(errorBound):
			t.Fatalf("no notify:leave_office within %v", errorBound)
		}
		comp.waitExit(t)
		waitGone(t, "MCP server of the killed Computer", child)
		srv.signal(t, syscall.SIGTERM)
		srv.waitExit(t)
	})

	// kill -9 of the Server, restarted on the same port a second later:
	// both roles rejoin and a routed request works within rejoinBound of
	// the Server accepting connections again.
	t.Run("server killed and restarted", func(t *testing.T) {
		of := c.startOffice(t, nil)
		a, srv, comp, child := of.a, of.srv, of.comp, of.child

		call := slowCall(t, a, comp)
		killed := time.Now()
		srv.signal(t, syscall.SIGKILL)
		o := awaitOutcome(t, call, killed, "server kill")
		assert.ErrorIs(t, o.err, agent.ErrConnectionLost)
		assert.Equal(t, protocol.CodeUnavailable, outcomeErr(t, o).Code)
		srv.waitExit(t)
		time.Sleep(time.Second)
		srv2 := c.startServerProc(t, of.addr, of.d.APIKey)
		back := waitEcho(t, a, rejoinBound, "server restart")
		t.Logf("server restart: routed request works %v after the Server accepts connections", back.Round(time.Millisecond))
		assert.True(t, running(child), "the Computer kept its MCP server")
		of.stop(t, srv2, child)
	})

	// SIGSTOP of the Server past its ping window (1 s + 1.5 s): the peers
	// drop their connections, the in-flight call fails with a code, and
	// after SIGCONT both roles are back.
	t.Run("server stopped past the ping window", func(t *testing.T) {
		of := c.startOffice(t, []string{"--ping-interval", "1s", "--ping-timeout", "1500ms"})
		a, srv, comp, child := of.a, of.srv, of.comp, of.child

		call := slowCall(t, a, comp)
		stopped := time.Now()
		srv.signal(t, syscall.SIGSTOP)
		o := awaitOutcome(t, call, stopped, "server stop")
		assert.ErrorIs(t, o.err, agent.ErrConnectionLost)
		assert.Equal(t, protocol.CodeUnavailable, outcomeErr(t, o).Code)
		time.Sleep(time.Until(stopped.Add(4 * time.Second)))
		srv.signal(t, syscall.SIGCONT)
		back := waitEcho(t, a, rejoinBound, "server stop")
		t.Logf("server stop: routed request works %v after SIGCONT", back.Round(time.Millisecond))
		assert.True(t, running(child), "the Computer kept its MCP server")
		of.stop(t, srv, child)
	})
}
