package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// TestCompleteEndToEnd: client:complete from the Go Agent through the Go
// Server to the Go Computer, forwarded as MCP completion/complete to the real
// MCP server that owns the reference — smcp-docserver (dpekit) for the
// dpe:// chain, the tool server for a prompt — and the errors of a reference
// nobody owns or whose owner does not complete (spec/finder.md, Completion).
func TestCompleteEndToEnd(t *testing.T) {
	d := startServer(t)
	root := copyDocs(t)
	startComputer(t, d, "o1", "desk", []mcpServer{docServer(t, "docs", root, docsHost), toolServerExtras(t, "tools")})
	a := dialAgent(t, d, "o1", "bot")
	ctx := testContext(t)

	catalog, err := a.GetFinder(ctx, "desk", agent.FinderQuery{})
	require.NoError(t, err)
	require.NotEmpty(t, catalog.Documents)
	pagesTpl := "dpe://" + docsHost + "/{doc_ref}/pages/{page_index}"

	t.Run("doc_ref", func(t *testing.T) {
		var want []string
		for _, doc := range catalog.Documents {
			if strings.HasPrefix(doc.DocRef, "s") {
				want = append(want, doc.DocRef)
			}
		}
		require.NotEmpty(t, want)
		slices.Sort(want)
		got, err := a.Complete(ctx, "desk", agent.ResourceRef(pagesTpl), protocol.CompleteReqArgument{Name: "doc_ref", Value: "s"})
		require.NoError(t, err)
		assert.Equal(t, want, got.Values)
		require.NotNil(t, got.Total)
		assert.Equal(t, len(want), *got.Total)
	})
	doc := catalog.Documents[0]
	t.Run("page_index with the doc_ref chosen", func(t *testing.T) {
		want := make([]string, doc.PageCount)
		for i := range want {
			want[i] = strconv.Itoa(i)
		}
		got, err := a.Complete(ctx, "desk", agent.ResourceRef(pagesTpl), protocol.CompleteReqArgument{Name: "page_index", Value: ""},
			agent.WithChosen(map[string]string{"doc_ref": doc.DocRef}))
		require.NoError(t, err)
		assert.Equal(t, want, got.Values)
	})
	t.Run("partial URIs", func(t *testing.T) {
		uris, _, err := a.CompleteDPE(ctx, "desk", "dpe://"+docsHost[:3])
		require.NoError(t, err)
		assert.Equal(t, []string{"dpe://" + docsHost + "/"}, uris, "hosts from the catalog")

		uris, _, err = a.CompleteDPE(ctx, "desk", dpe.DocumentURI(docsHost, doc.DocRef).String()+"/pa")
		require.NoError(t, err)
		assert.Equal(t, []string{dpe.DocumentURI(docsHost, doc.DocRef).String() + "/pages/"}, uris)

		uris, _, err = a.CompleteDPE(ctx, "desk", dpe.DocumentURI(docsHost, doc.DocRef).String()+"/pages/")
		require.NoError(t, err)
		require.Len(t, uris, doc.PageCount)
		for i, u := range uris {
			assert.Equal(t, dpe.PageURI(docsHost, doc.DocRef, i).String(), u)
		}

		page, err := a.ReadPage(ctx, "desk", dpe.DocumentURI(docsHost, doc.DocRef).String(), 0, agent.PageQuery{})
		require.NoError(t, err)
		require.NotEmpty(t, page.Elements)
		id := page.Elements[0].ElementID
		uris, _, err = a.CompleteDPE(ctx, "desk", dpe.DocumentURI(docsHost, doc.DocRef).String()+"/elements/"+id)
		require.NoError(t, err)
		assert.Contains(t, uris, dpe.DocumentURI(docsHost, doc.DocRef).String()+"/elements/"+id)
		for _, u := range uris {
			assert.True(t, strings.HasPrefix(u, dpe.DocumentURI(docsHost, doc.DocRef).String()+"/elements/"+id), u)
		}
	})
	t.Run("prompt", func(t *testing.T) {
		got, err := a.Complete(ctx, "desk", agent.PromptRef("greet"), protocol.CompleteReqArgument{Name: "language", Value: "e"})
		require.NoError(t, err)
		assert.Equal(t, []string{"english", "esperanto"}, got.Values)
		got, err = a.Complete(ctx, "desk", agent.PromptRef("greet"), protocol.CompleteReqArgument{Name: "language", Value: "g"}, agent.WithServer("tools"))
		require.NoError(t, err)
		assert.Equal(t, []string{"german", "greek"}, got.Values)
	})
	t.Run("errors", func(t *testing.T) {
		_, err := a.Complete(ctx, "desk", agent.ResourceRef("dpe://nobody.here/{doc_ref}/pages/{page_index}"), protocol.CompleteReqArgument{Name: "doc_ref", Value: ""})
		assert.Equal(t, protocol.CodeDocumentNotFound, protocol.CodeOf(err), "%v", err)
		_, err = a.Complete(ctx, "desk", agent.PromptRef("no-such-prompt"), protocol.CompleteReqArgument{Name: "x", Value: ""})
		assert.Equal(t, protocol.CodeNotFound, protocol.CodeOf(err), "%v", err)
		_, err = a.Complete(ctx, "desk", agent.PromptRef("greet"), protocol.CompleteReqArgument{Name: "language", Value: ""}, agent.WithServer("missing"))
		assert.Equal(t, protocol.CodeNotFound, protocol.CodeOf(err), "%v", err)
		_, err = a.Complete(ctx, "nobody", agent.PromptRef("greet"), protocol.CompleteReqArgument{Name: "language", Value: ""})
		assert.Equal(t, protocol.CodeNotFound, protocol.CodeOf(err), "%v", err)
		_, err = a.Complete(ctx, "desk", agent.PromptRef("greet"), protocol.CompleteReqArgument{Name: "country", Value: ""})
		assert.Equal(t, protocol.CodeInternal, protocol.CodeOf(err), "the MCP server's own error: %v", err)
		assert.Contains(t, protocol.AsError(err).Details, "mcp_code")
	})
	t.Run("a server that does not complete", func(t *testing.T) {
		startComputer(t, d, "o1", "plain", []mcpServer{toolServer(t, "tools")})
		_, err := a.Complete(ctx, "plain", agent.ResourceRef(statusWindow), protocol.CompleteReqArgument{Name: "x", Value: ""})
		assert.Equal(t, protocol.CodeNotSupported, protocol.CodeOf(err), "%v", err)
	})
}

