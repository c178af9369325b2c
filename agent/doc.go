// Package agent is the A2C-SMCP Agent client: it joins an office of an SMCP
// Server, calls the tools of the office's Computers, reads their desktops,
// and browses their documents step by step (catalog → document → page →
// element) through dpe:// URIs (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md; https://github.com/a2c-smcp/smcp-go/blob/main/spec/finder.md#levels).
//
//	c, err := agent.Dial(ctx, "http://localhost:8000", agent.WithAPIKey(key), agent.WithName("my-agent"))
//	...
//	defer c.Close()
//	err = c.JoinOffice(ctx, "office-1")
//	for page, err := range c.Pages(ctx, "my-computer", doc.URI, agent.PageQuery{Format: dpe.FormatMarkdown}) { ... }
//
// # Requests and errors
//
// Every request is checked against its schema before it is sent (a bad one
// fails with 400 and never leaves), and every answer against the schema of
// its ack. Every failure is a *protocol.Error with the protocol's code, for
// errors.As and protocol.CodeOf, that also wraps its cause, for errors.Is
// and errors.As:
//
//   - a refusal answered by the Server or a Computer (an ErrorPayload:
//     404, 408, 429, 503, 4103, 4201–4204, ...) is the error it carries,
//     wrapping nothing;
//
//   - a malformed answer — wrong shape, wrong number of ack values, another
//     request's req_id — is a 500 matching ErrInvalidAnswer, with the schema
//     violations in its details (500, not 400: the request was fine, the
//     answering side broke the contract);
//
//   - a request the Client stopped waiting for is a 408 that wraps the
//     context's error: context.Canceled when the caller cancelled,
//     context.DeadlineExceeded when the context's deadline or WithTimeout's
//     bound (DefaultTimeout, 35 s, a little beyond the Server's own 30 s
//     forwarding timeout so that its 408 normally arrives first) passed. A
//     Server's 408 wraps neither, so errors.Is tells the two apart;
//
//   - a connection lost before the answer is a 503 matching
//     ErrConnectionLost (retryable: protocol.Code.Retryable), a closed
//     Client a 500 matching ErrClosed;
//
//   - Dial to a Server that cannot be reached (connection refused, no
//     route, no answer, a failed handshake) is a 503 matching
//     ErrUnreachable and wrapping the network's error (a *net.OpError);
//     a Server that refuses the connection answers its own code (401).
//
// A caller branches on them so:
//
//	_, err := c.GetTools(ctx, "desk")
//	switch {
//	case errors.Is(err, context.Canceled): // the caller gave up
//	case errors.Is(err, agent.ErrConnectionLost), protocol.CodeOf(err).Retryable(): // try again later
//	case protocol.CodeOf(err) == protocol.CodeNotFound: // no such Computer
//	}
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
// CallTool follows one rule: a result is what the Computer answered, an
// error is a call that got no answer from it. The tool's own failure and
// the Computer's refusals (4001–4005, its 4004 timeout included) are
// results with isError set, which ToolError reads; everything else — the
// Server's refusals, a lost connection, a context that ended, no answer
// within the tool timeout plus ToolCallGrace — is an error, as for any
// request. When the Agent stops waiting, or the Server answers 408, it
// sends server:tool_call_cancel with the call's req_id so that the Computer
// stops the tool; the error's details carry req_id and cancel_sent. A
// context from WithProgress asks for the call's progress (an smcp-go
// extension) and receives the MCP server's reports while the call runs; it
// does the same for ReadResource and the Finder's reads.
// Complete and CompleteDPE complete an argument of a Computer's resource
// template or prompt through client:complete, another extension
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/finder.md#completion).
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
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/decisions.md).
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
// Dial sends the API key as the header x-api-key and as the auth payload
// members token and api_key, and names its protocol generation in the
// handshake (WithGenerations; default 0.4.0, retried once in another
// generation a gated Server accepts; Generation and Confirmed say what the
// session speaks:
// https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#clients-negotiation-in-practice).
// An unreachable Server fails at once (503, ErrUnreachable), a refusal is
// the Server's code (401, or 400 and 4008 for a version it refuses). The connection is an sio.Conn (module
// github.com/a2c-smcp/smcp-go/sio), which the Computer shares: each attempt
// bounded (2 s), a refused connection failing it at once, backoff with
// jitter from 250 ms to 2 s. The Client rejoins its office after every
// reconnection, OnReconnect reporting it. When the Server ends the session
// ("io server disconnect"), the Socket.IO client does not reconnect: Done is
// closed and Err says why.
package agent
