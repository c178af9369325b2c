package agent

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// Progressive navigation (spec/finder.md, Levels): catalog → document
// → page → element, each level read with client:read_resource on a dpe://
// URI the previous level handed out. Every function takes the URI of a
// document (the uri of a catalog entry) or any dpe:// URI below it; its own
// query is ignored and replaced by the options. Bad options fail with 4204
// before anything is sent (the URI rules of dpe.Parse). Answers are read
// tolerantly, as the user's spec allows (dpe.DecodePage and friends;
// spec/finder.md, Reading the levels): a structural problem in one element
// (or catalog entry, or page summary) is reported in Problems and the rest
// is returned; an answer whose own fields are wrong fails with
// ErrInvalidAnswer.

// DocumentQuery selects what ReadDocument returns (Level 1).
type DocumentQuery struct {
	// Pages asks for the page index (depth=pages) in addition to the
	// metadata.
	Pages bool
	// Offset and Limit window the page index (Limit 1–100, 0 = default 20);
	// used only with Pages.
	Offset, Limit int
	// Format is json (default), markdown or text; markdown and text add
	// content_markdown / content_text to the metadata.
	Format dpe.Format
}

// PageQuery selects what ReadPage returns (Level 2).
type PageQuery struct {
	// Format json (default) returns the typed elements; markdown or text
	// return the page rendered in content_markdown / content_text instead
	// (element_count still counts the elements).
	Format dpe.Format
	// Categories keeps only elements of these categories (nil = all).
	Categories []protocol.DPEElementCategory
}

// ReadCatalog reads Level 0, the whole document catalog of one MCP server
// (dpe://host), through computer. uri is "dpe://host" or any URI of that
// host. With format markdown or text the catalog also carries its rendering.
func (c *Client) ReadCatalog(ctx context.Context, computer, uri string, format dpe.Format) (*dpe.Catalog, error) {
	u, err := dpe.Parse(uri)
	if err != nil {
		return nil, err
	}
	target := dpe.CatalogURI(u.Host)
	target = withFormat(target, format)
	return readLevel(ctx, c, computer, target, dpe.DecodeCatalog)
}

// ReadDocument reads Level 1 of the document uri points into: its metadata
// and, with q.Pages, a window of its page index (pages, page_offset,
// page_limit, page_total).
func (c *Client) ReadDocument(ctx context.Context, computer, uri string, q DocumentQuery) (*dpe.Document, error) {
	u, err := documentOf(uri)
	if err != nil {
		return nil, err
	}
	target := u.Document()
	if q.Pages {
		target = target.With(dpe.ParamDepth, string(dpe.DepthPages))
		if q.Offset != 0 {
			target = target.With(dpe.ParamOffset, strconv.Itoa(q.Offset))
		}
		if q.Limit != 0 {
			target = target.With(dpe.ParamLimit, strconv.Itoa(q.Limit))
		}
	}
	target = withFormat(target, q.Format)
	return readLevel(ctx, c, computer, target, dpe.DecodeDocument)
}

// ReadPage reads Level 2, page number page (0-based) of the document uri
// points into. An index past the end fails with 4202. An element with a
// structural problem is kept as far as it could be decoded and listed in
// Problems; the other elements are returned.
func (c *Client) ReadPage(ctx context.Context, computer, uri string, page int, q PageQuery) (*dpe.Page, error) {
	u, err := documentOf(uri)
	if err != nil {
		return nil, err
	}
	if page < 0 {
		return nil, protocol.NewInvalidDPEURI("page index %d is negative", page).With("page_index", page)
	}
	target := dpe.PageURI(u.Host, u.DocRef, page)
	if len(q.Categories) > 0 {
		names := make([]string, len(q.Categories))
		for i, cat := range q.Categories {
			names[i] = string(cat)
		}
		target = target.With(dpe.ParamCategories, strings.Join(names, ","))
	}
	target = withFormat(target, q.Format)
	p, err := readLevel(ctx, c, computer, target, dpe.DecodePage)
	if err != nil {
		return nil, err
	}
	if p.PageIndex != page {
		return nil, invalidAnswer(protocol.EventReadResource, fmt.Errorf("page_index %d, asked for page %d", p.PageIndex, page))
	}
	return p, nil
}

