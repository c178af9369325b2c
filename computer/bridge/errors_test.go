package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const uri = "dpe://a.docs/d1/pages/9"

func TestMapError(t *testing.T) {
	encoded := protocol.EncodeMCPErrorMessage(protocol.NewPageOutOfRange("page 9 out of range").With("page_index", 9).With("page_count", 3))
	for _, tc := range []struct {
		name    string
		err     error
		code    protocol.Code
		message string
		details map[string]any
	}{
		{"protocol error kept", protocol.NewElementNotFound("e").With("element_id", "x"), 4203, "e", map[string]any{"element_id": "x"}},
		{"4202 with object data", &mcpsource.RPCError{Code: 4202, Message: "Page out of range", Data: json.RawMessage(`{"page_index":99,"page_count":12}`)},
			4202, "Page out of range", map[string]any{"page_index": float64(99), "page_count": float64(12),
				"mcp_code": 4202, "mcp_message": "Page out of range", "mcp_data": map[string]any{"page_index": float64(99), "page_count": float64(12)}}},
		{"4201 with string data", &mcpsource.RPCError{Code: 4201, Message: "Document not found", Data: json.RawMessage(`"nonexistent"`)},
			4201, "Document not found", map[string]any{"data": "nonexistent", "mcp_code": 4201, "mcp_message": "Document not found", "mcp_data": "nonexistent"}},
		{"4203 without data", &mcpsource.RPCError{Code: 4203, Message: "Element not found"}, 4203, "Element not found",
			map[string]any{"mcp_code": 4203, "mcp_message": "Element not found"}},
		{"4203 with null data", &mcpsource.RPCError{Code: 4203, Message: "Element not found", Data: json.RawMessage(`null`)}, 4203, "Element not found",
			map[string]any{"mcp_code": 4203, "mcp_message": "Element not found"}},
		{"any 4xxx kept", &mcpsource.RPCError{Code: 4299, Message: "custom"}, 4299, "custom", map[string]any{"mcp_code": 4299, "mcp_message": "custom"}},
		{"known code kept", &mcpsource.RPCError{Code: 4204, Message: "bad uri", Data: json.RawMessage(`{"uri":"x"}`)}, 4204, "bad uri",
			map[string]any{"uri": "x", "mcp_code": 4204, "mcp_message": "bad uri", "mcp_data": map[string]any{"uri": "x"}}},
		{"an SMCP code from an MCP server is marked as the server's", &mcpsource.RPCError{Code: 503, Message: "busy"}, 503, "busy",
			map[string]any{"mcp_code": 503, "mcp_message": "busy"}},
		{"wrapped RPC error", fmt.Errorf("read: %w", &mcpsource.RPCError{Code: 4202, Message: "p"}), 4202, "p", map[string]any{"mcp_code": 4202, "mcp_message": "p"}},
		{"-32002 is 4201", &mcpsource.RPCError{Code: -32002, Message: "handler not found for resource URI"}, 4201, "resource not found: " + uri,
			map[string]any{"uri": uri, "mcp_code": -32002, "mcp_message": "handler not found for resource URI"}},
		{"-32002 keeps its message and data", &mcpsource.RPCError{Code: -32002, Message: "No such report", Data: json.RawMessage(`{"uri":"dpe://a.docs/x","hint":"see catalog"}`)},
			4201, "resource not found: " + uri, map[string]any{"uri": uri, "mcp_code": -32002, "mcp_message": "No such report",
				"mcp_data": map[string]any{"uri": "dpe://a.docs/x", "hint": "see catalog"}}},
		{"-32602 not found is 4201", &mcpsource.RPCError{Code: -32602, Message: "Resource Not Found"}, 4201, "resource not found: " + uri,
			map[string]any{"uri": uri, "mcp_code": -32602, "mcp_message": "Resource Not Found"}},
		{"-32602 otherwise is 500", &mcpsource.RPCError{Code: -32602, Message: "uri is required"}, 500, "uri is required",
			map[string]any{"mcp_code": -32602, "mcp_message": "uri is required"}},
		{"-32603 carrying the kit's encoding", &mcpsource.RPCError{Code: -32603, Message: encoded}, 4202, "page 9 out of range",
			map[string]any{"page_index": float64(9), "page_count": float64(3), "mcp_code": -32603, "mcp_message": encoded}},
		{"kit encoding inside a wrapped message", errors.New("request failed: " + encoded), 4202, "page 9 out of range", map[string]any{"page_index": float64(9), "page_count": float64(3)}},
		{"-32603 plain is 500 with the message", &mcpsource.RPCError{Code: -32603, Message: "disk on fire"}, 500, "disk on fire",
			map[string]any{"mcp_code": -32603, "mcp_message": "disk on fire"}},
		{"-32603 keeps its data", &mcpsource.RPCError{Code: -32603, Message: "Internal error from third-party server", Data: json.RawMessage(`{"reason":"quota","retry_after":30}`)},
			500, "Internal error from third-party server", map[string]any{"mcp_code": -32603, "mcp_message": "Internal error from third-party server",
				"mcp_data": map[string]any{"reason": "quota", "retry_after": float64(30)}}},
		{"non-object data kept", &mcpsource.RPCError{Code: -32000, Message: "x", Data: json.RawMessage(`[1,"two"]`)},
			500, "x", map[string]any{"mcp_code": -32000, "mcp_message": "x", "mcp_data": []any{float64(1), "two"}}},
		{"empty message", &mcpsource.RPCError{Code: -32000}, 500, "MCP server error", map[string]any{"mcp_code": -32000, "mcp_message": ""}},
		{"mcp-go resource-not-found sentinel", fmt.Errorf("%w: gone", mcp.ErrResourceNotFound), 4201, "resource not found: " + uri, map[string]any{"uri": uri}},
		{"deadline is 408", fmt.Errorf("transport error: %w", context.DeadlineExceeded), 408, "reading " + uri + " timed out", map[string]any{"uri": uri}},
		{"cancelled is 500", context.Canceled, 500, "reading " + uri + " was cancelled", map[string]any{"uri": uri}},
		{"connection lost is 503", fmt.Errorf("mcp server \"a\": %w: %w", mcpsource.ErrConnectionLost, context.Canceled), 503,
			"the MCP server serving " + uri + " was lost while answering; it is restarted, try again", map[string]any{"uri": uri}},
		{"transport failure: no address leaked", errors.New("Post \"http://10.1.2.3:8080/mcp\": dial tcp 10.1.2.3:8080: connect: connection refused"),
			500, "reading " + uri + " from its MCP server failed", map[string]any{"uri": uri}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := MapError(tc.err, uri)
			assert.Equal(t, tc.code, got.Code)
			assert.Equal(t, tc.message, got.Message)
			assert.Equal(t, tc.details, got.Details)
			assert.NotContains(t, got.Error(), "10.1.2.3")
		})
	}
}

