package dpe

import (
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/internal/uriscan"
)

// The validation rules of spec/finder.md, dpe URIs.
const (
	RuleScheme     = 1 // scheme must be dpe
	RuleHost       = 2 // host must not be empty
	RuleSubPath    = 3 // sub-path is pages/{non-negative integer} or elements/{non-empty}
	RuleFormat     = 4 // format is json, markdown or text
	RuleDepth      = 5 // depth is metadata or pages
	RuleOffset     = 6 // offset is a non-negative integer
	RuleLimit      = 7 // limit is an integer in [1, 100]
	RuleCategories = 8 // categories is a comma-separated list of element categories
)

// maxDetailURI bounds the raw URI echoed in error details.
const maxDetailURI = 1024

// Parse parses raw as a dpe:// URI and applies the eight validation rules of
// spec/finder.md (dpe URIs), in rule order. A failure is a *protocol.Error
// with code 4204 (protocol.CodeInvalidDPEURI) and details
// {"uri": raw, "rule": 1..8, "reason": "..."}; a raw URI longer than 1024
// bytes is cut (at a rune boundary) in the details. The package
// documentation lists how the points the spec leaves open are decided.
func Parse(raw string) (*URI, error) {
	u := new(URI)
	if err := parse(raw, u); err != nil {
		return nil, err
	}
	return u, nil
}

func invalid(raw string, rule int, reason string) *protocol.Error {
	if len(raw) > maxDetailURI {
		cut := maxDetailURI
		for cut > 0 && !utf8.RuneStart(raw[cut]) {
			cut--
		}
		raw = raw[:cut] + "…"
	}
	return &protocol.Error{
		Code:    protocol.CodeInvalidDPEURI,
		Message: "invalid dpe:// URI (rule " + strconv.Itoa(rule) + "): " + reason,
		Details: map[string]any{"uri": raw, "rule": rule, "reason": reason},
	}
}

func parse(raw string, u *URI) *protocol.Error {
	// Rule 1: the scheme.
	colon := uriscan.SchemeEnd(raw)
	if colon <= 0 {
		return invalid(raw, RuleScheme, "missing scheme: a dpe:// URI starts with \"dpe://\"")
	}
	if !strings.EqualFold(raw[:colon], "dpe") {
		return invalid(raw, RuleScheme, "scheme must be \"dpe\", got "+uriscan.Show(raw[:colon]))
	}
	rest := raw[colon+1:]

	// Rule 2: the host.
	if !strings.HasPrefix(rest, "//") {
		return invalid(raw, RuleHost, "host is empty: \"dpe:\" must be followed by \"//host\"")
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
			return invalid(raw, RuleHost, "userinfo (\"user@\") is not allowed in the host")
		case c == ':':
			return invalid(raw, RuleHost, "a port is not allowed in the host")
		default:
			return invalid(raw, RuleHost, "host contains "+uriscan.QuoteByte(c)+"; a host is letters, digits, '-', '.', '_' and '~'")
		}
	}
	if end == 0 {
		return invalid(raw, RuleHost, "host is empty")
	}
	u.Host = rest[:end]
	if upper {
		u.Host = strings.ToLower(u.Host)
	}
	rest = rest[end:]

	// Rule 3: the path (and no fragment).
	if strings.IndexByte(rest, '#') >= 0 {
		return invalid(raw, RuleSubPath, "a fragment (\"#...\") is not allowed; encode '#' in a doc-ref or element id as %23")
	}
	path, query, hasQuery := strings.Cut(rest, "?")
	if e := parsePath(raw, path, u); e != nil {
		return e
	}

	// Rules 4 to 8: the query.
	if hasQuery {
		u.Query = uriscan.ParseQuery(query, u.Query)
		return checkQuery(raw, u.Query)
	}
	return nil
}

