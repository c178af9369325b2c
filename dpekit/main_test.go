package dpekit_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/dpekit"
)

const testHost = "com.example.docs"

// stdioServerEnv makes the test binary, re-executed by a test, serve
// testProvider over stdio instead of running the tests.
const stdioServerEnv = "DPEKIT_TEST_STDIO_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(stdioServerEnv) == "1" {
		os.Exit(serveStdioChild())
	}
	os.Exit(m.Run())
}

func serveStdioChild() int {
	ctx := context.Background()
	srv, err := dpekit.New(ctx, testHost, testProvider(), dpekit.WithValidation(),
		dpekit.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Close()
	if err := dpekit.ServeStdio(ctx, srv); err != nil && err != io.EOF {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// The transports every client-level test runs over.
const (
	overStdio = "stdio" // a child process (this test binary re-executed)
	overPipe  = "pipe"  // ServeIO in-process over pipes (stdio framing)
	overHTTP  = "http"  // streamable HTTP on httptest
)

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newServer builds a Server over p and closes it at the end of the test.
func newServer(t testing.TB, p dpekit.Provider) *dpekit.Server {
	t.Helper()
	srv, err := dpekit.New(testCtx(t), testHost, p, dpekit.WithValidation())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	return srv
}

// connect returns an initialised mcp-go client pinned to protocol revision
// 2025-11-25, talking to srv over the given transport (overStdio ignores srv:
// the child serves testProvider).
func connect(t testing.TB, kind string, srv *dpekit.Server) *client.Client {
	t.Helper()
	ctx := testCtx(t)
	var tr transport.Interface
	switch kind {
	case overStdio:
		exe, err := os.Executable()
		require.NoError(t, err)
		tr = transport.NewStdioWithOptions(exe, []string{stdioServerEnv + "=1"}, []string{"-test.run=^$"})
	case overPipe:
		serverIn, clientOut := io.Pipe()
		clientIn, serverOut := io.Pipe()
		sctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = dpekit.ServeIO(sctx, srv, serverIn, serverOut)
			_ = serverOut.Close()
		}()
		t.Cleanup(func() {
			cancel()
			_ = clientOut.Close()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Error("ServeIO did not return after its context ended")
			}
		})
		tr = transport.NewIO(clientIn, clientOut, io.NopCloser(eofReader{}))
	case overHTTP:
		h := dpekit.NewStreamableHTTPHandler(srv)
		ts := httptest.NewServer(h)
		t.Cleanup(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = h.Shutdown(sctx)
			ts.Close()
		})
		var err error
		tr, err = transport.NewStreamableHTTP(ts.URL+"/mcp", transport.WithContinuousListening())
		require.NoError(t, err)
	default:
		t.Fatalf("unknown transport %q", kind)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() { _ = c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "dpekit-test", Version: "0"}
	res, err := c.Initialize(ctx, init)
	require.NoError(t, err)
	require.Equal(t, mcp.ProtocolVersion20251125, res.ProtocolVersion)
	return c
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
