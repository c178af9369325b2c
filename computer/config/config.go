// Package config reads a Computer's MCP server configuration in the format
// of the A2C-SMCP Python SDK (a2c_smcp 0.1.2, computer/mcp_clients/model.py
// and the a2c-computer CLI), so existing configs work unchanged, and
// resolves its ${input:ID} placeholders (https://github.com/a2c-smcp/smcp-go/blob/main/spec/protocol.md#routed-requests).
//
// # Accepted files
//
// The Python CLI's --config file holds one server config object or an array
// of them, and its --inputs file one input object or an array of them. Load
// accepts both, and also the shape client:get_config answers
// ({"servers": {name: config} or [config], "inputs": [input]}), so the
// output of one Computer's configuration can be fed to another. LoadInputs
// reads a separate inputs file. A leading "@" on a path is ignored, as in the
// Python CLI.
//
// # Defaults and validation
//
// Missing disabled, forbidden_tools and tool_meta get the Python defaults
// (false, [], {}); each server is then validated against
// schema/mcp_server_config.json and each input against
// schema/mcp_server_input.json. Server names and input ids must be unique.
// Failures are *protocol.Error code 400 naming the server or input.
//
// The "vrl" field (a Vector Remap Language script of the Python SDK) is
// accepted and kept, but not applied: Resolve logs one warning naming the
// servers that set it.
//
// # Placeholders
//
// Strings anywhere in a server config may contain ${input:ID}. Resolve
// replaces them, resolving each referenced input once, in this order:
//  1. an explicit value (WithValues, the binary's --input ID=VALUE);
//  2. the environment: SMCP_INPUT_<ID> (ID upper-cased, other characters
//     than letters, digits and _ replaced by _), then a variable named
//     exactly ID;
//  3. for a command input, the trimmed standard output of its command run
//     by the shell (its args are ignored, as in the Python SDK);
//  4. the input's default;
//  5. an interactive prompt, only when a terminal is attached (passwords
//     are read without echo).
//
// An input that none of these resolves, or a placeholder naming an input
// that is neither declared nor given a value, is a startup error naming it.
// Values are never logged.
package config

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// Config is a Computer's configuration as written by its user: placeholders
// are kept, so it is what client:get_config answers (secrets typed at a
// prompt or taken from the environment never appear in it).
type Config struct {
	// Servers in file order.
	Servers []protocol.MCPServerConfig
	// Inputs in file order.
	Inputs []protocol.MCPServerInput
}

// Load reads a config file (see the package documentation for the shapes
// accepted).
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(strings.TrimPrefix(path, "@"))
	if err != nil {
		return nil, protocol.NewBadRequest("read config: %v", err)
	}
	return Parse(data)
}

// LoadInputs reads an inputs file: one input object or an array of them.
func LoadInputs(path string) ([]protocol.MCPServerInput, error) {
	data, err := os.ReadFile(strings.TrimPrefix(path, "@"))
	if err != nil {
		return nil, protocol.NewBadRequest("read inputs: %v", err)
	}
	return ParseInputs(data)
}

