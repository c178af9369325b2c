package docserver

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func categoriesOf(p *parsed, page int) []string {
	var out []string
	for _, e := range p.pages[page].Elements {
		out = append(out, string(e.Category))
	}
	return out
}

func TestMarkdownSections(t *testing.T) {
	t.Run("no headings: one page titled by the file", func(t *testing.T) {
		p := parseMarkdown([]byte("Just text.\n\n- a\n- b\n"), "notes")
		require.Len(t, p.pages, 1)
		assert.Equal(t, "notes", p.title)
		assert.Equal(t, "notes", p.pages[0].Title)
		assert.Equal(t, []string{"text", "list"}, categoriesOf(p, 0))
		assert.Equal(t, "Just text.", p.summary)
	})
	t.Run("several top headings: one page each", func(t *testing.T) {
		p := parseMarkdown([]byte("# One\n\nA.\n\n## One.1\n\nB.\n\n# Two\n\nC.\n"), "doc")
		require.Len(t, p.pages, 2)
		assert.Equal(t, "doc", p.title)
		assert.Equal(t, []string{"One", "Two"}, []string{p.pages[0].Title, p.pages[1].Title})
		assert.Equal(t, []string{"text", "heading", "text"}, categoriesOf(p, 0))
		assert.Equal(t, map[string]any{"level": 2, "text": "One.1"}, p.pages[0].Elements[1].Content)
	})
	t.Run("title heading only: one page", func(t *testing.T) {
		p := parseMarkdown([]byte("# Title\n\nBody.\n"), "doc")
		require.Len(t, p.pages, 1)
		assert.Equal(t, "Title", p.pages[0].Title)
		assert.Equal(t, "doc", p.title, "a lone heading is a section, not a title over sections")
	})
	t.Run("title then sections; empty introduction dropped", func(t *testing.T) {
		p := parseMarkdown([]byte("# Title\n\n## A\n\nx\n\n## B\n\ny\n"), "doc")
		assert.Equal(t, "Title", p.title)
		require.Len(t, p.pages, 2)
		assert.Equal(t, "A", p.pages[0].Title)
	})
	t.Run("inline content", func(t *testing.T) {
		src := "# T\n\n## S\n\nSee **bold** and `code` at <https://a.example> and [b](https://b.example \"B\").\n\n" +
			"![pic](p.png \"A picture\")\n\n> quoted\n> text\n\n---\n\n- [x] done\n- item\n  1. sub one\n  2. sub two\n\nEnd.\n\n    indented code\n"
		p := parseMarkdown([]byte(src), "d")
		require.Len(t, p.pages, 1)
		els := p.pages[0].Elements
		assert.Equal(t, []string{"text", "link", "link", "image", "text", "separator", "list", "text", "code"}, categoriesOf(p, 0))
		assert.Equal(t, "See bold and code at https://a.example and b.", els[0].Content["text"])
		assert.Equal(t, map[string]any{"text": "https://a.example", "url": "https://a.example"}, els[1].Content)
		assert.Equal(t, map[string]any{"text": "b", "url": "https://b.example", "title": "B"}, els[2].Content)
		assert.Equal(t, map[string]any{"alt": "pic", "url": "p.png", "description": "A picture"}, els[3].Content)
		assert.Equal(t, "quoted text", els[4].Content["text"])
		assert.Equal(t, []string{"[x] done", "item\n  1. sub one\n  2. sub two"}, els[6].Content["items"])
		assert.Equal(t, false, els[6].Content["ordered"])
		assert.Equal(t, "indented code", els[8].Content["code"])
		ids := map[string]bool{}
		for _, e := range els {
			assert.False(t, ids[e.ElementID], "duplicate id %s", e.ElementID)
			ids[e.ElementID] = true
		}
	})
}

func TestCSVPages(t *testing.T) {
	p, err := parseCSV([]byte("a,b\n"), DefaultBudget.start(context.Background()))
	require.NoError(t, err)
	require.Len(t, p.pages, 1, "headers only: one page with an empty table")
	assert.Equal(t, "Headers only", p.pages[0].Title)
	assert.Equal(t, [][]string{}, p.pages[0].Elements[0].Content["rows"])

	p, err = parseCSV(nil, DefaultBudget.start(context.Background()))
	require.NoError(t, err)
	require.Len(t, p.pages, 1, "an empty file is one empty page, as an empty md or txt file is")
	assert.Empty(t, p.pages[0].Elements)

	p, err = parseCSV([]byte("a,b\n1\n2,3,4\n"), DefaultBudget.start(context.Background()))
	require.NoError(t, err)
	assert.Equal(t, 3, p.pages[0].Elements[0].Content["total_columns"], "ragged rows")

	var src []byte
	src = append(src, "n\n"...)
	for i := range 201 {
		src = append(src, []byte(string(rune('0'+i%10))+"\n")...)
	}
	p, err = parseCSV(src, DefaultBudget.start(context.Background()))
	require.NoError(t, err)
	require.Len(t, p.pages, 3)
	assert.Equal(t, "Rows 201–201 of 201", p.pages[2].Title)
	assert.Len(t, p.pages[1].Elements[0].Content["rows"], 100)
	assert.Equal(t, "A102:A201", p.pages[1].Elements[0].Metadata["source_range"])
}

// TestWideTablePages (issue 12, item 3): a page's cells are bounded, not
// only its rows: a 1,000-column table gets 20 rows a page.
func TestWideTablePages(t *testing.T) {
	var src []byte
	for r := range 301 {
		for c := range 1000 {
			if c > 0 {
				src = append(src, ',')
			}
			src = append(src, fmt.Sprintf("%d", r*c)...)
		}
		src = append(src, '\n')
	}
	p, err := parseCSV(src, DefaultBudget.start(context.Background()))
	require.NoError(t, err)
	require.Len(t, p.pages, 15)
	assert.Len(t, p.pages[0].Elements[0].Content["rows"], 20)
	assert.Equal(t, "Rows 281–300 of 300", p.pages[14].Title)
	assert.Equal(t, 100, rowsPerPage(7))
	assert.Equal(t, 1, rowsPerPage(16384))
}

func TestIgnored(t *testing.T) {
	for _, n := range []string{".git", ".hidden.md", "x.md~", "#x.md#", "a.swp", "dl.part"} {
		assert.True(t, ignored(n), n)
	}
	for _, n := range []string{"a.md", "notes", "x#y.md"} {
		assert.False(t, ignored(n), n)
	}
}
