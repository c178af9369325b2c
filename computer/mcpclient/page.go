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

// ListResourcesPage sends one resources/list with cursor ("" for the first
// page) and returns that page and its nextCursor, for client:get_resources,
// which passes the server's pages through one by one
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/capabilities.md#resources).
// A page of more than 200,000 entries is refused with 413 undecoded.
func (c *Conn) ListResourcesPage(ctx context.Context, cursor string) ([]mcp.Resource, string, error) {
	rctx, cancel := c.reqCtx(ctx)
	defer cancel()
	var params any
	if cursor != "" {
		params = map[string]any{"cursor": cursor}
	}
	raw, err := c.raw(rctx, string(mcp.MethodResourcesList), params)
	if err != nil {
		var rpc *mcpsource.RPCError
		if errors.As(err, &rpc) {
			details := mcp.JSONRPCErrorDetails{Code: rpc.Code, Message: rpc.Message}
			return nil, "", fmt.Errorf("%w: %w", details.AsError(), rpc)
		}
		return nil, "", err
	}
	malformed := func(err error) error {
		return protocol.NewInternal("mcp server %q: resources/list: malformed page: %v", c.name, err).With("server", c.name)
	}
	n, err := countEntries(raw, "resources")
	if err != nil {
		return nil, "", malformed(err)
	}
	if n > maxPageEntries {
		return nil, "", protocol.NewPayloadTooLarge("mcp server %q: resources/list page of %d entries, more than %d", c.name, n, maxPageEntries).With("server", c.name)
	}
	var res mcp.ListResourcesResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, "", malformed(err)
	}
	return res.Resources, string(res.NextCursor), nil
}
