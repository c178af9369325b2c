package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

const docsHost = "quick.docs"

// finderDeployment is a Server, a Computer "desk" running smcp-docserver
// over a copy of the quickstart documents, and an Agent "bot", all in office
// "o1".
func finderDeployment(t *testing.T, opts ...agent.Option) (*agent.Client, string) {
	t.Helper()
	d := startServer(t)
	root := copyDocs(t)
	startComputer(t, d, "o1", "desk", []mcpServer{docServer(t, "docs", root, docsHost)})
	return dialAgent(t, d, "o1", "bot", opts...), root
}

func docRefs(docs []protocol.DPEDocumentSummary) []string {
	out := make([]string, 0, len(docs))
	for _, d := range docs {
		out = append(out, d.DocRef)
	}
	return out
}

// The catalog through client:get_finder, with every organizer option, and
// the catalog iterator (spec/finder.md, Levels).
func TestFinderCatalog(t *testing.T) {
	a, _ := finderDeployment(t)
	ctx := testContext(t)

	all, err := a.GetFinder(ctx, "desk", agent.FinderQuery{})
	require.NoError(t, err)
	assert.Equal(t, 4, all.TotalCount)
	assert.Equal(t, []string{"quarterly-report.md", "sales-2026-q3.csv", "budget-2026.xlsx", "service-agreement.pdf"}, docRefs(all.Documents),
		"one server: newest first")
	for _, doc := range all.Documents {
		assert.Equal(t, "docs", doc.Server, "server is the MCP server's configured name")
		assert.Equal(t, dpe.DocumentURI(docsHost, doc.DocRef).String(), doc.URI)
		assert.Positive(t, doc.PageCount)
		require.NotNil(t, doc.LastModified)
	}

	tests := []struct {
		name  string
		query agent.FinderQuery
		want  []string
		total int
	}{
		{"file type", agent.FinderQuery{FileType: "csv"}, []string{"sales-2026-q3.csv"}, 1},
		{"file type is exact", agent.FinderQuery{FileType: "CSV"}, []string{}, 0},
		{"keyword in title", agent.FinderQuery{Keywords: []string{"budget"}}, []string{"budget-2026.xlsx"}, 1},
		{"keywords OR, case-insensitive", agent.FinderQuery{Keywords: []string{"AGREEMENT", "northwind"}}, []string{"quarterly-report.md", "service-agreement.pdf"}, 2},
		{"keyword in summary", agent.FinderQuery{Keywords: []string{"150 rows"}}, []string{"sales-2026-q3.csv"}, 1},
		{"page", agent.FinderQuery{Offset: 1, Limit: 2}, []string{"sales-2026-q3.csv", "budget-2026.xlsx"}, 4},
		{"offset past the end", agent.FinderQuery{Offset: 10}, []string{}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := a.GetFinder(ctx, "desk", tt.query)
			require.NoError(t, err)
			assert.Equal(t, tt.want, docRefs(got.Documents))
			assert.Equal(t, tt.total, got.TotalCount)
		})
	}

	var iterated []string
	for doc, err := range a.Documents(ctx, "desk", agent.FinderQuery{Limit: 1}) {
		require.NoError(t, err)
		iterated = append(iterated, doc.DocRef)
	}
	assert.Equal(t, docRefs(all.Documents), iterated, "the iterator pages client:get_finder by total_count")

	// Level 0 read through the Computer lists the same documents.
	cat, err := a.ReadCatalog(ctx, "desk", dpe.CatalogURI(docsHost).String(), dpe.FormatJSON)
	require.NoError(t, err)
	assert.Equal(t, 4, cat.TotalCount)
	md, err := a.ReadCatalog(ctx, "desk", dpe.CatalogURI(docsHost).String(), dpe.FormatMarkdown)
	require.NoError(t, err)
	require.NotNil(t, md.ContentMarkdown)
	assert.Contains(t, md.ContentMarkdown, "Budget 2026")
}

