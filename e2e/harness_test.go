package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/sio"
	"github.com/a2c-smcp/smcp-go/examples/docserver"
	"github.com/a2c-smcp/smcp-go/server"
)

// roleEnv selects what a re-executed test binary runs: the tests start
// their MCP servers as real child processes by running this binary again.
const roleEnv = "SMCP_E2E_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "docserver":
		os.Exit(docserver.Run(context.Background(), os.Args[1:], os.Stderr))
	case "toolserver":
		os.Exit(runToolServer())
	case "windowserver":
		os.Exit(runWindowServer(os.Args[1:]))
	case "relay":
		os.Exit(runRelay())
	case "capsserver":
		os.Exit(runCapsServer())
	case "archiveskillserver":
		os.Exit(runArchiveSkillServer(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// testTimeout bounds every step of a test; generous for a loaded 2-core
// machine running the suite under the race detector.
const testTimeout = 60 * time.Second

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// logger writes to the test log only when the test fails (go test -v shows
// it always), so a passing run stays quiet.
func logger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

// deployment is one Server on a loopback port with its API key.
type deployment struct {
	URL    string
	APIKey string
	srv    *server.Server
}

func startServer(t testing.TB, opts ...server.Option) *deployment {
	t.Helper()
	key := randomKey(t)
	srv, err := server.New(append([]server.Option{server.WithAPIKeys(key), server.WithLogger(logger(t))}, opts...)...)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, srv.Close(ctx))
		require.NoError(t, hs.Shutdown(ctx))
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("http server: %v", err)
		}
	})
	return &deployment{URL: "http://" + ln.Addr().String(), APIKey: key, srv: srv}
}

func randomKey(t testing.TB) string {
	b := make([]byte, 16)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// mcpServer is one entry of a Computer config.
type mcpServer map[string]any

// docServer runs smcp-docserver (this binary re-executed) over root as a
// stdio MCP server named name, serving the dpe:// host.
func docServer(t testing.TB, name, root, host string) mcpServer {
	return reexec(t, name, "docserver", "--root", root, "--host", host, "--debounce", "50ms")
}

// toolServer runs the e2e tool MCP server (echo, slow) over stdio.
func toolServer(t testing.TB, name string) mcpServer {
	return reexec(t, name, "toolserver")
}

func reexec(t testing.TB, name, role string, args ...string) mcpServer {
	exe, err := os.Executable()
	require.NoError(t, err)
	if args == nil {
		args = []string{}
	}
	return mcpServer{
		"name": name, "type": "stdio",
		"server_parameters": map[string]any{"command": exe, "args": args, "env": map[string]string{roleEnv: role}},
	}
}

// startComputer starts a Computer over the given MCP servers and connects
// it to d's office under name.
func startComputer(t testing.TB, d *deployment, office, name string, servers []mcpServer, opts ...computer.Option) *computer.Computer {
	t.Helper()
	return startComputerDialing(t, d, office, name, servers, opts)
}

// startComputerDialing is startComputer with options for the Computer's
// Socket.IO connection too.
func startComputerDialing(t testing.TB, d *deployment, office, name string, servers []mcpServer, opts []computer.Option, dial ...sio.Option) *computer.Computer {
	t.Helper()
	raw, err := json.Marshal(servers)
	require.NoError(t, err)
	cfg, err := config.Parse(raw)
	require.NoError(t, err)
	c := computer.New(cfg, append([]computer.Option{computer.WithLogger(logger(t)), computer.WithDebounce(50 * time.Millisecond)}, opts...)...)
	// Start waits for an event (every server's first attempt made and
	// aggregated), which takes long under -race on a loaded machine: its
	// bound is a safety net against a hang, not a speed requirement.
	start, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	require.NoError(t, c.Start(start))
	ctx := testContext(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("closing computer %s: %v", name, err)
		}
	})
	require.NoError(t, c.Connect(ctx, d.URL, office, name, append([]sio.Option{sio.WithAPIKey(d.APIKey), sio.WithLogger(logger(t))}, dial...)...))
	return c
}

// dialAgent connects an Agent named name and joins office.
func dialAgent(t testing.TB, d *deployment, office, name string, opts ...agent.Option) *agent.Client {
	t.Helper()
	ctx := testContext(t)
	a, err := agent.Dial(ctx, d.URL, append([]agent.Option{agent.WithAPIKey(d.APIKey), agent.WithName(name), agent.WithLogger(logger(t))}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	if office != "" {
		require.NoError(t, a.JoinOffice(ctx, office))
	}
	return a
}

// docTimes gives the copied documents fixed modification times, so their
// order in the catalog (newest first) does not depend on copy timing.
var docTimes = map[string]time.Time{
	"quarterly-report.md":   time.Date(2026, 10, 5, 9, 0, 0, 0, time.UTC),
	"sales-2026-q3.csv":     time.Date(2026, 10, 3, 9, 0, 0, 0, time.UTC),
	"budget-2026.xlsx":      time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC),
	"service-agreement.pdf": time.Date(2026, 9, 20, 9, 0, 0, 0, time.UTC),
}

// copyDocs copies the quickstart's documents into a temporary folder, so
// tests may edit them.
func copyDocs(t testing.TB) string {
	t.Helper()
	src := filepath.Join("..", "examples", "quickstart", "docs")
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, b, 0o644); err != nil {
			return err
		}
		if mt, ok := docTimes[rel]; ok {
			return os.Chtimes(target, mt, mt)
		}
		return nil
	})
	require.NoError(t, err)
	return dst
}
