package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
)

// Bounds of one listing (resources/list, resources/templates/list,
// tools/list) followed across its pages: a server whose cursor never ends,
// or that lists without end, costs at most this much (spec/protocol.md,
// Limits). The whole listing is also bounded by the request timeout.
const (
	maxListPages   = 1000
	maxListEntries = 100_000
	maxListBytes   = 64 << 20
)

// listAll sends method page after page, following nextCursor, and returns
// every entry. A repeated cursor fails with 500; a listing over maxListPages,
// maxListEntries or maxListBytes fails with 413, so that the Computer never
// spends unbounded memory or work on one server's listing.
func listAll[R any, E any](ctx context.Context, c *Conn, method string, page func(*R) ([]E, mcp.Cursor)) ([]E, error) {
	rctx, cancel := c.reqCtx(ctx)
	defer cancel()
	var out []E
	seen := map[mcp.Cursor]bool{}
	var cursor mcp.Cursor
	size := 0
	for pages := 1; ; pages++ {
		var params any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		raw, err := c.raw(rctx, method, params)
		if err != nil {
			var rpc *mcpsource.RPCError
			if errors.As(err, &rpc) {
				// Keep mcp-go's sentinel errors (mcp.ErrMethodNotFound …).
				details := mcp.JSONRPCErrorDetails{Code: rpc.Code, Message: rpc.Message}
				return nil, fmt.Errorf("%w: %w", details.AsError(), rpc)
			}
			return nil, err
		}
		size += len(raw)
		var r R
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, protocol.NewInternal("mcp server %q: %s: malformed page %d: %v", c.name, method, pages, err).
				With("server", c.name)
		}
		entries, next := page(&r)
		out = append(out, entries...)
		switch {
		case next == "":
			return out, nil
		case seen[next]: // the current cursor included
			return nil, protocol.NewInternal("mcp server %q: %s: cursor repeated after %d pages", c.name, method, pages).
				With("server", c.name)
		case pages >= maxListPages || len(out) > maxListEntries || size > maxListBytes:
			return nil, protocol.NewPayloadTooLarge("mcp server %q: %s goes on past the Computer's limit (%d pages, %d entries, %d bytes)",
				c.name, method, maxListPages, maxListEntries, maxListBytes).
				With("server", c.name).With("pages", pages).With("entries", len(out)).With("bytes", size)
		}
		seen[next] = true
		cursor = next
	}
}
