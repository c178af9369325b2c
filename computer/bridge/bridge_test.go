package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/sourcetest"
	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testmcp.Cleanup()
	os.Exit(code)
}

func str(s string) *string { return &s }

func text(uri, mime, t string) protocol.ResourceContents {
	return protocol.ResourceContents{URI: uri, MimeType: mime, Text: str(t)}
}

// requireCode checks err is a *protocol.Error with code and returns it.
func requireCode(t *testing.T, err error, code protocol.Code) *protocol.Error {
	t.Helper()
	require.Error(t, err)
	var pe *protocol.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, code, pe.Code, "%v", pe)
	return pe
}

// docServer is an mcp-go server "alpha" serving dpe://a.docs: one listed
// document, page reads through a template, and failing reads of every kind.
func docServer(t *testing.T) (*sourcetest.Server, string) {
	srv := sourcetest.NewServer()
	srv.Put(sourcetest.Doc(sourcetest.Meta("a.docs", "d1", 1)))
	srv.Put(sourcetest.Resource{URI: "window://a.win/main", Contents: sourcetest.Text("window://a.win/main", "text/plain", "main window")})
	srv.Put(sourcetest.Resource{URI: "dpe://a.docs/img", Contents: []mcp.ResourceContents{mcp.BlobResourceContents{URI: "dpe://a.docs/img", MIMEType: "image/png", Blob: "iVBORw0K"}}})
	srv.Put(sourcetest.Resource{URI: "dpe://a.docs/boom", Err: errors.New("disk on fire")})
	srv.Template("dpe://a.docs/{doc_ref}/pages/{page_index}", func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		switch strings.Trim(fmt.Sprint(req.Params.Arguments["page_index"]), "[]") {
		case "9":
			return nil, errors.New(protocol.EncodeMCPErrorMessage(
				protocol.NewPageOutOfRange("page 9 out of range").With("page_index", 9).With("page_count", 3)))
		case "7": // hangs until the caller gives up
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return sourcetest.Text(req.Params.URI, "application/json", `{"page":true}`), nil
	})
	return srv, sourcetest.Serve(t, srv)
}

func TestBridgeReadAndRoute(t *testing.T) {
	_, url := docServer(t)
	// "beta" serves dpe://b.docs through a template only (no listed resource).
	beta := sourcetest.NewServer()
	beta.Template("dpe://b.docs/{doc_ref}", func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return sourcetest.Text(req.Params.URI, "application/json", `{"from":"beta"}`), nil
	})
	b := New()
	require.NoError(t, b.AddSource(sourcetest.Ctx(t), sourcetest.DialHTTP(t, "alpha", url)))
	require.NoError(t, b.AddSource(sourcetest.Ctx(t), sourcetest.DialHTTP(t, "beta", sourcetest.Serve(t, beta))))

	for _, tc := range []struct {
		name, uri string
		want      []protocol.ResourceContents
	}{
		{"listed document", "dpe://a.docs/d1", nil},
		{"page through a template of the same host", "dpe://a.docs/d1/pages/0", []protocol.ResourceContents{text("dpe://a.docs/d1/pages/0", "application/json", `{"page":true}`)}},
		{"host known from a template only", "dpe://b.docs/x", []protocol.ResourceContents{text("dpe://b.docs/x", "application/json", `{"from":"beta"}`)}},
		{"window", "window://a.win/main", []protocol.ResourceContents{text("window://a.win/main", "text/plain", "main window")}},
		{"blob relayed", "dpe://a.docs/img", []protocol.ResourceContents{{URI: "dpe://a.docs/img", MimeType: "image/png", Blob: str("iVBORw0K")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := b.Read(sourcetest.Ctx(t), tc.uri)
			require.NoError(t, err)
			require.Len(t, got, 1)
			if tc.want != nil {
				assert.Equal(t, tc.want, got)
			}
			raw, err := json.Marshal(protocol.ReadResourceRet{Contents: got, ReqID: "r"})
			require.NoError(t, err)
			require.NoError(t, protocol.Validate(protocol.EventReadResource, protocol.Ack, raw))
		})
	}
	got, err := b.Read(sourcetest.Ctx(t), "dpe://a.docs/d1")
	require.NoError(t, err)
	var doc protocol.DPEDocument
	require.NoError(t, json.Unmarshal([]byte(*got[0].Text), &doc))
	assert.Equal(t, "d1", doc.DocRef)

	name, ok := b.Server("DPE", "a.docs")
	assert.True(t, ok)
	assert.Equal(t, "alpha", name)
	name, ok = b.Server("dpe", "B.Docs") // hosts are case-insensitive
	assert.True(t, ok)
	assert.Equal(t, "beta", name)
}

