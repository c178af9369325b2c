// Package clip shortens strings an MCP server or a document chose before
// they reach a log line or an error message, so that one absurd name or
// URI cannot make either as large as itself.
package clip

import "unicode/utf8"

// String returns s cut to at most n bytes, at a rune boundary, with "…"
// appended when it was cut.
func String(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// Runes returns s cut to at most n runes, with "…" appended when it was
// cut.
func Runes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
