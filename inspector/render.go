package inspector

import (
	"bytes"
	"html"
	"regexp"
	"sync"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// maxMarkdown bounds the Markdown rendered in one answer: a page or an
// element larger than this is cut (and says so) rather than held whole.
const maxMarkdown = 4 << 20

// markdown renders the Markdown of the Finder (spec/finder.md, Markdown
// rendering: GitHub-flavoured tables) to HTML. Raw HTML in the source is
// not passed through (goldmark's default): it shows as text.
var markdown = goldmark.New(goldmark.WithExtensions(
	extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
	extension.Strikethrough))

// policy is the sanitiser every rendered page goes through: the elements
// Markdown produces (headings, lists, tables, code, links, emphasis), with
// no script, no style, no event handler, no iframe, and links limited to
// http, https and mailto. Images are dropped: a document must not make the
// browser fetch anything.
var policy = sync.OnceValue(func() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements("p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6",
		"ul", "ol", "li", "blockquote", "pre", "code", "em", "strong", "del", "s",
		"table", "thead", "tbody", "tr", "th", "td")
	p.AllowAttrs("align").Matching(regexp.MustCompile(`^(left|right|center)$`)).OnElements("th", "td")
	p.AllowAttrs("start").Matching(bluemonday.Integer).OnElements("ol")
	p.AllowAttrs("class").Matching(bluemonday.SpaceSeparatedTokens).OnElements("code")
	p.AllowAttrs("href").OnElements("a")
	p.AllowURLSchemes("http", "https", "mailto")
	p.RequireParseableURLs(true)
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return p
})

// renderMarkdown turns untrusted Markdown into sanitised HTML.
func renderMarkdown(src string) string {
	if len(src) > maxMarkdown {
		src = src[:maxMarkdown] + "\n\n… (cut at 4 MiB)"
	}
	var buf bytes.Buffer
	if err := markdown.Convert([]byte(src), &buf); err != nil {
		// goldmark fails only on a failing writer; keep the text.
		return "<pre>" + html.EscapeString(src) + "</pre>"
	}
	return string(policy().SanitizeBytes(buf.Bytes()))
}
