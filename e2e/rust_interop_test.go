package e2e

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
)

// Lockstep with the Rust SDK (a2c-smcp 0.1.0, crates 0.1.15): each direction
// runs the same cases with real processes, and records what it verified in
// a table of cases × directions logged at the end (go test -v). Every
// difference named in a cell is explained in conformance/lockstep-rust.md.

const (
	dirGoServerRust   = "Go Server · Rust Agent · Rust Computer"
	dirRustServerGo   = "Rust Server · Go Agent · Go Computer"
	dirGoAgentRustCmp = "Go Server · Go Agent · Rust Computer"
	dirRustAgentGoCmp = "Go Server · Rust Agent · Go Computer"
)

var interopCases = []string{
	"join (two-value ack)",
	"list_room",
	"get_tools",
	"tool_call: success",
	"tool_call: tool error",
	"tool_call: unknown tool",
	"tool_call: timeout",
	"tool_call: cancel",
	"get_desktop",
	"notify: enter_office",
	"notify: leave_office",
	"notify: update_*",
	"client:get_finder",
	"client:read_resource",
	"coded error answer",
}

// interopTable is what each direction verified, case by case.
type interopTable struct {
	mu    sync.Mutex
	dirs  []string
	cells map[string]map[string]string // case → direction → outcome
}

func newInteropTable(dirs ...string) *interopTable {
	return &interopTable{dirs: dirs, cells: map[string]map[string]string{}}
}

// set records the outcome of a case in a direction; call it after the
// assertions that establish it.
func (tb *interopTable) set(dir, c, outcome string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.cells[c] == nil {
		tb.cells[c] = map[string]string{}
	}
	tb.cells[c][dir] = outcome
}

