package dpe_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

func ptr[T any](v T) *T { return &v }

// decodeJSON decodes s the way a receiver does, so content values are
// float64, []any and map[string]any.
func decodeJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

// The Level 2 example of spec/finder.md (Levels) in Markdown.
func TestPageMarkdownSpecExample(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "level2_page.json"))
	require.NoError(t, err)
	var page protocol.DPEPage
	require.NoError(t, json.Unmarshal(raw, &page))
	require.NoError(t, protocol.ValidateSchema("dpe_page.json", raw))

	const want = "# 概览\n" +
		"\n" +
		"# 2026 年度总结\n" +
		"\n" +
		"本报告总结了 2026 年度公司在各业务领域的运营情况...\n" +
		"\n" +
		"| 季度 | 收入（万元） | 同比增长 |\n" +
		"| --- | --- | --- |\n" +
		"| Q1 | 1,250 | +12% |\n" +
		"| Q2 | 1,380 | +15% |\n" +
		"| Q3 | 1,420 | +8% |\n" +
		"| Q4 | 1,560 | +18% |\n" +
		"\n" +
		"[图表: 季度收入趋势] Q1-Q4 收入呈上升趋势，Q4 达到最高点 1,560 万元"
	assert.Equal(t, want, dpe.PageMarkdown(page))

	const wantText = "概览\n" +
		"\n" +
		"2026 年度总结\n" +
		"\n" +
		"本报告总结了 2026 年度公司在各业务领域的运营情况...\n" +
		"\n" +
		"季度\t收入（万元）\t同比增长\n" +
		"Q1\t1,250\t+12%\n" +
		"Q2\t1,380\t+15%\n" +
		"Q3\t1,420\t+8%\n" +
		"Q4\t1,560\t+18%\n" +
		"\n" +
		"[图表: 季度收入趋势] Q1-Q4 收入呈上升趋势，Q4 达到最高点 1,560 万元"
	assert.Equal(t, wantText, dpe.PageText(page))

	// A page as a server sends it with format=markdown is returned as is.
	rendered := protocol.DPEPage{PageIndex: 0, URI: page.URI, ContentMarkdown: ptr(want), ContentText: ptr(wantText), ElementCount: 4}
	assert.Equal(t, want, dpe.PageMarkdown(rendered))
	assert.Equal(t, wantText, dpe.PageText(rendered))
}

// renderVectors is conformance/dpe_render.json.
type renderVectors struct {
	Elements []struct {
		Name     string          `json:"name"`
		Element  json.RawMessage `json:"element"`
		Markdown string          `json:"markdown"`
		Text     string          `json:"text"`
	} `json:"elements"`
	Pages []struct {
		Name     string          `json:"name"`
		Page     json.RawMessage `json:"page"`
		Markdown string          `json:"markdown"`
		Text     string          `json:"text"`
	} `json:"pages"`
}

// TestRenderVectors replays conformance/dpe_render.json: every element and
// page renders to exactly the bytes given, and every category has a case.
func TestRenderVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "conformance", "dpe_render.json"))
	require.NoError(t, err)
	var v renderVectors
	require.NoError(t, json.Unmarshal(raw, &v))
	require.NotEmpty(t, v.Elements)
	covered := map[protocol.DPEElementCategory]bool{}
	for _, tt := range v.Elements {
		t.Run(tt.Name, func(t *testing.T) {
			e := decodeJSON[protocol.DPEElement](t, string(tt.Element))
			covered[e.Category] = true
			assert.Equal(t, tt.Markdown, dpe.ElementMarkdown(e))
			assert.Equal(t, tt.Text, dpe.ElementText(e))
		})
	}
	for _, c := range dpe.Categories() {
		assert.True(t, covered[c], "category %s has no rendering case", c)
	}
	for _, tt := range v.Pages {
		t.Run(tt.Name, func(t *testing.T) {
			p := decodeJSON[protocol.DPEPage](t, string(tt.Page))
			assert.Equal(t, tt.Markdown, dpe.PageMarkdown(p))
			assert.Equal(t, tt.Text, dpe.PageText(p))
		})
	}
}

