package dpekit_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/dpekit"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

var allTransports = []string{overStdio, overPipe, overHTTP}

// schemaOf names the schema of the payload a URI's level answers with.
func schemaOf(t testing.TB, uri string) string {
	u, err := dpe.Parse(uri)
	require.NoError(t, err)
	return [...]string{"dpe_catalog.json", "dpe_document.json", "dpe_page.json", "dpe_element_detail.json"}[u.Level()]
}

// read reads uri, checks the answer is one JSON text content validating
// against its level's schema, and returns it decoded.
func read(t testing.TB, c *client.Client, uri string) map[string]any {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.ReadResource(testCtx(t), req)
	require.NoError(t, err, uri)
	require.Len(t, res.Contents, 1, uri)
	tc, ok := res.Contents[0].(mcp.TextResourceContents)
	require.True(t, ok, "%s: contents are %T", uri, res.Contents[0])
	assert.Equal(t, uri, tc.URI)
	assert.Equal(t, "application/json", tc.MIMEType)
	require.NoError(t, protocol.ValidateSchema(schemaOf(t, uri), []byte(tc.Text)), "%s: %s", uri, tc.Text)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(tc.Text), &v))
	return v
}

// readErr reads uri, expects a JSON-RPC error and returns the *protocol.Error
// its message carries.
func readErr(t testing.TB, c *client.Client, uri string) *protocol.Error {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	_, err := c.ReadResource(testCtx(t), req)
	require.Error(t, err, uri)
	perr, ok := protocol.DecodeMCPErrorMessage(err.Error())
	require.True(t, ok, "%s: error %q carries no protocol error", uri, err)
	return perr
}

func TestReadLevels(t *testing.T) {
	for _, kind := range allTransports {
		t.Run(kind, func(t *testing.T) {
			var c *client.Client
			if kind == overStdio {
				c = connect(t, kind, nil)
			} else {
				c = connect(t, kind, newServer(t, testProvider()))
			}
			testReadLevels(t, c)
		})
	}
}

