package e2e

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/computer/sio"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// The Go Computer against the reference Servers (issue 25, Deliver 4 and
// 7, the Computer's rows): the library's Computer, with its defaults (it
// names 0.4.0 and falls back on a 4008), joins an office on the a2c-smcp
// 0.4.2 Python Server (version gate on, as documented) and on the Rust
// 0.4.1 Server, and the reference Agents of the same SDK use it as they
// use their own Computers: the room lists it with 0.4.0, its tools carry
// the bundle id "tools" and are called by exposed name, a cancelled call
// and a call that outlives its timeout come back with the 0.4 markers,
// its config is keyed by bundle id (the Python Server validates it), its
// desktop has the tool server's window, and every 0.4 event gets a coded
// answer. Then, on smcp-server, a 0.2 Agent (a2c-smcp 0.1.2) and a 0.4
// Agent (0.4.2) share an office with it, each seeing it in its own
// generation.

// goComputer is a Go Computer of these tests, with its log kept so that a
// test can wait for what its MCP servers print.
type goComputer struct {
	*computer.Computer
	name string
	log  *syncBuffer
}

// startGoComputer starts the library's Computer over the e2e tool server
// (as "tools", auto_apply) and connects it to url with key and dial.
func startGoComputer(t *testing.T, url, key, office, name string, dial ...sio.Option) *goComputer {
	t.Helper()
	tools := toolServer(t, "tools")
	tools["default_tool_meta"] = map[string]any{"auto_apply": true}
	var buf syncBuffer
	var w io.Writer = &buf
	if testing.Verbose() {
		w = io.MultiWriter(&buf, testWriter{t})
	}
	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := startComputerDialing(t, &deployment{URL: url, APIKey: key}, office, name, []mcpServer{tools},
		[]computer.Option{computer.WithLogger(log)}, dial...)
	return &goComputer{Computer: c, name: name, log: &buf}
}

// slowStarted waits until the tool server's slow tool has started n times
// (it says so on its stderr, which the Computer logs).
func (c *goComputer) slowStarted(t *testing.T, n int) {
	t.Helper()
	c.waitLog(t, "slow: started", n)
}

// waitLog waits until the Computer's log holds what n times.
func (c *goComputer) waitLog(t *testing.T, what string, n int) {
	t.Helper()
	deadline := time.After(peerWait)
	for {
		out, changed := c.log.snapshot()
		if strings.Count(out, what) >= n {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%s: %q not logged %d times:\n%s", c.name, what, n, tail(out, 4000))
		}
	}
}

func TestGoComputerOnReferenceServers(t *testing.T) {
	for _, sdk := range []refSDK{refPy04, refRust04} {
		t.Run(sdk.Lang, func(t *testing.T) {
			s := startRefServer(t, sdk)
			c := startGoComputer(t, s.URL, s.APIKey, "o1", "go-pc")
			require.Equal(t, protocol.Gen04, c.Client().Generation(), "the newest generation, accepted")
			require.False(t, c.Client().Confirmed(), "a reference Server confirms nothing")

			if sdk == refRust04 {
				a := startRefAgent(t, refRust04, s.URL, s.APIKey, "o1", "rs-agent")
				goComputerBasics(t, a, c)
				a.ok(t, map[string]any{"op": "leave"})
			}
			a := startRefAgent(t, refPy04, s.URL, s.APIKey, "o1", "py-agent", "SMCP_TIMEOUT=60")
			goComputerBasics(t, a, c)
			// The Python Server waits exactly the request's timeout for the
			// Computer's answer and answers nothing when it runs out, so a
			// Computer's own timeout marker races it there: the timeout is
			// checked on the Rust Server, which waits 30 s.
			goComputerMarkers(t, a, c, sdk == refRust04)
			goComputer04Events(t, a, c)
		})
	}
}

