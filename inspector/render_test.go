package inspector

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// scriptable lists what in a parsed HTML fragment could run a script or
// fetch something: script-like elements, event handler attributes, and
// URLs with a scheme other than http, https or mailto.
func scriptable(t *testing.T, fragment string) []string {
	t.Helper()
	nodes, err := html.ParseFragment(strings.NewReader(fragment), &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div})
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "style", "iframe", "object", "embed", "svg", "math", "img", "form", "input", "link", "meta", "base":
				bad = append(bad, "<"+n.Data+">")
			}
			for _, a := range n.Attr {
				k := strings.ToLower(a.Key)
				v := strings.ToLower(strings.TrimSpace(a.Val))
				if strings.HasPrefix(k, "on") || k == "style" || k == "src" || k == "srcset" {
					bad = append(bad, n.Data+"@"+k)
				}
				if (k == "href" || k == "action" || k == "formaction") && !(strings.HasPrefix(v, "http:") || strings.HasPrefix(v, "https:") || strings.HasPrefix(v, "mailto:") || strings.HasPrefix(v, "#") || strings.HasPrefix(v, "/")) {
					bad = append(bad, n.Data+"@"+k+"="+v)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	return bad
}

// Everything a document holds is untrusted: Markdown with raw HTML, links
// with script URLs, tables with handlers. What reaches the page has no way
// to run a script.
func TestRenderMarkdownIsSafe(t *testing.T) {
	attacks := []string{
		`<script>alert(1)</script>`,
		`# Title <script>alert(1)</script>`,
		`<img src=x onerror=alert(1)>`,
		`[x](javascript:alert(1))`,
		`[x](JaVaScRiPt:alert(1))`,
		`[x](  javascript:alert(1))`,
		`[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)`,
		`[x](vbscript:msgbox(1))`,
		`![x](javascript:alert(1))`,
		`![x](http://example.com/track.png)`,
		"| a | b |\n|---|---|\n| <b onmouseover=alert(1)>x</b> | <iframe src=javascript:alert(1)></iframe> |",
		`<svg onload=alert(1)>`,
		`<a href="javascript:alert(1)">x</a>`,
		`<div style="background:url(javascript:alert(1))">x</div>`,
		"```html\n<script>alert(1)</script>\n```",
		`<details open ontoggle=alert(1)>`,
		`<form action="javascript:alert(1)"><input type=submit></form>`,
		`<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`,
		`[a](<javascript:alert(1)>)`,
		"<scr<script>ipt>alert(1)</script>",
	}
	for _, src := range attacks {
		out := renderMarkdown(src)
		assert.Empty(t, scriptable(t, out), "Markdown %q rendered as %q", src, out)
	}
}

// The sanitiser is a second line behind goldmark, which already drops raw
// HTML: fed HTML directly, it keeps the structure and drops the rest.
func TestPolicyCleansHTML(t *testing.T) {
	in := `<h2 onclick="x()">T</h2><table><tr><th align="right" onmouseover="x()">h</th></tr></table>` +
		`<a href="https://example.com/a" onclick="x()">ok</a><a href="javascript:x()">bad</a>` +
		`<script>x()</script><img src=x onerror=x()><p style="color:red">p</p>`
	out := policy().Sanitize(in)
	assert.Empty(t, scriptable(t, out), out)
	assert.Contains(t, out, `<th align="right">h</th>`)
	assert.Contains(t, out, `href="https://example.com/a"`)
	assert.Contains(t, out, `rel="noreferrer noopener" target="_blank"`)
	assert.Contains(t, out, "<p>p</p>")
}

// The Markdown of the Finder renders: tables, lists, code.
func TestRenderMarkdown(t *testing.T) {
	out := renderMarkdown("## Sales\n\n| Region | Q3 |\n|---|---:|\n| North | 455 |\n\n- one\n- two\n\n```go\nx := 1 < 2\n```\n")
	assert.Contains(t, out, "<h2>Sales</h2>")
	assert.Contains(t, out, "<th>Region</th>")
	assert.Contains(t, out, `<td align="right">455</td>`)
	assert.Contains(t, out, "<li>one</li>")
	assert.Contains(t, out, `<code class="language-go">x := 1 &lt; 2`)
}

// A huge page is cut, not held whole.
func TestRenderMarkdownIsBounded(t *testing.T) {
	out := renderMarkdown(strings.Repeat("a", maxMarkdown+100))
	assert.Less(t, len(out), maxMarkdown+200)
	assert.Contains(t, out, "cut at 4 MiB")
}