// TestMapErrorConformance replays the MCP error mapping of the conformance
// suite (conformance/mcp_errors.json).
func TestMapErrorConformance(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "conformance", "mcp_errors.json"))
	require.NoError(t, err)
	var suite struct {
		Cases []struct {
			Name     string `json:"name"`
			URI      string `json:"uri"`
			RPCError struct {
				Code    int             `json:"code"`
				Message string          `json:"message"`
				Data    json.RawMessage `json:"data"`
			} `json:"rpc_error"`
			Expect struct {
				Code    protocol.Code  `json:"code"`
				Message string         `json:"message"`
				Details map[string]any `json:"details"`
			} `json:"expect"`
		} `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &suite))
	require.NotEmpty(t, suite.Cases)
	for _, tc := range suite.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			got := MapError(&mcpsource.RPCError{Code: tc.RPCError.Code, Message: tc.RPCError.Message, Data: tc.RPCError.Data}, tc.URI)
			// Compare as JSON, as the Agent receives it.
			want, err := json.Marshal(map[string]any{"code": tc.Expect.Code, "message": tc.Expect.Message, "details": tc.Expect.Details})
			require.NoError(t, err)
			have, err := json.Marshal(map[string]any{"code": got.Code, "message": got.Message, "details": got.Details})
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(have))
		})
	}
}
