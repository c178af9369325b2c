package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/sio"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// The Rust peers are built from testdata/rustpeer (the Rust SDK a2c-smcp's
// crates smcp-agent, smcp-computer, smcp-server-core and smcp-server-hyper,
// pinned in its Cargo.lock) by `go run mage.go setup`, which tells the tests
// where through SMCP_INTEROP_RUST_BIN. `go run mage.go test` also sets
// SMCP_INTEROP=1: a missing peer then fails the test instead of skipping it.

// rustBinaries are the programs setup builds, by name.
var rustBinaries = []string{"rustpeer-agent", "rustpeer-computer", "rustpeer-server", "smcp-computer", "smcp-server-hyper"}

// rustBin returns the directory holding the built Rust peers.
func rustBin(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("SMCP_INTEROP_RUST_BIN")
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("SMCP_INTEROP") == "1" {
			t.Fatalf("SMCP_INTEROP=1 but "+format+" (run `go run mage.go setup`)", args...)
		}
		t.Skipf("Rust interop peers not built: "+format+" (run `go run mage.go setup`)", args...)
	}
	if dir == "" {
		missing("SMCP_INTEROP_RUST_BIN is not set")
	}
	for _, b := range rustBinaries {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			missing("%s is not in %s", b, dir)
		}
	}
	return dir
}

// syncBuffer collects a process's output for the failure log, keeping its
// first 4 MiB (used by the interop peers and the chaos suite). Waiters learn
// of each write through changed.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced by every write
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	if b.buf.Len() > 4<<20 { // keep the head: enough to explain a failure
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// snapshot returns the output so far and a channel closed at the next write.
func (b *syncBuffer) snapshot() (string, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	return b.buf.String(), b.changed
}

// peerProc is a running interop peer (a Rust or Python SDK program) whose
// stdout lines are JSON objects: lines with a "notify" key go to notes,
// answers to a step sent with an "id" to tagged, the others to lines. Its
// stdout lines that are not JSON and its stderr are kept for waitOutput and
// the failure log.
type peerProc struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *syncBuffer
	text   *syncBuffer // stdout lines that are not JSON
	lines  chan map[string]any
	notes  chan map[string]any
	tagged chan map[string]any
	done   chan struct{}

	seen   []map[string]any          // notifications read but not yet matched
	byID   map[string]map[string]any // tagged answers read but not yet awaited
	closed bool                      // stdin closed
}

// peerWait bounds every wait for a peer's line.
const peerWait = 60 * time.Second

func startRust(t testing.TB, bin, name string, env []string, args ...string) *peerProc {
	t.Helper()
	return startPeerProc(t, name, !strings.Contains(bin, "server"), filepath.Join(rustBin(t), bin), env, args...)
}

// startPeerProc starts path in a process group of its own. At the end of the
// test it closes the peer's standard input and, when exits is set (the
// peer ends when its input does), waits for it to exit; then it kills the
// process group by the peer's PID, which also ends any MCP server the peer
// started.
func startPeerProc(t testing.TB, name string, exits bool, path string, env []string, args ...string) *peerProc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	p := &peerProc{
		name: name, cmd: cmd, stdin: stdin, stderr: &syncBuffer{}, text: &syncBuffer{},
		lines: make(chan map[string]any, 256), notes: make(chan map[string]any, 256),
		tagged: make(chan map[string]any, 256), done: make(chan struct{}), byID: map[string]map[string]any{},
	}
	cmd.Stderr = p.stderr
	require.NoError(t, cmd.Start(), "starting %s", name)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				_, _ = p.text.Write(append(sc.Bytes(), '\n')) // console output
				continue
			}
			ch := p.lines
			if _, ok := m["notify"]; ok {
				ch = p.notes
			} else if _, ok := m["id"]; ok {
				ch = p.tagged
			}
			select {
			case ch <- m:
			case <-ctx.Done(): // stopped: drain until the process is gone
			}
		}
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		if exits {
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
			}
		}
		cancel()
		<-p.done
		if t.Failed() {
			t.Logf("%s stderr:\n%s\nstdout:\n%s", name, tail(p.stderr.String(), 8000), tail(p.text.String(), 4000))
		}
	})
	return p
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// send writes one line to the peer's standard input.
func (p *peerProc) send(t testing.TB, v any) {
	t.Helper()
	var line []byte
	if s, ok := v.(string); ok {
		line = []byte(s)
	} else {
		var err error
		line, err = json.Marshal(v)
		require.NoError(t, err)
	}
	_, err := p.stdin.Write(append(line, '\n'))
	require.NoError(t, err, "writing to %s", p.name)
}

