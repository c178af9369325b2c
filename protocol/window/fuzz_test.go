package window_test

import (
	"errors"
	"testing"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/window"
)

// FuzzParse checks that Parse never panics, that every failure is a 400, and
// that the canonical form of a valid URI parses back to the same URI and is a
// fixed point of String. Seeds: conformance/window_uri.json and testdata/fuzz.
func FuzzParse(f *testing.F) {
	vf := loadVectors(f)
	for _, v := range vf.Valid {
		f.Add(v.URI)
	}
	for _, v := range vf.Invalid {
		f.Add(v.URI)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := window.Parse(raw)
		if err != nil {
			var perr *protocol.Error
			if !errors.As(err, &perr) || perr.Code != protocol.CodeBadRequest {
				t.Fatalf("Parse(%q): error %v is not a 400", raw, err)
			}
			if window.IsValid(raw) {
				t.Fatalf("IsValid(%q) but Parse fails", raw)
			}
			return
		}
		if u.Host == "" || u.Priority < window.MinPriority || u.Priority > window.MaxPriority {
			t.Fatalf("Parse(%q) = %#v", raw, u)
		}
		s := u.String()
		v, err := window.Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its String %q fails: %v", raw, s, err)
		}
		if !u.Equal(v) {
			t.Fatalf("Parse(%q) = %#v, Parse(String()=%q) = %#v", raw, u, s, v)
		}
		if s2 := v.String(); s2 != s {
			t.Fatalf("String not canonical: %q then %q", s, s2)
		}
	})
}
