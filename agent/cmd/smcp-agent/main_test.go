package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent/agenttest"
	"github.com/a2c-smcp/smcp-go/protocol"
)

const wait = 20 * time.Second

// syncBuffer is a bytes.Buffer safe for the watch command's concurrent
// writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startPeer(t *testing.T, opts ...func(*agenttest.Options)) *agenttest.Peer {
	t.Helper()
	var o agenttest.Options
	for _, f := range opts {
		f(&o)
	}
	p, err := agenttest.Start(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

type result struct {
	out, err string
	code     int
}

// cli runs the command in-process with the environment pointing at p.
func cli(t *testing.T, p *agenttest.Peer, env map[string]string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return cliCtx(ctx, p, env, args...)
}

func cliCtx(ctx context.Context, p *agenttest.Peer, env map[string]string, args ...string) result {
	base := map[string]string{"SMCP_OFFICE": "office-1", "SMCP_AGENT_NAME": "cli"}
	if p != nil {
		base["SMCP_SERVER"] = p.URL
	}
	for k, v := range env {
		base[k] = v
	}
	var out, errOut syncBuffer
	code := run(ctx, args, &out, &errOut, func(k string) string { return base[k] })
	return result{out.String(), errOut.String(), code}
}

func requireOK(t *testing.T, r result) {
	t.Helper()
	require.Equal(t, 0, r.code, "stderr: %s\nstdout: %s", r.err, r.out)
	require.Empty(t, r.err)
}

func requireFail(t *testing.T, r result, code int, stderr string) {
	t.Helper()
	require.Equal(t, code, r.code, "stderr: %s\nstdout: %s", r.err, r.out)
	require.Contains(t, r.err, stderr)
}

// lines returns the output's lines with runs of spaces collapsed.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		out = append(out, strings.Join(strings.Fields(l), " "))
	}
	return out
}

func TestRoom(t *testing.T) {
	p := startPeer(t)
	r := cli(t, p, nil, "room")
	requireOK(t, r)
	require.Equal(t, []string{"NAME ROLE VERSION FINDER SID", "cli agent - - sid-agent", "alpha computer - yes sid-0", "beta computer - yes sid-1"}, lines(r.out))

	r = cli(t, p, nil, "room", "--json")
	requireOK(t, r)
	var sessions []protocol.SessionInfo
	require.NoError(t, json.Unmarshal([]byte(r.out), &sessions))
	require.Len(t, sessions, 3)
}

func TestTools(t *testing.T) {
	p := startPeer(t)
	r := cli(t, p, nil, "tools", "alpha")
	requireOK(t, r)
	require.Equal(t, []string{"COMPUTER TOOL BUNDLE CONFIRM TAGS DESCRIPTION", "alpha echo - auto test Echo the params back",
		"alpha fail - auto test Always fails", "alpha slow - ask - Never finishes"}, lines(r.out))

	r = cli(t, p, nil, "tools")
	requireOK(t, r)
	require.Len(t, lines(r.out), 5)
	require.Contains(t, r.out, "beta")

	r = cli(t, p, nil, "--json", "tools")
	requireOK(t, r)
	var all map[string][]protocol.SMCPTool
	require.NoError(t, json.Unmarshal([]byte(r.out), &all))
	require.Len(t, all["alpha"], 3)
	require.Len(t, all["beta"], 1)

	requireFail(t, cli(t, p, nil, "tools", "ghost"), 1, "error 404: computer ghost not found")
}

