package agent

import (
	"context"
	"iter"
	"slices"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// FinderQuery filters and pages a Computer's document catalog
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/finder.md#organizer). Zero values mean the protocol's
// defaults: no keyword or type filter, offset 0, limit 20.
type FinderQuery struct {
	// Keywords keep documents whose title, keywords or summary contains
	// any of them (case-insensitive).
	Keywords []string
	// FileType keeps documents of exactly this file_type.
	FileType string
	// Offset is the first document returned (>= 0).
	Offset int
	// Limit is the page size: 0 asks for the default (20), and a limit
	// above the organizer's maximum (100) asks for 100 (spec/finder.md,
	// Organizer).
	Limit int
}

// GetFinder reads one page of a Computer's organised document catalog
// (client:get_finder); total_count counts every document matching the
// filters. A limit above 100 asks for 100; a negative offset or limit fails
// with 400 before anything is sent.
func (c *Client) GetFinder(ctx context.Context, computer string, q FinderQuery) (*protocol.GetFinderRet, error) {
	id := c.nextReqID()
	q.Limit = min(q.Limit, dpe.MaxLimit)
	// Zero offset and limit are omitted (the protocol's defaults apply);
	// out-of-range ones fail the request schema here, with 400.
	req := protocol.GetFinderReq{
		Agent: c.cfg.name, ReqID: id, Computer: computer,
		Keywords: slices.Clone(q.Keywords), Offset: q.Offset, Limit: q.Limit,
	}
	if q.FileType != "" {
		ft := q.FileType
		req.FileType = ft
	}
	if err := c.checkExtension(protocol.EventGetFinder); err != nil {
		return nil, err
	}
	ret, err := call[protocol.GetFinderRet](ctx, c, protocol.EventGetFinder, id, req)
	if err != nil {
		return nil, err
	}
	if ret.Documents == nil {
		ret.Documents = []protocol.DPEDocumentSummary{}
	}
	return ret, nil
}

// Documents iterates over every document of a Computer's catalog that
// matches q, from q.Offset on, paging client:get_finder by total_count
// (q.Limit is the page size, 100 when 0). The iteration stops at the first
// error, which it yields with a zero summary.
//
//	for doc, err := range client.Documents(ctx, "my-computer", agent.FinderQuery{}) {
//		if err != nil { return err }
//		fmt.Println(doc.Title, doc.PageCount)
//	}
func (c *Client) Documents(ctx context.Context, computer string, q FinderQuery) iter.Seq2[protocol.DPEDocumentSummary, error] {
	return func(yield func(protocol.DPEDocumentSummary, error) bool) {
		page := q
		if page.Limit == 0 {
			page.Limit = FinderRefreshLimit
		}
		for {
			ret, err := c.GetFinder(ctx, computer, page)
			if err != nil {
				yield(protocol.DPEDocumentSummary{}, err)
				return
			}
			for _, d := range ret.Documents {
				if !yield(d, nil) {
					return
				}
			}
			page.Offset += len(ret.Documents)
			// An empty page ends the walk even if total_count promises more:
			// the catalog shrank meanwhile, or the Computer miscounts.
			if len(ret.Documents) == 0 || page.Offset >= ret.TotalCount {
				return
			}
		}
	}
}

// ReadResource reads one resource through a Computer (client:read_resource,
// this project's extension: https://github.com/a2c-smcp/smcp-go/blob/main/spec/finder.md#reading-through-the-computer) and
// returns the MCP resource contents. By default Computers serve only dpe://
// and window:// URIs. Finder errors keep their codes: 4201 document not
// found, 4202 page out of range, 4203 element not found, 4204 invalid URI.
//
// A context from WithProgress asks for the read's progress, as for
// CallTool: the MCP server's notifications/progress of its resources/read
// reach the callback while the read runs (an smcp-go extension,
// https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#updates-and-notifications,
// Tool-call progress). The Finder's reads (ReadDocument, ReadPage,
// ReadElement, Pages, ReadCatalog) go through ReadResource and ask the same
// way.
func (c *Client) ReadResource(ctx context.Context, computer, uri string) ([]protocol.ResourceContents, error) {
	id := c.nextReqID()
	if err := c.checkExtension(protocol.EventReadResource); err != nil {
		return nil, err
	}
	req := protocol.ReadResourceReq{Agent: c.cfg.name, ReqID: id, Computer: computer, URI: uri}
	if f := progressFunc(ctx); f != nil && c.Confirmed() { // only an smcp-go Server relays progress
		req.Progress = true // an extension member (progress.go)
		stop := c.progress.watch(id, computer, f)
		defer stop()
	}
	ret, err := call[protocol.ReadResourceRet](ctx, c, protocol.EventReadResource, id, req)
	if err != nil {
		return nil, err
	}
	if ret.Contents == nil {
		ret.Contents = []protocol.ResourceContents{}
	}
	return ret.Contents, nil
}
