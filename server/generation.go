package server

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/gorilla/websocket"
	"github.com/zishang520/socket.io/servers/socket/v3"
	"github.com/zishang520/socket.io/v3/pkg/types"
)

// This file holds what makes the Server the place where every protocol
// generation meets (spec/generations.md; spec/decisions.md, Server:
// generations): the handshake gate in front of Engine.IO, the confirmation
// of a session's generation, what a session of each generation is answered
// in, and what a Computer's answer becomes for an Agent of another
// generation.

// versionGate is the version handshake (spec/generations.md, Versions and
// negotiation): every request under the Socket.IO path, long-polling GET
// and POST and WebSocket upgrade alike, names its generation in
// a2c_version, or none for 0.2.0, and one the Server does not accept is
// refused before Engine.IO sees it, with the HTTP 400 and flat JSON body
// the 0.4 reference Servers answer (protocol.HandshakeResponse: 400 for a
// missing version under WithStrictHandshake or an invalid one, 4008 and
// the header X-A2C-Error-Code: 4008 for one of another generation). It
// reports false when it has answered r.
//
// A WebSocket is refused the same way: the gate runs before the library
// upgrades the connection, so it can always deny the upgrade over HTTP, and
// the close code 4900 that a Server which cannot (one behind an ASGI stack
// without WebSocket denial responses) uses instead never occurs here.
//
// The gate runs after the request-header bound and before the connection
// bounds (connlimit.go): a refused handshake costs neither a place among
// the connections nor any of the library's work.
// refusedVersion is the reason a handshake refused by the version gate is
// counted under (smcp_server_connection_refusals_total).
const refusedVersion = "protocol_version"

func (s *Server) versionGate(w http.ResponseWriter, r *http.Request, query url.Values) bool {
	_, perr := s.cfg.versions.Negotiate(query)
	if perr == nil {
		return true
	}
	s.connRefused(r.RemoteAddr, s.cfg.clientAddrs.of(r.Header, r.RemoteAddr), refusedVersion)
	status, headers, body := protocol.HandshakeResponse(perr)
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return false
}

// negotiated returns the generation of a handshake the gate accepted, and
// the version its client named (empty for none).
func (s *Server) negotiated(query url.Values) (protocol.Generation, string) {
	g, perr := s.cfg.versions.Negotiate(query)
	if perr != nil || !g.Valid() {
		// Not through the gate (a request the Handler did not serve):
		// what a client naming nothing speaks.
		return protocol.DefaultGeneration, ""
	}
	return g, clip(query.Get(protocol.VersionParam), 64)
}

// confirmGenerations installs the confirmation of a session's generation
// (spec/generations.md, Confirmation and extensions): the response header
// X-A2C-Version of every Engine.IO handshake the Server accepts names the
// generation it speaks with the client, "0.2.0" for one that named none.
// The long-polling open gets it with the library's own handshake headers
// (its "initial_headers", emitted only once the handshake succeeded); a
// WebSocket upgrade, whose response the library writes with the headers
// its context holds when it upgrades, gets it from an engine middleware:
// the connection's generation for the upgrade of a long-polling one,
// else the one its own query names.
func (s *Server) confirmGenerations() error {
	eng := s.io.Engine()
	if err := eng.On("initial_headers", func(args ...any) {
		if len(args) < 2 {
			return
		}
		headers, _ := args[0].(*types.ParameterBag)
		ctx, _ := args[1].(*types.HttpContext)
		if headers == nil || ctx == nil || ctx.Request() == nil {
			return
		}
		g, _ := s.negotiated(ctx.Request().URL.Query())
		headers.Set(protocol.VersionHeader, g.String())
	}); err != nil {
		return err
	}
	eng.Use(func(ctx *types.HttpContext, next func(error)) {
		if r := ctx.Request(); r != nil && websocket.IsWebSocketUpgrade(r) {
			query := r.URL.Query()
			g, _ := s.negotiated(query)
			if sid := query.Get("sid"); sid != "" {
				if c := s.conn(sid); c != nil {
					g = c.gen
				}
			}
			ctx.ResponseHeaders().Set(protocol.VersionHeader, g.String())
		}
		next(nil)
	})
	return nil
}

// Client events that every generation's Computers answer as core events
// (client:tool_call, get_tools, get_config, get_desktop): the others are
// answered only by Computers whose generation has them, or that declared
// them (session.answers).
var universalEvents = func() map[string]bool {
	out := map[string]bool{}
	for _, g := range protocol.Generations() {
		for _, info := range g.Events() {
			if info.Direction != protocol.DirectionClient {
				continue
			}
			all := true
			for _, h := range protocol.Generations() {
				if i, ok := h.Lookup(info.Name); !ok || i.Extension {
					all = false
					break
				}
			}
			out[info.Name] = all
		}
	}
	return out
}()

