package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// pyServerScript is the third-party DPE server of docs/dpe-server-python.md.
const pyServerScript = "testdata/py_dpe_server.py"

// mcpPython returns an interpreter that imports the official MCP Python SDK
// (mcp, pinned in server/testdata/interop/requirements.txt and installed
// into .cache/venv by `go run mage.go setup`). Under SMCP_INTEROP=1 (mage
// test) a missing interpreter fails the test; otherwise it is skipped.
func mcpPython(t *testing.T) string {
	t.Helper()
	return interopPython(t, "mcp", "the MCP Python SDK")
}

// peerMissing fails the test under SMCP_INTEROP=1 (`go run mage.go test`:
// a missing peer fails the suite) and skips it otherwise.
func peerMissing(t *testing.T, why string) {
	t.Helper()
	msg := why + " (run `go run mage.go setup`)"
	if os.Getenv("SMCP_INTEROP") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// pyServer runs the Python DPE server over root as a stdio MCP server.
func pyServer(t *testing.T, py, name, root, host string, args ...string) mcpServer {
	script, err := filepath.Abs(pyServerScript)
	require.NoError(t, err)
	return mcpServer{
		"name": name, "type": "stdio",
		"server_parameters": map[string]any{"command": py,
			"args": append([]string{script, "--root", root, "--host", host}, args...), "env": map[string]string{}},
	}
}

func writePyDoc(t *testing.T, path, body string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
}

// TestPythonDPEServer runs the guide's Python server (official mcp package)
// behind a real Computer and reads it through a Server and an Agent: the
// catalog, pages, the 4201–4203 errors with their data, resources/updated
// and list_changed reaching the Agent as notify:update_finder, and a second
// copy that falls into the subscribe trap (subscribe not declared) still
// listed.
func TestPythonDPEServer(t *testing.T) {
	py := mcpPython(t)
	root, legacy := t.TempDir(), t.TempDir()
	writePyDoc(t, filepath.Join(root, "alpha.txt"), "Alpha report\nFirst paragraph.\n\nSecond paragraph.\n----\nPage two.\n")
	writePyDoc(t, filepath.Join(root, "beta.txt"), "Beta notes\nOnly page.\n")
	writePyDoc(t, filepath.Join(legacy, "old.txt"), "Old memo\nStill readable.\n")

	var seen catalogs
	d := startServer(t)
	startComputer(t, d, "o1", "desk", []mcpServer{
		pyServer(t, py, "pydocs", root, "py.docs"),
		pyServer(t, py, "pylegacy", legacy, "legacy.docs", "--no-subscribe-patch"),
	})
	a := dialAgent(t, d, "o1", "bot", agent.OnFinderChanged(seen.add))
	ctx := testContext(t)

	all, err := a.GetFinder(ctx, "desk", agent.FinderQuery{})
	require.NoError(t, err)
	require.Equal(t, 3, all.TotalCount, "%v", docRefs(all.Documents))
	alpha := docByRef(all, "alpha")
	require.NotNil(t, alpha)
	assert.Equal(t, "pydocs", alpha.Server)
	assert.Equal(t, "Alpha report", alpha.Title)
	assert.Equal(t, 2, alpha.PageCount)
	old := docByRef(all, "old")
	require.NotNil(t, old, "a server without resources.subscribe is listed (the subscribe trap)")
	assert.Equal(t, "pylegacy", old.Server)

	alphaURI := dpe.DocumentURI("py.docs", "alpha").String()
	p, err := a.ReadPage(ctx, "desk", alphaURI, 0, agent.PageQuery{})
	require.NoError(t, err)
	require.Len(t, p.Elements, 2)
	assert.Equal(t, "Second paragraph.", p.Elements[1].Content["text"])

	for _, tc := range []struct {
		name    string
		read    func() error
		code    protocol.Code
		details map[string]any
	}{
		{"4201", func() error {
			_, err := a.ReadDocument(ctx, "desk", dpe.DocumentURI("py.docs", "nope").String(), agent.DocumentQuery{})
			return err
		},
			protocol.CodeDocumentNotFound, map[string]any{"uri": "dpe://py.docs/nope", "doc_ref": "nope"}},
		{"4202", func() error { _, err := a.ReadPage(ctx, "desk", alphaURI, 5, agent.PageQuery{}); return err },
			protocol.CodePageOutOfRange, map[string]any{"uri": "dpe://py.docs/alpha/pages/5", "doc_ref": "alpha", "page_index": float64(5), "page_count": float64(2)}},
		{"4203", func() error { _, err := a.ReadElement(ctx, "desk", alphaURI, "zz", dpe.FormatJSON); return err },
			protocol.CodeElementNotFound, map[string]any{"uri": "dpe://py.docs/alpha/elements/zz", "doc_ref": "alpha", "element_id": "zz"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.read()
			require.Error(t, err)
			assert.Equal(t, tc.code, protocol.CodeOf(err))
			det := protocol.AsError(err).Details
			assert.Equal(t, float64(tc.code), det["mcp_code"], "marked as the MCP server's error")
			assert.Equal(t, tc.details, det["mcp_data"], "the server's data reaches the Agent as it was sent")
			for k, v := range tc.details {
				assert.Equal(t, v, det[k], "and as the error's details: %s", k)
			}
		})
	}

	// An edit: resources/updated → server:update_finder → notify:update_finder.
	writePyDoc(t, filepath.Join(root, "alpha.txt"), "Alpha report, revised\nFirst paragraph.\n")
	require.Eventually(t, func() bool {
		return seen.find(func(r *protocol.GetFinderRet) bool {
			d := docByRef(r, "alpha")
			return d != nil && d.Title == "Alpha report, revised" && d.PageCount == 1
		}) != nil
	}, testTimeout, 20*time.Millisecond, "notify:update_finder with the edited document")

	// A new file: resources/list_changed.
	writePyDoc(t, filepath.Join(root, "gamma.txt"), "Gamma\nNew.\n")
	require.Eventually(t, func() bool {
		return seen.find(func(r *protocol.GetFinderRet) bool { return docByRef(r, "gamma") != nil }) != nil
	}, testTimeout, 20*time.Millisecond, "notify:update_finder with the added document")
}

// TestPythonDPEServerInvalidURI: the Python server's own URI validation
// answers 4204 with data to an MCP client (the Computer rejects such URIs
// before forwarding them).
func TestPythonDPEServerInvalidURI(t *testing.T) {
	py := mcpPython(t)
	root := t.TempDir()
	writePyDoc(t, filepath.Join(root, "alpha.txt"), "Alpha\nText.\n")
	script, err := filepath.Abs(pyServerScript)
	require.NoError(t, err)
	ctx := testContext(t)
	c := client.NewClient(transport.NewStdio(py, nil, script, "--root", root))
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() { _ = c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "e2e", Version: "0"}
	res, err := c.Initialize(ctx, init)
	require.NoError(t, err)
	require.NotNil(t, res.Capabilities.Resources)
	assert.True(t, res.Capabilities.Resources.Subscribe, "the guide's capability patch")

	// The raw transport keeps the JSON-RPC error's code and data.
	resp, err := c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId("bad-uri"), Method: string(mcp.MethodResourcesRead),
		Params: map[string]any{"uri": "dpe://py.docs/alpha/sheets/1"},
	})
	require.NoError(t, err)
	require.NotNil(t, resp.Error)
	assert.Equal(t, int(protocol.CodeInvalidDPEURI), resp.Error.Code)
	assert.Equal(t, "the path names no DPE level", resp.Error.Message)
	assert.Equal(t, map[string]any{"uri": "dpe://py.docs/alpha/sheets/1", "reason": "path"}, resp.Error.Data)
}
