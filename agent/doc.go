// Package agent is the A2C-SMCP Agent client: it joins an office of an SMCP
// Server, calls the tools of the office's Computers, reads their desktops,
// and browses their documents step by step (catalog → document → page →
// element) through dpe:// URIs (spec/protocol.md; spec/finder.md, Levels).
//
//	c, err := agent.Dial(ctx, "http://localhost:8000", agent.WithAPIKey(key), agent.WithName("my-agent"))
//	...
//	defer c.Close()
//	err = c.JoinOffice(ctx, "office-1")
//	for page, err := range c.Pages(ctx, "my-computer", doc.URI, agent.PageQuery{Format: dpe.FormatMarkdown}) { ... }
//
// # Requests
//
// Every request is checked against its schema before it is sent (a bad one
// fails with 400 and never leaves), and every answer against the schema of
// its ack. Failures are *protocol.Error values with the protocol's codes, for
// errors.As and protocol.CodeOf:
//
//   - an ErrorPayload answer is the error it carries (404, 429, 503, 4103,
//     4201–4204, ...);
//   - a malformed answer — wrong shape, wrong number of ack values, another
//     request's req_id — is a 500 matching ErrInvalidAnswer, with the schema
//     violations in its details (500, not 400: the request was fine, the
//     answering side broke the contract);
//   - no answer in time is a 408; the bound is the context's deadline or
//     WithTimeout (DefaultTimeout, 35 s, a little beyond the Server's own
//     30 s forwarding timeout so that its 408 normally arrives first);
//   - a closed Client is a 500 matching ErrClosed, a lost connection a 500
//     matching ErrConnectionLost.
//
// The two-value acks of server:join_office and server:leave_office carry a
// reason, not a code: a reason that starts with a protocol code ("4101
// RoomFull: ...", the text of a *protocol.Error) keeps it, any other
// refusal is a 403.
//
// Every request but client:tool_call is sent again, up to three times in
// all and within its deadline, when the connection drops before the answer:
// the Client reconnects and rejoins its office first. A request stops
// waiting as soon as its connection goes down (even when the Socket.IO
// client lost it without failing its ack). Requests made while the
// connection is down wait for it, within their deadline. A tool call whose
// connection drops fails with ErrConnectionLost: it may have run.
//
// A refusal for now — 429 (the Server's bound on requests in flight, or on
// events a second) or 503 (a peer not reading, a busy Server) — is not the
// end either: the request is sent again after a pause, within its deadline,
// the pauses growing from 100 ms to 2 s with ±50 % jitter, so that a Server
// catching up on a backlog (after a stall, say) does not fail the requests
// that piled up behind its bound. Only a refusal that still stands at the
// deadline is returned. A client:tool_call is sent again only when the
// Server says it refused the call before forwarding it (details
// "forwarded": false, which smcp-go's Server sets on every refusal it makes
// before the call leaves it): the Computer never saw it. Any other failure
// of a tool call — a Computer's answer, a 503 after the call was forwarded,
// a refusal from a Server that does not say — may come after the tool ran,
// and is returned (spec/decisions.md, Agent: retries).
//
// # Tool calls
//
// CallTool returns the MCP CallToolResult. A tool failure, the Computer's
// own refusals (4001–4005) included, is a result with isError set; ToolError
// reads its code. When no answer arrives within the tool timeout plus
// ToolCallGrace, or before the context ends, or the Server answers 408,
// CallTool sends server:tool_call_cancel with the call's req_id and returns
// a result of the Computer's error shape with code 408:
//
//	{"isError": true, "content": [{"type": "text", "text": "..."}],
//	 "structuredContent": {"error": "...", "error_type": "Timeout", "code": 408, "req_id": "..."}}
//
// # Finder navigation
//
// GetFinder reads one page of a Computer's organised catalog and Documents
// iterates over all of it. ReadCatalog, ReadDocument, ReadPage and
// ReadElement read Levels 0–3 through client:read_resource (this project's
// extension of v0.2.0) and validate each level against its schema; Pages
// iterates over every page of a document. With format markdown or text a
// level still answers its JSON object: Level 2 carries content_markdown /
// content_text instead of elements, the other levels carry it in addition
// (spec/decisions.md).
//
// # Notifications
//
// The Client listens to every notify:* event, checks its payload (an invalid
// one is logged and dropped) and acts off the Socket.IO event queue, on
// goroutines it owns and Close stops: a Computer entering the office has its
// tools fetched into the Client's tool cache (Tools), one leaving has them
// dropped, notify:update_tool_list and notify:update_config refresh them,
// notify:update_config, notify:update_desktop and notify:update_finder
// re-fetch the configuration, the desktop and the catalog for the
// OnConfigChanged, OnDesktopChanged and OnFinderChanged callbacks. Refreshes
// are single-flight per Computer: a burst of notifications costs the refresh
// in flight and at most one more. Callbacks may call the Client.
//
// # Connection
//
// Dial sends the API key both as the header x-api-key and as the auth
// payload key api_key; an unreachable Server fails at once, a refusal is the
// Server's code (401). The connection is an sio.Conn (module
// github.com/a2c-smcp/smcp-go/sio), which the Computer shares: each attempt
// bounded (2 s), a refused connection failing it at once, backoff with
// jitter from 250 ms to 2 s. The Client rejoins its office after every
// reconnection, OnReconnect reporting it. When the Server ends the session
// ("io server disconnect"), the Socket.IO client does not reconnect: Done is
// closed and Err says why.
package agent
