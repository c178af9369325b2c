package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The interop harness of the reference SDKs of protocol generations 0.3 and
// 0.4: start a Server, a Computer or an Agent of a2c-smcp 0.3.3 or 0.4.2
// (Python, drivers in testdata/pypeer) or of the Rust crates 0.4.1
// (testdata/rustpeer04), each with its SDK's defaults (version handshake,
// key in auth.token), talk to it over its standard input and output, and
// stop it (with the MCP servers it started) at the end of the test.
// `go run mage.go setup` installs the peers and tells the tests where they
// are (SMCP_INTEROP_PYTHON_03, SMCP_INTEROP_PYTHON_04,
// SMCP_INTEROP_RUST04_BIN); a peer that is missing fails the test that
// needs it. The drivers' line protocol and the reference peers' defects the
// drivers work around are in PEERS.md.

// refSDK is a release of a reference SDK whose peers the harness runs.
type refSDK struct {
	Lang    string // "python" or "rust"
	Version string // the SDK's release
}

var (
	// a2c-smcp 0.1.2, protocol 0.2.0 (names no version): the drivers run
	// on it too, for the Go Server's interop matrix (generations_test.go).
	refPy01   = refSDK{"python", "0.1.2"}
	refPy03   = refSDK{"python", "0.3.3"} // a2c-smcp 0.3.3, protocol 0.3.1
	refPy04   = refSDK{"python", "0.4.2"} // a2c-smcp 0.4.2, protocol 0.4.0
	refRust04 = refSDK{"rust", "0.4.1"}   // smcp* 0.4.1, protocol 0.4.0
)

func (s refSDK) String() string { return s.Lang + " " + s.Version }

// Protocol is the version string the SDK's peers send as a2c_version.
func (s refSDK) Protocol() string {
	switch s {
	case refPy01:
		return "" // none
	case refPy03:
		return "0.3.1"
	}
	return "0.4.0"
}

// refPeerEnv names the variable that tells the tests where sdk's peers are.
func refPeerEnv(sdk refSDK) string {
	switch sdk {
	case refPy01:
		return "SMCP_INTEROP_PYTHON"
	case refPy03:
		return "SMCP_INTEROP_PYTHON_03"
	case refPy04:
		return "SMCP_INTEROP_PYTHON_04"
	case refRust04:
		return "SMCP_INTEROP_RUST04_BIN"
	}
	panic("no peers of " + sdk.String())
}

// refCommand returns the program and leading arguments that run role
// ("server", "computer" or "agent") of sdk, failing the test when the peer
// is not installed.
func refCommand(t testing.TB, sdk refSDK, role string) (string, []string) {
	t.Helper()
	name := refPeerEnv(sdk)
	where := os.Getenv(name)
	if where == "" {
		t.Fatalf("%s is not set: the %s peers are not installed (run `go run mage.go setup`; `go run mage.go test` sets it)", name, sdk)
	}
	if sdk.Lang == "python" {
		if _, err := os.Stat(where); err != nil {
			t.Fatalf("%s=%s: %v (run `go run mage.go setup`)", name, where, err)
		}
		script, err := filepath.Abs(filepath.Join("testdata", "pypeer", role+".py"))
		require.NoError(t, err)
		return where, []string{script}
	}
	bin := filepath.Join(where, "rustpeer04-"+role)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s=%s: %v (run `go run mage.go setup`)", name, where, err)
	}
	return bin, nil
}

// refHome gives a peer a home of its own: the SDKs keep state under ~ (the
// Python SDK's ~/.a2c, the Rust SDK's settings and blob spools), which the
// tests must neither read nor leave behind.
func refHome(t testing.TB) []string {
	home := t.TempDir()
	return []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"A2C_SMCP_LOG_LEVEL=warning", // the Python SDK's own log (to stderr, see common.py)
	}
}

// refServer is a reference SDK's Server on a loopback port.
type refServer struct {
	SDK    refSDK
	URL    string
	APIKey string
	*peerProc
}

// startRefServer starts sdk's Server in its documented setup (version gate
// on, key read from auth.token) and waits until it listens.
func startRefServer(t testing.TB, sdk refSDK) *refServer {
	t.Helper()
	key := randomKey(t)
	path, args := refCommand(t, sdk, "server")
	env := append(refHome(t), "SMCP_API_KEY="+key, "RUST_LOG=smcp_server_hyper=info,smcp_server_core=debug,warn")
	s := &refServer{SDK: sdk, APIKey: key}
	s.peerProc = startPeerProc(t, sdk.String()+" server", false, path, env, append(args, "127.0.0.1:0")...)
	if sdk.Lang == "rust" {
		s.URL = "http://" + s.waitOutput(t, listening) // the SDK logs the bound address
	} else {
		ready := s.next(t)
		require.Equal(t, true, ready["ready"], "%v", ready)
		s.URL = ready["url"].(string)
	}
	return s
}

