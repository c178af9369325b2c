// Package dpekit turns a document source into a Finder-ready MCP server that
// serves dpe:// resources (finder-spec.md, MCP Server 实现指南).
package dpekit
