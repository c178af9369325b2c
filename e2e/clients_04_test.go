package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/computer/config"
	csio "github.com/a2c-smcp/smcp-go/computer/sio"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// The Go Agent against the 0.4 reference Servers (issue 25, the client
// side; spec/generations.md, Versions and negotiation): the a2c-smcp 0.4.2
// Python Server in its documented setup (version gate on) and the Rust
// 0.4.1 Server, each with the reference Computer of the same SDK. The Go
// Computer's rows are elsewhere.

// TestGoAgentReferenceServers: with its defaults the Go Agent names 0.4.0,
// is admitted, and works with the 0.4 Computer: room listing with
// versions, tools with bundle ids called by their exposed names, errors and
// timeout markers, desktop and config; the extensions it knows nobody
// routes there fail at once.
func TestGoAgentReferenceServers(t *testing.T) {
	for _, sdk := range []refSDK{refPy04, refRust04} {
		t.Run(sdk.String(), func(t *testing.T) {
			s := startRefServer(t, sdk)
			rc := startRefComputer(t, sdk, s.URL, s.APIKey, "o1", "rc")
			ctx := testContext(t)
			a, err := agent.Dial(ctx, s.URL, agent.WithAPIKey(s.APIKey), agent.WithName("ga"), agent.WithLogger(logger(t)))
			require.NoError(t, err)
			t.Cleanup(func() { _ = a.Close() })
			require.Equal(t, protocol.Gen04, a.Generation())
			require.False(t, a.Confirmed(), "a reference Server confirms nothing")
			require.NoError(t, joinRef(ctx, a, "o1"))

			sessions, err := a.ListRoom(ctx)
			require.NoError(t, err)
			var found *protocol.SessionInfo
			for i := range sessions {
				if sessions[i].Name == "rc" {
					found = &sessions[i]
				}
			}
			require.NotNil(t, found, "%v", sessions)
			require.Equal(t, protocol.RoleComputer, found.Role)
			require.Equal(t, "0.4.0", found.A2CVersion, "%+v", *found)

			tools, err := a.GetTools(ctx, "rc")
			require.NoError(t, err)
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
				require.Equal(t, "tools", tl.BundleID, "%+v", tl)
			}
			require.ElementsMatch(t, rc.Tools, names)
			require.Contains(t, names, "tools__echo")

			res, err := a.CallTool(ctx, "rc", "tools__echo", map[string]any{"text": "hi"}, 30*time.Second)
			require.NoError(t, err)
			require.Nil(t, agent.ToolError(res), "%+v", res)
			require.Equal(t, "echo: hi", firstTextOf(res))

			res, err = a.CallTool(ctx, "rc", "tools__fail", nil, 30*time.Second)
			require.NoError(t, err)
			require.NotNil(t, agent.ToolError(res), "%+v", res)

			if sdk == refRust04 {
				// The Computer enforces the call's timeout and marks its
				// answer the 0.4 way (meta.a2c_timeout), which the Agent
				// reads as 4004. (The Python 0.4.2 Computer answers only
				// once the MCP call it cancelled has ended, after the
				// Agent's grace: measured, not asserted here.)
				res, err = a.CallTool(ctx, "rc", "tools__slow", map[string]any{"seconds": 120}, 3*time.Second)
				require.NoError(t, err)
				require.True(t, res.TimedOut(), "%+v", res)
				require.Equal(t, protocol.CodeToolTimeout, agent.ToolError(res).Code)
			}

			// A cancelled call: the Agent sends server:tool_call_cancel and
			// returns at once with the context's error.
			cctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := a.CallTool(cctx, "rc", "tools__slow", map[string]any{"seconds": 120}, 60*time.Second)
				done <- err
			}()
			rc.waitOutput(t, toolStarted)
			cancel()
			require.ErrorIs(t, <-done, context.Canceled)

			_, err = a.GetDesktop(ctx, "rc", agent.DesktopQuery{})
			require.NoError(t, err)

			cfg, err := a.GetConfig(ctx, "rc")
			require.NoError(t, err)
			require.Contains(t, cfg.Servers, "tools", "0.4 config is keyed by bundle id: %+v", cfg.Servers)

			// A refusal in the 0.4 Servers' flat shape.
			_, err = a.GetTools(ctx, "ghost")
			require.Equal(t, protocol.CodeNotFound, protocol.CodeOf(err), "%v", err)

			// The Finder is an smcp-go extension: refused at once, nothing
			// is sent to a Server that would never answer.
			long, stop := context.WithTimeout(context.Background(), time.Hour)
			defer stop()
			_, err = a.GetFinder(long, "rc", agent.FinderQuery{})
			require.Equal(t, protocol.CodeNotSupported, protocol.CodeOf(err), "%v", err)
			_, err = a.ReadResource(long, "rc", "window://tools/status")
			require.Equal(t, protocol.CodeNotSupported, protocol.CodeOf(err), "%v", err)
		})
	}
}

