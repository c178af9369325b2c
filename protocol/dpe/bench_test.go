package dpe_test

import (
	"strconv"
	"testing"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

var benchURIs = []struct{ name, uri string }{
	{"catalog", "dpe://com.example.docs"},
	{"document", "dpe://com.example.docs/rpt-2026?depth=pages&offset=0&limit=10"},
	{"page", "dpe://com.example.docs/rpt-2026/pages/11?categories=table,pivot_table,chart&format=markdown"},
	{"element", "dpe://com.example.docs/rpt/elements/sheet1%2FA1?format=json"},
}

var sinkURI *dpe.URI

func BenchmarkParse(b *testing.B) {
	for _, bb := range benchURIs {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				u, err := dpe.Parse(bb.uri)
				if err != nil {
					b.Fatal(err)
				}
				sinkURI = u
			}
		})
	}
}

var sinkString string

func BenchmarkString(b *testing.B) {
	u, err := dpe.Parse(benchURIs[2].uri)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		sinkString = u.String()
	}
}

// benchPage is a page holding a heading and one table of 100 rows × 5
// columns, with content as encoding/json produces it.
func benchPage() protocol.DPEPage {
	rows := make([]any, 100)
	for i := range rows {
		n := strconv.Itoa(i)
		rows[i] = []any{"row " + n, n + ",000", "+" + n + "%", "note | " + n, "Q" + strconv.Itoa(i%4+1)}
	}
	title := "Sheet 1"
	return protocol.DPEPage{
		PageIndex: 0, URI: "dpe://h/d/pages/0", Title: title, ElementCount: 2,
		Elements: []protocol.DPEElement{
			{ElementID: "h", Category: protocol.DPEElementCategoryHeading, Content: map[string]any{"level": 2.0, "text": "Revenue"}},
			{ElementID: "t", Category: protocol.DPEElementCategoryTable, Content: map[string]any{
				"headers": []any{"name", "amount", "growth", "note", "quarter"},
				"rows":    rows,
			}},
		},
	}
}

func BenchmarkPageMarkdown(b *testing.B) {
	p := benchPage()
	b.ReportAllocs()
	for b.Loop() {
		sinkString = dpe.PageMarkdown(p)
	}
}

func BenchmarkPageText(b *testing.B) {
	p := benchPage()
	b.ReportAllocs()
	for b.Loop() {
		sinkString = dpe.PageText(p)
	}
}
