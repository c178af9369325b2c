package dpe

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/internal/uriscan"
)

// mode selects Markdown or plain-text output (rules in the package doc).
type mode bool

const (
	markdown mode = true
	text     mode = false
)

// ElementMarkdown renders one element as Markdown (spec/finder.md, Markdown
// rendering).
func ElementMarkdown(e protocol.DPEElement) string {
	var b strings.Builder
	writeElement(&b, e.Category, e.Content, e.Summary, markdown)
	return b.String()
}

// ElementText renders one element as plain text.
func ElementText(e protocol.DPEElement) string {
	var b strings.Builder
	writeElement(&b, e.Category, e.Content, e.Summary, text)
	return b.String()
}

// PageMarkdown renders a Level-2 page: its title as a "# " heading (when it
// has one), then its elements, separated by blank lines. A page that already
// carries content_markdown (as a server sends it with format=markdown) is
// returned as that text.
func PageMarkdown(p protocol.DPEPage) string {
	if p.ContentMarkdown != nil {
		return *p.ContentMarkdown
	}
	return renderPage(p, markdown)
}

// PageText renders a Level-2 page as plain text: its title line, then its
// elements, separated by blank lines. A page that already carries
// content_text is returned as that text.
func PageText(p protocol.DPEPage) string {
	if p.ContentText != nil {
		return *p.ContentText
	}
	return renderPage(p, text)
}

func renderPage(p protocol.DPEPage, m mode) string {
	var b strings.Builder
	b.Grow(pageSizeHint(p))
	if p.Title != "" {
		if m == markdown {
			b.WriteString("# ")
		}
		writeOneLine(&b, p.Title)
	}
	for _, e := range p.Elements {
		if rendersEmpty(e.Category, e.Content) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		writeElement(&b, e.Category, e.Content, e.Summary, m)
	}
	return b.String()
}

// rendersEmpty reports whether an element renders to nothing: only a text
// element with no text does.
func rendersEmpty(cat protocol.DPEElementCategory, c map[string]any) bool {
	if cat != protocol.DPEElementCategoryText {
		return false
	}
	t, ok := contentString(c, "text")
	return ok && strings.Trim(t, "\r\n") == ""
}

// pageSizeHint estimates the rendered size to size the buffer once.
func pageSizeHint(p protocol.DPEPage) int {
	n := 64
	for _, e := range p.Elements {
		n += 32
		if rows, ok := e.Content["rows"].([]any); ok {
			n += len(rows) * 48
		}
		if s, ok := e.Content["text"].(string); ok {
			n += len(s)
		}
		if s, ok := e.Content["code"].(string); ok {
			n += len(s) + 16
		}
	}
	return n
}

// ElementDetailMarkdown renders a Level-3 element: a list of where it lives
// (element_id, category, doc_ref, page_index, uri, summary, then each
// metadata entry sorted by key), a blank line, then the element rendered as
// by ElementMarkdown. A detail that already carries content_markdown is
// returned as that text.
func ElementDetailMarkdown(e protocol.DPEElementDetail) string {
	if e.ContentMarkdown != "" {
		return e.ContentMarkdown
	}
	return renderDetail(e, markdown)
}

// ElementDetailText is ElementDetailMarkdown in plain text ("key: value"
// lines instead of a list).
func ElementDetailText(e protocol.DPEElementDetail) string {
	if e.ContentText != "" {
		return e.ContentText
	}
	return renderDetail(e, text)
}

func renderDetail(e protocol.DPEElementDetail, m mode) string {
	var b strings.Builder
	field(&b, m, "element_id", e.ElementID)
	field(&b, m, "category", string(e.Category))
	if e.DocRef != "" {
		field(&b, m, "doc_ref", e.DocRef)
	}
	if e.PageIndex != nil {
		field(&b, m, "page_index", strconv.Itoa(*e.PageIndex))
	}
	if e.URI != "" {
		field(&b, m, "uri", e.URI)
	}
	if e.Summary != "" {
		field(&b, m, "summary", e.Summary)
	}
	for _, k := range slices.Sorted(maps.Keys(e.Metadata)) {
		field(&b, m, "metadata."+k, scalar(e.Metadata[k]))
	}
	if rendersEmpty(e.Category, e.Content) {
		return strings.TrimRight(b.String(), "\n")
	}
	b.WriteByte('\n')
	writeElement(&b, e.Category, e.Content, e.Summary, m)
	return b.String()
}