func TestBridgeErrors(t *testing.T) {
	_, url := docServer(t)
	b := New(WithReadTimeout(time.Hour))
	require.NoError(t, b.AddSource(sourcetest.Ctx(t), sourcetest.DialHTTP(t, "alpha", url)))

	t.Run("invalid dpe URI is 4204 with the rule", func(t *testing.T) {
		_, err := b.Read(sourcetest.Ctx(t), "dpe://a.docs/d1/pages/x")
		pe := requireCode(t, err, protocol.CodeInvalidDPEURI)
		assert.Equal(t, 3, pe.Details["rule"])
		_, err = b.Read(sourcetest.Ctx(t), "dpe://a.docs/d1?limit=500")
		requireCode(t, err, protocol.CodeInvalidDPEURI)
	})
	t.Run("invalid window URI is 400", func(t *testing.T) {
		_, err := b.Read(sourcetest.Ctx(t), "window://a.win/main?priority=500")
		requireCode(t, err, protocol.CodeBadRequest)
	})
	t.Run("schemes not allowed and non-URIs are 4204", func(t *testing.T) {
		for _, u := range []string{"file:///etc/passwd", "http://127.0.0.1/", "a.docs/d1", "", "://x"} {
			_, err := b.Read(sourcetest.Ctx(t), u)
			pe := requireCode(t, err, protocol.CodeInvalidDPEURI)
			assert.Equal(t, u, pe.Details["uri"])
		}
	})
	t.Run("no server for the host is 4201 with uri and host", func(t *testing.T) {
		_, err := b.Read(sourcetest.Ctx(t), "dpe://nobody.docs/d1")
		pe := requireCode(t, err, protocol.CodeDocumentNotFound)
		assert.Equal(t, map[string]any{"uri": "dpe://nobody.docs/d1", "host": "nobody.docs"}, pe.Details)
	})
	t.Run("MCP resource-not-found (-32002) is 4201", func(t *testing.T) {
		_, err := b.Read(sourcetest.Ctx(t), "dpe://a.docs/ghost")
		pe := requireCode(t, err, protocol.CodeDocumentNotFound)
		assert.Equal(t, "dpe://a.docs/ghost", pe.Details["uri"])
	})
	t.Run("the kit's encoding through mcp-go (-32603) keeps code, message, details", func(t *testing.T) {
		_, err := b.Read(sourcetest.Ctx(t), "dpe://a.docs/d1/pages/9")
		pe := requireCode(t, err, protocol.CodePageOutOfRange)
		assert.Equal(t, "page 9 out of range", pe.Message)
		assert.Equal(t, float64(9), pe.Details["page_index"])
		assert.Equal(t, float64(3), pe.Details["page_count"])
		assert.Equal(t, -32603, pe.Details["mcp_code"], "marked as the MCP server's error")
		assert.Contains(t, pe.Details["mcp_message"], "smcp-error")
	})
	t.Run("any other MCP error is 500 with its message", func(t *testing.T) {
		_, err := b.Read(sourcetest.Ctx(t), "dpe://a.docs/boom")
		pe := requireCode(t, err, protocol.CodeInternal)
		assert.Equal(t, "disk on fire", pe.Message)
	})
	t.Run("deadline is 408", func(t *testing.T) {
		c, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := b.Read(c, "dpe://a.docs/d1/pages/7")
		requireCode(t, err, protocol.CodeTimeout)
	})
	t.Run("the default read timeout applies without a deadline", func(t *testing.T) {
		b2 := New(WithReadTimeout(200 * time.Millisecond))
		require.NoError(t, b2.AddSource(sourcetest.Ctx(t), sourcetest.DialHTTP(t, "alpha", url)))
		_, err := b2.Read(context.Background(), "dpe://a.docs/d1/pages/7")
		requireCode(t, err, protocol.CodeTimeout)
	})
	t.Run("a server gone away is 500 without its address", func(t *testing.T) {
		cl := sourcetest.DialHTTP(t, "gone", url)
		b3 := New()
		require.NoError(t, b3.AddSource(sourcetest.Ctx(t), cl))
		require.NoError(t, cl.Close())
		_, err := b3.Read(sourcetest.Ctx(t), "dpe://a.docs/d1")
		pe := requireCode(t, err, protocol.CodeInternal)
		assert.NotContains(t, pe.Error(), "127.0.0.1")
	})
}

