package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// The smoke tests of the reference peers harness (peers_test.go): the
// reference SDKs of protocols 0.3 and 0.4 among themselves, with their
// defaults — join, the room listing, tools with bundle ids, a call by
// exposed name, the other requests and a cancel — so that a harness or peer
// that no longer works fails here and not in the interop matrix built on it.

// refPairing is one office of the smoke tests: whose Server, Computer and
// Agent meet there.
type refPairing struct {
	name                    string
	server, computer, agent refSDK
	cli                     bool // the Computer is the Rust SDK's smcp-computer command
}

func TestRefPeersSmoke(t *testing.T) {
	for _, p := range []refPairing{
		{name: "Python042", server: refPy04, computer: refPy04, agent: refPy04},
		{name: "Python033", server: refPy03, computer: refPy03, agent: refPy03},
		{name: "Rust041", server: refRust04, computer: refRust04, agent: refRust04},
		{name: "PythonAgent_RustComputer_PythonServer", server: refPy04, computer: refRust04, agent: refPy04},
		{name: "PythonAgent_RustCLIComputer_RustServer", server: refRust04, computer: refRust04, agent: refPy04, cli: true},
	} {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			s := startRefServer(t, p.server)
			var c *refComputer
			if p.cli {
				c = startRustComputerCLI(t, s.URL, s.APIKey, "o1")
			} else {
				c = startRefComputer(t, p.computer, s.URL, s.APIKey, "o1", "c1")
			}
			a := startRefAgent(t, p.agent, s.URL, s.APIKey, "o1", "a1")
			refSmoke(t, a, c)
			switch {
			case p.cli:
				// Neither the other requests (the CLI's skill home and landing
				// root are its own) nor a cancel: the CLI keeps its MCP servers'
				// stderr to itself, so nothing tells when the slow tool started.
			case p.agent.Lang == "python":
				refEvents(t, s, a, c)
				refCancelPython(t, a, c)
			default:
				refEvents(t, s, a, c)
				refCancelRust(t, s, a, c)
			}
		})
	}
}

// refSmoke: a joins its office, finds c in the room with its protocol
// version, lists c's tools (each with its bundle id, named
// bundle_id__tool) and calls one by its exposed name.
func refSmoke(t *testing.T, a *refAgent, c *refComputer) {
	t.Helper()
	a.ok(t, map[string]any{"op": "join"})

	// The Python SDK's list_room keeps the Computers; the Rust SDK's keeps
	// every session.
	sessions := a.ok(t, map[string]any{"op": "list_room"}).([]any)
	var found map[string]any
	for _, s := range sessions {
		if s := s.(map[string]any); s["name"] == c.Name {
			found = s
		}
	}
	require.NotNil(t, found, "%s not in %s's room: %v", c.Name, a.Name, sessions)
	require.Equal(t, "computer", found["role"], "%v", found)
	require.Equal(t, c.Office, found["office_id"], "%v", found)
	require.Equal(t, c.SDK.Protocol(), found["a2c_version"], "%v", found)

	got := a.ok(t, map[string]any{"op": "get_tools", "computer": c.Name})
	if m, ok := got.(map[string]any); ok { // the Python SDK answers GetToolsRet, the Rust SDK the list
		got = m["tools"]
	}
	names := map[string]string{}
	for _, tool := range got.([]any) {
		tool := tool.(map[string]any)
		names[tool["name"].(string)] = tool["bundle_id"].(string)
	}
	require.Equal(t, map[string]string{"tools__echo": "tools", "tools__slow": "tools", "tools__fail": "tools"}, names)
	if c.Tools != nil { // what the Computer listed when it joined
		require.ElementsMatch(t, []string{"tools__echo", "tools__slow", "tools__fail"}, c.Tools)
	}

	res := a.ok(t, map[string]any{"op": "tool_call", "computer": c.Name, "tool": "tools__echo",
		"params": map[string]any{"text": "hi"}}).(map[string]any)
	require.Equal(t, "echo: hi", firstText(res), "%v", res)
	require.NotEqual(t, true, res["isError"], "%v", res)
}

