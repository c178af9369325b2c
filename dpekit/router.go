package dpekit

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// handleRead is the one resources/read handler of every dpe:// resource and
// template: it parses the URI itself (spec/finder.md, dpe URIs) and answers
// the level it names. Errors leave as JSON-RPC -32603 whose message is
// protocol.EncodeMCPErrorMessage of the *protocol.Error.
func (s *Server) handleRead(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	body, err := s.Read(ctx, req.Params.URI)
	if err != nil {
		return nil, errors.New(protocol.EncodeMCPErrorMessage(protocol.AsError(err)))
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{
		URI:      req.Params.URI,
		MIMEType: MIMEType,
		Text:     string(body),
	}}, nil
}

// Read answers a dpe:// URI of this Server's host exactly as resources/read
// does, without a transport: the JSON payload of the level the URI names
// (spec/finder.md, Levels), or a *protocol.Error — 4204 for an
// invalid URI, 4201 for an unknown document or another host, 4202 for a page
// past the end, 4203 for an unknown element.
//
// A panic of the Provider is recovered, logged, and answered as 500.
func (s *Server) Read(ctx context.Context, uri string) (_ []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("dpekit: provider panicked", "uri", uri, "panic", r)
			err = protocol.NewInternal("the document provider failed to read %s", uri)
		}
	}()
	u, err := dpe.Parse(uri)
	if err != nil {
		return nil, protocol.AsError(err)
	}
	if u.Host != s.host {
		return nil, protocol.NewDocumentNotFound("no documents of host %q here: this server is %q", u.Host, s.host).
			With("uri", uri).With("host", u.Host)
	}
	var v any
	var schema string
	switch u.Level() {
	case dpe.LevelCatalog:
		v, err = s.readCatalog(ctx, u, uri)
		schema = "dpe_catalog.json"
	case dpe.LevelDocument:
		v, err = s.readDocument(ctx, u, uri)
		schema = "dpe_document.json"
	case dpe.LevelPage:
		v, err = s.readPage(ctx, u, uri)
		schema = "dpe_page.json"
	default:
		v, err = s.readElement(ctx, u, uri)
		schema = "dpe_element_detail.json"
	}
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(v)
	if err != nil {
		return nil, protocol.NewInternal("encoding %s: %v", uri, err)
	}
	if s.validate {
		if err := protocol.ValidateSchema(schema, body); err != nil {
			perr := protocol.AsError(err)
			s.log.Warn("dpekit: provider payload violates its schema", "uri", uri, "err", perr)
			return nil, protocol.NewInternal("the payload of %s violates %s", uri, schema).With("violations", perr.Details)
		}
		if err := strictContent(v); err != nil {
			perr := protocol.AsError(err)
			s.log.Warn("dpekit: provider element content is not in the shape the kit writes", "uri", uri, "err", perr)
			return nil, protocol.NewInternal("the payload of %s violates dpe_content_rules.json", uri).With("violations", perr.Details)
		}
	}
	return body, nil
}

func (s *Server) meta(d Document) protocol.DPEDocumentMeta {
	m := protocol.DPEDocumentMeta{
		DocRef:    d.DocRef,
		URI:       dpe.DocumentURI(s.host, d.DocRef).String(),
		FileURI:   d.FileURI,
		FileType:  d.FileType,
		Title:     d.Title,
		PageCount: d.PageCount,
		Keywords:  d.Keywords,
	}
	if d.Summary != "" {
		m.Summary = d.Summary
	}
	if !d.LastModified.IsZero() {
		m.LastModified = formatTime(d.LastModified)
	}
	return m
}

func (s *Server) readCatalog(ctx context.Context, u *dpe.URI, uri string) (any, error) {
	docs, err := s.provider.Documents(ctx)
	if err != nil {
		return nil, s.providerError(err, protocol.NewInternal("listing documents failed"), uri)
	}
	c := protocol.DPECatalog{Documents: make([]protocol.DPEDocumentMeta, 0, len(docs))}
	for _, d := range docs {
		if d.DocRef == "" {
			continue
		}
		m := s.meta(d)
		if s.validate {
			// One document that violates its schema is left out of the
			// catalog, with a coded warning, rather than failing the
			// catalog of every other document.
			if err := s.validMeta(m); err != nil {
				s.log.Warn("dpekit: a document violates dpe_document_meta.json; left out of the catalog",
					"uri", m.URI, "doc_ref", d.DocRef, "code", int(err.Code), "err", err, "violations", err.Details)
				continue
			}
		}
		c.Documents = append(c.Documents, m)
	}
	c.TotalCount = len(c.Documents)
	switch u.Format() {
	case dpe.FormatMarkdown:
		c.ContentMarkdown = dpe.CatalogMarkdown(c)
	case dpe.FormatText:
		c.ContentText = dpe.CatalogText(c)
	}
	return c, nil
}

