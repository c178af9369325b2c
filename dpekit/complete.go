package dpekit

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// MaxCompletionValues is the most values one completion/complete answer
// carries (MCP, Completion: "Must not exceed 100 items").
const MaxCompletionValues = 100

// completer answers completion/complete for the dpe:// templates
// (spec/finder.md, Writing a DPE server): doc_ref → page_index → element_id,
// each level reading the values already chosen from the request's
// context.arguments (MCP 2025-06-18 and later). Values are prefix-matched
// against the argument's value; total counts every match and hasMore says
// whether some were cut at MaxCompletionValues. An argument the chain does not
// know, or a doc_ref/page_index in the context that names nothing, completes to
// no values.
type completer struct{ s *Server }

func (c completer) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (_ *mcp.Completion, err error) {
	defer func() {
		if r := recover(); r != nil {
			c.s.log.Error("dpekit: provider panicked", "ref", uri, "panic", r)
			err = errors.New(protocol.EncodeMCPErrorMessage(protocol.NewInternal("the document provider failed to complete %s", arg.Name)))
		}
	}()
	if !strings.HasPrefix(uri, "dpe://"+c.s.host) {
		return completion(nil), nil
	}
	switch arg.Name {
	case "doc_ref":
		return c.docRefs(ctx, arg.Value)
	case "page_index":
		return c.pageIndices(ctx, cc.Arguments["doc_ref"], arg.Value)
	case "element_id":
		return c.elementIDs(ctx, cc.Arguments["doc_ref"], cc.Arguments["page_index"], arg.Value)
	}
	return completion(nil), nil
}

func (c completer) docRefs(ctx context.Context, prefix string) (*mcp.Completion, error) {
	docs, err := c.s.provider.Documents(ctx)
	if err != nil {
		return nil, c.fail(err, "dpe://"+c.s.host)
	}
	var refs []string
	for _, d := range docs {
		if d.DocRef != "" && strings.HasPrefix(d.DocRef, prefix) {
			refs = append(refs, d.DocRef)
		}
	}
	sort.Strings(refs)
	return completion(refs), nil
}

func (c completer) pageIndices(ctx context.Context, ref, prefix string) (*mcp.Completion, error) {
	if ref == "" {
		return completion(nil), nil
	}
	d, err := c.s.provider.Document(ctx, ref)
	if err != nil {
		return completion(nil), nil
	}
	var vals []string
	for i := 0; i < d.PageCount; i++ {
		if v := strconv.Itoa(i); strings.HasPrefix(v, prefix) {
			vals = append(vals, v)
		}
	}
	return completion(vals), nil
}

func (c completer) elementIDs(ctx context.Context, ref, page, prefix string) (*mcp.Completion, error) {
	if ref == "" {
		return completion(nil), nil
	}
	d, err := c.s.provider.Document(ctx, ref)
	if err != nil {
		return completion(nil), nil
	}
	first, last := 0, d.PageCount-1
	if page != "" {
		n, err := strconv.Atoi(page)
		if err != nil || n < 0 || n >= d.PageCount {
			return completion(nil), nil
		}
		first, last = n, n
	}
	var ids []string
	for i := first; i <= last; i++ {
		p, err := c.s.provider.Page(ctx, ref, i)
		if err != nil {
			return nil, c.fail(err, "dpe://"+c.s.host+"/"+ref)
		}
		for _, e := range p.Elements {
			if strings.HasPrefix(e.ElementID, prefix) {
				ids = append(ids, e.ElementID)
			}
		}
	}
	return completion(ids), nil
}

// fail encodes a provider failure like a read error (-32603 carrying the
// *protocol.Error in its message).
func (c completer) fail(err error, uri string) error {
	return errors.New(protocol.EncodeMCPErrorMessage(c.s.providerError(err, nil, uri)))
}

func completion(all []string) *mcp.Completion {
	c := &mcp.Completion{Values: all, Total: len(all)}
	if c.Values == nil {
		c.Values = []string{}
	}
	if len(all) > MaxCompletionValues {
		c.Values = all[:MaxCompletionValues]
		c.HasMore = true
	}
	return c
}
