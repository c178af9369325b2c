package server_test

import (
	"encoding/json"
	"testing"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/require"
)

const (
	agentRole    = protocol.RoleAgent
	computerRole = protocol.RoleComputer
)

// TestJoinRefusals covers every refusal of server:join_office (PROTOCOL.md,
// Offices): each case prepares a state with setup, then one session joins and
// must be refused with the code in its (false, reason) ack.
func TestJoinRefusals(t *testing.T) {
	type join struct {
		role         protocol.Role
		name, office string
	}
	cases := []struct {
		name   string
		setup  []join // joins done by other sessions first
		first  *join  // a join done by the tested session first
		second join
		code   protocol.Code
		reason string
	}{
		{"second agent in an office", []join{{agentRole, "a1", "o1"}}, nil, join{agentRole, "a2", "o1"}, protocol.CodeRoomFull, `office "o1" already has an agent`},
		{"agent already in another office", nil, &join{agentRole, "a1", "o1"}, join{agentRole, "a1", "o2"}, protocol.CodeForbidden, "already in office"},
		{"computer name taken in the office", []join{{computerRole, "c1", "o1"}}, nil, join{computerRole, "c1", "o1"}, protocol.CodeForbidden, `a computer named "c1" is already in office "o1"`},
		{"name held by a session in another office", []join{{computerRole, "c1", "o1"}}, nil, join{computerRole, "c1", "o2"}, protocol.CodeForbidden, `name "c1" is already registered`},
		{"agent takes a computer's name", []join{{computerRole, "x", "o1"}}, nil, join{agentRole, "x", "o1"}, protocol.CodeForbidden, `name "x" is already registered`},
		{"role is fixed per session", nil, &join{computerRole, "c1", "o1"}, join{agentRole, "a1", "o2"}, protocol.CodeForbidden, "role is fixed"},
		{"rename inside the same office", nil, &join{computerRole, "c1", "o1"}, join{computerRole, "c2", "o1"}, protocol.CodeForbidden, "leave it before joining under another name"},
		{"missing name", nil, nil, join{agentRole, "", "o1"}, protocol.CodeBadRequest, "/name"},
		{"unknown role", nil, nil, join{"admin", "a1", "o1"}, protocol.CodeBadRequest, "/role"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t)
			for _, j := range tc.setup {
				dial(t, ts.url).mustJoin(j.role, j.name, j.office)
			}
			p := dial(t, ts.url)
			if tc.first != nil {
				p.mustJoin(tc.first.role, tc.first.name, tc.first.office)
			}
			ok, reason := p.join(tc.second.role, tc.second.name, tc.second.office)
			msg := requireReason(t, ok, reason, tc.code)
			require.Contains(t, msg, tc.reason)
		})
	}
}

func TestJoinRequestShapes(t *testing.T) {
	ts := startServer(t)
	p := dial(t, ts.url)
	for name, payload := range map[string]any{
		"string payload":    "{not json",
		"number payload":    42.0,
		"array payload":     []any{"agent", "a", "o"},
		"wrong field types": map[string]any{"role": "agent", "name": 7.0, "office_id": true},
		"empty object":      map[string]any{},
	} {
		t.Run(name, func(t *testing.T) {
			vals := p.call(protocol.EventJoinOffice, payload)
			require.Len(t, vals, 2)
			requireReason(t, vals[0].(bool), vals[1], protocol.CodeBadRequest)
		})
	}
	t.Run("violations are listed", func(t *testing.T) {
		vals := p.call(protocol.EventJoinOffice, map[string]any{"role": "agent", "name": 7.0, "office_id": true})
		reason := vals[1].(string)
		require.Contains(t, reason, "/name")
		require.Contains(t, reason, "/office_id")
	})
	t.Run("two payloads", func(t *testing.T) {
		vals := p.call(protocol.EventJoinOffice, map[string]any{"role": "agent", "name": "a", "office_id": "o"}, "extra")
		requireReason(t, vals[0].(bool), vals[1], protocol.CodeBadRequest)
	})
	t.Run("no payload", func(t *testing.T) {
		vals := p.call(protocol.EventJoinOffice)
		requireReason(t, vals[0].(bool), vals[1], protocol.CodeBadRequest)
	})
	// After all these refusals the session can still join.
	p.mustJoin(agentRole, "a", "o")
}

