package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// build compiles the command into a temporary folder.
func build(t *testing.T) string {
	t.Helper()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		goTool = "go"
	}
	bin := filepath.Join(t.TempDir(), "smcp-docserver")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, goTool, "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

func initialize(t *testing.T, ctx context.Context, c *client.Client) {
	t.Helper()
	require.NoError(t, c.Start(ctx))
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "cmd-test", Version: "0"}
	_, err := c.Initialize(ctx, init)
	require.NoError(t, err)
}

func readJSON(t *testing.T, ctx context.Context, c *client.Client, uri string) map[string]any {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.ReadResource(ctx, req)
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.Contents[0].(mcp.TextResourceContents).Text), &v))
	return v
}

// TestBinary builds smcp-docserver and runs it as a user would: over stdio
// as a child process, and over HTTP until SIGTERM.
func TestBinary(t *testing.T) {
	bin := build(t)
	docs, err := filepath.Abs("../../../quickstart/docs")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Run("stdio", func(t *testing.T) {
		tr := transport.NewStdio(bin, nil, "--root", docs, "--host", "com.example.docs")
		c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
		initialize(t, ctx, c)
		v := readJSON(t, ctx, c, "dpe://com.example.docs/budget-2026.xlsx/pages/1?format=markdown")
		assert.Contains(t, v["content_markdown"], "| Salaries | 412000 | 418000 | 431000 | 436000 | 1697000 |")
		require.NoError(t, c.Close(), "closing stdin stops the server")
	})

	t.Run("http", func(t *testing.T) {
		cmd := exec.CommandContext(ctx, bin, "--root", docs, "--transport", "http", "--addr", "127.0.0.1:0")
		stderr, err := cmd.StderrPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		done := make(chan error, 1)
		urlc := make(chan string, 1)
		go func() {
			re := regexp.MustCompile(`listening on (http://\S+)`)
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				if m := re.FindStringSubmatch(sc.Text()); m != nil {
					urlc <- m[1]
				}
			}
			done <- cmd.Wait()
		}()
		var url string
		select {
		case url = <-urlc:
		case err := <-done:
			t.Fatalf("smcp-docserver exited early: %v", err)
		case <-ctx.Done():
			t.Fatal("no listening line")
		}
		tr, err := transport.NewStreamableHTTP(url, transport.WithContinuousListening())
		require.NoError(t, err)
		c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
		initialize(t, ctx, c)
		v := readJSON(t, ctx, c, "dpe://local.docs")
		assert.EqualValues(t, 4, v["total_count"])
		require.NoError(t, c.Close())

		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		select {
		case err := <-done:
			assert.NoError(t, err, "SIGTERM is a clean stop")
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatal("smcp-docserver did not stop on SIGTERM")
		}
	})

	t.Run("usage", func(t *testing.T) {
		for _, args := range [][]string{{"--transport", "grpc"}, {"--nope"}, {"extra"}} {
			err := exec.CommandContext(ctx, bin, args...).Run()
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "%v: %v", args, err)
			assert.Equal(t, 2, exit.ExitCode(), "%v", args)
		}
		err := exec.CommandContext(ctx, bin, "--root", filepath.Join(t.TempDir(), "missing")).Run()
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit))
		assert.Equal(t, 1, exit.ExitCode())
	})
}
