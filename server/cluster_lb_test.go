package server_test

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	r := startRedis(t)
	var nodes []*node
	var regs []*prometheus.Registry
	var addrs []string
	for range 3 {
		reg := prometheus.NewRegistry()
		n := startNode(t, r, server.WithMetrics(reg))
		nodes, regs = append(nodes, n), append(regs, reg)
		addrs = append(addrs, strings.TrimPrefix(n.url, "http://"))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	listen := ln.Addr().String()
	require.NoError(t, ln.Close())
	tmpl, err := template.ParseFiles(filepath.Join("testdata", "cluster", "haproxy.cfg.tmpl"))
	require.NoError(t, err)
	cfg := filepath.Join(t.TempDir(), "haproxy.cfg")
	f, err := os.Create(cfg)
	require.NoError(t, err)
	require.NoError(t, tmpl.Execute(f, map[string]any{"Listen": listen, "Nodes": addrs}))
	require.NoError(t, f.Close())
	cmd := exec.Command(bin, "-f", cfg, "-db")
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	proxy := "http://" + listen
	require.Eventually(t, func() bool {
		resp, err := http.Get(proxy + "/readyz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, wait, 100*time.Millisecond, "haproxy serving: %s", &logs)

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
	for _, reg := range regs {
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

	// Node 0 loses Redis: not ready, so HAProxy stops sending it clients.
	nodes[0].srv.KillNode()
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
	}, 3*wait, 200*time.Millisecond, "new clients admitted by the ready nodes only")
}