// DocumentMarkdown renders a Level-1 document: its title as a "# " heading
// (the doc_ref when untitled), a list of its metadata (doc_ref, uri,
// file_type, file_uri, page_count, keywords, summary, last_modified), and,
// when the document carries a page index (depth=pages), a "## Pages" section
// with the window line (page_offset, page_limit, page_total) and a table of
// page_index, title, element_count and uri. A document that already carries
// content_markdown is returned as that text.
func DocumentMarkdown(d protocol.DPEDocument) string {
	if d.ContentMarkdown != "" {
		return d.ContentMarkdown
	}
	return renderDocument(d, markdown)
}

// DocumentText is DocumentMarkdown in plain text: the title line, "key:
// value" lines, and the page index as tab-separated lines under a header line.
func DocumentText(d protocol.DPEDocument) string {
	if d.ContentText != "" {
		return d.ContentText
	}
	return renderDocument(d, text)
}

func renderDocument(d protocol.DPEDocument, m mode) string {
	var b strings.Builder
	title := d.Title
	if title == "" {
		title = d.DocRef
	}
	if m == markdown {
		b.WriteString("# ")
	}
	writeOneLine(&b, title)
	b.WriteString("\n\n")
	field(&b, m, "doc_ref", d.DocRef)
	field(&b, m, "uri", d.URI)
	field(&b, m, "file_type", d.FileType)
	field(&b, m, "file_uri", d.FileURI)
	field(&b, m, "page_count", strconv.Itoa(d.PageCount))
	if len(d.Keywords) > 0 {
		field(&b, m, "keywords", strings.Join(d.Keywords, ", "))
	}
	if d.Summary != "" {
		field(&b, m, "summary", d.Summary)
	}
	if d.LastModified != "" {
		field(&b, m, "last_modified", d.LastModified)
	}
	if len(d.Pages) == 0 && d.PageTotal == nil && d.PageOffset == nil {
		return strings.TrimRight(b.String(), "\n")
	}
	if m == markdown {
		b.WriteString("\n## Pages\n\n")
	} else {
		b.WriteString("\nPages\n")
	}
	var window []string
	if d.PageOffset != nil {
		window = append(window, "page_offset: "+strconv.Itoa(*d.PageOffset))
	}
	if d.PageLimit != 0 {
		window = append(window, "page_limit: "+strconv.Itoa(d.PageLimit))
	}
	if d.PageTotal != nil {
		window = append(window, "page_total: "+strconv.Itoa(*d.PageTotal))
	}
	if len(window) > 0 {
		b.WriteString(strings.Join(window, ", "))
		if m == markdown {
			b.WriteString("\n\n")
		} else {
			b.WriteByte('\n')
		}
	}
	if len(d.Pages) == 0 {
		return strings.TrimRight(b.String(), "\n")
	}
	headers := []string{"page_index", "title", "element_count", "uri"}
	rows := make([][]string, len(d.Pages))
	for i, p := range d.Pages {
		rows[i] = []string{strconv.Itoa(p.PageIndex), p.Title, strconv.Itoa(p.ElementCount), p.URI}
	}
	writeTable(&b, headers, tableRows{s: rows}, m)
	return b.String()
}

// CatalogMarkdown renders a Level-0 catalog: a "# Documents (N)" heading
// ("(N of TOTAL)" when total_count is larger than the list), then one line
// per document: "- [{title}]({uri}) — {file_type}, {page_count} pages". A
// catalog that already carries content_markdown is returned as that text.
func CatalogMarkdown(c protocol.DPECatalog) string {
	if c.ContentMarkdown != "" {
		return c.ContentMarkdown
	}
	return renderCatalog(c, markdown)
}

// CatalogText renders a Level-0 catalog as plain text: a "Documents (N)"
// line, then one tab-separated line per document (uri, title, file_type,
// page_count) under a header line.
func CatalogText(c protocol.DPECatalog) string {
	if c.ContentText != "" {
		return c.ContentText
	}
	return renderCatalog(c, text)
}

