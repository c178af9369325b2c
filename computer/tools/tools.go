// Package tools aggregates the tools of a Computer's MCP servers into the
// SMCPTool list client:get_tools answers, and runs client:tool_call
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#routed-requests).
//
// # Conversion
//
// Each MCP tool becomes an SMCPTool whose params_schema is its input schema
// and return_schema its output schema (null when it has none). meta holds
// simple values only, as the Python SDK publishes them: the tool's own
// _meta entries (strings, booleans, numbers and homogeneous arrays of them
// kept, anything else as JSON text), "a2c_tool_meta" = JSON text of the
// merged ToolMeta (the tool's tool_meta entry over the server's
// default_tool_meta, field by field) when there is one, and
// "MCP_TOOL_ANNOTATION" = JSON text of the tool's annotations when it has
// any.
//
// # Names
//
// The Set publishes two lists of the same tools, one per naming, and a
// session gets the one of its generation (List; https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#computer):
//
// 0.2.0, bare names. A tool is published under its ToolMeta alias when set
// (the merged one: default_tool_meta's alias counts), else under its MCP
// name. When two servers publish the same name and no alias separates them
// (the Python SDK refuses the whole tool list then), every tool involved is
// published as "<server>__<name>" instead, and a warning names the servers
// and suggests an alias. No server silently wins the bare name, so a name
// an Agent saw never starts calling another server's tool because a server
// started, stopped or restarted; the qualified form uses only characters
// that LLM tool-calling APIs accept. Calling the bare name then answers
// 4001 with a message listing the qualified names. A qualified name that
// itself clashes with a published name is hidden (with a warning).
//
// 0.3.0 and 0.4.0, exposed names: "{bundle_id}__{alias or name}"
// (protocol.ExposedToolName) with the tool's bundle_id member, the alias
// only from the tool's own tool_meta entry, as the 0.4 references name
// them. Bundle ids are unique per Computer, so two servers never clash;
// two aliases of one server naming the same tool: the first listed keeps
// it (a warning names the other).
//
// A call takes a name of either naming in every generation: an exposed
// name, or a bare one (a tool one server alone has, or its qualified form).
// Tools listed in forbidden_tools (by MCP name, alias or exposed name) are
// not published; calling one answers 4002.
//
// # Bounds
//
// The published list must fit one client:get_tools answer, which the Server
// refuses over its payload limit (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#limits), and every tool
// must be a valid SMCPTool (name 1–256 characters, description up to 65,536).
// A tool that is not valid, or whose own definition (JSON) exceeds
// MaxToolBytes, is withheld. When the list still exceeds the answer budget
// (WithMaxListBytes, the payload limit less room for the envelope), the
// budget is shared among the servers by max-min fairness: a server whose
// tools fit within its fair share keeps them all, and a server over its
// share keeps its first tools in listing order up to it. So one server that
// lists 100,000 tools or a 10 MB schema never takes the other servers' tools
// (or its own other tools) away. Every withheld tool is logged (WARN, with
// code 413 or 400, one record per server and reason) and listed by
// Withheld; calling it answers 4001 saying why.
//
// # Calls
//
// Call resolves the requested name (unknown: 4001; forbidden: 4002), asks
// the confirm hook unless the merged ToolMeta has auto_apply: true (no
// hook: 4005; refused: 4005), runs tools/call on the owning server and
// relays the server's CallToolResult as it is, adding a2c_tool_meta (the
// merged ToolMeta) to its metadata as the Python SDK does: _meta for 0.2.0,
// meta and _meta from 0.3.0 on (protocol.CallToolResult.SetResultMeta).
// The request's timeout bounds the whole call, the confirmation included:
// when it expires, whether the hook is still deciding or the tool still
// running, the call ends (the hook's context ends then; a hook that
// ignores it is no longer waited for, and its answer is dropped). A
// transport or JSON-RPC failure is 4003. Every failure is an error
// CallToolResult (isError true, one text content with the message,
// structuredContent {"error", "error_type", "code"}: the Python SDK's shape
// plus the protocol code), except, from 0.3.0 on, the two the 0.4
// references mark: an execution that outlives the timeout is isError with
// meta.a2c_timeout, and a call cancelled by server:tool_call_cancel (Cancel
// with its req_id) isError with meta.a2c_cancelled and a2c_cancel_reason
// "agent_requested". For 0.2.0 both are 4004, and a confirmation that
// outlives the timeout is 4004 in every generation.
//
// Every call of a known, allowed tool (confirmed, refused or failed) is
// appended to a bounded history (server, tool, time, success; 10 by default) whose
// server names order the Desktop and the Finder.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/a2c-smcp/smcp-go/computer/internal/answer"
	"github.com/a2c-smcp/smcp-go/computer/internal/clip"
	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
)

