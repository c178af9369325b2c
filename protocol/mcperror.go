package protocol

import (
	"encoding/json"
	"strings"
)

// MCPErrorPrefix starts the JSON-RPC error message by which an MCP server
// built with smcp-go's dpekit carries a protocol error through MCP SDKs that
// only transmit a message.
//
// mcp-go (v1.2.1) sends any error a resource handler returns as JSON-RPC
// error -32603 with the message alone, and its client turns error codes it
// does not know into a bare message. So the code, message and details of a
// Finder error (4201–4204) travel inside the message text:
//
//	smcp-error {"code":4202,"message":"page 12 out of range","details":{"page_index":12,"page_count":5}}
//
// The Computer's read bridge decodes it back into the same *Error the MCP
// server raised, so the Agent sees the original code (spec/decisions.md).
const MCPErrorPrefix = "smcp-error "

type mcpErrorBody struct {
	Code    Code           `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// EncodeMCPErrorMessage returns the JSON-RPC error message that carries e.
func EncodeMCPErrorMessage(e *Error) string {
	b, err := json.Marshal(mcpErrorBody{Code: e.Code, Message: e.Message, Details: e.Details})
	if err != nil {
		// Details that cannot be encoded are dropped rather than losing the code.
		b, _ = json.Marshal(mcpErrorBody{Code: e.Code, Message: e.Message})
	}
	return MCPErrorPrefix + string(b)
}

// DecodeMCPErrorMessage recovers the *Error carried by a JSON-RPC error
// message made by EncodeMCPErrorMessage. SDKs may wrap the message (for
// example "request failed: smcp-error {...}"), so the prefix is searched for
// anywhere in msg. It returns (nil, false) when msg carries no error.
func DecodeMCPErrorMessage(msg string) (*Error, bool) {
	i := strings.Index(msg, MCPErrorPrefix)
	if i < 0 {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(msg[i+len(MCPErrorPrefix):]))
	var body mcpErrorBody
	if err := dec.Decode(&body); err != nil || body.Code == 0 {
		return nil, false
	}
	return &Error{Code: body.Code, Message: body.Message, Details: body.Details}, true
}
