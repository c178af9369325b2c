package mcpsource

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestContents(t *testing.T) {
	str := func(s string) *string { return &s }
	var nilText *mcp.TextResourceContents
	got := Contents([]mcp.ResourceContents{
		mcp.TextResourceContents{URI: "dpe://h/d", MIMEType: "application/json", Text: `{"a":1}`, Meta: map[string]any{"k": "v"}},
		&mcp.TextResourceContents{URI: "window://h/w", Text: ""},
		mcp.BlobResourceContents{URI: "dpe://h/img", MIMEType: "image/png", Blob: "iVBO"},
		&mcp.BlobResourceContents{URI: "dpe://h/b", Blob: "AA=="},
		nilText,
		nil,
	})
	assert.Equal(t, []protocol.ResourceContents{
		{URI: "dpe://h/d", MimeType: "application/json", Text: str(`{"a":1}`), Meta: map[string]any{"k": "v"}},
		{URI: "window://h/w", Text: str("")},
		{URI: "dpe://h/img", MimeType: "image/png", Blob: str("iVBO")},
		{URI: "dpe://h/b", Blob: str("AA==")},
	}, got)
	assert.NotNil(t, Contents(nil))

	raw, err := json.Marshal(protocol.ReadResourceRet{Contents: got, ReqID: "r"})
	require.NoError(t, err)
	require.NoError(t, protocol.Validate(protocol.EventReadResource, protocol.Ack, raw))
}

func TestRPCError(t *testing.T) {
	err := fmt.Errorf("read: %w", &RPCError{Code: 4202, Message: "page out of range", Data: json.RawMessage(`{"page_index":9}`)})
	var rpc *RPCError
	require.True(t, errors.As(err, &rpc))
	assert.Equal(t, 4202, rpc.Code)
	assert.Equal(t, "read: mcp error 4202: page out of range", err.Error())
}