// validMeta checks one catalog entry against dpe_document_meta.json: nil,
// or a 500 *protocol.Error whose details list the violations.
func (s *Server) validMeta(m protocol.DPEDocumentMeta) *protocol.Error {
	body, err := json.Marshal(m)
	if err != nil {
		return protocol.NewInternal("encoding the catalog entry of %s: %v", m.URI, err)
	}
	if err := protocol.ValidateSchema("dpe_document_meta.json", body); err != nil {
		return protocol.NewInternal("the catalog entry of %s violates dpe_document_meta.json", m.URI).
			With("violations", protocol.AsError(err).Details)
	}
	return nil
}

func (s *Server) document(ctx context.Context, ref, uri string) (Document, error) {
	d, err := s.provider.Document(ctx, ref)
	if err != nil {
		return Document{}, s.providerError(err, protocol.NewDocumentNotFound("document %q not found", ref).
			With("uri", uri).With("doc_ref", ref), uri)
	}
	return d, nil
}

// documentWire is a Level-1 answer whose page window always carries "pages",
// even when the window is past the end and holds no page.
type documentWire struct {
	protocol.DPEDocument
	Pages *[]protocol.DPEPageSummary `json:"pages,omitempty"`
}

func (s *Server) readDocument(ctx context.Context, u *dpe.URI, uri string) (any, error) {
	d, err := s.document(ctx, u.DocRef, uri)
	if err != nil {
		return nil, err
	}
	m := s.meta(d)
	w := documentWire{DPEDocument: protocol.DPEDocument{
		DocRef: m.DocRef, URI: m.URI, FileURI: m.FileURI, FileType: m.FileType, Title: m.Title,
		PageCount: m.PageCount, Keywords: m.Keywords, Summary: m.Summary, LastModified: m.LastModified,
	}}
	if u.Depth() == dpe.DepthPages {
		offset, limit := u.Offset(), u.Limit()
		infos, err := s.pageInfos(ctx, d, offset, limit, uri)
		if err != nil {
			return nil, err
		}
		pages := make([]protocol.DPEPageSummary, len(infos))
		for i, p := range infos {
			pages[i] = protocol.DPEPageSummary{
				PageIndex:    offset + i,
				Title:        p.Title,
				ElementCount: p.ElementCount,
				URI:          dpe.PageURI(s.host, d.DocRef, offset+i).String(),
				DocRef:       d.DocRef,
			}
		}
		w.Pages = &pages
		w.DPEDocument.Pages = pages
		w.PageOffset, w.PageLimit, w.PageTotal = ptr(offset), limit, ptr(d.PageCount)
	}
	switch u.Format() {
	case dpe.FormatMarkdown:
		w.ContentMarkdown = dpe.DocumentMarkdown(w.DPEDocument)
	case dpe.FormatText:
		w.ContentText = dpe.DocumentText(w.DPEDocument)
	}
	return w, nil
}

func (s *Server) pageInfos(ctx context.Context, d Document, offset, limit int, uri string) ([]PageInfo, error) {
	end := min(offset+limit, d.PageCount)
	if offset >= end {
		return nil, nil
	}
	pageErr := protocol.NewPageOutOfRange("a page of document %q is missing", d.DocRef).With("uri", uri).With("doc_ref", d.DocRef)
	if pi, ok := s.provider.(PageIndexer); ok {
		infos, err := pi.Pages(ctx, d.DocRef, offset, end-offset)
		if err != nil {
			return nil, s.providerError(err, pageErr, uri)
		}
		if len(infos) > end-offset {
			infos = infos[:end-offset]
		}
		return infos, nil
	}
	infos := make([]PageInfo, 0, end-offset)
	for i := offset; i < end; i++ {
		p, err := s.provider.Page(ctx, d.DocRef, i)
		if err != nil {
			return nil, s.providerError(err, pageErr.With("page_index", i), uri)
		}
		infos = append(infos, PageInfo{Title: p.Title, ElementCount: len(p.Elements)})
	}
	return infos, nil
}

