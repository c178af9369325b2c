package docserver

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/a2c-smcp/smcp-go/dpekit"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// RowsPerPage is the most data rows one CSV or XLSX page holds.
const RowsPerPage = 100

// CellsPerPage bounds the cells of one CSV or XLSX page: a table wider than
// CellsPerPage/RowsPerPage columns gets fewer rows per page (at least one),
// so that no page grows with the table's width.
const CellsPerPage = 20_000

// rowsPerPage is how many rows of a table width columns wide one page holds.
func rowsPerPage(width int) int {
	return max(1, min(RowsPerPage, CellsPerPage/max(width, 1)))
}

// parseCSV splits a CSV file into pages of at most RowsPerPage data rows
// (fewer for wide tables: rowsPerPage),
// each one table element whose headers are the file's first record. The
// delimiter is sniffed (sniffDelimiter): comma, semicolon, tab or pipe.
// Records may have different lengths; quotes are read leniently. A file with
// no record is one empty page, as an empty Markdown or text file is.
func parseCSV(src []byte, b *budget) (*parsed, error) {
	r := csv.NewReader(bytes.NewReader(src))
	r.Comma = sniffDelimiter(src)
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	r.ReuseRecord = false
	var records [][]string
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := b.spend(len(rec)); err != nil {
			return nil, err
		}
		records = append(records, rec)
	}
	p := &parsed{docInfo: docInfo{fileType: "csv"}}
	if len(records) == 0 {
		p.summary = "Empty CSV file"
		p.pages = []dpekit.Page{{Title: "Empty"}}
		return p, nil
	}
	headers, data := records[0], records[1:]
	width := len(headers)
	for _, rec := range data {
		width = max(width, len(rec))
	}
	p.keywords = nonEmpty(headers, 10)
	p.summary = fmt.Sprintf("CSV table, %d rows × %d columns: %s", len(data), width, clip(strings.Join(headers, ", "), 150))
	n := ids{}
	per := rowsPerPage(width)
	for start := 0; start < len(data) || start == 0; start += per {
		end := min(start+per, len(data))
		rows := data[start:end]
		if rows == nil {
			rows = [][]string{}
		}
		title := fmt.Sprintf("Rows %d–%d of %d", start+1, end, len(data))
		if len(data) == 0 {
			title = "Headers only"
		}
		content := map[string]any{
			"headers":       headers,
			"rows":          rows,
			"total_rows":    len(rows),
			"total_columns": width,
		}
		first := start + 2 // spreadsheet row of the first data row (row 1 holds the headers)
		meta := map[string]any{"first_row": start + 1, "last_row": end, "rows_in_file": len(data)}
		if r.Comma != ',' {
			meta["delimiter"] = string(r.Comma)
		}
		if len(rows) > 0 {
			meta["source_range"] = fmt.Sprintf("%s:%s", cellName(1, first), cellName(width, first+len(rows)-1))
		}
		e := n.element(protocol.DPEElementCategoryTable, title+": "+strings.Join(headers, ", "), content)
		e.Metadata = meta
		p.pages = append(p.pages, dpekit.Page{Title: title, Elements: []protocol.DPEElement{e}})
		if len(data) == 0 {
			break
		}
	}
	return p, nil
}

// sniffLines is how many records sniffDelimiter reads per candidate.
const sniffLines = 20

// sniffDelimiter picks the field delimiter of a CSV file: of comma,
// semicolon, tab and pipe, the one that splits the first records into the
// same number of fields (more than one), preferring more fields; comma when
// none does. A European spreadsheet export ("a;b;1,5") thus splits on
// semicolons, and a comma inside quotes never counts.
func sniffDelimiter(src []byte) rune {
	head := src[:min(len(src), 64<<10)]
	if i := bytes.LastIndexByte(head, '\n'); i > 0 && len(head) < len(src) {
		head = head[:i+1] // whole lines only
	}
	best, bestFields := ',', 1
	for _, d := range []rune{',', ';', '\t', '|'} {
		r := csv.NewReader(bytes.NewReader(head))
		r.Comma = d
		r.FieldsPerRecord = -1
		r.LazyQuotes = true
		fields, consistent, n := 0, true, 0
		for n < sniffLines {
			rec, err := r.Read()
			if err != nil {
				consistent = consistent && errors.Is(err, io.EOF)
				break
			}
			if n == 0 {
				fields = len(rec)
			} else if len(rec) != fields {
				consistent = false
				break
			}
			n++
		}
		if consistent && n > 0 && fields > bestFields {
			best, bestFields = d, fields
		}
	}
	return best
}

func cellName(col, row int) string {
	s, err := excelize.CoordinatesToCellName(max(col, 1), max(row, 1))
	if err != nil {
		return ""
	}
	return s
}

func nonEmpty(ss []string, n int) []string {
	var out []string
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" && len(out) < n {
			out = append(out, s)
		}
	}
	return out
}
