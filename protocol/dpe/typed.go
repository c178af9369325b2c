package dpe

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// Content is the typed content of the categories whose content has a
// shape (spec/finder.md, Element categories; schema/dpe_content_*.json):
// heading, text, list, code, table and pivot_table (TableContent), chart,
// image, link and formula.
type Content interface {
	protocol.HeadingContent | protocol.TextContent | protocol.ListContent | protocol.CodeContent |
		protocol.TableContent | protocol.ChartContent | protocol.ImageContent | protocol.LinkContent |
		protocol.FormulaContent
}

// ContentOf decodes the content of e into T, the typed content of its
// category, reading what a tolerant reader accepts (spec/finder.md,
// Reading the levels) and normalising it to the strict shape:
//
//   - where text is expected, a number or boolean is its JSON text and
//     null is absent (a table cell or list item that is null is "");
//   - a table cell that is a list or an object is its compact JSON;
//   - a heading level is any integer (the renderer clamps it to 1–6);
//   - a list item that is a list is written, as a nested Markdown list,
//     under the item before it; an object item is its "text" with its own
//     "items" nested under it (another object is its compact JSON) — so
//     that the typed content renders as the original does.
//
// Decoding reads the map directly: no JSON round trip. It fails with a
// *protocol.Error (400) naming the content's path when T is not the content
// of e's category, or when the content lacks what the category needs (a
// heading's text, a table's rows, a list's items, a code's code, a link's
// url, a formula's expression) or holds the wrong kind of value (rows that
// are not lists, a title that is an object, a level that is not an
// integer).
func ContentOf[T Content](e protocol.DPEElement) (T, error) {
	var out T
	want := contentCategory(any(out))
	if !want(e.Category) {
		return out, protocol.NewBadRequest("%s content is not the content of a %s element", typeName(any(out)), e.Category).
			With("category", string(e.Category))
	}
	v, err := decodeContent(e.Category, e.Content)
	if err != nil {
		return out, err
	}
	return v.(T), nil
}

// DecodeContent returns the typed content of e's category (a value of one
// of the Content types, as ContentOf decodes it), or e.Content itself for
// the categories without a shape (and unknown ones).
func DecodeContent(e protocol.DPEElement) (any, error) {
	if shapeOf(e.Category) == "" {
		return e.Content, nil
	}
	return decodeContent(e.Category, e.Content)
}

// NewElement builds an element of category cat whose content is c, without
// a JSON round trip; summary "" leaves the summary out. It fails (400) when
// c is not the content of cat (TableContent serves table and
// pivot_table). The content map holds the typed values ([]string,
// [][]string, int, bool), which the renderers and encoding/json read as
// they are.
func NewElement[T Content](id string, cat protocol.DPEElementCategory, summary string, c T) (protocol.DPEElement, error) {
	if !contentCategory(any(c))(cat) {
		return protocol.DPEElement{}, protocol.NewBadRequest("%s content is not the content of a %s element", typeName(any(c)), cat).
			With("category", string(cat))
	}
	e := protocol.DPEElement{ElementID: id, Category: cat, Content: contentMap(any(c))}
	e.Summary = summary
	return e, nil
}

// shapeOf names the shape of a category's content, "" for none.
func shapeOf(cat protocol.DPEElementCategory) string {
	switch cat {
	case protocol.DPEElementCategoryHeading, protocol.DPEElementCategoryText, protocol.DPEElementCategoryList,
		protocol.DPEElementCategoryCode, protocol.DPEElementCategoryChart, protocol.DPEElementCategoryImage,
		protocol.DPEElementCategoryLink, protocol.DPEElementCategoryFormula:
		return string(cat)
	case protocol.DPEElementCategoryTable, protocol.DPEElementCategoryPivotTable:
		return "table"
	}
	return ""
}

func contentCategory(v any) func(protocol.DPEElementCategory) bool {
	var shape string
	switch v.(type) {
	case protocol.HeadingContent:
		shape = "heading"
	case protocol.TextContent:
		shape = "text"
	case protocol.ListContent:
		shape = "list"
	case protocol.CodeContent:
		shape = "code"
	case protocol.TableContent:
		shape = "table"
	case protocol.ChartContent:
		shape = "chart"
	case protocol.ImageContent:
		shape = "image"
	case protocol.LinkContent:
		shape = "link"
	case protocol.FormulaContent:
		shape = "formula"
	}
	return func(cat protocol.DPEElementCategory) bool { return shapeOf(cat) == shape }
}

