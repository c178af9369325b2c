package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/agent/internal/peer"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

const reportURI = "dpe://com.example.docs/rpt-2026"

func TestGetFinder(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	cases := []struct {
		name    string
		q       agent.FinderQuery
		wire    map[string]any // request fields besides agent, req_id, computer
		refs    []string
		total   int
		comment string
	}{
		{"defaults", agent.FinderQuery{}, map[string]any{}, []string{"rpt-2026", "contract-a1"}, 2, "zero values are not sent"},
		{"keywords", agent.FinderQuery{Keywords: []string{"CONTRACT", "nothing"}}, map[string]any{"keywords": []any{"CONTRACT", "nothing"}}, []string{"contract-a1"}, 1, ""},
		{"file type", agent.FinderQuery{FileType: "xlsx"}, map[string]any{"file_type": "xlsx"}, []string{"rpt-2026"}, 1, ""},
		{"offset and limit", agent.FinderQuery{Offset: 1, Limit: 1}, map[string]any{"offset": 1.0, "limit": 1.0}, []string{"contract-a1"}, 2, ""},
		{"offset past the end", agent.FinderQuery{Offset: 5}, map[string]any{"offset": 5.0}, []string{}, 2, ""},
		{"limit above the maximum asks for the maximum", agent.FinderQuery{Limit: 101}, map[string]any{"limit": 100.0}, []string{"rpt-2026", "contract-a1"}, 2, "spec/finder.md, Organizer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ret, err := c.GetFinder(ctxT(t), "alpha", tc.q)
			require.NoError(t, err)
			refs := []string{}
			for _, d := range ret.Documents {
				refs = append(refs, d.DocRef)
				require.Equal(t, "docs", d.Server)
			}
			require.Equal(t, tc.refs, refs)
			require.Equal(t, tc.total, ret.TotalCount)
			reqs := p.Received(protocol.EventGetFinder)
			got := reqs[len(reqs)-1].Payload
			require.Equal(t, "alpha", got["computer"])
			delete(got, "agent")
			delete(got, "req_id")
			delete(got, "computer")
			require.Equal(t, tc.wire, got, tc.comment)
		})
	}
}

// TestDocumentsIterator walks a 47-document catalog page by page.
func TestDocumentsIterator(t *testing.T) {
	p := startPeer(t)
	p.World.AddDocs("alpha", 45)
	c, _ := joined(t, p)
	before := p.Count(protocol.EventGetFinder)

	var refs []string
	for d, err := range c.Documents(ctxT(t), "alpha", agent.FinderQuery{Limit: 10}) {
		require.NoError(t, err)
		refs = append(refs, d.DocRef)
	}
	require.Len(t, refs, 47)
	require.Equal(t, "rpt-2026", refs[0])
	require.Equal(t, "doc-044", refs[46])
	require.Equal(t, 5, p.Count(protocol.EventGetFinder)-before, "ceil(47/10) pages")

	t.Run("default page size is 100", func(t *testing.T) {
		before := p.Count(protocol.EventGetFinder)
		n := 0
		for _, err := range c.Documents(ctxT(t), "alpha", agent.FinderQuery{}) {
			require.NoError(t, err)
			n++
		}
		require.Equal(t, 47, n)
		require.Equal(t, 1, p.Count(protocol.EventGetFinder)-before)
	})
	t.Run("filters and offset apply", func(t *testing.T) {
		var refs []string
		for d, err := range c.Documents(ctxT(t), "alpha", agent.FinderQuery{Keywords: []string{"generated"}, Offset: 40, Limit: 3}) {
			require.NoError(t, err)
			refs = append(refs, d.DocRef)
		}
		require.Equal(t, []string{"doc-040", "doc-041", "doc-042", "doc-043", "doc-044"}, refs)
	})
	t.Run("break stops paging", func(t *testing.T) {
		before := p.Count(protocol.EventGetFinder)
		for range c.Documents(ctxT(t), "alpha", agent.FinderQuery{Limit: 10}) {
			break
		}
		require.Equal(t, 1, p.Count(protocol.EventGetFinder)-before)
	})
	t.Run("an error ends the walk", func(t *testing.T) {
		calls := 0
		p.Handle(protocol.EventGetFinder, func(ctx context.Context, req map[string]any) peer.Reply {
			calls++
			if calls == 2 {
				return peer.Fail(protocol.CodeInternal, "organizer broke")
			}
			return peer.Answer(map[string]any{"documents": []any{doc(fmt.Sprint(calls))}, "total_count": 10, "req_id": req["req_id"]})
		})
		defer p.Handle(protocol.EventGetFinder, nil)
		var got []string
		var errs []error
		for d, err := range c.Documents(ctxT(t), "alpha", agent.FinderQuery{Limit: 1}) {
			if err != nil {
				errs = append(errs, err)
				continue
			}
			got = append(got, d.DocRef)
		}
		require.Equal(t, []string{"d1"}, got)
		require.Len(t, errs, 1)
		requireCode(t, errs[0], protocol.CodeInternal)
	})
	t.Run("an empty page ends the walk", func(t *testing.T) {
		p.Handle(protocol.EventGetFinder, func(ctx context.Context, req map[string]any) peer.Reply {
			return peer.Answer(map[string]any{"documents": []any{}, "total_count": 1000, "req_id": req["req_id"]})
		})
		defer p.Handle(protocol.EventGetFinder, nil)
		n := 0
		for _, err := range c.Documents(ctxT(t), "alpha", agent.FinderQuery{}) {
			require.NoError(t, err)
			n++
		}
		require.Zero(t, n)
	})
}

