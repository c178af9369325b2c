package computer

import (
	"context"
	"errors"
	"slices"

	"github.com/a2c-smcp/smcp-go/computer/bridge"
	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
)

// Complete answers client:complete, an smcp-go extension
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/finder.md#completion):
// it finds the MCP server that owns req.Ref — req.Server when set; for a
// resource the server serving its URI's scheme and host, as reads are
// routed (none: 4201; down: 503); for a prompt the first server by name
// that lists it (none: 404) — and forwards completion/complete. A server
// without the completions capability is 4106; its errors are mapped as
// reads' are (bridge.MapError); an answer of more than 100 values is 500.
func (c *Computer) Complete(ctx context.Context, req protocol.CompleteReq) (protocol.CompleteRet, error) {
	m := c.Manager()
	if m == nil {
		return protocol.CompleteRet{}, protocol.NewInternal("computer not started")
	}
	conn, perr := c.completer(ctx, m, req)
	if perr != nil {
		return protocol.CompleteRet{}, perr
	}
	if !conn.SupportsCompletions() {
		return protocol.CompleteRet{}, protocol.NewNotSupported("the MCP server %q does not offer completion", conn.Name()).
			With("server", conn.Name()).With("capability", "completions")
	}
	var chosen map[string]string
	if req.Context != nil {
		chosen = req.Context.Arguments
	}
	if _, has := ctx.Deadline(); !has {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, bridge.DefaultReadTimeout)
		defer cancel()
	}
	out, err := conn.Complete(ctx, req.Ref, req.Argument, chosen)
	if err != nil {
		e := bridge.MapError(err, refLabel(req.Ref))
		c.log.Debug("completion failed", "server", conn.Name(), "ref", refLabel(req.Ref), "code", e.Code, "err", err)
		return protocol.CompleteRet{}, e
	}
	if len(out.Values) > 100 {
		return protocol.CompleteRet{}, protocol.NewInternal("the MCP server %q answered %d completion values; MCP allows at most 100", conn.Name(), len(out.Values)).
			With("server", conn.Name())
	}
	return protocol.CompleteRet{Completion: out, ReqID: req.ReqID}, nil
}

func refLabel(ref protocol.CompleteRef) string {
	if ref.URI != nil {
		return *ref.URI
	}
	if ref.Name != nil {
		return "prompt " + *ref.Name
	}
	return string(ref.Type)
}

// completer finds the connection that completes req.Ref.
func (c *Computer) completer(ctx context.Context, m *mcpclient.Manager, req protocol.CompleteReq) (*mcpclient.Conn, *protocol.Error) {
	byName := func(name string) (*mcpclient.Conn, *protocol.Error) {
		if conn := m.Conn(name); conn != nil {
			return conn, nil
		}
		if _, known := m.Config(name); known {
			return nil, protocol.NewUnavailable("the MCP server %q is not running; retry later", name).With("server", name)
		}
		return nil, protocol.NewNotFound("this computer has no MCP server %q", name).With("server", name)
	}
	if req.Server != "" {
		return byName(req.Server)
	}
	switch req.Ref.Type {
	case protocol.CompleteRefTypeRefResource:
		uri := ""
		if req.Ref.URI != nil {
			uri = *req.Ref.URI
		}
		name, _, ok := c.bridge.Owner(uri)
		if !ok {
			return nil, protocol.NewDocumentNotFound("no MCP server serves %s", clipRef(uri)).With("uri", clipRef(uri))
		}
		return byName(name)
	case protocol.CompleteRefTypeRefPrompt:
		name := ""
		if req.Ref.Name != nil {
			name = *req.Ref.Name
		}
		conns := m.Conns() // by server name
		var errs []error
		for _, conn := range conns {
			if !conn.SupportsPrompts() {
				continue
			}
			prompts, err := conn.ListPrompts(ownReads(ctx))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if slices.ContainsFunc(prompts, func(p mcp.Prompt) bool { return p.Name == name }) {
				return conn, nil
			}
		}
		if len(errs) > 0 {
			c.log.Debug("completion: listing prompts failed", "err", errors.Join(errs...))
		}
		return nil, protocol.NewNotFound("no MCP server of this computer has a prompt %q", name).With("prompt", name)
	}
	return nil, protocol.NewBadRequest("unknown ref type %q", req.Ref.Type)
}

func clipRef(s string) string {
	if len(s) > 256 {
		return s[:256] + "…"
	}
	return s
}

// Complete answers client:complete (sio.Completer).
func (h handler) Complete(ctx context.Context, _ protocol.Generation, req protocol.CompleteReq) (protocol.CompleteRet, error) {
	ret, err := h.c.Complete(ctx, req)
	if err != nil {
		return protocol.CompleteRet{}, protocol.AsError(err)
	}
	return ret, nil
}