func TestCall(t *testing.T) {
	p := startPeer(t)
	cases := []struct {
		name   string
		args   []string
		code   int
		out    string
		stderr string
	}{
		{"echo", []string{"call", "alpha", "echo", "--params", `{"a": 1, "b": [true]}`}, 0, `{"a":1,"b":[true]}` + "\n", ""},
		{"flags before positionals", []string{"call", "--params", `{"x":"y"}`, "alpha", "echo"}, 0, `{"x":"y"}` + "\n", ""},
		{"default params", []string{"call", "alpha", "echo"}, 0, "{}\n", ""},
		{"tool failure", []string{"call", "alpha", "fail"}, 1, "", "error 4003: the tool failed on purpose"},
		{"unknown tool", []string{"call", "alpha", "nope"}, 1, "", "error 4001: tool nope not found"},
		{"unknown computer", []string{"call", "ghost", "echo"}, 1, "", "error 404: computer ghost not found"},
		{"bad params", []string{"call", "alpha", "echo", "--params", "[1]"}, 2, "", "error 400: --params must be a JSON object"},
		{"NAME=TEXT and NAME:=JSON", []string{"call", "alpha", "echo", "q=report", "n:=5", "ok:=true", "o:={\"k\":[1]}", "s=5", "e="},
			0, `{"e":"","n":5,"o":{"k":[1]},"ok":true,"q":"report","s":"5"}` + "\n", ""},
		{"arguments over --params", []string{"call", "alpha", "echo", "--params", `{"a":1,"b":2}`, "b=two"}, 0, `{"a":1,"b":"two"}` + "\n", ""},
		{"argument without =", []string{"call", "alpha", "echo", "query"}, 2, "", "want NAME=TEXT or NAME:=JSON"},
		{"argument without a name", []string{"call", "alpha", "echo", "=x"}, 2, "", "want NAME=TEXT or NAME:=JSON"},
		{"bad JSON argument", []string{"call", "alpha", "echo", "n:=five"}, 2, "", "not one JSON value"},
		{"two JSON values", []string{"call", "alpha", "echo", "n:=1 2"}, 2, "", "not one JSON value"},
		{"missing tool", []string{"call", "alpha"}, 2, "", "usage: smcp-agent call COMPUTER TOOL"},
		{"unknown flag", []string{"call", "alpha", "echo", "--nope"}, 2, "", "flag provided but not defined: -nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := cli(t, p, nil, tc.args...)
			require.Equal(t, tc.code, r.code, "stderr: %s", r.err)
			require.Equal(t, tc.out, r.out)
			require.Contains(t, r.err, tc.stderr)
		})
	}
	t.Run("json", func(t *testing.T) {
		r := cli(t, p, nil, "call", "alpha", "fail", "--json")
		requireFail(t, r, 1, "error 4003")
		var res protocol.CallToolResult
		require.NoError(t, json.Unmarshal([]byte(r.out), &res))
		require.True(t, *res.IsError)
	})
	t.Run("tool timeout cancels", func(t *testing.T) {
		r := cli(t, p, nil, "call", "alpha", "slow", "--tool-timeout", "1s")
		requireFail(t, r, 1, "error 408: tool call slow on alpha abandoned: client:tool_call: deadline exceeded")
		// The cancel was written before the CLI closed its connection.
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		require.NoError(t, p.WaitCount(ctx, protocol.EventCancelToolCall, 1), "trace:\n%s", p.Trace())
	})
	t.Run("wire timeout", func(t *testing.T) {
		calls := p.Received(protocol.EventToolCall)
		require.Equal(t, 60.0, calls[2].Payload["timeout"], "default --tool-timeout")
		require.Equal(t, 1.0, calls[len(calls)-1].Payload["timeout"])
	})
}

func TestDesktop(t *testing.T) {
	p := startPeer(t)
	r := cli(t, p, nil, "desktop", "alpha")
	requireOK(t, r)
	require.Equal(t, "== window://com.example.docs/editor\nreport open\n\n== window://com.example.docs/status\n", r.out)

	r = cli(t, p, nil, "desktop", "alpha", "--size", "1", "--json")
	requireOK(t, r)
	var d []string
	require.NoError(t, json.Unmarshal([]byte(r.out), &d))
	require.Len(t, d, 1)
	reqs := p.Received(protocol.EventGetDesktop)
	require.Equal(t, 1.0, reqs[1].Payload["desktop_size"])
	_, sent := reqs[0].Payload["desktop_size"]
	require.False(t, sent, "no --size: all windows")

	r = cli(t, p, nil, "desktop", "alpha", "--size", "0")
	requireOK(t, r)
	require.Equal(t, "(no windows)\n", r.out)

	r = cli(t, p, nil, "desktop", "alpha", "--window", "window://com.example.docs/status")
	requireOK(t, r)
	require.Equal(t, "== window://com.example.docs/status\n", r.out)
}