func testReadLevels(t *testing.T, c *client.Client) {
	base := "dpe://" + testHost
	rpt := base + "/" + refReport
	contract := dpe.DocumentURI(testHost, refContract).String()

	t.Run("list", func(t *testing.T) {
		res, err := c.ListResources(testCtx(t), mcp.ListResourcesRequest{})
		require.NoError(t, err)
		names := map[string]string{}
		for _, r := range res.Resources {
			names[r.URI] = r.Name
			assert.Equal(t, "application/json", r.MIMEType)
		}
		assert.Len(t, names, 5, "catalog + 4 documents")
		assert.Contains(t, names, base)
		assert.Equal(t, "2026 年度报告 [rpt-2026]", names[rpt])
		assert.Contains(t, names, contract)
		seen := map[string]bool{}
		for _, n := range names {
			assert.False(t, seen[n], "resource names must be unique: %q", n)
			seen[n] = true
		}
		tres, err := c.ListResourceTemplates(testCtx(t), mcp.ListResourceTemplatesRequest{})
		require.NoError(t, err)
		var tmpls []string
		for _, rt := range tres.ResourceTemplates {
			tmpls = append(tmpls, rt.URITemplate.Raw())
		}
		assert.ElementsMatch(t, []string{
			base + "/{doc_ref}/pages/{page_index}",
			base + "/{doc_ref}/elements/{element_id}",
			base + "{+path}",
			"{+uri}",
		}, tmpls)
	})

	t.Run("level0", func(t *testing.T) {
		v := read(t, c, base)
		assert.EqualValues(t, 4, v["total_count"])
		docs := v["documents"].([]any)
		require.Len(t, docs, 4)
		first := docs[0].(map[string]any)
		assert.Equal(t, refReport, first["doc_ref"])
		assert.Equal(t, rpt, first["uri"])
		assert.EqualValues(t, 3, first["page_count"])
		assert.Equal(t, "2026-01-15T08:30:00Z", first["last_modified"])
		assert.Equal(t, []any{"财务", "年报"}, first["keywords"])
		assert.Equal(t, contract, docs[1].(map[string]any)["uri"])
		assert.NotContains(t, v, "content_markdown")

		md := read(t, c, base+"?format=markdown")
		assert.Equal(t, v["documents"], md["documents"], "markdown adds content, keeps the fields")
		assert.Contains(t, md["content_markdown"], "# Documents (4)")
		assert.Contains(t, md["content_markdown"], "- [2026 年度报告](dpe://com.example.docs/rpt-2026) — xlsx, 3 pages")
		txt := read(t, c, base+"?format=text")
		assert.Contains(t, txt["content_text"], "dpe://com.example.docs/rpt-2026\t2026 年度报告\txlsx\t3")
		assert.NotContains(t, txt, "content_markdown")
	})

	t.Run("level1 metadata", func(t *testing.T) {
		v := read(t, c, rpt)
		assert.Equal(t, refReport, v["doc_ref"])
		assert.Equal(t, rpt, v["uri"])
		assert.Equal(t, "file:///data/reports/2026-annual.xlsx", v["file_uri"])
		assert.Equal(t, "xlsx", v["file_type"])
		assert.Equal(t, "2026 年度财务与运营报告", v["summary"])
		for _, k := range []string{"pages", "page_offset", "page_limit", "page_total"} {
			assert.NotContains(t, v, k, "depth=metadata (default) carries no page window")
		}
		v = read(t, c, rpt+"?depth=metadata")
		assert.NotContains(t, v, "pages")
		v = read(t, c, contract)
		assert.Equal(t, refContract, v["doc_ref"])
	})

	t.Run("level1 pages", func(t *testing.T) {
		v := read(t, c, rpt+"?depth=pages")
		assert.EqualValues(t, 0, v["page_offset"])
		assert.EqualValues(t, 20, v["page_limit"])
		assert.EqualValues(t, 3, v["page_total"])
		pages := v["pages"].([]any)
		require.Len(t, pages, 3)
		p1 := pages[1].(map[string]any)
		assert.EqualValues(t, 1, p1["page_index"])
		assert.Equal(t, "Details", p1["title"])
		assert.EqualValues(t, 6, p1["element_count"])
		assert.Equal(t, rpt+"/pages/1", p1["uri"])
		assert.Equal(t, refReport, p1["doc_ref"])

		big := base + "/" + refBig
		v = read(t, c, big+"?depth=pages&offset=240&limit=100")
		assert.EqualValues(t, 240, v["page_offset"])
		assert.EqualValues(t, 100, v["page_limit"])
		assert.EqualValues(t, 250, v["page_total"])
		pages = v["pages"].([]any)
		require.Len(t, pages, 10, "the window is cut at the end of the document")
		assert.EqualValues(t, 249, pages[9].(map[string]any)["page_index"])
		assert.Equal(t, "Page 249", pages[9].(map[string]any)["title"])

		v = read(t, c, big+"?depth=pages&limit=5&offset=7")
		pages = v["pages"].([]any)
		require.Len(t, pages, 5)
		assert.EqualValues(t, 7, pages[0].(map[string]any)["page_index"])

		v = read(t, c, big+"?depth=pages&offset=250")
		assert.Equal(t, []any{}, v["pages"], "a window past the end is empty, not an error")
		assert.EqualValues(t, 250, v["page_total"])

		v = read(t, c, base+"/"+refEmpty+"?depth=pages")
		assert.Equal(t, []any{}, v["pages"])
		assert.EqualValues(t, 0, v["page_total"])

		md := read(t, c, rpt+"?depth=pages&format=markdown")
		assert.Len(t, md["pages"], 3, "markdown keeps the page index")
		assert.Contains(t, md["content_markdown"], "# 2026 年度报告")
		assert.Contains(t, md["content_markdown"], "## Pages")
		assert.Contains(t, md["content_markdown"], "| 1 | Details | 6 | dpe://com.example.docs/rpt-2026/pages/1 |")
		txt := read(t, c, rpt+"?format=text")
		assert.Contains(t, txt["content_text"], "page_count: 3")
	})

	t.Run("level2", func(t *testing.T) {
		v := read(t, c, rpt+"/pages/0")
		assert.EqualValues(t, 0, v["page_index"])
		assert.Equal(t, "概览", v["title"])
		assert.Equal(t, refReport, v["doc_ref"])
		assert.Equal(t, rpt+"/pages/0", v["uri"])
		assert.EqualValues(t, 4, v["element_count"])
		elems := v["elements"].([]any)
		require.Len(t, elems, 4)
		tbl := elems[2].(map[string]any)
		assert.Equal(t, "tbl-001", tbl["element_id"])
		assert.Equal(t, "table", tbl["category"])
		assert.Equal(t, []any{"Q1", "1,250", "+12%"}, tbl["content"].(map[string]any)["rows"].([]any)[0])

		v = read(t, c, rpt+"/pages/1?categories=table,pivot_table")
		assert.EqualValues(t, 1, v["element_count"], "element_count counts the filtered elements")
		require.Len(t, v["elements"], 1)
		assert.Equal(t, "tbl-002", v["elements"].([]any)[0].(map[string]any)["element_id"])

		v = read(t, c, rpt+"/pages/0?categories=video")
		assert.EqualValues(t, 0, v["element_count"])
		assert.Equal(t, []any{}, v["elements"], "format=json always carries elements")

		v = read(t, c, rpt+"/pages/1?categories=code,link&format=json")
		assert.EqualValues(t, 2, v["element_count"])

		md := read(t, c, rpt+"/pages/0?categories=table,pivot_table&format=markdown")
		assert.NotContains(t, md, "elements", "markdown replaces elements")
		assert.EqualValues(t, 1, md["element_count"])
		assert.Equal(t, "# 概览\n\n| 季度 | 收入（万元） | 同比增长 |\n| --- | --- | --- |\n| Q1 | 1,250 | +12% |\n| Q2 | 1,380 | +15% |\n| Q3 | 1,420 | +8% |\n| Q4 | 1,560 | +18% |",
			md["content_markdown"])

		md = read(t, c, rpt+"/pages/1?format=markdown")
		for _, want := range []string{"1. collect\n2. reconcile", "```sql\nSELECT 1;\n```", "[wiki](https://example.com/wiki)", "![logo](images/logo.png)", "$ (b-a)/a $"} {
			assert.Contains(t, md["content_markdown"], want)
		}
		md = read(t, c, rpt+"/pages/0?format=markdown")
		assert.Contains(t, md["content_markdown"], "# 2026 年度总结")
		assert.Contains(t, md["content_markdown"], "[图表: 季度收入趋势] Q1-Q4 收入呈上升趋势")
		md = read(t, c, rpt+"/pages/2?format=markdown")
		assert.Contains(t, md["content_markdown"], "[annotation: reviewer note]")

		txt := read(t, c, rpt+"/pages/0?format=text&categories=table")
		assert.NotContains(t, txt, "elements")
		assert.Equal(t, "概览\n\n季度\t收入（万元）\t同比增长\nQ1\t1,250\t+12%\nQ2\t1,380\t+15%\nQ3\t1,420\t+8%\nQ4\t1,560\t+18%", txt["content_text"])

		// The exact template URI (no query) reaches the same router.
		v = read(t, c, base+"/"+refBig+"/pages/249")
		assert.Equal(t, "Page 249", v["title"])
		v = read(t, c, contract+"/pages/0")
		assert.NotContains(t, v, "title", "an untitled page leaves title out")
		assert.Equal(t, contract+"/pages/0", v["uri"])
	})

	t.Run("level3", func(t *testing.T) {
		v := read(t, c, rpt+"/elements/tbl-001")
		assert.Equal(t, "tbl-001", v["element_id"])
		assert.Equal(t, "table", v["category"])
		assert.Equal(t, refReport, v["doc_ref"])
		assert.EqualValues(t, 0, v["page_index"])
		assert.Equal(t, rpt+"/elements/tbl-001", v["uri"])
		assert.Equal(t, "季度收入对比表（4行3列）", v["summary"])
		assert.Len(t, v["content"].(map[string]any)["rows"], 4)

		v = read(t, c, rpt+"/elements/fml-001?format=markdown")
		assert.EqualValues(t, 1, v["page_index"])
		assert.Contains(t, v["content_markdown"], "$ (b-a)/a $")
		assert.Contains(t, v["content_markdown"], "- element_id: fml-001")
		assert.Contains(t, v, "content", "markdown adds content_markdown, keeps content")
		v = read(t, c, rpt+"/elements/lnk-001?format=text")
		assert.Contains(t, v["content_text"], "wiki (https://example.com/wiki)")

		odd := dpe.ElementURI(testHost, refContract, "p/1 #x").String()
		require.True(t, strings.Contains(odd, "%2F"), odd)
		v = read(t, c, odd)
		assert.Equal(t, "p/1 #x", v["element_id"])
		assert.Equal(t, refContract, v["doc_ref"])
		assert.Equal(t, odd, v["uri"])
	})
}

