package testmcp

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

// Binary builds ./cmd/testmcp once per test process and returns the path of
// the program. Call Cleanup from TestMain to remove it.
func Binary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "testmcp-")
		if buildErr != nil {
			return
		}
		buildBin = filepath.Join(buildDir, "testmcp")
		cmd := exec.Command("go", "build", "-o", buildBin, "github.com/a2c-smcp/smcp-go/computer/internal/testmcp/cmd/testmcp")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = &buildError{err: err, out: string(out)}
		}
	})
	if buildErr != nil {
		tb.Fatalf("build testmcp: %v", buildErr)
	}
	return buildBin
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// Cleanup removes the program built by Binary.
func Cleanup() {
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
}

// HTTPProcess is a testmcp program serving streamable HTTP.
type HTTPProcess struct {
	URL string
	Cmd *exec.Cmd
}

// StartHTTP runs the program with -http addr (use "127.0.0.1:0" for any
// port) and the extra flags, waits until it listens and stops it at the end
// of the test.
func StartHTTP(tb testing.TB, addr string, flags ...string) *HTTPProcess {
	tb.Helper()
	return start(tb, append([]string{"-http", addr}, flags...))
}

// StartSSE is StartHTTP for the legacy HTTP+SSE transport (URL ends in
// /sse).
func StartSSE(tb testing.TB, addr string, flags ...string) *HTTPProcess {
	tb.Helper()
	return start(tb, append([]string{"-sse", addr}, flags...))
}

func start(tb testing.TB, args []string) *HTTPProcess {
	tb.Helper()
	bin := Binary(tb)
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p := &HTTPProcess{Cmd: cmd}
	tb.Cleanup(p.Kill)
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "LISTENING ") {
				lines <- strings.TrimPrefix(sc.Text(), "LISTENING ")
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case p.URL = <-lines:
	case <-ctx.Done():
		tb.Fatal("testmcp did not start listening")
	}
	return p
}

// Kill stops the process and reaps it; safe to call twice.
func (p *HTTPProcess) Kill() {
	if p.Cmd.Process != nil && p.Cmd.ProcessState == nil {
		_ = p.Cmd.Process.Kill()
		_ = p.Cmd.Wait()
	}
}

// Wait waits for the process to exit by itself (after the crash tool).
func (p *HTTPProcess) Wait() { _ = p.Cmd.Wait() }
