package e2e

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/server"
)

// The interop matrix of the Go Server (issue 25, Deliver 7, the Server's
// rows): the reference Agents and Computers of every protocol generation,
// each with its SDK's defaults, meet in one office on smcp-server with its
// defaults — a2c-smcp 0.1.2 (0.2.0, no version named), 0.3.3 (0.3.1) and
// 0.4.2 (0.4.0) in Python, and the Rust crates 0.1.15 (0.2.0) and 0.4.1
// (0.4.0). Each Agent in turn joins the office, finds every Computer in the
// room with its version, lists each one's tools (a bundle_id on every tool
// for a 0.3/0.4 Agent, a 0.2 Computer's named after it), calls one by the
// name it was given, reads a refusal in its own error shape, gets 4106 at
// once for an event a Computer's generation lacks, cancels a call, and
// hears the updates its generation has. What each pair showed is logged as
// a table at the end (go test -v); spec/decisions.md, Server: generations,
// says why the Server does what it does.

// matrixPeer is one reference SDK in the matrix.
type matrixPeer struct {
	label string // "python 0.4.2"
	gen   string // the version the Server shows for its sessions
	sdk   refSDK // the harness's peer; rust015 for the Rust 0.1.15 peers
}

var (
	mPy012  = matrixPeer{"python 0.1.2", "0.2.0", refPy01}
	mPy033  = matrixPeer{"python 0.3.3", "0.3.1", refPy03}
	mPy042  = matrixPeer{"python 0.4.2", "0.4.0", refPy04}
	mRs0115 = matrixPeer{"rust 0.1.15", "0.2.0", refSDK{"rust", "0.1.15"}}
	mRs041  = matrixPeer{"rust 0.4.1", "0.4.0", refRust04}
)

func (p matrixPeer) flat() bool { return p.gen != "0.2.0" }

// computerName is the name the peer's Computer joins under.
func (p matrixPeer) computerName() string {
	return "c-" + strings.NewReplacer(" ", "", ".", "", "python", "py", "rust", "rs").Replace(p.label)
}

// exposed is the name under which the peer's Computer exposes the e2e tool
// server's tool (served as "tools"): bare for 0.2, bundle_id__tool from 0.3
// on.
func (p matrixPeer) exposed(tool string) string {
	if p.flat() {
		return "tools__" + tool
	}
	return tool
}

// matrix records what each Agent × Computer pair showed.
type matrix struct {
	mu    sync.Mutex
	cells map[string]map[string][]string // agent → computer → outcomes
	notes map[string][]string            // agent → outcomes of its own
}

func (m *matrix) pair(agent, computer matrixPeer, outcome string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cells[agent.label] == nil {
		m.cells[agent.label] = map[string][]string{}
	}
	m.cells[agent.label][computer.label] = append(m.cells[agent.label][computer.label], outcome)
}

func (m *matrix) agent(agent matrixPeer, outcome string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.notes[agent.label] = append(m.notes[agent.label], outcome)
}

func (m *matrix) String() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	b.WriteString("| Agent \\ Computer |")
	for _, c := range matrixPeers {
		b.WriteString(" " + c.label + " (" + c.gen + ") |")
	}
	b.WriteString(" the Agent alone |\n|---|" + strings.Repeat("---|", len(matrixPeers)+1) + "\n")
	for _, a := range matrixPeers {
		b.WriteString("| " + a.label + " (" + a.gen + ") |")
		for _, c := range matrixPeers {
			v := strings.Join(m.cells[a.label][c.label], "; ")
			if v == "" {
				v = "not run"
			}
			b.WriteString(" " + v + " |")
		}
		b.WriteString(" " + strings.Join(m.notes[a.label], "; ") + " |\n")
	}
	return b.String()
}

var matrixPeers = []matrixPeer{mPy012, mPy033, mPy042, mRs0115, mRs041}

// matrixComputer is a Computer of the matrix, whichever harness started it.
type matrixComputer struct {
	peer  matrixPeer
	name  string
	proc  *peerProc
	tools []string // exposed names
	slows int      // its slow tool's runs started so far
}