// String renders the table as Markdown.
func (tb *interopTable) String() string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	var b strings.Builder
	b.WriteString("| case | " + strings.Join(tb.dirs, " | ") + " |\n|---|")
	b.WriteString(strings.Repeat("---|", len(tb.dirs)) + "\n")
	for _, c := range interopCases {
		b.WriteString("| " + c + " |")
		for _, d := range tb.dirs {
			v := tb.cells[c][d]
			if v == "" {
				v = "not run"
			}
			b.WriteString(" " + v + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestRustInterop(t *testing.T) {
	rustBin(t)
	tab := newInteropTable(dirGoServerRust, dirRustServerGo, dirGoAgentRustCmp, dirRustAgentGoCmp)
	t.Run("GoServer_RustAgent_RustComputer", func(t *testing.T) { goServerRustAgent(t, tab, dirGoServerRust) })
	t.Run("RustServer_GoAgent_GoComputer", func(t *testing.T) { rustServerGoClients(t, tab) })
	t.Run("GoServer_GoAgent_RustComputer", func(t *testing.T) { goAgentRustComputer(t, tab) })
	t.Run("GoServer_RustAgent_GoComputer", func(t *testing.T) { goServerRustAgent(t, tab, dirRustAgentGoCmp) })
	t.Logf("Rust interop, cases × directions (differences: conformance/lockstep-rust.md)\n%s", tab)
}

// toolsMeta auto-applies the tool server's tools on a Go Computer.
func toolsMeta(s mcpServer) mcpServer {
	s["tool_meta"] = map[string]any{
		"echo": map[string]any{"auto_apply": true},
		"slow": map[string]any{"auto_apply": true},
		"fail": map[string]any{"auto_apply": true},
	}
	return s
}

func firstText(res map[string]any) string {
	content, _ := res["content"].([]any)
	for _, c := range content {
		if s, ok := c.(map[string]any)["text"].(string); ok {
			return s
		}
	}
	return ""
}

var unhandledCancel = regexp.MustCompile(`Unhandled event: notify:tool_call_cancel`)

// goServerRustAgent: the Go Server with the Rust SDK's Agent, and either the
// Rust SDK's Computer (dirGoServerRust) or ours (dirRustAgentGoCmp).
//
// tf-rust-socketio 0.7.0, the SDK's Socket.IO client, hands every ack to
// its callback as one value: the JSON array of the ack's arguments (a
// two-value ack `true, null` arrives as `[[true, null]]`, a one-value ack
// `{…}` as `[[{…}]]`). smcp-agent 0.1.15 takes that array for the answer
// object: every request that looks for req_id in it fails, and tool_call
// returns the array (conformance/lockstep-rust.md, R1).
func goServerRustAgent(t *testing.T, tab *interopTable, dir string) {
	rustComputer := dir == dirGoServerRust
	d := startServer(t, server.WithValidateAnswers(true))
	ctx := testContext(t)

	// The Agent joins first, so that it sees the Computer enter.
	ra := startRustAgent(t, d.URL, d.APIKey, "o1", "ra", 20)

	// join: the SDK's join_office emits without an ack, so the ack is read
	// on a plain tf-rust-socketio connection of the same program (the
	// SDK's transport), in another office.
	ack := ra.ok(t, map[string]any{"op": "raw_call", "event": protocol.EventJoinOffice,
		"data": map[string]any{"role": "agent", "name": "probe", "office_id": "probe"}})
	require.Equal(t, []any{[]any{true, nil}}, ack, "both values, as tf-rust-socketio shows them")
	// A one-value answer reaches the SDK wrapped the same way.
	listed := ra.ok(t, map[string]any{"op": "raw_call", "event": protocol.EventListRoom,
		"data": map[string]any{"agent": "probe", "req_id": "l1", "office_id": "probe"}})
	ret := listed.([]any)[0].([]any)[0].(map[string]any)
	require.Equal(t, "l1", ret["req_id"], "%v", listed)
	require.Len(t, ret["sessions"], 1, "%v", listed)
	ack = ra.ok(t, map[string]any{"op": "raw_call", "event": protocol.EventLeaveOffice,
		"data": map[string]any{"office_id": "probe"}})
	require.Equal(t, []any{[]any{true, nil}}, ack)
	ra.ok(t, map[string]any{"op": "raw_close"})
	ra.ok(t, map[string]any{"op": "join"})

	var rc *peerProc
	var gc *computer.Computer
	cname := "gc"
	if rustComputer {
		cname = "rc"
		rc = startRustComputer(t, d.URL, d.APIKey, "o1", cname)
	} else {
		gc = startComputer(t, d, "o1", cname, []mcpServer{toolsMeta(toolServer(t, "tools"))})
	}
	tab.set(dir, "join (two-value ack)", "ok: `true, null` (seen as `[[true, null]]`); the SDK Agent's join asks no ack (R1)")

	enter := ra.note(t, "enter_office", noteOf("enter_office", cname))
	require.Equal(t, map[string]any{"office_id": "o1", "computer": cname}, enter["data"])
	tab.set(dir, "notify: enter_office", "ok (its automatic get_tools fails, R1)")

	// The SDK's own requests fail on answers like the one the probe read
	// above.
	m := ra.do(t, map[string]any{"op": "list_room"})
	require.Equal(t, false, m["ok"], "%v", m)
	require.Contains(t, m["error"], "Missing req_id in response", "%v", m)
	tab.set(dir, "list_room", "Rust SDK defect: `Missing req_id in response` (R1)")

	m = ra.do(t, map[string]any{"op": "get_tools", "computer": cname})
	require.Equal(t, false, m["ok"], "%v", m)
	require.Contains(t, m["error"], "Missing req_id in response", "%v", m)
	tab.set(dir, "get_tools", "Rust SDK defect: `Missing req_id in response` (R1)")

	m = ra.do(t, map[string]any{"op": "get_desktop", "computer": cname})
	require.Equal(t, false, m["ok"], "%v", m)
	require.Contains(t, m["error"], "Missing req_id in response", "%v", m)
	tab.set(dir, "get_desktop", "Rust SDK defect: `Missing req_id in response` (R1)")

	// tool_call returns the ack's argument array: one CallToolResult.
	only := func(v any) map[string]any {
		t.Helper()
		arr, ok := v.([]any)
		require.True(t, ok, "the SDK returns the ack's arguments: %v", v)
		require.Len(t, arr, 1, "%v", v)
		return arr[0].(map[string]any)
	}
	res := only(ra.ok(t, map[string]any{"op": "tool_call", "computer": cname, "tool": "echo", "params": map[string]any{"text": "hi"}}))
	require.Equal(t, "echo: hi", firstText(res), "%v", res)
	require.NotEqual(t, true, res["isError"], "%v", res)
	tab.set(dir, "tool_call: success", "differs: the SDK returns `[result]` (R1)")

	res = only(ra.ok(t, map[string]any{"op": "tool_call", "computer": cname, "tool": "fail"}))
	require.Equal(t, true, res["isError"], "%v", res)
	require.Equal(t, "this tool always fails", firstText(res), "%v", res)
	// Both Computers pass the MCP server's own error result on unchanged.
	require.Nil(t, res["structuredContent"], "%v", res)
	tab.set(dir, "tool_call: tool error", "differs: `[result]` (R1); the MCP result as is")

	res = only(ra.ok(t, map[string]any{"op": "tool_call", "computer": cname, "tool": "nope"}))
	require.Equal(t, true, res["isError"], "%v", res)
	sc := res["structuredContent"].(map[string]any)
	if rustComputer {
		require.Equal(t, "ComputerError", sc["error_type"], "%v", res)
		require.Contains(t, sc["error"], "nope", "%v", res)
		require.Empty(t, res["content"], "%v", res)
		tab.set(dir, "tool_call: unknown tool", "differs: `[result]` (R1); `error_type: ComputerError`, no code, empty content (R5)")
	} else {
		require.Equal(t, 4001.0, sc["code"], "%v", res)
		tab.set(dir, "tool_call: unknown tool", "differs: `[result]` (R1), 4001 inside")
	}

	// A coded error answer: the Server refuses a call to a Computer that
	// is not there with an ErrorPayload, which the SDK returns as the
	// tool's "result".
	res = only(ra.ok(t, map[string]any{"op": "tool_call", "computer": "ghost", "tool": "echo"}))
	require.Equal(t, 404.0, res["error"].(map[string]any)["code"], "%v", res)
	tab.set(dir, "coded error answer", "differs: the SDK returns `[{\"error\": {\"code\": 404, …}}]` as the tool's result (R1, R3)")

	// Updates: the Computer announces, the Agent's handler is told; the
	// SDK's refetches fail (R1), so the desktop handler is never called.
	if rustComputer {
		for _, cmd := range []string{"update_config", "update_tool_list", "update_desktop"} {
			rc.send(t, cmd)
			require.Equal(t, map[string]any{"cmd": cmd, "ok": true}, rc.next(t))
		}
	} else {
		require.True(t, gc.Client().Notify(protocol.EventUpdateConfig))
		require.True(t, gc.Client().Notify(protocol.EventUpdateToolList))
		require.True(t, gc.Client().Notify(protocol.EventUpdateDesktop))
	}
	upd := ra.note(t, "update_config", noteOf("update_config", cname))
	require.Equal(t, map[string]any{"computer": cname}, upd["data"])
	tab.set(dir, "notify: update_*", "ok: update_config reaches the handler; its refetches fail (R1)")

	tab.set(dir, "client:get_finder", "n/a: the Rust Agent has no Finder")
	tab.set(dir, "client:read_resource", "n/a: the Rust Agent has no read_resource")

	// Timeout and cancel: an Agent whose tool_call_timeout is 2 s. The SDK
	// waits exactly the request's timeout, so the Computer's own timeout
	// answer always arrives late: tf-rust-socketio drops it, the SDK sends
	// server:tool_call_cancel and returns its own isError result.
	ra.send(t, `{"op":"quit"}`)
	ra.exited(t)
	ra2 := startRustAgent(t, d.URL, d.APIKey, "o1", "ra2", 2)
	// The office's Agent slot frees once the Server has seen ra go; a join
	// refused meanwhile is silent (no ack): retry until a call is routed
	// (outside the office the Server answers 4103).
	require.Eventually(t, func() bool {
		ra2.ok(t, map[string]any{"op": "join"})
		r := only(ra2.ok(t, map[string]any{"op": "tool_call", "computer": cname, "tool": "echo", "params": map[string]any{"text": "in"}}))
		return firstText(r) == "echo: in"
	}, peerWait, 100*time.Millisecond)
	res = ra2.ok(t, map[string]any{"op": "tool_call", "computer": cname, "tool": "slow", "params": map[string]any{"seconds": 30}}).(map[string]any)
	require.Equal(t, true, res["isError"], "%v", res)
	require.Contains(t, firstText(res), "Tool call timeout", "%v", res)
	if rustComputer {
		// The cancel reaches the Rust Computer, which has no handler.
		rc.waitOutput(t, unhandledCancel)
		tab.set(dir, "tool_call: timeout", "differs: the Agent drops the Computer's late answer and returns its own result (R4)")
		tab.set(dir, "tool_call: cancel", "differs: sent only after the answer; the Rust Computer ignores notify:tool_call_cancel (R4, R6)")
	} else {
		require.Eventually(t, func() bool {
			h := gc.History()
			return len(h) > 0 && h[len(h)-1].Tool == "slow" && !h[len(h)-1].Success
		}, 20*time.Second, 20*time.Millisecond)
		tab.set(dir, "tool_call: timeout", "differs: the Agent drops our late 4004 answer and returns its own result (R4)")
		tab.set(dir, "tool_call: cancel", "differs: sent only after the answer arrived (R4)")
	}

	// Leaving: the Computer goes, the Agent is told.
	if rustComputer {
		rc.send(t, "leave")
		require.Equal(t, map[string]any{"cmd": "leave", "ok": true}, rc.next(t))
	} else {
		require.NoError(t, gc.Close(ctx))
	}
	left := ra2.note(t, "leave_office", noteOf("leave_office", cname))
	require.Equal(t, map[string]any{"office_id": "o1", "computer": cname}, left["data"])
	tab.set(dir, "notify: leave_office", "ok")
}

// rustServerGoClients: the Rust SDK's Server with our Agent and Computer.
func rustServerGoClients(t *testing.T, tab *interopTable) {
	const dir = dirRustServerGo
	rs := startRustServer(t)
	d := &deployment{URL: rs.URL, APIKey: rs.APIKey}
	ctx := testContext(t)

	var mu sync.Mutex
	var notes []agent.Notification
	ga := dialAgentRust(t, d, "o1", "ga", agent.WithTimeout(5*time.Second),
		agent.OnNotification(func(n agent.Notification) { mu.Lock(); notes = append(notes, n); mu.Unlock() }))
	waitNote := func(ev, computer string) agent.Notification {
		t.Helper()
		var found agent.Notification
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, n := range notes {
				if n.Event == ev && n.Computer == computer {
					found = n
					return true
				}
			}
			return false
		}, peerWait, 20*time.Millisecond, "no %s for %s", ev, computer)
		return found
	}

	// Both our clients join with the two-value ack (they fail otherwise);
	// a join sent right after connecting may be lost (R10).
	gc := startComputerRust(t, d, "o1", "gc", []mcpServer{toolsMeta(toolServer(t, "tools"))})
	tab.set(dir, "join (two-value ack)", "ok: `true, null`; a join sent at once can be lost, 408 (R10)")
	n := waitNote(protocol.NotifyEnterOffice, "gc")
	require.Equal(t, "o1", n.OfficeID)
	tab.set(dir, "notify: enter_office", "ok")

	sessions, err := ga.ListRoom(ctx)
	require.NoError(t, err)
	roles := map[string]protocol.Role{}
	for _, s := range sessions {
		roles[s.Name] = s.Role
	}
	require.Equal(t, map[string]protocol.Role{"ga": protocol.RoleAgent, "gc": protocol.RoleComputer}, roles)
	tab.set(dir, "list_room", "ok")

	// Every routed answer comes back wrapped as {"Ok": …} or {"Err": …}
	// (serde's encoding of a Rust Result): our Agent reports a 500
	// invalid answer at once, never a hang.
	invalid := func(err error) {
		t.Helper()
		require.Error(t, err)
		require.ErrorIs(t, err, agent.ErrInvalidAnswer, "%v", err)
		require.Equal(t, protocol.CodeInternal, protocol.CodeOf(err), "%v", err)
	}
	_, err = ga.GetTools(ctx, "gc")
	invalid(err)
	t.Logf("get_tools through the Rust Server: %v", err)
	tab.set(dir, "get_tools", "clear error: 500 invalid answer, the answer is `{\"Ok\": {…}}` (R2)")

	_, err = ga.CallTool(ctx, "gc", "echo", map[string]any{"text": "hi"}, 10*time.Second)
	invalid(err)
	t.Logf("tool_call through the Rust Server: %v", err)
	tab.set(dir, "tool_call: success", "clear error: 500 invalid answer (R2)")
	_, err = ga.CallTool(ctx, "gc", "fail", nil, 10*time.Second)
	invalid(err)
	tab.set(dir, "tool_call: tool error", "clear error: 500 invalid answer (R2)")
	_, err = ga.CallTool(ctx, "gc", "nope", nil, 10*time.Second)
	invalid(err)
	tab.set(dir, "tool_call: unknown tool", "clear error: 500 invalid answer (R2)")
	_, err = ga.CallTool(ctx, "gc", "slow", map[string]any{"seconds": 30}, time.Second)
	invalid(err)
	tab.set(dir, "tool_call: timeout", "clear error: 500 invalid answer; the Computer stopped the call at 1 s (R2)")

	// Cancel: the Rust Server broadcasts notify:tool_call_cancel and our
	// Computer stops the call.
	callCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = ga.CallTool(callCtx, "gc", "slow", map[string]any{"seconds": 30}, 30*time.Second)
	cancel()
	require.Equal(t, protocol.CodeTimeout, protocol.CodeOf(err), "%v", err)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Eventually(t, func() bool {
		h := gc.History()
		return len(h) > 0 && h[len(h)-1].Tool == "slow" && !h[len(h)-1].Success
	}, 20*time.Second, 20*time.Millisecond, "the cancelled call ends on the Computer: %v", gc.History())
	tab.set(dir, "tool_call: cancel", "ok: relayed, our Computer stops the call")

	_, err = ga.GetDesktop(ctx, "gc", agent.DesktopQuery{})
	invalid(err)
	tab.set(dir, "get_desktop", "clear error: 500 invalid answer (R2)")

	// What the Rust Server lacks: no handler, so no answer at all. Our
	// Agent knows it: the Server confirmed no generation (it is not
	// smcp-go's), so it routes no smcp-go extension, and the Agent fails
	// the request at once with 4106 instead of waiting for its deadline.
	_, err = ga.GetFinder(ctx, "gc", agent.FinderQuery{})
	require.Equal(t, protocol.CodeNotSupported, protocol.CodeOf(err), "%v", err)
	tab.set(dir, "client:get_finder", "clear error: 4106 at once, the Server confirmed no generation (R7)")
	_, err = ga.ReadResource(ctx, "gc", statusWindow)
	require.Equal(t, protocol.CodeNotSupported, protocol.CodeOf(err), "%v", err)
	tab.set(dir, "client:read_resource", "clear error: 4106 at once (R7)")

	// A refusal by the Server is {"Err": {"error": {code, message}}}.
	_, err = ga.CallTool(ctx, "ghost", "echo", nil, 5*time.Second)
	invalid(err)
	t.Logf("refused tool_call through the Rust Server: %v", err)
	tab.set(dir, "coded error answer", "clear error: 500 invalid answer; the code is inside `{\"Err\": …}` (R2)")

	// The exact answers, read on a plain tf-rust-socketio connection (the
	// Rust SDK's transport, which shows an ack as the array of its
	// arguments) that joins o1 in place of our Agent (one Agent per office
	// there too).
	require.NoError(t, ga.LeaveOffice(ctx))
	probe := startRustAgent(t, rs.URL, rs.APIKey, "o1", "probe", 20)
	raw := func(event string, data map[string]any, waitMS int) map[string]any {
		t.Helper()
		return probe.do(t, map[string]any{"op": "raw_call", "event": event, "data": data, "wait_ms": waitMS})
	}
	for lost := 0; ; lost++ { // R10: the first event can be lost
		m := raw(protocol.EventJoinOffice, map[string]any{"role": "agent", "name": "probe", "office_id": "o1"}, 2000)
		if m["ok"] == true {
			require.Equal(t, []any{[]any{true, nil}}, m["result"])
			break
		}
		require.Equal(t, "no ack", m["error"], "%v", m)
		require.Less(t, lost, 5)
	}
	m := raw(protocol.EventGetTools, map[string]any{"agent": "probe", "req_id": "r1", "computer": "gc"}, 10000)
	require.Equal(t, true, m["ok"], "%v", m)
	ok := m["result"].([]any)[0].([]any)[0].(map[string]any)["Ok"].(map[string]any)
	require.Equal(t, "r1", ok["req_id"], "%v", m)
	require.Len(t, ok["tools"], 3, "%v", m)
	m = raw(protocol.EventToolCall, map[string]any{"agent": "probe", "req_id": "r2", "computer": "gc", "tool_name": "echo", "params": map[string]any{"text": "hi"}, "timeout": 10}, 10000)
	t.Logf("client:tool_call echo answered by the Rust Server: %s", compactJSON(m["result"]))
	require.Equal(t, []any{[]any{map[string]any{"Ok": nil}}}, m["result"], "the Computer's answer is replaced by its \"result\" field")
	m = raw(protocol.EventToolCall, map[string]any{"agent": "probe", "req_id": "r3", "computer": "ghost", "tool_name": "echo", "params": map[string]any{}, "timeout": 10}, 10000)
	t.Logf("client:tool_call to a missing Computer answered by the Rust Server: %s", compactJSON(m["result"]))
	require.Equal(t, []any{[]any{map[string]any{"Err": map[string]any{"error": map[string]any{
		"code": 400.0, "message": "Invalid request: Computer 'ghost' not found in office"}}}}}, m["result"])
	// socketioxide's default ack timeout (5 s), which smcp-server-core
	// keeps, bounds every routed request whatever its own timeout says.
	m = raw(protocol.EventToolCall, map[string]any{"agent": "probe", "req_id": "r5", "computer": "gc", "tool_name": "slow", "params": map[string]any{"seconds": 8}, "timeout": 20}, 15000)
	t.Logf("client:tool_call of an 8 s tool (timeout 20 s) answered by the Rust Server after %v ms: %s", m["ms"], compactJSON(m["result"]))
	errAns := m["result"].([]any)[0].([]any)[0].(map[string]any)["Err"].(map[string]any)["error"].(map[string]any)
	require.Equal(t, 408.0, errAns["code"], "%v", m)
	m = raw(protocol.EventGetFinder, map[string]any{"agent": "probe", "req_id": "r4", "computer": "gc"}, 2000)
	require.Equal(t, map[string]any{"op": "raw_call", "ok": false, "error": "no ack"}, withoutMS(m))
	probe.send(t, `{"op":"quit"}`)
	probe.exited(t)
	require.Eventually(t, func() bool { return ga.JoinOffice(ctx, "o1") == nil }, peerWait, 50*time.Millisecond)

	require.True(t, gc.Client().Notify(protocol.EventUpdateConfig))
	waitNote(protocol.NotifyUpdateConfig, "gc")
	require.True(t, gc.Client().Notify(protocol.EventUpdateDesktop))
	waitNote(protocol.NotifyUpdateDesktop, "gc")
	require.True(t, gc.Client().Notify(protocol.EventUpdateToolList))
	waitNote(protocol.NotifyUpdateToolList, "gc")
	tab.set(dir, "notify: update_*", "ok (config, tool list, desktop)")

	require.NoError(t, gc.Close(ctx))
	n = waitNote(protocol.NotifyLeaveOffice, "gc")
	require.Equal(t, "o1", n.OfficeID)
	tab.set(dir, "notify: leave_office", "ok")
}

// goAgentRustComputer: the Go Server and Agent with the Rust SDK's Computer.
func goAgentRustComputer(t *testing.T, tab *interopTable) {
	const dir = dirGoAgentRustCmp
	d := startServer(t, server.WithValidateAnswers(true), server.WithRequestTimeout(5*time.Second))
	ctx := testContext(t)
	var mu sync.Mutex
	var notes []agent.Notification
	ga := dialAgent(t, d, "o1", "ga", agent.OnNotification(func(n agent.Notification) { mu.Lock(); notes = append(notes, n); mu.Unlock() }))
	waitNote := func(ev string) agent.Notification {
		t.Helper()
		var found agent.Notification
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, n := range notes {
				if n.Event == ev && n.Computer == "rc" {
					found = n
					return true
				}
			}
			return false
		}, peerWait, 20*time.Millisecond, "no %s", ev)
		return found
	}

	rc := startRustComputer(t, d.URL, d.APIKey, "o1", "rc")
	tab.set(dir, "join (two-value ack)", "ok: `[true, null]` read by the Rust Computer")
	require.Equal(t, "o1", waitNote(protocol.NotifyEnterOffice).OfficeID)
	tab.set(dir, "notify: enter_office", "ok")

	sessions, err := ga.ListRoom(ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"ga", "rc"}, sessionNames(sessions))
	tab.set(dir, "list_room", "ok")

	tools, err := ga.GetTools(ctx, "rc")
	require.NoError(t, err)
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
		require.Equal(t, "object", tool.ParamsSchema["type"])
	}
	require.ElementsMatch(t, []string{"echo", "slow", "fail"}, names)
	tab.set(dir, "get_tools", "ok (passes our answer schema)")

	res, err := ga.CallTool(ctx, "rc", "echo", map[string]any{"text": "hi"}, 10*time.Second)
	require.NoError(t, err)
	require.Nil(t, agent.ToolError(res))
	require.Equal(t, "echo: hi", *res.Content[0].Text)
	tab.set(dir, "tool_call: success", "ok")

	res, err = ga.CallTool(ctx, "rc", "fail", nil, 10*time.Second)
	require.NoError(t, err)
	perr := agent.ToolError(res)
	require.NotNil(t, perr)
	require.Equal(t, protocol.CodeToolExecutionFailed, perr.Code)
	require.Equal(t, "this tool always fails", perr.Message)
	tab.set(dir, "tool_call: tool error", "ok: read as 4003 (no code on the wire, R5)")

	res, err = ga.CallTool(ctx, "rc", "nope", nil, 10*time.Second)
	require.NoError(t, err)
	perr = agent.ToolError(res)
	require.NotNil(t, perr)
	require.Equal(t, protocol.CodeToolExecutionFailed, perr.Code, "no code on the wire: %v", perr)
	require.Contains(t, perr.Message, "nope")
	require.Equal(t, "ComputerError", perr.Details["error_type"])
	t.Logf("the Rust Computer answers an unknown tool with %s", compactJSON(res))
	tab.set(dir, "tool_call: unknown tool", "differs: read as 4003, not 4001 — no code on the wire (R5)")

	res, err = ga.CallTool(ctx, "rc", "slow", map[string]any{"seconds": 30}, time.Second)
	require.NoError(t, err)
	perr = agent.ToolError(res)
	require.NotNil(t, perr)
	require.Equal(t, protocol.CodeToolExecutionFailed, perr.Code, "%v", perr)
	require.Contains(t, strings.ToLower(perr.Message), "timed out")
	t.Logf("the Rust Computer answers a timeout with %s", compactJSON(res))
	tab.set(dir, "tool_call: timeout", "differs: the Rust Computer stops at the timeout but answers without 4004 (read as 4003, R5)")

	callCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = ga.CallTool(callCtx, "rc", "slow", map[string]any{"seconds": 3}, 30*time.Second)
	cancel()
	require.Equal(t, protocol.CodeTimeout, protocol.CodeOf(err), "%v", err)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	rc.waitOutput(t, unhandledCancel)
	// The call the Computer could not cancel still ends by itself; the
	// Computer keeps serving meanwhile.
	res, err = ga.CallTool(ctx, "rc", "echo", map[string]any{"text": "still here"}, 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, "echo: still here", *res.Content[0].Text)
	tab.set(dir, "tool_call: cancel", "differs: relayed; the Rust Computer has no notify:tool_call_cancel handler (R6)")

	desk, err := ga.GetDesktop(ctx, "rc", agent.DesktopQuery{})
	require.NoError(t, err)
	require.Equal(t, []string{statusWindow + "\n\nall systems nominal"}, desk)
	zero := 0
	desk, err = ga.GetDesktop(ctx, "rc", agent.DesktopQuery{Size: &zero})
	require.NoError(t, err)
	require.Empty(t, desk)
	tab.set(dir, "get_desktop", "ok (same window text as ours)")

	// What the Rust Computer lacks: it never answers; our Server ends the
	// wait with a 408 at its request timeout.
	_, err = ga.GetFinder(ctx, "rc", agent.FinderQuery{})
	require.Equal(t, protocol.CodeTimeout, protocol.CodeOf(err), "%v", err)
	tab.set(dir, "client:get_finder", "clear error: 408 at the Server's request timeout, the Rust Computer never answers (R7)")
	_, err = ga.ReadResource(ctx, "rc", statusWindow)
	require.Equal(t, protocol.CodeTimeout, protocol.CodeOf(err), "%v", err)
	tab.set(dir, "client:read_resource", "clear error: 408 at the Server's request timeout (R7)")
	tab.set(dir, "coded error answer", "see unknown tool and timeout: the Rust Computer's error answers carry no code (R5)")

	for _, cmd := range []string{"update_config", "update_tool_list", "update_desktop"} {
		rc.send(t, cmd)
		require.Equal(t, map[string]any{"cmd": cmd, "ok": true}, rc.next(t))
	}
	waitNote(protocol.NotifyUpdateConfig)
	waitNote(protocol.NotifyUpdateToolList)
	waitNote(protocol.NotifyUpdateDesktop)
	tab.set(dir, "notify: update_*", "ok (config, tool list, desktop)")

	rc.send(t, "leave")
	require.Equal(t, map[string]any{"cmd": "leave", "ok": true}, rc.next(t))
	require.Equal(t, "o1", waitNote(protocol.NotifyLeaveOffice).OfficeID)
	tab.set(dir, "notify: leave_office", "ok")
}