// Parse decodes a config: one server config object, an array of them, or
// {"servers": ..., "inputs": [...]}.
func Parse(data []byte) (*Config, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, protocol.NewBadRequest("config: empty")
	}
	var rawServers []json.RawMessage
	var rawInputs []json.RawMessage
	switch data[0] {
	case '[':
		if err := json.Unmarshal(data, &rawServers); err != nil {
			return nil, protocol.NewBadRequest("config: not a JSON array of server configs: %v", err)
		}
	case '{':
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(data, &probe); err != nil {
			return nil, protocol.NewBadRequest("config: invalid JSON: %v", err)
		}
		if _, isServer := probe["type"]; isServer {
			rawServers = []json.RawMessage{data}
			break
		}
		servers, ok := probe["servers"]
		if !ok {
			return nil, protocol.NewBadRequest(`config: want a server config (with "type"), an array of them, or {"servers": ..., "inputs": [...]}`)
		}
		var err error
		if rawServers, err = serversOf(servers); err != nil {
			return nil, err
		}
		if in, ok := probe["inputs"]; ok && !bytes.Equal(bytes.TrimSpace(in), []byte("null")) {
			if err := json.Unmarshal(in, &rawInputs); err != nil {
				return nil, protocol.NewBadRequest(`config: "inputs" must be an array: %v`, err)
			}
		}
	default:
		return nil, protocol.NewBadRequest("config: want a JSON object or array")
	}
	c := &Config{}
	names := map[string]bool{}
	for i, raw := range rawServers {
		s, err := parseServer(raw)
		if err != nil {
			return nil, protocol.AsError(err).With("index", i)
		}
		if names[s.Name()] {
			return nil, protocol.NewBadRequest("config: server name %q used twice", s.Name()).With("server", s.Name())
		}
		names[s.Name()] = true
		c.Servers = append(c.Servers, s)
	}
	inputs, err := parseInputList(rawInputs)
	if err != nil {
		return nil, err
	}
	c.Inputs = inputs
	return c, nil
}

// serversOf accepts {"name": config} (client:get_config's shape; the key
// must match the config's name when it has one) or [config].
func serversOf(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, protocol.NewBadRequest(`config: "servers": %v`, err)
		}
		return list, nil
	}
	var byName map[string]map[string]any
	if err := json.Unmarshal(raw, &byName); err != nil {
		return nil, protocol.NewBadRequest(`config: "servers" must be an object of server configs or an array: %v`, err)
	}
	keys := make([]string, 0, len(byName))
	for k := range byName {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	list := make([]json.RawMessage, 0, len(keys))
	for _, k := range keys {
		m := byName[k]
		if m == nil {
			return nil, protocol.NewBadRequest("config: server %q is null", k).With("server", k)
		}
		if n, ok := m["name"]; !ok {
			m["name"] = k
		} else if n != k {
			return nil, protocol.NewBadRequest("config: server key %q differs from its name %v", k, n).With("server", k)
		}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, protocol.NewBadRequest("config: server %q: %v", k, err)
		}
		list = append(list, b)
	}
	return list, nil
}

// parseServer applies the Python defaults, validates and decodes.
func parseServer(raw json.RawMessage) (protocol.MCPServerConfig, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return protocol.MCPServerConfig{}, protocol.NewBadRequest("config: a server config must be a JSON object")
	}
	name, _ := m["name"].(string)
	applyDefault(m, "disabled", false)
	applyDefault(m, "forbidden_tools", []any{})
	applyDefault(m, "tool_meta", map[string]any{})
	if params, ok := m["server_parameters"].(map[string]any); ok {
		applyParameterDefaults(m["type"], params)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return protocol.MCPServerConfig{}, protocol.NewBadRequest("config: server %q: %v", name, err)
	}
	if err := protocol.ValidateSchema("mcp_server_config.json", b); err != nil {
		e := protocol.AsError(err)
		return protocol.MCPServerConfig{}, e.With("server", name)
	}
	var s protocol.MCPServerConfig
	if err := json.Unmarshal(b, &s); err != nil {
		return protocol.MCPServerConfig{}, protocol.NewBadRequest("config: server %q: %v", name, err).With("server", name)
	}
	normalize(&s)
	if id := s.Base().BundleID; id != "" {
		if err := protocol.ValidateBundleID(id); err != nil {
			return protocol.MCPServerConfig{}, protocol.AsError(err).With("server", name)
		}
	}
	if _, err := TimeoutsOf(s); err != nil {
		return protocol.MCPServerConfig{}, err
	}
	return s, nil
}

// applyParameterDefaults fills the server_parameters a config left out with
// the Python SDK's defaults (those of the mcp package's parameter models),
// so that the Computer behaves as a Python Computer does and its
// client:get_config answer carries every key the Python SDK requires
// (spec/decisions.md, Configuration answers).
func applyParameterDefaults(typ any, params map[string]any) {
	switch typ {
	case "stdio":
		applyDefault(params, "args", []any{})
		applyDefault(params, "encoding", "utf-8")
		applyDefault(params, "encoding_error_handler", "strict")
		present(params, "env", "cwd")
	case "streamable":
		present(params, "headers")
		applyDefault(params, "timeout", "PT30S")
		applyDefault(params, "sse_read_timeout", "PT5M")
		applyDefault(params, "terminate_on_close", true)
	case "sse":
		present(params, "headers")
		applyDefault(params, "timeout", 5.0)
		applyDefault(params, "sse_read_timeout", 300.0)
	}
}