// slowStarted waits until the Computer's slow tool has started once more
// than before (the tool server writes a line on its stderr, which the
// Computer's own carries).
func (c *matrixComputer) slowStarted(t *testing.T) {
	t.Helper()
	c.slows++
	deadline := time.After(peerWait)
	for {
		out, changed := c.proc.stderr.snapshot()
		if len(toolStarted.FindAllStringIndex(out, -1)) >= c.slows {
			return
		}
		select {
		case <-changed:
		case <-c.proc.done:
			t.Fatalf("%s exited", c.name)
		case <-deadline:
			t.Fatalf("%s: its slow tool did not start (%d runs expected)", c.name, c.slows)
		}
	}
}

func TestGenerationsMatrix(t *testing.T) {
	d := startServer(t) // the Server's defaults: 0.2, 0.3 and 0.4, not strict
	const office = "mix"
	tab := &matrix{cells: map[string]map[string][]string{}, notes: map[string][]string{}}
	var computers []*matrixComputer
	for _, p := range matrixPeers {
		c := &matrixComputer{peer: p, name: p.computerName()}
		if p == mRs0115 {
			c.proc = startRustComputer(t, d.URL, d.APIKey, office, c.name)
			c.tools = []string{"echo", "slow", "fail"}
		} else {
			rc := startRefComputer(t, p.sdk, d.URL, d.APIKey, office, c.name)
			c.proc, c.tools = rc.peerProc, rc.Tools
		}
		require.ElementsMatch(t, []string{p.exposed("echo"), p.exposed("slow"), p.exposed("fail")}, c.tools, "%s", c.name)
		computers = append(computers, c)
	}
	byPeer := map[matrixPeer]*matrixComputer{}
	for _, c := range computers {
		byPeer[c.peer] = c
	}

	for _, a := range matrixPeers {
		t.Run(strings.ReplaceAll(a.label, " ", "_"), func(t *testing.T) {
			switch {
			case a == mRs0115:
				matrixRust015Agent(t, d, office, a, computers, tab)
			case a.sdk.Lang == "rust":
				matrixRustAgent(t, d, office, a, computers, byPeer, tab)
			default:
				matrixPythonAgent(t, d, office, a, computers, byPeer, tab)
			}
		})
	}
	t.Logf("the Go Server's interop matrix (Agent × Computer; spec/decisions.md, Server: generations)\n%s", tab)
}

// toolsByName returns name → bundle_id ("" when absent) of a tool list.
func toolsByName(t *testing.T, got any) map[string]string {
	t.Helper()
	if m, ok := got.(map[string]any); ok { // GetToolsRet
		got = m["tools"]
	}
	out := map[string]string{}
	for _, tool := range got.([]any) {
		tool := tool.(map[string]any)
		id, _ := tool["bundle_id"].(string)
		out[tool["name"].(string)] = id
	}
	return out
}

// wantTools is what an Agent of generation agent sees of c's tools: the
// names c exposes; every tool with a bundle_id for a 0.3/0.4 Agent ("tools"
// from a 0.3/0.4 Computer, the Computer's name from a 0.2 one, which has
// none), as written for a 0.2 Agent.
func wantTools(agent matrixPeer, c *matrixComputer) map[string]string {
	out := map[string]string{}
	for _, n := range c.tools {
		switch {
		case c.peer.flat():
			out[n] = "tools"
		case agent.flat():
			out[n] = protocol.NormalizeBundleName(c.name)
		default:
			out[n] = ""
		}
	}
	return out
}

