// Package inspector is a web page to browse an A2C-SMCP office as its
// Agent: the Computers present, their tools (with a form generated from each
// input schema), their desktops and the Finder (catalog → document → page →
// element, with a dpe:// URI box that suggests what the Computer completes:
// https://github.com/a2c-smcp/smcp-go/blob/main/spec/finder.md#completion),
// with a live log of the office's notifications. It shows which Computers
// offer the Finder, and a tool call's progress when the tool reports it.
// For the 0.4 capabilities
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/capabilities.md) it
// lists a Computer's skills and opens their files, pages the resources of
// its MCP servers, shows a tool result's images (the Agent drained the
// Computer's spooled blobs into the result) and offers the other blobs as
// downloads streamed from the Computer (GET /api/blob, at most 256 MiB,
// always as an attachment).
//
// An Inspector joins one office as its Agent (the office's single Agent
// seat, https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#offices) through an agent.Client and serves the
// page with Handler. The page talks only to the Inspector: the Server's API
// key stays in this process and never reaches the browser.
//
// Everything a document or a tool returns is untrusted. Markdown is rendered
// to HTML here, on the server side, and sanitised before it reaches the
// page; the page runs under a strict Content-Security-Policy (no inline
// script, no third-party origin); requests that change something (a tool
// call, its cancellation) need the page's same-origin token.
//
// The command smcp-inspector (cmd/smcp-inspector) serves it on loopback:
//
//	smcp-inspector --server http://127.0.0.1:8080 --office my-office --listen 127.0.0.1:7780
package inspector