// refComputer is a reference SDK's Computer that has joined an office.
type refComputer struct {
	SDK    refSDK
	Name   string
	Office string
	// Tools are the names it exposes, as it listed them once joined.
	Tools []string
	// SkillHome holds its skills (SKILL.md of the skill refSkill under
	// user/); LandingRoot is where client:put_blob writes.
	SkillHome   string
	LandingRoot string
	*peerProc
}

// refSkill is the skill every refComputer serves.
const refSkill = "e2e-skill"

// refComputerOption changes what startRefComputer hosts.
type refComputerOption func(*[]mcpServer)

// withRefServers replaces the Computer's MCP servers (by default the e2e
// tool server, as "tools": its tools are exposed as tools__echo,
// tools__slow and tools__fail).
func withRefServers(servers ...mcpServer) refComputerOption {
	return func(s *[]mcpServer) { *s = servers }
}

// startRefComputer starts sdk's Computer hosting the e2e tool server (real
// processes over stdio, every tool auto-applied), serving one skill and
// accepting uploads, connects it to url with key and waits until it has
// joined office as name.
func startRefComputer(t testing.TB, sdk refSDK, url, key, office, name string, opts ...refComputerOption) *refComputer {
	t.Helper()
	servers := []mcpServer{toolServer(t, "tools")}
	for _, o := range opts {
		o(&servers)
	}
	dir := t.TempDir()
	c := &refComputer{SDK: sdk, Name: name, Office: office,
		SkillHome: filepath.Join(dir, "skills"), LandingRoot: filepath.Join(dir, "landing")}
	skill := filepath.Join(c.SkillHome, "user", refSkill)
	require.NoError(t, os.MkdirAll(skill, 0o755))
	require.NoError(t, os.MkdirAll(c.LandingRoot, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(skill, "SKILL.md"),
		[]byte("---\nname: "+refSkill+"\ndescription: The e2e harness's skill.\n---\n# E2E\nA skill served by every reference Computer.\n"), 0o644))
	peer := map[string]any{"servers": refServerConfigs(sdk, servers), "skill_home": c.SkillHome}
	if sdk.Lang == "python" {
		settings := filepath.Join(dir, "settings.json")
		b, err := json.Marshal(map[string]any{"landingRoot": c.LandingRoot})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(settings, b, 0o644))
		peer["settings"] = settings
	} else {
		peer["landing_root"] = c.LandingRoot
	}
	b, err := json.Marshal(peer)
	require.NoError(t, err)
	config := filepath.Join(dir, "peer.json")
	require.NoError(t, os.WriteFile(config, b, 0o644))

	path, args := refCommand(t, sdk, "computer")
	env := append(refHome(t), "SMCP_URL="+url, "SMCP_API_KEY="+key, "SMCP_OFFICE="+office, "SMCP_COMPUTER="+name,
		// the tool server's stderr reaches the Rust SDK's log at debug, under mcp_stderr
		"RUST_LOG=smcp_computer=debug,mcp_stderr=debug,warn")
	c.peerProc = startPeerProc(t, fmt.Sprintf("%s computer %s", sdk, name), true, path, env, append(args, config)...)
	ready := c.next(t)
	require.Equal(t, true, ready["ready"], "%s: %v", c.name, ready)
	for _, n := range ready["tools"].([]any) {
		c.Tools = append(c.Tools, n.(string))
	}
	return c
}

// rustCLIComputer is the name the Rust SDK's smcp-computer command joins
// under, whatever it is told (PEERS.md).
const rustCLIComputer = "friday_hands"

