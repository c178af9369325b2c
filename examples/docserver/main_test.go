package docserver_test

import (
	"context"
	"encoding/json"

	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/dpekit"
	"github.com/a2c-smcp/smcp-go/examples/docserver"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// runEnv makes the test binary, re-executed by a test, run the
// smcp-docserver command (docserver.Run) with its arguments.
const runEnv = "SMCP_DOCSERVER_TEST_RUN"

func TestMain(m *testing.M) {
	if os.Getenv(runEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := docserver.Run(ctx, os.Args[1:], os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// shippedDocs is the quickstart's document set.
const shippedDocs = "../quickstart/docs"

const (
	overStdio = "stdio" // the command in a child process
	overHTTP  = "http"  // NewServer on httptest
)

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// serve starts a document server on root and returns a client connected to
// it, pinned to protocol revision 2025-11-25.
func serve(t testing.TB, kind, root string, opts ...docserver.Option) *client.Client {
	t.Helper()
	ctx := testCtx(t)
	var tr transport.Interface
	switch kind {
	case overStdio:
		exe, err := os.Executable()
		require.NoError(t, err)
		tr = transport.NewStdioWithOptions(exe, []string{runEnv + "=1"},
			[]string{"--root", root, "--debounce", "50ms"})
	case overHTTP:
		opts = append([]docserver.Option{docserver.WithDebounce(50 * time.Millisecond),
			docserver.WithKitOptions(dpekit.WithValidation())}, opts...)
		srv, err := docserver.NewServer(ctx, root, opts...)
		require.NoError(t, err)
		h := dpekit.NewStreamableHTTPHandler(srv)
		ts := httptest.NewServer(h)
		t.Cleanup(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = h.Shutdown(sctx)
			ts.Close()
			require.NoError(t, srv.Close())
		})
		tr, err = transport.NewStreamableHTTP(ts.URL+"/mcp", transport.WithContinuousListening())
		require.NoError(t, err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() { _ = c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "docserver-test", Version: "0"}
	res, err := c.Initialize(ctx, init)
	require.NoError(t, err)
	assert.Equal(t, "smcp-docserver", res.ServerInfo.Name)
	require.NotNil(t, res.Capabilities.Resources)
	assert.True(t, res.Capabilities.Resources.Subscribe)
	assert.True(t, res.Capabilities.Resources.ListChanged)
	return c
}

var levelSchema = [...]string{"dpe_catalog.json", "dpe_document.json", "dpe_page.json", "dpe_element_detail.json"}

// read reads uri, validates the payload against its level's schema and
// returns it decoded.
func read(t testing.TB, c *client.Client, uri string) map[string]any {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.ReadResource(testCtx(t), req)
	require.NoError(t, err, uri)
	require.Len(t, res.Contents, 1)
	tc, ok := res.Contents[0].(mcp.TextResourceContents)
	require.True(t, ok)
	u, err := dpe.Parse(uri)
	require.NoError(t, err)
	require.NoError(t, protocol.ValidateSchema(levelSchema[u.Level()], []byte(tc.Text)), "%s: %s", uri, tc.Text)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(tc.Text), &v))
	return v
}

func readErr(t testing.TB, c *client.Client, uri string) *protocol.Error {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	_, err := c.ReadResource(testCtx(t), req)
	require.Error(t, err, uri)
	perr, ok := protocol.DecodeMCPErrorMessage(err.Error())
	require.True(t, ok, "%s: %v", uri, err)
	return perr
}

// copyDocs copies the shipped documents into a fresh temporary folder.
func copyDocs(t testing.TB) string {
	t.Helper()
	dst := t.TempDir()
	require.NoError(t, os.CopyFS(dst, os.DirFS(shippedDocs)))
	return dst
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func getObj(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}