// The smcp-computer command with its defaults against the same reference
// Servers, used by the 0.4.2 Python Agent: the same answers as the
// library's.
func TestSmcpComputerOnReferenceServers(t *testing.T) {
	bins := buildChaos(t)
	for _, sdk := range []refSDK{refPy04, refRust04} {
		t.Run(sdk.Lang, func(t *testing.T) {
			s := startRefServer(t, sdk)
			tools := toolServer(t, "tools")
			tools["default_tool_meta"] = map[string]any{"auto_apply": true}
			raw, err := json.Marshal([]mcpServer{tools})
			require.NoError(t, err)
			cfg := filepath.Join(t.TempDir(), "computer.json")
			require.NoError(t, os.WriteFile(cfg, raw, 0o600))
			p := startProc(t, "smcp-computer", bins.computer, "run", "--server", s.URL, "--office", "o1", "--name", "go-cli",
				"--config", cfg, "--api-key", s.APIKey, "--log-level", "debug", "--log-format", "text")
			c := &goComputer{name: "go-cli", log: p.logs}
			c.waitLog(t, "joined office", 1)
			c.waitLog(t, "protocol=0.4.0 confirmed=false", 1)

			a := startRefAgent(t, refPy04, s.URL, s.APIKey, "o1", "py-agent", "SMCP_TIMEOUT=60")
			goComputerBasics(t, a, c)
			goComputerMarkers(t, a, c, sdk == refRust04)
			goComputer04Events(t, a, c)
		})
	}
}

// goComputerBasics: a joins, finds c in the room with 0.4.0, lists its
// tools with their bundle id, calls one by its exposed name, reads its
// config keyed by bundle id and its desktop.
func goComputerBasics(t *testing.T, a *refAgent, c *goComputer) {
	t.Helper()
	a.ok(t, map[string]any{"op": "join"})
	var found map[string]any
	for _, s := range a.ok(t, map[string]any{"op": "list_room"}).([]any) {
		if s := s.(map[string]any); s["name"] == c.name {
			found = s
		}
	}
	require.NotNil(t, found, "%s not in the room", c.name)
	require.Equal(t, "computer", found["role"], "%v", found)
	require.Equal(t, "0.4.0", found["a2c_version"], "%v", found)

	got := a.ok(t, map[string]any{"op": "get_tools", "computer": c.name})
	if m, ok := got.(map[string]any); ok { // Python: GetToolsRet; Rust: the list
		got = m["tools"]
	}
	names := map[string]string{}
	for _, tool := range got.([]any) {
		tool := tool.(map[string]any)
		names[tool["name"].(string)] = tool["bundle_id"].(string)
	}
	require.Equal(t, map[string]string{"tools__echo": "tools", "tools__slow": "tools", "tools__fail": "tools"}, names)

	res := a.ok(t, map[string]any{"op": "tool_call", "computer": c.name, "tool": "tools__echo",
		"params": map[string]any{"text": "hi"}}).(map[string]any)
	require.Equal(t, "echo: hi", firstText(res), "%v", res)
	require.NotEqual(t, true, res["isError"], "%v", res)

	cfg := a.ok(t, map[string]any{"op": "get_config", "computer": c.name}).(map[string]any)
	servers, _ := cfg["servers"].(map[string]any)
	require.Contains(t, servers, "tools", "%v", cfg)
	require.Equal(t, "tools", servers["tools"].(map[string]any)["bundle_id"], "%v", cfg)

	desk := a.ok(t, map[string]any{"op": "get_desktop", "computer": c.name})
	if m, ok := desk.(map[string]any); ok {
		desk = m["desktops"]
	}
	require.Len(t, desk, 1, "the tool server's one window: %v", desk)
	require.True(t, strings.HasPrefix(desk.([]any)[0].(string), statusWindow), "%v", desk)
}

// goComputerMarkers: the Python Agent cancels a slow call (the Computer
// answers it with meta.a2c_cancelled and a2c_cancel_reason), and, with
// timeout, a raw client:tool_call whose timeout is 2 s comes back from the
// Computer with meta.a2c_timeout (the step waits far longer, so the answer
// is the Computer's own).
func goComputerMarkers(t *testing.T, a *refAgent, c *goComputer, timeout bool) {
	t.Helper()
	goComputerMarkersAfter(t, a, c, 1, timeout)
}

