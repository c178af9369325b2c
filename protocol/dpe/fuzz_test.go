package dpe_test

import (
	"encoding/json"
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

// FuzzRender checks that rendering any element decoded from JSON never
// panics, whatever the shape of its content, and that every element renders
// to valid UTF-8 when its input strings are.
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		`{"element_id":"h","category":"heading","content":{"level":2,"text":"T"}}`,
		`{"element_id":"t","category":"table","content":{"headers":["a"],"rows":[["1","2"],[3,null,{"x":[1]}],"row"]}}`,
		`{"element_id":"l","category":"list","content":{"ordered":true,"items":["a\nb",1,null]}}`,
		`{"element_id":"c","category":"code","content":{"language":"go\n","code":"` + "````" + `"}}`,
		`{"element_id":"i","category":"image","content":{"alt":"[x]","url":"a (b)"}}`,
		`{"element_id":"k","category":"link","content":{"url":3}}`,
		`{"element_id":"f","category":"formula","content":null}`,
		`{"element_id":"z","category":"pivot_table","summary":"s","content":{"headers":"x","rows":{}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, js string) {
		var e protocol.DPEElement
		if json.Unmarshal([]byte(js), &e) != nil {
			return
		}
		md, txt := dpe.ElementMarkdown(e), dpe.ElementText(e)
		if utf8.ValidString(js) && (!utf8.ValidString(md) || !utf8.ValidString(txt)) {
			t.Fatalf("invalid UTF-8 output for %q", js)
		}
		title := "t"
		_ = dpe.PageMarkdown(protocol.DPEPage{Title: title, Elements: []protocol.DPEElement{e, e}})
		_ = dpe.ElementDetailText(protocol.DPEElementDetail{ElementID: e.ElementID, Category: e.Category, Content: e.Content, Metadata: e.Content})
	})
}
