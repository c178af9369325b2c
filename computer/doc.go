// Package computer is the A2C-SMCP Computer: it hosts many MCP servers,
// aggregates their tools, window:// desktop and dpe:// documents (the
// Finder), and answers the Agent's client:* requests through a Server.
package computer
