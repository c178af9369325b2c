package docserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol"
)

const (
	catalog  = "dpe://local.docs"
	report   = catalog + "/quarterly-report.md"
	sales    = catalog + "/sales-2026-q3.csv"
	budget   = catalog + "/budget-2026.xlsx"
	contract = catalog + "/service-agreement.pdf"
)

// TestShippedDocuments reads the quickstart's documents through a real MCP
// client, over stdio (the command in a child process) and streamable HTTP.
func TestShippedDocuments(t *testing.T) {
	abs, err := filepath.Abs(shippedDocs)
	require.NoError(t, err)
	for _, kind := range []string{overStdio, overHTTP} {
		t.Run(kind, func(t *testing.T) {
			c := serve(t, kind, abs)
			t.Run("catalog", func(t *testing.T) { testCatalog(t, c, abs) })
			t.Run("markdown", func(t *testing.T) { testMarkdown(t, c) })
			t.Run("csv", func(t *testing.T) { testCSV(t, c) })
			t.Run("xlsx", func(t *testing.T) { testXLSX(t, c) })
			t.Run("pdf", func(t *testing.T) { testPDF(t, c) })
			t.Run("errors", func(t *testing.T) { testErrors(t, c) })
			t.Run("completion", func(t *testing.T) { testCompletion(t, c) })
		})
	}
}

func testCatalog(t *testing.T, c *client.Client, root string) {
	v := read(t, c, catalog)
	assert.EqualValues(t, 4, v["total_count"], "the PNG is skipped")
	byRef := map[string]map[string]any{}
	for _, d := range v["documents"].([]any) {
		m := d.(map[string]any)
		byRef[m["doc_ref"].(string)] = m
	}
	want := map[string]struct {
		title, fileType string
		pages           float64
	}{
		"budget-2026.xlsx":      {"Budget 2026", "xlsx", 3},
		"quarterly-report.md":   {"Quarterly Operations Report — Q3 2026", "md", 5},
		"sales-2026-q3.csv":     {"sales-2026-q3", "csv", 2},
		"service-agreement.pdf": {"Service Agreement: Northwind Analytics and Harbor Logistics", "pdf", 3},
	}
	require.Len(t, byRef, len(want))
	for ref, w := range want {
		d := byRef[ref]
		require.NotNil(t, d, ref)
		assert.Equal(t, w.title, d["title"], ref)
		assert.Equal(t, w.fileType, d["file_type"], ref)
		assert.Equal(t, w.pages, d["page_count"], ref)
		assert.Equal(t, catalog+"/"+ref, d["uri"])
		assert.Equal(t, "file://"+filepath.ToSlash(filepath.Join(root, ref)), d["file_uri"])
		fi, err := os.Stat(filepath.Join(root, ref))
		require.NoError(t, err)
		assert.Equal(t, fi.ModTime().UTC().Format(time.RFC3339), d["last_modified"], ref)
		assert.NotEmpty(t, d["summary"], ref)
		assert.NotEmpty(t, d["keywords"], ref)
	}
	assert.Equal(t, []any{"budget", "finance", "Summary", "Expenses", "Headcount"}, byRef["budget-2026.xlsx"]["keywords"])
	assert.Equal(t, []any{"Highlights", "Revenue by region", "Operations", "Next steps"}, byRef["quarterly-report.md"]["keywords"])
	assert.Equal(t, "Managed analytics services, 2026-2027", byRef["service-agreement.pdf"]["summary"])

	res, err := c.ListResources(testCtx(t), mcp.ListResourcesRequest{})
	require.NoError(t, err)
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	assert.ElementsMatch(t, []string{catalog, report, sales, budget, contract}, uris)

	md := read(t, c, catalog+"?format=markdown")
	assert.Contains(t, md["content_markdown"], "- [Budget 2026](dpe://local.docs/budget-2026.xlsx) — xlsx, 3 pages")
}