// Content built in Go (not decoded from JSON) renders the same.
func TestElementRenderingGoValues(t *testing.T) {
	table := protocol.DPEElement{ElementID: "t", Category: protocol.DPEElementCategoryTable, Content: map[string]any{
		"headers": []string{"a", "b"},
		"rows":    [][]string{{"1", "2"}, {"3"}},
	}}
	assert.Equal(t, "| a | b |\n| --- | --- |\n| 1 | 2 |\n| 3 |  |", dpe.ElementMarkdown(table))
	rowsAny := protocol.DPEElement{ElementID: "t", Category: protocol.DPEElementCategoryTable, Content: map[string]any{
		"rows": []any{[]string{"x"}, []any{"y", 2}},
	}}
	assert.Equal(t, "|  |  |\n| --- | --- |\n| x |  |\n| y | 2 |", dpe.ElementMarkdown(rowsAny))
	heading := protocol.DPEElement{ElementID: "h", Category: protocol.DPEElementCategoryHeading, Content: map[string]any{"level": 2, "text": "Go"}}
	assert.Equal(t, "## Go", dpe.ElementMarkdown(heading))
	list := protocol.DPEElement{ElementID: "l", Category: protocol.DPEElementCategoryList, Content: map[string]any{"ordered": true, "items": []string{"a", "b"}}}
	assert.Equal(t, "1. a\n2. b", dpe.ElementMarkdown(list))
	// Malformed content never panics and falls back.
	bad := protocol.DPEElement{ElementID: "b", Category: protocol.DPEElementCategoryTable, Summary: "s", Content: map[string]any{"headers": "a,b", "rows": 3}}
	assert.Equal(t, "[table: s]", dpe.ElementMarkdown(bad))
	assert.Equal(t, "[list: ]", dpe.ElementMarkdown(protocol.DPEElement{Category: protocol.DPEElementCategoryList}))
	nested := protocol.DPEElement{ElementID: "l", Category: protocol.DPEElementCategoryList, Content: map[string]any{"items": []any{"a", []string{"b"}}}}
	assert.Equal(t, "- a\n  - b", dpe.ElementMarkdown(nested))
}

func TestPageRendering(t *testing.T) {
	page := protocol.DPEPage{
		PageIndex: 3, URI: "dpe://h/d/pages/3", ElementCount: 3,
		Elements: []protocol.DPEElement{
			{ElementID: "t0", Category: protocol.DPEElementCategoryText, Content: map[string]any{"text": "\n"}},
			{ElementID: "t1", Category: protocol.DPEElementCategoryText, Content: map[string]any{"text": "Hello"}},
			{ElementID: "f", Category: protocol.DPEElementCategoryFormula, Content: map[string]any{"expression": "x^2"}},
		},
	}
	// No title: no heading; an element rendering to nothing is skipped.
	assert.Equal(t, "Hello\n\n$ x^2 $", dpe.PageMarkdown(page))
	assert.Equal(t, "Hello\n\nx^2", dpe.PageText(page))
	page.Title = "Sheet\n1"
	assert.Equal(t, "# Sheet 1\n\nHello\n\n$ x^2 $", dpe.PageMarkdown(page))
	assert.Equal(t, "Sheet 1\n\nHello\n\nx^2", dpe.PageText(page))
	assert.Equal(t, "# Empty", dpe.PageMarkdown(protocol.DPEPage{Title: "Empty"}))
	assert.Equal(t, "", dpe.PageMarkdown(protocol.DPEPage{}))
}

const specDocument = `{
  "doc_ref": "rpt-2026",
  "uri": "dpe://com.example.docs/rpt-2026",
  "file_uri": "file:///data/reports/2026-annual.xlsx",
  "file_type": "xlsx",
  "title": "2026 年度报告",
  "page_count": 12,
  "keywords": ["财务", "年报"],
  "summary": "2026 年度财务与运营报告",
  "last_modified": "2026-01-15T08:30:00Z",
  "pages": [
    {"page_index": 0, "title": "概览", "element_count": 8, "uri": "dpe://com.example.docs/rpt-2026/pages/0", "doc_ref": "rpt-2026"},
    {"page_index": 1, "title": "收入分析", "element_count": 15, "uri": "dpe://com.example.docs/rpt-2026/pages/1", "doc_ref": "rpt-2026"}
  ],
  "page_offset": 0,
  "page_limit": 20,
  "page_total": 12
}`

