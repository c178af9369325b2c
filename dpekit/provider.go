package dpekit

import (
	"context"
	"errors"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// ErrNotFound is what a Provider returns when the document, page or element
// asked for does not exist. The kit turns it into the protocol code of the
// level that was read: 4201 from Document, 4202 from Page, 4203 from Element
// (spec/finder.md, dpe URIs). A Provider may also return a
// *protocol.Error itself; it is passed through unchanged.
var ErrNotFound = errors.New("dpekit: not found")

// Provider is a document source: the one interface an MCP server author
// implements to serve documents as dpe:// resources (spec/finder.md, Levels).
//
// The kit fills in every URI, applies the query parameters (depth, offset,
// limit, categories, format), checks page indices against
// Document.PageCount and renders Markdown and text, so a Provider only
// answers questions about its own documents. Element IDs must be unique
// within a document, since a Level-3 URI names no page.
//
// Methods are called concurrently and must be safe for that.
type Provider interface {
	// Documents lists the metadata of every document, in the order the
	// Level-0 catalog shows them.
	Documents(ctx context.Context) ([]Document, error)
	// Document returns one document's metadata, or ErrNotFound.
	Document(ctx context.Context, docRef string) (Document, error)
	// Page returns page index (0-based, below Document.PageCount) of a
	// document with all its elements, or ErrNotFound.
	Page(ctx context.Context, docRef string, index int) (Page, error)
	// Element returns one element of a document and the page that holds it,
	// or ErrNotFound.
	Element(ctx context.Context, docRef, elementID string) (Element, error)
}

// PageIndexer is implemented by Providers that can list page titles and
// element counts more cheaply than by building whole pages. Without it the
// kit calls Page for every page of a Level-1 read with depth=pages.
type PageIndexer interface {
	// Pages returns the summaries of pages offset … offset+limit-1 (fewer at
	// the end of the document).
	Pages(ctx context.Context, docRef string, offset, limit int) ([]PageInfo, error)
}

// Watcher is implemented by Providers whose documents change. The kit calls
// Watch once, on a goroutine it owns, when the Server is created, and
// cancels ctx when the Server is closed; the Provider calls emit for every
// change until then. emit never blocks for long and may be called from any
// goroutine. A Provider that does not implement Watcher can report changes
// with Server.Notify instead.
type Watcher interface {
	Watch(ctx context.Context, emit func(Change)) error
}

// Document is the metadata of one document (spec/finder.md, Levels).
// The kit derives its dpe:// URI from the Server's host and DocRef.
type Document struct {
	// DocRef is the document's opaque key, unique within the Provider. It
	// may hold any characters: the kit percent-encodes it in URIs.
	DocRef string
	// Title is the human-readable title.
	Title string
	// FileType is the file's type, such as "xlsx", "pdf" or "md".
	FileType string
	// FileURI is the URI of the original file.
	FileURI string
	// PageCount is the number of pages; valid page indices are
	// 0 … PageCount-1.
	PageCount int
	// Keywords are optional keywords.
	Keywords []string
	// Summary is an optional one-paragraph summary.
	Summary string
	// LastModified is when the document last changed; the zero time leaves
	// last_modified out.
	LastModified time.Time
}

// Page is one page of a document and its elements, in reading order.
type Page struct {
	// Title is the page title (a sheet name, a section heading); it may be
	// empty.
	Title string
	// Elements are the page's elements. Each element's content must have
	// the shape its category asks for (schema/dpe_content_*.json);
	// dpe.NewElement builds one from the typed content of its category
	// (protocol.TableContent, protocol.HeadingContent, …).
	Elements []protocol.DPEElement
}

// PageInfo is one entry of a document's page index.
type PageInfo struct {
	Title        string
	ElementCount int
}

// Element is one element and the page that holds it.
type Element struct {
	protocol.DPEElement
	// PageIndex is the index of the page that holds the element; a negative
	// value leaves page_index out of the Level-3 answer.
	PageIndex int
}

// ChangeKind says how a document changed.
type ChangeKind int

const (
	// DocumentAdded: a new document exists (resources/list_changed).
	DocumentAdded ChangeKind = iota + 1
	// DocumentRemoved: a document is gone (resources/list_changed).
	DocumentRemoved
	// DocumentUpdated: a document's content or metadata changed
	// (resources/updated to the sessions subscribed to its URIs).
	DocumentUpdated
)

// String returns "added", "removed" or "updated".
func (k ChangeKind) String() string {
	switch k {
	case DocumentAdded:
		return "added"
	case DocumentRemoved:
		return "removed"
	case DocumentUpdated:
		return "updated"
	}
	return "unknown"
}

// Change reports that one document changed.
type Change struct {
	Kind   ChangeKind
	DocRef string
}