// pageWire is a Level-2 answer: "elements" is always present with
// format=json (even when the categories filter leaves none), and absent with
// markdown or text, where content_markdown / content_text replace it.
type pageWire struct {
	protocol.DPEPage
	Elements *[]protocol.DPEElement `json:"elements,omitempty"`
}

func (s *Server) readPage(ctx context.Context, u *dpe.URI, uri string) (any, error) {
	d, err := s.document(ctx, u.DocRef, uri)
	if err != nil {
		return nil, err
	}
	outOfRange := protocol.NewPageOutOfRange("page %d out of range: document %q has %d pages", u.PageIndex, d.DocRef, d.PageCount).
		With("uri", uri).With("doc_ref", d.DocRef).With("page_index", u.PageIndex).With("page_count", d.PageCount)
	if u.PageIndex >= d.PageCount {
		return nil, outOfRange
	}
	p, err := s.provider.Page(ctx, d.DocRef, u.PageIndex)
	if err != nil {
		return nil, s.providerError(err, outOfRange, uri)
	}
	elems := filterElements(p.Elements, u.Categories())
	page := protocol.DPEPage{
		PageIndex:    u.PageIndex,
		DocRef:       d.DocRef,
		URI:          dpe.PageURI(s.host, d.DocRef, u.PageIndex).String(),
		ElementCount: len(elems),
		Elements:     elems,
	}
	if p.Title != "" {
		page.Title = p.Title
	}
	w := pageWire{DPEPage: page}
	switch u.Format() {
	case dpe.FormatMarkdown:
		w.ContentMarkdown = ptr(dpe.PageMarkdown(page))
	case dpe.FormatText:
		w.ContentText = ptr(dpe.PageText(page))
	default:
		w.Elements = &elems
	}
	w.DPEPage.Elements = nil
	return w, nil
}

func filterElements(all []protocol.DPEElement, cats []protocol.DPEElementCategory) []protocol.DPEElement {
	if len(cats) == 0 {
		if all == nil {
			return []protocol.DPEElement{}
		}
		return all
	}
	out := make([]protocol.DPEElement, 0, len(all))
	for _, e := range all {
		if slices.Contains(cats, e.Category) {
			out = append(out, e)
		}
	}
	return out
}

func (s *Server) readElement(ctx context.Context, u *dpe.URI, uri string) (any, error) {
	d, err := s.document(ctx, u.DocRef, uri)
	if err != nil {
		return nil, err
	}
	e, err := s.provider.Element(ctx, d.DocRef, u.ElementID)
	if err != nil {
		return nil, s.providerError(err, protocol.NewElementNotFound("element %q not found in document %q", u.ElementID, d.DocRef).
			With("uri", uri).With("doc_ref", d.DocRef).With("element_id", u.ElementID), uri)
	}
	detail := protocol.DPEElementDetail{
		ElementID: e.ElementID,
		Category:  e.Category,
		Summary:   e.Summary,
		Content:   e.Content,
		Metadata:  e.Metadata,
		DocRef:    d.DocRef,
		URI:       dpe.ElementURI(s.host, d.DocRef, e.ElementID).String(),
	}
	if detail.ElementID == "" {
		detail.ElementID = u.ElementID
	}
	if detail.Content == nil {
		detail.Content = map[string]any{}
	}
	if e.PageIndex >= 0 {
		detail.PageIndex = ptr(e.PageIndex)
	}
	switch u.Format() {
	case dpe.FormatMarkdown:
		detail.ContentMarkdown = dpe.ElementDetailMarkdown(detail)
	case dpe.FormatText:
		detail.ContentText = dpe.ElementDetailText(detail)
	}
	return detail, nil
}

func ptr[T any](v T) *T { return &v }

// strictContent checks the content of every element of a page or element
// answer against dpe_content_rules.json: the exact shapes the kit writes
// (readers accept more; spec/finder.md, Reading the levels).
func strictContent(v any) error {
	var els []protocol.DPEElement
	switch x := v.(type) {
	case pageWire:
		if x.Elements != nil {
			els = *x.Elements
		}
	case protocol.DPEElementDetail:
		els = []protocol.DPEElement{{ElementID: x.ElementID, Category: x.Category, Content: x.Content}}
	}
	for _, e := range els {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if err := protocol.ValidateSchema("dpe_content_rules.json", b); err != nil {
			return err
		}
	}
	return nil
}
