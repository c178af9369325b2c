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
	maxPageEntries = 2 * maxListEntries // one page over it is refused undecoded
	maxListBytes   = 64 << 20
)

// listAll sends method page after page, following nextCursor, and returns
// every entry. A repeated cursor fails with 500; a listing over maxListPages
// or maxListBytes fails with 413, so that the Computer never spends
// unbounded memory or work on one server's listing. A listing over
// maxListEntries keeps its first maxListEntries entries and stops there,
// with one WARN (code 413): a folder of 100,000 documents (100,001
// resources with its catalog) must list its first 100,000, not none. field
// names the array of entries in a page: a page's entries are counted (a
// scan that allocates nothing per entry) before it is decoded, and a page
// of more than maxPageEntries is refused with 413 undecoded (a 30 MB page
// of 800,000 resources took 430 MiB of heap to decode, 140 MiB to count and
// refuse, mostly the transport's copies of the message).
func listAll[R any, E any](ctx context.Context, c *Conn, method, field string, page func(*R) ([]E, mcp.Cursor)) ([]E, error) {
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
		malformed := func(err error) error {
			return protocol.NewInternal("mcp server %q: %s: malformed page %d: %v", c.name, method, pages, err).
				With("server", c.name)
		}
		tooLarge := func(entries int) error {
			return protocol.NewPayloadTooLarge("mcp server %q: %s goes on past the Computer's limit (%d pages, %d entries, %d bytes)",
				c.name, method, maxListPages, maxListEntries, maxListBytes).
				With("server", c.name).With("pages", pages).With("entries", entries).With("bytes", size)
		}
		n, err := countEntries(raw, field)
		if err != nil {
			return nil, malformed(err)
		}
		if n > maxPageEntries || size > maxListBytes {
			return nil, tooLarge(len(out) + n)
		}
		var r R
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, malformed(err)
		}
		entries, next := page(&r)
		if keep := maxListEntries - len(out); len(entries) > keep {
			c.log.Warn("mcp server lists more entries than the Computer keeps; keeping the first ones",
				"method", method, "code", int(protocol.CodePayloadTooLarge), "kept", maxListEntries,
				"listed_at_least", len(out)+len(entries), "pages", pages)
			return append(out, entries[:keep]...), nil
		}
		out = append(out, entries...)
		switch {
		case next == "":
			return out, nil
		case seen[next]: // the current cursor included
			return nil, protocol.NewInternal("mcp server %q: %s: cursor repeated after %d pages", c.name, method, pages).
				With("server", c.name)
		case pages >= maxListPages:
			return nil, tooLarge(len(out))
		}
		seen[next] = true
		cursor = next
	}
}

// countEntries counts the elements of the array field of a page
// ("resources", "resourceTemplates", "tools" or "prompts") without copying or keeping
// them.
func countEntries(raw json.RawMessage, field string) (int, error) {
	var probe struct {
		Resources         entryCount `json:"resources"`
		ResourceTemplates entryCount `json:"resourceTemplates"`
		Tools             entryCount `json:"tools"`
		Prompts           entryCount `json:"prompts"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return 0, err
	}
	switch field {
	case "resources":
		return int(probe.Resources), nil
	case "resourceTemplates":
		return int(probe.ResourceTemplates), nil
	case "tools":
		return int(probe.Tools), nil
	case "prompts":
		return int(probe.Prompts), nil
	}
	return 0, fmt.Errorf("unknown listing field %q", field)
}

// entryCount decodes an array as the number of its elements: each is
// decoded into an empty struct, and the bytes are the decoder's own (no
// copy).
type entryCount int

func (n *entryCount) UnmarshalJSON(b []byte) error {
	var items []struct{}
	if err := json.Unmarshal(b, &items); err != nil {
		return err
	}
	*n = entryCount(len(items))
	return nil
}
