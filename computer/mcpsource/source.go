// Package mcpsource defines how the Computer's resource features — the Desktop
// (spec/desktop.md, Desktop), the Finder (spec/finder.md) and the read bridge
// (spec/finder.md, Reading through the Computer) — see one connected MCP
// server.
//
// The MCP manager implements Source for every supervised connection; the
// features only list, read and subscribe, so they can be tested against any
// MCP endpoint.
package mcpsource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

// Source is one connected MCP server as the Finder, the Desktop and the read
// bridge see it. Implementations must be safe for concurrent use.
type Source interface {
	// Name is the server's configured name (DPEDocumentSummary.server).
	Name() string
	// SupportsSubscribe reports whether the initialize result declared
	// resources.subscribe. The Desktop and the Finder ignore servers that
	// did not.
	SupportsSubscribe() bool
	// ListResources lists every resource, following cursors across pages.
	ListResources(ctx context.Context) ([]mcp.Resource, error)
	// ListResourceTemplates lists every resource template, following cursors.
	ListResourceTemplates(ctx context.Context) ([]mcp.ResourceTemplate, error)
	// ReadResource sends resources/read. A JSON-RPC error answer must be
	// returned as a *RPCError that keeps the server's code, message and data;
	// other failures (transport, context deadline) are returned as they are.
	ReadResource(ctx context.Context, uri string) ([]mcp.ResourceContents, error)
	// Subscribe sends resources/subscribe for uri.
	Subscribe(ctx context.Context, uri string) error
}

// ErrConnectionLost is wrapped by the errors of requests that failed
// because the connection to the MCP server was lost meanwhile (it died in
// the middle of an answer, or was stopped): the server is unavailable, not
// the request wrong (spec/protocol.md, Errors: 503).
var ErrConnectionLost = errors.New("connection to the MCP server lost")

// RPCError is a JSON-RPC error answered by an MCP server, with the code,
// message and data exactly as the server sent them.
type RPCError struct {
	Code    int
	Message string
	Data    json.RawMessage
}

// Error implements error.
func (e *RPCError) Error() string {
	return fmt.Sprintf("mcp error %d: %s", e.Code, e.Message)
}
