// Package memdocs is an in-memory dpekit.Provider for the end-to-end tests
// and benchmarks: one-page documents whose page holds one text element.
package memdocs

import (
	"context"
	"slices"
	"strings"

	"github.com/a2c-smcp/smcp-go/dpekit"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// Provider serves Docs, which must be sorted by DocRef. Every document has
// one page (index 0) with one element, "t1", whose text is "Body of
// <doc_ref>".
type Provider struct {
	Docs []dpekit.Document
}

// Documents lists every document.
func (m *Provider) Documents(context.Context) ([]dpekit.Document, error) { return m.Docs, nil }

// Document finds ref by binary search.
func (m *Provider) Document(_ context.Context, ref string) (dpekit.Document, error) {
	i, ok := slices.BinarySearchFunc(m.Docs, ref, func(d dpekit.Document, ref string) int {
		return strings.Compare(d.DocRef, ref)
	})
	if !ok {
		return dpekit.Document{}, dpekit.ErrNotFound
	}
	return m.Docs[i], nil
}

// Page is the document's one page.
func (m *Provider) Page(ctx context.Context, ref string, index int) (dpekit.Page, error) {
	if _, err := m.Document(ctx, ref); err != nil || index != 0 {
		return dpekit.Page{}, dpekit.ErrNotFound
	}
	return dpekit.Page{Title: ref, Elements: []protocol.DPEElement{{ElementID: "t1", Category: "text", Content: map[string]any{"text": "Body of " + ref}}}}, nil
}

// Element is the page's one element, "t1".
func (m *Provider) Element(ctx context.Context, ref, id string) (dpekit.Element, error) {
	p, err := m.Page(ctx, ref, 0)
	if err != nil || id != "t1" {
		return dpekit.Element{}, dpekit.ErrNotFound
	}
	return dpekit.Element{DPEElement: p.Elements[0]}, nil
}
