package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// slowDoc is a document of the JavaScript DPE server whose page 0 reports
// steps notifications/progress to a read that has a progressToken, then
// answers once hold exists.
func slowDoc(ref string, steps int, hold string) map[string]any {
	return map[string]any{
		"doc_ref": ref, "title": "Slow " + ref, "file_type": "pdf", "file_uri": "file:///data/" + ref + ".pdf",
		"pages": []any{map[string]any{"title": "Long page", "progress": map[string]any{"steps": steps, "hold": hold},
			"elements": []any{map[string]any{"element_id": "t1", "category": "text", "content": map[string]any{"text": "read at last"}}}}},
	}
}

// TestReadProgressEndToEnd (issue 27): a Finder read that asks for
// progress (agent.WithProgress on ReadPage) makes the Computer send the MCP
// resources/read with a progressToken, and the third-party JavaScript DPE
// server's notifications/progress of that read reach the Go Agent in order
// before the answer, the last one never folded away; a read that does not
// ask — the Go Agent's without WithProgress, smcp-agent's page when its
// stderr is no terminal, a Python 0.4.2 Agent's client:read_resource — carries
// no progressToken (the server would hold it: its hold file is never
// written) and is answered as before, and the Python Agent receives no
// notify:tool_progress (spec/protocol.md, Tool-call progress).
func TestReadProgressEndToEnd(t *testing.T) {
	nm := nodeModules(t)
	dir := t.TempDir()
	const steps = 5
	hold, never := filepath.Join(dir, "seen"), filepath.Join(dir, "never")
	file := filepath.Join(dir, "docs.json")
	writeJSON(t, file, jsDocs("Sales 2026", slowDoc("slow", steps, hold), slowDoc("held", steps, never)))

	d := startServer(t)
	startComputer(t, d, "o1", "desk", []mcpServer{jsServer(t, nm, "jsdocs", file)})
	a := dialAgent(t, d, "o1", "bot")
	ctx := testContext(t)
	slow := dpe.DocumentURI("js.docs", "slow").String()
	held := dpe.DocumentURI("js.docs", "held").String()

	var mu sync.Mutex
	var got []agent.Progress
	pctx := agent.WithProgress(ctx, func(p agent.Progress) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
		if p.Progress == steps {
			assert.NoError(t, os.WriteFile(hold, nil, 0o644))
		}
	})
	p, err := a.ReadPage(pctx, "desk", slow, 0, agent.PageQuery{})
	require.NoError(t, err, "answered once the last report reached the Agent")
	require.Len(t, p.Elements, 1)
	assert.Equal(t, "Long page", p.Title)

	mu.Lock()
	reports := slices.Clone(got)
	mu.Unlock()
	requireProgressReports(t, reports, "desk", steps, fmt.Sprintf("part %d of %d", steps, steps))
	for _, r := range reports {
		assert.Equal(t, reports[0].ReqID, r.ReqID, "one read")
	}

	// A read that does not ask carries no token: the server answers at once
	// (with a token it would wait for a file nobody writes).
	plain, err := a.ReadResource(ctx, "desk", held+"/pages/0")
	require.NoError(t, err)
	require.Len(t, plain, 1)
	require.NotNil(t, plain[0].Text)
	want := *plain[0].Text

	// smcp-agent asks only when its stderr is a terminal.
	cli := buildAgentCLI(t)
	require.NoError(t, a.LeaveOffice(ctx)) // an office holds one Agent
	cmd := exec.CommandContext(ctx, cli, "--server", d.URL, "--office", "o1", "--name", "cli", "--api-key", d.APIKey,
		"page", held, "0", "--format", "text")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Run(), errOut.String())
	assert.Contains(t, out.String(), "read at last")
	assert.Empty(t, errOut.String(), "no progress bar: stderr is not a terminal")

	// A Python 0.4.2 Agent reads the same resource, unaffected.
	ag := startRefAgent(t, refPy04, d.URL, d.APIKey, "o1", "py-agent")
	ag.ok(t, map[string]any{"op": "join"})
	for _, uri := range []string{held + "/pages/0", slow + "/pages/0"} {
		raw := ag.ok(t, map[string]any{"op": "raw_call", "event": protocol.EventReadResource,
			"data": map[string]any{"agent": "py-agent", "req_id": "py-" + uri, "computer": "desk", "uri": uri}}).(map[string]any)
		b, err := json.Marshal(raw)
		require.NoError(t, err)
		var ret protocol.ReadResourceRet
		require.NoError(t, json.Unmarshal(b, &ret), "%s", b)
		require.Len(t, ret.Contents, 1, "%s", b)
		require.NotNil(t, ret.Contents[0].Text, "%s", b)
		if uri == held+"/pages/0" {
			assert.Equal(t, want, *ret.Contents[0].Text, "the same answer as the Go Agent's")
		}
	}
	assertNoProgressSeen(t, ag)
}