func TestJoinBroadcastsAndNoop(t *testing.T) {
	ts := startServer(t)
	c1 := dial(t, ts.url).mustJoin(computerRole, "c1", "o1")
	a := dial(t, ts.url).mustJoin(agentRole, "a1", "o1")
	require.Equal(t, map[string]any{"office_id": "o1", "agent": "a1"}, c1.next(protocol.NotifyEnterOffice))

	c2 := dial(t, ts.url).mustJoin(computerRole, "c2", "o1")
	want := map[string]any{"office_id": "o1", "computer": "c2"}
	require.Equal(t, want, a.next(protocol.NotifyEnterOffice))
	require.Equal(t, want, c1.next(protocol.NotifyEnterOffice))
	c2.noEvent(protocol.NotifyEnterOffice) // the joiner is skipped

	// Joining the office you are in is a no-op success: no broadcast.
	a.mustJoin(agentRole, "a1", "o1")
	c2.mustJoin(computerRole, "c2", "o1")
	c1.noEvent(protocol.NotifyEnterOffice)
	a.noEvent(protocol.NotifyEnterOffice)

	// Another office hears nothing.
	other := dial(t, ts.url).mustJoin(agentRole, "a2", "o2")
	dial(t, ts.url).mustJoin(computerRole, "c3", "o1")
	other.noEvent(protocol.NotifyEnterOffice)
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "c3"}, a.next(protocol.NotifyEnterOffice))
}

func TestJoinWithoutAck(t *testing.T) {
	// The Python Agent emits server:join_office without asking for an ack.
	ts := startServer(t)
	c := dial(t, ts.url).mustJoin(computerRole, "c1", "o1")
	a := dial(t, ts.url)
	a.emit(protocol.EventJoinOffice, map[string]any{"role": "agent", "name": "a1", "office_id": "o1"})
	require.Equal(t, map[string]any{"office_id": "o1", "agent": "a1"}, c.next(protocol.NotifyEnterOffice))
	// A refused join without ack is only logged: the session carries on.
	a.emit(protocol.EventJoinOffice, map[string]any{"role": "agent", "name": "a1", "office_id": "o2"})
	a.barrier()
	vals := a.call(protocol.EventListRoom, map[string]any{"agent": "a1", "req_id": "l", "office_id": "o1"})
	require.Len(t, vals[0].(map[string]any)["sessions"], 2)
}

func TestComputerSwitchesOffice(t *testing.T) {
	ts := startServer(t)
	a1 := dial(t, ts.url).mustJoin(agentRole, "a1", "o1")
	a2 := dial(t, ts.url).mustJoin(agentRole, "a2", "o2")
	c := dial(t, ts.url).mustJoin(computerRole, "c", "o1")
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "c"}, a1.next(protocol.NotifyEnterOffice))

	c.mustJoin(computerRole, "c", "o2")
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "c"}, a1.next(protocol.NotifyLeaveOffice))
	require.Equal(t, map[string]any{"office_id": "o2", "computer": "c"}, a2.next(protocol.NotifyEnterOffice))
	a1.noEvent(protocol.NotifyEnterOffice)
	a2.noEvent(protocol.NotifyLeaveOffice)
	c.noEvent(protocol.NotifyLeaveOffice)

	// The Computer is now reachable from o2 only.
	c.answer(protocol.EventGetTools, toolsAnswer)
	requireError(t, a1.call(protocol.EventGetTools, getTools("a1", "c", "r1")), protocol.CodeNotFound)
	vals := a2.call(protocol.EventGetTools, getTools("a2", "c", "r2"))
	require.Equal(t, "r2", vals[0].(map[string]any)["req_id"])

	// A switch may carry a new name; the old one is free again.
	c.mustJoin(computerRole, "c-renamed", "o1")
	require.Equal(t, map[string]any{"office_id": "o2", "computer": "c"}, a2.next(protocol.NotifyLeaveOffice))
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "c-renamed"}, a1.next(protocol.NotifyEnterOffice))
	dial(t, ts.url).mustJoin(computerRole, "c", "o2")
}

