package corpus

import (
	"archive/zip"
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/xuri/excelize/v2"
)

// FarCellXLSX writes a workbook whose only sheet holds "header" in A1 and
// "far" in XFD1048576, the last cell a sheet can have: a file of a few KB
// whose dimension is every cell of the sheet. It is written part by part
// (excelize itself would pad the sheet to a million rows while saving it).
func FarCellXLSX(path string) error {
	parts := []struct{ name, body string }{
		{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>`},
		{"_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`},
		{"xl/workbook.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`},
		{"xl/_rels/workbook.xml.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`},
		{"xl/worksheets/sheet1.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:XFD1048576"/><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>header</t></is></c></row><row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>far</t></is></c></row></sheetData></worksheet>`},
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	for _, p := range parts {
		w, err := zw.Create(p.name)
		if err == nil {
			_, err = w.Write([]byte(p.body))
		}
		if err != nil {
			f.Close()
			return err
		}
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// LongXLSX writes a workbook with one sheet "Data" of a header row and rows
// data rows × cols columns, streamed (excelize's StreamWriter).
func LongXLSX(path string, rows, cols int) error {
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetSheetName("Sheet1", "Data"); err != nil {
		return err
	}
	sw, err := f.NewStreamWriter("Data")
	if err != nil {
		return err
	}
	row := make([]any, cols)
	for c := range cols {
		row[c] = fmt.Sprintf("Column %d", c+1)
	}
	if err := sw.SetRow("A1", row); err != nil {
		return err
	}
	for r := range rows {
		row := make([]any, cols)
		for c := range cols {
			if c == 0 {
				row[c] = fmt.Sprintf("item-%06d", r+1)
			} else {
				row[c] = (r+1)*100 + c
			}
		}
		cell, _ := excelize.CoordinatesToCellName(1, r+2)
		if err := sw.SetRow(cell, row); err != nil {
			return err
		}
	}
	if err := sw.Flush(); err != nil {
		return err
	}
	return f.SaveAs(path)
}

// MessyXLSX writes a workbook of the kinds real spreadsheets come in: sheet
// "Report" with a blank first row, a title merged over A2:C2, headers in
// row 3, a blank row between data rows and a formula; a bar chart over its
// data.
func MessyXLSX(path string) error {
	f := excelize.NewFile()
	defer f.Close()
	s := "Report"
	if err := f.SetSheetName("Sheet1", s); err != nil {
		return err
	}
	var err error
	set := func(cell string, v any) {
		if err == nil {
			err = f.SetCellValue(s, cell, v)
		}
	}
	set("A2", "Quarterly sales")
	set("A3", "Region")
	set("B3", "Q1")
	set("C3", "Q2")
	set("A4", "North")
	set("B4", 10)
	set("C4", 20)
	set("A6", "South")
	set("B6", 30)
	set("C6", 40)
	set("A7", "Total")
	if err != nil {
		return err
	}
	if err := f.MergeCell(s, "A2", "C2"); err != nil {
		return err
	}
	if err := f.SetCellFormula(s, "B7", "SUM(B4:B6)"); err != nil {
		return err
	}
	if err := f.AddChart(s, "E2", &excelize.Chart{
		Type:   excelize.Col,
		Series: []excelize.ChartSeries{{Name: "Report!$B$3", Categories: "Report!$A$4:$A$6", Values: "Report!$B$4:$B$6"}},
		Title:  []excelize.RichTextRun{{Text: "Sales by region"}},
	}); err != nil {
		return err
	}
	return f.SaveAs(path)
}

// CSV writes rows data rows × cols columns and a header row separated by
// sep, each field padded to width bytes.
func CSV(path string, rows, cols, width int, sep byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for r := 0; r <= rows; r++ {
		for c := range cols {
			if c > 0 {
				w.WriteByte(sep)
			}
			v := fmt.Sprintf("h%d", c+1)
			if r > 0 {
				v = fmt.Sprintf("r%dc%d", r, c+1)
			}
			w.WriteString(v)
			if pad := width - len(v); pad > 0 {
				w.WriteString(strings.Repeat("x", pad))
			}
		}
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// FrontMatterMarkdown is a note with YAML front matter, an ordered list
// starting at 3 and a footnote.
const FrontMatterMarkdown = `---
title: Field notes
description: Notes taken on site.
tags: [site, survey]
---

# Findings

The survey found two issues[^1].

3. third step
4. fourth step

## Details

More text.

[^1]: Both are minor.
`

// Folder writes n small files of mixed kinds (Markdown, CSV, text) into
// dir, ten per sub-folder.
func Folder(dir string, n int) error {
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", i/10))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		var name, body string
		switch i % 3 {
		case 0:
			name, body = fmt.Sprintf("note-%04d.md", i), fmt.Sprintf("# Note %d\n\nSome text about item %d.\n\n## Part\n\n- a\n- b\n", i, i)
		case 1:
			name, body = fmt.Sprintf("table-%04d.csv", i), fmt.Sprintf("id;value\n%d;%d\n%d;%d\n", i, i*2, i+1, i*3)
		default:
			name, body = fmt.Sprintf("memo-%04d.txt", i), fmt.Sprintf("Memo %d\n\nPlain text.\n", i)
		}
		if err := os.WriteFile(filepath.Join(sub, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}
