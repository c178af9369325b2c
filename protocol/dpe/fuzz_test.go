package dpe_test

import (
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// FuzzParse checks that Parse never panics, that every failure is a 4204
// with a rule in 1..8, and that the canonical form of a valid URI parses back
// to the same URI and is a fixed point of String. The seed corpus is every
// vector of both vector files (plus testdata/fuzz/FuzzParse).
func FuzzParse(f *testing.F) {
	for _, file := range []vectorFile{conformanceVectors(f), extraVectors(f)} {
		for _, v := range file.Valid {
			f.Add(v.URI)
		}
		for _, v := range file.Invalid {
			f.Add(v.URI)
		}
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := dpe.Parse(raw)
		if err != nil {
			var perr *protocol.Error
			if !errors.As(err, &perr) || perr.Code != protocol.CodeInvalidDPEURI {
				t.Fatalf("Parse(%q): error %v is not a 4204", raw, err)
			}
			rule, _ := perr.Details["rule"].(int)
			if rule < 1 || rule > 8 {
				t.Fatalf("Parse(%q): rule %v", raw, perr.Details["rule"])
			}
			if dpe.IsValid(raw) {
				t.Fatalf("IsValid(%q) but Parse fails", raw)
			}
			return
		}
		if !dpe.IsValid(raw) {
			t.Fatalf("Parse(%q) succeeds but not IsValid", raw)
		}
		if u.Host == "" {
			t.Fatalf("Parse(%q): empty host", raw)
		}
		s := u.String()
		if !utf8.ValidString(s) {
			t.Fatalf("String of %q is not UTF-8: %q", raw, s)
		}
		v, err := dpe.Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its String %q fails: %v", raw, s, err)
		}
		if !u.Equal(v) {
			t.Fatalf("Parse(%q) = %#v, Parse(String()=%q) = %#v", raw, u, s, v)
		}
		if s2 := v.String(); s2 != s {
			t.Fatalf("String not canonical: %q then %q", s, s2)
		}
		// Accessors never panic on a parsed URI.
		_ = u.Level()
		_ = u.SubPath()
		_, _, _, _ = u.Format(), u.Depth(), u.Offset(), u.Limit()
		_ = u.Categories()
		if d := u.Document(); d.Level() > dpe.LevelDocument {
			t.Fatalf("Document() of %q is at level %v", raw, d.Level())
		}
	})
}