func TestFinder(t *testing.T) {
	p := startPeer(t)
	r := cli(t, p, nil, "finder", "alpha")
	requireOK(t, r)
	require.Equal(t, []string{
		"URI TITLE TYPE PAGES SERVER MODIFIED",
		"dpe://com.example.docs/rpt-2026 2026 Annual Report xlsx 3 docs 2026-01-15T08:30:00Z",
		"dpe://com.example.docs/contract-a1 A1 Contract pdf 2 docs 2026-02-01T14:00:00Z",
		"documents 1-2 of 2",
	}, lines(r.out))

	r = cli(t, p, nil, "finder", "alpha", "--keywords", "contract, annual", "--file-type", "pdf")
	requireOK(t, r)
	require.Contains(t, r.out, "contract-a1")
	require.NotContains(t, r.out, "rpt-2026")
	reqs := p.Received(protocol.EventGetFinder)
	last := reqs[len(reqs)-1].Payload
	require.Equal(t, []any{"contract", "annual"}, last["keywords"])
	require.Equal(t, "pdf", last["file_type"])

	r = cli(t, p, nil, "finder", "alpha", "--offset", "1", "--limit", "1")
	requireOK(t, r)
	require.Contains(t, r.out, "documents 2-2 of 2")

	r = cli(t, p, nil, "finder", "alpha", "--offset", "9")
	requireOK(t, r)
	require.Contains(t, r.out, "no documents (of 2)")

	r = cli(t, p, nil, "finder", "alpha", "--json")
	requireOK(t, r)
	var ret protocol.GetFinderRet
	require.NoError(t, json.Unmarshal([]byte(r.out), &ret))
	require.Equal(t, 2, ret.TotalCount)

	// The organizer's maximum (spec/finder.md, Organizer): 500 asks for 100.
	requireOK(t, cli(t, p, nil, "finder", "alpha", "--limit", "500"))
	reqs = p.Received(protocol.EventGetFinder)
	require.Equal(t, 100.0, reqs[len(reqs)-1].Payload["limit"])
	requireFail(t, cli(t, p, nil, "finder", "alpha", "--limit", "-1"), 1, "error 400: client:get_finder request: /limit")
}

const report = "dpe://com.example.docs/rpt-2026"

