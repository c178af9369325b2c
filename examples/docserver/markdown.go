package docserver

import (
	"fmt"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"go.abhg.dev/goldmark/frontmatter"

	"github.com/a2c-smcp/smcp-go/dpekit"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// markdownParser parses CommonMark with GitHub's extensions (tables,
// strikethrough, task lists, autolinks), footnotes, and YAML or TOML front
// matter. A goldmark parser is safe for concurrent use.
var markdownParser = goldmark.New(goldmark.WithExtensions(extension.GFM, extension.Footnote, &frontmatter.Extender{})).Parser()

// frontMatter is what a document's front matter may say of it.
type frontMatter struct {
	title    string
	summary  string
	keywords []string
}

// readFrontMatter reads the title ("title"), summary ("description",
// "summary") and keywords ("keywords", "tags": a list or a comma-separated
// string) of the document's front matter; malformed front matter is
// ignored.
func readFrontMatter(pc parser.Context) (fm frontMatter) {
	d := frontmatter.Get(pc)
	if d == nil {
		return fm
	}
	var m map[string]any
	if d.Decode(&m) != nil {
		return fm
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := m[k].(string); ok && strings.TrimSpace(v) != "" {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	fm.title = oneLine(str("title"))
	fm.summary = clip(oneLine(str("description", "summary")), 200)
	for _, k := range []string{"keywords", "tags"} {
		switch v := m[k].(type) {
		case string:
			fm.keywords = append(fm.keywords, splitKeywords(v)...)
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					fm.keywords = append(fm.keywords, s)
				}
			}
		}
	}
	fm.keywords = nonEmpty(fm.keywords, 10)
	return fm
}

// parseMarkdown turns a Markdown file into pages, one per top-level section.
//
// The top level is the shallowest heading level, except when the document
// opens with a single heading of that level (its title, "# Report") followed
// by deeper ones: then the sections are the next level ("## …"), the title
// names the document and the first page, and what comes before the first
// section (the introduction) is that first page. A section's heading becomes
// its page title; deeper headings are heading elements. Paragraphs are text
// elements followed by one link element per link and one image element per
// image they hold; lists, fenced or indented code, GFM tables, block quotes
// (as text) and thematic breaks (separators) map to their categories.
//
// Front matter is no content: its title, description and keywords or tags
// become the document's. Footnote references read "[1]" in the text, and
// the footnotes are an ordered list element at the end, in
// metadata {"footnotes": true}. An ordered list that does not start at 1
// says where it starts in content "start".
func parseMarkdown(src []byte, stem string) *parsed {
	pc := parser.NewContext()
	root := markdownParser.Parse(text.NewReader(src), parser.WithContext(pc))
	fm := readFrontMatter(pc)
	var blocks []ast.Node
	for c := root.FirstChild(); c != nil; c = c.NextSibling() {
		if c.Kind().String() == "frontmatter" {
			continue
		}
		blocks = append(blocks, c)
	}

	// Choose the section level.
	minLevel, atMin := 7, 0
	for _, b := range blocks {
		if h, ok := b.(*ast.Heading); ok {
			switch {
			case h.Level < minLevel:
				minLevel, atMin = h.Level, 1
			case h.Level == minLevel:
				atMin++
			}
		}
	}
	var titleHeading ast.Node
	split := minLevel
	if atMin == 1 && len(blocks) > 0 {
		if h, ok := blocks[0].(*ast.Heading); ok && h.Level == minLevel {
			next := 7
			for _, b := range blocks[1:] {
				if h2, ok := b.(*ast.Heading); ok && h2.Level < next {
					next = h2.Level
				}
			}
			if next < 7 {
				titleHeading, split = h, next
			}
		}
	}

	m := mdConverter{src: src, ids: ids{}}
	p := &parsed{docInfo: docInfo{title: stem}}
	if titleHeading != nil {
		p.title = oneLine(m.inline(titleHeading))
	}
	cur := dpekit.Page{Title: p.title}
	first := true
	for _, b := range blocks {
		if b == titleHeading {
			continue
		}
		if h, ok := b.(*ast.Heading); ok && h.Level == split {
			if !first || len(cur.Elements) > 0 {
				p.pages = append(p.pages, cur)
			}
			first = false
			title := oneLine(m.inline(h))
			cur = dpekit.Page{Title: title}
			if len(p.keywords) < 10 && title != "" {
				p.keywords = append(p.keywords, title)
			}
			continue
		}
		cur.Elements = append(cur.Elements, m.block(b)...)
	}
	p.pages = append(p.pages, cur)

	if fm.title != "" {
		p.title = fm.title
	}
	p.summary = fm.summary
	if len(fm.keywords) > 0 {
		p.keywords = nonEmpty(append(fm.keywords, p.keywords...), 10)
	}
	for _, pg := range p.pages {
		for _, e := range pg.Elements {
			if e.Category == protocol.DPEElementCategoryText && p.summary == "" {
				p.summary = clip(oneLine(e.Content["text"].(string)), 200)
			}
		}
	}
	return p
}

type mdConverter struct {
	src []byte
	ids ids
}

func (m *mdConverter) block(n ast.Node) []protocol.DPEElement {
	switch b := n.(type) {
	case *ast.Heading:
		t := oneLine(m.inline(b))
		return []protocol.DPEElement{m.ids.element(protocol.DPEElementCategoryHeading, t, map[string]any{"level": b.Level, "text": t})}
	case *ast.Paragraph, *ast.TextBlock:
		return m.paragraph(b)
	case *ast.List:
		return m.list(b)
	case *ast.FencedCodeBlock:
		code := m.lines(b)
		c := map[string]any{"code": code}
		summary := fmt.Sprintf("Code (%d lines)", strings.Count(code, "\n")+1)
		if lang := string(b.Language(m.src)); lang != "" {
			c["language"] = lang
			summary = fmt.Sprintf("%s code (%d lines)", lang, strings.Count(code, "\n")+1)
		}
		return []protocol.DPEElement{m.ids.element(protocol.DPEElementCategoryCode, summary, c)}
	case *ast.CodeBlock:
		code := m.lines(b)
		return []protocol.DPEElement{m.ids.element(protocol.DPEElementCategoryCode,
			fmt.Sprintf("Code (%d lines)", strings.Count(code, "\n")+1), map[string]any{"code": code})}
	case *extast.Table:
		return []protocol.DPEElement{m.table(b)}
	case *ast.Blockquote:
		var parts []string
		for c := b.FirstChild(); c != nil; c = c.NextSibling() {
			if t := m.blockText(c); t != "" {
				parts = append(parts, t)
			}
		}
		t := strings.Join(parts, "\n\n")
		if t == "" {
			return nil
		}
		return []protocol.DPEElement{m.ids.element(protocol.DPEElementCategoryText, t, map[string]any{"text": t})}
	case *ast.ThematicBreak:
		return []protocol.DPEElement{m.ids.element(protocol.DPEElementCategorySeparator, "", map[string]any{})}
	case *extast.FootnoteList:
		var items []string
		for f := b.FirstChild(); f != nil; f = f.NextSibling() {
			items = append(items, m.itemText(f))
		}
		if len(items) == 0 {
			return nil
		}
		e := m.ids.element(protocol.DPEElementCategoryList, fmt.Sprintf("Footnotes (%d): %s", len(items), oneLine(items[0])),
			map[string]any{"ordered": true, "items": items})
		e.Metadata = map[string]any{"footnotes": true}
		return []protocol.DPEElement{e}
	case *ast.HTMLBlock:
		t := strings.TrimSpace(m.lines(b))
		if t == "" {
			return nil
		}
		return []protocol.DPEElement{m.ids.element(protocol.DPEElementCategoryText, t, map[string]any{"text": t})}
	}
	return nil
}

// paragraph is a text element (unless the paragraph is only images) then a
// link element per link and an image element per image.
func (m *mdConverter) paragraph(n ast.Node) []protocol.DPEElement {
	var out []protocol.DPEElement
	if t := strings.TrimSpace(m.inline(n)); t != "" {
		out = append(out, m.ids.element(protocol.DPEElementCategoryText, t, map[string]any{"text": t}))
	}
	return append(out, m.refs(n)...)
}

// refs returns the link and image elements of the inlines under n.
func (m *mdConverter) refs(n ast.Node) []protocol.DPEElement {
	var out []protocol.DPEElement
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch l := c.(type) {
		case *ast.Link:
			t := oneLine(m.inline(l))
			content := map[string]any{"text": t, "url": string(l.Destination)}
			if len(l.Title) > 0 {
				content["title"] = string(l.Title)
			}
			out = append(out, m.ids.element(protocol.DPEElementCategoryLink, t, content))
			return ast.WalkSkipChildren, nil
		case *ast.AutoLink:
			u := string(l.URL(m.src))
			out = append(out, m.ids.element(protocol.DPEElementCategoryLink, u, map[string]any{"text": string(l.Label(m.src)), "url": u}))
		case *ast.Image:
			alt := oneLine(m.inline(l))
			content := map[string]any{"alt": alt, "url": string(l.Destination)}
			if len(l.Title) > 0 {
				content["description"] = string(l.Title)
			}
			summary := alt
			if summary == "" {
				summary = string(l.Destination)
			}
			out = append(out, m.ids.element(protocol.DPEElementCategoryImage, summary, content))
			return ast.WalkSkipChildren, nil
		case *ast.List:
			if c != n {
				return ast.WalkSkipChildren, nil
			}
		}
		return ast.WalkContinue, nil
	})
	return out
}

