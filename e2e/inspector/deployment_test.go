package inspector_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/sio"
	"github.com/a2c-smcp/smcp-go/dpekit"
	"github.com/a2c-smcp/smcp-go/e2e/internal/memdocs"
	"github.com/a2c-smcp/smcp-go/examples/docserver"
	"github.com/a2c-smcp/smcp-go/inspector"
	"github.com/a2c-smcp/smcp-go/server"
)

// roleEnv selects what a re-executed test binary runs: the Computers'
// MCP servers are real child processes running this binary again.
const roleEnv = "SMCP_INSPECTOR_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "docserver":
		os.Exit(docserver.Run(context.Background(), os.Args[1:], os.Stderr))
	case "toolserver":
		os.Exit(runToolServer())
	}
	os.Exit(m.Run())
}

// testTimeout bounds every step; generous for a loaded 2-core machine
// running the suite under the race detector.
const testTimeout = 90 * time.Second

func logger(t testing.TB) *slog.Logger {
	if testing.Verbose() && os.Getenv("SMCP_INSPECTOR_TEST_LOG") == "1" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// deployment is a Server, its office and the Computers in it.
type deployment struct {
	url, key, office string
	docs             string // the desk Computer's documents (a copy)
}

const (
	office   = "inspected"
	deskHost = "desk.docs"
	labHost  = "lab.docs"
	labDocs  = 10000
)

// startServer runs a real smcp Server on a loopback port.
func startServer(t testing.TB) *deployment {
	t.Helper()
	key := rand.Text()
	srv, err := server.New(server.WithAPIKeys(key), server.WithLogger(logger(t)))
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
	return &deployment{url: "http://" + ln.Addr().String(), key: key, office: office}
}

type mcpServer map[string]any

func reexec(t testing.TB, name, role string, extra map[string]any, args ...string) mcpServer {
	exe, err := os.Executable()
	require.NoError(t, err)
	if args == nil {
		args = []string{}
	}
	s := mcpServer{
		"name": name, "type": "stdio",
		"server_parameters": map[string]any{"command": exe, "args": args, "env": map[string]string{roleEnv: role}},
	}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

// startComputer starts a real Computer over servers and connects it.
func startComputer(t testing.TB, d *deployment, name string, servers []mcpServer, opts ...computer.Option) *computer.Computer {
	t.Helper()
	raw, err := json.Marshal(servers)
	require.NoError(t, err)
	cfg, err := config.Parse(raw)
	require.NoError(t, err)
	// A catalog read that times out leaves its document out of the Finder
	// until the next build; on a loaded machine under -race the default
	// 10 s is reached (8,595 of the 10,000 documents were listed): the
	// inspector, not the machine's speed, is under test.
	c := computer.New(cfg, append([]computer.Option{computer.WithLogger(logger(t)), computer.WithDebounce(50 * time.Millisecond),
		computer.WithCatalogReadTimeout(5 * time.Minute)}, opts...)...)
	// Start waits for an event (every server's first attempt made and
	// aggregated), which takes minutes under -race on a loaded machine:
	// its bound is a safety net against a hang, not a speed requirement.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("closing computer %s: %v", name, err)
		}
	})
	require.NoError(t, c.Connect(ctx, d.url, d.office, name, sio.WithAPIKey(d.key), sio.WithLogger(logger(t))))
	return c
}

// xssDocument is a document whose every part tries to run a script.
const xssDocument = `# Notes <script>window.__xss = "title"</script>

Hello <img src="x" onerror="window.__xss = 'img'"> and <a href="javascript:window.__xss='a'">a link</a>.

[click me](javascript:window.__xss='md')

<script>window.__xss = "block"</script>

| Attack | Where |
|--------|-------|
| <b onmouseover="window.__xss='cell'">bold</b> | <iframe src="javascript:window.__xss='frame'"></iframe> |

<svg onload="window.__xss='svg'"></svg>
`