// TestToolProgressEndToEnd: an Agent that asks for a tool call's progress
// (agent.WithProgress) receives the MCP server's notifications/progress,
// folded, in order, the last one never folded away; a call
// that does not ask gets no progressToken at all (spec/protocol.md,
// Tool-call progress).
func TestToolProgressEndToEnd(t *testing.T) {
	d := startServer(t)
	tools := toolServerExtras(t, "tools")
	tools["tool_meta"] = map[string]any{"progress": map[string]any{"auto_apply": true}}
	startComputer(t, d, "o1", "desk", []mcpServer{tools})
	a := dialAgent(t, d, "o1", "bot")
	ctx := testContext(t)

	const steps = 40
	// The tool answers once the last report reached the Agent: every
	// report is then one the call received while in flight.
	hold := filepath.Join(t.TempDir(), "seen")
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
	res, err := a.CallTool(pctx, "desk", "progress", map[string]any{"steps": steps, "hold": hold}, 30*time.Second)
	require.NoError(t, err)
	require.Nil(t, agent.ToolError(res))
	require.NotNil(t, res.Content[0].Text)
	assert.Equal(t, fmt.Sprintf("sent %d", steps), *res.Content[0].Text, "the MCP server had a progressToken")

	mu.Lock()
	reports := slices.Clone(got)
	mu.Unlock()
	requireProgressReports(t, reports, "desk", steps, fmt.Sprintf("step %d of %d", steps, steps))

	res, err = a.CallTool(ctx, "desk", "progress", map[string]any{"steps": 3}, 30*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "sent 0", *res.Content[0].Text, "a call that did not ask carries no progressToken")
}

// requireProgressReports checks the progress an Agent received for one
// request of computer that reported steps steps: from that Computer, in
// order, and ending with the last report whole (never folded away).
func requireProgressReports(t *testing.T, reports []agent.Progress, computer string, steps int, lastMessage string) {
	t.Helper()
	require.NotEmpty(t, reports)
	last := reports[len(reports)-1]
	assert.Equal(t, float64(steps), last.Progress, "the last report is never folded away")
	require.NotNil(t, last.Total)
	assert.Equal(t, float64(steps), *last.Total)
	assert.Equal(t, lastMessage, last.Message)
	for i, p := range reports {
		assert.Equal(t, computer, p.Computer)
		assert.NotEmpty(t, p.ReqID)
		if i > 0 {
			assert.Greater(t, p.Progress, reports[i-1].Progress, "in order")
		}
	}
}
