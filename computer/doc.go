// Package computer is the A2C-SMCP Computer (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#roles-and-transport): it hosts many MCP servers, aggregates their tools, window://
// desktop and dpe:// documents (the Finder), and answers the Agent's client:*
// requests through a Server.
//
// A Computer is built from a config in the Python SDK's format
// (package config), launched (New, Launch: inputs resolved, MCP servers
// started, each coming up on its own), connected to a Server at once
// (Connect: it joins its office without waiting for its MCP servers) and
// closed (Close: leaves the office, stops every MCP child process). Start
// (Launch, then Ready: every server's first attempt made and aggregated)
// suits one-shot use without a Server.
//
//	cfg, _ := config.Load("computer.json")
//	c := computer.New(cfg, computer.WithConfirm(askUser))
//	if err := c.Launch(ctx); err != nil { ... }
//	defer c.Close(context.Background())
//	if err := c.Connect(ctx, "http://server:8000", "office-1", "my-computer", sio.WithAPIKey(key)); err != nil { ... }
//
// It answers each Server in the protocol generation the connection settled
// on, and on smcp-server each request in the generation of the Agent that
// made it, which the Server names
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#computer):
// every MCP server has a bundle_id, a 0.3/0.4 session sees the tools as
// {bundle_id}__{alias or name} with it and the results' meta with the
// 0.4 cancel and timeout markers, a 0.2 session the bare names and 4004;
// client:get_config is keyed per generation; the events 0.4 added get the
// references' codes; to a Server that is not smcp-go the answers stay
// within the reference Servers' message limit.
//
// The parts live in sub-packages: config (file format, ${input:ID}),
// mcpclient (supervised MCP connections), tools (SMCPTool, client:tool_call),
// desktop (window://), finder (dpe:// catalog), bridge (client:read_resource,
// an extension of this project) and sio (the Socket.IO client). Complete
// answers client:complete by forwarding MCP completion/complete, and a tool
// call or resource read that asked for progress relays the MCP server's
// notifications/progress as server:tool_progress (both smcp-go extensions).
//
// # Errors
//
// Errors are *protocol.Error values (errors.As, protocol.CodeOf) that wrap
// their cause (errors.Is, errors.As), by the same rule as the Agent's
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/decisions.md#agent):
// Launch fails with 400 naming an input it cannot resolve; Ready and Start
// fail with 408 wrapping ctx.Err() when ctx ends first, with 400 when the
// configuration refused a server (its bundle_id is another server's), and
// with 503 when
// an MCP server's first attempt failed (its command does not exist, it
// exited, its URL refused), naming each one and wrapping its
// *mcpclient.ServerError — the servers that came up serve meanwhile and
// the others are retried; Connect fails as sio.Dial does: the Server's code
// for a refusal, 503 matching sio.ErrUnreachable for a Server that cannot
// be reached, 408 wrapping ctx.Err(). CallTool never fails: it is the
// answer the Agent receives, a CallToolResult whose isError carries the
// Computer's own codes (4001–4005) when the call did not succeed.
//
// Wiring (this package): every MCP connection that comes up has its tools
// listed and is added to the Desktop, the Finder and the read bridge; every
// connection that is lost has its tools, windows and documents withdrawn.
// A server that declares no resources capability serves tools only: the
// Finder, the Desktop and the read bridge leave it out, without warnings.
// The catalog builds (Finder, Desktop) of a server run on that server's own
// event goroutine, never delaying the join nor another server; a catalog
// read that times out is abandoned without notifications/cancelled.
// tools/list_changed re-lists the server's tools; resources/list_changed
// and resources/updated go to the Desktop, the Finder and the bridge.
// Changes are announced with server:update_tool_list, server:update_desktop
// and server:update_finder (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#updates-and-notifications) while
// the Computer is in its office.
package computer
