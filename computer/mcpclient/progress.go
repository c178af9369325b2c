package mcpclient

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
)

// Progress is one MCP notifications/progress of a request (MCP, Progress):
// Progress so far, Total when HasTotal, and an optional Message.
type Progress struct {
	Progress float64
	Total    float64
	HasTotal bool
	Message  string
}

type progressKey struct{}

// WithProgress returns a context whose tools/call (CallTool) or
// resources/read (ReadResource) asks the MCP server for progress: it
// carries a progressToken, and each notifications/progress of that token is
// passed to f while the request runs
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#updates-and-notifications,
// Tool-call progress). f runs on the connection's reader: it must return
// at once (store the value, signal a goroutine).
func WithProgress(ctx context.Context, f func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

func progressOf(ctx context.Context) func(Progress) {
	f, _ := ctx.Value(progressKey{}).(func(Progress))
	return f
}

// watchProgress registers f under a new progress token and returns the
// token and the function that unregisters it.
func (c *Conn) watchProgress(f func(Progress)) (string, func()) {
	token := "smcp-progress-" + strconv.FormatInt(c.rawID.Add(1), 10)
	c.progressMu.Lock()
	if c.progress == nil {
		c.progress = map[string]func(Progress){}
	}
	c.progress[token] = f
	c.progressMu.Unlock()
	return token, func() {
		c.progressMu.Lock()
		delete(c.progress, token)
		c.progressMu.Unlock()
	}
}

// onProgress passes a notifications/progress to the call that registered
// its token; others (unknown tokens, late ones) are ignored.
func (c *Conn) onProgress(n mcp.JSONRPCNotification) {
	if n.Method != string(mcp.MethodNotificationProgress) {
		return
	}
	raw, err := json.Marshal(n.Params)
	if err != nil {
		return
	}
	var p struct {
		Token    any      `json:"progressToken"`
		Progress *float64 `json:"progress"`
		Total    *float64 `json:"total"`
		Message  string   `json:"message"`
	}
	if json.Unmarshal(raw, &p) != nil || p.Progress == nil {
		return
	}
	token, ok := p.Token.(string)
	if !ok {
		return
	}
	c.progressMu.Lock()
	f := c.progress[token]
	c.progressMu.Unlock()
	if f == nil {
		return
	}
	out := Progress{Progress: *p.Progress, Message: p.Message}
	if p.Total != nil {
		out.Total, out.HasTotal = *p.Total, true
	}
	f(out)
}