func doc(ref string) map[string]any {
	return map[string]any{"doc_ref": "d" + ref, "uri": "dpe://h/d" + ref, "file_uri": "file:///x", "file_type": "txt",
		"title": "t", "page_count": 1, "server": "s"}
}

func TestReadResource(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	contents, err := c.ReadResource(ctxT(t), "alpha", reportURI+"?depth=pages")
	require.NoError(t, err)
	require.Len(t, contents, 1)
	require.Equal(t, reportURI+"?depth=pages", contents[0].URI)
	require.Equal(t, "application/json", contents[0].MimeType)
	require.Contains(t, *contents[0].Text, `"pages"`)
	reqs := p.Received(protocol.EventReadResource)
	require.Equal(t, reportURI+"?depth=pages", reqs[len(reqs)-1].Payload["uri"])
}

// TestNavigation reads every level with every query option.
func TestNavigation(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	lastURI := func() string {
		reqs := p.Received(protocol.EventReadResource)
		return reqs[len(reqs)-1].Payload["uri"].(string)
	}

	t.Run("L0 catalog", func(t *testing.T) {
		cat, err := c.ReadCatalog(ctxT(t), "alpha", "dpe://com.example.docs", "")
		require.NoError(t, err)
		require.Equal(t, 2, cat.TotalCount)
		require.Equal(t, "rpt-2026", cat.Documents[0].DocRef)
		require.Empty(t, cat.ContentMarkdown)
		require.Equal(t, "dpe://com.example.docs", lastURI())

		cat, err = c.ReadCatalog(ctxT(t), "alpha", reportURI+"/pages/1", dpe.FormatMarkdown)
		require.NoError(t, err)
		require.Equal(t, "dpe://com.example.docs?format=markdown", lastURI())
		require.Contains(t, cat.ContentMarkdown, "2026 Annual Report")
	})
	t.Run("L1 metadata", func(t *testing.T) {
		d, err := c.ReadDocument(ctxT(t), "alpha", reportURI+"?format=text", agent.DocumentQuery{})
		require.NoError(t, err)
		require.Equal(t, reportURI, lastURI(), "the given query is replaced")
		require.Equal(t, 3, d.PageCount)
		require.Nil(t, d.Pages)
	})
	t.Run("L1 pages window", func(t *testing.T) {
		d, err := c.ReadDocument(ctxT(t), "alpha", reportURI, agent.DocumentQuery{Pages: true, Offset: 1, Limit: 1})
		require.NoError(t, err)
		require.Equal(t, reportURI+"?depth=pages&offset=1&limit=1", lastURI())
		require.Len(t, d.Pages, 1)
		require.Equal(t, "Revenue", d.Pages[0].Title)
		require.Equal(t, 2, d.Pages[0].ElementCount)
		require.Equal(t, 3, *d.PageTotal)
		require.Equal(t, 1, *d.PageOffset)
	})
	t.Run("L1 markdown", func(t *testing.T) {
		d, err := c.ReadDocument(ctxT(t), "alpha", reportURI, agent.DocumentQuery{Pages: true, Format: dpe.FormatMarkdown})
		require.NoError(t, err)
		require.Equal(t, reportURI+"?depth=pages&format=markdown", lastURI())
		require.Contains(t, d.ContentMarkdown, "Overview")
	})
	t.Run("L2 json elements", func(t *testing.T) {
		pg, err := c.ReadPage(ctxT(t), "alpha", reportURI, 0, agent.PageQuery{})
		require.NoError(t, err)
		require.Equal(t, reportURI+"/pages/0", lastURI())
		require.Len(t, pg.Elements, 4)
		require.Equal(t, protocol.DPEElementCategoryTable, pg.Elements[2].Category)
		require.Equal(t, "tbl-001", pg.Elements[2].ElementID)
		require.Equal(t, 4, pg.ElementCount)
	})
	t.Run("L2 categories", func(t *testing.T) {
		pg, err := c.ReadPage(ctxT(t), "alpha", reportURI, 0, agent.PageQuery{Categories: []protocol.DPEElementCategory{"table", "chart"}})
		require.NoError(t, err)
		require.Equal(t, reportURI+"/pages/0?categories=table,chart", lastURI())
		require.Len(t, pg.Elements, 2)
	})
	t.Run("L2 markdown", func(t *testing.T) {
		pg, err := c.ReadPage(ctxT(t), "alpha", reportURI, 0, agent.PageQuery{Format: dpe.FormatMarkdown, Categories: []protocol.DPEElementCategory{"table"}})
		require.NoError(t, err)
		require.Nil(t, pg.Elements)
		require.Equal(t, 1, pg.ElementCount)
		require.Contains(t, *pg.ContentMarkdown, "| Quarter | Revenue | Growth |")
	})
	t.Run("L2 text", func(t *testing.T) {
		pg, err := c.ReadPage(ctxT(t), "alpha", reportURI, 2, agent.PageQuery{Format: dpe.FormatText})
		require.NoError(t, err)
		require.Contains(t, *pg.ContentText, "Growth continues.")
	})
	t.Run("L3 element", func(t *testing.T) {
		e, err := c.ReadElement(ctxT(t), "alpha", reportURI+"/pages/0", "tbl-001", "")
		require.NoError(t, err)
		require.Equal(t, reportURI+"/elements/tbl-001", lastURI())
		require.Equal(t, protocol.DPEElementCategoryTable, e.Category)
		require.Equal(t, 0, *e.PageIndex)
		require.Len(t, e.Content["rows"], 4)
	})
	t.Run("L3 element id needing escapes, markdown", func(t *testing.T) {
		p.World.Mu.Lock()
		d := p.World.Computer("alpha").Servers[0].Docs[0]
		d.Pages[1].Elements = append(d.Pages[1].Elements, protocol.DPEElement{ElementID: "sheet1/A1 b", Category: "formula", Content: map[string]any{"expression": "SUM(A1:A4)"}})
		p.World.Mu.Unlock()
		e, err := c.ReadElement(ctxT(t), "alpha", reportURI, "sheet1/A1 b", dpe.FormatMarkdown)
		require.NoError(t, err)
		require.Equal(t, reportURI+"/elements/sheet1%2FA1%20b?format=markdown", lastURI())
		require.Equal(t, "sheet1/A1 b", e.ElementID)
		require.Contains(t, e.ContentMarkdown, "$ SUM(A1:A4) $")
	})
}