func TestDocumentRendering(t *testing.T) {
	require.NoError(t, protocol.ValidateSchema("dpe_document.json", []byte(specDocument)))
	d := decodeJSON[protocol.DPEDocument](t, specDocument)
	meta := "- doc_ref: rpt-2026\n" +
		"- uri: dpe://com.example.docs/rpt-2026\n" +
		"- file_type: xlsx\n" +
		"- file_uri: file:///data/reports/2026-annual.xlsx\n" +
		"- page_count: 12\n" +
		"- keywords: 财务, 年报\n" +
		"- summary: 2026 年度财务与运营报告\n" +
		"- last_modified: 2026-01-15T08:30:00Z\n"
	assert.Equal(t, "# 2026 年度报告\n\n"+meta+
		"\n## Pages\n\n"+
		"page_offset: 0, page_limit: 20, page_total: 12\n\n"+
		"| page_index | title | element_count | uri |\n"+
		"| --- | --- | --- | --- |\n"+
		"| 0 | 概览 | 8 | dpe://com.example.docs/rpt-2026/pages/0 |\n"+
		"| 1 | 收入分析 | 15 | dpe://com.example.docs/rpt-2026/pages/1 |",
		dpe.DocumentMarkdown(d))
	assert.Equal(t, "2026 年度报告\n\n"+
		"doc_ref: rpt-2026\n"+
		"uri: dpe://com.example.docs/rpt-2026\n"+
		"file_type: xlsx\n"+
		"file_uri: file:///data/reports/2026-annual.xlsx\n"+
		"page_count: 12\n"+
		"keywords: 财务, 年报\n"+
		"summary: 2026 年度财务与运营报告\n"+
		"last_modified: 2026-01-15T08:30:00Z\n"+
		"\nPages\n"+
		"page_offset: 0, page_limit: 20, page_total: 12\n"+
		"page_index\ttitle\telement_count\turi\n"+
		"0\t概览\t8\tdpe://com.example.docs/rpt-2026/pages/0\n"+
		"1\t收入分析\t15\tdpe://com.example.docs/rpt-2026/pages/1",
		dpe.DocumentText(d))

	// depth=metadata: no page index.
	d.Pages, d.PageOffset, d.PageLimit, d.PageTotal = nil, nil, 0, nil
	assert.Equal(t, "# 2026 年度报告\n\n"+meta[:len(meta)-1], dpe.DocumentMarkdown(d))

	// A page window past the end: the window line, no table.
	d.PageOffset, d.PageLimit, d.PageTotal = ptr(40), 20, ptr(12)
	assert.Equal(t, "# 2026 年度报告\n\n"+meta+"\n## Pages\n\npage_offset: 40, page_limit: 20, page_total: 12", dpe.DocumentMarkdown(d))

	// Untitled: the doc_ref is the heading; optional fields are left out.
	bare := protocol.DPEDocument{DocRef: "d1", URI: "dpe://h/d1", FileType: "pdf", FileURI: "file:///d1.pdf", PageCount: 1}
	assert.Equal(t, "# d1\n\n- doc_ref: d1\n- uri: dpe://h/d1\n- file_type: pdf\n- file_uri: file:///d1.pdf\n- page_count: 1", dpe.DocumentMarkdown(bare))
	bare.ContentMarkdown, bare.ContentText = "given md", "given text"
	assert.Equal(t, "given md", dpe.DocumentMarkdown(bare))
	assert.Equal(t, "given text", dpe.DocumentText(bare))
}

const specCatalog = `{
  "documents": [
    {"doc_ref": "rpt-2026", "uri": "dpe://com.example.docs/rpt-2026", "file_uri": "file:///data/reports/2026-annual.xlsx", "file_type": "xlsx", "title": "2026 年度报告", "page_count": 12, "keywords": ["财务", "年报"], "summary": "2026 年度财务与运营报告", "last_modified": "2026-01-15T08:30:00Z"},
    {"doc_ref": "contract-a1", "uri": "dpe://com.example.docs/contract-a1", "file_uri": "file:///data/contracts/a1.pdf", "file_type": "pdf", "title": "A1 合同", "page_count": 1, "keywords": ["合同"], "summary": "A1 项目服务合同", "last_modified": "2026-02-01T14:00:00Z"}
  ],
  "total_count": 2
}`

