package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// jsServerScript is a DPE server written from the user's spec with the
// official MCP TypeScript SDK: a third party's, not ours.
const jsServerScript = "testdata/js_dpe_server.mjs"

// nodeModules returns the interop peers' node_modules holding the MCP
// TypeScript SDK (`go run mage.go setup`). Under SMCP_INTEROP=1 (mage test)
// a missing one fails the test; otherwise it is skipped.
func nodeModules(t *testing.T) string {
	t.Helper()
	nm := os.Getenv("SMCP_INTEROP_NODE_MODULES")
	if nm == "" {
		nm, _ = filepath.Abs(filepath.Join("..", "server", "testdata", "interop", "node_modules"))
	}
	_, nodeErr := exec.LookPath("node")
	_, sdkErr := os.Stat(filepath.Join(nm, "@modelcontextprotocol", "sdk", "package.json"))
	if nodeErr != nil || sdkErr != nil {
		peerMissing(t, "node and the MCP TypeScript SDK in "+nm+" are needed")
	}
	return nm
}

// jsServer runs the JavaScript DPE server over the documents of file as a
// stdio MCP server.
func jsServer(t *testing.T, nm, name, file string, args ...string) mcpServer {
	script, err := filepath.Abs(jsServerScript)
	require.NoError(t, err)
	node, err := exec.LookPath("node")
	require.NoError(t, err)
	return mcpServer{
		"name": name, "type": "stdio",
		"server_parameters": map[string]any{"command": node,
			"args": append([]string{script, "--docs", file}, args...), "env": map[string]string{"SMCP_INTEROP_NODE_MODULES": nm}},
	}
}

// jsDocs is what the JavaScript server serves: shapes a third-party author
// produces from the spec, which smcp-go's own writers never do.
func jsDocs(salesTitle string, extra ...map[string]any) map[string]any {
	el := func(id, cat, summary string, content any) map[string]any {
		return map[string]any{"element_id": id, "category": cat, "summary": summary, "content": content}
	}
	docs := []any{
		map[string]any{
			"doc_ref": "sales-2026", "title": salesTitle, "file_type": "xlsx", "file_uri": "file:///data/sales.xlsx",
			"summary": "季度销售", "keywords": []string{"sales"}, "last_modified": "2026-03-01T00:00:00+08:00",
			"pages": []any{
				map[string]any{"title": "概览", "elements": []any{
					el("h-7", "heading", "deep heading", map[string]any{"level": 7, "text": "Level seven"}),
					el("tbl", "table", "numbers", map[string]any{"headers": []any{"季度", "收入", "达标"},
						"rows": []any{[]any{"Q1", 1250, true}, []any{"Q2", nil, false}, []any{"Q3", 1420.5, nil}}}),
					el("lst", "list", "nested", map[string]any{"items": []any{"north", []any{"n1", map[string]any{"text": "n2"}}, "south"}}),
					el("chart", "chart", "trend", map[string]any{"chart_type": "line", "data_summary": "up"}),
					el("pivot", "pivot_table", "by region", map[string]any{"rows": []any{[]any{"north", 3}}}),
				}},
				map[string]any{"title": "Notes", "elements": []any{
					el("t1", "text", "", map[string]any{"text": "Second page."}),
				}},
			},
		},
		map[string]any{
			"doc_ref": "memo", "title": "Memo", "file_type": "md", "file_uri": "file:///data/memo.md",
			"pages": []any{
				map[string]any{"title": "Only", "elements": []any{
					map[string]any{"category": "text", "content": map[string]any{"text": "an element without id"}},
					el("ok", "text", "", map[string]any{"text": "fine"}),
				}},
			},
		},
	}
	for _, d := range extra {
		docs = append(docs, d)
	}
	return map[string]any{"documents": docs}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, b, 0o644))
	require.NoError(t, os.Rename(tmp, path))
}

