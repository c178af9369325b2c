package docserver

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// DocRef returns the doc_ref of a file from its path relative to the served
// folder, written with '/' separators ("reports/q3.md").
//
// The mapping is stable (a pure function of the path), yields only RFC 3986
// unreserved characters (so the doc_ref is URL-safe and one dpe:// path
// segment without any percent-encoding), and is injective:
//
//   - A path made only of ASCII letters, digits, '-', '.', '_' and '/' maps
//     to itself with every '/' replaced by '~': "reports/q3.md" →
//     "reports~q3.md". Such paths cannot contain '~', so the replacement is
//     reversed by replacing '~' with '/'.
//   - Any other path (spaces, non-ASCII letters, '~', …) maps to a readable
//     stem — '/' as '~', every run of other characters as '_' — followed by
//     "~~" and the first 12 hex digits of the SHA-256 of the path:
//     "Q3 report.md" → "Q3_report.md~~<12 hex>". "~~" never occurs in the
//     first form (a clean relative path has no empty segment), so the two
//     forms never collide.
func DocRef(rel string) string {
	if plainPath(rel) {
		return strings.ReplaceAll(rel, "/", "~")
	}
	var b strings.Builder
	run := false
	for i := 0; i < len(rel); i++ {
		c := rel[i]
		switch {
		case c == '/':
			b.WriteByte('~')
			run = false
		case plainByte(c):
			b.WriteByte(c)
			run = false
		case !run:
			b.WriteByte('_')
			run = true
		}
	}
	sum := sha256.Sum256([]byte(rel))
	b.WriteString("~~")
	b.WriteString(hex.EncodeToString(sum[:])[:12])
	return b.String()
}

func plainByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_'
}

func plainPath(rel string) bool {
	if rel == "" || strings.HasPrefix(rel, "/") || strings.HasSuffix(rel, "/") || strings.Contains(rel, "//") {
		return false
	}
	for i := 0; i < len(rel); i++ {
		if c := rel[i]; c != '/' && !plainByte(c) {
			return false
		}
	}
	return true
}
