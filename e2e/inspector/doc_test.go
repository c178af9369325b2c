// Package inspector_test drives smcp-inspector against a real office: a
// Server, two Computers with real MCP servers, and headless Chromium. It
// lives in the e2e module because it needs every role and smcp-docserver,
// which the inspector module itself must not depend on (the examples module
// depends on the inspector for the quickstart's --inspector).
package inspector_test
