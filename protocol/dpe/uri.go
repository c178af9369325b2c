package dpe

import (
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/internal/uriscan"
)

// Level is the addressing level of a dpe:// URI (spec/finder.md, Levels).
type Level int

// The four levels.
const (
	LevelCatalog  Level = 0 // dpe://host
	LevelDocument Level = 1 // dpe://host/doc-ref
	LevelPage     Level = 2 // dpe://host/doc-ref/pages/{N}
	LevelElement  Level = 3 // dpe://host/doc-ref/elements/{ID}
)

// String returns "catalog", "document", "page" or "element".
func (l Level) String() string {
	switch l {
	case LevelCatalog:
		return "catalog"
	case LevelDocument:
		return "document"
	case LevelPage:
		return "page"
	case LevelElement:
		return "element"
	}
	return "Level(" + strconv.Itoa(int(l)) + ")"
}

// Format is the value of the "format" query parameter (spec/finder.md, dpe
// URIs).
type Format string

// The response formats.
const (
	FormatJSON     Format = "json"
	FormatMarkdown Format = "markdown"
	FormatText     Format = "text"
)

// Depth is the value of the "depth" query parameter of Level 1.
type Depth string

// The Level-1 depths.
const (
	DepthMetadata Depth = "metadata"
	DepthPages    Depth = "pages"
)

// Page-window defaults and bounds of the "limit" query parameter.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// maxIndex bounds page indexes and offsets so that they fit an int32 on
// every platform.
const maxIndex = 1<<31 - 1

// Names of the query parameters the spec defines, in canonical order.
const (
	ParamDepth      = "depth"
	ParamOffset     = "offset"
	ParamLimit      = "limit"
	ParamCategories = "categories"
	ParamFormat     = "format"
)

var knownParams = [...]string{ParamDepth, ParamOffset, ParamLimit, ParamCategories, ParamFormat}

// URI is a parsed dpe:// URI (spec/finder.md, dpe URIs). Obtain one
// from [Parse] or the constructors ([CatalogURI], [DocumentURI], [PageURI],
// [ElementURI]); they keep the fields consistent.
type URI struct {
	// Host identifies the MCP server; never empty in a parsed URI; lower case.
	Host string
	// DocRef is the decoded document reference; "" at Level 0.
	DocRef string
	// PageIndex is the page number; meaningful only when HasPage is true.
	PageIndex int
	// HasPage is true at Level 2 (it tells "pages/0" from no page at all).
	HasPage bool
	// ElementID is the decoded element id; set only at Level 3.
	ElementID string
	// Query holds every decoded query parameter, the validated ones included;
	// nil when the URI has none.
	Query url.Values
}

// Level returns the addressing level: Catalog without doc-ref, Element with
// an element id, Page when HasPage, Document otherwise.
func (u *URI) Level() Level {
	switch {
	case u.DocRef == "":
		return LevelCatalog
	case u.ElementID != "":
		return LevelElement
	case u.HasPage:
		return LevelPage
	}
	return LevelDocument
}

// SubPath returns the sub-path as it appears in the canonical URI: "" at
// Levels 0 and 1, "pages/N" at Level 2, "elements/<percent-encoded id>" at
// Level 3 (spec/finder.md, dpe URIs).
func (u *URI) SubPath() string {
	switch u.Level() {
	case LevelPage:
		return "pages/" + strconv.Itoa(u.PageIndex)
	case LevelElement:
		return "elements/" + uriscan.EscapeSegment(u.ElementID)
	}
	return ""
}

// Format returns the "format" parameter, FormatJSON when absent.
func (u *URI) Format() Format {
	if v := u.Query.Get(ParamFormat); v != "" {
		return Format(v)
	}
	return FormatJSON
}

// Depth returns the "depth" parameter, DepthMetadata when absent.
func (u *URI) Depth() Depth {
	if v := u.Query.Get(ParamDepth); v != "" {
		return Depth(v)
	}
	return DepthMetadata
}

// Offset returns the "offset" parameter, 0 when absent (or not a valid
// offset, which a parsed URI never has).
func (u *URI) Offset() int {
	if n, ok, big := uriscan.ParseUint(u.Query.Get(ParamOffset), maxIndex); ok && !big {
		return n
	}
	return 0
}

// Limit returns the "limit" parameter, DefaultLimit when absent (or not a
// valid limit, which a parsed URI never has).
func (u *URI) Limit() int {
	if n, ok, big := uriscan.ParseUint(u.Query.Get(ParamLimit), MaxLimit); ok && !big && n >= 1 {
		return n
	}
	return DefaultLimit
}