func TestReadErrors(t *testing.T) {
	for _, kind := range allTransports {
		t.Run(kind, func(t *testing.T) {
			var c *client.Client
			if kind == overStdio {
				c = connect(t, kind, nil)
			} else {
				c = connect(t, kind, newServer(t, testProvider()))
			}
			testReadErrors(t, c)
		})
	}
}

func testReadErrors(t *testing.T, c *client.Client) {
	base := "dpe://" + testHost
	rpt := base + "/" + refReport
	cases := []struct {
		name    string
		uri     string
		code    protocol.Code
		message string
		details map[string]any
	}{
		{"unknown document", base + "/nope", protocol.CodeDocumentNotFound, `document "nope" not found`,
			map[string]any{"uri": base + "/nope", "doc_ref": "nope"}},
		{"unknown document, level 2", base + "/nope/pages/0?format=markdown", protocol.CodeDocumentNotFound, `document "nope" not found`,
			map[string]any{"uri": base + "/nope/pages/0?format=markdown", "doc_ref": "nope"}},
		{"unknown document, level 3", base + "/nope/elements/x", protocol.CodeDocumentNotFound, `document "nope" not found`,
			map[string]any{"uri": base + "/nope/elements/x", "doc_ref": "nope"}},
		{"page past the end", rpt + "/pages/3", protocol.CodePageOutOfRange, `page 3 out of range: document "rpt-2026" has 3 pages`,
			map[string]any{"uri": rpt + "/pages/3", "doc_ref": refReport, "page_index": float64(3), "page_count": float64(3)}},
		{"page of an empty document", base + "/empty/pages/0?categories=table", protocol.CodePageOutOfRange, `page 0 out of range: document "empty" has 0 pages`,
			map[string]any{"uri": base + "/empty/pages/0?categories=table", "doc_ref": refEmpty, "page_index": float64(0), "page_count": float64(0)}},
		{"unknown element", rpt + "/elements/tbl-999", protocol.CodeElementNotFound, `element "tbl-999" not found in document "rpt-2026"`,
			map[string]any{"uri": rpt + "/elements/tbl-999", "doc_ref": refReport, "element_id": "tbl-999"}},
		{"another host", "dpe://com.example.docsx/rpt-2026", protocol.CodeDocumentNotFound,
			`no documents of host "com.example.docsx" here: this server is "com.example.docs"`,
			map[string]any{"uri": "dpe://com.example.docsx/rpt-2026", "host": "com.example.docsx"}},
		// A host that is no prefix of this one matches none of the host's
		// templates: still 4201, not mcp-go's -32002.
		{"unrelated host", "dpe://other.host/x", protocol.CodeDocumentNotFound,
			`no documents of host "other.host" here: this server is "com.example.docs"`,
			map[string]any{"uri": "dpe://other.host/x", "host": "other.host"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			perr := readErr(t, c, tc.uri)
			assert.Equal(t, tc.code, perr.Code)
			assert.Equal(t, tc.message, perr.Message)
			assert.Equal(t, tc.details, perr.Details)
		})
	}

	// Invalid URIs: one per validation rule, all reaching the router (the
	// kit's catch-all template routes URIs of other schemes and hosts too).
	invalid := []struct {
		uri  string
		rule int
	}{
		{"file:///etc/passwd", 1},
		{"dpe:///x", 2},
		{base + "/rpt-2026/sheets/1", 3},
		{base + "/rpt-2026/pages/-1", 3},
		{base + "/rpt-2026/pages/1/x", 3},
		{base + "/rpt-2026?format=html", 4},
		{base + "/rpt-2026?depth=all", 5},
		{base + "/rpt-2026?depth=pages&offset=-1", 6},
		{base + "/rpt-2026?depth=pages&limit=0", 7},
		{base + "/rpt-2026?depth=pages&limit=101", 7},
		{base + "/rpt-2026/pages/0?categories=table,tables", 8},
	}
	for _, tc := range invalid {
		t.Run(fmt.Sprintf("rule %d %s", tc.rule, tc.uri), func(t *testing.T) {
			perr := readErr(t, c, tc.uri)
			_, parseErr := dpe.Parse(tc.uri)
			require.Error(t, parseErr)
			expected := protocol.AsError(parseErr)
			assert.Equal(t, protocol.CodeInvalidDPEURI, perr.Code)
			assert.Equal(t, expected.Message, perr.Message)
			assert.Equal(t, tc.uri, perr.Details["uri"])
			assert.EqualValues(t, tc.rule, perr.Details["rule"])
			assert.NotEmpty(t, perr.Details["reason"])
		})
	}
}

