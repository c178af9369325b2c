package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// gate is a streamable-HTTP MCP server (mcp-go's, in this process) behind
// a handler that answers its tools/call requests with the status in refuse
// (0: let them through), as an OAuth-protected server does when a token is
// missing (401) or refused (403).
type gate struct {
	srv    *httptest.Server
	refuse atomic.Int32
}

func newGate(t *testing.T) *gate {
	g := &gate{}
	mcpSrv := mcpserver.NewStreamableHTTPServer(testmcp.New(testmcp.Options{NoResources: true}).MCPServer)
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status := int(g.refuse.Load()); status != 0 && r.Method == http.MethodPost {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
				if status == http.StatusUnauthorized {
					w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+g.srv.URL+`/.well-known/oauth-protected-resource?state=s3cr3t"`)
				}
				http.Error(w, "access_token=tok-123 "+http.StatusText(status), status)
				return
			}
		}
		mcpSrv.ServeHTTP(w, r)
	}))
	t.Cleanup(g.srv.Close)
	return g
}

// A tool call the upstream server refuses with 401 or 403 answers the
// references' authorization result, with the server's bundle_id and no
// secret of the server's; a call it lets through is a normal result.
func TestUpstreamAuthorizationErrors(t *testing.T) {
	g := newGate(t)
	cfg := protocol.MCPServerConfig{Streamable: &protocol.MCPStreamableConfig{Name: "Atlassian Cloud", ForbiddenTools: []string{},
		ToolMeta: map[string]protocol.ToolMeta{}, DefaultToolMeta: &protocol.ToolMeta{AutoApply: ptr(true)},
		ServerParameters: protocol.MCPStreamableParameters{URL: g.srv.URL + "/mcp"}}}
	m := mcpclient.NewManager([]protocol.MCPServerConfig{cfg})
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	require.NoError(t, m.Start(context.Background()))
	conn := m.Conn("Atlassian Cloud")
	require.NotNil(t, conn)
	list, err := conn.ListTools(context.Background())
	require.NoError(t, err)
	s := New()
	s.SetServer("Atlassian Cloud", cfg.Base(), conn, list)

	call := func() protocol.CallToolResult {
		return s.Call(context.Background(), protocol.Gen04, protocol.ToolCallReq{ToolName: "echo", Params: map[string]any{"text": "hi"}, ReqID: "r", Timeout: 60})
	}
	res := call()
	require.Nil(t, res.IsError, "%+v", res)
	assert.Equal(t, "hi", res.Text())

	for status, want := range map[int32]struct {
		code   protocol.Code
		action string
	}{
		http.StatusUnauthorized: {protocol.CodeToolAuthorizationRequired, AuthActionAuthorize},
		http.StatusForbidden:    {protocol.CodeToolAuthorizationFailed, AuthActionRefresh},
	} {
		g.refuse.Store(status)
		res = call()
		require.NotNil(t, res.IsError, "%d", status)
		assert.True(t, *res.IsError)
		meta := res.MetaUnaliased
		assert.Equal(t, meta, res.Meta, "meta and _meta from 0.3 on")
		assert.Equal(t, int(want.code), meta[protocol.MetaErrorCode], "%d", status)
		assert.Equal(t, "Atlassian_Cloud", meta[protocol.MetaMCPServer])
		hint, _ := meta[protocol.MetaAuthHint].(map[string]any)
		assert.Equal(t, want.action, hint["action"])
		assert.NotEmpty(t, hint["message"])
		b, _ := json.Marshal(res)
		for _, secret := range []string{"tok-123", "s3cr3t", "access_token", g.srv.URL} {
			assert.NotContains(t, string(b), secret, "%d", status)
		}
		assert.NoError(t, protocol.Gen04.Validate(protocol.EventToolCall, protocol.Ack, b), string(b))
	}

	// Authorized again: the same server answers normally.
	g.refuse.Store(0)
	res = call()
	require.Nil(t, res.IsError, "%+v", res)
}

func TestClassifyAuthError(t *testing.T) {
	for err, want := range map[error]protocol.Code{
		nil:                                     0,
		&transport.AuthorizationRequiredError{}: protocol.CodeToolAuthorizationRequired,
		fmt.Errorf("call: %w", &transport.OAuthAuthorizationRequiredError{}):    protocol.CodeToolAuthorizationRequired,
		errors.New("request failed with status 401: nope"):                      protocol.CodeToolAuthorizationRequired,
		errors.New("request failed with status 403: nope"):                      protocol.CodeToolAuthorizationFailed,
		errors.New("invalid_grant: token revoked"):                              protocol.CodeToolAuthorizationFailed,
		errors.New("OAuth flow not completed"):                                  protocol.CodeToolAuthorizationRequired,
		errors.New("dial tcp 127.0.0.1:40123: connection refused"):              0,
		errors.New("request failed with status 500: boom"):                      0,
		errors.New("connect to http://127.0.0.1:4013/: EOF"):                    0,
		&mcpsource.RPCError{Code: -32000, Message: "permission denied on /etc"}: 0,
	} {
		assert.Equal(t, want, ClassifyAuthError(err), "%v", err)
	}
}
