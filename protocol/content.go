package protocol

import "strings"

// AsText returns the text of a text block, and false for any other block
// (image, audio, resource, resource_link), so that reading a block never
// dereferences a nil Text:
//
//	for _, b := range res.Content {
//		if text, ok := b.AsText(); ok { ... }
//	}
func (b ContentBlock) AsText() (string, bool) {
	if b.Type != ContentBlockTypeText {
		return "", false
	}
	if b.Text == nil {
		return "", true
	}
	return *b.Text, true
}

// Text returns the text of r's text blocks, one per line, and "" for a nil
// result or one without text. Other blocks (images, resources, links) are
// skipped: read them from Content.
func (r *CallToolResult) Text() string {
	if r == nil {
		return ""
	}
	var texts []string
	for _, b := range r.Content {
		if t, ok := b.AsText(); ok {
			texts = append(texts, t)
		}
	}
	return strings.Join(texts, "\n")
}
