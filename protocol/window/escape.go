package window

import (
	"strings"
	"unicode/utf8"
)

const upperhex = "0123456789ABCDEF"

// isUnreserved reports whether c is an RFC 3986 unreserved character.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// isPathChar reports whether c may appear unencoded in a path segment: an
// RFC 3986 pchar (unreserved, sub-delims, ':', '@', and '%' of an escape) or
// a byte of a non-ASCII UTF-8 sequence (IRI style).
func isPathChar(c byte) bool {
	if isUnreserved(c) || c >= 0x80 {
		return true
	}
	switch c {
	case '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=', ':', '@', '%':
		return true
	}
	return false
}

func unhex(c byte) (byte, bool) {
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

// decodeSegment checks the raw characters of one path segment and
// percent-decodes it strictly. The reason is "" on success.
func decodeSegment(s string) (string, string) {
	escapes := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isPathChar(c) {
			return "", "unencoded character " + quoteByte(c) + " (percent-encode it)"
		}
		if c == '%' {
			if i+2 >= len(s) {
				return "", "malformed percent-encoding"
			}
			if _, ok := unhex(s[i+1]); !ok {
				return "", "malformed percent-encoding"
			}
			if _, ok := unhex(s[i+2]); !ok {
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
				h, _ := unhex(s[i+1])
				l, _ := unhex(s[i+2])
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

// decodeQueryComponent decodes a query name or value the way
// application/x-www-form-urlencoded does: '+' is a space and %XX a byte; a
// malformed escape is kept literally (WHATWG URL, Python's parse_qs).
func decodeQueryComponent(s string) string {
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
				h, ok1 := unhex(s[i+1])
				l, ok2 := unhex(s[i+2])
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

// writeEscaped writes s percent-encoding every byte but the unreserved ones
// (and ',' when keepComma).
func writeEscaped(b *strings.Builder, s string, keepComma bool) {
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUnreserved(c) || keepComma && c == ',' {
			continue
		}
		b.WriteString(s[start:i])
		b.WriteByte('%')
		b.WriteByte(upperhex[c>>4])
		b.WriteByte(upperhex[c&15])
		start = i + 1
	}
	b.WriteString(s[start:])
}

// escapedLen is the length of s once written by writeEscaped.
func escapedLen(s string, keepComma bool) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isUnreserved(c) && !(keepComma && c == ',') {
			n += 2
		}
	}
	return n
}

// escapeSegment returns s as one canonical path segment.
func escapeSegment(s string) string {
	if escapedLen(s, false) == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(escapedLen(s, false))
	writeEscaped(&b, s, false)
	return b.String()
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'" + string(rune(c)) + "'"
	}
	return "0x" + string([]byte{upperhex[c>>4], upperhex[c&15]})
}

// parseUint parses ASCII digits (leading zeros allowed, no sign). ok is false
// for an empty or non-digit string; big is true when the value exceeds max.
func parseUint(s string, max int) (n int, ok, big bool) {
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
