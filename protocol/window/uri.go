// Package window implements window:// URIs, the addresses of the Desktop's
// windows (spec/desktop.md, window URIs):
//
//	window://host/seg1/seg2?priority=P&fullscreen=F
//
// host (the MCP server id) is required; the path has zero or more segments,
// each percent-encoded on its own ("c%2Fd" is one segment, "c/d"); priority
// is an integer in [0, 100] (default 0) and fullscreen a boolean written
// true/1/yes/on or false/0/no/off, case-insensitively (default false).
//
// [Parse] failures are *protocol.Error with code 400 (protocol.CodeBadRequest)
// and details {"uri", "reason"}.
//
// # Decisions on points the protocol leaves open
//
// Wire facts follow the Python SDK (a2c_smcp/utils/window_uri.py, v0.1.2):
// a priority outside [0, 100] or not an integer is refused, as is a
// fullscreen value outside the eight spellings; surrounding whitespace of
// both values is ignored (Python strips it). Beyond that the parser is
// strict, the same way as package dpe:
//
//   - Scheme and host are case-insensitive and lower-cased. The host is
//     letters, digits, '-', '.', '_' and '~': userinfo, a port or
//     percent-encoding are refused.
//   - "window://host" and "window://host/" have no segments. An empty segment
//     (a trailing slash, "//"), a dot-segment ("." or ".."), malformed
//     percent-encoding, a decoded segment that is not UTF-8, or an unencoded
//     space, control character or one of " < > \ ^ ` { | } is refused.
//     Unencoded non-ASCII letters are accepted and encoded by [URI.String].
//   - A fragment is refused.
//   - The query is decoded like application/x-www-form-urlencoded ('+' is a
//     space, a malformed escape is kept literally). priority and fullscreen
//     may appear once; present, they must be valid (an empty value is not).
//     priority is ASCII digits (leading zeros accepted, no sign). Other
//     parameters are kept in [URI.Query] and written back by [URI.String].
//   - Parse stores priority and fullscreen in Query in canonical form
//     ("07" → "7", "YES" → "true") so that Parse(u.String()) equals u.
//   - [URI.String] writes lower-case scheme and host, each segment escaped
//     except for RFC 3986 unreserved characters, then priority, fullscreen
//     and the other parameters sorted by name.
package window

import (
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/a2c-smcp/smcp-go/protocol/internal/uriscan"
)

// Priority bounds and the names of the two parameters the protocol defines.
const (
	MinPriority     = 0
	MaxPriority     = 100
	ParamPriority   = "priority"
	ParamFullscreen = "fullscreen"
)

// URI is a parsed window:// URI.
type URI struct {
	// Host is the MCP server id; never empty in a parsed URI; lower case.
	Host string
	// Segments are the decoded path segments; nil when there are none.
	Segments []string
	// Priority orders the windows of one server, higher first; 0..100, default 0.
	Priority int
	// Fullscreen asks the Desktop to render only this window of its server.
	Fullscreen bool
	// Query holds every decoded query parameter (priority and fullscreen in
	// canonical form); nil when the URI has none.
	Query url.Values
}

// String returns the canonical form of u (see the package documentation);
// Parse(u.String()) equals u for every URI Parse returns. priority is written
// when Query has it or it is not 0, fullscreen when Query has it or it is
// true; the fields, not Query, give their values.
func (u *URI) String() string {
	var b strings.Builder
	n := len("window://") + len(u.Host)
	for _, s := range u.Segments {
		n += 1 + uriscan.EscapedLen(s, false)
	}
	for k, vs := range u.Query {
		for _, v := range vs {
			n += 2 + uriscan.EscapedLen(k, true) + uriscan.EscapedLen(v, true)
		}
	}
	b.Grow(n + 32)
	b.WriteString("window://")
	b.WriteString(u.Host)
	for _, s := range u.Segments {
		b.WriteByte('/')
		uriscan.WriteEscaped(&b, s, false)
	}
	sep := byte('?')
	param := func(k, v string) {
		b.WriteByte(sep)
		sep = '&'
		uriscan.WriteEscaped(&b, k, true)
		b.WriteByte('=')
		uriscan.WriteEscaped(&b, v, true)
	}
	if u.Priority != 0 || u.Query.Has(ParamPriority) {
		param(ParamPriority, strconv.Itoa(u.Priority))
	}
	if u.Fullscreen || u.Query.Has(ParamFullscreen) {
		param(ParamFullscreen, strconv.FormatBool(u.Fullscreen))
	}
	if len(u.Query) > 0 {
		others := make([]string, 0, len(u.Query))
		for k := range u.Query {
			if k != ParamPriority && k != ParamFullscreen {
				others = append(others, k)
			}
		}
		slices.Sort(others)
		for _, k := range others {
			for _, v := range u.Query[k] {
				param(k, v)
			}
		}
	}
	return b.String()
}

// Equal reports whether u and v have the same fields and query parameters.
func (u *URI) Equal(v *URI) bool {
	if u == nil || v == nil {
		return u == v
	}
	return u.Host == v.Host && slices.Equal(u.Segments, v.Segments) && u.Priority == v.Priority &&
		u.Fullscreen == v.Fullscreen && maps.EqualFunc(u.Query, v.Query, slices.Equal)
}

// Build returns the canonical window:// URI of host and segments (each
// segment escaped on its own), with priority when it is not 0 and
// fullscreen=true when fullscreen; the defaults are left out, like the Python
// SDK's build_uri without them. Build does not validate: a priority outside
// [0, 100] or an empty host yields a URI that [Parse] refuses.
func Build(host string, segments []string, priority int, fullscreen bool) string {
	u := URI{Host: host, Segments: segments, Priority: priority, Fullscreen: fullscreen}
	return u.String()
}

// IsValid reports whether raw is a valid window:// URI ([Parse] succeeds).
func IsValid(raw string) bool {
	var u URI
	return parse(raw, &u) == nil
}
