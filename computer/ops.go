package computer

import (
	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// Readiness reports whether the Computer serves its office fully: nil when it
// is joined on the Server and every enabled MCP server is up; otherwise a
// 503 *protocol.Error saying what is missing. It is what smcp-computer's
// /readyz answers.
func (c *Computer) Readiness() error {
	c.mu.Lock()
	cl, closed := c.client, c.closed
	c.mu.Unlock()
	switch {
	case closed:
		return protocol.NewUnavailable("computer closed")
	case cl == nil || !cl.Joined():
		return protocol.NewUnavailable("not joined to its office")
	}
	var notUp []string
	for _, st := range c.Status() {
		if st.State != mcpclient.StateUp && st.State != mcpclient.StateDisabled {
			notUp = append(notUp, st.Name+" is "+string(st.State))
		}
	}
	if len(notUp) > 0 {
		return protocol.NewUnavailable("MCP servers not up: %v", notUp).With("servers", notUp)
	}
	return nil
}