// joinRef joins office, once more if the Server dropped the join (the Rust
// 0.4.1 Server can lose the first event after CONNECT; PEERS.md).
func joinRef(ctx context.Context, a *agent.Client, office string) error {
	err := a.JoinOffice(ctx, office)
	if err != nil && protocol.CodeOf(err) == protocol.CodeTimeout && ctx.Err() == nil {
		err = a.JoinOffice(ctx, office)
	}
	return err
}

func firstTextOf(res *protocol.CallToolResult) string {
	for _, b := range res.Content {
		if b.Text != nil {
			return *b.Text
		}
	}
	return ""
}

// TestGoAgentReferenceRefusals: every refusal of a 0.4 reference Server is
// a coded error — a wrong key (the Python Server's CONNECT_ERROR without
// data, the Rust Server's dropped session), a version it does not speak
// (4008 with its range; retried once into 0.4 by an Agent that speaks it),
// no version at all (400; retried into 0.4 likewise).
func TestGoAgentReferenceRefusals(t *testing.T) {
	for _, sdk := range []refSDK{refPy04, refRust04} {
		t.Run(sdk.String(), func(t *testing.T) {
			s := startRefServer(t, sdk)
			ctx := testContext(t)
			n := 0
			dial := func(opts ...agent.Option) (*agent.Client, error) {
				n++
				name := fmt.Sprintf("ga%d", n) // the Rust Server keeps a name while its session lasts
				a, err := agent.Dial(ctx, s.URL, append([]agent.Option{agent.WithName(name), agent.WithLogger(logger(t))}, opts...)...)
				if a != nil {
					t.Cleanup(func() { _ = a.Close() })
				}
				return a, err
			}

			a, err := dial(agent.WithAPIKey("wrong"))
			if err == nil {
				// The Rust Server accepts the namespace, then drops it.
				err = a.JoinOffice(ctx, "o1")
			}
			require.Equal(t, protocol.CodeUnauthorized, protocol.CodeOf(err), "%v", err)

			_, err = dial(agent.WithAPIKey(s.APIKey), agent.WithGenerations(protocol.Gen03))
			require.Equal(t, protocol.CodeProtocolVersionMismatch, protocol.CodeOf(err), "%v", err)
			var perr *protocol.Error
			require.True(t, errors.As(err, &perr))
			require.Equal(t, "0.4.0", perr.Fields["min_supported"], "%+v", perr)
			require.Equal(t, "0.4.999", perr.Fields["max_supported"], "%+v", perr)
			require.NotContains(t, err.Error(), "bad handshake")

			_, err = dial(agent.WithAPIKey(s.APIKey), agent.WithGenerations(protocol.Gen02))
			require.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err), "%v", err)
			require.Contains(t, err.Error(), "a2c_version")

			for _, first := range []protocol.Generation{protocol.Gen03, protocol.Gen02} {
				a, err := dial(agent.WithAPIKey(s.APIKey), agent.WithGenerations(first, protocol.Gen04))
				require.NoError(t, err, "%s first, then 0.4", first)
				require.Equal(t, protocol.Gen04, a.Generation())
				// One Agent per office in 0.4.
				require.NoError(t, joinRef(ctx, a, "o-"+first.String()))
			}
		})
	}
}

// TestGoAgentSmcpServerGenerations: on smcp-server the Go Agent and the Go
// Computer have their generation confirmed, in 0.4 by default and in 0.2
// when pinned; the Computer declares its extensions, which the room shows,
// and the Finder, an extension in 0.4, is routed to it.
func TestGoAgentSmcpServerGenerations(t *testing.T) {
	d := startServer(t)
	startComputer(t, d, "o1", "desk", []mcpServer{docServer(t, "docs", copyDocs(t), docsHost), toolServer(t, "tools")})
	for _, g := range []protocol.Generation{protocol.Gen04, protocol.Gen02} {
		t.Run(g.String(), func(t *testing.T) {
			ctx := testContext(t)
			a := dialAgent(t, d, "o1", "ga-"+g.String(), agent.WithGenerations(g))
			require.Equal(t, g, a.Generation())
			require.True(t, a.Confirmed())
			sessions, err := a.ListRoom(ctx)
			require.NoError(t, err)
			var desk, me *protocol.SessionInfo
			for i := range sessions {
				switch sessions[i].Name {
				case "desk":
					desk = &sessions[i]
				case "ga-" + g.String():
					me = &sessions[i]
				}
			}
			require.NotNil(t, desk, "%v", sessions)
			require.NotNil(t, me, "%v", sessions)
			require.Equal(t, g.String(), me.A2CVersion)
			require.Equal(t, "0.4.0", desk.A2CVersion, "the Go Computer names the newest by default")
			require.ElementsMatch(t, []string{protocol.EventGetFinder, protocol.EventReadResource, protocol.EventComplete}, desk.Extensions)

			tools, err := a.GetTools(ctx, "desk")
			require.NoError(t, err)
			require.NotEmpty(t, tools)
			// Routed and answered (the catalog may still be filling).
			_, err = a.GetFinder(ctx, "desk", agent.FinderQuery{})
			require.NoError(t, err)

			_, err = a.GetTools(ctx, "ghost")
			require.Equal(t, protocol.CodeNotFound, protocol.CodeOf(err), "%v", err)
		})
	}
}