func parsePath(raw, path string, u *URI) *protocol.Error {
	if path == "" || path == "/" {
		return nil // Level 0
	}
	p := path[1:] // path starts with '/'
	seg, p, more := strings.Cut(p, "/")
	if seg == "" {
		return invalid(raw, RuleSubPath, "doc-ref is empty")
	}
	doc, why := uriscan.DecodeSegment(seg)
	if why != "" {
		return invalid(raw, RuleSubPath, "doc-ref: "+why)
	}
	if doc == "." || doc == ".." {
		return invalid(raw, RuleSubPath, "doc-ref may not be a dot-segment (\".\" or \"..\")")
	}
	u.DocRef = doc
	if !more {
		return nil // Level 1
	}
	kind, p, more := strings.Cut(p, "/")
	switch kind {
	case "pages":
		if !more {
			return invalid(raw, RuleSubPath, "\"pages\" must be followed by \"/{N}\"")
		}
		num, _, extra := strings.Cut(p, "/")
		if extra {
			return invalid(raw, RuleSubPath, "nothing may follow \"pages/{N}\"")
		}
		n, ok, big := uriscan.ParseUint(num, maxIndex)
		if !ok {
			return invalid(raw, RuleSubPath, "page index must be a non-negative integer, got "+uriscan.Show(num))
		}
		if big {
			return invalid(raw, RuleSubPath, "page index is larger than 2147483647")
		}
		u.PageIndex, u.HasPage = n, true
		return nil
	case "elements":
		if !more {
			return invalid(raw, RuleSubPath, "\"elements\" must be followed by \"/{ID}\"")
		}
		id, _, extra := strings.Cut(p, "/")
		if extra {
			return invalid(raw, RuleSubPath, "nothing may follow \"elements/{ID}\"; encode '/' in an element id as %2F")
		}
		if id == "" {
			return invalid(raw, RuleSubPath, "element id is empty")
		}
		dec, why := uriscan.DecodeSegment(id)
		if why != "" {
			return invalid(raw, RuleSubPath, "element id: "+why)
		}
		if dec == "." || dec == ".." {
			return invalid(raw, RuleSubPath, "element id may not be a dot-segment (\".\" or \"..\")")
		}
		u.ElementID = dec
		return nil
	case "":
		if !more {
			return invalid(raw, RuleSubPath, "trailing '/' after the doc-ref")
		}
		return invalid(raw, RuleSubPath, "empty path segment after the doc-ref")
	}
	return invalid(raw, RuleSubPath, "sub-path must be \"pages/{N}\" or \"elements/{ID}\"; a doc-ref is one segment (encode '/' as %2F)")
}

// single returns the only value of a known parameter, or a rule failure when
// it is repeated.
func single(raw string, q url.Values, name string, rule int) (string, bool, *protocol.Error) {
	vs, ok := q[name]
	if !ok {
		return "", false, nil
	}
	if len(vs) != 1 {
		return "", true, invalid(raw, rule, name+" is given more than once")
	}
	return vs[0], true, nil
}

func checkQuery(raw string, q url.Values) *protocol.Error {
	if len(q) == 0 {
		return nil
	}
	if v, ok, e := single(raw, q, ParamFormat, RuleFormat); e != nil {
		return e
	} else if ok {
		switch Format(v) {
		case FormatJSON, FormatMarkdown, FormatText:
		default:
			return invalid(raw, RuleFormat, "format must be json, markdown or text, got "+uriscan.Show(v))
		}
	}
	if v, ok, e := single(raw, q, ParamDepth, RuleDepth); e != nil {
		return e
	} else if ok {
		switch Depth(v) {
		case DepthMetadata, DepthPages:
		default:
			return invalid(raw, RuleDepth, "depth must be metadata or pages, got "+uriscan.Show(v))
		}
	}
	if v, ok, e := single(raw, q, ParamOffset, RuleOffset); e != nil {
		return e
	} else if ok {
		_, num, big := uriscan.ParseUint(v, maxIndex)
		if !num {
			return invalid(raw, RuleOffset, "offset must be a non-negative integer, got "+uriscan.Show(v))
		}
		if big {
			return invalid(raw, RuleOffset, "offset is larger than 2147483647")
		}
	}
	if v, ok, e := single(raw, q, ParamLimit, RuleLimit); e != nil {
		return e
	} else if ok {
		n, num, big := uriscan.ParseUint(v, MaxLimit)
		if !num || big || n < 1 {
			return invalid(raw, RuleLimit, "limit must be an integer in [1, 100], got "+uriscan.Show(v))
		}
	}
	if v, ok, e := single(raw, q, ParamCategories, RuleCategories); e != nil {
		return e
	} else if ok {
		for s := range strings.SplitSeq(v, ",") {
			if _, known := ParseCategory(s); !known {
				if s == "" {
					return invalid(raw, RuleCategories, "categories has an empty item")
				}
				return invalid(raw, RuleCategories, "unknown element category "+uriscan.Show(s)+" (names are lower case, e.g. table, pivot_table)")
			}
		}
	}
	return nil
}
