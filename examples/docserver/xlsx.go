package docserver

import (
	"fmt"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/a2c-smcp/smcp-go/dpekit"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// parseXLSX makes one page per worksheet, titled with the sheet name, holding
// one table element: the sheet's first row as headers, the other rows as
// rows, values as the spreadsheet shows them (a formula's cached result, or
// the result computed by excelize when the file holds none). The element's
// metadata names the sheet and its range and flags formulas:
//
//	{"sheet": "Expenses", "source_range": "A1:F8", "has_formulas": true,
//	 "formula_cells": ["F2", …], "formulas": {"F2": "=SUM(B2:E2)", …}}
func parseXLSX(abs string) (*parsed, error) {
	f, err := excelize.OpenFile(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p := &parsed{docInfo: docInfo{fileType: "xlsx"}}
	if props, err := f.GetDocProps(); err == nil && props != nil {
		p.title = strings.TrimSpace(props.Title)
		p.summary = strings.TrimSpace(props.Description)
		if props.Keywords != "" {
			p.keywords = splitKeywords(props.Keywords)
		}
	}
	n := ids{}
	sheets := f.GetSheetList()
	totalFormulas := 0
	for _, sheet := range sheets {
		page, formulas, err := xlsxSheet(f, sheet, n)
		if err != nil {
			return nil, fmt.Errorf("sheet %q: %w", sheet, err)
		}
		totalFormulas += formulas
		p.pages = append(p.pages, page)
		if len(p.keywords) < 10 {
			p.keywords = append(p.keywords, sheet)
		}
	}
	if p.summary == "" {
		p.summary = fmt.Sprintf("Workbook with %d sheets: %s", len(sheets), strings.Join(sheets, ", "))
		if totalFormulas > 0 {
			p.summary += fmt.Sprintf("; %d formula cells", totalFormulas)
		}
	}
	return p, nil
}

func xlsxSheet(f *excelize.File, sheet string, n ids) (dpekit.Page, int, error) {
	page := dpekit.Page{Title: sheet}
	rows, err := f.GetRows(sheet)
	if err != nil {
		return page, 0, err
	}
	width := 0
	for _, r := range rows {
		width = max(width, len(r))
	}
	if len(rows) == 0 || width == 0 {
		return page, 0, nil
	}
	var cells []string
	formulas := map[string]any{}
	for i, r := range rows {
		// A formula whose result the file does not cache shows no value:
		// excelize computes it.
		for j := 0; j < width; j++ {
			cell, _ := excelize.CoordinatesToCellName(j+1, i+1)
			formula, err := f.GetCellFormula(sheet, cell)
			if err != nil || formula == "" {
				continue
			}
			cells = append(cells, cell)
			formulas[cell] = "=" + formula
			if j >= len(r) || r[j] == "" {
				if v, err := f.CalcCellValue(sheet, cell); err == nil {
					for len(r) <= j {
						r = append(r, "")
					}
					r[j] = v
					rows[i] = r
				}
			}
		}
	}
	headers, data := rows[0], rows[1:]
	if data == nil {
		data = [][]string{}
	}
	content := map[string]any{"headers": headers, "rows": data, "total_rows": len(data), "total_columns": width}
	meta := map[string]any{
		"sheet":        sheet,
		"source_range": cellName(1, 1) + ":" + cellName(width, len(rows)),
		"has_formulas": len(cells) > 0,
	}
	if len(cells) > 0 {
		meta["formula_cells"] = cells
		meta["formulas"] = formulas
	}
	summary := fmt.Sprintf("Sheet %s (%d rows × %d columns)", sheet, len(data), width)
	if len(cells) > 0 {
		summary += fmt.Sprintf(", %d formula cells", len(cells))
	}
	e := n.element(protocol.DPEElementCategoryTable, summary, content)
	e.Metadata = meta
	page.Elements = []protocol.DPEElement{e}
	return page, len(cells), nil
}

func splitKeywords(s string) []string {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' })
	return nonEmpty(fields, 10)
}