// next returns the peer's next non-notification line.
func (p *peerProc) next(t testing.TB) map[string]any {
	t.Helper()
	select {
	case m := <-p.lines:
		return m
	case <-p.done:
		select {
		case m := <-p.lines:
			return m
		default:
		}
		t.Fatalf("%s exited early: %v\n%s", p.name, p.cmd.ProcessState, tail(p.stderr.String(), 4000))
	case <-time.After(peerWait):
		t.Fatalf("no output from %s", p.name)
	}
	return nil
}

// do runs one step of the Rust Agent and returns its answer line.
func (p *peerProc) do(t testing.TB, step map[string]any) map[string]any {
	t.Helper()
	p.send(t, step)
	m := p.next(t)
	require.Equal(t, step["op"], m["op"], "%v", m)
	return m
}

// ok runs a step that must succeed and returns its result.
func (p *peerProc) ok(t testing.TB, step map[string]any) any {
	t.Helper()
	m := p.do(t, step)
	require.Equal(t, true, m["ok"], "%s: %v", step["op"], m)
	return m["result"]
}

// note waits for a notification line that match accepts; lines read on the
// way are kept for later calls.
func (p *peerProc) note(t testing.TB, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	for i, m := range p.seen {
		if match(m) {
			p.seen = append(p.seen[:i:i], p.seen[i+1:]...)
			return m
		}
	}
	deadline := time.After(peerWait)
	for {
		select {
		case m := <-p.notes:
			if match(m) {
				return m
			}
			p.seen = append(p.seen, m)
		case <-deadline:
			t.Fatalf("%s: no %s notification; saw %v", p.name, what, p.seen)
			return nil
		}
	}
}

// noteOf matches a notification by kind and the computer it names.
func noteOf(kind, computer string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		if m["notify"] != kind {
			return false
		}
		if c, ok := m["computer"]; ok {
			return c == computer
		}
		data, _ := m["data"].(map[string]any)
		return data["computer"] == computer
	}
}

// exited waits for the peer to exit.
func (p *peerProc) exited(t testing.TB) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(peerWait):
		t.Fatalf("%s did not exit", p.name)
	}
}

// waitOutput waits until the peer's stderr or console output matches re
// and returns the first submatch.
func (p *peerProc) waitOutput(t testing.TB, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.After(peerWait)
	for {
		errOut, errChanged := p.stderr.snapshot()
		text, textChanged := p.text.snapshot()
		if m := re.FindStringSubmatch(errOut + text); m != nil {
			if len(m) > 1 {
				return m[1]
			}
			return m[0]
		}
		select {
		case <-errChanged:
		case <-textChanged:
		case <-p.done:
			if m := re.FindStringSubmatch(p.stderr.String() + p.text.String()); m != nil {
				continue
			}
			t.Fatalf("%s exited: %s", p.name, tail(p.stderr.String(), 4000))
		case <-deadline:
			t.Fatalf("%s: %s never appeared on stderr:\n%s", p.name, re, tail(p.stderr.String(), 4000))
		}
	}
}

// rustServer is the Rust SDK's Server (rustpeer-server) on a loopback port.
type rustServer struct {
	URL    string
	APIKey string
	proc   *peerProc
}

var listening = regexp.MustCompile(`Server listening on (\S+)`)

func startRustServer(t testing.TB) *rustServer {
	t.Helper()
	key := randomKey(t)
	p := startRust(t, "rustpeer-server", "rust server",
		[]string{"SMCP_API_KEY=" + key, "RUST_LOG=smcp_server_hyper=info,warn"}, "127.0.0.1:0")
	addr := p.waitOutput(t, listening)
	return &rustServer{URL: "http://" + addr, APIKey: key, proc: p}
}

