package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/agent/agenttest"
	"github.com/a2c-smcp/smcp-go/protocol"
)

func TestJoinAndLeaveOffice(t *testing.T) {
	p := startPeer(t)
	c, _ := dial(t, p)
	require.Equal(t, "", c.Office())
	require.NoError(t, c.JoinOffice(ctxT(t), "office-1"))
	require.Equal(t, "office-1", c.Office())

	joins := p.Received(protocol.EventJoinOffice)
	require.Len(t, joins, 1)
	require.Equal(t, map[string]any{"role": "agent", "name": "tester", "office_id": "office-1"}, joins[0].Payload)

	require.NoError(t, c.LeaveOffice(ctxT(t)))
	require.Equal(t, "", c.Office())
	leaves := p.Received(protocol.EventLeaveOffice)
	require.Len(t, leaves, 1)
	require.Equal(t, map[string]any{"office_id": "office-1"}, leaves[0].Payload)
}

func TestOfficeRefusalsAndBadAcks(t *testing.T) {
	p := startPeer(t)
	c, _ := dial(t, p)
	cases := []struct {
		name  string
		reply agenttest.Reply
		code  protocol.Code
		msg   string
		inval bool
	}{
		{"refused with a coded reason", agenttest.Values(false, "4101 RoomFull: office full already has an agent"), protocol.CodeRoomFull, "office full already has an agent", false},
		{"refused with a bare code", agenttest.Values(false, "4104 another office"), protocol.CodeCrossRoomAccess, "another office", false},
		{"refused with a plain reason", agenttest.Values(false, "name taken"), protocol.CodeForbidden, "name taken", false},
		{"refused without reason", agenttest.Values(false, nil), protocol.CodeForbidden, "refused", false},
		{"refused with an unknown code", agenttest.Values(false, "9999 odd"), protocol.CodeForbidden, "9999 odd", false},
		{"one value", agenttest.Values(true), protocol.CodeInternal, "want 2", true},
		{"three values", agenttest.Values(true, nil, 1), protocol.CodeInternal, "want 2", true},
		{"no values", agenttest.Values(), protocol.CodeInternal, "want 2", true},
		{"ok is not a boolean", agenttest.Values("yes", nil), protocol.CodeInternal, "/0", true},
		{"reason is not a string", agenttest.Values(false, 42), protocol.CodeInternal, "/1", true},
		{"error payload", agenttest.Answer(map[string]any{"error": map[string]any{"code": 4101, "message": "full"}}), protocol.CodeInternal, "want 2", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p.Reply(protocol.EventJoinOffice, tc.reply)
			defer p.Handle(protocol.EventJoinOffice, nil)
			err := c.JoinOffice(ctxT(t), "office-1")
			perr := requireCode(t, err, tc.code)
			require.Contains(t, perr.Message, tc.msg)
			if tc.inval {
				require.ErrorIs(t, err, agent.ErrInvalidAnswer)
			}
			require.Equal(t, "", c.Office(), "a refused join must not record the office")
		})
	}
	t.Run("the World's full office", func(t *testing.T) {
		requireCode(t, c.JoinOffice(ctxT(t), "full"), protocol.CodeRoomFull)
	})
	t.Run("no answer", func(t *testing.T) {
		p.Reply(protocol.EventJoinOffice, agenttest.Silent())
		defer p.Handle(protocol.EventJoinOffice, nil)
		ctx, cancel := context.WithTimeout(ctxT(t), 200*time.Millisecond)
		defer cancel()
		requireCode(t, c.JoinOffice(ctx, "office-1"), protocol.CodeTimeout)
	})
	t.Run("leave refused", func(t *testing.T) {
		require.NoError(t, c.JoinOffice(ctxT(t), "office-1"))
		p.Reply(protocol.EventLeaveOffice, agenttest.Values(false, "4103 NotInRoom: not in office-1"))
		defer p.Handle(protocol.EventLeaveOffice, nil)
		requireCode(t, c.LeaveOffice(ctxT(t)), protocol.CodeNotInRoom)
		require.Equal(t, "office-1", c.Office(), "a refused leave keeps the office")
	})
	t.Run("leave with a malformed answer", func(t *testing.T) {
		p.Reply(protocol.EventLeaveOffice, agenttest.Answer(true))
		defer p.Handle(protocol.EventLeaveOffice, nil)
		err := c.LeaveOffice(ctxT(t))
		requireCode(t, err, protocol.CodeInternal)
		require.ErrorIs(t, err, agent.ErrInvalidAnswer)
	})
}

// TestNoOfficeCalls: calls needing an office fail with 4103 before sending.
func TestNoOfficeCalls(t *testing.T) {
	p := startPeer(t)
	c, _ := dial(t, p)
	requireCode(t, c.LeaveOffice(ctxT(t)), protocol.CodeNotInRoom)
	_, err := c.ListRoom(ctxT(t))
	requireCode(t, err, protocol.CodeNotInRoom)
	require.Empty(t, p.Received())
}

func TestListRoom(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	sessions, err := c.ListRoom(ctxT(t))
	require.NoError(t, err)
	require.Len(t, sessions, 3)
	require.Equal(t, []string{"alpha", "beta"}, agent.ComputerNames(sessions))
	reqs := p.Received(protocol.EventListRoom)
	require.NotEmpty(t, reqs)
	require.Equal(t, "office-1", reqs[len(reqs)-1].Payload["office_id"])
}