// matrixPythonAgent runs the Python SDK's Agent (a2c-smcp 0.1.2, 0.3.3 or
// 0.4.2) through the matrix.
func matrixPythonAgent(t *testing.T, d *deployment, office string, a matrixPeer, computers []*matrixComputer, byPeer map[matrixPeer]*matrixComputer, tab *matrix) {
	name := "a-" + strings.TrimPrefix(a.computerName(), "c-")
	ag := startRefAgent(t, a.sdk, d.URL, d.APIKey, office, name)
	require.Equal(t, []any{true, nil}, ag.ok(t, map[string]any{"op": "join"}))

	matrixBasics(t, ag, a, computers, tab)

	// A refusal of the Server in the Agent's shape.
	raw := ag.ok(t, map[string]any{"op": "raw_call", "event": protocol.EventGetTools,
		"data": map[string]any{"agent": name, "req_id": "m1", "computer": "nobody"}})
	if a.flat() {
		require.Equal(t, map[string]any{"code": 404.0, "message": "Computer with name 'nobody' not found",
			"details": map[string]any{"computer_name": "nobody"}}, raw)
		res := ag.ok(t, map[string]any{"op": "tool_call", "computer": "nobody", "tool": "x", "params": map[string]any{}}).(map[string]any)
		require.Contains(t, firstText(res), "[404] Computer with name 'nobody' not found", "%v", res)
		tab.agent(a, "404 flat, the references' own: the SDK reports `[404] Computer with name 'nobody' not found`")
	} else {
		require.Equal(t, map[string]any{"error": map[string]any{"code": 404.0, "message": `no computer named "nobody" in this office`}}, raw)
		tab.agent(a, "404 nested")
	}

	// 4106 at once for what a Computer's generation lacks.
	if a.flat() {
		for _, c := range []*matrixComputer{byPeer[mPy012], byPeer[mRs0115]} {
			raw := ag.ok(t, map[string]any{"op": "raw_call", "event": protocol.EventGetSkills,
				"data": map[string]any{"agent": name, "req_id": "m2", "computer": c.name}}).(map[string]any)
			require.Equal(t, 4106.0, raw["code"], "%v", raw)
			m := ag.do(t, map[string]any{"op": "get_skills", "computer": c.name})
			require.Equal(t, false, m["ok"], "%v", m)
			require.NotEqual(t, true, m["hung"], "%v", m)
			require.NotEqual(t, "TimeoutError", m["error_type"], "%v", m)
			tab.pair(a, c.peer, "get_skills: 4106 flat at once (the SDK: `"+fmt.Sprint(m["error"])+"`)")
		}
		// The 0.4 events between generations that have them.
		for _, c := range []*matrixComputer{byPeer[mPy033], byPeer[mPy042], byPeer[mRs041]} {
			skills := ag.ok(t, map[string]any{"op": "get_skills", "computer": c.name})
			if m, ok := skills.(map[string]any); ok {
				skills = m["skills"]
			}
			require.Equal(t, refSkill, skills.([]any)[0].(map[string]any)["name"], "%v", skills)
			res := ag.ok(t, map[string]any{"op": "get_resources", "computer": c.name, "mcp_server": "tools"}).(map[string]any)
			require.NotEmpty(t, res["resources"], "%v", res)
			tab.pair(a, c.peer, "get_skills, get_resources ok")
		}
		if a == mPy042 {
			raw := ag.ok(t, map[string]any{"op": "raw_call", "event": protocol.EventPutBlob,
				"data": map[string]any{"agent": name, "req_id": "m3", "computer": byPeer[mPy033].name, "chunk_offset": 0, "eof": true, "blob": "eA==", "total_size": 1,
					"sha256": "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"}}).(map[string]any)
			require.Equal(t, 4106.0, raw["code"], "%v", raw)
			tab.pair(a, mPy033, "put_blob: 4106 (0.3 has none)")
		}
	} else {
		raw := ag.ok(t, map[string]any{"op": "raw_call", "event": protocol.EventGetFinder,
			"data": map[string]any{"agent": name, "req_id": "m2", "computer": byPeer[mPy042].name}}).(map[string]any)
		require.Equal(t, 4106.0, raw["error"].(map[string]any)["code"], "%v", raw)
		tab.pair(a, mPy042, "get_finder: 4106 nested at once")
	}

	// A cancel, to a Computer of another generation that answers a
	// cancelled call (neither 0.2 reference Computer does: spec/decisions.md,
	// Server: generations).
	target := map[matrixPeer]*matrixComputer{mPy012: byPeer[mPy042], mPy033: byPeer[mPy042], mPy042: byPeer[mPy033]}[a]
	ag.start(t, "slow", map[string]any{"op": "tool_call", "computer": target.name, "tool": target.peer.exposed("slow"),
		"params": map[string]any{"seconds": 120}, "timeout": 180, "deadline_ms": 200_000})
	target.slowStarted(t)
	ag.ok(t, map[string]any{"op": "cancel", "call": "slow"})
	m := ag.await(t, "slow")
	require.Equal(t, true, m["ok"], "%v", m)
	res := m["result"].(map[string]any)
	require.Equal(t, true, res["isError"], "the cancelled call ends: %v", res)
	tab.pair(a, target.peer, "cancel: the call ends isError ("+cancelMarker(res)+")")

	// Updates: the Computers' announcements reach the Agent's handler.
	for _, c := range []*matrixComputer{byPeer[mPy012], byPeer[mPy042]} {
		matrixUpdateConfig(t, ag, a, c, tab)
	}
	if a.flat() {
		src := byPeer[mPy042]
		src.proc.send(t, "update_skills")
		require.Equal(t, true, src.proc.next(t)["ok"])
		ag.note(t, "skills", func(m map[string]any) bool { return m["notify"] == "skills" && m["computer"] == src.name })
		tab.pair(a, src.peer, "notify:update_skills: the SDK refetches the skills")
	}

	require.Equal(t, []any{true, nil}, ag.ok(t, map[string]any{"op": "leave"}))
	ag.send(t, `{"op":"quit"}`)
	ag.exited(t)
}