// rustComputerConfig writes the Rust Computer's config file: the e2e tool
// server, in the SDK's own config format.
func rustComputerConfig(t testing.TB) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"servers": []mcpServer{toolServer(t, "tools")}})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "computer.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

// startRustComputer starts rustpeer-computer (the SDK's Computer library
// over the e2e tool server) and waits until it has joined office.
func startRustComputer(t testing.TB, url, key, office, name string) *peerProc {
	t.Helper()
	p := startRust(t, "rustpeer-computer", "rust computer "+name, []string{
		"SMCP_URL=" + url, "SMCP_API_KEY=" + key, "SMCP_OFFICE=" + office, "SMCP_COMPUTER=" + name,
		"RUST_LOG=smcp_computer=debug,warn",
	}, rustComputerConfig(t))
	ready := p.next(t)
	require.Equal(t, true, ready["ready"], "%v", ready)
	return p
}

// startRustAgent starts rustpeer-agent (the SDK's AsyncSmcpAgent) connected
// to url; it has not joined yet.
func startRustAgent(t testing.TB, url, key, office, name string, toolTimeout int) *peerProc {
	t.Helper()
	p := startRust(t, "rustpeer-agent", "rust agent "+name, []string{
		"SMCP_URL=" + url, "SMCP_API_KEY=" + key, "SMCP_OFFICE=" + office, "SMCP_AGENT=" + name,
		"SMCP_TIMEOUT=20", fmt.Sprintf("SMCP_TOOL_TIMEOUT=%d", toolTimeout),
	})
	m := p.next(t)
	require.Equal(t, map[string]any{"op": "connect", "ok": true}, m)
	return p
}

// compactJSON renders v for messages and the test log.
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(string(b))
}

// The Rust Server sends the namespace CONNECT before its connect handler
// has registered the event handlers, so a join sent at once can be dropped
// and never answered (conformance/lockstep-rust.md, R10): our clients end
// the wait with a 408. These helpers join again after such a 408.

const rustJoinWait = 3 * time.Second

// dialAgentRust connects an Agent to the Rust Server and joins office.
func dialAgentRust(t testing.TB, d *deployment, office, name string, opts ...agent.Option) *agent.Client {
	t.Helper()
	a := dialAgent(t, d, "", name, opts...)
	ctx := testContext(t)
	for lost := 0; ; lost++ {
		jctx, cancel := context.WithTimeout(ctx, rustJoinWait)
		err := a.JoinOffice(jctx, office)
		cancel()
		if err == nil {
			if lost > 0 {
				t.Logf("agent %s: %d join(s) lost by the Rust Server (R10)", name, lost)
			}
			return a
		}
		require.Equal(t, protocol.CodeTimeout, protocol.CodeOf(err), "%v", err)
		require.Less(t, lost, 5, "joins keep getting lost")
	}
}

// startComputerRust starts a Computer and joins it to the Rust Server.
func startComputerRust(t testing.TB, d *deployment, office, name string, servers []mcpServer) *computer.Computer {
	t.Helper()
	raw, err := json.Marshal(servers)
	require.NoError(t, err)
	ctx := testContext(t)
	for lost := 0; ; lost++ {
		cfg, err := config.Parse(raw)
		require.NoError(t, err)
		c := computer.New(cfg, computer.WithLogger(logger(t)), computer.WithDebounce(50*time.Millisecond))
		require.NoError(t, c.Start(ctx))
		err = c.Connect(ctx, d.URL, office, name, sio.WithAPIKey(d.APIKey), sio.WithLogger(logger(t)), sio.WithTimeout(rustJoinWait))
		if err == nil {
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				_ = c.Close(ctx)
			})
			if lost > 0 {
				t.Logf("computer %s: %d join(s) lost by the Rust Server (R10)", name, lost)
			}
			return c
		}
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		_ = c.Close(cctx)
		cancel()
		require.Equal(t, protocol.CodeTimeout, protocol.CodeOf(err), "%v", err)
		require.Less(t, lost, 5, "joins keep getting lost")
	}
}