// TestNavigationErrors: remote Finder errors keep their codes; bad options
// fail locally with 4204 and are never sent.
func TestNavigationErrors(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	remote := []struct {
		name string
		call func(ctx context.Context) error
		code protocol.Code
	}{
		{"unknown document", func(ctx context.Context) error {
			_, err := c.ReadDocument(ctx, "alpha", "dpe://com.example.docs/nope", agent.DocumentQuery{})
			return err
		}, protocol.CodeDocumentNotFound},
		{"unknown host", func(ctx context.Context) error {
			_, err := c.ReadCatalog(ctx, "alpha", "dpe://org.unknown", "")
			return err
		}, protocol.CodeDocumentNotFound},
		{"page out of range", func(ctx context.Context) error {
			_, err := c.ReadPage(ctx, "alpha", reportURI, 3, agent.PageQuery{})
			return err
		}, protocol.CodePageOutOfRange},
		{"unknown element", func(ctx context.Context) error {
			_, err := c.ReadElement(ctx, "alpha", reportURI, "nope", "")
			return err
		}, protocol.CodeElementNotFound},
		{"invalid URI through ReadResource", func(ctx context.Context) error {
			_, err := c.ReadResource(ctx, "alpha", "dpe://com.example.docs/rpt-2026?limit=500")
			return err
		}, protocol.CodeInvalidDPEURI},
		{"unknown computer", func(ctx context.Context) error {
			_, err := c.ReadPage(ctx, "ghost", reportURI, 0, agent.PageQuery{})
			return err
		}, protocol.CodeNotFound},
	}
	for _, tc := range remote {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(ctxT(t))
			requireCode(t, err, tc.code)
			var perr *protocol.Error
			require.True(t, errors.As(err, &perr))
		})
	}
	before := p.Count(protocol.EventReadResource)
	local := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"not dpe", func(ctx context.Context) error {
			_, err := c.ReadDocument(ctx, "alpha", "http://x/y", agent.DocumentQuery{})
			return err
		}},
		{"catalog URI for a document", func(ctx context.Context) error {
			_, err := c.ReadDocument(ctx, "alpha", "dpe://com.example.docs", agent.DocumentQuery{})
			return err
		}},
		{"limit above 100", func(ctx context.Context) error {
			_, err := c.ReadDocument(ctx, "alpha", reportURI, agent.DocumentQuery{Pages: true, Limit: 101})
			return err
		}},
		{"negative offset", func(ctx context.Context) error {
			_, err := c.ReadDocument(ctx, "alpha", reportURI, agent.DocumentQuery{Pages: true, Offset: -1})
			return err
		}},
		{"unknown format", func(ctx context.Context) error {
			_, err := c.ReadPage(ctx, "alpha", reportURI, 0, agent.PageQuery{Format: "html"})
			return err
		}},
		{"unknown category", func(ctx context.Context) error {
			_, err := c.ReadPage(ctx, "alpha", reportURI, 0, agent.PageQuery{Categories: []protocol.DPEElementCategory{"table", "spreadsheet"}})
			return err
		}},
		{"negative page", func(ctx context.Context) error {
			_, err := c.ReadPage(ctx, "alpha", reportURI, -1, agent.PageQuery{})
			return err
		}},
		{"empty element id", func(ctx context.Context) error {
			_, err := c.ReadElement(ctx, "alpha", reportURI, "", "")
			return err
		}},
		{"catalog of a bad URI", func(ctx context.Context) error {
			_, err := c.ReadCatalog(ctx, "alpha", "dpe://", "")
			return err
		}},
	}
	for _, tc := range local {
		t.Run(tc.name, func(t *testing.T) {
			requireCode(t, tc.call(ctxT(t)), protocol.CodeInvalidDPEURI)
		})
	}
	require.Equal(t, before, p.Count(protocol.EventReadResource), "a bad URI reached the server")
}