func (m *mdConverter) list(l *ast.List) []protocol.DPEElement {
	var items []string
	for li := l.FirstChild(); li != nil; li = li.NextSibling() {
		items = append(items, m.itemText(li))
	}
	kind := "List"
	if l.IsOrdered() {
		kind = "Ordered list"
	}
	summary := fmt.Sprintf("%s of %d items", kind, len(items))
	if len(items) > 0 {
		summary += ": " + oneLine(items[0])
	}
	content := map[string]any{"ordered": l.IsOrdered(), "items": items}
	if l.IsOrdered() && l.Start != 1 {
		content["start"] = l.Start
		summary = fmt.Sprintf("%s of %d items from %d", kind, len(items), l.Start)
		if len(items) > 0 {
			summary += ": " + oneLine(items[0])
		}
	}
	out := []protocol.DPEElement{m.ids.element(protocol.DPEElementCategoryList, summary, content)}
	for li := l.FirstChild(); li != nil; li = li.NextSibling() {
		for c := li.FirstChild(); c != nil; c = c.NextSibling() {
			if _, nested := c.(*ast.List); !nested {
				out = append(out, m.refs(c)...)
			}
		}
	}
	return out
}

// itemText is a list item's text; a nested list follows on indented lines.
func (m *mdConverter) itemText(li ast.Node) string {
	var parts []string
	for c := li.FirstChild(); c != nil; c = c.NextSibling() {
		if sub, ok := c.(*ast.List); ok {
			i := sub.Start
			for s := sub.FirstChild(); s != nil; s = s.NextSibling() {
				marker := "- "
				if sub.IsOrdered() {
					marker = fmt.Sprintf("%d. ", i)
					i++
				}
				parts = append(parts, "  "+marker+strings.ReplaceAll(m.itemText(s), "\n", "\n  "))
			}
			continue
		}
		if t := m.blockText(c); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

// blockText is the plain text of a block.
func (m *mdConverter) blockText(n ast.Node) string {
	switch b := n.(type) {
	case *ast.Paragraph, *ast.TextBlock, *ast.Heading:
		return strings.TrimSpace(m.inline(b))
	case *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock:
		return strings.TrimRight(m.lines(b), "\n")
	case *ast.List:
		var parts []string
		for li := b.FirstChild(); li != nil; li = li.NextSibling() {
			parts = append(parts, "- "+m.itemText(li))
		}
		return strings.Join(parts, "\n")
	}
	var parts []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t := m.blockText(c); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

func (m *mdConverter) table(t *extast.Table) protocol.DPEElement {
	var headers []string
	rows := [][]string{}
	width := 0
	for r := t.FirstChild(); r != nil; r = r.NextSibling() {
		var cells []string
		for c := r.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, strings.TrimSpace(m.inline(c)))
		}
		width = max(width, len(cells))
		if _, ok := r.(*extast.TableHeader); ok {
			headers = cells
		} else {
			rows = append(rows, cells)
		}
	}
	content := map[string]any{"rows": rows, "total_rows": len(rows), "total_columns": width}
	summary := fmt.Sprintf("Table (%d rows × %d columns)", len(rows), width)
	if headers != nil {
		content["headers"] = headers
		summary += ": " + strings.Join(headers, ", ")
	}
	return m.ids.element(protocol.DPEElementCategoryTable, summary, content)
}

// lines joins the raw lines of a code or HTML block.
func (m *mdConverter) lines(n ast.Node) string {
	var b strings.Builder
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(m.src))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// inline is the plain text of n's inline children: emphasis and code spans
// lose their markers, links keep their text, images are left out (they
// become image elements), soft line breaks become spaces.
func (m *mdConverter) inline(n ast.Node) string {
	var b strings.Builder
	m.writeInline(&b, n)
	return b.String()
}

func (m *mdConverter) writeInline(b *strings.Builder, n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(m.src))
			switch {
			case t.HardLineBreak():
				b.WriteByte('\n')
			case t.SoftLineBreak():
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(t.Value)
		case *ast.AutoLink:
			b.Write(t.Label(m.src))
		case *extast.FootnoteLink:
			fmt.Fprintf(b, "[%d]", t.Index)
		case *ast.Image, *ast.RawHTML, *extast.FootnoteBacklink:
		case *extast.TaskCheckBox:
			if t.IsChecked {
				b.WriteString("[x] ")
			} else {
				b.WriteString("[ ] ")
			}
		default:
			m.writeInline(b, c)
		}
	}
}
