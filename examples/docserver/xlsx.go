package docserver

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/a2c-smcp/smcp-go/dpekit"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// Limits of the XLSX parser besides the Budget.
const (
	// maxUnzip bounds the unzipped size of a workbook (a zip bomb is
	// refused by excelize before it is inflated).
	maxUnzip = 512 << 20
	// detailRows is the largest sheet (by its last row number) whose
	// formulas and merged cells are read: excelize reads them from a
	// worksheet it loads whole, padded to its last row and column, which a
	// sheet with one value in XFD1048576 would make a million rows. Larger
	// sheets are streamed for their values only, and their elements say
	// "formulas_scanned": false.
	detailRows = 20_000
)

// parseXLSX makes pages of at most RowsPerPage data rows (fewer for wide
// sheets: rowsPerPage) per worksheet, each
// holding one table element: the sheet's first non-blank row as headers,
// the following non-blank rows as rows, values as the spreadsheet shows them
// (a formula's cached result, or the result computed by excelize when the
// file holds none). A merged range shows its value in every cell it covers.
// A sheet of one page is titled with the sheet name, the pages of a longer
// one "Expenses (rows 2–101 of 4,000)". The element's metadata names the
// sheet, the range and sheet rows it covers, and flags formulas:
//
//	{"sheet": "Expenses", "source_range": "A1:F8", "first_row": 2,
//	 "last_row": 8, "has_formulas": true, "formula_cells": ["F2", …],
//	 "formulas": {"F2": "=SUM(B2:E2)", …}, "merged_cells": ["A1:C1"]}
//
// Rows are read with excelize's streaming iterator, so only rows and cells
// present in the file are visited, and every cell counts against the
// Budget. Charts become chart elements after the sheet's tables.
func parseXLSX(r io.Reader, b *budget) (*parsed, error) {
	f, err := excelize.OpenReader(r, excelize.Options{UnzipSizeLimit: maxUnzip, UnzipXMLSizeLimit: 16 << 20})
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
	charts := xlsxCharts(f)
	n := ids{}
	sheets := f.GetSheetList()
	totalFormulas := 0
	for _, sheet := range sheets {
		pages, formulas, err := xlsxSheet(f, sheet, n, b)
		if err != nil {
			return nil, fmt.Errorf("sheet %q: %w", sheet, err)
		}
		for _, c := range charts[sheet] {
			if len(pages) == 0 {
				pages = []dpekit.Page{{Title: sheet}}
			}
			last := &pages[len(pages)-1]
			last.Elements = append(last.Elements, c.element(n, sheet))
		}
		if len(pages) == 0 {
			pages = []dpekit.Page{{Title: sheet}}
		}
		totalFormulas += formulas
		p.pages = append(p.pages, pages...)
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

// sheetRow is one non-blank row of a sheet and its 1-based row number.
type sheetRow struct {
	num   int
	cells []string
}

// xlsxSheet reads one sheet into pages and returns its formula count.
func xlsxSheet(f *excelize.File, sheet string, n ids, b *budget) ([]dpekit.Page, int, error) {
	rows, err := f.Rows(sheet)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var data []sheetRow
	num := 0
	for rows.Next() {
		num++ // Next steps one row number at a time, absent rows included
		cols, err := rows.Columns()
		if err != nil {
			return nil, 0, err
		}
		if err := b.spend(len(cols)); err != nil {
			return nil, 0, err
		}
		if len(cols) > 0 {
			data = append(data, sheetRow{num, cols})
		} else if num%4096 == 0 {
			if err := b.spend(0); err != nil { // the clock, on long runs of blank rows
				return nil, 0, err
			}
		}
	}
	if err := rows.Error(); err != nil {
		return nil, 0, err
	}

	detail := num <= detailRows
	formulas := map[string]string{}
	var merged []excelize.MergeCell
	if detail {
		if formulas, err = xlsxFormulas(f, sheet, data); err != nil {
			return nil, 0, err
		}
		if merged, err = f.GetMergeCells(sheet); err != nil {
			return nil, 0, err
		}
		data = fillMerged(data, merged)
	}
	for i := range data {
		// Blank cells at the end of a row carry nothing.
		cells := data[i].cells
		for len(cells) > 0 && cells[len(cells)-1] == "" {
			cells = cells[:len(cells)-1]
		}
		data[i].cells = cells
	}
	data = slices.DeleteFunc(data, func(r sheetRow) bool { return len(r.cells) == 0 })
	if len(data) == 0 {
		return nil, 0, nil
	}
	width := 0
	for _, r := range data {
		width = max(width, len(r.cells))
	}
	// A first row that is one merged range (a title over the table) is the
	// sheet's title, not its headers.
	var sheetTitle string
	top := data[0].num
	if len(data) > 1 && isMergedTitle(data[0], merged) {
		sheetTitle = data[0].cells[0]
		data = data[1:]
	}
	header, body := data[0], data[1:]

	var pages []dpekit.Page
	per := rowsPerPage(width)
	for start := 0; start < len(body) || start == 0; start += per {
		end := min(start+per, len(body))
		window := body[start:end]
		rowsOut := make([][]string, len(window))
		for i, r := range window {
			rowsOut[i] = r.cells
		}
		firstRow, lastRow := header.num, header.num
		if len(window) > 0 {
			firstRow, lastRow = window[0].num, window[len(window)-1].num
		}
		meta := map[string]any{
			"sheet":        sheet,
			"source_range": cellName(1, header.num) + ":" + cellName(width, lastRow),
			"header_row":   header.num,
			"first_row":    firstRow,
			"last_row":     lastRow,
		}
		var cells []string
		pageFormulas := map[string]any{}
		for _, r := range append([]sheetRow{header}, window...) {
			for j := range r.cells {
				name := cellName(j+1, r.num)
				if fm, ok := formulas[name]; ok {
					cells = append(cells, name)
					pageFormulas[name] = fm
				}
			}
		}
		meta["has_formulas"] = len(cells) > 0
		if len(cells) > 0 {
			meta["formula_cells"] = cells
			meta["formulas"] = pageFormulas
		}
		if !detail {
			meta["formulas_scanned"] = false
		}
		if sheetTitle != "" {
			meta["title"] = sheetTitle
		}
		from := top
		if start > 0 {
			from = firstRow
		}
		if ranges := mergedIn(merged, from, lastRow); len(ranges) > 0 {
			meta["merged_cells"] = ranges
		}
		content := map[string]any{"headers": header.cells, "rows": rowsOut, "total_rows": len(rowsOut), "total_columns": width}
		title := sheet
		summary := fmt.Sprintf("Sheet %s (%d rows × %d columns)", sheet, len(body), width)
		if len(body) > per {
			title = fmt.Sprintf("%s (rows %d–%d of %d)", sheet, start+1, end, len(body))
			summary = fmt.Sprintf("Sheet %s, rows %d–%d of %d × %d columns", sheet, start+1, end, len(body), width)
		}
		if len(cells) > 0 {
			summary += fmt.Sprintf(", %d formula cells", len(cells))
		}
		e := n.element(protocol.DPEElementCategoryTable, summary, content)
		e.Metadata = meta
		pages = append(pages, dpekit.Page{Title: title, Elements: []protocol.DPEElement{e}})
		if len(body) == 0 {
			break
		}
	}
	return pages, len(formulas), nil
}

// xlsxFormulas returns the formulas of the cells present in rows, by cell
// name, filling in the values of formulas the file caches no result for.
func xlsxFormulas(f *excelize.File, sheet string, rows []sheetRow) (map[string]string, error) {
	out := map[string]string{}
	for i, r := range rows {
		for j := range r.cells {
			cell := cellName(j+1, r.num)
			formula, err := f.GetCellFormula(sheet, cell)
			if err != nil || formula == "" {
				continue
			}
			out[cell] = "=" + formula
			if r.cells[j] == "" {
				if v, err := f.CalcCellValue(sheet, cell); err == nil {
					rows[i].cells[j] = v
				}
			}
		}
	}
	return out, nil
}

// fillMerged copies the value of every merged range into each cell it
// covers, adding the rows of the range that hold no cell of their own.
func fillMerged(rows []sheetRow, merged []excelize.MergeCell) []sheetRow {
	if len(merged) == 0 {
		return rows
	}
	byNum := make(map[int]int, len(rows))
	for i, r := range rows {
		byNum[r.num] = i
	}
	for _, m := range merged {
		c1, r1, err1 := excelize.CellNameToCoordinates(m.GetStartAxis())
		c2, r2, err2 := excelize.CellNameToCoordinates(m.GetEndAxis())
		v := m.GetCellValue()
		if err1 != nil || err2 != nil || v == "" || (r2-r1+1)*(c2-c1+1) > 100_000 {
			continue
		}
		for rn := r1; rn <= r2; rn++ {
			i, ok := byNum[rn]
			if !ok {
				rows = append(rows, sheetRow{num: rn})
				i = len(rows) - 1
				byNum[rn] = i
			}
			for len(rows[i].cells) < c2 {
				rows[i].cells = append(rows[i].cells, "")
			}
			for c := c1; c <= c2; c++ {
				if rows[i].cells[c-1] == "" {
					rows[i].cells[c-1] = v
				}
			}
		}
	}
	slices.SortFunc(rows, func(a, b sheetRow) int { return a.num - b.num })
	return rows
}

// isMergedTitle reports whether the row's cells are exactly one merged range
// starting in its first column.
func isMergedTitle(r sheetRow, merged []excelize.MergeCell) bool {
	for _, m := range merged {
		c1, r1, err1 := excelize.CellNameToCoordinates(m.GetStartAxis())
		c2, r2, err2 := excelize.CellNameToCoordinates(m.GetEndAxis())
		if err1 == nil && err2 == nil && r1 == r.num && r2 == r.num && c1 == 1 && c2 == len(r.cells) && c2 > 1 {
			return true
		}
	}
	return false
}

// mergedIn lists the merged ranges that start within rows first … last.
func mergedIn(merged []excelize.MergeCell, first, last int) []string {
	var out []string
	for _, m := range merged {
		if _, r, err := excelize.CellNameToCoordinates(m.GetStartAxis()); err == nil && r >= first && r <= last {
			out = append(out, m.GetStartAxis()+":"+m.GetEndAxis())
		}
	}
	return out
}

func splitKeywords(s string) []string {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' })
	return nonEmpty(fields, 10)
}
