package docserver

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"path"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// xlsxChart is what a chart element tells of one chart of a worksheet.
type xlsxChart struct {
	kind   string   // "bar", "line", "pie", …
	title  string   // the chart's own title, if any
	series []string // series names
	refs   []string // the cell ranges the series read, such as "Sales!$B$2:$B$5"
}

func (c xlsxChart) element(n ids, sheet string) protocol.DPEElement {
	content := map[string]any{"chart_type": c.kind}
	if c.title != "" {
		content["title"] = c.title
	}
	var parts []string
	if len(c.series) > 0 {
		parts = append(parts, fmt.Sprintf("%d series: %s", len(c.series), strings.Join(c.series, ", ")))
	}
	if len(c.refs) > 0 {
		parts = append(parts, "data from "+strings.Join(c.refs, ", "))
	}
	content["data_summary"] = strings.Join(parts, "; ")
	summary := strings.TrimSpace(c.kind + " chart " + c.title)
	e := n.element(protocol.DPEElementCategoryChart, summary, content)
	e.Metadata = map[string]any{"sheet": sheet}
	return e
}

// xlsxCharts finds the charts of each worksheet. excelize writes charts but
// does not read them, so the package's parts it holds are followed: workbook
// → sheet → drawing → chart relationships, then the chart part's plot type,
// title, series names and data references. A part that is missing or
// malformed yields no chart.
func xlsxCharts(f *excelize.File) map[string][]xlsxChart {
	part := func(name string) []byte {
		v, ok := f.Pkg.Load(strings.TrimPrefix(name, "/"))
		if !ok {
			return nil
		}
		b, _ := v.([]byte)
		return b
	}
	out := map[string][]xlsxChart{}
	var wb struct {
		Sheets []struct {
			Name string `xml:"name,attr"`
			RID  string `xml:"http://schemas.openxmlformats.org/officeDocument/2006/relationships id,attr"`
		} `xml:"sheets>sheet"`
	}
	if xml.Unmarshal(part("xl/workbook.xml"), &wb) != nil {
		return out
	}
	wbRels := rels(part, "xl/workbook.xml")
	for _, s := range wb.Sheets {
		sheetPart, ok := wbRels[s.RID]
		if !ok {
			continue
		}
		for _, drawing := range relsOfType(part, sheetPart, "/drawing") {
			for _, chart := range relsOfType(part, drawing, "/chart") {
				if c, ok := readChart(part(chart)); ok {
					out[s.Name] = append(out[s.Name], c)
				}
			}
		}
	}
	return out
}

type relationship struct {
	ID     string `xml:"Id,attr"`
	Type   string `xml:"Type,attr"`
	Target string `xml:"Target,attr"`
}

// relsFile is the relationships part of a package part ("xl/_rels/workbook.xml.rels").
func relsFile(name string) string {
	return path.Join(path.Dir(name), "_rels", path.Base(name)+".rels")
}

func readRels(part func(string) []byte, name string) []relationship {
	var r struct {
		Rels []relationship `xml:"Relationship"`
	}
	_ = xml.Unmarshal(part(relsFile(name)), &r)
	for i, rel := range r.Rels {
		if strings.HasPrefix(rel.Target, "/") {
			r.Rels[i].Target = strings.TrimPrefix(rel.Target, "/")
		} else {
			r.Rels[i].Target = path.Join(path.Dir(name), rel.Target)
		}
	}
	return r.Rels
}

// rels maps relationship ids of a part to their target parts.
func rels(part func(string) []byte, name string) map[string]string {
	out := map[string]string{}
	for _, r := range readRels(part, name) {
		out[r.ID] = r.Target
	}
	return out
}

// relsOfType lists the target parts of the relationships whose type ends
// with suffix ("/drawing", "/chart").
func relsOfType(part func(string) []byte, name, suffix string) []string {
	var out []string
	for _, r := range readRels(part, name) {
		if strings.HasSuffix(r.Type, suffix) {
			out = append(out, r.Target)
		}
	}
	return out
}

// readChart reads a DrawingML chart part: the first plot of its plot area
// (c:barChart → "bar"), the text of its title, and its series' names and
// value references.
func readChart(src []byte) (xlsxChart, bool) {
	if len(src) == 0 {
		return xlsxChart{}, false
	}
	var c xlsxChart
	d := xml.NewDecoder(bytes.NewReader(src))
	var stack []string
	var title strings.Builder
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			stack = append(stack, t.Name.Local)
			if len(stack) >= 2 && stack[len(stack)-2] == "plotArea" && strings.HasSuffix(t.Name.Local, "Chart") && c.kind == "" {
				c.kind = strings.TrimSuffix(t.Name.Local, "Chart")
			}
		case xml.EndElement:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case xml.CharData:
			text := strings.TrimSpace(string(t))
			if text == "" || len(stack) == 0 {
				continue
			}
			inside := func(names ...string) bool {
				i := 0
				for _, s := range stack {
					if i < len(names) && s == names[i] {
						i++
					}
				}
				return i == len(names)
			}
			leaf := stack[len(stack)-1]
			switch {
			case leaf == "t" && inside("chart", "title") && !inside("ser"):
				title.WriteString(text)
			case leaf == "v" && inside("ser", "tx"):
				c.series = append(c.series, text)
			case leaf == "f" && inside("ser", "val"):
				c.refs = append(c.refs, text)
			}
		}
	}
	if c.kind == "" {
		return xlsxChart{}, false
	}
	c.title = title.String()
	return c, true
}