// TestNavigationBadContents: contents that are not the level's JSON are
// invalid answers.
func TestNavigationBadContents(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	contents := func(items ...any) peer.Handler {
		return func(_ context.Context, req map[string]any) peer.Reply {
			return peer.Answer(map[string]any{"contents": items, "req_id": req["req_id"]})
		}
	}
	text := func(s string) map[string]any {
		return map[string]any{"uri": reportURI, "mimeType": "application/json", "text": s}
	}
	cases := []struct {
		name string
		h    peer.Handler
		msg  string
	}{
		{"no contents", contents(), "no contents"},
		{"blob only", contents(map[string]any{"uri": reportURI, "blob": "AAAA"}), "blob only"},
		{"not JSON", contents(text("# a markdown page")), "not valid JSON"},
		{"wrong level", contents(text(`{"documents": [], "total_count": 0}`)), "missing properties 'page_index'"},
		{"elements not a list", contents(text(`{"page_index": 0, "uri": "dpe://h/d/pages/0", "element_count": 1, "elements": {"element_id": "x"}}`)), "/elements: want a list"},
		{"another page", contents(text(`{"page_index": 7, "uri": "dpe://h/d/pages/7", "element_count": 0, "elements": []}`)), "page_index 7"},
		{"contents entry without text or blob", contents(map[string]any{"uri": reportURI}), "/contents/0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p.Handle(protocol.EventReadResource, tc.h)
			defer p.Handle(protocol.EventReadResource, nil)
			_, err := c.ReadPage(ctxT(t), "alpha", reportURI, 0, agent.PageQuery{})
			perr := requireCode(t, err, protocol.CodeInternal)
			require.ErrorIs(t, err, agent.ErrInvalidAnswer)
			require.Contains(t, perr.Message, tc.msg)
		})
	}
}