// ClashSeparator joins server and tool name for clashing tools.
const ClashSeparator = "__"

// Caller runs tools/call on one server (implemented by *mcpclient.Conn):
// the raw result JSON, or a *mcpsource.RPCError, a context error or a
// transport error.
type Caller interface {
	CallTool(ctx context.Context, name string, args map[string]any) (json.RawMessage, error)
}

// ConfirmRequest is what the confirm hook is asked about.
type ConfirmRequest struct {
	protocol.ToolCallReq
	// Server is the MCP server that owns the tool.
	Server string
	// Tool is the tool's MCP name on that server (ToolName may be an alias).
	Tool string
}

// ConfirmFunc decides whether a tool call that is not auto_apply may run.
type ConfirmFunc func(ctx context.Context, req ConfirmRequest) (bool, error)

// Record is one entry of the tool-call history.
type Record struct {
	Server  string
	Tool    string
	Time    time.Time
	Success bool
}

// Option configures a Set.
type Option func(*Set)

// WithConfirm sets the confirm hook.
func WithConfirm(f ConfirmFunc) Option { return func(s *Set) { s.confirm = f } }

// WithHistorySize bounds the history (default 10, as the Python SDK).
func WithHistorySize(n int) Option {
	return func(s *Set) {
		if n > 0 {
			s.historySize = n
		}
	}
}

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(s *Set) { s.log = l } }

// maxClashWarnings bounds the clash warnings of one rebuild.
const maxClashWarnings = 10

// MaxToolBytes bounds the JSON encoding of one published tool: a larger one
// is withheld (see the package documentation).
const MaxToolBytes = 1 << 20

// WithMaxListBytes bounds the JSON encoding of the published list: the
// Server's payload limit (default protocol.DefaultMaxPayloadBytes), of
// which a few KiB are kept for the answer's envelope. n ≤ 0 keeps the
// default.
func WithMaxListBytes(n int64) Option {
	return func(s *Set) {
		if n > 0 {
			s.maxList = n
		}
	}
}

// Withheld is a tool of an MCP server that the Set does not publish, and why.
type Withheld struct {
	Server string
	Tool   string          // its published name had it been published
	Err    *protocol.Error // 413 (too large, or over the list budget) or 400 (not a valid SMCPTool)
	e      *entry
}

type server struct {
	bundle    string // its bundle_id
	cands     []cand // its tools that are not forbidden, in listing order
	forbidden []cand // its forbidden tools (e nil)
}

// cand is a tool under the names it asks for: display, its merged alias or
// MCP name (0.2.0), and exposed, {bundle_id}__{own alias or MCP name}
// (0.3.0 on).
type cand struct {
	display string
	exposed string
	e       *entry
}

type entry struct {
	server   string
	bundle   string // the server's bundle_id, the mcp_server of 4006 and 4007
	exposed  string // its name from 0.3.0 on
	original string
	meta     *protocol.ToolMeta
	caller   Caller
	tool     protocol.SMCPTool
	size     int64 // JSON bytes of tool with its name left empty
	// Checks that do not depend on the name it is published under, made
	// once when listed rather than at every rebuild (bound).
	longDesc, longMeta bool
	order              int // position in the server's listing
}

// Set is the aggregated tool set of a Computer. Safe for concurrent use.
type Set struct {
	confirm     ConfirmFunc
	historySize int
	log         *slog.Logger
	maxList     int64

	mu       sync.Mutex
	servers  map[string]*server
	bare     view // the 0.2.0 names
	exposed  view // the 0.3.0 and 0.4.0 names
	inflight map[string]context.CancelCauseFunc
	history  []Record
}

// view is the published tools under one naming: the 0.2.0 bare names or
// the exposed names of 0.3.0 and 0.4.0.
type view struct {
	published map[string]*entry   // callable names
	forbidden map[string]string   // name -> server, for 4002
	ambiguous map[string][]string // bare: name -> qualified names; exposed: name -> MCP names dropped
	clashes   map[string][]*entry // bare name -> the tools that share it (bare view only)
	list      []protocol.SMCPTool
	withheld  map[string]Withheld // published name -> why not
}