func TestOpenPageElement(t *testing.T) {
	p := startPeer(t)
	t.Run("open", func(t *testing.T) {
		r := cli(t, p, nil, "open", report)
		requireOK(t, r)
		require.Contains(t, r.out, "2026 Annual Report\n")
		require.Contains(t, r.out, "page_count: 3\n")
		require.NotContains(t, r.out, "Pages")
	})
	t.Run("open --pages", func(t *testing.T) {
		r := cli(t, p, nil, "open", report, "--pages", "--offset", "1", "--limit", "2")
		requireOK(t, r)
		l := lines(r.out)
		require.Contains(t, l, "page_offset: 1, page_limit: 2, page_total: 3")
		require.Contains(t, l, "page_index title element_count uri")
		require.Contains(t, l, "1 Revenue 2 dpe://com.example.docs/rpt-2026/pages/1")
		require.Contains(t, l, "2 Outlook 2 dpe://com.example.docs/rpt-2026/pages/2")
	})
	t.Run("open --json", func(t *testing.T) {
		r := cli(t, p, nil, "open", report, "--pages", "--json")
		requireOK(t, r)
		var d protocol.DPEDocument
		require.NoError(t, json.Unmarshal([]byte(r.out), &d))
		require.Len(t, d.Pages, 3)
	})
	t.Run("page markdown", func(t *testing.T) {
		r := cli(t, p, nil, "page", report, "0")
		requireOK(t, r)
		require.Contains(t, r.out, "| Quarter | Revenue | Growth |")
		require.Contains(t, r.out, "# 2026 summary")
	})
	t.Run("page text with categories", func(t *testing.T) {
		r := cli(t, p, nil, "page", report, "0", "--format", "text", "--categories", "table")
		requireOK(t, r)
		require.Contains(t, r.out, "Quarter\tRevenue\tGrowth")
		require.NotContains(t, r.out, "This report")
		reqs := p.Received(protocol.EventReadResource)
		require.Equal(t, report+"/pages/0?categories=table&format=text", reqs[len(reqs)-1].Payload["uri"])
	})
	t.Run("page markdown answered as raw text/markdown (issue 12, item 10)", func(t *testing.T) {
		// A third-party server answering format=markdown with the rendering
		// itself; JSON pages and errors still go to the World.
		world := agenttest.NewWorld().Handler(protocol.EventReadResource)
		p.Handle(protocol.EventReadResource, func(ctx context.Context, req map[string]any) agenttest.Reply {
			uri, _ := req["uri"].(string)
			if strings.HasSuffix(uri, "/pages/1?format=markdown") {
				return agenttest.Answer(map[string]any{"req_id": req["req_id"], "contents": []any{map[string]any{
					"uri": uri, "mimeType": "text/markdown", "text": "# Revenue\n\n| Region | Total |\n|---|---|\n| EU | 12 |\n"}}})
			}
			return world(ctx, req)
		})
		t.Cleanup(func() { p.Handle(protocol.EventReadResource, nil) })
		r := cli(t, p, nil, "page", report, "1")
		requireOK(t, r)
		require.Equal(t, "# Revenue\n\n| Region | Total |\n|---|---|\n| EU | 12 |\n", r.out)
		r = cli(t, p, nil, "page", report, "1", "--json")
		require.Equal(t, 1, r.code, "--json wants a DPE page: %s", r.out)
		require.Contains(t, r.err, "not valid JSON")
	})
	t.Run("page --format json", func(t *testing.T) {
		// The page object, as --json prints it.
		r := cli(t, p, nil, "page", report, "1", "--format", "json")
		requireOK(t, r)
		var pg protocol.DPEPage
		require.NoError(t, json.Unmarshal([]byte(r.out), &pg), r.out)
		require.Equal(t, 1, pg.PageIndex)
		require.Len(t, pg.Elements, 2)
	})
	t.Run("page --json", func(t *testing.T) {
		r := cli(t, p, nil, "page", report, "2", "--json", "--format", "json")
		requireOK(t, r)
		var pg protocol.DPEPage
		require.NoError(t, json.Unmarshal([]byte(r.out), &pg))
		require.Len(t, pg.Elements, 2)
	})
	t.Run("element", func(t *testing.T) {
		r := cli(t, p, nil, "element", report, "tbl-001")
		requireOK(t, r)
		require.Contains(t, r.out, "element_id: tbl-001\n")
		require.Contains(t, r.out, "category: table\n")
		require.Contains(t, r.out, "Q4\t1,560\t+18%")
	})
	errs := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"page out of range", []string{"page", report, "7"}, 1, "error 4202: page 7 out of range"},
		{"unknown document", []string{"open", "dpe://com.example.docs/nope"}, 1, "error 4201: document nope not found"},
		{"unknown element", []string{"element", report, "zzz"}, 1, "error 4203: element zzz not found"},
		{"invalid URI", []string{"open", "dpe://"}, 1, "error 4204:"},
		{"bad page number", []string{"page", report, "x"}, 2, "error 400: page number must be an integer"},
		{"bad format", []string{"page", report, "0", "--format", "html"}, 2, "error 400: --format must be markdown, text or json"},
		{"bad category", []string{"page", report, "0", "--categories", "table,sheet"}, 2, `error 400: unknown element category "sheet"`},
		{"limit too large", []string{"open", report, "--pages", "--limit", "101"}, 1, "error 4204:"},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			requireFail(t, cli(t, p, nil, tc.args...), tc.code, tc.stderr)
		})
	}
}