func testMarkdown(t *testing.T, c *client.Client) {
	doc := read(t, c, report+"?depth=pages")
	var titles []any
	for _, p := range doc["pages"].([]any) {
		titles = append(titles, getObj(p, "title"))
	}
	assert.Equal(t, []any{"Quarterly Operations Report — Q3 2026", "Highlights", "Revenue by region", "Operations", "Next steps"}, titles)

	// The GFM table of "Revenue by region", its cells.
	p := read(t, c, report+"/pages/2?categories=table")
	assert.EqualValues(t, 1, p["element_count"])
	tbl := getObj(p, "elements", 0, "content")
	assert.Equal(t, []any{"Region", "Q2 revenue", "Q3 revenue", "Change"}, getObj(tbl, "headers"))
	assert.Equal(t, []any{"East", "551", "634", "+15.1 %"}, getObj(tbl, "rows", 2))
	assert.EqualValues(t, 4, getObj(tbl, "total_rows"))
	assert.EqualValues(t, 4, getObj(tbl, "total_columns"))

	p = read(t, c, report+"/pages/2")
	cats := categories(p)
	assert.Equal(t, []string{"table", "text", "image"}, cats)
	img := getObj(p, "elements", 2)
	assert.Equal(t, "images/revenue-q3.png", getObj(img, "content", "url"))
	assert.Equal(t, "Revenue by region, Q3 2026", getObj(img, "content", "alt"))

	p = read(t, c, report+"/pages/3")
	assert.Equal(t, []string{"heading", "text", "list", "heading", "text", "code"}, categories(p))
	assert.Equal(t, map[string]any{"level": float64(3), "text": "Sensor migration"}, getObj(p, "elements", 0, "content"))
	assert.Equal(t, true, getObj(p, "elements", 2, "content", "ordered"))
	assert.Equal(t, "Re-pair the sensors with the new gateways.", getObj(p, "elements", 2, "content", "items", 1))
	assert.Equal(t, "yaml", getObj(p, "elements", 5, "content", "language"))
	assert.Contains(t, getObj(p, "elements", 5, "content", "code"), "timezone: Europe/Berlin")

	p = read(t, c, report+"/pages/4")
	assert.Equal(t, []string{"text", "link"}, categories(p))
	assert.Equal(t, map[string]any{"text": "Q4 planning page", "url": "https://wiki.northwind.example/plans/2026-q4"}, getObj(p, "elements", 1, "content"))

	md := read(t, c, report+"/pages/2?format=markdown&categories=table,image")
	assert.Equal(t, "# Revenue by region\n\n"+
		"| Region | Q2 revenue | Q3 revenue | Change |\n| --- | --- | --- | --- |\n"+
		"| North | 412 | 455 | +10.4 % |\n| South | 318 | 347 | +9.1 % |\n"+
		"| East | 551 | 634 | +15.1 % |\n| West | 426 | 469 | +10.1 % |\n\n"+
		"![Revenue by region, Q3 2026](images/revenue-q3.png)", md["content_markdown"])
	assert.EqualValues(t, 2, md["element_count"])

	// Level 3: an element of the report by id.
	id := getObj(p, "elements", 1, "element_id").(string)
	el := read(t, c, report+"/elements/"+id)
	assert.Equal(t, "link", el["category"])
	assert.EqualValues(t, 4, el["page_index"])
}

func categories(page map[string]any) []string {
	var out []string
	for _, e := range page["elements"].([]any) {
		out = append(out, getObj(e, "category").(string))
	}
	return out
}

func testCSV(t *testing.T, c *client.Client) {
	doc := read(t, c, sales+"?depth=pages")
	assert.Equal(t, "Rows 1–100 of 150", getObj(doc, "pages", 0, "title"))
	assert.Equal(t, "Rows 101–150 of 150", getObj(doc, "pages", 1, "title"))

	p := read(t, c, sales+"/pages/0")
	tbl := getObj(p, "elements", 0)
	assert.Equal(t, "table", getObj(tbl, "category"))
	assert.Equal(t, []any{"order_id", "date", "region", "product", "units", "unit_price", "total"}, getObj(tbl, "content", "headers"))
	assert.Len(t, getObj(tbl, "content", "rows"), 100)
	assert.Equal(t, "SO-30001", getObj(tbl, "content", "rows", 0, 0))
	assert.Equal(t, "A2:G101", getObj(tbl, "metadata", "source_range"))

	p = read(t, c, sales+"/pages/1")
	rows := getObj(p, "elements", 0, "content", "rows").([]any)
	require.Len(t, rows, 50)
	assert.Equal(t, "SO-30150", getObj(rows, 49, 0))
	assert.Equal(t, []any{"SO-30150", "2026-09-15", "East", "Support Plan", "38", "120.00", "4560.00"}, rows[49])

	md := read(t, c, sales+"/pages/1?format=markdown")
	lines := strings.Split(md["content_markdown"].(string), "\n")
	assert.Equal(t, "# Rows 101–150 of 150", lines[0])
	assert.Len(t, lines, 2+2+50, "title, blank, header, rule, 50 rows")
}