// present makes keys present, null when unset.
func present(m map[string]any, keys ...string) {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			m[k] = nil
		}
	}
}

// applyDefault sets m[key] to v when it is absent, null or "" (what a Go
// struct with the key left unset encodes).
func applyDefault(m map[string]any, key string, v any) {
	if cur, ok := m[key]; !ok || cur == nil || cur == "" {
		m[key] = v
	}
}

// normalize makes empty collections non-nil so the config encodes as the
// Python SDK does ([] and {} rather than null).
func normalize(s *protocol.MCPServerConfig) {
	fix := func(ft *[]string, tm *map[string]protocol.ToolMeta) {
		if *ft == nil {
			*ft = []string{}
		}
		if *tm == nil {
			*tm = map[string]protocol.ToolMeta{}
		}
	}
	switch {
	case s.Stdio != nil:
		fix(&s.Stdio.ForbiddenTools, &s.Stdio.ToolMeta)
	case s.Streamable != nil:
		fix(&s.Streamable.ForbiddenTools, &s.Streamable.ToolMeta)
	case s.SSE != nil:
		fix(&s.SSE.ForbiddenTools, &s.SSE.ToolMeta)
	}
}

// ParseInputs decodes one input object or an array of them.
func ParseInputs(data []byte) ([]protocol.MCPServerInput, error) {
	data = bytes.TrimSpace(data)
	var list []json.RawMessage
	if len(data) > 0 && data[0] == '{' {
		list = []json.RawMessage{data}
	} else if err := json.Unmarshal(data, &list); err != nil {
		return nil, protocol.NewBadRequest("inputs: want an input object or an array of them: %v", err)
	}
	return parseInputList(list)
}

func parseInputList(list []json.RawMessage) ([]protocol.MCPServerInput, error) {
	var out []protocol.MCPServerInput
	ids := map[string]bool{}
	for i, raw := range list {
		if err := protocol.ValidateSchema("mcp_server_input.json", raw); err != nil {
			return nil, protocol.AsError(err).With("index", i)
		}
		var in protocol.MCPServerInput
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, protocol.NewBadRequest("inputs[%d]: %v", i, err).With("index", i)
		}
		if ids[in.ID()] {
			return nil, protocol.NewBadRequest("input id %q used twice", in.ID()).With("input", in.ID())
		}
		ids[in.ID()] = true
		out = append(out, in)
	}
	return out, nil
}

// AddInputs appends inputs (from a separate inputs file); an id already
// present is an error.
func (c *Config) AddInputs(inputs ...protocol.MCPServerInput) error {
	ids := map[string]bool{}
	for _, in := range c.Inputs {
		ids[in.ID()] = true
	}
	for _, in := range inputs {
		if ids[in.ID()] {
			return protocol.NewBadRequest("input id %q used twice", in.ID()).With("input", in.ID())
		}
		ids[in.ID()] = true
		c.Inputs = append(c.Inputs, in)
	}
	return nil
}

// ParseServer validates one server config (JSON) and applies the Python
// defaults, as Parse does for each server of a file.
func ParseServer(raw []byte) (protocol.MCPServerConfig, error) { return parseServer(raw) }

// Put adds s or replaces the server of the same name (order kept).
func (c *Config) Put(s protocol.MCPServerConfig) {
	for i := range c.Servers {
		if c.Servers[i].Name() == s.Name() {
			c.Servers[i] = s
			return
		}
	}
	c.Servers = append(c.Servers, s)
}

