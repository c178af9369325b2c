package finder_test

import (
	"fmt"

	"github.com/a2c-smcp/smcp-go/computer/finder"
	"github.com/a2c-smcp/smcp-go/protocol"
)

func ptr(s string) *string { return &s }

// Organize filters, orders and pages a catalog: servers by the tool-call
// history (most recent first), then each server's documents by last_modified
// as instants, newest first, undated last.
func ExampleOrganize() {
	docs := []protocol.DPEDocumentSummary{
		{DocRef: "rpt-2026", URI: "dpe://com.example.docs/rpt-2026", Server: "docs", FileType: "xlsx", Title: "2026 年度报告",
			Keywords: []string{"财务", "年报"}, LastModified: "2026-01-15T08:30:00Z"},
		{DocRef: "contract-a1", URI: "dpe://com.example.docs/contract-a1", Server: "docs", FileType: "pdf", Title: "A1 合同",
			Keywords: []string{"合同"}, LastModified: "2026-02-01T14:00:00Z"},
		{DocRef: "roadmap", URI: "dpe://com.example.slides/roadmap", Server: "slides", FileType: "pptx", Title: "Roadmap",
			Summary: "Product roadmap, finance section", LastModified: "2026-03-01T00:00:00+08:00"},
		{DocRef: "draft", URI: "dpe://com.example.slides/draft", Server: "slides", FileType: "pptx", Title: "Draft"},
		{DocRef: "broken", URI: "dpe:///no-host", Server: "docs", FileType: "pdf", Title: "Broken"},
	}
	history := []string{"docs", "slides"} // oldest first: slides was used last

	page, total := finder.Organize(docs, finder.Query{Limit: 3}, history)
	fmt.Println(total)
	for _, d := range page {
		fmt.Println(d.Server, d.DocRef)
	}

	page, total = finder.Organize(docs, finder.Query{Keywords: []string{"FINANCE", "年报"}}, nil)
	fmt.Println(total, page[0].DocRef, page[1].DocRef)
	// Output:
	// 4
	// slides roadmap
	// slides draft
	// docs contract-a1
	// 2 rpt-2026 roadmap
}
