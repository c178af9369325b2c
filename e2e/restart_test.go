package e2e

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// serverProcess is a real smcp-server process on a fixed loopback port.
type serverProcess struct {
	t    *testing.T
	bin  string
	addr string
	key  string
	cmd  *exec.Cmd
}

// buildServer builds smcp-server into a temporary folder.
func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "smcp-server")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/a2c-smcp/smcp-go/server/cmd/smcp-server").CombinedOutput()
	require.NoError(t, err, "go build smcp-server: %s", out)
	return bin
}

// start runs the server and returns once its port accepts connections.
func (s *serverProcess) start() time.Time {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, "-listen", s.addr, "-api-keys", s.key, "-log-level", "error")
	s.cmd.Stdout, s.cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(s.t, s.cmd.Start())
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err == nil {
			_ = conn.Close()
			return time.Now()
		}
		require.True(s.t, time.Now().Before(deadline), "smcp-server does not listen on %s: %v", s.addr, err)
		time.Sleep(5 * time.Millisecond)
	}
}

// kill sends SIGKILL and reaps the process.
func (s *serverProcess) kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// restartRounds is how often TestServerRestart kills the Server; each round
// costs its down time plus the recovery (about a second or two).
const restartRounds = 20

// TestServerRestart kills (SIGKILL) a real smcp-server process under a
// joined Computer and Agent and starts it again on the same port, 20 times:
// both roles must reconnect and rejoin by themselves, and a routed request
// must work again (spec/protocol.md, Connection and auth: a reconnected
// socket has lost its rooms). The time from the Server accepting
// connections to the first routed request answered is logged as a
// distribution; each recovery is bounded by recoveryBound (the target is
// far below it: ≤ 5 s, see spec/decisions.md).
func TestServerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a server process 20 times")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	s := &serverProcess{t: t, bin: buildServer(t), addr: addr, key: randomKey(t)}
	s.start()
	t.Cleanup(s.kill)
	d := &deployment{URL: "http://" + addr, APIKey: s.key}

	startComputer(t, d, "o1", "desk", []mcpServer{toolServer(t, "tools")})
	a := dialAgent(t, d, "o1", "bot")
	ctx := testContext(t)
	_, err = a.GetTools(ctx, "desk")
	require.NoError(t, err)

	const recoveryBound = 20 * time.Second
	var took []time.Duration
	for round := 0; round < restartRounds; round++ {
		s.kill()
		// Down for 0.2, 1 or 2 s: the roles' backoff is in a different
		// phase each time.
		time.Sleep([]time.Duration{200 * time.Millisecond, time.Second, 2 * time.Second}[round%3])
		accepting := s.start()
		deadline := accepting.Add(recoveryBound)
		for {
			rctx, cancel := context.WithTimeout(ctx, time.Second)
			_, err := a.GetTools(rctx, "desk")
			cancel()
			if err == nil {
				break
			}
			require.True(t, time.Now().Before(deadline), "round %d: no routed request answered within %v of the restart: %v", round, recoveryBound, err)
			time.Sleep(20 * time.Millisecond)
		}
		took = append(took, time.Since(accepting))
		t.Logf("round %d: server accepting; a routed request answered %v later", round, took[len(took)-1].Round(time.Millisecond))
	}
	slices.Sort(took)
	pct := func(p float64) time.Duration { return took[int(p*float64(len(took)-1)+0.5)] }
	t.Logf("recovery after %d SIGKILL restarts (server accepting -> routed request answered): p50 %v, p90 %v, p99 %v, max %v; all: %v",
		len(took), pct(0.5).Round(time.Millisecond), pct(0.9).Round(time.Millisecond), pct(0.99).Round(time.Millisecond),
		took[len(took)-1].Round(time.Millisecond), strconv.Quote(formatDurations(took)))
}

func formatDurations(ds []time.Duration) string {
	out := ""
	for i, d := range ds {
		if i > 0 {
			out += " "
		}
		out += d.Round(time.Millisecond).String()
	}
	return out
}