// A careless author's document whose catalog entry violates its schema (a
// keyword over 256 characters) is left out of the validated catalog with a
// coded warning; the other documents stay listed, and reading it answers
// 500 with the violations.
func TestValidationLeavesOneBadDocumentOut(t *testing.T) {
	p := testProvider()
	p.put(dpekit.Document{DocRef: "careless", Title: "Careless", FileType: "md", FileURI: "file:///careless.md",
		Keywords: []string{strings.Repeat("k", 300)}}, dpekit.Page{Title: "p"})
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewJSONHandler(writerFunc(func(b []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(b) }), nil))
	srv, err := dpekit.New(testCtx(t), testHost, p, dpekit.WithValidation(), dpekit.WithLogger(log))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	c := connect(t, overHTTP, srv)

	cat := read(t, c, "dpe://"+testHost)
	var refs []string
	for _, d := range cat["documents"].([]any) {
		refs = append(refs, d.(map[string]any)["doc_ref"].(string))
	}
	assert.NotContains(t, refs, "careless")
	assert.Subset(t, refs, []string{refReport, refContract}, "the other documents stay listed")
	assert.EqualValues(t, len(refs), cat["total_count"])

	perr := readErr(t, c, "dpe://"+testHost+"/careless")
	assert.Equal(t, protocol.CodeInternal, perr.Code)

	mu.Lock()
	defer mu.Unlock()
	var warned bool
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		if rec["msg"] == "dpekit: a document violates dpe_document_meta.json; left out of the catalog" {
			warned = true
			assert.Equal(t, "WARN", rec["level"])
			assert.EqualValues(t, 500, rec["code"])
			assert.Equal(t, "careless", rec["doc_ref"])
			assert.NotEmpty(t, rec["violations"])
		}
	}
	assert.True(t, warned, "a coded warning: %s", buf.String())
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Exact writers (spec/finder.md, Reading the levels): with WithValidation,
// a provider whose element content is not in the strict shape — numbers in
// table cells, which readers accept — is refused with 500 naming the rules,
// at Level 2 and Level 3, while a strict page is served.
func TestValidationKeepsWritersExact(t *testing.T) {
	p := newMemProvider()
	p.put(dpekit.Document{DocRef: "loose", Title: "Loose", FileType: "csv", FileURI: "file:///loose.csv"},
		dpekit.Page{Title: "p0", Elements: []protocol.DPEElement{
			el("t", protocol.DPEElementCategoryTable, "numbers", map[string]any{"rows": [][]any{{"a", 1}}}),
		}},
		dpekit.Page{Title: "p1", Elements: []protocol.DPEElement{
			el("s", protocol.DPEElementCategoryTable, "strings", map[string]any{"rows": [][]string{{"a", "1"}}}),
		}})
	c := connect(t, overPipe, newServer(t, p))
	for _, uri := range []string{"dpe://" + testHost + "/loose/pages/0", "dpe://" + testHost + "/loose/elements/t"} {
		perr := readErr(t, c, uri)
		assert.Equal(t, protocol.CodeInternal, perr.Code, uri)
		assert.Contains(t, perr.Message, "dpe_content_rules.json", uri)
	}
	page := read(t, c, "dpe://"+testHost+"/loose/pages/1")
	assert.Len(t, page["elements"], 1)
}