// startRustComputerCLI starts the Rust SDK's own smcp-computer command (its
// REPL, driven over standard input) with its defaults, hosting the e2e tool
// server from an --mcp-config file: it starts the MCP servers, connects to
// url with key (auth.token) and joins office as rustCLIComputer. Its output
// is text for a person; the harness waits for the lines that say each step
// is done. c.command does not apply to it; c.send writes a REPL line. It
// logs nothing to stderr (RUST_LOG is not read), so the tool server's
// "slow: started" does not show either.
func startRustComputerCLI(t testing.TB, url, key, office string) *refComputer {
	t.Helper()
	bin, _ := refCommand(t, refRust04, "computer")
	bin = filepath.Join(filepath.Dir(bin), "smcp-computer")
	servers := map[string]any{}
	for _, s := range refServerConfigs(refRust04, []mcpServer{toolServer(t, "tools")}) {
		servers[s["name"].(string)] = s
	}
	b, err := json.Marshal(map[string]any{"servers": servers})
	require.NoError(t, err)
	config := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(config, b, 0o644))
	c := &refComputer{SDK: refRust04, Name: rustCLIComputer, Office: office}
	env := append(refHome(t), "NO_COLOR=1", "RUST_LOG=smcp_computer=debug,mcp_stderr=debug,warn")
	c.peerProc = startPeerProc(t, "rust 0.4.1 smcp-computer CLI", true, bin, env,
		"--url", url, "--auth", key, "--no-color", "--approve-all-mcp", "run", "--mcp-config", config)
	c.send(t, "start all")
	c.waitOutput(t, regexp.MustCompile(`All servers started`))
	// A join the Rust Server dropped (the first event after CONNECT can be
	// lost) fails in the SDK after its timeout ("命令执行失败", command
	// failed): join again, at most 3 times in all.
	joined := "Joined office: " + regexp.QuoteMeta(office)
	for attempt := 1; ; attempt++ {
		c.send(t, "socket join "+office+" "+rustCLIComputer)
		out := c.waitOutput(t, regexp.MustCompile(fmt.Sprintf(`(?s)%s|(?:命令执行失败[^\n]*.*?){%d}`, joined, attempt)))
		if regexp.MustCompile(joined).MatchString(out) {
			return c
		}
		require.Less(t, attempt, 3, "the CLI never joined:\n%s", out)
	}
}

// refServerConfigs renders the e2e MCP server entries in sdk's config
// format, each tool auto-applied (neither SDK's Computer calls a tool
// without a confirmation otherwise).
func refServerConfigs(sdk refSDK, servers []mcpServer) []map[string]any {
	var out []map[string]any
	for _, s := range servers {
		c := map[string]any{"default_tool_meta": map[string]any{"auto_apply": true}}
		for k, v := range s {
			c[k] = v
		}
		if params, ok := c["server_parameters"].(map[string]any); ok && sdk.Lang == "python" && c["type"] == "stdio" {
			p := map[string]any{"cwd": nil, "encoding": "utf-8", "encoding_error_handler": "strict"}
			for k, v := range params {
				p[k] = v
			}
			c["server_parameters"] = p
		}
		out = append(out, c)
	}
	return out
}

// command sends one of the Computer driver's commands (update_config,
// update_tool_list, update_desktop, update_skills, leave, join) and returns
// its answer line.
func (c *refComputer) command(t testing.TB, cmd string) map[string]any {
	t.Helper()
	c.send(t, cmd)
	m := c.next(t)
	require.Equal(t, cmd, m["cmd"], "%v", m)
	return m
}

// refAgent is a reference SDK's Agent, connected to a Server.
type refAgent struct {
	SDK    refSDK
	Name   string
	Office string
	*peerProc
}

// startRefAgent starts sdk's Agent and waits until the SDK reports it
// connected to url with key (it has not joined office yet; the step "join"
// does). env adds to its environment, e.g. SMCP_TOOL_TIMEOUT=3 (seconds) for
// the SDK's tool-call timeout.
func startRefAgent(t testing.TB, sdk refSDK, url, key, office, name string, env ...string) *refAgent {
	t.Helper()
	path, args := refCommand(t, sdk, "agent")
	env = append(append(refHome(t), "SMCP_URL="+url, "SMCP_API_KEY="+key, "SMCP_OFFICE="+office, "SMCP_AGENT="+name,
		"RUST_LOG=smcp_agent=info,warn"), env...)
	a := &refAgent{SDK: sdk, Name: name, Office: office}
	a.peerProc = startPeerProc(t, fmt.Sprintf("%s agent %s", sdk, name), true, path, env, args...)
	m := a.next(t)
	require.Equal(t, true, m["ok"], "%s connect: %v", a.name, m)
	return a
}

// start sends step to run in the background under id; await reads its
// answer.
func (p *peerProc) start(t testing.TB, id string, step map[string]any) {
	t.Helper()
	s := map[string]any{"id": id}
	for k, v := range step {
		s[k] = v
	}
	p.send(t, s)
}

// await returns the answer to the step started under id.
func (p *peerProc) await(t testing.TB, id string) map[string]any {
	t.Helper()
	if m, ok := p.byID[id]; ok {
		delete(p.byID, id)
		return m
	}
	deadline := time.After(peerWait)
	for {
		select {
		case m := <-p.tagged:
			if m["id"] == id {
				return m
			}
			p.byID[fmt.Sprint(m["id"])] = m
		case <-p.done:
			t.Fatalf("%s exited before answering %s: %v\n%s", p.name, id, p.cmd.ProcessState, tail(p.stderr.String(), 4000))
		case <-deadline:
			t.Fatalf("%s: no answer to %s", p.name, id)
		}
	}
}

// toolStarted is what the e2e tool server prints when its slow tool starts;
// the Rust Computer logs the line under mcp_stderr.
var toolStarted = regexp.MustCompile(`slow: started`)
