package window

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/internal/uriscan"
)

// maxDetailURI bounds the raw URI echoed in error details.
const maxDetailURI = 1024

// Parse parses raw as a window:// URI (spec/desktop.md, window URIs).
// A failure is a *protocol.Error with code 400 (protocol.CodeBadRequest) and
// details {"uri": raw, "reason": "..."}; a raw URI longer than 1024 bytes is
// cut (at a rune boundary) in the details.
func Parse(raw string) (*URI, error) {
	u := new(URI)
	if err := parse(raw, u); err != nil {
		return nil, err
	}
	return u, nil
}

func invalid(raw, reason string) *protocol.Error {
	if len(raw) > maxDetailURI {
		cut := maxDetailURI
		for cut > 0 && !utf8.RuneStart(raw[cut]) {
			cut--
		}
		raw = raw[:cut] + "…"
	}
	return &protocol.Error{
		Code:    protocol.CodeBadRequest,
		Message: "invalid window:// URI: " + reason,
		Details: map[string]any{"uri": raw, "reason": reason},
	}
}

func parse(raw string, u *URI) *protocol.Error {
	colon := uriscan.SchemeEnd(raw)
	if colon <= 0 {
		return invalid(raw, "missing scheme: a window URI starts with \"window://\"")
	}
	if !strings.EqualFold(raw[:colon], "window") {
		return invalid(raw, "scheme must be \"window\", got "+uriscan.Show(raw[:colon]))
	}
	rest := raw[colon+1:]
	if !strings.HasPrefix(rest, "//") {
		return invalid(raw, "missing host: \"window:\" must be followed by \"//host\"")
	}
	rest = rest[2:]
	end := len(rest)
	upper := false
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if c == '/' || c == '?' || c == '#' {
			end = i
			break
		}
		switch {
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~':
		case 'A' <= c && c <= 'Z':
			upper = true
		case c == '@':
			return invalid(raw, "userinfo (\"user@\") is not allowed in the host")
		case c == ':':
			return invalid(raw, "a port is not allowed in the host")
		default:
			return invalid(raw, "host contains "+uriscan.QuoteByte(c)+"; a host is letters, digits, '-', '.', '_' and '~'")
		}
	}
	if end == 0 {
		return invalid(raw, "missing host (the MCP server id)")
	}
	u.Host = rest[:end]
	if upper {
		u.Host = strings.ToLower(u.Host)
	}
	rest = rest[end:]
	if strings.IndexByte(rest, '#') >= 0 {
		return invalid(raw, "a fragment (\"#...\") is not allowed; encode '#' in a segment as %23")
	}
	path, query, hasQuery := strings.Cut(rest, "?")
	if path != "" && path != "/" {
		p := path[1:]
		u.Segments = make([]string, 0, strings.Count(p, "/")+1)
		for seg := range strings.SplitSeq(p, "/") {
			if seg == "" {
				return invalid(raw, "empty path segment (a trailing '/' or \"//\")")
			}
			dec, why := uriscan.DecodeSegment(seg)
			if why != "" {
				return invalid(raw, "path segment: "+why)
			}
			if dec == "." || dec == ".." {
				return invalid(raw, "path segment may not be a dot-segment (\".\" or \"..\")")
			}
			u.Segments = append(u.Segments, dec)
		}
	}
	if hasQuery {
		u.Query = uriscan.ParseQuery(query, u.Query)
		return checkQuery(raw, u)
	}
	return nil
}

// trimSpace trims ASCII whitespace, as Python's str.strip does for ASCII.
func trimSpace(s string) string {
	return strings.Trim(s, " \t\n\r\v\f")
}

func checkQuery(raw string, u *URI) *protocol.Error {
	if vs, ok := u.Query[ParamPriority]; ok {
		if len(vs) != 1 {
			return invalid(raw, "priority is given more than once")
		}
		n, num, big := uriscan.ParseUint(trimSpace(vs[0]), MaxPriority)
		if !num || big {
			return invalid(raw, "priority must be an integer in [0, 100], got "+uriscan.Show(vs[0]))
		}
		u.Priority = n
		vs[0] = strconv.Itoa(n)
	}
	if vs, ok := u.Query[ParamFullscreen]; ok {
		if len(vs) != 1 {
			return invalid(raw, "fullscreen is given more than once")
		}
		switch asciiLower(trimSpace(vs[0])) {
		case "true", "1", "yes", "on":
			u.Fullscreen = true
			vs[0] = "true"
		case "false", "0", "no", "off":
			u.Fullscreen = false
			vs[0] = "false"
		default:
			return invalid(raw, "fullscreen must be true/1/yes/on or false/0/no/off, got "+uriscan.Show(vs[0]))
		}
	}
	return nil
}

// asciiLower lower-cases ASCII letters only (Python's str.lower agrees on
// the eight spellings; Unicode folding would let look-alikes through).
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