func renderCatalog(c protocol.DPECatalog, m mode) string {
	var b strings.Builder
	if m == markdown {
		b.WriteString("# ")
	}
	b.WriteString("Documents (")
	b.WriteString(strconv.Itoa(len(c.Documents)))
	if c.TotalCount > len(c.Documents) {
		b.WriteString(" of ")
		b.WriteString(strconv.Itoa(c.TotalCount))
	}
	b.WriteByte(')')
	if len(c.Documents) == 0 {
		return b.String()
	}
	if m == text {
		b.WriteString("\nuri\ttitle\tfile_type\tpage_count")
		for _, d := range c.Documents {
			b.WriteByte('\n')
			writeTSVCell(&b, d.URI)
			b.WriteByte('\t')
			writeTSVCell(&b, d.Title)
			b.WriteByte('\t')
			writeTSVCell(&b, d.FileType)
			b.WriteByte('\t')
			b.WriteString(strconv.Itoa(d.PageCount))
		}
		return b.String()
	}
	b.WriteByte('\n')
	for _, d := range c.Documents {
		b.WriteString("\n- ")
		title := d.Title
		if title == "" {
			title = d.DocRef
		}
		writeLink(&b, title, d.URI)
		b.WriteString(" — ")
		if d.FileType != "" {
			writeOneLine(&b, d.FileType)
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(d.PageCount))
		if d.PageCount == 1 {
			b.WriteString(" page")
		} else {
			b.WriteString(" pages")
		}
	}
	return b.String()
}

// field writes "- key: value\n" (markdown) or "key: value\n" (text); line
// breaks in value become spaces.
func field(b *strings.Builder, m mode, key, value string) {
	if m == markdown {
		b.WriteString("- ")
	}
	b.WriteString(key)
	b.WriteString(": ")
	writeOneLine(b, value)
	b.WriteByte('\n')
}

// writeOneLine writes s with each line break (\r\n, \n, \r) replaced by a space.
func writeOneLine(b *strings.Builder, s string) {
	start := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\n' || c == '\r' {
			b.WriteString(s[start:i])
			b.WriteByte(' ')
			if c == '\r' && i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	b.WriteString(s[start:])
}

func writeElement(b *strings.Builder, cat protocol.DPEElementCategory, c map[string]any, summary string, m mode) {
	if !writeKnown(b, cat, c, summary, m) {
		writeOther(b, cat, summary)
	}
}

// writeOther writes "[{category}: {summary}]".
func writeOther(b *strings.Builder, cat protocol.DPEElementCategory, summary string) {
	b.WriteByte('[')
	writeOneLine(b, string(cat))
	b.WriteString(": ")
	writeOneLine(b, summary)
	b.WriteByte(']')
}

// field returns the text a template substitutes for content key k: a
// string as it is, a number or boolean in its JSON form, anything else
// (absent, null, an object, a list) as "" — the spec's templates are
// literal (spec/finder.md, Markdown rendering), so a missing field is
// written as nothing, never replaced by another.
func templateField(c map[string]any, k string) string {
	switch v := c[k].(type) {
	case nil, map[string]any, []any, []string:
		return ""
	default:
		return scalar(v)
	}
}