// Levels 1–3 with their query options, read through Agent → Server →
// Computer → smcp-docserver (spec/finder.md, Levels).
func TestFinderNavigation(t *testing.T) {
	a, _ := finderDeployment(t)
	ctx := testContext(t)
	csv := dpe.DocumentURI(docsHost, "sales-2026-q3.csv").String()
	report := dpe.DocumentURI(docsHost, "quarterly-report.md").String()

	// Level 1: metadata only, then with the page index.
	meta, err := a.ReadDocument(ctx, "desk", csv, agent.DocumentQuery{})
	require.NoError(t, err)
	assert.Equal(t, 2, meta.PageCount, "150 rows in pages of at most 100")
	assert.Nil(t, meta.Pages)
	withPages, err := a.ReadDocument(ctx, "desk", report, agent.DocumentQuery{Pages: true, Offset: 1, Limit: 2})
	require.NoError(t, err)
	require.Len(t, withPages.Pages, 2)
	assert.Equal(t, 1, withPages.Pages[0].PageIndex)
	require.NotNil(t, withPages.PageTotal)
	assert.Equal(t, withPages.PageCount, *withPages.PageTotal)
	assert.Equal(t, 2, withPages.PageLimit)

	// Level 2 as typed JSON elements: the CSV's second page holds rows 101–150.
	page, err := a.ReadPage(ctx, "desk", csv, 1, agent.PageQuery{})
	require.NoError(t, err)
	require.Len(t, page.Elements, 1)
	assert.Equal(t, protocol.DPEElementCategory("table"), page.Elements[0].Category)
	rows, ok := page.Elements[0].Content["rows"].([]any)
	require.True(t, ok)
	assert.Len(t, rows, 50)

	// Level 2 as Markdown filtered to tables: the report's region table.
	var tablePage *dpe.Page
	for p, err := range a.Pages(ctx, "desk", report, agent.PageQuery{Format: dpe.FormatMarkdown, Categories: []protocol.DPEElementCategory{"table"}}) {
		require.NoError(t, err)
		if p.ElementCount > 0 {
			tablePage = &p
			break
		}
	}
	require.NotNil(t, tablePage, "the report has a page with a table")
	require.NotNil(t, tablePage.ContentMarkdown)
	assert.Contains(t, *tablePage.ContentMarkdown, "| ")
	assert.Contains(t, *tablePage.ContentMarkdown, "---")
	assert.Nil(t, tablePage.Elements, "markdown replaces the elements")

	// Every page of the report, in one loop.
	count := 0
	for p, err := range a.Pages(ctx, "desk", report, agent.PageQuery{Format: dpe.FormatText}) {
		require.NoError(t, err)
		assert.Equal(t, count, p.PageIndex)
		require.NotNil(t, p.ContentText)
		count++
	}
	assert.Equal(t, withPages.PageCount, count)

	// Level 3: one element of the CSV's first page.
	first, err := a.ReadPage(ctx, "desk", csv, 0, agent.PageQuery{})
	require.NoError(t, err)
	require.NotEmpty(t, first.Elements)
	el, err := a.ReadElement(ctx, "desk", csv, first.Elements[0].ElementID, dpe.FormatJSON)
	require.NoError(t, err)
	assert.Equal(t, first.Elements[0].ElementID, el.ElementID)
	assert.Equal(t, protocol.DPEElementCategory("table"), el.Category)
	require.NotNil(t, el.PageIndex)
	assert.Equal(t, 0, *el.PageIndex)

	// The XLSX: one page per sheet, formulas flagged.
	budget := dpe.DocumentURI(docsHost, "budget-2026.xlsx").String()
	sheets, err := a.ReadDocument(ctx, "desk", budget, agent.DocumentQuery{Pages: true})
	require.NoError(t, err)
	var titles []string
	for _, p := range sheets.Pages {
		titles = append(titles, p.Title)
	}
	assert.Equal(t, []string{"Summary", "Expenses", "Headcount"}, titles)

	// The PDF: a page's text.
	pdfPage, err := a.ReadPage(ctx, "desk", dpe.DocumentURI(docsHost, "service-agreement.pdf").String(), 0, agent.PageQuery{Format: dpe.FormatText})
	require.NoError(t, err)
	require.NotNil(t, pdfPage.ContentText)
	assert.Contains(t, strings.ToLower(*pdfPage.ContentText), "harbor logistics")
}

// Finder errors keep their code, message and details from the document server
// (or the Computer) to the Agent (spec/finder.md, Reading through the
// Computer).
func TestFinderErrors(t *testing.T) {
	a, _ := finderDeployment(t)
	ctx := testContext(t)
	csv := dpe.DocumentURI(docsHost, "sales-2026-q3.csv").String()

	tests := []struct {
		name    string
		read    func() error
		code    protocol.Code
		details map[string]any
	}{
		{"page past the end", func() error {
			_, err := a.ReadPage(ctx, "desk", csv, 2, agent.PageQuery{})
			return err
		}, protocol.CodePageOutOfRange, map[string]any{"page_index": float64(2), "page_count": float64(2)}},
		{"unknown document", func() error {
			_, err := a.ReadDocument(ctx, "desk", dpe.DocumentURI(docsHost, "nope.md").String(), agent.DocumentQuery{})
			return err
		}, protocol.CodeDocumentNotFound, map[string]any{"doc_ref": "nope.md"}},
		{"unknown element", func() error {
			_, err := a.ReadElement(ctx, "desk", csv, "no-such-element", dpe.FormatJSON)
			return err
		}, protocol.CodeElementNotFound, map[string]any{"element_id": "no-such-element"}},
		{"invalid URI", func() error {
			_, err := a.ReadResource(ctx, "desk", "dpe://"+docsHost+"/a/b/c")
			return err
		}, protocol.CodeInvalidDPEURI, map[string]any{"rule": float64(3)}},
		{"no server for the host", func() error {
			_, err := a.ReadResource(ctx, "desk", "dpe://elsewhere.docs/x")
			return err
		}, protocol.CodeDocumentNotFound, map[string]any{"host": "elsewhere.docs"}},
		{"unknown computer", func() error {
			_, err := a.GetFinder(ctx, "nobody", agent.FinderQuery{})
			return err
		}, protocol.CodeNotFound, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.read()
			var perr *protocol.Error
			require.ErrorAs(t, err, &perr)
			assert.Equal(t, tt.code, perr.Code, perr.Message)
			assert.NotEmpty(t, perr.Message)
			for k, v := range tt.details {
				assert.Equal(t, v, perr.Details[k], "details[%s] of %v", k, perr.Details)
			}
		})
	}
}