// Categories returns the categories of the "categories" filter in the order
// given, without duplicates; nil when the parameter is absent (every
// category). Unknown names, which a parsed URI never has, are skipped.
func (u *URI) Categories() []protocol.DPEElementCategory {
	vs, ok := u.Query[ParamCategories]
	if !ok || len(vs) == 0 {
		return nil
	}
	out := make([]protocol.DPEElementCategory, 0, strings.Count(vs[0], ",")+1)
	for s := range strings.SplitSeq(vs[0], ",") {
		if c, ok := ParseCategory(s); ok && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// String returns the canonical form of u (see the package documentation);
// Parse(u.String()) equals u for every URI Parse returns.
func (u *URI) String() string {
	var b strings.Builder
	n := len("dpe://") + len(u.Host)
	lvl := u.Level()
	if lvl != LevelCatalog {
		n += 1 + uriscan.EscapedLen(u.DocRef, false)
		switch lvl {
		case LevelPage:
			n += len("/pages/") + 10
		case LevelElement:
			n += len("/elements/") + uriscan.EscapedLen(u.ElementID, false)
		}
	}
	n += queryLen(u.Query)
	b.Grow(n)
	b.WriteString("dpe://")
	b.WriteString(u.Host)
	if lvl != LevelCatalog {
		b.WriteByte('/')
		uriscan.WriteEscaped(&b, u.DocRef, false)
		switch lvl {
		case LevelPage:
			b.WriteString("/pages/")
			var num [20]byte
			b.Write(strconv.AppendInt(num[:0], int64(u.PageIndex), 10))
		case LevelElement:
			b.WriteString("/elements/")
			uriscan.WriteEscaped(&b, u.ElementID, false)
		}
	}
	writeQuery(&b, u.Query)
	return b.String()
}

func queryLen(q url.Values) int {
	n := 0
	for k, vs := range q {
		for _, v := range vs {
			n += 2 + uriscan.EscapedLen(k, true) + uriscan.EscapedLen(v, true)
		}
	}
	return n
}

// writeQuery writes "?k=v&..." in canonical order: the spec's parameters in
// knownParams order, then the others sorted by name; each name's values in
// their order.
func writeQuery(b *strings.Builder, q url.Values) {
	if len(q) == 0 {
		return
	}
	sep := byte('?')
	write := func(k string, vs []string) {
		for _, v := range vs {
			b.WriteByte(sep)
			sep = '&'
			uriscan.WriteEscaped(b, k, true)
			b.WriteByte('=')
			uriscan.WriteEscaped(b, v, true)
		}
	}
	known := 0
	for _, k := range knownParams {
		if vs, ok := q[k]; ok {
			write(k, vs)
			known++
		}
	}
	if known == len(q) {
		return
	}
	others := make([]string, 0, len(q)-known)
	for k := range q {
		if !isKnownParam(k) {
			others = append(others, k)
		}
	}
	slices.Sort(others)
	for _, k := range others {
		write(k, q[k])
	}
}

func isKnownParam(k string) bool {
	switch k {
	case ParamDepth, ParamOffset, ParamLimit, ParamCategories, ParamFormat:
		return true
	}
	return false
}

// Document returns the Level-1 URI of the same document, without query. At
// Level 0 it returns the catalog URI of the same host, without query.
func (u *URI) Document() *URI {
	return &URI{Host: u.Host, DocRef: u.DocRef}
}

// With returns a copy of u with the query parameter key set to value (every
// previous value of key is replaced); u is not modified.
func (u *URI) With(key, value string) *URI {
	c := *u
	c.Query = make(url.Values, len(u.Query)+1)
	for k, vs := range u.Query {
		c.Query[k] = slices.Clone(vs)
	}
	c.Query[key] = []string{value}
	return &c
}

// Equal reports whether u and v denote the same parsed URI (same fields and
// the same query parameters in the same per-name order).
func (u *URI) Equal(v *URI) bool {
	if u == nil || v == nil {
		return u == v
	}
	return u.Host == v.Host && u.DocRef == v.DocRef && u.HasPage == v.HasPage &&
		u.PageIndex == v.PageIndex && u.ElementID == v.ElementID &&
		maps.EqualFunc(u.Query, v.Query, slices.Equal)
}

// CatalogURI returns the Level-0 URI dpe://host.
func CatalogURI(host string) *URI { return &URI{Host: host} }

// DocumentURI returns the Level-1 URI dpe://host/docRef.
func DocumentURI(host, docRef string) *URI { return &URI{Host: host, DocRef: docRef} }

// PageURI returns the Level-2 URI dpe://host/docRef/pages/pageIndex.
func PageURI(host, docRef string, pageIndex int) *URI {
	return &URI{Host: host, DocRef: docRef, PageIndex: pageIndex, HasPage: true}
}

// ElementURI returns the Level-3 URI dpe://host/docRef/elements/elementID.
func ElementURI(host, docRef, elementID string) *URI {
	return &URI{Host: host, DocRef: docRef, ElementID: elementID}
}

// Build writes a URI of spec/finder.md (dpe URIs) from its parts:
// "dpe://" + host, then "/" + the escaped docRef when docRef is not empty,
// then "/" + subPath verbatim when subPath is not empty (subPath is already
// in URI form: "pages/3", "elements/sheet1%2FA1", as [URI.SubPath] returns
// it), then the parameters in canonical order. Build does not validate: pass
// the result to [Parse] when the parts are untrusted (a subPath without
// docRef, for instance, yields a URI that breaks rule 3).
func Build(host, docRef, subPath string, params url.Values) string {
	var b strings.Builder
	b.Grow(len("dpe://") + len(host) + 2 + uriscan.EscapedLen(docRef, false) + len(subPath) + queryLen(params))
	b.WriteString("dpe://")
	b.WriteString(host)
	if docRef != "" || subPath != "" {
		b.WriteByte('/')
		uriscan.WriteEscaped(&b, docRef, false)
	}
	if subPath != "" {
		b.WriteByte('/')
		b.WriteString(subPath)
	}
	writeQuery(&b, params)
	return b.String()
}

// IsValid reports whether raw is a valid dpe:// URI ([Parse] succeeds).
func IsValid(raw string) bool {
	var u URI
	return parse(raw, &u) == nil
}
