package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
)

// SupportsCompletions reports whether the server declared the completions
// capability at initialize.
func (c *Conn) SupportsCompletions() bool { return c.caps.Completions != nil }

// SupportsPrompts reports whether the server declared the prompts
// capability at initialize.
func (c *Conn) SupportsPrompts() bool { return c.caps.Prompts != nil }

// ListPrompts lists every prompt, following cursors, within the bounds of
// one listing (see Listing bounds in the package documentation).
func (c *Conn) ListPrompts(ctx context.Context) ([]mcp.Prompt, error) {
	return listAll(ctx, c, string(mcp.MethodPromptsList), "prompts", func(r *mcp.ListPromptsResult) ([]mcp.Prompt, mcp.Cursor) {
		return r.Prompts, r.NextCursor
	})
}

// Complete sends completion/complete for one argument of ref (MCP,
// Completion) with the arguments already chosen, and returns the server's
// completion as it came, or a *mcpsource.RPCError for a JSON-RPC error
// answer (https://github.com/a2c-smcp/smcp-go/blob/main/spec/finder.md#completion).
func (c *Conn) Complete(ctx context.Context, ref protocol.CompleteRef, arg protocol.CompleteReqArgument, chosen map[string]string) (protocol.CompletionValues, error) {
	rctx, cancel := c.reqCtx(ctx)
	defer cancel()
	params := map[string]any{"ref": ref, "argument": arg}
	if len(chosen) > 0 {
		params["context"] = map[string]any{"arguments": chosen}
	}
	raw, err := c.raw(rctx, string(mcp.MethodCompletionComplete), params)
	if err != nil {
		return protocol.CompletionValues{}, err
	}
	var res struct {
		Completion *struct {
			Values  []string `json:"values"`
			Total   *int     `json:"total"`
			HasMore *bool    `json:"hasMore"`
		} `json:"completion"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Completion == nil {
		return protocol.CompletionValues{}, fmt.Errorf("mcp server %q: completion/complete: answer is not a completion result", c.name)
	}
	out := protocol.CompletionValues{Values: res.Completion.Values, Total: res.Completion.Total, HasMore: res.Completion.HasMore}
	if out.Values == nil {
		out.Values = []string{}
	}
	return out, nil
}
