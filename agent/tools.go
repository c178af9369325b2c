package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// GetTools lists a Computer's tools (client:get_tools) and stores them in
// the Client's tool cache.
func (c *Client) GetTools(ctx context.Context, computer string) ([]protocol.SMCPTool, error) {
	epoch := c.tools.epoch(computer)
	tools, err := c.fetchTools(ctx, computer)
	if err != nil {
		return nil, err
	}
	c.tools.store(computer, epoch, tools)
	return tools, nil
}

func (c *Client) fetchTools(ctx context.Context, computer string) ([]protocol.SMCPTool, error) {
	id := c.nextReqID()
	ret, err := call[protocol.GetToolsRet](ctx, c, protocol.EventGetTools, id,
		protocol.GetToolsReq{Agent: c.cfg.name, ReqID: id, Computer: computer})
	if err != nil {
		return nil, err
	}
	if ret.Tools == nil {
		ret.Tools = []protocol.SMCPTool{}
	}
	return ret.Tools, nil
}

// Tools returns the cached tools of a Computer: filled by GetTools, when a
// Computer enters the office or announces a new tool list, and for every
// Computer present when the Client joined. ok is false when nothing is
// cached for it.
func (c *Client) Tools(computer string) (tools []protocol.SMCPTool, ok bool) {
	return c.tools.get(computer)
}

// WaitTools waits until the tool cache holds the tools of computer — the
// Client fills it after JoinOffice, when a Computer enters the office and
// when one announces a new tool list — and, when until is not nil, until
// until returns true for them; then it returns them. A Computer joins its
// office before its MCP servers are up, so its first list may be empty: to
// wait for a tool, pass a condition:
//
//	tools, err := c.WaitTools(ctx, "desk", func(ts []protocol.SMCPTool) bool {
//		return slices.ContainsFunc(ts, func(t protocol.SMCPTool) bool { return t.Name == "search" })
//	})
//
// It fails when ctx ends first (408 wrapping ctx.Err()), when the Client is
// closed (ErrClosed) or when the Server ended the session.
func (c *Client) WaitTools(ctx context.Context, computer string, until func([]protocol.SMCPTool) bool) ([]protocol.SMCPTool, error) {
	for {
		tools, ok, changed := c.tools.watch(computer)
		if ok && (until == nil || until(tools)) {
			return tools, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, contextError("waiting for the tools of "+computer, ctx, "")
		case <-c.Done():
			if err := c.Err(); err != nil {
				return nil, err
			}
			return nil, closedError("waiting for the tools of " + computer)
		}
	}
}

// CachedComputers returns the Computers whose tools are cached, sorted.
func (c *Client) CachedComputers() []string { return c.tools.names() }

// GetConfig reads a Computer's MCP server configuration (client:get_config).
func (c *Client) GetConfig(ctx context.Context, computer string) (*protocol.GetComputerConfigRet, error) {
	id := c.nextReqID()
	return call[protocol.GetComputerConfigRet](ctx, c, protocol.EventGetConfig, "",
		protocol.GetComputerConfigReq{Agent: c.cfg.name, ReqID: id, Computer: computer})
}

