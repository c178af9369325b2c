// Package dpekit turns a document source into a Finder-ready MCP server that
// serves dpe:// resources (spec/finder.md, Writing a DPE server).
//
// An author implements [Provider] — list documents, one document's metadata,
// a page, an element — and optionally [PageIndexer] (cheap page index) and
// [Watcher] (change events); [New] serves it with mark3labs/mcp-go. The
// package imports the protocol module and mcp-go only: no Socket.IO, no role
// module, so an MCP server built with it stays a plain MCP server.
//
//	srv, err := dpekit.New(ctx, "com.example.docs", myProvider)
//	...
//	defer srv.Close()
//	err = dpekit.ServeStdio(ctx, srv) // or: http.Handle("/mcp", dpekit.NewStreamableHTTPHandler(srv))
//
// # What the server offers
//
//   - Capabilities resources.subscribe and resources.listChanged (a Computer
//     does not subscribe to MCP servers without subscribe) and completions.
//   - resources/list: the Level-0 catalog dpe://host ("Catalog of host") and
//     one Level-1 resource dpe://host/{doc_ref} per document, named
//     "{title} [{doc_ref}]". Names are unique because mcp-go's list cursor is
//     the last name of a page: equal names across a page boundary would be
//     skipped.
//   - resources/templates/list: dpe://host/{doc_ref}/pages/{page_index},
//     dpe://host/{doc_ref}/elements/{element_id}, and dpe://host{+path}.
//     mcp-go matches a URI against a template without its query string, so
//     ".../pages/3?format=markdown" would match neither of the first two; the
//     third, an RFC 6570 reserved expansion, matches every URI of the host.
//     A fourth, {+uri}, matches any other URI (another host or scheme,
//     "dpe:///x"), which the router answers with 4201 or 4204 instead of
//     mcp-go's -32002. Every resource and template has the same handler: one
//     router that parses the URI with dpe.Parse and answers the level it
//     names.
//   - resources/read for the four levels (spec/finder.md, Levels):
//     Level 1 honours depth=pages with offset and limit (default 0 and 20,
//     at most 100) and answers page_offset, page_limit and page_total; a
//     window past the last page is an empty "pages" list. Level 2 honours
//     categories, and element_count counts the elements left by the filter.
//     The contents are one text resource of MIME type application/json whose
//     uri is the URI read.
//   - format=markdown|text: every level still answers its JSON object. The
//     Level-2 page carries content_markdown (or content_text) instead of
//     elements; Levels 0, 1 and 3 carry it in addition to their fields
//     (spec/decisions.md, "Finder reads"). The text is rendered by the
//     protocol module's renderer (dpe.PageMarkdown and friends), following
//     spec/finder.md, Markdown rendering.
//   - completion/complete for doc_ref → page_index → element_id, reading the
//     values already chosen from context.arguments (MCP 2025-06-18 and
//     later), prefix-matched, at most 100 values with total and hasMore.
//     element_id without a page_index completes over the whole document.
//   - notifications/resources/updated, for a changed document, to every
//     session subscribed to one of its URIs (any level, any query) or to the
//     catalog — and to no other session; notifications/resources/list_changed
//     to every session when documents were added or removed, once, and never
//     for an edit that keeps the set of documents (mcp-go's own list_changed
//     on every resource registration is turned off).
//   - initialize is answered while the Provider's first listing runs when it
//     takes longer than WithStartupWait; its documents are announced with
//     list_changed when it ends.
//
// # Errors
//
// A read that fails answers JSON-RPC error -32603 (mcp-go sends every
// handler error so, and its client keeps only the message) whose message is
// protocol.EncodeMCPErrorMessage of a *protocol.Error:
//
//	smcp-error {"code":4202,"message":"page 3 out of range: document \"rpt\" has 3 pages","details":{...}}
//
// protocol.DecodeMCPErrorMessage, which the Computer's read bridge applies,
// restores the same code, message and details, so the Agent sees exactly
// what the document server raised. The codes:
//
//	4204 invalid dpe:// URI      details {uri, rule (1–8), reason}       (dpe.Parse)
//	4201 document not found      details {uri, doc_ref}
//	                             or {uri, host} for another host's URI
//	4202 page out of range       details {uri, doc_ref, page_index, page_count}
//	4203 element not found       details {uri, doc_ref, element_id}
//	500  provider failure/panic  (logged; the message names only the URI)
//	408  the request's context ended inside the provider
//
// A Provider reports a missing document, page or element with [ErrNotFound]
// and the kit picks the code of the level; a *protocol.Error it returns is
// passed through as it is.
//
// # Notifications without loss
//
// mcp-go keeps no subscription registry and drops a notification silently
// when a session's queue (100 entries) is full. The kit tracks subscriptions
// per session with mcp-go's hooks (dropped when the session unregisters) and
// queues its notifications per session, coalesced per URI (a burst of
// updates to one document is one pending resources/updated per subscribed
// URI), then sends them blocking on the session's channel until it is taken,
// the session ends or the Server is closed. The last change of a document is
// therefore always followed by a notification. Changes come from the
// Provider's [Watcher] or from [Server.Notify]; they are processed in order
// on one goroutine owned by the Server.
//
// Sessions of the 2026-07-28 revision (subscriptions/listen) are not tracked:
// clients should pin 2025-11-25, as smcp-go's Computer does.
//
// # Transports
//
// [ServeStdio] and [ServeIO] serve stdio; [NewStreamableHTTPHandler] serves
// streamable HTTP in stateful mode (server.WithStateful(true)), so a client
// that reaches a restarted server is told its session is gone rather than
// silently losing its subscriptions. HTTP clients need
// transport.WithContinuousListening() to receive notifications while idle.
package dpekit