// goComputerMarkersAfter is goComputerMarkers for a Computer whose slow
// tool has started n-1 times before.
func goComputerMarkersAfter(t *testing.T, a *refAgent, c *goComputer, n int, timeout bool) {
	t.Helper()
	pythonCancelsSlow(t, a, c.name, func() { c.slowStarted(t, n) })
	if !timeout {
		return
	}

	raw := a.ok(t, map[string]any{"op": "raw_call", "event": protocol.EventToolCall, "timeout": 120, "deadline_ms": 150_000,
		"data": map[string]any{"agent": a.Name, "computer": c.name, "req_id": "timeout-1", "tool_name": "tools__slow",
			"params": map[string]any{"seconds": 120}, "timeout": 2}})
	if l, ok := raw.([]any); ok && len(l) == 1 { // python-socketio hands a one-value ack as the value
		raw = l[0]
	}
	res := raw.(map[string]any)
	require.Equal(t, true, res["isError"], "%v", res)
	meta, _ := res["meta"].(map[string]any)
	require.Equal(t, true, meta["a2c_timeout"], "the Computer's own timeout, as the 0.4 Computers write it: %v", res)
	require.NotContains(t, meta, "a2c_cancelled", "%v", res)
}

// goComputer04Events: every event 0.4 added gets an answer from the Go
// Computer through the reference Server, a coded one for what it has not
// got, never silence.
func goComputer04Events(t *testing.T, a *refAgent, c *goComputer) {
	t.Helper()
	for _, tc := range []struct {
		step map[string]any
		code string
	}{
		{map[string]any{"op": "get_resources", "computer": c.name, "mcp_server": "nope"}, "4014"},
		{map[string]any{"op": "get_skill", "computer": c.name, "name": "no-such-skill"}, "4014"},
		{map[string]any{"op": "get_blob", "computer": c.name, "blob_handle": "no-such-handle"}, "4018"},
		// The Python Agent raises the refusal's message alone (BlobUploadError).
		{map[string]any{"op": "put_blob", "computer": c.name, "text": "x"}, "4019|landing root not configured"},
	} {
		m := a.do(t, tc.step)
		require.Equal(t, false, m["ok"], "%v: %v", tc.step, m)
		require.NotEqual(t, true, m["hung"], "%v: %v", tc.step, m)
		require.Regexp(t, tc.code, m["error"], "%v: %v", tc.step, m)
	}
	// The tool server's resources (its window), one page.
	page := a.ok(t, map[string]any{"op": "get_resources", "computer": c.name, "mcp_server": "tools"}).(map[string]any)
	require.Len(t, page["resources"], 1, "%v", page)
	require.Equal(t, statusWindow, page["resources"].([]any)[0].(map[string]any)["uri"], "%v", page)
	skills := a.ok(t, map[string]any{"op": "get_skills", "computer": c.name})
	if m, ok := skills.(map[string]any); ok {
		skills = m["skills"]
	}
	require.Equal(t, []any{}, skills)
}

