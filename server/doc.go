// Package server is the A2C-SMCP signalling Server: authentication, offices
// (Socket.IO rooms), routing of client:* requests to one Computer, and
// notify:* broadcasts (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md), on github.com/zishang520/socket.io
// servers/socket v3.
//
//	srv, err := server.New(server.WithAPIKeys(key))
//	mux.Handle("/socket.io/", srv.Handler()) // clients connect to <base>/smcp
//	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10}
//	...
//	err = srv.Close(ctx)
//
// The http.Server is the caller's: give it a ReadHeaderTimeout (net/http
// has none, so a client sending its headers byte by byte holds a goroutine
// and a socket for ever) and, if it likes, a MaxHeaderBytes below net/http's
// 1 MB. The Handler bounds everything after the headers itself, and refuses
// a request whose request line and headers exceed 32 KiB (431), whatever
// MaxHeaderBytes allows (https://github.com/a2c-smcp/smcp-go/blob/main/spec/decisions.md#limits-against-hostile-clients).
//
// # Authentication (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#connection-and-auth)
//
// Every connection to /smcp goes through an AuthProvider, which sees the
// handshake headers, the Socket.IO auth payload and the remote address. The
// default provider, APIKeyAuth, accepts a key from the header x-api-key (the
// name is configurable), from the auth payload's "api_key" string (browsers
// cannot set headers on websockets) or from its "token" string (where 0.3/0.4
// clients send it), the first present, compared in constant time with every
// configured key. A refusal is a Socket.IO connect error whose data is
// {"code": 401|403|429|500, "message"} (429: the key's Key.MaxSessions are
// all in use). New refuses to build a Server without
// authentication; InsecureNoAuth must be chosen explicitly. Keys and auth
// payloads are never logged. The default namespace "/" refuses everyone.
//
// # Protocol generations (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md)
//
// Every request under the Socket.IO path passes a version gate before
// Engine.IO sees it: the client names its version in a2c_version (none means
// 0.2.0), and a version of a generation the Server does not accept
// (WithProtocolGenerations; default 0.2, 0.3 and 0.4) is refused with HTTP
// 400 and the 0.4 references' flat body (4008 with the accepted range, or 400
// for a version that is not one, or for none under WithStrictHandshake). The
// accepted handshake names the generation in the response header
// X-A2C-Version. Each session is then answered in its generation: requests
// validated against it, errors in its shape (nested for 0.2.0, flat from
// 0.3.0 on), its events routed, notifications it lacks not sent; a request
// for an event the target Computer does not answer is 4106 at once, and a
// Computer's error reaches an Agent of another generation in the Agent's
// shape (spec/decisions.md, Server: generations).
//
// # Offices (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#offices)
//
// server:join_office and server:leave_office answer two ack values,
// (true, null) or (false, reason). The reason is the text of the
// *protocol.Error behind the refusal, "<code> <Name>: <message>", so clients
// that only show it still see the protocol code, e.g.
//
//	4101 RoomFull: office "o1" already has an agent
//
// Codes used: 400 (schema), 403 (role fixed per session; Agent already in
// another office; name held by another live session, including a second
// Computer of the same name in one office; renaming inside the office one is
// in; an office or role outside the key's Grant), 4101 (second Agent), 4105
// (office at WithMaxOfficeSize), 4102 (leaving an office that does not
// exist), 4103 (leaving an office the session is not in). Joining the office one is
// in under the same name is a no-op success without broadcast. A Computer
// joining another office leaves its old one first (notify:leave_office there)
// and may take a new name. Names are registered namespace-wide while a
// session is in an office and released when it leaves or disconnects; a role,
// once set by a successful join, stays for the session's life.
// notify:enter_office follows a join and notify:leave_office precedes a
// leave (explicit, switch, disconnect), both skipping the session itself.
// Disconnect cleanup is idempotent.
//
// # Routing (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#routed-requests)
//
// Every client:* request (client:read_resource included) is checked in this
// order: schema (400, listing every failing path), sender is an Agent (403
// for a Computer) inside an office (4103), the agent field is the sender's
// registered name (403), the Computer exists in the sender's office (404,
// the same answer for a name that exists elsewhere, so that nothing is
// learnt about other offices), it answers the event in its generation or
// declared it (4106), the in-flight caps (429), neither side is congested
// (503). It is then emitted to that Computer's socket only, under a timer of
// the Server's own: the request's timeout plus WithToolCallMargin (5 s) for
// client:tool_call, WithRequestTimeout (30 s) for the others; expiry answers
// 408. The Computer's single ack value goes back unchanged; any other number
// of values is a 500. With WithValidateAnswers the value is first checked
// against the event's ack schema (500 listing the paths when it fails). A
// Computer that disconnects fails its requests in flight at once with 404
// ("computer ... disconnected before answering", details.reason
// "computer_disconnected"); an answer to an Agent that left is dropped.
//
// # Updates and cancellation
//
// server:update_{config,tool_list,desktop,finder,skills} are accepted from a
// Computer inside an office naming itself, and broadcast as notify:update_*
// {computer} to its office, skipping it. server:tool_call_cancel is accepted
// from the Agent named in it, inside an office, and its agent and req_id are
// broadcast as notify:tool_call_cancel to that office, skipping it.
// server:tool_progress (an smcp-go extension) is accepted from the Computer a
// client:tool_call or client:read_resource that asked for progress was
// routed to, while the request is in flight, and relayed as
// notify:tool_progress to that request's Agent only, at most 20 a second
// per request (progress.go; across cluster nodes, cluster_progress.go).
// These events define no
// ack: a refusal is a log line (with req_id when there is one). A client that
// asks for an ack anyway gets no value on success and the ErrorPayload on
// refusal. notify:* events sent by clients are refused (403).
//
// # Bad input
//
// Requests of a known event with other than one payload argument are 400;
// unknown events are logged and, when the sender asked for an ack, answered
// 400. A packet the Socket.IO decoder cannot parse closes that connection
// (library rule). A message larger than WithMaxPayloadBytes (8 MiB) closes
// its sender's connection: one Socket.IO message carries one event or one
// ack, so the engine's limit is the per-event limit. Handlers recover
// panics: the sender gets a 500 and the panic is logged. Nothing of this
// affects other connections or offices.
//
// # Limits (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#limits)
//
// Every resource a client controls is bounded, each by an option: binary
// packets close the connection at once (SMCP is JSON only; wire.go);
// strings are bounded by the schemas' maxLength (400); a connection whose
// peer does not read is congested past WithMaxOutgoingBytes (requests to and
// from it answer 503) and closed after WithStallTimeout or at twice the
// bound; WithMaxInFlight bounds the routed requests of an Agent and to a
// Computer (429); WithMaxToolCallTimeout bounds a tool call's timeout (400);
// WithMaxOfficeSize bounds an office (4105); WithMaxAuthFailures refused
// CONNECTs close a connection, and one not admitted within
// WithConnectTimeout is closed, on every transport, and holds nothing
// afterwards. The connections are bounded in all (WithMaxConnections, 503
// at the handshake), those not admitted yet apart
// (WithMaxPendingConnections, 503), and one client address may hold only a
// share of those (WithMaxPendingPerAddress, an eighth by default, 429);
// behind reverse proxies, WithTrustedProxies names the proxies whose header
// says who the client is. KeyAuth and WithKeys scope keys to offices and
// roles (403 outside them); keys are logged by id, never by secret.
//
// # Shutdown
//
// Close refuses new connections, lets routed requests in flight finish until
// its context ends (then answers them 500), makes every session leave its
// office (notify:leave_office to the remaining members, flushed to the
// transports while the context allows), then closes the transports: clients
// see a transport close and reconnect to the next server.
//
// # Several nodes (README.md, Cluster mode)
//
// WithRedis makes the Server one node of a cluster on a Redis ≥ 7: names,
// roles and offices are kept in Redis and admitted atomically, notify:*
// reach office members on every node, and client:* reach a Computer on
// any node with the same checks and codes. Each node holds a lease
// (WithNodeLease); when it expires the others free its sessions, tell its
// offices and fail the requests routed to its Computers with 503. Without
// WithRedis no Redis code runs.
//
// # Operations (README.md, Operations)
//
// WithMetrics registers Prometheus metrics on a registry of the caller's;
// Ready reports whether the Server takes new sessions.
package server