func TestBridgeAllowedSchemes(t *testing.T) {
	srv, url := docServer(t)
	srv.Put(sourcetest.Resource{URI: "res://custom.host/x", Contents: sourcetest.Text("res://custom.host/x", "text/plain", "custom")})
	b := New(WithAllowedSchemes("DPE", "res"))
	require.NoError(t, b.AddSource(sourcetest.Ctx(t), sourcetest.DialHTTP(t, "alpha", url)))

	_, err := b.Read(sourcetest.Ctx(t), "window://a.win/main")
	requireCode(t, err, protocol.CodeInvalidDPEURI)
	got, err := b.Read(sourcetest.Ctx(t), "res://custom.host/x")
	require.NoError(t, err)
	assert.Equal(t, "custom", *got[0].Text)
	_, err = b.Read(sourcetest.Ctx(t), "res:///x")
	requireCode(t, err, protocol.CodeInvalidDPEURI)
	_, err = b.Read(sourcetest.Ctx(t), "dpe://a.docs/d1")
	require.NoError(t, err)
}

func TestBridgeSourcesChange(t *testing.T) {
	srv, url := docServer(t)
	cl := sourcetest.DialHTTP(t, "alpha", url)
	b := New()
	require.NoError(t, b.AddSource(sourcetest.Ctx(t), cl))
	sourcetest.Wire(cl, b)

	_, err := b.Read(sourcetest.Ctx(t), "dpe://new.host/doc")
	requireCode(t, err, protocol.CodeDocumentNotFound)
	srv.Put(sourcetest.Doc(sourcetest.Meta("new.host", "doc", 1))) // list_changed → re-learn
	require.Eventually(t, func() bool {
		_, err := b.Read(sourcetest.Ctx(t), "dpe://new.host/doc")
		return err == nil
	}, sourcetest.Wait, sourcetest.Tick)

	b.RemoveSource("alpha")
	_, err = b.Read(sourcetest.Ctx(t), "dpe://a.docs/d1")
	requireCode(t, err, protocol.CodeDocumentNotFound)
	b.ResourceListChanged(sourcetest.Ctx(t), "alpha") // unknown now: ignored
	_, err = b.Read(sourcetest.Ctx(t), "dpe://a.docs/d1")
	requireCode(t, err, protocol.CodeDocumentNotFound)

	// Two servers claim one host: the first by name serves it, and the other
	// takes over when it goes.
	require.NoError(t, b.AddSource(sourcetest.Ctx(t), sourcetest.DialHTTP(t, "zulu", url)))
	require.NoError(t, b.AddSource(sourcetest.Ctx(t), sourcetest.DialHTTP(t, "alpha", url)))
	name, _ := b.Server("dpe", "a.docs")
	assert.Equal(t, "alpha", name)
	b.RemoveSource("alpha")
	name, _ = b.Server("dpe", "a.docs")
	assert.Equal(t, "zulu", name)
}

