package agent

import (
	"context"
	"fmt"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// JoinOffice joins office as an Agent (spec/protocol.md, Offices: at most one
// Agent per office, no switching office while in one). A refusal is a
// *protocol.Error (see officeRefusal for its code). After a successful join
// the Client lists the office and fetches the tools of every Computer in it
// into its tool cache, in the background; it rejoins the office by itself
// after a reconnection.
func (c *Client) JoinOffice(ctx context.Context, office string) error {
	if err := c.join(ctx, office, true); err != nil {
		return err
	}
	c.notifier.syncOffice()
	return nil
}

// join sends server:join_office and records the office. gated is false for
// the rejoin after a reconnection, which must not wait for readiness.
func (c *Client) join(ctx context.Context, office string, gated bool) error {
	req := protocol.EnterOfficeReq{Role: protocol.RoleAgent, Name: c.cfg.name, OfficeID: office}
	check := func(vals []any) error { return decodeOfficeAck(protocol.EventJoinOffice, vals) }
	var err error
	if gated {
		_, err = c.request(ctx, protocol.EventJoinOffice, req, check)
	} else {
		var vals []any
		if vals, err = c.send(ctx, protocol.EventJoinOffice, req, true); err == nil {
			err = check(vals)
		}
	}
	if err != nil {
		return err
	}
	c.mu.Lock()
	changed := c.office != office
	c.office = office
	c.mu.Unlock()
	if changed {
		c.tools.reset()
	}
	c.log.Info("joined the office", "office", office)
	return nil
}

// LeaveOffice leaves the office the Client is in; it fails with 4103 when
// it is in none. The tool cache is emptied.
func (c *Client) LeaveOffice(ctx context.Context) error {
	office := c.Office()
	if office == "" {
		return protocol.NewNotInRoom("%s: the agent is in no office", protocol.EventLeaveOffice)
	}
	_, err := c.request(ctx, protocol.EventLeaveOffice, protocol.LeaveOfficeReq{OfficeID: office},
		func(vals []any) error { return decodeOfficeAck(protocol.EventLeaveOffice, vals) })
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.office == office {
		c.office = ""
	}
	c.mu.Unlock()
	c.tools.reset()
	c.log.Info("left the office", "office", office)
	return nil
}

// decodeOfficeAck checks the two ack values (ok, reason) of join/leave.
func decodeOfficeAck(event string, vals []any) error {
	if err := protocol.ValidateValue(event, protocol.Ack, vals); err != nil {
		if len(vals) != 2 {
			return invalidAnswer(event, fmt.Errorf("%d ack values, want 2 (ok, reason)", len(vals)))
		}
		return invalidAnswer(event, err)
	}
	if ok, _ := vals[0].(bool); ok {
		return nil
	}
	reason, _ := vals[1].(string)
	return officeRefusal(event, reason)
}

// ListRoom lists the sessions of the Agent's office (server:list_room): its
// Computers and itself.
func (c *Client) ListRoom(ctx context.Context) ([]protocol.SessionInfo, error) {
	office := c.Office()
	if office == "" {
		return nil, protocol.NewNotInRoom("%s: the agent is in no office", protocol.EventListRoom)
	}
	id := c.nextReqID()
	ret, err := call[protocol.ListRoomRet](ctx, c, protocol.EventListRoom, id,
		protocol.ListRoomReq{Agent: c.cfg.name, ReqID: id, OfficeID: office})
	if err != nil {
		return nil, err
	}
	return ret.Sessions, nil
}

// ComputerNames returns the names of the Computers among sessions, in order.
func ComputerNames(sessions []protocol.SessionInfo) []string {
	var out []string
	for _, s := range sessions {
		if s.Role == protocol.RoleComputer {
			out = append(out, s.Name)
		}
	}
	return out
}