// ReadElement reads Level 3, one element of the document uri points into,
// in full. An unknown id fails with 4203.
func (c *Client) ReadElement(ctx context.Context, computer, uri, elementID string, format dpe.Format) (*dpe.ElementDetail, error) {
	u, err := documentOf(uri)
	if err != nil {
		return nil, err
	}
	if elementID == "" {
		return nil, protocol.NewInvalidDPEURI("element id is empty")
	}
	target := withFormat(dpe.ElementURI(u.Host, u.DocRef, elementID), format)
	return readLevel(ctx, c, computer, target, dpe.DecodeElementDetail)
}

// Pages iterates over every page of the document uri points into: it reads
// the document's page_count (Level 1), then each page in order (Level 2)
// with q. The iteration stops at the first error, which it yields with a
// zero page. Reading a whole document is one loop:
//
//	for page, err := range client.Pages(ctx, "my-computer", doc.URI, agent.PageQuery{Format: dpe.FormatMarkdown}) {
//		if err != nil { return err }
//		fmt.Println(*page.ContentMarkdown)
//	}
func (c *Client) Pages(ctx context.Context, computer, uri string, q PageQuery) iter.Seq2[dpe.Page, error] {
	return func(yield func(dpe.Page, error) bool) {
		doc, err := c.ReadDocument(ctx, computer, uri, DocumentQuery{})
		if err != nil {
			yield(dpe.Page{}, err)
			return
		}
		for i := 0; i < doc.PageCount; i++ {
			p, err := c.ReadPage(ctx, computer, uri, i, q)
			if err != nil {
				yield(dpe.Page{}, err)
				return
			}
			if !yield(*p, nil) {
				return
			}
		}
	}
}

// documentOf parses uri and requires a document reference.
func documentOf(uri string) (*dpe.URI, error) {
	u, err := dpe.Parse(uri)
	if err != nil {
		return nil, err
	}
	if u.DocRef == "" {
		return nil, protocol.NewInvalidDPEURI("%s names no document (Level 0)", uri).With("uri", uri)
	}
	return u, nil
}

func withFormat(u *dpe.URI, f dpe.Format) *dpe.URI {
	if f == "" || f == dpe.FormatJSON {
		return u
	}
	return u.With(dpe.ParamFormat, string(f))
}

// readLevel reads target through computer and decodes its JSON text with
// the level's tolerant reader.
func readLevel[T any](ctx context.Context, c *Client, computer string, target *dpe.URI, decode func([]byte) (*T, error)) (*T, error) {
	raw := target.String()
	// Check the options the caller gave against the URI rules (4204).
	if _, err := dpe.Parse(raw); err != nil {
		return nil, err
	}
	contents, err := c.ReadResource(ctx, computer, raw)
	if err != nil {
		return nil, err
	}
	text, err := jsonText(contents)
	if err != nil {
		return nil, invalidAnswer(protocol.EventReadResource, fmt.Errorf("%s: %w", raw, err))
	}
	out, err := decode([]byte(text))
	if err != nil {
		return nil, invalidAnswer(protocol.EventReadResource, err)
	}
	return out, nil
}

// jsonText returns the text of the first text contents: every DPE level is
// one JSON object (mimeType application/json), whatever the format.
func jsonText(contents []protocol.ResourceContents) (string, error) {
	for _, rc := range contents {
		if rc.Text != nil {
			return *rc.Text, nil
		}
	}
	if len(contents) == 0 {
		return "", fmt.Errorf("no contents")
	}
	return "", fmt.Errorf("no text contents (blob only)")
}
