package dpekit

import (
	"context"
	"io"
	"os"

	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio serves s over the process's standard input and output, the way a
// Computer runs an MCP server it launched (spec/protocol.md, Routed requests),
// until ctx ends or standard input closes.
func ServeStdio(ctx context.Context, s *Server) error {
	return ServeIO(ctx, s, os.Stdin, os.Stdout)
}

// ServeIO serves s as a stdio MCP server over in and out until ctx ends or
// in reaches EOF. Diagnostics go to standard error, never to out.
func ServeIO(ctx context.Context, s *Server, in io.Reader, out io.Writer) error {
	return server.NewStdioServer(s.mcp).Listen(ctx, in, out)
}

// NewStreamableHTTPHandler returns an http.Handler serving s over MCP's
// streamable HTTP transport in stateful mode (server.WithStateful(true)), so
// a client reaching a restarted server learns that its session is gone
// instead of silently losing its subscriptions. opts are applied after the
// kit's. Call Shutdown on the returned server before Close on s.
func NewStreamableHTTPHandler(s *Server, opts ...server.StreamableHTTPOption) *server.StreamableHTTPServer {
	all := append([]server.StreamableHTTPOption{server.WithStateful(true)}, opts...)
	return server.NewStreamableHTTPServer(s.mcp, all...)
}
