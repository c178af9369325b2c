// Package e2e holds end-to-end tests across the roles: a real Server, real
// Computers running real MCP servers, and real Agents, over loopback.
package e2e