func TestCatalogRendering(t *testing.T) {
	require.NoError(t, protocol.ValidateSchema("dpe_catalog.json", []byte(specCatalog)))
	c := decodeJSON[protocol.DPECatalog](t, specCatalog)
	assert.Equal(t, "# Documents (2)\n\n"+
		"- [2026 年度报告](dpe://com.example.docs/rpt-2026) — xlsx, 12 pages\n"+
		"- [A1 合同](dpe://com.example.docs/contract-a1) — pdf, 1 page",
		dpe.CatalogMarkdown(c))
	assert.Equal(t, "Documents (2)\n"+
		"uri\ttitle\tfile_type\tpage_count\n"+
		"dpe://com.example.docs/rpt-2026\t2026 年度报告\txlsx\t12\n"+
		"dpe://com.example.docs/contract-a1\tA1 合同\tpdf\t1",
		dpe.CatalogText(c))
	c.TotalCount = 7
	c.Documents = c.Documents[:1]
	c.Documents[0].Title = "Q[1]"
	assert.Equal(t, "# Documents (1 of 7)\n\n- [Q\\[1\\]](dpe://com.example.docs/rpt-2026) — xlsx, 12 pages", dpe.CatalogMarkdown(c))
	assert.Equal(t, "# Documents (0)", dpe.CatalogMarkdown(protocol.DPECatalog{}))
	assert.Equal(t, "Documents (0)", dpe.CatalogText(protocol.DPECatalog{}))
	assert.Equal(t, "x", dpe.CatalogMarkdown(protocol.DPECatalog{ContentMarkdown: "x"}))
}

const specDetail = `{
  "element_id": "tbl-001",
  "category": "table",
  "doc_ref": "rpt-2026",
  "page_index": 0,
  "uri": "dpe://com.example.docs/rpt-2026/elements/tbl-001",
  "summary": "季度收入对比表（4行3列）",
  "content": {
    "headers": ["季度", "收入（万元）", "同比增长"],
    "rows": [["Q1", "1,250", "+12%"], ["Q2", "1,380", "+15%"], ["Q3", "1,420", "+8%"], ["Q4", "1,560", "+18%"]],
    "total_rows": 4,
    "total_columns": 3
  },
  "metadata": {"source_range": "A1:C5", "has_formulas": true}
}`

func TestElementDetailRendering(t *testing.T) {
	require.NoError(t, protocol.ValidateSchema("dpe_element_detail.json", []byte(specDetail)))
	e := decodeJSON[protocol.DPEElementDetail](t, specDetail)
	assert.Equal(t, "- element_id: tbl-001\n"+
		"- category: table\n"+
		"- doc_ref: rpt-2026\n"+
		"- page_index: 0\n"+
		"- uri: dpe://com.example.docs/rpt-2026/elements/tbl-001\n"+
		"- summary: 季度收入对比表（4行3列）\n"+
		"- metadata.has_formulas: true\n"+
		"- metadata.source_range: A1:C5\n"+
		"\n"+
		"| 季度 | 收入（万元） | 同比增长 |\n"+
		"| --- | --- | --- |\n"+
		"| Q1 | 1,250 | +12% |\n"+
		"| Q2 | 1,380 | +15% |\n"+
		"| Q3 | 1,420 | +8% |\n"+
		"| Q4 | 1,560 | +18% |",
		dpe.ElementDetailMarkdown(e))
	assert.Equal(t, "element_id: tbl-001\n"+
		"category: table\n"+
		"doc_ref: rpt-2026\n"+
		"page_index: 0\n"+
		"uri: dpe://com.example.docs/rpt-2026/elements/tbl-001\n"+
		"summary: 季度收入对比表（4行3列）\n"+
		"metadata.has_formulas: true\n"+
		"metadata.source_range: A1:C5\n"+
		"\n"+
		"季度\t收入（万元）\t同比增长\n"+
		"Q1\t1,250\t+12%\n"+
		"Q2\t1,380\t+15%\n"+
		"Q3\t1,420\t+8%\n"+
		"Q4\t1,560\t+18%",
		dpe.ElementDetailText(e))

	empty := protocol.DPEElementDetail{ElementID: "t", Category: protocol.DPEElementCategoryText, Content: map[string]any{"text": ""},
		Metadata: map[string]any{"nested": map[string]any{"a": []any{1.0, "b"}}}}
	assert.Equal(t, "- element_id: t\n- category: text\n- metadata.nested: {\"a\":[1,\"b\"]}", dpe.ElementDetailMarkdown(empty))
	empty.ContentText = "given"
	assert.Equal(t, "given", dpe.ElementDetailText(empty))
}