// TestComputerResolution: open/page/element without --computer.
func TestComputerResolution(t *testing.T) {
	p := startPeer(t)
	t.Run("the one whose catalog holds the host", func(t *testing.T) {
		r := cli(t, p, nil, "page", "dpe://org.example.files/notes", "0")
		requireOK(t, r)
		require.Contains(t, r.out, "Ship it.")
		reqs := p.Received(protocol.EventReadResource)
		require.Equal(t, "beta", reqs[len(reqs)-1].Payload["computer"])
	})
	t.Run("no Computer holds the host", func(t *testing.T) {
		requireFail(t, cli(t, p, nil, "open", "dpe://org.unknown/doc"), 1,
			"error 404: no Computer of office office-1 has dpe://org.unknown in its catalog (Computers: alpha, beta): choose one with --computer")
	})
	t.Run("--computer skips the search", func(t *testing.T) {
		before := p.Count(protocol.EventGetFinder)
		requireOK(t, cli(t, p, nil, "open", report, "--computer", "alpha"))
		require.Equal(t, before, p.Count(protocol.EventGetFinder))
	})
	t.Run("ambiguous", func(t *testing.T) {
		p.World.Mu.Lock()
		beta := p.World.Computer("beta")
		beta.Servers = append(beta.Servers, p.World.Computer("alpha").Servers[0])
		p.World.Mu.Unlock()
		requireFail(t, cli(t, p, nil, "element", report, "tbl-001"), 1,
			"error 400: dpe://com.example.docs is in the catalogs of several Computers (alpha, beta): choose one with --computer")
		r := cli(t, p, nil, "element", report, "tbl-001", "--computer", "beta")
		requireOK(t, r)
	})
	t.Run("the office's only Computer", func(t *testing.T) {
		p.World.RemoveComputer("beta")
		before := p.Count(protocol.EventGetFinder)
		requireOK(t, cli(t, p, nil, "open", report))
		require.Equal(t, before, p.Count(protocol.EventGetFinder), "no catalog search with one Computer")
	})
	t.Run("no Computer", func(t *testing.T) {
		p.World.RemoveComputer("alpha")
		requireFail(t, cli(t, p, nil, "open", report), 1, "error 404: office office-1 has no Computer")
	})
}

func TestGlobalFlagsAndEnvironment(t *testing.T) {
	p := startPeer(t, func(o *agenttest.Options) { o.APIKey = "k" })
	t.Run("environment", func(t *testing.T) {
		requireOK(t, cli(t, p, map[string]string{"SMCP_API_KEY": "k"}, "room"))
		joins := p.Received(protocol.EventJoinOffice)
		require.Equal(t, map[string]any{"role": "agent", "name": "cli", "office_id": "office-1"}, joins[len(joins)-1].Payload)
		hs := p.Handshakes()
		require.Equal(t, "k", hs[len(hs)-1].Header.Get("x-api-key"))
	})
	t.Run("flags override the environment, anywhere on the line", func(t *testing.T) {
		requireOK(t, cli(t, p, map[string]string{"SMCP_API_KEY": "wrong", "SMCP_SERVER": "http://127.0.0.1:1"},
			"--server", p.URL, "room", "--office", "office-9", "--name", "bob", "--api-key", "k"))
		joins := p.Received(protocol.EventJoinOffice)
		require.Equal(t, map[string]any{"role": "agent", "name": "bob", "office_id": "office-9"}, joins[len(joins)-1].Payload)
	})
	t.Run("wrong API key", func(t *testing.T) {
		requireFail(t, cli(t, p, map[string]string{"SMCP_API_KEY": "nope"}, "room"), 1, "error 401: connection refused by the server: unauthorized")
	})
	t.Run("office refused", func(t *testing.T) {
		requireFail(t, cli(t, p, map[string]string{"SMCP_API_KEY": "k", "SMCP_OFFICE": "full"}, "room"), 1,
			"error 4101: server:join_office refused: office full already has an agent")
	})
}