func typeName(v any) string { return strings.TrimPrefix(fmt.Sprintf("%T", v), "protocol.") }

// contentReader reads the fields of one content map, keeping the first
// problem.
type contentReader struct {
	m   map[string]any
	err error
}

func (r *contentReader) fail(path, format string, args ...any) {
	if r.err == nil {
		r.err = protocol.NewBadRequest("/content/"+path+": "+format, args...).With("path", "/content/"+path)
	}
}

// text reads an optional text field: a string, number or boolean; null or
// absent is nil.
func (r *contentReader) text(k string) *string {
	v, ok := r.m[k]
	if !ok || v == nil {
		return nil
	}
	s, ok := scalarText(v)
	if !ok {
		r.fail(k, "want text, got %s", kindOf(v))
		return nil
	}
	return &s
}

// str is text for a field whose type has no pointer: absent reads "".
func (r *contentReader) str(k string) string {
	if p := r.text(k); p != nil {
		return *p
	}
	return ""
}

// num is integer for a field whose type has no pointer: absent reads 0.
func (r *contentReader) num(k string) int {
	if p := r.integer(k); p != nil {
		return *p
	}
	return 0
}

// need reads a required text field.
func (r *contentReader) need(k string) string {
	p := r.text(k)
	if p == nil && r.err == nil {
		r.fail(k, "missing")
	}
	if p == nil {
		return ""
	}
	return *p
}

func (r *contentReader) integer(k string) *int {
	v, ok := r.m[k]
	if !ok || v == nil {
		return nil
	}
	if n, ok := contentInt(r.m, k); ok {
		return &n
	}
	if f, ok := v.(float64); ok && !math.IsInf(f, 0) && !math.IsNaN(f) && f == math.Trunc(f) {
		n := int(f)
		return &n
	}
	r.fail(k, "want an integer, got %s", kindOf(v))
	return nil
}

func (r *contentReader) boolean(k string) *bool {
	v, ok := r.m[k]
	if !ok || v == nil {
		return nil
	}
	b, ok := v.(bool)
	if !ok {
		r.fail(k, "want a boolean, got %s", kindOf(v))
		return nil
	}
	return &b
}

// scalarText is the text of a string, number or boolean.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case float64, bool, int, int64, int32, json.Number:
		return scalar(x), true
	}
	return "", false
}

// cellText is a table cell or header: a scalar's text, null "", a list or
// object its compact JSON.
func cellText(v any) string { return scalar(v) }

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int, int64, int32, json.Number:
		return "a number"
	case []any, []string, [][]string:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// decodeContent decodes c for category cat into its typed content.
func decodeContent(cat protocol.DPEElementCategory, c map[string]any) (any, error) {
	if c == nil {
		return nil, protocol.NewBadRequest("/content: missing").With("path", "/content")
	}
	r := &contentReader{m: c}
	var out any
	switch shapeOf(cat) {
	case "heading":
		out = protocol.HeadingContent{Text: r.need("text"), Level: r.num("level")}
	case "text":
		out = protocol.TextContent{Text: r.need("text")}
	case "code":
		out = protocol.CodeContent{Code: r.need("code"), Language: r.str("language")}
	case "chart":
		out = protocol.ChartContent{ChartType: r.str("chart_type"), Title: r.str("title"), DataSummary: r.str("data_summary")}
	case "image":
		out = protocol.ImageContent{Alt: r.str("alt"), URL: r.str("url"), Description: r.str("description")}
	case "link":
		out = protocol.LinkContent{URL: r.need("url"), Text: r.str("text")}
	case "formula":
		out = protocol.FormulaContent{Expression: r.need("expression"), Value: r.str("value")}
	case "table":
		out = r.table()
	case "list":
		out = r.list()
	default:
		return nil, protocol.NewBadRequest("category %q has no typed content", cat).With("category", string(cat))
	}
	if r.err != nil {
		return nil, r.err
	}
	return out, nil
}