// TestThirdPartyDPEServer (issue 27): a DPE server written from the spec in
// JavaScript — without resources.subscribe, never announcing a change,
// sending numbers, booleans and null in cells, a level-7 heading, nested
// list items, a page with elements beside its rendering, and one element
// without an id — is read whole through a real Computer, Server and Go
// Agent, and through smcp-agent; a change it never announces reaches the
// catalog (revalidation) and the Agent (notify:update_finder).
func TestThirdPartyDPEServer(t *testing.T) {
	nm := nodeModules(t)
	file := filepath.Join(t.TempDir(), "docs.json")
	writeJSON(t, file, jsDocs("Sales 2026"))

	var seen catalogs
	d := startServer(t)
	startComputer(t, d, "o1", "desk", []mcpServer{jsServer(t, nm, "jsdocs", file)},
		computer.WithFinderRevalidation(200*time.Millisecond))
	a := dialAgent(t, d, "o1", "bot", agent.OnFinderChanged(seen.add))
	ctx := testContext(t)

	all, err := a.GetFinder(ctx, "desk", agent.FinderQuery{})
	require.NoError(t, err)
	require.Equal(t, 2, all.TotalCount, "%v", docRefs(all.Documents))
	sales := docByRef(all, "sales-2026")
	require.NotNil(t, sales)
	assert.Equal(t, "jsdocs", sales.Server)
	assert.Equal(t, 2, sales.PageCount)

	t.Run("every level through the Go Agent", func(t *testing.T) {
		doc, err := a.ReadDocument(ctx, "desk", sales.URI, agent.DocumentQuery{Pages: true})
		require.NoError(t, err)
		require.Len(t, doc.Pages, 2)
		assert.Empty(t, doc.Problems)

		pages := 0
		for p, err := range a.Pages(ctx, "desk", sales.URI, agent.PageQuery{}) {
			require.NoError(t, err)
			assert.Empty(t, p.Problems, "page %d", p.PageIndex)
			for _, e := range p.Elements {
				el, err := a.ReadElement(ctx, "desk", sales.URI, e.ElementID, dpe.FormatJSON)
				require.NoError(t, err, e.ElementID)
				assert.Equal(t, e.Category, el.Category)
				assert.Empty(t, el.Problems, e.ElementID)
			}
			pages++
		}
		assert.Equal(t, 2, pages)

		p, err := a.ReadPage(ctx, "desk", sales.URI, 0, agent.PageQuery{})
		require.NoError(t, err)
		require.Len(t, p.Elements, 5)
		tbl, err := dpe.ContentOf[protocol.TableContent](p.Elements[1])
		require.NoError(t, err)
		assert.Equal(t, [][]string{{"Q1", "1250", "true"}, {"Q2", "", "false"}, {"Q3", "1420.5", ""}}, tbl.Rows)
		md := dpe.PageMarkdown(p.DPEPage)
		for _, want := range []string{"###### Level seven", "| Q2 |  | false |", "- north\n  - n1\n  - n2\n- south", "[图表: ] up", "[pivot_table: by region]"} {
			assert.Contains(t, md, want)
		}

		// format=markdown: the server keeps the elements beside its rendering.
		pm, err := a.ReadPage(ctx, "desk", sales.URI, 0, agent.PageQuery{Format: dpe.FormatMarkdown})
		require.NoError(t, err)
		require.NotNil(t, pm.ContentMarkdown)
		assert.Len(t, pm.Elements, 5)

		memo, err := a.ReadPage(ctx, "desk", dpe.DocumentURI("js.docs", "memo").String(), 0, agent.PageQuery{})
		require.NoError(t, err)
		require.Len(t, memo.Elements, 2, "the broken element is kept, the rest returned")
		require.Len(t, memo.Problems, 1)
		assert.Equal(t, "/elements/0", memo.Problems[0].Path)
		assert.Contains(t, memo.Problems[0].Message, "element_id")
	})

	t.Run("errors keep the server's code and data", func(t *testing.T) {
		_, err := a.ReadPage(ctx, "desk", sales.URI, 9, agent.PageQuery{})
		require.Error(t, err)
		assert.Equal(t, protocol.CodePageOutOfRange, protocol.CodeOf(err))
		det := protocol.AsError(err).Details
		assert.Equal(t, float64(9), det["page_index"])
		assert.Equal(t, float64(2), det["page_count"])
		assert.Equal(t, float64(4202), det["mcp_code"], "marked as the MCP server's error")
		_, err = a.ReadElement(ctx, "desk", sales.URI, "nope", dpe.FormatJSON)
		assert.Equal(t, protocol.CodeElementNotFound, protocol.CodeOf(err))
		_, err = a.ReadDocument(ctx, "desk", dpe.DocumentURI("js.docs", "gone").String(), agent.DocumentQuery{})
		assert.Equal(t, protocol.CodeDocumentNotFound, protocol.CodeOf(err))
	})

	t.Run("a change the server never announces", func(t *testing.T) {
		writeJSON(t, file, jsDocs("Sales 2026, revised", map[string]any{
			"doc_ref": "late", "title": "Late", "file_type": "pdf", "file_uri": "file:///late.pdf",
			"pages": []any{map[string]any{"title": "p", "elements": []any{}}},
		}))
		// Bounded by the revalidation period plus one round (waited for as
		// events: the catalog the Agent is sent with notify:update_finder).
		require.Eventually(t, func() bool {
			return seen.find(func(r *protocol.GetFinderRet) bool {
				s := docByRef(r, "sales-2026")
				return s != nil && s.Title == "Sales 2026, revised" && docByRef(r, "late") != nil
			}) != nil
		}, testTimeout, 20*time.Millisecond, "notify:update_finder with the unannounced edit and addition")
		got, err := a.GetFinder(ctx, "desk", agent.FinderQuery{})
		require.NoError(t, err)
		assert.Equal(t, 3, got.TotalCount)
	})

	t.Run("through smcp-agent", func(t *testing.T) {
		cli := buildAgentCLI(t)
		// An office holds one Agent: the CLI takes the place of the Go one.
		require.NoError(t, a.Close())
		try := func(args ...string) (string, string, error) {
			cmd := exec.CommandContext(ctx, cli, append([]string{"--server", d.URL, "--office", "o1", "--name", "cli", "--api-key", d.APIKey}, args...)...)
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			err := cmd.Run()
			return out.String(), errOut.String(), err
		}
		run := func(args ...string) (string, string) {
			t.Helper()
			out, errOut, err := try(args...)
			require.NoError(t, err, "smcp-agent %s: %s", strings.Join(args, " "), errOut)
			return out, errOut
		}
		var out string
		require.Eventually(t, func() bool {
			o, errOut, err := try("finder", "desk")
			if err != nil && !strings.Contains(errOut, "error 4101") { // the Go Agent's leave not seen yet
				t.Fatalf("smcp-agent finder: %v: %s", err, errOut)
			}
			out = o
			return err == nil
		}, testTimeout, 20*time.Millisecond)
		assert.Contains(t, out, sales.URI)
		assert.Contains(t, out, "documents 1-3 of 3")
		out, _ = run("open", sales.URI, "--pages")
		assert.Contains(t, out, "概览")
		out, _ = run("page", sales.URI, "0", "--format", "markdown")
		assert.Contains(t, out, "| Q1 | 1250 | true |", "the server's own rendering")
		out, _ = run("page", sales.URI, "1", "--format", "text")
		assert.Contains(t, out, "Second page.")
		out, _ = run("element", sales.URI, "tbl")
		assert.Contains(t, out, "Q3\t1420.5\t")
		out, _ = run("page", sales.URI, "0", "--json")
		var page map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &page))
		assert.Len(t, page["elements"], 5)
		out, errOut := run("page", dpe.DocumentURI("js.docs", "memo").String(), "0")
		assert.Contains(t, out, "an element without id\n\nfine", "the broken element is kept, and the rest")
		assert.Contains(t, errOut, "warning: /elements/0")
	})

}

// buildAgentCLI builds smcp-agent once per test.
func buildAgentCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "smcp-agent")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/a2c-smcp/smcp-go/agent/cmd/smcp-agent").CombinedOutput()
	require.NoError(t, err, "build smcp-agent: %s", out)
	return bin
}
