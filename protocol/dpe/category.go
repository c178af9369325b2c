package dpe

import "github.com/a2c-smcp/smcp-go/protocol"

// categories holds the 19 standard element categories in the order of
// spec/finder.md, Element categories.
var categories = [...]protocol.DPEElementCategory{
	protocol.DPEElementCategoryText,
	protocol.DPEElementCategoryHeading,
	protocol.DPEElementCategoryList,
	protocol.DPEElementCategoryCode,
	protocol.DPEElementCategoryTable,
	protocol.DPEElementCategoryPivotTable,
	protocol.DPEElementCategoryChart,
	protocol.DPEElementCategoryDiagram,
	protocol.DPEElementCategoryImage,
	protocol.DPEElementCategoryFormula,
	protocol.DPEElementCategoryLink,
	protocol.DPEElementCategoryAnnotation,
	protocol.DPEElementCategoryHeader,
	protocol.DPEElementCategoryFooter,
	protocol.DPEElementCategorySeparator,
	protocol.DPEElementCategoryAudio,
	protocol.DPEElementCategoryVideo,
	protocol.DPEElementCategoryForm,
	protocol.DPEElementCategoryWidget,
}

// Categories returns the 19 standard element categories in the order of
// spec/finder.md, Element categories. The slice is a fresh copy.
func Categories() []protocol.DPEElementCategory {
	out := make([]protocol.DPEElementCategory, len(categories))
	copy(out, categories[:])
	return out
}

// ParseCategory returns the category named s. The match is exact and
// case-sensitive, as rule 8 of spec/finder.md (dpe URIs) requires.
func ParseCategory(s string) (protocol.DPEElementCategory, bool) {
	// A switch compiles to a length-then-compare search and does not allocate.
	switch s {
	case "text", "heading", "list", "code", "table", "pivot_table", "chart",
		"diagram", "image", "formula", "link", "annotation", "header", "footer",
		"separator", "audio", "video", "form", "widget":
		return protocol.DPEElementCategory(s), true
	}
	return "", false
}
