// Package uriscan holds the byte-level scanning shared by the dpe:// and
// window:// parsers of the protocol module: RFC 3986 character classes,
// percent-decoding of path segments and form-style query components,
// escaping for the canonical forms, and small helpers for error reasons.
package uriscan

import (
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// UpperHex are the digits of a percent-escape.
const UpperHex = "0123456789ABCDEF"

// IsUnreserved reports whether c is an RFC 3986 unreserved character.
func IsUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// IsPathChar reports whether c may appear unencoded in a path segment: an
// RFC 3986 pchar (unreserved, sub-delims, ':', '@', and '%' of an escape) or
// a byte of a non-ASCII UTF-8 sequence (IRI style).
func IsPathChar(c byte) bool {
	if IsUnreserved(c) || c >= 0x80 {
		return true
	}
	switch c {
	case '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=', ':', '@', '%':
		return true
	}
	return false
}

func Unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// DecodeSegment checks the raw characters of one path segment and
// percent-decodes it strictly. The reason is "" on success.
func DecodeSegment(s string) (string, string) {
	escapes := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !IsPathChar(c) {
			return "", "unencoded character " + QuoteByte(c) + " (percent-encode it)"
		}
		if c == '%' {
			if i+2 >= len(s) {
				return "", "malformed percent-encoding"
			}
			if _, ok := Unhex(s[i+1]); !ok {
				return "", "malformed percent-encoding"
			}
			if _, ok := Unhex(s[i+2]); !ok {
				return "", "malformed percent-encoding"
			}
			escapes++
			i += 2
		}
	}
	out := s
	if escapes > 0 {
		var b strings.Builder
		b.Grow(len(s) - 2*escapes)
		for i := 0; i < len(s); i++ {
			if s[i] == '%' {
				h, _ := Unhex(s[i+1])
				l, _ := Unhex(s[i+2])
				b.WriteByte(h<<4 | l)
				i += 2
				continue
			}
			b.WriteByte(s[i])
		}
		out = b.String()
	}
	if !utf8.ValidString(out) {
		return "", "not valid UTF-8 once decoded"
	}
	return out, ""
}

// DecodeQueryComponent decodes a query name or value the way
// application/x-www-form-urlencoded does: '+' is a space and %XX a byte; a
// malformed escape is kept literally (WHATWG URL, Python's parse_qs).
func DecodeQueryComponent(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '%' || s[i] == '+' {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '+':
			b.WriteByte(' ')
		case '%':
			if i+2 < len(s) {
				h, ok1 := Unhex(s[i+1])
				l, ok2 := Unhex(s[i+2])
				if ok1 && ok2 {
					b.WriteByte(h<<4 | l)
					i += 2
					continue
				}
			}
			b.WriteByte('%')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// WriteEscaped writes s percent-encoding every byte but the unreserved ones
// (and ',' when keepComma).
func WriteEscaped(b *strings.Builder, s string, keepComma bool) {
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if IsUnreserved(c) || keepComma && c == ',' {
			continue
		}
		b.WriteString(s[start:i])
		b.WriteByte('%')
		b.WriteByte(UpperHex[c>>4])
		b.WriteByte(UpperHex[c&15])
		start = i + 1
	}
	b.WriteString(s[start:])
}

// EscapedLen is the length of s once written by WriteEscaped.
func EscapedLen(s string, keepComma bool) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if c := s[i]; !IsUnreserved(c) && !(keepComma && c == ',') {
			n += 2
		}
	}
	return n
}

// EscapeSegment returns s as one canonical path segment.
func EscapeSegment(s string) string {
	if EscapedLen(s, false) == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(EscapedLen(s, false))
	WriteEscaped(&b, s, false)
	return b.String()
}

func QuoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'" + string(rune(c)) + "'"
	}
	return "0x" + string([]byte{UpperHex[c>>4], UpperHex[c&15]})
}

// ParseUint parses ASCII digits (leading zeros allowed, no sign). ok is false
// for an empty or non-digit string; big is true when the value exceeds max.
func ParseUint(s string, max int) (n int, ok, big bool) {
	if s == "" {
		return 0, false, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false, false
		}
		if !big {
			n = n*10 + int(c-'0')
			if n > max {
				big = true
			}
		}
	}
	if big {
		return 0, true, true
	}
	return n, true, false
}

// IsSchemeChar reports whether c may appear in a URI scheme (RFC 3986 §3.1);
// first is the scheme's first character, which must be a letter.
func IsSchemeChar(c byte, first bool) bool {
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
		return true
	}
	return !first && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')
}

// SchemeEnd returns the index of the ':' ending raw's scheme, or -1 when
// raw does not start with a scheme.
func SchemeEnd(raw string) int {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == ':' {
			if i == 0 {
				return -1
			}
			return i
		}
		if !IsSchemeChar(c, i == 0) {
			return -1
		}
	}
	return -1
}

// ParseQuery splits and decodes a query string into q (allocated when
// needed); it never fails. Empty pieces are skipped. Values share one
// backing array, each with capacity 1, so appending to one value never
// overwrites another.
func ParseQuery(query string, q url.Values) url.Values {
	n := strings.Count(query, "&") + 1
	vals := make([]string, 0, n)
	for query != "" {
		var kv string
		kv, query, _ = strings.Cut(query, "&")
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		if q == nil {
			q = make(url.Values, n)
		}
		key := DecodeQueryComponent(k)
		i := len(vals)
		vals = append(vals, DecodeQueryComponent(v))
		if prev, ok := q[key]; ok {
			q[key] = append(prev, vals[i])
		} else {
			q[key] = vals[i : i+1 : i+1]
		}
	}
	return q
}

// Show quotes a value for an error reason, cut to 64 bytes.
func Show(v string) string {
	const max = 64
	if len(v) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		return strconv.Quote(v[:cut]) + "…"
	}
	return strconv.Quote(v)
}