func withoutMS(m map[string]any) map[string]any {
	delete(m, "ms")
	return m
}

func sessionNames(sessions []protocol.SessionInfo) []string {
	var names []string
	for _, s := range sessions {
		names = append(names, s.Name)
	}
	return names
}

// TestRustSDKBinaries: the SDK's own smcp-server-hyper and smcp-computer
// binaries, as published, and the defects that keep them out of the
// interop above (conformance/lockstep-rust.md, R8 and R9).
func TestRustSDKBinaries(t *testing.T) {
	rustBin(t)
	t.Run("smcp-server-hyper", func(t *testing.T) {
		// Its main builds the layer with the default authentication and no
		// admin secret: every connection fails authentication, stays
		// connected and has no event handlers, so no request is answered.
		p := startRust(t, "smcp-server-hyper", "smcp-server-hyper", []string{"RUST_LOG=info"}, "127.0.0.1:0")
		addr := p.waitOutput(t, listening)
		ctx := testContext(t)
		a, err := agent.Dial(ctx, "http://"+addr, agent.WithAPIKey("any"), agent.WithName("ga"), agent.WithTimeout(2*time.Second))
		require.NoError(t, err, "the connection itself is accepted")
		t.Cleanup(func() { _ = a.Close() })
		err = a.JoinOffice(ctx, "o1")
		require.Equal(t, protocol.CodeTimeout, protocol.CodeOf(err), "%v", err)
		p.waitOutput(t, regexp.MustCompile(`on_connect failed: Authentication error`))
	})
	t.Run("smcp-computer", func(t *testing.T) {
		// The CLI's Computer hands its Socket.IO client a new, empty MCP
		// manager: it joins, but lists no tools and finds none.
		d := startServer(t, server.WithValidateAnswers(true))
		ctx := testContext(t)
		cfg := rustComputerConfig(t)
		p := startRust(t, "smcp-computer", "smcp-computer", []string{"NO_COLOR=1"},
			"--url", d.URL, "--headers", "x-api-key:"+d.APIKey, "--no-color", "run", "--config", cfg)
		ga := dialAgent(t, d, "o1", "ga")
		// The CLI's Computer is named friday_hands whatever the join says.
		p.send(t, "socket join o1 cli")
		require.Eventually(t, func() bool {
			s, err := ga.ListRoom(ctx)
			return err == nil && len(s) == 2
		}, peerWait, 50*time.Millisecond, "the CLI Computer joins")
		tools, err := ga.GetTools(ctx, "friday_hands")
		require.NoError(t, err)
		require.Empty(t, tools)
		res, err := ga.CallTool(ctx, "friday_hands", "echo", map[string]any{"text": "hi"}, 10*time.Second)
		require.NoError(t, err)
		perr := agent.ToolError(res)
		require.NotNil(t, perr)
		require.Contains(t, perr.Message, "not found in any active server")
		t.Logf("smcp-computer CLI answers tool_call echo with %s", compactJSON(res))
		p.send(t, "quit")
	})
}