// CallTool calls tool on computer with params (client:tool_call) and
// returns the MCP CallToolResult. The tool timeout sent is timeout rounded
// up to whole seconds (DefaultToolTimeout when timeout <= 0).
//
// One rule tells the two outcomes apart: a result is what the Computer
// answered, an error is a call that got no answer from it.
//
//   - The tool's own failure, and the Computer's refusals and limits
//     (4001 tool not found, 4002 disabled, 4003 failed, 4004 the
//     Computer's timeout, 4005 not confirmed), are results with isError
//     set and a nil error; ToolError reads their code.
//   - Everything else is an error (a *protocol.Error, as for every
//     request): a refusal by the Server (400, 403, 404, 408, 429, 503,
//     4103), a malformed answer (500, ErrInvalidAnswer), a closed Client
//     (ErrClosed), a lost connection (503, ErrConnectionLost: the tool may
//     have run), and a call the Agent stopped waiting for — ctx cancelled
//     or past its deadline, or no answer within the tool timeout plus
//     ToolCallGrace — which is a 408 wrapping ctx.Err()
//     (errors.Is(err, context.Canceled) or context.DeadlineExceeded; a
//     Server's own 408 wraps neither).
//
// When the Agent stops waiting, or the Server answers 408, CallTool sends
// server:tool_call_cancel with the call's req_id so that the Computer stops
// the tool (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#routed-requests); the error's details carry
// the req_id and whether the cancel was sent.
//
// In a 0.3/0.4 session, a binary content item the Computer moved to its
// spool comes back with its bytes (WithBlobDrain), read with
// client:get_blob as the reference Agents do.
//
// A refusal for now that the Server made before forwarding the call (429
// or 503 whose details say "forwarded": false: the Computer never saw it)
// is sent again after a jittered pause, within the same bound; the call's
// other failures may come after the tool ran and are never repeated.
func (c *Client) CallTool(ctx context.Context, computer, tool string, params map[string]any, timeout time.Duration) (*protocol.CallToolResult, error) {
	if timeout <= 0 {
		timeout = DefaultToolTimeout
	}
	if params == nil {
		params = map[string]any{}
	}
	seconds := int(math.Ceil(timeout.Seconds()))
	id := c.nextReqID()
	req := protocol.ToolCallReq{Agent: c.cfg.name, ReqID: id, Computer: computer, ToolName: tool, Params: params, Timeout: seconds}
	if f := progressFunc(ctx); f != nil && c.Confirmed() { // only an smcp-go Server relays progress
		req.Progress = true // an extension member (progress.go)
		stop := c.progress.watch(id, computer, f)
		defer stop()
	}

	// The tool call has its own bound; the Client's default request timeout
	// does not apply to it.
	wait := time.Duration(seconds)*time.Second + ToolCallGrace
	// A refusal the Server made before forwarding the call is sent again
	// within the same bound (notForwarded): the tool never ran.
	bound, stop := context.WithTimeout(ctx, wait)
	defer stop()
	var pause backoff
	var vals []any
	var sent bool
	var err error
	for {
		vals, sent, err = c.sendLimit(bound, protocol.EventToolCall, req, false, wait)
		if !sent {
			// Never left (bad request, no connection in time, closed):
			// nothing to cancel.
			return nil, err
		}
		if err == nil {
			res, derr := decodeAnswer[protocol.CallToolResult](protocol.EventToolCall, "", vals)
			if derr == nil {
				if c.cfg.drain > 0 && c.Generation().Handshake() {
					c.drainBlobs(ctx, computer, res, c.cfg.drain)
				}
				return res, nil
			}
			err = derr
		}
		if !notForwarded(err) || !pause.wait(bound, c.closedCh) {
			break
		}
		c.log.Debug("tool call refused before it was forwarded; sending it again", "req_id", id, "error", err)
	}
	if protocol.CodeOf(err) != protocol.CodeTimeout || errors.Is(err, ErrClosed) {
		return nil, err
	}
	// Give up: tell the Computer to stop (spec/protocol.md: an Agent that
	// times out a tool call sends the cancel).
	cerr := c.emitOnly(protocol.EventCancelToolCall, protocol.CancelToolCallReq{Agent: c.cfg.name, ReqID: id})
	if cerr != nil {
		c.log.Warn("could not send the tool call cancel", "req_id", id, "error", cerr)
	} else {
		c.log.Info("tool call abandoned; cancel sent", "computer", computer, "tool", tool, "req_id", id, "error", err)
	}
	return nil, amend(err, func(perr *protocol.Error) *protocol.Error {
		sent := "cancel sent"
		if cerr != nil {
			sent = "cancel not sent: " + protocol.AsError(cerr).Message
		}
		perr = perr.With("req_id", id).With("cancel_sent", cerr == nil)
		perr.Message = fmt.Sprintf("tool call %s on %s abandoned: %s; %s (req_id %s)", tool, computer, perr.Message, sent, id)
		return perr
	})
}