// writeKnown renders the categories with a dedicated rule; false means "use
// the generic rule" (another category, or a table or list with nothing to
// lay out). It writes nothing when it returns false.
func writeKnown(b *strings.Builder, cat protocol.DPEElementCategory, c map[string]any, summary string, m mode) bool {
	switch cat {
	case protocol.DPEElementCategoryHeading:
		if m == markdown {
			level, ok := contentInt(c, "level")
			if !ok || level < 1 {
				level = 1
			}
			level = min(level, 6)
			b.WriteString("######"[:level])
			b.WriteByte(' ')
		}
		writeOneLine(b, templateField(c, "text"))
		return true

	case protocol.DPEElementCategoryText:
		b.WriteString(strings.Trim(templateField(c, "text"), "\r\n"))
		return true

	case protocol.DPEElementCategoryTable:
		headers, hok := c["headers"]
		if hok && headers != nil && listLen(headers) < 0 {
			return false
		}
		rows, ok := newTableRows(c["rows"])
		if !ok || rows.len() == 0 && listLen(headers) <= 0 {
			return false
		}
		writeTable(b, headers, rows, m)
		return true

	case protocol.DPEElementCategoryList:
		items := c["items"]
		if listLen(items) <= 0 {
			return false
		}
		ordered, _ := contentBool(c, "ordered")
		writeList(b, items, ordered, 0, 0)
		return true

	case protocol.DPEElementCategoryCode:
		code := templateField(c, "code")
		code = strings.TrimSuffix(strings.TrimSuffix(code, "\n"), "\r")
		if m == text {
			b.WriteString(code)
			return true
		}
		fence := max(3, longestRun(code, '`')+1)
		writeRepeat(b, '`', fence)
		writeOneLine(b, strings.ReplaceAll(templateField(c, "language"), "`", ""))
		b.WriteByte('\n')
		if code != "" {
			b.WriteString(code)
			b.WriteByte('\n')
		}
		writeRepeat(b, '`', fence)
		return true

	case protocol.DPEElementCategoryChart:
		b.WriteString("[图表: ")
		writeOneLine(b, templateField(c, "title"))
		b.WriteString("] ")
		b.WriteString(templateField(c, "data_summary"))
		return true

	case protocol.DPEElementCategoryImage:
		url := templateField(c, "url")
		if url != "" {
			alt := templateField(c, "alt")
			if m == markdown {
				b.WriteByte('!')
				writeLink(b, alt, url)
				return true
			}
			b.WriteString("[图片: ")
			writeOneLine(b, alt)
			b.WriteString("] ")
			b.WriteString(url)
			return true
		}
		b.WriteString("[图片: ")
		writeOneLine(b, templateField(c, "description"))
		b.WriteByte(']')
		return true

	case protocol.DPEElementCategoryLink:
		url, t := templateField(c, "url"), templateField(c, "text")
		if m == markdown {
			writeLink(b, t, url)
			return true
		}
		switch {
		case t != "" && url != "" && t != url:
			writeOneLine(b, t)
			b.WriteString(" (")
			b.WriteString(url)
			b.WriteByte(')')
		case url != "":
			b.WriteString(url)
		default:
			writeOneLine(b, t)
		}
		return true

	case protocol.DPEElementCategoryFormula:
		expr := templateField(c, "expression")
		if m == markdown {
			b.WriteString("$ ")
			b.WriteString(expr)
			b.WriteString(" $")
			return true
		}
		b.WriteString(expr)
		return true
	}
	return false
}

// maxListDepth bounds the nesting a list renders; deeper items are written
// as compact JSON.
const maxListDepth = 8

// writeList writes the items of a list, one per line, "1. ", "2. ", … when
// ordered, "- " otherwise, indented by indent spaces (spec/finder.md,
// Markdown rendering). An item that is itself a list is a nested list
// under the item before it; an object item is its "text", followed by its
// own "items" as a nested list ("ordered" as in list content); another
// object is compact JSON; numbers, booleans and null are their JSON text
// ("" for null).
func writeList(b *strings.Builder, items any, ordered bool, indent, depth int) {
	n := listLen(items)
	num, lastWidth, wrote := 0, 2, false
	newLine := func() {
		if wrote {
			b.WriteByte('\n')
		}
		wrote = true
	}
	var mark [24]byte
	for i := 0; i < n; i++ {
		item := listValue(items, i)
		if k := listLen(item); k >= 0 && depth < maxListDepth {
			if k == 0 {
				continue
			}
			newLine()
			if num == 0 {
				// Nothing to hang it under: an empty item of its own.
				writeRepeat(b, ' ', indent)
				num, lastWidth = 1, 2
				if ordered {
					b.WriteString("1.\n")
					lastWidth = 3
				} else {
					b.WriteString("-\n")
				}
			}
			writeList(b, item, ordered, indent+lastWidth, depth+1)
			continue
		}
		newLine()
		writeRepeat(b, ' ', indent)
		num++
		width := 2
		if ordered {
			m := strconv.AppendInt(mark[:0], int64(num), 10)
			b.Write(m)
			b.WriteString(". ")
			width = len(m) + 2
		} else {
			b.WriteString("- ")
		}
		lastWidth = width
		obj, isObj := item.(map[string]any)
		_, hasText := obj["text"]
		sub, hasSub := obj["items"]
		if !isObj || depth >= maxListDepth || !hasText && !hasSub {
			writeIndented(b, strings.Trim(scalar(item), "\r\n"), indent+width)
			continue
		}
		writeIndented(b, strings.Trim(templateField(obj, "text"), "\r\n"), indent+width)
		if listLen(sub) > 0 {
			b.WriteByte('\n')
			subOrdered, ok := obj["ordered"].(bool)
			if !ok {
				subOrdered = ordered
			}
			writeList(b, sub, subOrdered, indent+width, depth+1)
		}
	}
}