func testXLSX(t *testing.T, c *client.Client) {
	doc := read(t, c, budget+"?depth=pages")
	var sheets []any
	for _, p := range doc["pages"].([]any) {
		sheets = append(sheets, getObj(p, "title"))
	}
	assert.Equal(t, []any{"Summary", "Expenses", "Headcount"}, sheets)

	p := read(t, c, budget+"/pages/1")
	tbl := getObj(p, "elements", 0)
	assert.Equal(t, []any{"Category", "Q1", "Q2", "Q3", "Q4", "Total"}, getObj(tbl, "content", "headers"))
	assert.Equal(t, []any{"Salaries", "412000", "418000", "431000", "436000", "1697000"}, getObj(tbl, "content", "rows", 0))
	meta := getObj(tbl, "metadata").(map[string]any)
	assert.Equal(t, "Expenses", meta["sheet"])
	assert.Equal(t, "A1:F8", meta["source_range"])
	assert.Equal(t, true, meta["has_formulas"])
	assert.Contains(t, meta["formula_cells"], "F2")
	assert.Contains(t, meta["formula_cells"], "F8")
	assert.Equal(t, "=SUM(B2:E2)", getObj(meta, "formulas", "F2"))
	assert.Equal(t, "=SUM(F2:F7)", getObj(meta, "formulas", "F8"))

	p = read(t, c, budget+"/pages/0")
	assert.Equal(t, []any{"Planned spend", "2302800", "Sum of the Expenses sheet"}, getObj(p, "elements", 0, "content", "rows", 2))
	assert.Equal(t, "=Expenses!F8", getObj(p, "elements", 0, "metadata", "formulas", "B4"))

	p = read(t, c, budget+"/pages/2")
	assert.Equal(t, false, getObj(p, "elements", 0, "metadata", "has_formulas"))
	assert.Equal(t, []any{"Data science", "Lucía Romero", "6", "3"}, getObj(p, "elements", 0, "content", "rows", 2))

	id := getObj(read(t, c, budget+"/pages/1"), "elements", 0, "element_id").(string)
	el := read(t, c, budget+"/elements/"+id+"?format=markdown")
	assert.EqualValues(t, 1, el["page_index"])
	assert.Contains(t, el["content_markdown"], "- metadata.has_formulas: true")
	assert.Contains(t, el["content_markdown"], "| Total | 552500 | 564300 | 584200 | 601800 | 2302800 |")
}

func testPDF(t *testing.T, c *client.Client) {
	doc := read(t, c, contract+"?depth=pages")
	assert.Equal(t, "Page 1: Service Agreement", getObj(doc, "pages", 0, "title"))
	assert.Equal(t, "Page 2: 4. Data protection", getObj(doc, "pages", 1, "title"))
	assert.Equal(t, []any{"contract", "service level", "analytics"}, doc["keywords"])

	p := read(t, c, contract+"/pages/1?format=text")
	text := p["content_text"].(string)
	assert.Contains(t, text, "4. Data protection")
	assert.Contains(t, text, "The Provider notifies the Customer of a personal data breach without undue delay and at the latest within 48 hours of becoming aware of it.")
	assert.Contains(t, text, "7. Signatures")
	assert.NotContains(t, text, "Annex A", "page 3's text stays on page 3")

	p = read(t, c, contract+"/pages/2")
	assert.Equal(t, "Annex A. Nightly reconciliation reports", getObj(p, "elements", 0, "content", "text"))
	assert.Contains(t, getObj(p, "elements", 2, "content", "text"), "counts as a severity 2 incident")
}

func testErrors(t *testing.T, c *client.Client) {
	perr := readErr(t, c, contract+"/pages/3")
	assert.Equal(t, protocol.CodePageOutOfRange, perr.Code)
	assert.Equal(t, map[string]any{"uri": contract + "/pages/3", "doc_ref": "service-agreement.pdf", "page_index": float64(3), "page_count": float64(3)}, perr.Details)
	perr = readErr(t, c, catalog+"/images~revenue-q3.png")
	assert.Equal(t, protocol.CodeDocumentNotFound, perr.Code, "a binary file is no document")
	perr = readErr(t, c, budget+"/elements/tbl-404")
	assert.Equal(t, protocol.CodeElementNotFound, perr.Code)
	perr = readErr(t, c, report+"/pages/1?format=pdf")
	assert.Equal(t, protocol.CodeInvalidDPEURI, perr.Code)
	assert.EqualValues(t, 4, perr.Details["rule"])
}

func testCompletion(t *testing.T, c *client.Client) {
	req := mcp.CompleteRequest{}
	req.Params.Ref = mcp.ResourceReference{Type: "ref/resource", URI: "dpe://local.docs/{doc_ref}/pages/{page_index}"}
	req.Params.Argument = mcp.CompleteArgument{Name: "doc_ref", Value: "s"}
	res, err := c.Complete(testCtx(t), req)
	require.NoError(t, err)
	assert.Equal(t, []string{"sales-2026-q3.csv", "service-agreement.pdf"}, res.Completion.Values)

	req.Params.Argument = mcp.CompleteArgument{Name: "page_index", Value: ""}
	req.Params.Context.Arguments = map[string]string{"doc_ref": "quarterly-report.md"}
	res, err = c.Complete(testCtx(t), req)
	require.NoError(t, err)
	assert.Equal(t, []string{"0", "1", "2", "3", "4"}, res.Completion.Values)

	req.Params.Ref = mcp.ResourceReference{Type: "ref/resource", URI: "dpe://local.docs/{doc_ref}/elements/{element_id}"}
	req.Params.Argument = mcp.CompleteArgument{Name: "element_id", Value: "h-"}
	req.Params.Context.Arguments = map[string]string{"doc_ref": "quarterly-report.md", "page_index": "3"}
	res, err = c.Complete(testCtx(t), req)
	require.NoError(t, err)
	assert.Equal(t, []string{"h-001", "h-002"}, res.Completion.Values)
	assert.Equal(t, 2, res.Completion.Total)
}