// TestAgentCLIReferenceServers: smcp-agent, with its defaults, lists the
// room of a 0.4 reference Server with each member's version and a 0.4
// Computer's tools with their bundle id; pinned to 0.3 it fails with the
// Server's 4008, never "bad handshake".
func TestAgentCLIReferenceServers(t *testing.T) {
	bin := buildAgentCLI(t)
	for _, sdk := range []refSDK{refPy04, refRust04} {
		t.Run(sdk.String(), func(t *testing.T) {
			s := startRefServer(t, sdk)
			startRefComputer(t, sdk, s.URL, s.APIKey, "o1", "rc")
			run := func(env []string, args ...string) (string, string, error) {
				ctx := testContext(t)
				cmd := exec.CommandContext(ctx, bin, args...)
				cmd.Env = append(os.Environ(), append([]string{"SMCP_SERVER=" + s.URL, "SMCP_API_KEY=" + s.APIKey, "SMCP_OFFICE=o1", "SMCP_AGENT_NAME=cli"}, env...)...)
				var out, errOut strings.Builder
				cmd.Stdout, cmd.Stderr = &out, &errOut
				err := cmd.Run()
				return out.String(), errOut.String(), err
			}
			out, errOut, err := run(nil, "room")
			require.NoError(t, err, "%s", errOut)
			require.Regexp(t, `(?m)^NAME\s+ROLE\s+VERSION\s+FINDER\s+SID$`, out)
			// A reference Computer offers no Finder (the FINDER column).
			require.Regexp(t, `(?m)^rc\s+computer\s+0\.4\.0\s+no\s+\S+$`, out)

			out, errOut, err = run(nil, "tools", "rc")
			require.NoError(t, err, "%s", errOut)
			require.Regexp(t, `(?m)^COMPUTER\s+TOOL\s+BUNDLE\s+`, out)
			require.Regexp(t, `(?m)^rc\s+tools__echo\s+tools\s+`, out)

			_, errOut, err = run([]string{"SMCP_PROTOCOL_VERSIONS=0.3"}, "room")
			require.Error(t, err)
			require.Contains(t, errOut, "4008")
			require.NotContains(t, errOut, "bad handshake")
		})
	}
}

// TestGoComputerConnectionReferenceServers: the Go Computer's connection
// with its defaults is admitted by the 0.4 reference Servers (0.4.0
// named, the key in auth.token) and joins; the room shows it as 0.4.0 and,
// the Server confirming nothing, without extensions. A wrong key fails
// Connect with 401 rather than at its timeout. (What the Computer answers
// there is tested with its rows.)
func TestGoComputerConnectionReferenceServers(t *testing.T) {
	for _, sdk := range []refSDK{refPy04, refRust04} {
		t.Run(sdk.String(), func(t *testing.T) {
			s := startRefServer(t, sdk)
			d := &deployment{URL: s.URL, APIKey: s.APIKey}
			goc := startComputer(t, d, "o1", "gc", []mcpServer{toolServer(t, "tools")})
			// The Server's version gate refused the plain Engine.IO open
			// that asked whether it ignores versions: the Computer keeps
			// 0.4.0, unconfirmed.
			require.Equal(t, protocol.Gen04, goc.Client().Generation())
			require.False(t, goc.Client().Confirmed())
			ctx := testContext(t)
			a, err := agent.Dial(ctx, s.URL, agent.WithAPIKey(s.APIKey), agent.WithName("ga"), agent.WithLogger(logger(t)))
			require.NoError(t, err)
			t.Cleanup(func() { _ = a.Close() })
			require.NoError(t, joinRef(ctx, a, "o1"))
			sessions, err := a.ListRoom(ctx)
			require.NoError(t, err)
			var gc *protocol.SessionInfo
			for i := range sessions {
				if sessions[i].Name == "gc" {
					gc = &sessions[i]
				}
			}
			require.NotNil(t, gc, "%v", sessions)
			require.Equal(t, "0.4.0", gc.A2CVersion)
			require.Empty(t, gc.Extensions)

			c := computer.New(&config.Config{}, computer.WithLogger(logger(t)))
			t.Cleanup(func() { _ = c.Close(context.Background()) })
			long, stop := context.WithTimeout(context.Background(), time.Hour)
			defer stop()
			err = c.Connect(long, s.URL, "o1", "bad", csio.WithAPIKey("wrong"), csio.WithTimeout(time.Hour))
			require.Equal(t, protocol.CodeUnauthorized, protocol.CodeOf(err), "%v", err)
		})
	}
}
