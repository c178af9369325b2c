// Package mcpclient runs the Computer's MCP servers: one supervised
// connection per configured server (stdio child process, streamable HTTP or
// SSE), each on its own goroutine, pinned to MCP protocol revision
// 2025-11-25 (the last one with resources/subscribe, which the Desktop and
// the Finder need; https://github.com/a2c-smcp/smcp-go/blob/main/spec/desktop.md#desktop; https://github.com/a2c-smcp/smcp-go/blob/main/spec/finder.md).
//
// # Supervision
//
// Launch starts one supervisor per enabled server and returns at once; a
// server that hangs or fails at start holds nothing else (Ready waits for
// every first attempt, Start is Launch then Ready). A supervisor connects
// (spawn + initialize, bounded by the initialize timeout), reports the
// connection Up, watches it and, when it is lost, reports it Down and
// reconnects after an exponential backoff (200 ms doubling to 30 s, ±20 %
// jitter, back to 200 ms after a run of 10 s). Each failure is one WARN
// with the reason, the wait before the next attempt (retry_in, the wait
// actually made) and, for a stdio server, its exit status and last stderr
// lines (ProcessError). A lost connection is noticed within about 300 ms:
// a stdio child's exit is seen when it is reaped; an HTTP server that
// refuses connections (or forgot its session after a restart) fails the
// ping that runs every 250 ms; a failed request triggers an immediate
// ping. The other servers' supervisors never notice.
//
// # Events
//
// Hooks receive, per server and in order: Up(conn), the connection's
// notifications, Down(name, err). They run on one goroutine per server,
// never on mcp-go's read loop: notification handlers only append to a
// queue that coalesces identical pending notifications, so a slow hook
// never blocks the MCP connection. The queue holds at most 1,024
// notifications (8 MiB) per server: past that a server flooding
// notifications has the rest dropped and replaced by one Resync (re-read
// everything, as at Up), delivered after the notifications kept; the drop
// is logged at Warn with its count. A flood of 200,000 distinct
// resources/updated costs about 2 MiB instead of about 1 KiB each.
// The ctx given with Up and with each notification ends when the
// connection is lost, so long work (a Finder cold aggregation) stops early.
//
// # Child processes
//
// A stdio server is started the way the Python SDK's MCP client starts it:
// its environment is the configured env over a small default set (HOME,
// LOGNAME, PATH, SHELL, TERM, USER on Unix), its working directory cwd.
// Only utf-8 is supported as encoding (another value is logged and
// ignored). The package spawns the child itself and hands its pipes to
// mcp-go (transport.NewIO), so that:
//
//   - it never outlives the Computer. On Unix the child leads its own
//     process group; stopping a server closes its stdin, waits 2 s, sends
//     SIGTERM, waits 2 s and kills the whole group. On Linux the kernel
//     also SIGKILLs the child when the Computer dies, however it dies
//     (kill -9 included): SysProcAttr.Pdeathsig. That signal fires when the
//     OS thread that forked the child exits, so the child is forked from a
//     goroutine locked to its thread that stays alive until it has reaped
//     the child (one OS thread per running stdio server). Grandchildren get no such signal; elsewhere than Linux a
//     child is expected to exit at the end of its stdin.
//   - its stdout carries JSON objects only: any other line would be dropped
//     by mcp-go without a word; ours drops it too but counts it
//     (Conn.NonJSONLines) and logs the first one verbatim (truncated to
//     512 bytes) at Warn, then the count at most every 10 s.
//   - its stderr is logged at Info, at most 20 lines per 10 s (the lines over
//     that are counted), and its last 20 lines are kept for the WARN that
//     reports its loss, with its exit status.
//
// # Listing bounds
//
// Conn.ListTools, Conn.ListResources and Conn.ListResourceTemplates follow
// nextCursor page after page, within bounds, so that one server's listing
// never costs the Computer unbounded memory or work: a repeated cursor
// fails with 500; more than 1,000 pages or 64 MiB fails with 413; more than
// 100,000 entries keeps the first 100,000, with one WARN (code 413); a page
// of more than 200,000 entries is refused undecoded (413). The request
// timeout bounds the whole listing too.
//
// # Errors
//
// Conn.ReadResource and Conn.CallTool send their requests through the raw
// transport so that a JSON-RPC error comes back as *mcpsource.RPCError
// with the server's code, message and data (mcp-go's client keeps only the
// message of codes it does not know, such as 4201).
package mcpclient