// copyDocs copies the quickstart's documents and adds the XSS one.
func copyDocs(t testing.TB) string {
	t.Helper()
	src := filepath.Join("..", "..", "examples", "quickstart", "docs")
	dst := t.TempDir()
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	require.NoError(t, os.WriteFile(filepath.Join(dst, "xss.md"), []byte(xssDocument), 0o644))
	// Fixed times keep the catalog's order (newest first) stable.
	base := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	err := filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		base = base.Add(time.Hour)
		return os.Chtimes(p, base, base)
	})
	require.NoError(t, err)
	return dst
}

// startOffice starts the office the browser tests inspect: a Server and two
// Computers. "desk" runs smcp-docserver over the quickstart's documents and
// the test tool server, both real child processes over stdio; "lab" holds
// 10,000 documents of an MCP server over streamable HTTP.
func startOffice(t testing.TB) *deployment {
	t.Helper()
	d := startServer(t)
	d.docs = copyDocs(t)
	toolMeta := map[string]any{
		"tool_meta": map[string]any{
			"echo":  map[string]any{"auto_apply": true, "tags": []string{"demo", "safe"}},
			"form":  map[string]any{"auto_apply": true, "tags": []string{"schema"}},
			"slow":  map[string]any{"auto_apply": true},
			"steps": map[string]any{"auto_apply": true},
			"guard": map[string]any{"tags": []string{"dangerous"}},
			"image": map[string]any{"auto_apply": true},
		},
	}
	startComputer(t, d, "desk", []mcpServer{
		reexec(t, "docs", "docserver", nil, "--root", d.docs, "--host", deskHost, "--debounce", "50ms"),
		reexec(t, "tools", "toolserver", toolMeta),
	}, computer.WithSkillHome(skillHome(t)))
	startComputer(t, d, "lab", []mcpServer{memoryServer(t, labHost, labDocs)})
	return d
}

// dialInspector joins the office as its Agent and serves the page on a
// loopback port.
func dialInspector(t testing.TB, d *deployment, opts ...inspector.Option) (*inspector.Inspector, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	in, err := inspector.Dial(ctx, d.url, d.office, append([]inspector.Option{inspector.WithAPIKey(d.key), inspector.WithLogger(logger(t))}, opts...)...)
	require.NoError(t, err)
	ts := httptest.NewServer(in.Handler())
	t.Cleanup(func() {
		_ = in.Close()
		ts.Close()
	})
	return in, ts.URL
}

// memoryServer serves n documents over streamable HTTP on loopback.
func memoryServer(t testing.TB, host string, n int) mcpServer {
	t.Helper()
	m := &memdocs.Provider{}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	kinds := []string{"pdf", "xlsx", "md", "csv"}
	for i := range n {
		m.Docs = append(m.Docs, dpekit.Document{
			DocRef: fmt.Sprintf("doc-%05d", i), Title: fmt.Sprintf("Report %05d", i),
			FileType: kinds[i%len(kinds)], FileURI: fmt.Sprintf("file:///data/%05d", i), PageCount: 1,
			Keywords: []string{"finance", fmt.Sprintf("q%d", i%4+1)}, Summary: "Generated document",
			LastModified: base.Add(time.Duration(i) * time.Minute),
		})
	}
	srv, err := dpekit.New(context.Background(), host, m)
	require.NoError(t, err)
	h := dpekit.NewStreamableHTTPHandler(srv)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		_ = h.Shutdown(context.Background())
		_ = srv.Close()
	})
	return mcpServer{"name": "archive", "type": "streamable", "server_parameters": map[string]any{"url": ts.URL + "/mcp", "timeout": "PT60S"}}
}

// statusWindow is the tool server's one window (spec/desktop.md).
const statusWindow = "window://tests.tools/status?priority=50"

// skillLogo is the binary file of the desk's skill "review": larger than a
// get_skill body, so the Computer answers it as a blob handle.
var skillLogo = noisePNG(300)

