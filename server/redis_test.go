package server_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// redisServer is a real redis-server child on a free loopback port, with
// no persistence: a restart starts it empty, as after a crash without a
// snapshot. `go run mage.go test` sets SMCP_INTEROP_REDIS to the binary and
// a missing one fails the test; without it the tests look on PATH and skip
// when it is not installed (`go run mage.go setup` installs it).
type redisServer struct {
	t    testing.TB
	bin  string
	port int
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

func startRedis(t testing.TB) *redisServer {
	t.Helper()
	path := requirePeer(t, "SMCP_INTEROP_REDIS", "redis-server")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	r := &redisServer{t: t, bin: path, port: port}
	r.start()
	t.Cleanup(r.stop)
	return r
}

// requirePeer finds a test peer binary: the one envVar names (set by `go
// run mage.go test`, under which a missing one fails the test), else name on
// PATH, else the test is skipped.
func requirePeer(t testing.TB, envVar, name string) string {
	t.Helper()
	bin := os.Getenv(envVar)
	if bin == "" {
		bin = name
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		if os.Getenv(envVar) != "" || interopRequired() {
			t.Fatalf("%s not found (%v): run `go run mage.go setup` or install Debian's %s", name, err, name)
		}
		t.Skipf("%s not installed (%v): run `go run mage.go setup`", name, err)
	}
	return path
}

func (r *redisServer) url() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

func (r *redisServer) start() {
	r.t.Helper()
	cmd := exec.Command(r.bin, "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "no")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(r.t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	r.mu.Lock()
	r.cmd, r.done = cmd, done
	r.mu.Unlock()
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", r.port)})
	defer c.Close()
	deadline := time.Now().Add(wait)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		select {
		case <-done:
			r.t.Fatalf("redis-server exited: %s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server did not answer within %v: %v\n%s", wait, err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop kills the server (SIGKILL: nothing is saved) and reaps it.
func (r *redisServer) stop() {
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.cmd = nil
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

func (r *redisServer) restart() {
	r.stop()
	r.start()
}