// TestNavigationTolerantPage (issue 27, item 1): a page as the user's spec
// allows it — numbers and null in cells, any heading level, nested list
// items, elements beside content_markdown — is read whole; an element with
// a structural problem is kept, reported in Problems, and the rest of the
// page is returned.
func TestNavigationTolerantPage(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	const page = `{"page_index": 0, "uri": "dpe://h/d/pages/0", "element_count": 5, "content_markdown": "# server's own",
		"elements": [
			{"element_id": "t", "category": "table", "content": {"headers": ["k", "v"], "rows": [["a", 1], ["c", null], [true, 2.5]]}},
			{"element_id": "h", "category": "heading", "content": {"level": 8, "text": "Deep"}},
			{"element_id": "l", "category": "list", "content": {"items": ["x", ["x1", {"text": "x2"}]]}},
			{"element_id": "bad", "category": "table", "summary": "broken", "content": {"rows": "nope"}},
			{"category": "text", "content": {"text": "no id"}}
		]}`
	p.Handle(protocol.EventReadResource, func(_ context.Context, req map[string]any) peer.Reply {
		return peer.Answer(map[string]any{"contents": []any{map[string]any{"uri": reportURI, "mimeType": "application/json", "text": page}}, "req_id": req["req_id"]})
	})
	defer p.Handle(protocol.EventReadResource, nil)
	pg, err := c.ReadPage(ctxT(t), "alpha", reportURI, 0, agent.PageQuery{})
	require.NoError(t, err)
	require.Len(t, pg.Elements, 5, "every element returned")
	require.Equal(t, "# server's own", *pg.ContentMarkdown, "elements and rendering side by side")
	table, err := dpe.ContentOf[protocol.TableContent](pg.Elements[0])
	require.NoError(t, err)
	require.Equal(t, [][]string{{"a", "1"}, {"c", ""}, {"true", "2.5"}}, table.Rows)
	require.Len(t, pg.Problems, 2)
	require.Equal(t, "/elements/3", pg.Problems[0].Path)
	require.Equal(t, "bad", pg.Problems[0].ElementID)
	require.Contains(t, pg.Problems[0].Message, "/content/rows")
	require.Equal(t, "/elements/4", pg.Problems[1].Path)
	require.Contains(t, pg.Problems[1].Message, "element_id")
	require.Equal(t, "no id", pg.Elements[4].Content["text"], "the element is kept as far as it decodes")
}

// TestPagesIterator reads a whole document in one loop.
func TestPagesIterator(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	var titles []string
	var md strings.Builder
	for pg, err := range c.Pages(ctxT(t), "alpha", reportURI, agent.PageQuery{Format: dpe.FormatMarkdown}) {
		require.NoError(t, err)
		titles = append(titles, pg.Title)
		md.WriteString(*pg.ContentMarkdown)
	}
	require.Equal(t, []string{"Overview", "Revenue", "Outlook"}, titles)
	require.Contains(t, md.String(), "Growth continues.")

	t.Run("error mid-way", func(t *testing.T) {
		p.Handle(protocol.EventReadResource, func(ctx context.Context, req map[string]any) peer.Reply {
			if strings.Contains(req["uri"].(string), "/pages/1") {
				return peer.Fail(protocol.CodePageOutOfRange, "page 1 vanished")
			}
			return p.World.Handler(protocol.EventReadResource)(ctx, req)
		})
		defer p.Handle(protocol.EventReadResource, nil)
		n := 0
		var last error
		for _, err := range c.Pages(ctxT(t), "alpha", reportURI, agent.PageQuery{}) {
			if err != nil {
				last = err
				continue
			}
			n++
		}
		require.Equal(t, 1, n)
		requireCode(t, last, protocol.CodePageOutOfRange)
	})
	t.Run("unknown document", func(t *testing.T) {
		for _, err := range c.Pages(ctxT(t), "alpha", "dpe://com.example.docs/nope", agent.PageQuery{}) {
			requireCode(t, err, protocol.CodeDocumentNotFound)
		}
	})
	t.Run("break", func(t *testing.T) {
		before := p.Count(protocol.EventReadResource)
		for range c.Pages(ctxT(t), "alpha", reportURI, agent.PageQuery{}) {
			break
		}
		require.Equal(t, 2, p.Count(protocol.EventReadResource)-before, "L1 + first page")
	})
}