// anyEvent finds an event in some generation, newest first: what the
// Server answers an event the sender's generation lacks with (its ack
// arity).
func anyEvent(name string) (*protocol.EventInfo, bool) {
	gens := protocol.Generations()
	for i := len(gens) - 1; i >= 0; i-- {
		if info, ok := gens[i].Lookup(name); ok {
			return info, true
		}
	}
	return nil, false
}

// answers reports whether the Computer session sess answers event: a core
// event of its generation, or one it declared when it joined
// (spec/generations.md, Extensions). A 0.2.0 Computer that declared
// nothing answers every event of 0.2.0, its extension
// client:read_resource included, as every smcp-go Computer did before
// Computers declared their extensions (spec/decisions.md, Server:
// generations). The caller holds Server.mu.
func (sess *session) answers(event string) bool {
	return sess.gen.Answers(event, sess.extensions)
}

// notSupported is the 4106 of a request for an event its target Computer
// does not answer.
func notSupported(event, computer string, g protocol.Generation) *protocol.Error {
	return protocol.NewNotSupported("computer %q does not offer %s: its protocol generation %s does not have it and it did not declare it", clip(computer, 64), event, g).
		With("event", event).With("computer_generation", g.String())
}

// declaredExtensions returns the extensions member of a server:join_office
// request, sorted, or nil when absent (the schema has bounded it: at most
// 64 distinct client:* names).
func declaredExtensions(m map[string]any) []string {
	list, ok := m["extensions"].([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// lacksRoom is the room every session of generation g joins when g lacks
// some notification another generation has (notify:update_skills for
// 0.2.0): a notification is emitted to an office except the rooms of the
// generations that lack it (notifyExcept), on every node.
func lacksRoom(g protocol.Generation) socket.Room {
	return socket.Room("smcp:generation:" + g.String())
}

// lacksNotifications holds the generations that lack some notify:* event
// of another generation.
var lacksNotifications = func() map[protocol.Generation]bool {
	out := map[protocol.Generation]bool{}
	for _, g := range protocol.Generations() {
		for _, h := range protocol.Generations() {
			for _, info := range h.Events() {
				if info.Direction != protocol.DirectionNotify {
					continue
				}
				if _, ok := g.Lookup(info.Name); !ok {
					out[g] = true
				}
			}
		}
	}
	return out
}()

// notifyExcept lists the rooms of the generations that lack the
// notification event.
func notifyExcept(event string) []socket.Room { return notifyExcepts[event] }

// notifyExcepts holds notifyExcept's answer for every notify:* event some
// generation lacks.
var notifyExcepts = func() map[string][]socket.Room {
	out := map[string][]socket.Room{}
	for _, h := range protocol.Generations() {
		for _, info := range h.Events() {
			if info.Direction != protocol.DirectionNotify || out[info.Name] != nil {
				continue
			}
			for _, g := range protocol.Generations() {
				if _, ok := g.Lookup(info.Name); !ok {
					out[info.Name] = append(out[info.Name], lacksRoom(g))
				}
			}
		}
	}
	return out
}()

// ackError returns the ack value that answers a request of event in
// generation g with the error e: nested for 0.2.0, flat from 0.3.0 on
// (protocol.Error.In). A refusal of a client:tool_call whose code a 0.3/0.4
// reference Agent does not read as an error (only 404, 4006–4008 and
// 4014–4019 are, in an ack; see referenceError) is flat and also an
// isError CallToolResult carrying the error's text, and, for the Server's
// own timeout (408), meta.a2c_timeout, so that those Agents show the
// refusal as the failed call it is instead of failing to read it
// (spec/decisions.md, Server: generations).
func ackError(g protocol.Generation, event string, e *protocol.Error) any {
	if g.ErrorShape() != protocol.ErrorShapeFlat {
		return e // nested: *protocol.Error's own JSON
	}
	if event == protocol.EventToolCall && !referenceError(g, e.Code) {
		return toolCallRefusal{e: e, g: g}
	}
	return e.In(g)
}

// referenceError reports whether the reference Agents of generation g read
// an ack whose top-level code is c as an error: the generation's core
// codes, but 400, which only a handshake carries there
// (is_protocol_error_payload in both 0.4 references).
func referenceError(g protocol.Generation, c protocol.Code) bool {
	return c != protocol.CodeBadRequest && g.CodeStatus(c) == protocol.CodeCore
}

// toolCallRefusal is a flat error that is also an isError CallToolResult
// (ackError).
type toolCallRefusal struct {
	e *protocol.Error
	g protocol.Generation
}

func (r toolCallRefusal) MarshalJSON() ([]byte, error) {
	e := r.e
	if len(e.Fields) > 0 {
		c := *e
		c.Fields = nil
		for k, v := range e.Fields {
			switch k {
			case "content", "isError", "meta", "structuredContent":
			default:
				if c.Fields == nil {
					c.Fields = map[string]any{}
				}
				c.Fields[k] = v
			}
		}
		e = &c
	}
	flat, err := e.MarshalShape(protocol.ErrorShapeFlat)
	if err != nil {
		return nil, err
	}
	text, err := json.Marshal(e.Error())
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(flat) + len(text) + 96)
	b.Write(flat[:len(flat)-1])
	b.WriteString(`,"content":[{"type":"text","text":`)
	b.Write(text)
	b.WriteString(`}],"isError":true`)
	if e.Code == protocol.CodeTimeout {
		b.WriteString(`,"meta":{"a2c_timeout":true}`)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// errorShapeOf reads the top level of a JSON answer: ErrorShapeNested for
// an object whose one member is an "error" object, ErrorShapeFlat for an
// object with a numeric "code" (no answer of any event has one),
// ErrorShapeNone otherwise. Values are skipped, not decoded.
func errorShapeOf(raw []byte) protocol.ErrorShape {
	r := readArray(raw)
	defer r.release()
	dec := r.dec
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return protocol.ErrorShapeNone
	}
	members, nestedErr, flatCode := 0, false, false
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil || name.Kind() != '"' {
			return protocol.ErrorShapeNone
		}
		members++
		kind := dec.PeekKind()
		switch name.String() {
		case "error":
			nestedErr = kind == '{'
		case "code":
			flatCode = kind == '0'
		}
		if err := dec.SkipValue(); err != nil {
			return protocol.ErrorShapeNone
		}
	}
	switch {
	case flatCode:
		return protocol.ErrorShapeFlat
	case nestedErr && members == 1:
		return protocol.ErrorShapeNested
	}
	return protocol.ErrorShapeNone
}

var (
	codeMember     = []byte(`"code"`)
	errorMember    = []byte(`"error"`)
	bundleIDMember = []byte(`"bundle_id"`)
)

// forAgent returns a Computer's answer to the call c as the Agent's
// generation reads it (spec/decisions.md, Server: generations): an error
// in the Agent's shape (nested for 0.2.0, flat from 0.3.0 on, a
// client:tool_call refusal as ackError writes it), and the tools of a
// 0.2.0 Computer, which have no bundle_id, with one for a 0.3/0.4 Agent
// (tools named as they are, so that calls by name reach them). Anything
// else is relayed as the bytes the Computer sent. Which generation the
// Computer speaks is read from the answer itself, so that an answer from
// a Computer on another node is translated alike; a same-generation pair
// of 0.2.0 sessions, the common case, skips every check.
func (s *Server) forAgent(c *call, arg any) any {
	raw, ok := arg.(json.RawMessage)
	if !ok {
		return arg
	}
	agent := c.agent.gen
	shape := agent.ErrorShape()
	if c.computer != nil && shape == protocol.ErrorShapeNested && c.computer.gen.ErrorShape() == shape {
		return raw
	}
	if bytes.Contains(raw, codeMember) || bytes.Contains(raw, errorMember) {
		got := errorShapeOf(raw)
		if got != protocol.ErrorShapeNone {
			e, ok := protocol.DecodeError(raw)
			if !ok {
				return raw
			}
			if got == shape && (shape != protocol.ErrorShapeFlat || c.event != protocol.EventToolCall || referenceError(agent, e.Code)) {
				return raw
			}
			return ackError(agent, c.event, e)
		}
	}
	if c.event == protocol.EventGetTools && shape == protocol.ErrorShapeFlat && !bytes.Contains(raw, bundleIDMember) {
		if out, ok := withBundleIDs(raw, c.computerName); ok {
			return out
		}
	}
	return raw
}

// withBundleIDs gives every tool of a get_tools answer without a bundle_id
// the bundle_id of its Computer's name (protocol.NormalizeBundleName, or
// "computer" when nothing of the name is left): a 0.2.0 Computer does not
// say which MCP server a tool comes from, and a 0.4 Agent needs a
// bundle_id on every tool (the Rust reference fails without one). The
// other members keep their bytes.
func withBundleIDs(raw json.RawMessage, computer string) (json.RawMessage, bool) {
	var ret map[string]json.RawMessage
	if err := json.Unmarshal(raw, &ret); err != nil {
		return nil, false
	}
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(ret["tools"], &tools); err != nil || len(tools) == 0 {
		return nil, false
	}
	id := protocol.NormalizeBundleName(computer)
	if id == "" || strings.Contains(id, protocol.ToolNameSeparator) {
		id = "computer"
	}
	quoted := json.RawMessage(strconv.Quote(id))
	for _, t := range tools {
		if t == nil {
			return nil, false
		}
		if _, has := t["bundle_id"]; !has {
			t["bundle_id"] = quoted
		}
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return nil, false
	}
	ret["tools"] = b
	out, err := json.Marshal(ret)
	if err != nil {
		return nil, false
	}
	return out, true
}

// computerGone is the 404 that fails a call whose Computer disconnected
// before answering, with details.reason "computer_disconnected": for a
// 0.3/0.4 Agent the references' Computer-not-found, which is what they
// answer then.
func computerGone(c *call) *protocol.Error {
	if c.agent.gen.ErrorShape() == protocol.ErrorShapeFlat {
		return protocol.ComputerNotFound(c.agent.gen, clip(c.computerName, 64)).With("reason", "computer_disconnected")
	}
	return protocol.NewNotFound("computer %q disconnected before answering", c.computerName).With("reason", "computer_disconnected")
}

// displayVersion is what server:list_room shows of a session's protocol
// version (SessionInfo.a2c_version): the version its client named, or its
// generation's for a client that named none ("0.2.0"). The caller holds
// Server.mu, or owns sess.
func (sess *session) displayVersion() string {
	if sess.version != "" {
		return sess.version
	}
	return sess.gen.String()
}

// sessionInfo is one member of a server:list_room answer: its protocol
// version for every member, and a Computer's declared extensions. Both
// are shown to sessions of every generation: the 0.2.0 peers ignore
// members they do not know (spec/decisions.md, Server: generations).
func sessionInfo(sid, name string, role protocol.Role, office, version string, ext []string) protocol.SessionInfo {
	info := protocol.SessionInfo{Sid: sid, Name: name, Role: role, OfficeID: office, A2CVersion: version}
	if role == protocol.RoleComputer && ext != nil {
		info.Extensions = slices.Clone(ext)
	}
	return info
}

// computerRooms are the rooms a Computer joins on a cluster node (README,
// Cluster mode): computerRoom(office, name), the address of routed
// requests for the events every generation's Computers answer, and one
// room per other client:* event it answers (computerEventRoom), so that a
// request for an event it does not answer reaches no node, and the
// Agent's node answers it with 4106 from the cluster state instead of
// waiting for the timeout. The caller holds Server.mu.
func computerRooms(sess *session) []socket.Room {
	rooms := []socket.Room{computerRoom(sess.office, sess.name)}
	for _, ev := range clientEvents {
		if !universalEvents[ev] && sess.answers(ev) {
			rooms = append(rooms, computerEventRoom(sess.office, sess.name, ev))
		}
	}
	return rooms
}

// clientEvents lists every client:* event of every generation, sorted.
var clientEvents = func() []string {
	var out []string
	for ev := range universalEvents {
		out = append(out, ev)
	}
	slices.Sort(out)
	return out
}()

// routeRoom is the room a routed request for event to the Computer name of
// office is addressed to in a cluster.
func routeRoom(office, name, event string) socket.Room {
	if universalEvents[event] {
		return computerRoom(office, name)
	}
	return computerEventRoom(office, name, event)
}

// withCaller returns the request forward (the Agent's bytes, or its decoded
// value m) with protocol.CallerVersionMember naming the version of the
// Agent's generation g, for an smcp-go Computer to answer it in g
// (spec/generations.md, Confirmation and extensions). Only a Computer that
// declared extensions gets it: a reference Computer gets the request as the
// Agent sent it. The member replaces any the Agent wrote itself; otherwise
// the Agent's bytes are kept and the member appended to the object.
func withCaller(forward any, m map[string]any, g protocol.Generation) any {
	if raw, ok := forward.(json.RawMessage); ok {
		if _, forged := m[protocol.CallerVersionMember]; !forged {
			if out, ok := appendCaller(raw, g); ok {
				return out
			}
		}
	}
	out := maps.Clone(m)
	out[protocol.CallerVersionMember] = g.String()
	return out
}

// appendCaller appends protocol.CallerVersionMember naming g to raw, a
// validated request (a JSON object with members), without decoding it; ok
// is false when raw does not end as an object does.
func appendCaller(raw []byte, g protocol.Generation) (json.RawMessage, bool) {
	b := bytes.TrimRight(raw, " \t\r\n")
	if len(b) < 2 || b[len(b)-1] != '}' {
		return nil, false
	}
	out := make(json.RawMessage, 0, len(b)+len(protocol.CallerVersionMember)+16)
	out = append(out, b[:len(b)-1]...)
	if len(bytes.TrimSpace(b[1:len(b)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"`+protocol.CallerVersionMember+`":"`+g.String()+`"}`...)
	return out, true
}

// callerAware reports whether this node's session named name in office is
// an smcp-go Computer, one that declared extensions: the Computer a
// request from another node is written to gets protocol.CallerVersionMember
// then (wireEncoder, nodeCaller).
func (s *Server) callerAware(office, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.names[name]
	return t != nil && t.role == protocol.RoleComputer && t.office == office && t.extensions != nil
}
