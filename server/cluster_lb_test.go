package server_test

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// TestClusterBehindHAProxy runs the HAProxy configuration of the README
// (testdata/cluster/haproxy.cfg.tmpl) in front of three nodes: clients
// connect through the proxy only, land on several nodes and reach each
// other; a node that stops being ready (/readyz) is taken out, and new
// clients are admitted by the others.
func TestClusterBehindHAProxy(t *testing.T) {
	bin := requirePeer(t, "SMCP_INTEROP_HAPROXY", "haproxy")
	b := startBalanced(t)
	cfg := b.render(t, "haproxy.cfg.tmpl")
	proxy := b.run(t, exec.Command(bin, "-f", cfg, "-db"))
	b.spread(t, proxy)

	// Node 0 loses Redis: not ready, so HAProxy stops sending it clients.
	b.nodes[0].srv.KillNode()
	b.admitted(t, proxy, "new clients admitted by the ready nodes only")
}

// TestClusterBehindNginx runs the nginx configuration of the README
// (testdata/cluster/nginx.conf.tmpl) in front of three nodes: clients
// connect through the proxy only (websocket upgrades through nginx), land
// on several nodes and reach each other; a node that stops (connections
// refused) is skipped, and new clients are admitted by the others.
// Open-source nginx has no active health check: a node that is up but not
// ready keeps receiving clients (README.md).
func TestClusterBehindNginx(t *testing.T) {
	bin := requirePeer(t, "SMCP_INTEROP_NGINX", "nginx")
	b := startBalanced(t)
	cfg := b.render(t, "nginx.conf.tmpl")
	proxy := b.run(t, exec.Command(bin, "-p", filepath.Dir(cfg), "-c", cfg, "-e", "stderr", "-g", "daemon off;"))
	b.spread(t, proxy)

	// Node 0 stops: its listener is closed, nginx moves on to the next.
	b.nodes[0].kill()
	b.nodes[0].hs.Close()
	b.admitted(t, proxy, "new clients admitted by the running nodes")
}

// balanced is three nodes on one Redis, for a load balancer in front.
type balanced struct {
	nodes  []*node
	regs   []*prometheus.Registry
	addrs  []string
	listen string // the balancer's address
}

func startBalanced(t *testing.T) *balanced {
	r := startRedis(t)
	b := &balanced{}
	for range 3 {
		reg := prometheus.NewRegistry()
		n := startNode(t, r, server.WithMetrics(reg))
		b.nodes, b.regs = append(b.nodes, n), append(b.regs, reg)
		b.addrs = append(b.addrs, strings.TrimPrefix(n.url, "http://"))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	b.listen = ln.Addr().String()
	require.NoError(t, ln.Close())
	return b
}

// render writes the configuration template testdata/cluster/<name> with
// the balancer's and the nodes' addresses into a directory of its own,
// and returns the file's path.
func (b *balanced) render(t *testing.T, name string) string {
	tmpl, err := template.ParseFiles(filepath.Join("testdata", "cluster", name))
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "tmp"), 0o755))
	cfg := filepath.Join(dir, strings.TrimSuffix(name, ".tmpl"))
	f, err := os.Create(cfg)
	require.NoError(t, err)
	require.NoError(t, tmpl.Execute(f, map[string]any{"Listen": b.listen, "Nodes": b.addrs}))
	require.NoError(t, f.Close())
	return cfg
}

// run starts the balancer in the foreground, stops it by its PID at
// cleanup, and waits until it forwards to the nodes; it returns its URL.
// SIGTERM, not SIGKILL: nginx's master stops its workers on SIGTERM, while
// a killed master would leave them running (and holding the log pipe).
func (b *balanced) run(t *testing.T, cmd *exec.Cmd) string {
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.WaitDelay = 2 * time.Second
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(wait):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("balancer did not stop on SIGTERM: %s", logs.String())
		}
	})
	proxy := "http://" + b.listen
	// Any answer of a node's Engine.IO endpoint (400 without a transport):
	// the balancer is listening and forwarding.
	require.Eventually(t, func() bool {
		select {
		case <-done:
			return false
		default:
		}
		resp, err := http.Get(proxy + "/socket.io/")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusBadRequest
	}, wait, 100*time.Millisecond, "balancer serving: %s", &logs)
	return proxy
}

// spread connects six Computers and an Agent through the balancer: every
// request from the Agent is answered, and the sessions are on at least two
// nodes, so that the Agent and some Computers are on different nodes.
func (b *balanced) spread(t *testing.T, proxy string) {
	var computers []string
	for i := range 6 {
		name := "pc-" + string(rune('a'+i))
		dial(t, proxy).mustJoin(protocol.RoleComputer, name, "o1").answer(protocol.EventGetTools, toolsAnswer)
		computers = append(computers, name)
	}
	agent := dial(t, proxy).mustJoin(protocol.RoleAgent, "a1", "o1")
	for _, c := range computers {
		vals := agent.call(protocol.EventGetTools, getTools("a1", c, "r-"+c))
		require.Equal(t, "r-"+c, vals[0].(map[string]any)["req_id"], "through the proxy to %s", c)
	}
	used := 0
	for _, reg := range b.regs {
		mfs, err := reg.Gather()
		require.NoError(t, err)
		sessions := 0.0
		for _, mf := range mfs {
			if mf.GetName() == "smcp_server_connections" {
				for _, m := range mf.GetMetric() {
					sessions += m.GetGauge().GetValue()
				}
			}
		}
		if sessions > 0 {
			used++
		}
	}
	require.GreaterOrEqual(t, used, 2, "round robin spreads the sessions over the nodes")
}

// admitted waits until six new clients in a row connect through the
// balancer and join.
func (b *balanced) admitted(t *testing.T, proxy, msg string) {
	require.Eventually(t, func() bool {
		for i := range 6 {
			p, err := connect(t, proxy, dialOpts{})
			if err != nil {
				return false
			}
			vals, err := tryCall(p, protocol.EventJoinOffice, map[string]any{"role": "computer", "name": "late-" + string(rune('a'+i)), "office_id": "o2"}, wait)
			p.sock.Disconnect()
			if err != nil || len(vals) != 2 || vals[0] != true {
				return false
			}
		}
		return true
	}, 3*wait, 200*time.Millisecond, msg)
}

// syncBuffer collects a child process's output, read by the test while the
// process writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