func TestUsage(t *testing.T) {
	p := startPeer(t)
	cases := []struct {
		name   string
		env    map[string]string
		args   []string
		code   int
		stderr string
	}{
		{"no command", nil, nil, 2, "usage: smcp-agent"},
		{"unknown command", nil, []string{"frobnicate"}, 2, `error 400: unknown command "frobnicate"`},
		{"no office", map[string]string{"SMCP_OFFICE": ""}, []string{"room"}, 2, "error 400: no office: give --office or set SMCP_OFFICE"},
		{"extra argument", nil, []string{"room", "x"}, 2, "usage: smcp-agent room"},
		{"bad global flag", nil, []string{"--timeout", "soon", "room"}, 2, "error 400: invalid value"},
		{"zero timeout", nil, []string{"room", "--timeout", "0s"}, 2, "--timeout must be positive"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireFail(t, cli(t, p, tc.env, tc.args...), tc.code, tc.stderr)
		})
	}
	t.Run("help", func(t *testing.T) {
		// On stdout, once; the API key from the environment is never shown.
		env := map[string]string{"SMCP_API_KEY": "s3cret-from-env"}
		r := cli(t, p, env, "-h")
		require.Equal(t, 0, r.code)
		require.Empty(t, r.err)
		for _, c := range commands() {
			require.Contains(t, r.out, c.name)
		}
		require.Equal(t, 1, strings.Count(r.out, "usage: smcp-agent"), r.out)
		require.NotContains(t, r.out, "s3cret")
		for _, args := range [][]string{{"page", "-h"}, {"call", "--help"}, {"room", "-h"}} {
			r = cli(t, p, env, args...)
			require.Equal(t, 0, r.code, "%v", args)
			require.Empty(t, r.err, "%v", args)
			require.Contains(t, r.out, "-api-key", "%v", args)
			require.NotContains(t, r.out, "s3cret", "%v", args)
		}
		require.Contains(t, r.out, "-log-level")
		r = cli(t, p, env, "page", "-h")
		require.Contains(t, r.out, "-categories")
	})
	t.Run("bad log level", func(t *testing.T) {
		requireFail(t, cli(t, p, nil, "room", "--log-level", "loud"), 2, "--log-level")
	})
	t.Run("nothing reached the server", func(t *testing.T) {
		require.Empty(t, p.Received())
	})
}

func TestUnreachableServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	r := cli(t, nil, map[string]string{"SMCP_SERVER": "http://" + addr}, "room")
	requireFail(t, r, 1, "error 503: connect to http://"+addr+"/smcp:")
}

func TestInterrupted(t *testing.T) {
	p := startPeer(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_ = p.WaitCount(context.Background(), protocol.EventToolCall, 1)
		cancel()
	}()
	r := cliCtx(ctx, p, nil, "call", "alpha", "slow")
	require.Equal(t, exitInterrupted, r.code, "stderr: %s", r.err)
	require.Contains(t, r.err, "interrupted")
}

func TestWatch(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		name := "table"
		if asJSON {
			name = "json"
		}
		t.Run(name, func(t *testing.T) {
			p := startPeer(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out, errOut syncBuffer
			env := map[string]string{"SMCP_SERVER": p.URL, "SMCP_OFFICE": "office-1"}
			args := []string{"watch"}
			if asJSON {
				args = append(args, "--json")
			}
			done := make(chan int, 1)
			go func() { done <- run(ctx, args, &out, &errOut, func(k string) string { return env[k] }) }()
			// The initial tool sync shows both Computers.
			// On failure, say what the command printed by then.
			until := func(what string, cond func(string) bool) {
				t.Helper()
				deadline := time.Now().Add(wait)
				for !cond(out.String()) {
					if time.Now().After(deadline) {
						t.Fatalf("no %s within %v\nstdout:\n%s\nstderr:\n%s", what, wait, out.String(), errOut.String())
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			until("initial tool sync", func(s string) bool {
				return strings.Contains(s, "beta") && strings.Contains(s, "alpha")
			})
			require.NoError(t, p.Broadcast(protocol.NotifyUpdateFinder, map[string]any{"computer": "alpha"}))
			require.NoError(t, p.Broadcast(protocol.NotifyLeaveOffice, map[string]any{"office_id": "office-1", "computer": "beta"}))
			if asJSON {
				until("catalog and leave_office", func(s string) bool {
					return strings.Contains(s, `"event":"catalog"`) && strings.Contains(s, `"event":"notify:leave_office"`)
				})
			} else {
				until("catalog and leave_office", func(s string) bool {
					return strings.Contains(s, "notify:update_finder computer=alpha") && strings.Contains(s, "catalog of alpha: 2 documents") &&
						strings.Contains(s, "notify:leave_office office=office-1 computer=beta")
				})
			}
			cancel()
			select {
			case code := <-done:
				require.Equal(t, 0, code, errOut.String())
			case <-time.After(wait):
				t.Fatal("watch did not stop when interrupted")
			}
			if asJSON {
				for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
					var v map[string]any
					require.NoError(t, json.Unmarshal([]byte(l), &v), l)
					require.NotEmpty(t, v["event"])
				}
			} else {
				require.True(t, strings.HasPrefix(out.String(), "watching office office-1") || strings.Contains(out.String(), "watching office office-1"))
			}
		})
	}
}

// TestWatchEndsWhenTheServerEndsTheSession: watch exits with the error
// instead of waiting forever.
func TestWatchEndsWhenTheServerEndsTheSession(t *testing.T) {
	p := startPeer(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var out, errOut syncBuffer
	env := map[string]string{"SMCP_SERVER": p.URL, "SMCP_OFFICE": "office-1"}
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"watch"}, &out, &errOut, func(k string) string { return env[k] }) }()
	// Settled: the initial tool sync is over.
	require.Eventually(t, func() bool {
		return strings.Contains(out.String(), "tools of alpha") && strings.Contains(out.String(), "tools of beta")
	},
		wait, 10*time.Millisecond)
	p.DisconnectAll()
	select {
	case code := <-done:
		require.Equal(t, 1, code)
		require.Contains(t, errOut.String(), "error 503: connection: connection to the server lost: the server ended the session")
	case <-time.After(wait):
		t.Fatalf("watch did not end; disconnects %v", p.Disconnects())
	}
}