// rawServer is a minimal MCP server over streamable HTTP written by hand, as
// servers built with other SDKs answer: JSON-RPC errors with Finder codes and
// data (mcp-go servers cannot send those).
func rawServer(t *testing.T) string {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				URI string `json:"uri"`
			} `json:"params"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		if len(req.ID) == 0 { // a notification
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result, rpcErr any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-11-25", "serverInfo": map[string]any{"name": "raw", "version": "1"},
				"capabilities": map[string]any{"resources": map[string]any{"subscribe": true, "listChanged": true}}}
		case "resources/list":
			result = map[string]any{"resources": []any{map[string]any{"uri": "dpe://raw.docs/d1", "name": "d1"}}}
		case "resources/templates/list":
			result = map[string]any{"resourceTemplates": []any{map[string]any{"uriTemplate": "dpe://raw.docs/{doc_ref}/elements/{element_id}", "name": "elements"}}}
		case "resources/read":
			switch req.Params.URI {
			case "dpe://raw.docs/d1/pages/99":
				rpcErr = map[string]any{"code": 4202, "message": "Page out of range", "data": map[string]any{"page_index": 99, "page_count": 12}}
			case "dpe://raw.docs/nonexistent":
				rpcErr = map[string]any{"code": 4201, "message": "Document not found", "data": map[string]any{"doc_ref": "nonexistent"}}
			case "dpe://raw.docs/d1/elements/bad-id":
				rpcErr = map[string]any{"code": 4203, "message": "Element not found", "data": map[string]any{"element_id": "bad-id"}}
			case "dpe://raw.docs/gone":
				rpcErr = map[string]any{"code": -32002, "message": "Resource not found", "data": map[string]any{"uri": req.Params.URI}}
			case "dpe://raw.docs/modern-gone":
				rpcErr = map[string]any{"code": -32602, "message": "Resource not found: dpe://raw.docs/modern-gone"}
			case "dpe://raw.docs/quota":
				// What the official Python SDK sends for McpError(-32603, msg, data).
				rpcErr = map[string]any{"code": -32603, "message": "Internal error from third-party server", "data": map[string]any{"reason": "quota", "retry_after": 30}}
			default:
				result = map[string]any{"contents": []any{map[string]any{"uri": req.Params.URI, "mimeType": "application/json", "text": `{"raw":true}`}}}
			}
		default:
			rpcErr = map[string]any{"code": -32601, "message": "method not found"}
		}
		resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		if rpcErr != nil {
			resp["error"] = rpcErr
		} else {
			resp["result"] = result
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
	})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

func TestBridgeRawJSONRPCErrors(t *testing.T) {
	b := New()
	require.NoError(t, b.AddSource(sourcetest.Ctx(t), sourcetest.DialHTTP(t, "raw", rawServer(t))))

	got, err := b.Read(sourcetest.Ctx(t), "dpe://raw.docs/d1")
	require.NoError(t, err)
	assert.Equal(t, []protocol.ResourceContents{text("dpe://raw.docs/d1", "application/json", `{"raw":true}`)}, got)

	for _, tc := range []struct {
		uri     string
		code    protocol.Code
		message string
		details map[string]any
	}{
		{"dpe://raw.docs/d1/pages/99", 4202, "Page out of range", map[string]any{"page_index": float64(99), "page_count": float64(12),
			"mcp_code": float64(4202), "mcp_message": "Page out of range", "mcp_data": map[string]any{"page_index": float64(99), "page_count": float64(12)}}},
		{"dpe://raw.docs/nonexistent", 4201, "Document not found", map[string]any{"doc_ref": "nonexistent",
			"mcp_code": float64(4201), "mcp_message": "Document not found", "mcp_data": map[string]any{"doc_ref": "nonexistent"}}},
		{"dpe://raw.docs/d1/elements/bad-id", 4203, "Element not found", map[string]any{"element_id": "bad-id",
			"mcp_code": float64(4203), "mcp_message": "Element not found", "mcp_data": map[string]any{"element_id": "bad-id"}}},
		{"dpe://raw.docs/gone", 4201, "resource not found: dpe://raw.docs/gone", map[string]any{"uri": "dpe://raw.docs/gone",
			"mcp_code": float64(-32002), "mcp_message": "Resource not found", "mcp_data": map[string]any{"uri": "dpe://raw.docs/gone"}}},
		{"dpe://raw.docs/modern-gone", 4201, "resource not found: dpe://raw.docs/modern-gone", map[string]any{"uri": "dpe://raw.docs/modern-gone",
			"mcp_code": float64(-32602), "mcp_message": "Resource not found: dpe://raw.docs/modern-gone"}},
		{"dpe://raw.docs/quota", 500, "Internal error from third-party server", map[string]any{"mcp_code": float64(-32603),
			"mcp_message": "Internal error from third-party server", "mcp_data": map[string]any{"reason": "quota", "retry_after": float64(30)}}},
	} {
		t.Run(tc.uri, func(t *testing.T) {
			_, err := b.Read(sourcetest.Ctx(t), tc.uri)
			pe := requireCode(t, err, tc.code)
			assert.Equal(t, tc.message, pe.Message)
			// The Agent receives exactly this flat error payload.
			raw, err := json.Marshal(pe)
			require.NoError(t, err)
			require.NoError(t, protocol.Validate(protocol.EventReadResource, protocol.Ack, raw))
			var wire struct {
				Error struct {
					Details map[string]any `json:"details"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal(raw, &wire))
			assert.Equal(t, tc.details, wire.Error.Details)
		})
	}
}

