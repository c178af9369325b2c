package resources_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
	"github.com/a2c-smcp/smcp-go/computer/resources"
	"github.com/a2c-smcp/smcp-go/protocol"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testmcp.Cleanup()
	os.Exit(code)
}

func stdio(t *testing.T, name string, args ...string) protocol.MCPServerConfig {
	return protocol.MCPServerConfig{Stdio: &protocol.MCPStdioConfig{Name: name, ForbiddenTools: []string{}, ToolMeta: map[string]protocol.ToolMeta{},
		ServerParameters: protocol.MCPStdioParameters{Command: testmcp.Binary(t), Args: args}}}
}

// lookup finds a connected server of the manager by bundle_id.
func lookup(m *mcpclient.Manager) resources.Lookup {
	return func(id string) (resources.Server, bool) {
		for _, c := range m.Conns() {
			if b, err := protocol.ResolveBundleID(c.Config()); err == nil && b == id {
				return c, true
			}
		}
		return nil, false
	}
}

// Real MCP servers as processes: one paging its resources two by two, one
// without resources. The Agent follows the cursor page by page and sees
// every resource once, in the references' shape.
func TestGetResourcesPassesPagesThrough(t *testing.T) {
	m := mcpclient.NewManager([]protocol.MCPServerConfig{
		stdio(t, "docs server", "-docs", "3", "-page", "2"),
		stdio(t, "tools-only", "-no-resources"),
	})
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	require.NoError(t, m.Start(context.Background()))
	ctx := context.Background()
	find := lookup(m)

	// All of them at once, to compare with.
	all, err := m.Conn("docs server").ListResources(ctx)
	require.NoError(t, err)
	require.Greater(t, len(all), 2, "more than one page")

	var got []protocol.A2CResource
	cursor, pages := "", 0
	for {
		ret, err := resources.Get(ctx, find, protocol.GetResourcesReq{MCPServer: "docs_server", Cursor: cursor, ReqID: "r"})
		require.NoError(t, err)
		pages++
		assert.LessOrEqual(t, len(ret.Resources), 2)
		assert.Equal(t, "r", ret.ReqID)
		b, _ := json.Marshal(ret)
		require.NoError(t, protocol.Gen04.Validate(protocol.EventGetResources, protocol.Ack, b), string(b))
		assert.NotContains(t, string(b), "mimeType")
		got = append(got, ret.Resources...)
		if ret.NextCursor == "" {
			break
		}
		require.Less(t, pages, 100)
		cursor = ret.NextCursor
	}
	assert.Equal(t, (len(all)+1)/2, pages)
	require.Len(t, got, len(all))
	for i, r := range all {
		assert.Equal(t, r.URI, got[i].URI)
		assert.Equal(t, r.MIMEType, got[i].MimeType)
	}

	_, err = resources.Get(ctx, find, protocol.GetResourcesReq{MCPServer: "nope"})
	var perr *protocol.Error
	require.True(t, errors.As(err, &perr))
	b, _ := json.Marshal(perr.In(protocol.Gen04))
	assert.Equal(t, `{"code":4014,"message":"MCP Server not registered","mcp_server":"nope"}`, string(b))

	_, err = resources.Get(ctx, find, protocol.GetResourcesReq{MCPServer: "tools-only"})
	require.True(t, errors.As(err, &perr))
	b, _ = json.Marshal(perr.In(protocol.Gen04))
	assert.Equal(t, `{"code":4015,"message":"MCP Server does not support 'resources' capability","mcp_server":"tools-only","capability":"resources"}`, string(b))

	// A cursor the server never gave: its error comes back, not a page.
	_, err = resources.Get(ctx, find, protocol.GetResourcesReq{MCPServer: "docs_server", Cursor: "bogus"})
	require.Error(t, err)
}

func TestConvert(t *testing.T) {
	p, size := 0.8, int64(42)
	r := mcp.Resource{URI: "window://h/panel", Name: "panel", MIMEType: "text/markdown", Size: &size,
		Annotated: mcp.Annotated{Annotations: &mcp.Annotations{Audience: []mcp.Role{mcp.RoleAssistant}, Priority: &p, LastModified: "2026-01-01T00:00:00Z"}},
		Meta:      &mcp.Meta{AdditionalFields: map[string]any{"fullscreen": true}}}
	b, err := json.Marshal(resources.Convert(r))
	require.NoError(t, err)
	assert.JSONEq(t, `{"uri":"window://h/panel","name":"panel","mime_type":"text/markdown","size":42,
		"annotations":{"audience":["assistant"],"priority":0.8,"last_modified":"2026-01-01T00:00:00Z"},"_meta":{"fullscreen":true}}`, string(b))
	b, _ = json.Marshal(resources.Convert(mcp.Resource{URI: "dpe://h", Name: "n"}))
	assert.JSONEq(t, `{"uri":"dpe://h","name":"n"}`, string(b))
}