// TestSecretNotLogged: the API key reaches the Server, never the output,
// even with every log line on.
func TestSecretNotLogged(t *testing.T) {
	p := startPeer(t, func(o *agenttest.Options) { o.APIKey = "s3cret-from-env" })
	r := cli(t, p, map[string]string{"SMCP_API_KEY": "s3cret-from-env"}, "room", "--verbose")
	require.Equal(t, 0, r.code, r.err)
	require.Contains(t, r.err, "level=DEBUG", "debug logs are on")
	require.NotContains(t, r.out+r.err, "s3cret")
}

// TestVersionsAndBundles: room shows the protocol version each member
// named, tools the bundle id of each tool; --protocol-versions pins the
// generation and refuses one smcp-go does not speak.
func TestVersionsAndBundles(t *testing.T) {
	p := startPeer(t)
	p.Handle(protocol.EventListRoom, func(_ context.Context, req map[string]any) agenttest.Reply {
		return agenttest.Answer(map[string]any{"req_id": req["req_id"], "sessions": []any{
			map[string]any{"sid": "s1", "name": "cli", "role": "agent", "office_id": "office-1", "a2c_version": "0.4.0"},
			map[string]any{"sid": "s2", "name": "alpha", "role": "computer", "office_id": "office-1", "a2c_version": "0.2.0"},
		}})
	})
	p.Handle(protocol.EventGetTools, func(_ context.Context, req map[string]any) agenttest.Reply {
		return agenttest.Answer(map[string]any{"req_id": req["req_id"], "tools": []any{
			map[string]any{"name": "fs__read_file", "bundle_id": "fs", "description": "read", "params_schema": map[string]any{"type": "object"}, "return_schema": nil},
		}})
	})
	r := cli(t, p, nil, "room")
	requireOK(t, r)
	require.Equal(t, []string{"NAME ROLE VERSION FINDER SID", "cli agent 0.4.0 - s1", "alpha computer 0.2.0 yes s2"}, lines(r.out))
	r = cli(t, p, nil, "tools", "alpha")
	requireOK(t, r)
	require.Equal(t, []string{"COMPUTER TOOL BUNDLE CONFIRM TAGS DESCRIPTION", "alpha fs__read_file fs ask - read"}, lines(r.out))

	r = cli(t, p, nil, "--protocol-versions", "0.2", "room")
	requireOK(t, r)
	r = cli(t, p, map[string]string{"SMCP_PROTOCOL_VERSIONS": "0.9"}, "room")
	requireFail(t, r, 2, "--protocol-versions")
}