func (r *contentReader) table() protocol.TableContent {
	t := protocol.TableContent{TotalRows: r.integer("total_rows"), TotalColumns: r.integer("total_columns")}
	if h, ok := r.m["headers"]; ok && h != nil {
		n := listLen(h)
		if n < 0 {
			r.fail("headers", "want a list, got %s", kindOf(h))
		}
		t.Headers = make([]string, max(n, 0))
		for j := range t.Headers {
			t.Headers[j] = cellText(listValue(h, j))
		}
	}
	rows, ok := r.m["rows"]
	switch x := rows.(type) {
	case [][]string:
		t.Rows = x
		return t
	case []any:
		t.Rows = make([][]string, len(x))
		for i, row := range x {
			n := listLen(row)
			if n < 0 {
				r.fail(fmt.Sprintf("rows/%d", i), "want a list of cells, got %s", kindOf(row))
				continue
			}
			cells := make([]string, n)
			for j := range cells {
				cells[j] = cellText(listValue(row, j))
			}
			t.Rows[i] = cells
		}
		return t
	}
	if !ok || rows == nil {
		r.fail("rows", "missing")
	} else {
		r.fail("rows", "want a list of rows, got %s", kindOf(rows))
	}
	return t
}

func (r *contentReader) list() protocol.ListContent {
	l := protocol.ListContent{Ordered: r.boolean("ordered")}
	items, ok := r.m["items"]
	n := listLen(items)
	if n < 0 {
		if !ok || items == nil {
			r.fail("items", "missing")
		} else {
			r.fail("items", "want a list, got %s", kindOf(items))
		}
		return l
	}
	ordered := l.Ordered != nil && *l.Ordered
	l.Items = make([]string, 0, n)
	for i := 0; i < n; i++ {
		item := listValue(items, i)
		if listLen(item) >= 0 {
			// A nested list belongs to the item before it.
			var b strings.Builder
			writeList(&b, item, ordered, 0, 1)
			if b.Len() == 0 {
				continue
			}
			if len(l.Items) == 0 {
				l.Items = append(l.Items, "")
			}
			last := &l.Items[len(l.Items)-1]
			*last += "\n" + b.String()
			continue
		}
		var b strings.Builder
		writeList(&b, []any{item}, ordered, 0, 1)
		// writeList wrote a marker and the item: keep the item, its
		// continuation lines unindented.
		mark := "- "
		if ordered {
			mark = "1. "
		}
		s := strings.TrimPrefix(b.String(), mark)
		s = strings.ReplaceAll(s, "\n"+strings.Repeat(" ", len(mark)), "\n")
		l.Items = append(l.Items, s)
	}
	return l
}

// contentMap turns typed content into a content map, without JSON.
func contentMap(v any) map[string]any {
	m := map[string]any{}
	// The generated types' optional strings and the heading level are
	// plain values whose zero means absent (spec/decisions.md, Schemas).
	put := func(k string, v string) {
		if v != "" {
			m[k] = v
		}
	}
	putLevel := func(k string, v int) {
		if v != 0 {
			m[k] = v
		}
	}
	putInt := func(k string, p *int) {
		if p != nil {
			m[k] = *p
		}
	}
	switch c := v.(type) {
	case protocol.HeadingContent:
		m["text"] = c.Text
		putLevel("level", c.Level)
	case protocol.TextContent:
		m["text"] = c.Text
	case protocol.CodeContent:
		m["code"] = c.Code
		put("language", c.Language)
	case protocol.ChartContent:
		put("chart_type", c.ChartType)
		put("title", c.Title)
		put("data_summary", c.DataSummary)
	case protocol.ImageContent:
		put("alt", c.Alt)
		put("url", c.URL)
		put("description", c.Description)
	case protocol.LinkContent:
		m["url"] = c.URL
		put("text", c.Text)
	case protocol.FormulaContent:
		m["expression"] = c.Expression
		put("value", c.Value)
	case protocol.TableContent:
		rows := c.Rows
		if rows == nil {
			rows = [][]string{}
		}
		m["rows"] = rows
		if c.Headers != nil {
			m["headers"] = c.Headers
		}
		putInt("total_rows", c.TotalRows)
		putInt("total_columns", c.TotalColumns)
	case protocol.ListContent:
		items := c.Items
		if items == nil {
			items = []string{}
		}
		m["items"] = items
		if c.Ordered != nil {
			m["ordered"] = *c.Ordered
		}
	}
	return m
}