// matrixBasics has the Agent ag list the room, in which it finds every
// Computer with its version, list each Computer's tools and call its echo
// by the name it got; it returns the room's sessions by name.
func matrixBasics(t *testing.T, ag *refAgent, a matrixPeer, computers []*matrixComputer, tab *matrix) map[string]map[string]any {
	t.Helper()
	listed := map[string]map[string]any{}
	for _, s := range ag.ok(t, map[string]any{"op": "list_room"}).([]any) {
		s := s.(map[string]any)
		listed[s["name"].(string)] = s
	}
	for _, c := range computers {
		s := listed[c.name]
		require.NotNil(t, s, "%s not listed: %v", c.name, listed)
		require.Equal(t, c.peer.gen, s["a2c_version"], "%v", s)
		require.Equal(t, wantTools(a, c), toolsByName(t, ag.ok(t, map[string]any{"op": "get_tools", "computer": c.name})), "%s", c.name)
		res := ag.ok(t, map[string]any{"op": "tool_call", "computer": c.name, "tool": c.peer.exposed("echo"),
			"params": map[string]any{"text": "hi"}}).(map[string]any)
		require.Equal(t, "echo: hi", firstText(res), "%s: %v", c.name, res)
		require.NotEqual(t, true, res["isError"], "%v", res)
		tab.pair(a, c.peer, fmt.Sprintf("listed as %s; tools %s; call `%s` ok", c.peer.gen, bundles(wantTools(a, c)), c.peer.exposed("echo")))
	}
	return listed
}

// matrixUpdateConfig has c announce a config change and waits until ag's
// SDK hands the notification to its handler.
func matrixUpdateConfig(t *testing.T, ag *refAgent, a matrixPeer, c *matrixComputer, tab *matrix) {
	t.Helper()
	c.proc.send(t, "update_config")
	require.Equal(t, true, c.proc.next(t)["ok"])
	ag.note(t, "update_config", func(m map[string]any) bool {
		d, _ := m["data"].(map[string]any)
		return m["notify"] == "update_config" && d["computer"] == c.name
	})
	tab.pair(a, c.peer, "notify:update_config reaches the handler")
}

