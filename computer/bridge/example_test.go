package bridge_test

import (
	"encoding/json"
	"fmt"

	"github.com/a2c-smcp/smcp-go/computer/bridge"
	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// MapError keeps a Finder error an MCP server sent as a JSON-RPC error, and
// decodes the one an mcp-go server (dpekit) carried in a -32603 message;
// either way the server's own error stays in mcp_code, mcp_message and
// mcp_data.
func ExampleMapError() {
	fromPython := &mcpsource.RPCError{Code: 4202, Message: "Page out of range",
		Data: json.RawMessage(`{"page_index":99,"page_count":12}`)}
	b, _ := json.Marshal(bridge.MapError(fromPython, "dpe://com.example.docs/rpt-2026/pages/99"))
	fmt.Println(string(b))

	fromGo := &mcpsource.RPCError{Code: -32603,
		Message: protocol.EncodeMCPErrorMessage(protocol.NewDocumentNotFound("Document not found").With("doc_ref", "nonexistent"))}
	b, _ = json.Marshal(bridge.MapError(fromGo, "dpe://com.example.docs/nonexistent"))
	fmt.Println(string(b))

	notFound := &mcpsource.RPCError{Code: -32002, Message: "Resource not found"}
	fmt.Println(int(bridge.MapError(notFound, "dpe://com.example.docs/gone").Code))
	// Output:
	// {"error":{"code":4202,"message":"Page out of range","details":{"mcp_code":4202,"mcp_data":{"page_count":12,"page_index":99},"mcp_message":"Page out of range","page_count":12,"page_index":99}}}
	// {"error":{"code":4201,"message":"Document not found","details":{"doc_ref":"nonexistent","mcp_code":-32603,"mcp_message":"smcp-error {\"code\":4201,\"message\":\"Document not found\",\"details\":{\"doc_ref\":\"nonexistent\"}}"}}}
	// 4201
}
