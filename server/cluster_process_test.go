package server_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/require"
)

// nodeProcess is one smcp-server process of a cluster.
type nodeProcess struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{}
}

// startNodeProcess runs the smcp-server binary as a cluster node and waits
// for its listening address on its JSON log.
func startNodeProcess(t *testing.T, bin, redisURL string) *nodeProcess {
	t.Helper()
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--redis", redisURL, "--node-lease", "1500ms", "--log-level", "info")
	cmd.Env = append(os.Environ(), "SMCP_API_KEYS="+testKey)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &nodeProcess{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == "smcp-server listening" {
				a, _ := line["addr"].(string)
				addr <- a
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(wait):
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	select {
	case a := <-addr:
		p.url = "http://" + a
	case <-p.done:
		t.Fatal("smcp-server exited before listening")
	case <-time.After(wait):
		t.Fatal("smcp-server did not listen in time")
	}
	return p
}

func (p *nodeProcess) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(p.url + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestClusterProcesses runs three smcp-server processes on one Redis,
// routes across them, then SIGKILLs one with a request in flight to its
// Computer and measures how long the others take to notice.
func TestClusterProcesses(t *testing.T) {
	r := startRedis(t)
	bin := filepath.Join(t.TempDir(), "smcp-server")
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/smcp-server").CombinedOutput()
	require.NoError(t, err, string(out))
	var nodes []*nodeProcess
	for range 3 {
		nodes = append(nodes, startNodeProcess(t, bin, r.url()))
	}
	for _, n := range nodes {
		code, body := n.get(t, "/readyz")
		require.Equal(t, http.StatusOK, code, body)
	}

	doomed := dial(t, nodes[1].url).mustJoin(protocol.RoleComputer, "doomed", "o1")
	other := dial(t, nodes[2].url).mustJoin(protocol.RoleComputer, "other", "o1")
	agent := dial(t, nodes[0].url).mustJoin(protocol.RoleAgent, "a1", "o1")
	other.answer(protocol.EventGetTools, toolsAnswer)
	vals := agent.call(protocol.EventGetTools, getTools("a1", "other", "r0"))
	require.Equal(t, "r0", vals[0].(map[string]any)["req_id"])
	_, metrics := nodes[0].get(t, "/metrics")
	require.True(t, strings.Contains(metrics, `smcp_server_routed_requests_total{code="ok",event="client:get_tools"} 1`), "routed request counted")
	peers := func(n string) func() bool {
		return func() bool {
			_, m := nodes[0].get(t, "/metrics")
			return strings.Contains(m, "smcp_server_cluster_peers "+n+"\n")
		}
	}
	require.Eventually(t, peers("3"), wait, 100*time.Millisecond, "three live nodes")

	pending := make(chan []any, 1)
	go func() {
		vals, _ := tryCall(agent, protocol.EventGetConfig, map[string]any{"agent": "a1", "computer": "doomed", "req_id": "r1"}, wait)
		pending <- vals
	}()
	doomed.next(protocol.EventGetConfig)
	killed := time.Now()
	require.NoError(t, nodes[1].cmd.Process.Signal(syscall.SIGKILL))
	e := requireError(t, <-pending, protocol.CodeUnavailable)
	failedAfter := time.Since(killed)
	require.Equal(t, "node_down", e.Details["reason"])
	var leave any
	for leave == nil || leave.(map[string]any)["computer"] != "doomed" {
		leave = agent.next(protocol.NotifyLeaveOffice)
	}
	toldAfter := time.Since(killed)
	t.Logf("SIGKILL, lease 1.5s: request failed with 503 after %v, office told after %v",
		failedAfter.Round(time.Millisecond), toldAfter.Round(time.Millisecond))
	dial(t, nodes[2].url).mustJoin(protocol.RoleComputer, "doomed", "o1")
	require.Eventually(t, peers("2"), wait, 100*time.Millisecond, "two live nodes")
}