// skillHome is the desk Computer's skill home: the skill "review", its
// SKILL.md and assets/logo.png.
func skillHome(t testing.TB) string {
	home := t.TempDir()
	dir := filepath.Join(home, "user", "review")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "assets"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\ndescription: Reviews code\n---\n# Review\nRead the diff.\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "assets", "logo.png"), skillLogo, 0o644))
	return home
}

// noisePNG is a real PNG of side×side pixels of noise (which does not
// compress: about 4·side² bytes), the same on every call.
func noisePNG(side int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, side, side))
	x := uint32(2463534242)
	for i := range img.Pix {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		img.Pix[i] = byte(x)
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// runToolServer is a real MCP server over stdio with the tools the page
// calls: echo, form (every kind of field), slow (waits until cancelled),
// guard (needs a confirmation the Computer cannot get: 4005), and a window.
func runToolServer() int {
	s := mcpserver.NewMCPServer("inspector-tools", "1.0.0", mcpserver.WithToolCapabilities(true),
		mcpserver.WithResourceCapabilities(true, true), mcpserver.WithRecovery())
	s.AddResource(mcp.NewResource(statusWindow, "status", mcp.WithMIMEType("text/markdown")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: statusWindow, MIMEType: "text/markdown",
				Text: "**All systems nominal**\n\n- build: green\n- queue: 0"}}, nil
		})
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Answers its text."), mcp.WithString("text", mcp.Required(), mcp.Description("what to say"))),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("form", mcp.WithDescription("Answers its arguments as structured content."),
		mcp.WithString("title", mcp.Required()),
		mcp.WithNumber("count", mcp.Description("how many")),
		mcp.WithBoolean("loud", mcp.Required()),
		mcp.WithString("mood", mcp.Enum("calm", "glad", "grim"), mcp.Required()),
		mcp.WithArray("labels", mcp.WithStringItems()),
		mcp.WithObject("point", mcp.Properties(map[string]any{"x": map[string]any{"type": "integer"}, "y": map[string]any{"type": "integer"}})),
		mcp.WithAny("extra", mcp.Description("anything, as JSON"))),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, _ := json.Marshal(req.GetArguments())
			return mcp.NewToolResultStructured(req.GetArguments(), "args: "+string(b)), nil
		})
	s.AddTool(mcp.NewTool("slow", mcp.WithDescription("Waits for seconds, or until cancelled."), mcp.WithNumber("seconds", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			d := time.Duration(req.GetFloat("seconds", 1) * float64(time.Second))
			select {
			case <-time.After(d):
				return mcp.NewToolResultText(fmt.Sprintf("slept %s", d)), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	s.AddTool(mcp.NewTool("steps", mcp.WithDescription("Reports steps of steps as MCP progress, then answers once the file hold exists."),
		mcp.WithNumber("steps", mcp.Required()), mcp.WithString("hold", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := req.GetInt("steps", 3)
			if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
				return mcp.NewToolResultError("the call asked for no progress"), nil
			}
			srv := mcpserver.ServerFromContext(ctx)
			for i := 1; i <= n; i++ {
				if err := srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
					"progressToken": req.Params.Meta.ProgressToken, "progress": i, "total": n, "message": fmt.Sprintf("step %d of %d", i, n)}); err != nil {
					return nil, err
				}
			}
			// The test lets the call end once the page showed the last step.
			for {
				if _, err := os.Stat(req.GetString("hold", "")); err == nil {
					return mcp.NewToolResultText("done"), nil
				}
				select {
				case <-time.After(20 * time.Millisecond):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		})
	s.AddTool(mcp.NewTool("image", mcp.WithDescription("Answers a 160×160 PNG of noise, above the Computer's inline budget.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent(base64.StdEncoding.EncodeToString(noisePNG(160)), "image/png")}}, nil
		})
	s.AddTool(mcp.NewTool("guard", mcp.WithDescription("Needs a human's confirmation.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ran"), nil
		})
	if err := mcpserver.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, "toolserver:", err)
		return 1
	}
	return 0
}