// ToolError returns the error an isError CallToolResult reports, nil for a
// successful result. The code is structuredContent.code when it is an
// integer (the Computer's 4001–4005); else 4004 for a result marked as
// cancelled or timed out the 0.3/0.4 way (meta.a2c_cancelled, with the
// reason in the details' a2c_cancel_reason; meta.a2c_timeout: "meta"
// read before "_meta", protocol.CallToolResult.Cancelled and TimedOut,
// https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#one-source-per-payload);
// else 4003 (tool execution failed). The message is
// structuredContent.error, else the text content.
func ToolError(res *protocol.CallToolResult) *protocol.Error {
	if res == nil || res.IsError == nil || !*res.IsError {
		return nil
	}
	code := protocol.CodeToolExecutionFailed
	cancelled, reason := res.Cancelled()
	if cancelled || res.TimedOut() {
		code = protocol.CodeToolTimeout
	}
	msg := ""
	if sc := res.StructuredContent; sc != nil {
		if n, ok := asInt(sc["code"]); ok && n != 0 {
			code = protocol.Code(n)
		}
		if s, ok := sc["error"].(string); ok {
			msg = s
		}
	}
	if msg == "" {
		for _, b := range res.Content {
			if b.Text != nil && *b.Text != "" {
				if msg != "" {
					msg += "\n"
				}
				msg += *b.Text
			}
		}
	}
	if msg == "" {
		switch {
		case cancelled:
			msg = "tool call cancelled"
		case res.TimedOut():
			msg = "tool call timed out"
		default:
			msg = "tool call failed"
		}
	}
	e := &protocol.Error{Code: code, Message: msg}
	if cancelled {
		e = e.With(protocol.MetaCancelled, true)
		if reason != "" {
			e = e.With(protocol.MetaCancelReason, reason)
		}
	}
	if res.TimedOut() {
		e = e.With(protocol.MetaTimeout, true)
	}
	if sc := res.StructuredContent; sc != nil {
		if t, ok := sc["error_type"].(string); ok {
			e = e.With("error_type", t)
		}
	}
	return e
}

func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		if n == math.Trunc(n) {
			return int(n), true
		}
	}
	return 0, false
}

// toolCache holds the tools of each Computer of the office. Epochs change
// when the office changes (all) or a Computer leaves (that one), so that a
// fetch that began before is not stored afterwards.
type toolCache struct {
	mu      sync.Mutex
	all     uint64
	each    map[string]uint64
	byName  map[string][]protocol.SMCPTool
	changed chan struct{} // closed and replaced at every change (WaitTools)
}

// cacheEpoch identifies the cache state a fetch began in.
type cacheEpoch struct{ all, one uint64 }

func newToolCache() *toolCache {
	return &toolCache{each: map[string]uint64{}, byName: map[string][]protocol.SMCPTool{}, changed: make(chan struct{})}
}

func (t *toolCache) epoch(computer string) cacheEpoch {
	t.mu.Lock()
	defer t.mu.Unlock()
	return cacheEpoch{t.all, t.each[computer]}
}

// store keeps tools unless the cache changed epoch since the fetch began.
func (t *toolCache) store(computer string, e cacheEpoch, tools []protocol.SMCPTool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e != (cacheEpoch{t.all, t.each[computer]}) {
		return false
	}
	t.byName[computer] = slices.Clone(tools)
	t.changedLocked()
	return true
}

// changedLocked wakes the waiters of WaitTools.
func (t *toolCache) changedLocked() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// watch returns what get returns and a channel closed at the next change.
func (t *toolCache) watch(computer string) ([]protocol.SMCPTool, bool, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tools, ok := t.byName[computer]
	return slices.Clone(tools), ok, t.changed
}

func (t *toolCache) get(computer string) ([]protocol.SMCPTool, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tools, ok := t.byName[computer]
	return slices.Clone(tools), ok
}

func (t *toolCache) drop(computer string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.byName, computer)
	t.each[computer]++
}

// keep drops every Computer not in names.
func (t *toolCache) keep(names []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for name := range t.byName {
		if !slices.Contains(names, name) {
			delete(t.byName, name)
			t.each[name]++
		}
	}
}

func (t *toolCache) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.byName)
	t.all++
}

func (t *toolCache) names() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Sorted(maps.Keys(t.byName))
}
