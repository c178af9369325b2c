package protocol

// Result metadata of a tool call (spec/generations.md, Tool results). 0.2.0
// writes a CallToolResult's metadata as "_meta" (CallToolResult.Meta); the
// 0.3.0 and 0.4.0 references write it as "meta"
// (CallToolResult.MetaUnaliased), with markers of their own.
const (
	// MetaCancelled marks the answer to a call the Agent cancelled
	// (server:tool_call_cancel), with MetaCancelReason.
	MetaCancelled = "a2c_cancelled"
	// MetaCancelReason says why; the references write CancelReasonAgent.
	MetaCancelReason = "a2c_cancel_reason"
	// MetaTimeout marks the answer to a call that ran out of its timeout.
	MetaTimeout = "a2c_timeout"
	// MetaErrorCode is the code of a 4006 or 4007 result; MetaMCPServer the
	// bundle_id of the MCP server concerned; MetaAuthHint the hint
	// {action, message} for the user.
	MetaErrorCode = "error_code"
	MetaMCPServer = "mcp_server"
	MetaAuthHint  = "auth_hint"
	// CancelReasonAgent is the reason of a cancel the Agent asked for.
	CancelReasonAgent = "agent_requested"
)

// ResultMeta returns the result's metadata as any generation writes it:
// "meta" when the result has it, else "_meta" (nil when neither).
func (r CallToolResult) ResultMeta() map[string]any {
	if r.MetaUnaliased != nil {
		return r.MetaUnaliased
	}
	return r.Meta
}

// SetResultMeta stores m where generation g's readers look for it: "_meta"
// in 0.2.0; from 0.3.0 on both "meta", read by the references, and "_meta",
// the MCP name, for readers that know only that.
func (r *CallToolResult) SetResultMeta(g Generation, m map[string]any) {
	r.Meta = m
	r.MetaUnaliased = nil
	if g.Handshake() {
		r.MetaUnaliased = m
	}
}

// Cancelled reports whether the result answers a cancelled call, and the
// reason given: the 0.3.0/0.4.0 marker meta.a2c_cancelled (or _meta's).
func (r CallToolResult) Cancelled() (cancelled bool, reason string) {
	m := r.ResultMeta()
	c, _ := m[MetaCancelled].(bool)
	reason, _ = m[MetaCancelReason].(string)
	return c, reason
}

// TimedOut reports whether the result carries the marker of a call that
// ran out of time, meta.a2c_timeout (or _meta's).
func (r CallToolResult) TimedOut() bool {
	t, _ := r.ResultMeta()[MetaTimeout].(bool)
	return t
}

// MarkCancelled returns a copy of r marked as the answer to a call the
// Agent cancelled, as the 0.4 references mark it: isError and meta
// {a2c_cancelled: true, a2c_cancel_reason}; other metadata is kept. (The
// references also send an empty structuredContent, which an empty map of
// this type leaves out; no reader tells the two apart.) For g 0.2.0 the
// markers go into _meta.
func (r CallToolResult) MarkCancelled(g Generation, reason string) CallToolResult {
	return r.mark(g, map[string]any{MetaCancelled: true, MetaCancelReason: reason})
}

// MarkTimedOut returns a copy of r marked as the answer to a call that ran
// out of time: isError, meta {a2c_timeout: true}.
func (r CallToolResult) MarkTimedOut(g Generation) CallToolResult {
	return r.mark(g, map[string]any{MetaTimeout: true})
}

func (r CallToolResult) mark(g Generation, marks map[string]any) CallToolResult {
	out := r
	m := map[string]any{}
	for k, v := range r.ResultMeta() {
		m[k] = v
	}
	for k, v := range marks {
		m[k] = v
	}
	isErr := true
	out.IsError = &isErr
	out.SetResultMeta(g, m)
	return out
}
