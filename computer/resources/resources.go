// Package resources answers client:get_resources of protocol 0.4
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/capabilities.md#resources):
// an MCP server's resources/list passed through, one page per call, the
// cursor driven by the Agent, every scheme listed (window://, dpe:// and any
// other), no templates, in the references' snake_case A2CResource shape.
//
// Refusals are flat, as the references write them: 4014 "MCP Server not
// registered" with the member mcp_server when no MCP server has the
// bundle_id, 4015 "MCP Server does not support 'resources' capability"
// with mcp_server and capability when the server does not declare
// resources.
package resources

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// Server is an MCP server connection as client:get_resources needs it
// (*mcpclient.Conn is one).
type Server interface {
	Capabilities() mcp.ServerCapabilities
	ListResourcesPage(ctx context.Context, cursor string) ([]mcp.Resource, string, error)
}

// Lookup returns the connected MCP server of a bundle_id.
type Lookup func(bundleID string) (Server, bool)

// NotRegistered is the references' 4014 for bundleID.
func NotRegistered(bundleID string) *protocol.Error {
	return protocol.NewMCPServerNotFound("MCP Server not registered").WithField("mcp_server", bundleID)
}

// NoCapability is the references' 4015 for bundleID.
func NoCapability(bundleID string) *protocol.Error {
	return protocol.NewMCPCapabilityNotSupported("MCP Server does not support 'resources' capability").
		WithField("mcp_server", bundleID).WithField("capability", "resources")
}

// Get answers one client:get_resources request. An error of the MCP
// server is returned as it came (the Computer codes it).
func Get(ctx context.Context, lookup Lookup, req protocol.GetResourcesReq) (protocol.GetResourcesRet, error) {
	srv, ok := lookup(req.MCPServer)
	if !ok || srv == nil {
		return protocol.GetResourcesRet{}, NotRegistered(req.MCPServer)
	}
	if srv.Capabilities().Resources == nil {
		return protocol.GetResourcesRet{}, NoCapability(req.MCPServer)
	}
	list, next, err := srv.ListResourcesPage(ctx, req.Cursor)
	if err != nil {
		return protocol.GetResourcesRet{}, err
	}
	out := make([]protocol.A2CResource, 0, len(list))
	for _, r := range list {
		out = append(out, Convert(r))
	}
	return protocol.GetResourcesRet{Resources: out, NextCursor: next, ReqID: req.ReqID}, nil
}

// Convert returns an MCP resource in the A2CResource shape: mimeType as
// mime_type, annotations' lastModified as last_modified, _meta kept.
func Convert(r mcp.Resource) protocol.A2CResource {
	a := protocol.A2CResource{URI: r.URI, Name: r.Name, Description: r.Description, MimeType: r.MIMEType}
	if r.Size != nil && *r.Size >= 0 {
		n := int(*r.Size)
		a.Size = &n
	}
	if an := r.Annotations; an != nil && (len(an.Audience) > 0 || an.Priority != nil || an.LastModified != "") {
		ra := &protocol.ResourceAnnotations{Priority: an.Priority, LastModified: an.LastModified}
		for _, role := range an.Audience {
			ra.Audience = append(ra.Audience, string(role))
		}
		a.Annotations = ra
	}
	if r.Meta != nil {
		// mcp.Meta's own encoding gives back the members it read.
		if b, err := json.Marshal(r.Meta); err == nil {
			var m map[string]any
			if json.Unmarshal(b, &m) == nil && len(m) > 0 {
				a.Meta = m
			}
		}
	}
	return a
}