func TestLeaveOffice(t *testing.T) {
	ts := startServer(t)
	a := dial(t, ts.url).mustJoin(agentRole, "a1", "o1")
	c := dial(t, ts.url).mustJoin(computerRole, "c1", "o1")
	a.next(protocol.NotifyEnterOffice)
	dial(t, ts.url).mustJoin(agentRole, "a2", "o2")

	leave := func(p *peer, office any) (bool, any) {
		vals := p.call(protocol.EventLeaveOffice, map[string]any{"office_id": office})
		require.Len(t, vals, 2)
		return vals[0].(bool), vals[1]
	}
	ok, reason := leave(c, "o2")
	requireReason(t, ok, reason, protocol.CodeNotInRoom)
	ok, reason = leave(c, "nowhere")
	requireReason(t, ok, reason, protocol.CodeRoomNotFound)
	ok, reason = leave(c, 5.0)
	requireReason(t, ok, reason, protocol.CodeBadRequest)

	ok, reason = leave(c, "o1")
	require.True(t, ok)
	require.Nil(t, reason)
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "c1"}, a.next(protocol.NotifyLeaveOffice))
	c.noEvent(protocol.NotifyLeaveOffice)

	// Its name is free again, its role is still fixed.
	ok, reason = c.join(agentRole, "x", "o3")
	requireReason(t, ok, reason, protocol.CodeForbidden)
	dial(t, ts.url).mustJoin(computerRole, "c1", "o1")
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "c1"}, a.next(protocol.NotifyEnterOffice))

	// An Agent that left may join another office.
	ok, _ = leave(a, "o1")
	require.True(t, ok)
	a.mustJoin(agentRole, "a1", "o3")
}

func TestDisconnectLeaves(t *testing.T) {
	ts := startServer(t)
	a := dial(t, ts.url).mustJoin(agentRole, "a1", "o1")
	c := dial(t, ts.url).mustJoin(computerRole, "c1", "o1")
	a.next(protocol.NotifyEnterOffice)
	c.sock.Disconnect()
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "c1"}, a.next(protocol.NotifyLeaveOffice))
	a.noEvent(protocol.NotifyLeaveOffice) // exactly once

	// The name is free, and the agent's office was not disturbed.
	c2 := dial(t, ts.url).mustJoin(computerRole, "c1", "o1")
	require.Equal(t, map[string]any{"office_id": "o1", "computer": "c1"}, a.next(protocol.NotifyEnterOffice))

	a.sock.Disconnect()
	require.Equal(t, map[string]any{"office_id": "o1", "agent": "a1"}, c2.next(protocol.NotifyLeaveOffice))
	a2 := dial(t, ts.url).mustJoin(agentRole, "a1", "o1") // seat and name free again
	a2.noEvent(protocol.NotifyLeaveOffice)
}

func TestListRoom(t *testing.T) {
	ts := startServer(t)
	a, cs := office(t, ts, "o1", "a1", "c2", "c1")
	other, _ := office(t, ts, "o2", "b1", "d1")
	lone := dial(t, ts.url)

	list := func(p *peer, agent, office string) []any {
		return p.call(protocol.EventListRoom, map[string]any{"agent": agent, "req_id": "l1", "office_id": office})
	}
	vals := list(a, "a1", "o1")
	require.Len(t, vals, 1)
	ret := vals[0].(map[string]any)
	require.Equal(t, "l1", ret["req_id"])
	sessions := ret["sessions"].([]any)
	require.Len(t, sessions, 3)
	var names []string
	for _, s := range sessions {
		m := s.(map[string]any)
		require.Equal(t, "o1", m["office_id"])
		require.NotEmpty(t, m["sid"])
		names = append(names, m["role"].(string)+":"+m["name"].(string))
	}
	require.Equal(t, []string{"agent:a1", "computer:c1", "computer:c2"}, names)
	raw := mustJSON(t, ret)
	require.NoError(t, protocol.Validate(protocol.EventListRoom, protocol.Ack, raw))

	requireError(t, list(a, "a1", "o2"), protocol.CodeCrossRoomAccess)
	requireError(t, list(a, "b1", "o1"), protocol.CodeForbidden)
	requireError(t, list(cs[0], "c2", "o1"), protocol.CodeForbidden)
	requireError(t, list(lone, "x", "o1"), protocol.CodeNotInRoom)
	requireError(t, a.call(protocol.EventListRoom, map[string]any{"agent": "a1", "office_id": "o1"}), protocol.CodeBadRequest)
	require.Len(t, list(other, "b1", "o2")[0].(map[string]any)["sessions"].([]any), 2)
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