// refEvents: the Agent driver's other requests reach c through s and come
// back with c's answers — its config, its desktop, the 0.4 events
// (resources, skills, blobs).
func refEvents(t *testing.T, s *refServer, a *refAgent, c *refComputer) {
	t.Helper()
	if s.SDK.Lang == "python" && c.SDK.Lang == "rust" {
		// The Python Server validates a Computer's get_config answer and
		// drops the Rust Computer's (its stdio entries lack cwd, encoding and
		// encoding_error_handler, PEERS.md): the Agent gets no answer.
		m := a.do(t, map[string]any{"op": "get_config", "computer": c.Name, "timeout": 5})
		require.Equal(t, false, m["ok"], "%v", m)
		require.Equal(t, "TimeoutError", m["error_type"], "%v", m)
		s.waitOutput(t, regexp.MustCompile(`validation errors? for GetComputerConfigRet`))
	} else {
		cfg := a.ok(t, map[string]any{"op": "get_config", "computer": c.Name}).(map[string]any)
		servers, _ := cfg["servers"].(map[string]any)
		require.Contains(t, servers, "tools", "servers keyed by bundle id: %v", cfg)
	}

	desk := a.ok(t, map[string]any{"op": "get_desktop", "computer": c.Name})
	if m, ok := desk.(map[string]any); ok { // Python: GetDeskTopRet; Rust: the list
		desk = m["desktops"]
	}
	require.Len(t, desk, 1, "the tool server's one window: %v", desk)

	res := a.ok(t, map[string]any{"op": "get_resources", "computer": c.Name, "mcp_server": "tools"}).(map[string]any)
	require.Equal(t, statusWindow, res["resources"].([]any)[0].(map[string]any)["uri"], "%v", res)

	skills := a.ok(t, map[string]any{"op": "get_skills", "computer": c.Name})
	if m, ok := skills.(map[string]any); ok {
		skills = m["skills"]
	}
	require.Equal(t, refSkill, skills.([]any)[0].(map[string]any)["name"], "%v", skills)
	skill := a.ok(t, map[string]any{"op": "get_skill", "computer": c.Name, "name": refSkill}).(map[string]any)
	require.Contains(t, skill["body"], "A skill served by every reference Computer.", "%v", skill)

	m := a.do(t, map[string]any{"op": "get_blob", "computer": c.Name, "blob_handle": "no-such-handle"})
	require.Equal(t, false, m["ok"], "an unknown handle is refused: %v", m)
	require.Contains(t, m["error"], "4018", "%v", m)

	if a.SDK == refPy03 { // client:put_blob came with protocol 0.4
		m := a.do(t, map[string]any{"op": "put_blob", "computer": c.Name, "text": "x"})
		require.Equal(t, "NotImplementedError", m["error_type"], "%v", m)
		return
	}
	up := a.ok(t, map[string]any{"op": "put_blob", "computer": c.Name, "text": "uploaded by the harness",
		"name_hint": "note.txt"}).(map[string]any)
	landed, ok := up["landing_path"].(string)
	require.True(t, ok, "%v", up)
	require.Equal(t, c.LandingRoot, filepath.Dir(landed), "%v", up)
	b, err := os.ReadFile(landed)
	require.NoError(t, err)
	require.Equal(t, "uploaded by the harness", string(b))
}

// refCancelPython cancels a slow call of the Python Agent a on c: the
// driver sends server:tool_call_cancel with the req_id the SDK made, and the
// Computer answers the call as cancelled.
func refCancelPython(t *testing.T, a *refAgent, c *refComputer) {
	t.Helper()
	pythonCancelsSlow(t, a, c.Name, func() { c.waitOutput(t, toolStarted) })
}

// pythonCancelsSlow has the Python Agent a call computer's tools__slow,
// cancel it once started says it runs, and read the 0.4 cancel markers in
// the answer.
func pythonCancelsSlow(t *testing.T, a *refAgent, computer string, started func()) {
	t.Helper()
	a.start(t, "slow", map[string]any{"op": "tool_call", "computer": computer, "tool": "tools__slow",
		"params": map[string]any{"seconds": 120}, "timeout": 180, "deadline_ms": 200_000})
	started()
	a.ok(t, map[string]any{"op": "cancel", "call": "slow"})
	m := a.await(t, "slow")
	require.Equal(t, true, m["ok"], "%v", m)
	res := m["result"].(map[string]any)
	require.Equal(t, true, res["isError"], "%v", res)
	meta, _ := res["_meta"].(map[string]any) // the SDK's CallToolResult, dumped with MCP's names
	require.Equal(t, true, meta["a2c_cancelled"], "%v", res)
	require.Equal(t, "agent_requested", meta["a2c_cancel_reason"], "%v", res)
}

// refCancelRust: the Rust SDK's Agent keeps the req_id of its tool_call to
// itself, so the one cancel it sends for its own call is the one on its
// tool-call timeout. A second Agent, whose tool calls time out after 3 s,
// takes the first one's place in the office and calls the slow tool for
// two minutes: the SDK answers locally with meta.a2c_timeout and sends
// server:tool_call_cancel, which the Rust Server relays to the Computer.
// The Computer logs whether the call was still in flight: the request
// carries the Agent's timeout, which the Rust Computer enforces itself, so
// its own timer and the cancel race (measured: the Computer ends the call
// first, and the cancel finds nothing), and either answer passes here.
func refCancelRust(t *testing.T, s *refServer, a *refAgent, c *refComputer) {
	t.Helper()
	a.ok(t, map[string]any{"op": "leave"})
	b := startRefAgent(t, refRust04, s.URL, s.APIKey, a.Office, a.Name+"-timeout", "SMCP_TOOL_TIMEOUT=3")
	b.ok(t, map[string]any{"op": "join"})
	res := b.ok(t, map[string]any{"op": "tool_call", "computer": c.Name, "tool": "tools__slow",
		"params": map[string]any{"seconds": 120}}).(map[string]any)
	require.Equal(t, true, res["isError"], "%v", res)
	meta, _ := res["meta"].(map[string]any)
	require.Equal(t, true, meta["a2c_timeout"], "%v", res)
	found := c.waitOutput(t, regexp.MustCompile(`notify:tool_call_cancel req_id=\S+ → cancelled=(true|false)`))
	t.Logf("the Rust Computer still had the call in flight when the cancel came: %s", found)
}
