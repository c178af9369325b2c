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

func TestElementRendering(t *testing.T) {
	tests := []struct {
		name     string
		element  string // JSON of a DPEElement
		markdown string
		text     string
	}{
		{"heading level 1",
			`{"element_id":"h","category":"heading","content":{"level":1,"text":"Title"}}`,
			"# Title", "Title"},
		{"heading level 3",
			`{"element_id":"h","category":"heading","content":{"level":3,"text":"Sub"}}`,
			"### Sub", "Sub"},
		{"heading without level is level 1",
			`{"element_id":"h","category":"heading","content":{"text":"T"}}`,
			"# T", "T"},
		{"heading level clamped to 6",
			`{"element_id":"h","category":"heading","content":{"level":9,"text":"Deep"}}`,
			"###### Deep", "Deep"},
		{"heading on one line",
			`{"element_id":"h","category":"heading","content":{"level":2,"text":"a\nb"}}`,
			"## a b", "a b"},
		{"heading without text falls back",
			`{"element_id":"h","category":"heading","summary":"S","content":{"level":2}}`,
			"[heading: S]", "[heading: S]"},
		{"text keeps paragraph breaks",
			`{"element_id":"t","category":"text","content":{"text":"\nFirst paragraph,\nsame paragraph.\n\nSecond | paragraph.\n"}}`,
			"First paragraph,\nsame paragraph.\n\nSecond | paragraph.",
			"First paragraph,\nsame paragraph.\n\nSecond | paragraph."},
		{"table escapes pipes and line breaks",
			`{"element_id":"x","category":"table","content":{"headers":["a|b","c"],"rows":[["1|2","line1\nline2"],["x\r\ny",""]]}}`,
			"| a\\|b | c |\n| --- | --- |\n| 1\\|2 | line1<br>line2 |\n| x<br>y |  |",
			"a|b\tc\n1|2\tline1 line2\nx y\t"},
		{"table without headers",
			`{"element_id":"x","category":"table","content":{"rows":[["1","2"],["3","4"]]}}`,
			"|  |  |\n| --- | --- |\n| 1 | 2 |\n| 3 | 4 |",
			"1\t2\n3\t4"},
		{"ragged rows are padded",
			`{"element_id":"x","category":"table","content":{"headers":["a"],"rows":[["1","2","3"],[],["4"]]}}`,
			"| a |  |  |\n| --- | --- | --- |\n| 1 | 2 | 3 |\n|  |  |  |\n| 4 |  |  |",
			"a\n1\t2\t3\n\n4"},
		{"table cells that are numbers or null",
			`{"element_id":"x","category":"table","content":{"headers":["n","b","z"],"rows":[[1250,true,null],[1.5,false,"s"]]}}`,
			"| n | b | z |\n| --- | --- | --- |\n| 1250 | true |  |\n| 1.5 | false | s |",
			"n\tb\tz\n1250\ttrue\t\n1.5\tfalse\ts"},
		{"table with headers only",
			`{"element_id":"x","category":"table","content":{"headers":["a","b"],"rows":[]}}`,
			"| a | b |\n| --- | --- |", "a\tb"},
		{"empty table falls back",
			`{"element_id":"x","category":"table","summary":"nothing","content":{"rows":[]}}`,
			"[table: nothing]", "[table: nothing]"},
		{"pivot_table renders as a table",
			`{"element_id":"p","category":"pivot_table","content":{"headers":["k","sum"],"rows":[["a","3"]],"total_rows":1}}`,
			"| k | sum |\n| --- | --- |\n| a | 3 |", "k\tsum\na\t3"},
		{"ordered list",
			`{"element_id":"l","category":"list","content":{"ordered":true,"items":["one","two","three"]}}`,
			"1. one\n2. two\n3. three", "1. one\n2. two\n3. three"},
		{"unordered list",
			`{"element_id":"l","category":"list","content":{"ordered":false,"items":["a","b"]}}`,
			"- a\n- b", "- a\n- b"},
		{"list without ordered flag is unordered; item continuation indented",
			`{"element_id":"l","category":"list","content":{"items":["a\nmore","b"]}}`,
			"- a\n  more\n- b", "- a\n  more\n- b"},
		{"long ordered list indents under the number",
			`{"element_id":"l","category":"list","content":{"ordered":true,"items":["1","2","3","4","5","6","7","8","9","ten\nx"]}}`,
			"1. 1\n2. 2\n3. 3\n4. 4\n5. 5\n6. 6\n7. 7\n8. 8\n9. 9\n10. ten\n    x",
			"1. 1\n2. 2\n3. 3\n4. 4\n5. 5\n6. 6\n7. 7\n8. 8\n9. 9\n10. ten\n    x"},
		{"code with language",
			`{"element_id":"c","category":"code","content":{"language":"go","code":"fmt.Println(1)\n"}}`,
			"```go\nfmt.Println(1)\n```", "fmt.Println(1)"},
		{"code without language",
			`{"element_id":"c","category":"code","content":{"code":"x = 1"}}`,
			"```\nx = 1\n```", "x = 1"},
		{"code holding a fence gets a longer fence",
			`{"element_id":"c","category":"code","content":{"language":"markdown","code":"` + "```go\\nx\\n```" + `"}}`,
			"````markdown\n```go\nx\n```\n````", "```go\nx\n```"},
		{"chart",
			`{"element_id":"g","category":"chart","content":{"chart_type":"bar","title":"Sales","data_summary":"up 10%"}}`,
			"[图表: Sales] up 10%", "[图表: Sales] up 10%"},
		{"chart without title uses the summary",
			`{"element_id":"g","category":"chart","summary":"Trend","content":{"chart_type":"line"}}`,
			"[图表: Trend]", "[图表: Trend]"},
		{"image with url",
			`{"element_id":"i","category":"image","content":{"alt":"Logo [v2]","url":"https://x.test/a b.png"}}`,
			"![Logo \\[v2\\]](https://x.test/a%20b.png)", "[图片: Logo [v2]] https://x.test/a b.png"},
		{"image without url",
			`{"element_id":"i","category":"image","content":{"description":"A cat on a mat"}}`,
			"[图片: A cat on a mat]", "[图片: A cat on a mat]"},
		{"image without url or description uses alt",
			`{"element_id":"i","category":"image","content":{"alt":"cat"}}`,
			"[图片: cat]", "[图片: cat]"},
		{"link",
			`{"element_id":"k","category":"link","content":{"text":"Spec","url":"https://example.com/spec_(v1)"}}`,
			"[Spec](https://example.com/spec_%28v1%29)", "Spec (https://example.com/spec_(v1))"},
		{"link without text",
			`{"element_id":"k","category":"link","content":{"url":"https://example.com"}}`,
			"[https://example.com](https://example.com)", "https://example.com"},
		{"link without url falls back",
			`{"element_id":"k","category":"link","summary":"broken","content":{"text":"x"}}`,
			"[link: broken]", "[link: broken]"},
		{"formula",
			`{"element_id":"f","category":"formula","content":{"expression":"=SUM(B2:B5)","value":"5610"}}`,
			"$ =SUM(B2:B5) $", "=SUM(B2:B5)"},
		{"annotation",
			`{"element_id":"a","category":"annotation","summary":"Reviewer note","content":{"text":"check Q3"}}`,
			"[annotation: Reviewer note]", "[annotation: Reviewer note]"},
		{"separator without summary",
			`{"element_id":"s","category":"separator","content":{}}`,
			"[separator: ]", "[separator: ]"},
		{"unknown category",
			`{"element_id":"z","category":"hologram","summary":"3D","content":{}}`,
			"[hologram: 3D]", "[hologram: 3D]"},
	}
	for _, other := range []string{"diagram", "header", "footer", "audio", "video", "form", "widget"} {
		tests = append(tests, struct{ name, element, markdown, text string }{
			other, `{"element_id":"o","category":"` + other + `","summary":"about ` + other + `","content":{"x":1}}`,
			"[" + other + ": about " + other + "]", "[" + other + ": about " + other + "]",
		})
	}
	covered := map[protocol.DPEElementCategory]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := decodeJSON[protocol.DPEElement](t, tt.element)
			covered[e.Category] = true
			assert.Equal(t, tt.markdown, dpe.ElementMarkdown(e))
			assert.Equal(t, tt.text, dpe.ElementText(e))
		})
	}
	for _, c := range dpe.Categories() {
		assert.True(t, covered[c], "category %s has no rendering case", c)
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