// On smcp-server a 0.2 Agent and a 0.4 Agent share an office with the Go
// Computer, which the Server confirms in 0.4: the Server names each
// request's caller (protocol.CallerVersionMember) and the Computer answers
// in the caller's generation. The 0.1.2 Agent sees the bare names without
// bundle ids, calls a tool by its bare or its exposed name, and reads a
// cancelled call as the 4004 error result of 0.2; the 0.4.2 Agent then
// sees the exposed names with bundle ids and the 0.4 cancel and timeout
// markers.
func TestGoComputerMixedOffice(t *testing.T) {
	d := startServer(t)
	c := startGoComputer(t, d.URL, d.APIKey, "mixed", "go-pc")
	require.Equal(t, protocol.Gen04, c.Client().Generation())
	require.True(t, c.Client().Confirmed(), "smcp-go confirms the generation")

	old := startRefAgent(t, refPy01, d.URL, d.APIKey, "mixed", "agent-02")
	old.ok(t, map[string]any{"op": "join"})
	got := old.ok(t, map[string]any{"op": "get_tools", "computer": c.name})
	if m, ok := got.(map[string]any); ok {
		got = m["tools"]
	}
	var names []string
	for _, tool := range got.([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	require.ElementsMatch(t, []string{"echo", "slow", "fail"}, names, "the 0.2 names: %v", got)
	for _, tool := range got.([]any) {
		require.NotContains(t, tool, "bundle_id", "%v", tool)
	}
	for _, name := range []string{"echo", "tools__echo"} {
		res := old.ok(t, map[string]any{"op": "tool_call", "computer": c.name, "tool": name, "params": map[string]any{"text": "old"}}).(map[string]any)
		require.Equal(t, "echo: old", firstText(res), "%s: %v", name, res)
	}
	// A cancel in 0.2's form: the 4004 error result, no 0.4 marker.
	old.start(t, "slow", map[string]any{"op": "tool_call", "computer": c.name, "tool": "slow",
		"params": map[string]any{"seconds": 120}, "timeout": 180, "deadline_ms": 200_000})
	c.slowStarted(t, 1)
	old.ok(t, map[string]any{"op": "cancel", "call": "slow"})
	m := old.await(t, "slow")
	require.Equal(t, true, m["ok"], "%v", m)
	res := m["result"].(map[string]any)
	require.Equal(t, true, res["isError"], "%v", res)
	sc, _ := res["structuredContent"].(map[string]any)
	require.EqualValues(t, protocol.CodeToolTimeout, sc["code"], "%v", res)
	meta, _ := res["_meta"].(map[string]any)
	require.NotContains(t, meta, "a2c_cancelled", "%v", res)
	old.ok(t, map[string]any{"op": "leave"}) // an office has one Agent

	a := startRefAgent(t, refPy04, d.URL, d.APIKey, "mixed", "agent-04")
	goComputerBasics(t, a, c)
	goComputerMarkersAfter(t, a, c, 2, true)
}

// The same MCP servers' windows come out of the Go Computer in the order
// the a2c-smcp 0.4.2 Computer gives them: within a server by
// annotations.priority, and for a server with fullscreen windows the
// highest-priority fullscreen one alone (here a low-priority one is listed
// before it: 0.4.2 sorts a server's windows by priority before it looks for
// the first fullscreen one), servers by bundle id.
func TestGoComputerDesktopOrder(t *testing.T) {
	s := startRefServer(t, refPy04)
	servers := func() []mcpServer {
		return []mcpServer{
			reexec(t, "wa", "windowserver", "a1:0.2", "a2:0.9", "a3:0.5"),
			reexec(t, "wb", "windowserver", "b1:0.1:full", "b2:0.9:full", "b3:1"),
		}
	}
	ref := startRefComputer(t, refPy04, s.URL, s.APIKey, "o1", "py-pc", withRefServers(servers()...))
	goPC := startComputerDialing(t, &deployment{URL: s.URL, APIKey: s.APIKey}, "o1", "go-pc", servers(), nil)
	require.Equal(t, protocol.Gen04, goPC.Client().Generation())

	a := startRefAgent(t, refPy04, s.URL, s.APIKey, "o1", "py-agent")
	a.ok(t, map[string]any{"op": "join"})
	desktop := func(name string) []any {
		d := a.ok(t, map[string]any{"op": "get_desktop", "computer": name}).(map[string]any)
		return d["desktops"].([]any)
	}
	want := desktop(ref.Name)
	require.Equal(t, []any{
		"window://e2e.win/a2\n\nwindow a2", "window://e2e.win/a3\n\nwindow a3", "window://e2e.win/a1\n\nwindow a1",
		"window://e2e.win/b2\n\nwindow b2",
	}, want, "the reference's order")
	require.Equal(t, want, desktop("go-pc"), "the Go Computer's order")
}