// writeIndented writes s indenting every line after the first by width spaces.
func writeIndented(b *strings.Builder, s string, width int) {
	for {
		line, rest, more := strings.Cut(s, "\n")
		b.WriteString(line)
		if !more {
			return
		}
		b.WriteByte('\n')
		writeRepeat(b, ' ', width)
		s = rest
	}
}

func writeRepeat(b *strings.Builder, c byte, n int) {
	for range n {
		b.WriteByte(c)
	}
}

// longestRun returns the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// writeLink writes "[text](url)": '[', ']' and '\' in the text are
// backslash-escaped and line breaks become spaces; in the url, spaces,
// parentheses, '<', '>' and line breaks are percent-encoded.
func writeLink(b *strings.Builder, label, url string) {
	b.WriteByte('[')
	for i := 0; i < len(label); i++ {
		switch c := label[i]; c {
		case '[', ']', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteByte(' ')
		case '\r':
			if i+1 >= len(label) || label[i+1] != '\n' {
				b.WriteByte(' ')
			}
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString("](")
	for i := 0; i < len(url); i++ {
		switch c := url[i]; c {
		case ' ', '(', ')', '<', '>', '\n', '\r', '\t':
			b.WriteByte('%')
			b.WriteByte(uriscan.UpperHex[c>>4])
			b.WriteByte(uriscan.UpperHex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(')')
}

// writeTable writes a Markdown table or tab-separated lines.
func writeTable(b *strings.Builder, headers any, rows tableRows, m mode) {
	nh := max(listLen(headers), 0)
	if m == text {
		first := true
		if nh > 0 {
			for j := 0; j < nh; j++ {
				if j > 0 {
					b.WriteByte('\t')
				}
				writeTSVCell(b, listItem(headers, j))
			}
			first = false
		}
		for i := 0; i < rows.len(); i++ {
			if !first {
				b.WriteByte('\n')
			}
			first = false
			for j := 0; j < rows.width(i); j++ {
				if j > 0 {
					b.WriteByte('\t')
				}
				writeTSVCell(b, rows.cell(i, j))
			}
		}
		return
	}
	cols := nh
	for i := 0; i < rows.len(); i++ {
		cols = max(cols, rows.width(i))
	}
	b.WriteByte('|')
	for j := 0; j < cols; j++ {
		b.WriteByte(' ')
		if j < nh {
			writeMDCell(b, listItem(headers, j))
		}
		b.WriteString(" |")
	}
	b.WriteString("\n|")
	for j := 0; j < cols; j++ {
		b.WriteString(" --- |")
	}
	for i := 0; i < rows.len(); i++ {
		b.WriteString("\n|")
		w := rows.width(i)
		for j := 0; j < cols; j++ {
			b.WriteByte(' ')
			if j < w {
				writeMDCell(b, rows.cell(i, j))
			}
			b.WriteString(" |")
		}
	}
}

// writeMDCell writes a Markdown table cell: '|' becomes "\|", a line break
// "<br>".
func writeMDCell(b *strings.Builder, s string) {
	start := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '|':
			b.WriteString(s[start:i])
			b.WriteString(`\|`)
			start = i + 1
		case '\n', '\r':
			b.WriteString(s[start:i])
			b.WriteString("<br>")
			if c == '\r' && i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	b.WriteString(s[start:])
}

// writeTSVCell writes a tab-separated cell: tabs and line breaks become spaces.
func writeTSVCell(b *strings.Builder, s string) {
	start := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\t', '\n', '\r':
			b.WriteString(s[start:i])
			b.WriteByte(' ')
			if c == '\r' && i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	b.WriteString(s[start:])
}