// Remove drops the server named name; false when there is none.
func (c *Config) Remove(name string) bool {
	for i := range c.Servers {
		if c.Servers[i].Name() == name {
			c.Servers = append(c.Servers[:i], c.Servers[i+1:]...)
			return true
		}
	}
	return false
}

// Clone returns a copy whose server and input lists can be changed
// independently.
func (c *Config) Clone() *Config {
	return &Config{Servers: append([]protocol.MCPServerConfig(nil), c.Servers...), Inputs: append([]protocol.MCPServerInput(nil), c.Inputs...)}
}

// Server returns the server config named name.
func (c *Config) Server(name string) (protocol.MCPServerConfig, bool) {
	for _, s := range c.Servers {
		if s.Name() == name {
			return s, true
		}
	}
	return protocol.MCPServerConfig{}, false
}

// BundleIDs resolves the bundle_id of every server from the config as
// written (protocol.ResolveBundleID: explicit, else derived from the name),
// in file order, and keeps them unique as the 0.4 references do: the first
// server keeps a bundle_id, a later one that resolves to it is refused
// (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#bundle-ids).
// ids maps the name of every server kept to its bundle_id; refused maps
// the name of every other one to a 400 saying why (details: server,
// bundle_id, and the server that holds it).
func (c *Config) BundleIDs() (ids map[string]string, refused map[string]*protocol.Error) {
	ids = map[string]string{}
	holder := map[string]string{}
	for _, s := range c.Servers {
		id, err := protocol.ResolveBundleID(s)
		if err != nil {
			if refused == nil {
				refused = map[string]*protocol.Error{}
			}
			refused[s.Name()] = protocol.NewBadRequest("MCP server %q: %s", s.Name(), protocol.AsError(err).Message).With("server", s.Name())
			continue
		}
		if first, taken := holder[id]; taken {
			if refused == nil {
				refused = map[string]*protocol.Error{}
			}
			refused[s.Name()] = BundleClash(s.Name(), id, first)
			continue
		}
		holder[id] = s.Name()
		ids[s.Name()] = id
	}
	return ids, refused
}

// BundleClash is the refusal of MCP server name, whose bundle_id id server
// first already holds.
func BundleClash(name, id, first string) *protocol.Error {
	return protocol.NewBadRequest("MCP server %q has bundle_id %q, which MCP server %q already has: set a distinct bundle_id", name, id, first).
		With("server", name).With("bundle_id", id).With("held_by", first)
}

// Ret is the config as client:get_config answers it to a session of
// generation g (https://github.com/a2c-smcp/smcp-go/blob/main/spec/generations.md#computer):
// in 0.2.0 keyed by server name, without bundle_id members, pickString
// options as bare values; from 0.3.0 on keyed by bundle_id, each entry
// carrying its resolved bundle_id (a server refused for a clashing
// bundle_id is left out), pickString options as {label, value}.
func (c *Config) Ret(g protocol.Generation) protocol.GetComputerConfigRet {
	ret := protocol.GetComputerConfigRet{Servers: map[string]protocol.MCPServerConfig{}}
	if g.Handshake() {
		ids, _ := c.BundleIDs()
		for _, s := range c.Servers {
			if id, ok := ids[s.Name()]; ok {
				ret.Servers[id] = WithBundleID(s, id)
			}
		}
	} else {
		for _, s := range c.Servers {
			ret.Servers[s.Name()] = WithBundleID(s, "")
		}
	}
	for _, in := range c.Inputs {
		if in.PickString != nil {
			p := in.PickString.In(g)
			in.PickString = &p
		}
		ret.Inputs = append(ret.Inputs, in)
	}
	return ret
}

// WithBundleID returns s with its bundle_id member set to id ("": absent).
func WithBundleID(s protocol.MCPServerConfig, id string) protocol.MCPServerConfig {
	switch {
	case s.Stdio != nil:
		v := *s.Stdio
		v.BundleID = id
		s.Stdio = &v
	case s.Streamable != nil:
		v := *s.Streamable
		v.BundleID = id
		s.Streamable = &v
	case s.SSE != nil:
		v := *s.SSE
		v.BundleID = id
		s.SSE = &v
	}
	return s
}
