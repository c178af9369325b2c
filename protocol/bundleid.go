package protocol

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
)

// Bundle ids (spec/generations.md, Bundle ids). From 0.3.0 on every MCP
// server of a Computer has a bundle_id, its identity: the key of the
// server in a client:get_config answer, SMCPTool.BundleID of its tools, the
// prefix of their names, and the mcp_server of 4014, 4015, 4006 and 4007.
// A config may give it explicitly; otherwise it is derived from the
// server's name, exactly as the 0.4 references derive it (Python a2c-smcp
// 0.4.2 utils/bundle_id.py, Rust smcp 0.4.1), so every SDK names the same
// server alike. conformance/bundle_id.json holds cases computed by the
// Python reference.

// ToolNameSeparator joins a bundle_id and a tool's name in the name a
// Computer exposes from 0.3.0 on; a bundle_id never contains it.
const ToolNameSeparator = "__"

// bundleFallbackPrefix starts a bundle_id derived from a connection
// identity, for a server whose name keeps no character of the id's set.
const bundleFallbackPrefix = "bundle_"

func bundleIDChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// ValidateBundleID checks an explicit bundle_id: not empty, only
// [A-Za-z0-9_-], no "__". A bad one is a *Error with code 400.
func ValidateBundleID(id string) error {
	switch {
	case id == "":
		return NewBadRequest("bundle_id must not be empty (leave it out to derive one from the name)")
	case strings.Contains(id, ToolNameSeparator):
		return NewBadRequest("bundle_id %q must not contain %q, the separator between a bundle_id and a tool name", id, ToolNameSeparator).With("bundle_id", id)
	}
	for _, r := range id {
		if !bundleIDChar(r) {
			return NewBadRequest("bundle_id %q contains %q: only [A-Za-z0-9_-] are allowed", id, r).With("bundle_id", id)
		}
	}
	return nil
}

// NormalizeBundleName turns a server name into a candidate bundle_id: each
// code point outside [A-Za-z0-9_-] becomes "_", runs of "_" become one,
// leading and trailing "_" and "-" are cut, and case is kept. The result
// may be empty.
func NormalizeBundleName(name string) string {
	var b strings.Builder
	prevUnderscore := false
	for _, r := range name {
		if !bundleIDChar(r) {
			r = '_'
		}
		if r == '_' {
			if prevUnderscore {
				continue
			}
			prevUnderscore = true
		} else {
			prevUnderscore = false
		}
		b.WriteRune(r)
	}
	return strings.Trim(b.String(), "_-")
}

// DeriveBundleID derives the bundle_id of a server config, ignoring any
// explicit one: NormalizeBundleName of its name, or, when that is empty,
// "bundle_" and the first 8 bytes (16 lowercase hex digits) of the SHA-256
// of its connection identity (ConnectionIdentity).
func DeriveBundleID(cfg MCPServerConfig) string {
	if n := NormalizeBundleName(cfg.Name()); n != "" {
		return n
	}
	sum := sha256.Sum256(ConnectionIdentity(cfg))
	return bundleFallbackPrefix + hex.EncodeToString(sum[:8])
}

// ResolveBundleID returns the bundle_id of a server config: its explicit
// bundle_id when it has one (a bad one is a *Error with code 400), else
// DeriveBundleID.
func ResolveBundleID(cfg MCPServerConfig) (string, error) {
	if id := cfg.Base().BundleID; id != "" {
		if err := ValidateBundleID(id); err != nil {
			return "", err
		}
		return id, nil
	}
	return DeriveBundleID(cfg), nil
}

// ConnectionIdentity is the byte string the fallback bundle_id is the
// digest of: a flat sequence of fields, each string a big-endian uint32
// byte length then its UTF-8 bytes, each list a uint32 count then its
// strings in order, each map a uint32 count then key and value strings by
// ascending key. stdio: "stdio", command, args, env; streamable and sse: the
// type, url, headers. The config is taken as written, before inputs are
// resolved (${input:…} stays literal), as the references do. A header
// value that is not a string, which the references cannot load, counts as
// its JSON text.
func ConnectionIdentity(cfg MCPServerConfig) []byte {
	var b []byte
	str := func(s string) {
		b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	list := func(xs []string) {
		b = binary.BigEndian.AppendUint32(b, uint32(len(xs)))
		for _, x := range xs {
			str(x)
		}
	}
	strMap := func(m map[string]string) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys) // UTF-8 byte order is code point order
		b = binary.BigEndian.AppendUint32(b, uint32(len(keys)))
		for _, k := range keys {
			str(k)
			str(m[k])
		}
	}
	headers := func(h map[string]any) map[string]string {
		out := make(map[string]string, len(h))
		for k, v := range h {
			if s, ok := v.(string); ok {
				out[k] = s
				continue
			}
			j, _ := json.Marshal(v)
			out[k] = string(j)
		}
		return out
	}
	switch {
	case cfg.Stdio != nil:
		p := cfg.Stdio.ServerParameters
		str(ServerTypeStdio)
		str(p.Command)
		list(p.Args)
		strMap(p.Env)
	case cfg.Streamable != nil:
		p := cfg.Streamable.ServerParameters
		str(ServerTypeStreamable)
		str(p.URL)
		strMap(headers(p.Headers))
	case cfg.SSE != nil:
		p := cfg.SSE.ServerParameters
		str(ServerTypeSSE)
		str(p.URL)
		strMap(headers(p.Headers))
	}
	return b
}

// ExposedToolName is the name a Computer gives a tool from 0.3.0 on:
// bundleID, "__", and the alias of the tool's own tool_meta entry, or its
// MCP name when it has none. An alias of default_tool_meta is never used
// (it would give every tool of the server one name). An Agent must treat
// the name as opaque and attribute the tool by SMCPTool.BundleID.
func ExposedToolName(bundleID, toolName, alias string) string {
	if alias == "" {
		alias = toolName
	}
	return bundleID + ToolNameSeparator + alias
}
