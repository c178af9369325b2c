package mcpsource

import (
	"maps"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
)

// Contents converts MCP resource contents into the protocol's ResourceContents
// (spec/finder.md, Reading through the Computer): text contents carry text,
// blob contents carry the base64 blob. Both value and pointer forms of
// mcp.TextResourceContents / mcp.BlobResourceContents are accepted; other kinds
// (nil) are dropped. The result is never nil.
func Contents(in []mcp.ResourceContents) []protocol.ResourceContents {
	out := make([]protocol.ResourceContents, 0, len(in))
	for _, c := range in {
		switch v := c.(type) {
		case mcp.TextResourceContents:
			out = append(out, text(v))
		case *mcp.TextResourceContents:
			if v != nil {
				out = append(out, text(*v))
			}
		case mcp.BlobResourceContents:
			out = append(out, blob(v))
		case *mcp.BlobResourceContents:
			if v != nil {
				out = append(out, blob(*v))
			}
		}
	}
	return out
}

func text(v mcp.TextResourceContents) protocol.ResourceContents {
	t := v.Text
	return protocol.ResourceContents{URI: v.URI, MimeType: v.MIMEType, Text: &t, Meta: maps.Clone(v.Meta)}
}

func blob(v mcp.BlobResourceContents) protocol.ResourceContents {
	b := v.Blob
	return protocol.ResourceContents{URI: v.URI, MimeType: v.MIMEType, Blob: &b, Meta: maps.Clone(v.Meta)}
}

func mime(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
