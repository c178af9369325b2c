package dpe_test

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

func ExampleParse() {
	u, err := dpe.Parse("dpe://com.example.docs/rpt-2026/pages/0?categories=table,pivot_table&format=markdown")
	if err != nil {
		panic(err)
	}
	fmt.Println(u.Level(), u.Host, u.DocRef, u.PageIndex, u.Format(), u.Categories())

	_, err = dpe.Parse("dpe://com.example.docs/rpt-2026?limit=101")
	var perr *protocol.Error
	if errors.As(err, &perr) {
		fmt.Println(int(perr.Code), perr.Details["rule"], perr.Details["reason"])
	}
	// Output:
	// page com.example.docs rpt-2026 0 markdown [table pivot_table]
	// 4204 7 limit must be an integer in [1, 100], got "101"
}

func ExampleBuild() {
	fmt.Println(dpe.Build("com.example.docs", "rpt-2026", "", url.Values{
		"limit": {"10"}, "depth": {"pages"}, "offset": {"0"},
	}))
	fmt.Println(dpe.ElementURI("com.example.docs", "rpt", "sheet1/A1").With("format", "json"))
	fmt.Println(dpe.PageURI("com.example.docs", "年报", 3))
	// Output:
	// dpe://com.example.docs/rpt-2026?depth=pages&offset=0&limit=10
	// dpe://com.example.docs/rpt/elements/sheet1%2FA1?format=json
	// dpe://com.example.docs/%E5%B9%B4%E6%8A%A5/pages/3
}

func ExamplePageMarkdown() {
	title := "Overview"
	page := protocol.DPEPage{
		PageIndex: 0, URI: "dpe://com.example.docs/rpt-2026/pages/0", Title: title, ElementCount: 3,
		Elements: []protocol.DPEElement{
			{ElementID: "h-001", Category: "heading", Content: map[string]any{"level": 2, "text": "2026 summary"}},
			{ElementID: "tbl-001", Category: "table", Content: map[string]any{
				"headers": []string{"Quarter", "Revenue"},
				"rows":    [][]string{{"Q1", "1,250"}, {"Q2", "1,380"}},
			}},
			{ElementID: "chart-001", Category: "chart", Content: map[string]any{
				"title": "Revenue trend", "data_summary": "rising every quarter",
			}},
		},
	}
	fmt.Println(dpe.PageMarkdown(page))
	// Output:
	// # Overview
	//
	// ## 2026 summary
	//
	// | Quarter | Revenue |
	// | --- | --- |
	// | Q1 | 1,250 |
	// | Q2 | 1,380 |
	//
	// [图表: Revenue trend] rising every quarter
}