// The testmcp program over stdio: its dpe reads carry Finder errors in the
// kit's encoding; the host is learned from its resources and its
// "dpe://proc.docs{+rest}" template.
func TestBridgeStdioProcess(t *testing.T) {
	b := New()
	require.NoError(t, b.AddSource(sourcetest.Ctx(t), sourcetest.DialStdio(t, "proc", testmcp.Binary(t), "-host", "proc.docs", "-docs", "2")))

	got, err := b.Read(sourcetest.Ctx(t), "dpe://proc.docs/doc-1/pages/0")
	require.NoError(t, err)
	var page protocol.DPEPage
	require.NoError(t, json.Unmarshal([]byte(*got[0].Text), &page))
	assert.Equal(t, 0, page.PageIndex)

	_, err = b.Read(sourcetest.Ctx(t), "dpe://proc.docs/doc-1/pages/99")
	pe := requireCode(t, err, protocol.CodePageOutOfRange)
	assert.Equal(t, float64(99), pe.Details["page_index"])
	_, err = b.Read(sourcetest.Ctx(t), "dpe://proc.docs/nope")
	pe = requireCode(t, err, protocol.CodeDocumentNotFound)
	assert.Equal(t, "nope", pe.Details["doc_ref"])
	_, err = b.Read(sourcetest.Ctx(t), "dpe://proc.docs/doc-1/elements/zz")
	requireCode(t, err, protocol.CodeElementNotFound)
	got, err = b.Read(sourcetest.Ctx(t), "window://proc.docs/main?priority=50")
	require.NoError(t, err)
	assert.Contains(t, *got[0].Text, "window main")
}

func TestRouteOfTemplate(t *testing.T) {
	for tpl, want := range map[string]string{
		"dpe://com.example.docs/{doc_ref}/pages/{page_index}": "dpe://com.example.docs",
		"dpe://Test{+rest}":   "dpe://test",
		"dpe://docs{/doc}":    "dpe://docs",
		"dpe://docs{?format}": "dpe://docs",
		"window://h/{path}":   "window://h",
		"dpe://{host}/{doc}":  "",
		"dpe://pre{host}/x":   "",
		"{scheme}://h/x":      "",
		"no-scheme/{x}":       "",
		"dpe://":              "",
	} {
		r, ok := routeOfTemplate(tpl)
		got := ""
		if ok {
			got = r.scheme + "://" + r.host
		}
		assert.Equal(t, want, got, tpl)
	}
}

// heldSource holds its listings until released.
type heldSource struct {
	mcpsource.Source
	entered, release chan struct{}
}

func (h heldSource) ListResources(ctx context.Context) ([]mcp.Resource, error) {
	close(h.entered)
	select {
	case <-h.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return h.Source.ListResources(ctx)
}

// A source added again (a resync, or a restarted server) keeps its hosts
// routed while it is listed anew: reads in that window reach it instead of
// answering 4201.
func TestBridgeKeepsRoutesWhileRelearning(t *testing.T) {
	_, url := docServer(t)
	b := New()
	cl := sourcetest.DialHTTP(t, "alpha", url)
	require.NoError(t, b.AddSource(sourcetest.Ctx(t), cl))
	held := heldSource{Source: cl, entered: make(chan struct{}), release: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- b.AddSource(sourcetest.Ctx(t), held) }()
	<-held.entered // the new source is in place, its listing held
	_, err := b.Read(sourcetest.Ctx(t), "dpe://a.docs/d1")
	assert.NoError(t, err, "routed while the listing is held")
	close(held.release)
	require.NoError(t, <-done)
	_, err = b.Read(sourcetest.Ctx(t), "dpe://a.docs/d1")
	assert.NoError(t, err)
}