// bundles renders a tool list's bundle ids for the table.
func bundles(tools map[string]string) string {
	ids := map[string]bool{}
	for _, id := range tools {
		ids[id] = true
	}
	var out []string
	for id := range ids {
		if id == "" {
			id = "no bundle_id"
		} else {
			id = "bundle_id " + id
		}
		out = append(out, id)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// cancelMarker says how a cancelled call's result marks it.
func cancelMarker(res map[string]any) string {
	for _, k := range []string{"meta", "_meta"} {
		if m, ok := res[k].(map[string]any); ok && m["a2c_cancelled"] == true {
			return k + ".a2c_cancelled"
		}
	}
	if sc, ok := res["structuredContent"].(map[string]any); ok && sc["code"] != nil {
		return fmt.Sprintf("structuredContent.code %v", sc["code"])
	}
	return "no marker"
}

// matrixRustAgent runs the Rust SDK 0.4.1's Agent through the matrix.
func matrixRustAgent(t *testing.T, d *deployment, office string, a matrixPeer, computers []*matrixComputer, byPeer map[matrixPeer]*matrixComputer, tab *matrix) {
	ag := startRefAgent(t, a.sdk, d.URL, d.APIKey, office, "a-rs041", "SMCP_TOOL_TIMEOUT=3")
	ag.ok(t, map[string]any{"op": "join"})
	listed := matrixBasics(t, ag, a, computers, tab)
	require.Equal(t, "0.4.0", listed["a-rs041"]["a2c_version"])
	m := ag.do(t, map[string]any{"op": "tool_call", "computer": "nobody", "tool": "x"})
	require.Equal(t, false, m["ok"], "%v", m)
	require.Contains(t, m["error"], "[404] Computer with name 'nobody' not found", "%v", m)
	tab.agent(a, "404 flat, the references' own: `"+fmt.Sprint(m["error"])+"`")
	for _, c := range []*matrixComputer{byPeer[mPy012], byPeer[mRs0115]} {
		m := ag.do(t, map[string]any{"op": "get_skills", "computer": c.name})
		require.Equal(t, false, m["ok"], "%v", m)
		require.NotEqual(t, true, m["hung"], "%v", m)
		tab.pair(a, c.peer, "get_skills: 4106 at once (the SDK: `"+fmt.Sprint(m["error"])+"`)")
	}
	// Its tool-call timeout (3 s) on a 0.2 Computer: the SDK's own marker,
	// and its cancel reaches the Computer through the Server.
	c := byPeer[mPy012]
	res := ag.ok(t, map[string]any{"op": "tool_call", "computer": c.name, "tool": "slow", "params": map[string]any{"seconds": 120}}).(map[string]any)
	meta, _ := res["meta"].(map[string]any)
	require.Equal(t, true, meta["a2c_timeout"], "%v", res)
	tab.pair(a, c.peer, "its own tool-call timeout: meta.a2c_timeout (the SDK's)")
	for _, c := range []*matrixComputer{byPeer[mPy033], byPeer[mPy042], byPeer[mRs041]} {
		skills := ag.ok(t, map[string]any{"op": "get_skills", "computer": c.name}).([]any)
		require.Equal(t, refSkill, skills[0].(map[string]any)["name"], "%v", skills)
		tab.pair(a, c.peer, "get_skills ok")
	}
	matrixUpdateConfig(t, ag, a, byPeer[mPy012], tab)
	ag.ok(t, map[string]any{"op": "leave"})
	ag.send(t, `{"op":"quit"}`)
	ag.exited(t)
}

// matrixRust015Agent runs the Rust SDK 0.1.15's Agent: its own requests
// fail on every answer but a tool call's (it takes the ack's argument array
// for the answer, conformance/lockstep-rust.md R1), so the rest is read on
// the driver's plain Socket.IO connection of the same program, which joins
// the office once the SDK's Agent has left it.
func matrixRust015Agent(t *testing.T, d *deployment, office string, a matrixPeer, computers []*matrixComputer, tab *matrix) {
	ag := startRustAgent(t, d.URL, d.APIKey, office, "a-rs0115", 20)
	// The previous Agent's seat frees when the Server has seen it leave; the
	// SDK's join has no ack, so a call tells whether it was admitted (4103
	// when not).
	only := func(v any) map[string]any {
		arr, ok := v.([]any)
		require.True(t, ok, "the SDK returns the ack's arguments: %v", v)
		require.Len(t, arr, 1, "%v", v)
		return arr[0].(map[string]any)
	}
	for attempt := 0; ; attempt++ {
		ag.ok(t, map[string]any{"op": "join"})
		res := only(ag.ok(t, map[string]any{"op": "tool_call", "computer": computers[0].name, "tool": computers[0].peer.exposed("echo"), "params": map[string]any{"text": "hi"}}))
		if e, ok := res["error"].(map[string]any); ok && e["code"] == 4103.0 && attempt < 10 {
			continue
		}
		require.Equal(t, "echo: hi", firstText(res), "%v", res)
		break
	}
	for _, c := range computers {
		res := only(ag.ok(t, map[string]any{"op": "tool_call", "computer": c.name, "tool": c.peer.exposed("echo"), "params": map[string]any{"text": "hi"}}))
		require.Equal(t, "echo: hi", firstText(res), "%s: %v", c.name, res)
		tab.pair(a, c.peer, fmt.Sprintf("call `%s` ok (the SDK returns `[result]`, R1)", c.peer.exposed("echo")))
	}
	res := only(ag.ok(t, map[string]any{"op": "tool_call", "computer": "nobody", "tool": "x"}))
	require.Equal(t, 404.0, res["error"].(map[string]any)["code"], "%v", res)
	tab.agent(a, "404 nested (the SDK returns it as the call's result, R1)")
	ag.ok(t, map[string]any{"op": "leave"})

	raw := func(event string, data map[string]any) map[string]any {
		v := ag.ok(t, map[string]any{"op": "raw_call", "event": event, "data": data})
		arr := v.([]any)[0].([]any)
		return arr[0].(map[string]any)
	}
	var joined bool
	for attempt := 0; attempt < 10 && !joined; attempt++ {
		v := ag.ok(t, map[string]any{"op": "raw_call", "event": protocol.EventJoinOffice,
			"data": map[string]any{"role": "agent", "name": "a-rs0115-raw", "office_id": office}})
		joined = v.([]any)[0].([]any)[0] == true
	}
	require.True(t, joined, "the plain connection joins once the SDK's Agent has left")
	ret := raw(protocol.EventListRoom, map[string]any{"agent": "a-rs0115-raw", "req_id": "l1", "office_id": office})
	listed := map[string]string{}
	for _, s := range ret["sessions"].([]any) {
		s := s.(map[string]any)
		listed[s["name"].(string)] = fmt.Sprint(s["a2c_version"])
	}
	for _, c := range computers {
		require.Equal(t, c.peer.gen, listed[c.name], "%v", listed)
		tools := raw(protocol.EventGetTools, map[string]any{"agent": "a-rs0115-raw", "req_id": "t1", "computer": c.name})
		require.Equal(t, wantTools(a, c), toolsByName(t, tools), "%s", c.name)
		tab.pair(a, c.peer, fmt.Sprintf("(plain connection) listed as %s; tools %s", c.peer.gen, bundles(wantTools(a, c))))
	}
	c := computers[len(computers)-1] // the Rust 0.4.1 Computer
	e := raw(protocol.EventGetFinder, map[string]any{"agent": "a-rs0115-raw", "req_id": "f1", "computer": c.name})
	require.Equal(t, 4106.0, e["error"].(map[string]any)["code"], "%v", e)
	tab.pair(a, c.peer, "(plain connection) get_finder: 4106 nested at once")
}

// refConnect starts sdk's Agent against url and returns its first line, the
// outcome of its connection.
func refConnect(t *testing.T, sdk refSDK, url, key string) map[string]any {
	t.Helper()
	path, args := refCommand(t, sdk, "agent")
	env := append(refHome(t), "SMCP_URL="+url, "SMCP_API_KEY="+key, "SMCP_OFFICE=o1", "SMCP_AGENT=a-probe", "RUST_LOG=warn")
	p := startPeerProc(t, sdk.String()+" agent a-probe", true, path, env, args...)
	return p.next(t)
}

// TestStrictServerReferences: with --strict-handshake and 0.4 alone the Go
// Server is, to the reference peers, a 0.4 reference Server: the 0.4
// Agents and Computers work, a 0.3.3 Agent reads the 4008 as the SDK's own
// ProtocolVersionError (its parser takes our body and header), and a 0.1.2
// Agent, which names no version, is refused.
func TestStrictServerReferences(t *testing.T) {
	d := startServer(t, server.WithStrictHandshake(true), server.WithProtocolGenerations(protocol.Gen04))
	c := startRefComputer(t, refPy04, d.URL, d.APIKey, "o1", "c1")
	a := startRefAgent(t, refRust04, d.URL, d.APIKey, "o1", "a1")
	a.ok(t, map[string]any{"op": "join"})
	res := a.ok(t, map[string]any{"op": "tool_call", "computer": c.Name, "tool": "tools__echo", "params": map[string]any{"text": "hi"}}).(map[string]any)
	require.Equal(t, "echo: hi", firstText(res), "%v", res)

	m := refConnect(t, refPy03, d.URL, d.APIKey)
	require.Equal(t, false, m["ok"], "%v", m)
	require.Equal(t, "ProtocolVersionError", m["error_type"], "%v", m)
	require.Contains(t, m["error"], "0.4.999", "the range the body names: %v", m)
	old := refConnect(t, refPy01, d.URL, d.APIKey)
	require.Equal(t, false, old["ok"], "%v", old)
	t.Logf("a2c-smcp 0.3.3: %s: %s; 0.1.2: %s: %s", m["error_type"], m["error"], old["error_type"], old["error"])
}
