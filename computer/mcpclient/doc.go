// Package mcpclient runs the Computer's MCP servers: one supervised
// connection per configured server (stdio child process, streamable HTTP or
// SSE), each on its own goroutine, pinned to MCP protocol revision
// 2025-11-25 (the last one with resources/subscribe, which the Desktop and
// the Finder need; spec/desktop.md, Desktop; spec/finder.md).
//
// # Supervision
//
// A supervisor connects (spawn + initialize), reports the connection Up,
// watches it and, when it is lost, reports it Down and reconnects after an
// exponential backoff (200 ms doubling to 30 s, ±20 % jitter, reset once a
// connection stayed up 10 s). A lost connection is noticed within about
// 300 ms: a stdio child's exit closes the stderr pipe the supervisor holds
// and the health ping fails at once; an HTTP server that refuses
// connections (or forgot its session after a restart) fails the ping that
// runs every 250 ms; a failed request triggers an immediate ping. The other
// servers' supervisors never notice.
//
// # Events
//
// Hooks receive, per server and in order: Up(conn), the connection's
// notifications, Down(name, err). They run on one goroutine per server,
// never on mcp-go's read loop: notification handlers only append to an
// unbounded queue that coalesces identical pending notifications, so a slow
// hook never blocks the MCP connection, and no notification is dropped.
// The ctx given with Up and with each notification ends when the
// connection is lost, so long work (a Finder cold aggregation) stops early.
//
// # Child processes
//
// A stdio server is started the way the Python SDK's MCP client starts it:
// its environment is the configured env over a small default set (HOME,
// LOGNAME, PATH, SHELL, TERM, USER on Unix), its working directory cwd. On
// Unix it runs in its own process group; stopping a server closes its
// stdin, waits (mcp-go: 2 s, then SIGTERM, then SIGKILL) and finally kills
// the whole group, so no child or grandchild outlives the Computer. Only
// utf-8 is supported as encoding (another value is logged and ignored).
//
// # Errors
//
// Conn.ReadResource and Conn.CallTool send their requests through the raw
// transport so that a JSON-RPC error comes back as *mcpsource.RPCError
// with the server's code, message and data (mcp-go's client keeps only the
// message of codes it does not know, such as 4201).
package mcpclient
