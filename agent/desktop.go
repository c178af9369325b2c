package agent

import (
	"context"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// DesktopQuery selects what GetDesktop returns (https://github.com/a2c-smcp/smcp-go/blob/main/spec/desktop.md#desktop).
type DesktopQuery struct {
	// Size is the number of windows wanted: nil for all, <= 0 for none.
	Size *int
	// Window asks for this one window:// URI directly.
	Window string
}

// GetDesktop reads a Computer's organised desktop (client:get_desktop):
// each entry is a window rendered as "URI" or "URI\n\nbody".
func (c *Client) GetDesktop(ctx context.Context, computer string, q DesktopQuery) ([]string, error) {
	id := c.nextReqID()
	req := protocol.GetDesktopReq{Agent: c.cfg.name, ReqID: id, Computer: computer, DesktopSize: q.Size}
	if q.Window != "" {
		w := q.Window
		req.Window = w
	}
	ret, err := call[protocol.GetDesktopRet](ctx, c, protocol.EventGetDesktop, id, req)
	if err != nil {
		return nil, err
	}
	if ret.Desktops == nil {
		ret.Desktops = []string{}
	}
	return ret.Desktops, nil
}