func newView() view {
	return view{published: map[string]*entry{}, forbidden: map[string]string{}, ambiguous: map[string][]string{},
		clashes: map[string][]*entry{}, withheld: map[string]Withheld{}}
}

// New returns an empty tool set.
func New(opts ...Option) *Set {
	s := &Set{historySize: 10, log: slog.Default(), maxList: protocol.DefaultMaxPayloadBytes, servers: map[string]*server{},
		bare: newView(), exposed: newView(), inflight: map[string]context.CancelCauseFunc{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// SetMaxListBytes changes the list budget (WithMaxListBytes) and reports
// whether the published lists changed. The Computer lowers it to the
// reference Servers' message limit on a connection to a Server that did
// not confirm it is smcp-go.
func (s *Set) SetMaxListBytes(n int64) bool {
	if n <= 0 {
		n = protocol.DefaultMaxPayloadBytes
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.maxList == n {
		return false
	}
	s.maxList = n
	return s.rebuild()
}

// SetServer records the tools of one server (after it came up or sent
// tools/list_changed) and reports whether the published list changed.
// cfg.BundleID is the server's resolved bundle_id (the Computer resolves
// it from the config as written, protocol.ResolveBundleID, and keeps it
// unique); when empty, the server's name normalized
// (protocol.NormalizeBundleName) stands for it.
func (s *Set) SetServer(name string, cfg protocol.MCPServerConfigBase, caller Caller, tools []mcp.Tool) bool {
	bundle := cfg.BundleID
	if bundle == "" {
		bundle = protocol.NormalizeBundleName(name)
	}
	sv := &server{bundle: bundle}
	for i, t := range tools { // converted before taking the lock: a long list takes a while
		meta := MergedMeta(cfg, t.Name)
		display := t.Name
		if meta != nil && meta.Alias != "" {
			display = meta.Alias
		}
		own := ""
		if tm, ok := cfg.ToolMeta[t.Name]; ok {
			own = tm.Alias
		}
		exposed := protocol.ExposedToolName(bundle, t.Name, own)
		if slices.Contains(cfg.ForbiddenTools, t.Name) || slices.Contains(cfg.ForbiddenTools, display) || slices.Contains(cfg.ForbiddenTools, exposed) {
			sv.forbidden = append(sv.forbidden, cand{display: display, exposed: exposed})
			continue
		}
		e := &entry{server: name, bundle: bundle, exposed: exposed, original: t.Name, meta: meta, caller: caller, tool: Convert(t, meta), order: i}
		unnamed := e.tool
		unnamed.Name = "" // sized without its name, which rebuild chooses
		if e.size = answer.Size(unnamed); e.size > MaxToolBytes {
			e.tool = protocol.SMCPTool{Name: t.Name} // always withheld: keep its size, not its 10 MB schema
		}
		e.longDesc = utf8.RuneCountInString(e.tool.Description) > maxTextRunes
		e.longMeta = !simpleMeta(e.tool.Meta)
		sv.cands = append(sv.cands, cand{display: display, exposed: exposed, e: e})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.servers[name] = sv
	return s.rebuild()
}

// RemoveServer withdraws a server's tools (it stopped or crashed) and
// reports whether the published list changed.
func (s *Set) RemoveServer(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.servers[name]; !ok {
		return false
	}
	delete(s.servers, name)
	return s.rebuild()
}

// List is the tools published to a session of generation g, sorted by
// name (client:get_tools): bare names in 0.2.0, exposed names with their
// bundle_id from 0.3.0 on (see the package documentation).
func (s *Set) List(g protocol.Generation) []protocol.SMCPTool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.view(g).list)
}

// view is g's naming; s.mu held.
func (s *Set) view(g protocol.Generation) *view {
	if g.Handshake() {
		return &s.exposed
	}
	return &s.bare
}

// MergedMeta is the tool's tool_meta entry over default_tool_meta, field
// by field (nil when neither is set).
func MergedMeta(cfg protocol.MCPServerConfigBase, tool string) *protocol.ToolMeta {
	specific, hasSpecific := cfg.ToolMeta[tool]
	def := cfg.DefaultToolMeta
	if !hasSpecific && def == nil {
		return nil
	}
	var m protocol.ToolMeta
	if def != nil {
		m = *def
	}
	if hasSpecific {
		m = specific.Merge(m)
	}
	return &m
}

// rebuild recomputes the published names of both views; s.mu held.
func (s *Set) rebuild() bool {
	names := make([]string, 0, len(s.servers))
	for n := range s.servers {
		names = append(names, n)
	}
	sort.Strings(names)
	bare := s.rebuildBare(names)
	exposed := s.rebuildExposed(names)
	return bare || exposed
}

// rebuildExposed recomputes the exposed names, {bundle_id}__{alias or
// name}: unique across servers (bundle ids are), and within one server the
// first tool in listing order keeps a name two aliases share, as the 0.4
// references do (a warning names the others); s.mu held.
func (s *Set) rebuildExposed(names []string) bool {
	v := newView()
	logged := 0
	for _, srv := range names {
		sv := s.servers[srv]
		for _, c := range sv.cands {
			if first, taken := v.published[c.exposed]; taken {
				v.ambiguous[c.exposed] = append(v.ambiguous[c.exposed], c.e.original)
				if _, known := s.exposed.ambiguous[c.exposed]; !known {
					if logged++; logged <= maxClashWarnings {
						s.log.Warn("two tools of one MCP server share an exposed name (tool_meta aliases): the first listed keeps it",
							"tool", clip.String(c.exposed, 80), "server", srv, "kept", first.original, "dropped", c.e.original)
					}
				}
				continue
			}
			v.published[c.exposed] = c.e
		}
		for _, f := range sv.forbidden {
			v.forbidden[f.exposed] = srv
		}
	}
	for name := range v.forbidden {
		if _, ok := v.published[name]; ok {
			delete(v.forbidden, name)
		}
	}
	v.withheld = s.bound(v.published, true)
	v.list = make([]protocol.SMCPTool, 0, len(v.published))
	for name, e := range v.published {
		t := e.tool
		t.Name, t.BundleID = name, e.bundle
		v.list = append(v.list, t)
	}
	sort.Slice(v.list, func(i, j int) bool { return v.list[i].Name < v.list[j].Name })
	// A tool withheld under both names for the same reason was logged with
	// its 0.2.0 name (rebuildBare ran first).
	bare := map[*entry]protocol.Code{}
	for _, w := range s.bare.withheld {
		bare[w.e] = w.Err.Code
	}
	fresh := map[string]Withheld{}
	for name, w := range v.withheld {
		if code, ok := bare[w.e]; !ok || code != w.Err.Code {
			fresh[name] = w
		}
	}
	s.logWithheld("exposed (0.3.0, 0.4.0)", s.exposed.withheld, fresh)
	changed := !reflect.DeepEqual(v.list, s.exposed.list)
	s.exposed = v
	return changed
}

// rebuildBare recomputes the 0.2.0 names; s.mu held.
func (s *Set) rebuildBare(names []string) bool {
	byName := map[string][]cand{}
	forbidden := map[string]string{}
	for _, srv := range names {
		sv := s.servers[srv]
		for _, c := range sv.cands {
			byName[c.display] = append(byName[c.display], c)
		}
		for _, f := range sv.forbidden {
			forbidden[f.display] = srv
		}
	}
	published := map[string]*entry{}
	ambiguous := map[string][]string{}
	clashed := map[string][]*entry{}
	clashes := map[string][]cand{}
	for name, cs := range byName {
		if len(cs) == 1 {
			published[name] = cs[0].e
		} else {
			clashes[name] = cs
		}
	}
	clashNames := make([]string, 0, len(clashes))
	for name := range clashes {
		clashNames = append(clashNames, name)
	}
	sort.Strings(clashNames)
	logged := 0
	for _, name := range clashNames {
		var servers []string
		for _, c := range clashes[name] {
			servers = append(servers, c.e.server)
			q := c.e.server + ClashSeparator + name
			if _, taken := published[q]; taken {
				if logged++; logged <= maxClashWarnings {
					s.log.Warn("qualified tool name clashes with another tool: hidden", "tool", clip.String(q, 80), "server", c.e.server)
				}
				continue
			}
			published[q] = c.e
			ambiguous[name] = append(ambiguous[name], q)
			clashed[name] = append(clashed[name], c.e)
		}
		// One warning per clash, but only for clashes that are new and only
		// the first few: two servers sharing 100,000 tool names must not
		// write 100,000 warnings at every change of the tool set.
		if _, known := s.bare.ambiguous[name]; !known {
			if logged++; logged <= maxClashWarnings {
				s.log.Warn("tool name published by several MCP servers: publishing qualified names; set a tool_meta alias to choose",
					"tool", clip.String(name, 80), "servers", servers, "published_as", ambiguous[name])
			}
		}
	}
	if logged > maxClashWarnings {
		s.log.Warn("more tool name clashes than logged one by one", "clashes", logged, "logged", maxClashWarnings)
	}
	withheld := s.bound(published, false)
	list := make([]protocol.SMCPTool, 0, len(published))
	for name, e := range published {
		t := e.tool
		t.Name = name
		list = append(list, t)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	for name := range forbidden {
		if _, ok := published[name]; ok {
			delete(forbidden, name) // another server publishes it: calls go there
		}
	}
	s.logWithheld("bare (0.2.0)", s.bare.withheld, withheld)
	changed := !reflect.DeepEqual(list, s.bare.list)
	s.bare = view{published: published, forbidden: forbidden, ambiguous: ambiguous, clashes: clashed, list: list, withheld: withheld}
	return changed
}

// bound removes from published the tools that are not valid SMCPTools, are
// over MaxToolBytes, or do not fit the list budget (see the package
// documentation), and returns them.
//
// withBundle counts each tool's bundle_id member (the exposed view).
func (s *Set) bound(published map[string]*entry, withBundle bool) map[string]Withheld {
	withheld := map[string]Withheld{}
	type pub struct {
		name string
		e    *entry
		size int64
	}
	per := map[string][]pub{}
	need := map[string]int64{}
	var total int64 = 2 // []
	for name, e := range published {
		var err *protocol.Error
		size := e.size + answer.Size(name) - 2 + 1 // the name replaces "", and a comma
		if withBundle {
			size += int64(len(`,"bundle_id":`)) + answer.Size(e.bundle)
		}
		switch {
		case !validName(name):
			err = protocol.NewBadRequest("tool name %q of MCP server %q is not a valid SMCPTool name (1 to 256 characters)", clip.String(name, 80), e.server)
		case e.longDesc:
			err = protocol.NewBadRequest("the description of tool %q of MCP server %q is over %d characters", name, e.server, maxTextRunes)
		case e.longMeta:
			err = protocol.NewBadRequest("a _meta value of tool %q of MCP server %q is over %d characters", name, e.server, maxTextRunes)
		case size > MaxToolBytes:
			err = protocol.NewPayloadTooLarge("tool %q of MCP server %q has a definition of %d bytes, over the Computer's limit of %d per tool",
				name, e.server, size, MaxToolBytes).With("bytes", size).With("limit", MaxToolBytes)
		}
		if err != nil {
			withheld[name] = Withheld{Server: e.server, Tool: name, Err: err.With("server", e.server), e: e}
			delete(published, name)
			continue
		}
		per[e.server] = append(per[e.server], pub{name, e, size})
		need[e.server] += size
		total += size
	}
	budget := s.maxList - answer.Envelope - 2
	if total-2 <= budget {
		return withheld
	}
	// Max-min fairness: the servers that need least are served first, each
	// up to an equal share of what is left.
	servers := make([]string, 0, len(per))
	for srv := range per {
		servers = append(servers, srv)
	}
	sort.Slice(servers, func(i, j int) bool {
		if need[servers[i]] != need[servers[j]] {
			return need[servers[i]] < need[servers[j]]
		}
		return servers[i] < servers[j]
	})
	left := budget
	for i, srv := range servers {
		share := left / int64(len(servers)-i)
		if need[srv] <= share {
			left -= need[srv]
			continue
		}
		ps := per[srv]
		sort.Slice(ps, func(a, b int) bool { return ps[a].e.order < ps[b].e.order })
		var used int64
		full := false
		for _, p := range ps {
			if !full && used+p.size <= share {
				used += p.size
				continue
			}
			full = true // keep a prefix of the listing: no later small tool jumps ahead
			withheld[p.name] = Withheld{Server: srv, Tool: p.name, e: p.e, Err: protocol.NewPayloadTooLarge(
				"tool %q of MCP server %q does not fit the tool list: the server's tools need %d bytes, its share of the %d-byte answer is %d",
				p.name, srv, need[srv], s.maxList, share).With("server", srv).With("bytes", need[srv]).With("share", share).With("limit", s.maxList)}
			delete(published, p.name)
		}
		left -= used
	}
	return withheld
}

// logWithheld warns about the tools withheld under a naming that were not
// already (in old), one record per server and code.
func (s *Set) logWithheld(naming string, old, withheld map[string]Withheld) {
	type key struct {
		server string
		code   protocol.Code
	}
	groups := map[key][]Withheld{}
	for name, w := range withheld {
		if o, ok := old[name]; ok && o.Server == w.Server && o.Err.Code == w.Err.Code {
			continue
		}
		k := key{w.Server, w.Err.Code}
		groups[k] = append(groups[k], w)
	}
	for k, ws := range groups {
		sort.Slice(ws, func(i, j int) bool { return ws[i].Tool < ws[j].Tool })
		examples := make([]string, 0, 5)
		for _, w := range ws[:min(5, len(ws))] {
			examples = append(examples, clip.String(w.Tool, 80))
		}
		s.log.Warn("tools of an MCP server withheld from the published list; its other tools are published",
			"server", k.server, "code", int(k.code), "names", naming, "withheld", len(ws), "tools", examples, "reason", ws[0].Err.Message)
	}
}

// Withheld lists the tools that are not published to a session of
// generation g because they are invalid or too large (see the package
// documentation), by name.
func (s *Set) Withheld(g protocol.Generation) []Withheld {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.view(g)
	out := make([]Withheld, 0, len(v.withheld))
	for _, w := range v.withheld {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	return out
}

// maxNameRunes and maxTextRunes are the maxLength of an SMCPTool's name and
// of its description and meta strings (schema/smcp_tool.json).
const (
	maxNameRunes = 256
	maxTextRunes = 65536
)

func validName(name string) bool {
	n := utf8.RuneCountInString(name)
	return n >= 1 && n <= maxNameRunes
}

// simpleMeta reports whether every string of meta is within maxTextRunes.
func simpleMeta(meta map[string]any) bool {
	ok := func(v any) bool {
		str, isStr := v.(string)
		return !isStr || utf8.RuneCountInString(str) <= maxTextRunes
	}
	for _, v := range meta {
		if a, isArr := v.([]any); isArr {
			for _, x := range a {
				if !ok(x) {
					return false
				}
			}
		} else if !ok(v) {
			return false
		}
	}
	return true
}

// Convert turns an MCP tool into an SMCPTool (see the package
// documentation); meta is its merged ToolMeta or nil.
func Convert(t mcp.Tool, meta *protocol.ToolMeta) protocol.SMCPTool {
	out := protocol.SMCPTool{Name: t.Name, Description: t.Description, ParamsSchema: map[string]any{}}
	// Round-trip through mcp-go's encoding to get the schemas as the
	// server wrote them (raw or structured).
	if b, err := json.Marshal(t); err == nil {
		var m struct {
			InputSchema  map[string]any `json:"inputSchema"`
			OutputSchema map[string]any `json:"outputSchema"`
		}
		if json.Unmarshal(b, &m) == nil {
			if m.InputSchema != nil {
				out.ParamsSchema = m.InputSchema
			}
			out.ReturnSchema = m.OutputSchema
		}
	}
	md := map[string]any{}
	if t.Meta != nil {
		for k, v := range t.Meta.AdditionalFields {
			md[k] = simpleValue(v)
		}
	}
	if meta != nil {
		if b, err := json.Marshal(meta); err == nil {
			md[protocol.MetaKeyToolMeta] = string(b)
		}
	}
	if a := t.Annotations; a != (mcp.ToolAnnotation{}) {
		if b, err := json.Marshal(a); err == nil {
			md[protocol.MetaKeyAnnotation] = string(b)
		}
	}
	if len(md) > 0 {
		out.Meta = md
	}
	return out
}

// simpleValue keeps strings, booleans, numbers and homogeneous arrays of
// them; anything else becomes its JSON text.
func simpleValue(v any) any {
	switch t := v.(type) {
	case string, bool, float64, float32, int, int64, int32, json.Number:
		return t
	case []any:
		if homogeneous(t) {
			return t
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func homogeneous(a []any) bool {
	kind := ""
	for _, x := range a {
		var k string
		switch x.(type) {
		case string:
			k = "s"
		case bool:
			k = "b"
		case float64, json.Number:
			k = "n"
		default:
			return false
		}
		if kind != "" && k != kind {
			return false
		}
		kind = k
	}
	return true
}

// errorResult is the error CallToolResult of a failed call.
func errorResult(e *protocol.Error) protocol.CallToolResult {
	t := true
	text := e.Message
	return protocol.CallToolResult{
		Content:           []protocol.ContentBlock{{Type: protocol.ContentBlockTypeText, Text: &text}},
		IsError:           &t,
		StructuredContent: map[string]any{"error": e.Message, "error_type": e.Code.String(), "code": int(e.Code)},
	}
}

// ErrorResult is exported for callers that fail before reaching the set
// (for example the Computer when the request is malformed).
func ErrorResult(e *protocol.Error) protocol.CallToolResult { return errorResult(e) }

var (
	errCancelled = errors.New("cancelled by server:tool_call_cancel")
	errTimeout   = errors.New("tool call timeout")
)

// resolve finds the tool a call names, in any generation: an exposed name,
// else a 0.2.0 name (a bare name one server alone publishes, an alias, or
// the server-qualified name of a clash). When there is none it returns the
// error to answer; s.mu held.
func (s *Set) resolve(g protocol.Generation, name string) (*entry, *protocol.Error) {
	if e, ok := s.exposed.published[name]; ok {
		return e, nil
	}
	if e, ok := s.bare.published[name]; ok {
		return e, nil
	}
	for _, v := range []*view{&s.exposed, &s.bare} {
		if _, ok := v.forbidden[name]; ok {
			return nil, protocol.NewToolDisabled("tool %q is disabled by the Computer's configuration", name)
		}
		if w, ok := v.withheld[name]; ok {
			return nil, protocol.NewToolNotFound("tool %q of MCP server %q is not published: %s", clip.String(name, 80), w.Server, w.Err.Message)
		}
	}
	if es := s.bare.clashes[name]; len(es) > 0 {
		qnames := s.bare.ambiguous[name]
		if g.Handshake() {
			qnames = nil
			for _, e := range es {
				if s.exposed.published[e.exposed] == e {
					qnames = append(qnames, e.exposed)
				}
			}
			sort.Strings(qnames)
		}
		return nil, protocol.NewToolNotFound("tool %q is published by several MCP servers; call one of %s", name, strings.Join(qnames, ", "))
	}
	return nil, protocol.NewToolNotFound("tool %q not found", clip.String(name, 256))
}

// cancelled is the answer to a call cancelled by the Agent: in 0.2.0 a
// 4004 error result, from 0.3.0 on the references' cancelled result (isError,
// meta a2c_cancelled and a2c_cancel_reason "agent_requested").
func cancelled(g protocol.Generation, msg string) protocol.CallToolResult {
	if !g.Handshake() {
		return errorResult(protocol.NewToolTimeout("%s", msg))
	}
	return textResult(msg).MarkCancelled(g, protocol.CancelReasonAgent)
}

// timedOut is the answer to a call whose execution outlived its timeout: in
// 0.2.0 a 4004 error result, from 0.3.0 on the references' timed-out result
// (isError, meta a2c_timeout).
func timedOut(g protocol.Generation, msg string) protocol.CallToolResult {
	if !g.Handshake() {
		return errorResult(protocol.NewToolTimeout("%s", msg))
	}
	return textResult(msg).MarkTimedOut(g)
}

func textResult(msg string) protocol.CallToolResult {
	return protocol.CallToolResult{Content: []protocol.ContentBlock{{Type: protocol.ContentBlockTypeText, Text: &msg}}}
}

// Call runs one client:tool_call of a session of generation g (see the
// package documentation). It always returns a result; failures are error
// results.
func (s *Set) Call(ctx context.Context, g protocol.Generation, req protocol.ToolCallReq) protocol.CallToolResult {
	s.mu.Lock()
	e, rerr := s.resolve(g, req.ToolName)
	s.mu.Unlock()
	if rerr != nil {
		return errorResult(rerr)
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if req.ReqID != "" {
		s.mu.Lock()
		s.inflight[req.ReqID] = cancel
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.inflight, req.ReqID)
			s.mu.Unlock()
		}()
	}

	// The request's timeout bounds the whole call, the confirmation
	// included: the Agent waits that long (and a grace) for an answer.
	callCtx := ctx
	if req.Timeout > 0 {
		var c context.CancelFunc
		callCtx, c = context.WithTimeoutCause(ctx, time.Duration(req.Timeout)*time.Second, errTimeout)
		defer c()
	}

	if e.meta == nil || e.meta.AutoApply == nil || !*e.meta.AutoApply {
		if s.confirm == nil {
			s.record(e.server, e.original, false)
			return errorResult(protocol.NewToolRequiresConfirmation("tool %q requires confirmation and this Computer has no confirm hook", req.ToolName))
		}
		okc, err := s.askConfirm(callCtx, ConfirmRequest{ToolCallReq: req, Server: e.server, Tool: e.original})
		switch cause := context.Cause(callCtx); {
		case cause == errCancelled:
			s.record(e.server, e.original, false)
			return cancelled(g, fmt.Sprintf("tool call %s cancelled while awaiting confirmation", req.ReqID))
		case cause == errTimeout:
			// Not an execution timeout: the 0.4 references answer it as an
			// ordinary failure, without the a2c_timeout marker.
			s.record(e.server, e.original, false)
			return errorResult(protocol.NewToolTimeout("tool %q was not confirmed within its timeout of %d s", req.ToolName, req.Timeout))
		case err != nil:
			s.record(e.server, e.original, false)
			return errorResult(protocol.NewToolRequiresConfirmation("confirmation of tool %q failed: %v", req.ToolName, err))
		case !okc:
			s.record(e.server, e.original, false)
			return errorResult(protocol.NewToolRequiresConfirmation("tool call %q was not confirmed", req.ToolName))
		}
	}

	raw, err := e.caller.CallTool(callCtx, e.original, req.Params)
	if err != nil {
		s.record(e.server, e.original, false)
		switch cause := context.Cause(callCtx); {
		case cause == errCancelled:
			return cancelled(g, fmt.Sprintf("tool call %s cancelled by the agent", req.ReqID))
		case cause == errTimeout:
			return timedOut(g, fmt.Sprintf("tool %q did not finish within %d s", req.ToolName, req.Timeout))
		}
		if res, ok := AuthErrorResult(g, e.bundle, err); ok {
			return res
		}
		var rpc *mcpsource.RPCError
		if errors.As(err, &rpc) {
			return errorResult(protocol.NewToolExecutionFailed("tool %q failed: %s", req.ToolName, rpc.Message).With("mcp_code", rpc.Code))
		}
		if ctx.Err() != nil {
			return errorResult(protocol.NewToolExecutionFailed("tool %q interrupted: the Computer is shutting down", req.ToolName))
		}
		return errorResult(protocol.NewToolExecutionFailed("tool %q failed: %v", req.ToolName, err))
	}
	var res protocol.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		s.record(e.server, e.original, false)
		return errorResult(protocol.NewToolExecutionFailed("tool %q returned an invalid result: %v", req.ToolName, err))
	}
	if res.Content == nil {
		res.Content = []protocol.ContentBlock{}
	}
	meta := res.ResultMeta() // the MCP server's _meta
	if e.meta != nil {
		if meta == nil {
			meta = map[string]any{}
		}
		var mm map[string]any
		if b, err := json.Marshal(e.meta); err == nil && json.Unmarshal(b, &mm) == nil {
			meta[protocol.MetaKeyToolMeta] = mm
		}
	}
	if meta != nil {
		res.SetResultMeta(g, meta)
	}
	s.record(e.server, e.original, res.IsError == nil || !*res.IsError)
	return res
}

// askConfirm asks the confirm hook, and stops waiting for it when ctx ends
// (the request's timeout, a cancel, the Computer closing): a hook that
// ignores its context is abandoned, its late answer dropped, so that it
// never holds the Agent's call past the timeout.
func (s *Set) askConfirm(ctx context.Context, req ConfirmRequest) (bool, error) {
	type answer struct {
		ok  bool
		err error
	}
	ch := make(chan answer, 1) // the hook's goroutine never blocks on it
	go func() {
		ok, err := s.confirm(ctx, req)
		ch <- answer{ok, err}
	}()
	select {
	case a := <-ch:
		return a.ok, a.err
	case <-ctx.Done():
		return false, context.Cause(ctx)
	}
}

// Cancel cancels the in-flight call with this req_id
// (server:tool_call_cancel); false when there is none.
func (s *Set) Cancel(reqID string) bool {
	s.mu.Lock()
	cancel, ok := s.inflight[reqID]
	s.mu.Unlock()
	if ok {
		cancel(errCancelled)
	}
	return ok
}

func (s *Set) record(server, tool string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.history = append(s.history, Record{Server: server, Tool: tool, Time: time.Now(), Success: ok})
	if over := len(s.history) - s.historySize; over > 0 {
		s.history = slices.Delete(s.history, 0, over)
	}
}

// History is the bounded tool-call history, oldest first.
func (s *Set) History() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.history)
}

// HistoryServers is the server names of the history, oldest first (the
// history argument of the Desktop and Finder organizers).
func (s *Set) HistoryServers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.history))
	for i, r := range s.history {
		out[i] = r.Server
	}
	return out
}
