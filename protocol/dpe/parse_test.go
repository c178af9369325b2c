package dpe_test

import (
	"errors"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

func checkValid(t *testing.T, v validVector) {
	t.Helper()
	u, err := dpe.Parse(v.URI)
	require.NoError(t, err)
	assert.Equal(t, v.Host, u.Host, "host")
	assert.Equal(t, dpe.Level(v.Level), u.Level(), "level")
	if v.DocRef == nil {
		assert.Empty(t, u.DocRef, "doc_ref")
	} else {
		assert.Equal(t, *v.DocRef, u.DocRef, "doc_ref")
	}
	if v.SubPath == nil {
		assert.Empty(t, u.SubPath(), "sub_path")
	} else {
		assert.Equal(t, *v.SubPath, u.SubPath(), "sub_path")
	}
	if v.PageIndex != nil {
		assert.True(t, u.HasPage, "has page")
		assert.Equal(t, *v.PageIndex, u.PageIndex, "page_index")
	} else {
		assert.False(t, u.HasPage, "has page")
	}
	if v.ElementID != nil {
		assert.Equal(t, *v.ElementID, u.ElementID, "element_id")
	} else {
		assert.Empty(t, u.ElementID, "element_id")
	}
	want := expectedQuery(t, v.Query)
	if len(want) == 0 {
		assert.Empty(t, u.Query, "query")
	} else {
		assert.Equal(t, want, u.Query, "query")
	}
	if v.Canonical != nil {
		assert.Equal(t, *v.Canonical, u.String(), "canonical form")
	}
	// The canonical form parses back to the same URI.
	again, err := dpe.Parse(u.String())
	require.NoError(t, err, "reparse %q", u.String())
	assert.Equal(t, u, again, "Parse(String()) of %q", u.String())
	assert.True(t, dpe.IsValid(v.URI))
}

func checkInvalid(t *testing.T, v invalidVector) {
	t.Helper()
	u, err := dpe.Parse(v.URI)
	require.Error(t, err)
	assert.Nil(t, u)
	var perr *protocol.Error
	require.True(t, errors.As(err, &perr), "error type %T", err)
	assert.Equal(t, protocol.CodeInvalidDPEURI, perr.Code)
	assert.Equal(t, v.Rule, perr.Details["rule"], "rule; reason: %v", perr.Details["reason"])
	assert.Equal(t, v.URI, perr.Details["uri"])
	assert.NotEmpty(t, perr.Details["reason"])
	assert.Contains(t, perr.Message, perr.Details["reason"])
	assert.False(t, dpe.IsValid(v.URI))
}

func TestParseConformance(t *testing.T) {
	f := conformanceVectors(t)
	for _, v := range f.Valid {
		t.Run("valid/"+v.URI, func(t *testing.T) {
			checkValid(t, v)
			// Every URI of the conformance file is already canonical.
			u, err := dpe.Parse(v.URI)
			require.NoError(t, err)
			assert.Equal(t, v.URI, u.String())
		})
	}
	for _, v := range f.Invalid {
		t.Run("invalid/"+v.URI, func(t *testing.T) { checkInvalid(t, v) })
	}
}

func TestParseExtraVectors(t *testing.T) {
	f := extraVectors(t)
	for _, v := range f.Valid {
		t.Run("valid/"+v.URI, func(t *testing.T) { checkValid(t, v) })
	}
	for _, v := range f.Invalid {
		t.Run("invalid/"+v.URI, func(t *testing.T) { checkInvalid(t, v) })
	}
}

// TestEveryRuleBothWays makes sure each of the eight rules has at least one
// passing and one failing vector across both vector files.
func TestEveryRuleBothWays(t *testing.T) {
	conf, extra := conformanceVectors(t), extraVectors(t)
	failing := map[int]int{}
	for _, v := range append(conf.Invalid, extra.Invalid...) {
		failing[v.Rule]++
	}
	// A passing case per rule: a valid URI that exercises the component
	// the rule governs.
	passing := map[int]func(u *dpe.URI) bool{
		dpe.RuleScheme:     func(u *dpe.URI) bool { return true },
		dpe.RuleHost:       func(u *dpe.URI) bool { return u.Host != "" },
		dpe.RuleSubPath:    func(u *dpe.URI) bool { return u.Level() >= dpe.LevelPage },
		dpe.RuleFormat:     func(u *dpe.URI) bool { return u.Query.Has(dpe.ParamFormat) },
		dpe.RuleDepth:      func(u *dpe.URI) bool { return u.Query.Has(dpe.ParamDepth) },
		dpe.RuleOffset:     func(u *dpe.URI) bool { return u.Query.Has(dpe.ParamOffset) },
		dpe.RuleLimit:      func(u *dpe.URI) bool { return u.Query.Has(dpe.ParamLimit) },
		dpe.RuleCategories: func(u *dpe.URI) bool { return u.Query.Has(dpe.ParamCategories) },
	}
	for rule := 1; rule <= 8; rule++ {
		assert.Positive(t, failing[rule], "no failing vector for rule %d", rule)
		n := 0
		for _, v := range append(conf.Valid, extra.Valid...) {
			u, err := dpe.Parse(v.URI)
			require.NoError(t, err)
			if passing[rule](u) {
				n++
			}
		}
		assert.Positive(t, n, "no passing vector for rule %d", rule)
	}
}

func TestAccessorsDefaults(t *testing.T) {
	u, err := dpe.Parse("dpe://h/d")
	require.NoError(t, err)
	assert.Equal(t, dpe.FormatJSON, u.Format())
	assert.Equal(t, dpe.DepthMetadata, u.Depth())
	assert.Equal(t, 0, u.Offset())
	assert.Equal(t, dpe.DefaultLimit, u.Limit())
	assert.Nil(t, u.Categories())
	assert.Nil(t, u.Query)

	u, err = dpe.Parse("dpe://h/d/pages/2?format=text&depth=pages&offset=40&limit=7&categories=table,chart,table")
	require.NoError(t, err)
	assert.Equal(t, dpe.FormatText, u.Format())
	assert.Equal(t, dpe.DepthPages, u.Depth())
	assert.Equal(t, 40, u.Offset())
	assert.Equal(t, 7, u.Limit())
	assert.Equal(t, []protocol.DPEElementCategory{protocol.DPEElementCategoryTable, protocol.DPEElementCategoryChart}, u.Categories())
	assert.Equal(t, dpe.LevelPage, u.Level())
	assert.Equal(t, "dpe://h/d/pages/2?depth=pages&offset=40&limit=7&categories=table,chart,table&format=text", u.String())
}

func TestConstructors(t *testing.T) {
	tests := []struct {
		u     *dpe.URI
		want  string
		level dpe.Level
	}{
		{dpe.CatalogURI("com.example.docs"), "dpe://com.example.docs", dpe.LevelCatalog},
		{dpe.DocumentURI("h", "annual report"), "dpe://h/annual%20report", dpe.LevelDocument},
		{dpe.PageURI("h", "d", 0), "dpe://h/d/pages/0", dpe.LevelPage},
		{dpe.PageURI("h", "d", 12), "dpe://h/d/pages/12", dpe.LevelPage},
		{dpe.ElementURI("h", "rpt", "sheet1/A1"), "dpe://h/rpt/elements/sheet1%2FA1", dpe.LevelElement},
		{dpe.ElementURI("h", "年报", "表 1"), "dpe://h/%E5%B9%B4%E6%8A%A5/elements/%E8%A1%A8%201", dpe.LevelElement},
		{dpe.PageURI("h", "d", 3).With("format", "markdown").With("categories", "table,pivot_table"),
			"dpe://h/d/pages/3?categories=table,pivot_table&format=markdown", dpe.LevelPage},
		{dpe.DocumentURI("h", "d").With("zeta", "a b+c").With("alpha", "x&y=z").With("limit", "10"),
			"dpe://h/d?limit=10&alpha=x%26y%3Dz&zeta=a%20b%2Bc", dpe.LevelDocument},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.u.String())
			assert.Equal(t, tt.level, tt.u.Level())
			back, err := dpe.Parse(tt.want)
			require.NoError(t, err)
			assert.True(t, back.Equal(tt.u), "%#v != %#v", back, tt.u)
			assert.Equal(t, tt.u, back)
		})
	}
}

func TestWithDoesNotModify(t *testing.T) {
	u := dpe.DocumentURI("h", "d").With("format", "json")
	v := u.With("format", "text")
	assert.Equal(t, "json", u.Query.Get("format"))
	assert.Equal(t, "text", v.Query.Get("format"))
	v.Query.Add("x", "1")
	assert.False(t, u.Query.Has("x"))
}

func TestDocument(t *testing.T) {
	for _, raw := range []string{"dpe://h/d", "dpe://h/d?depth=pages", "dpe://h/d/pages/4?format=text", "dpe://h/d/elements/e1"} {
		u, err := dpe.Parse(raw)
		require.NoError(t, err)
		assert.Equal(t, "dpe://h/d", u.Document().String(), raw)
		assert.Equal(t, dpe.LevelDocument, u.Document().Level())
	}
	c, err := dpe.Parse("dpe://h?format=text")
	require.NoError(t, err)
	assert.Equal(t, "dpe://h", c.Document().String())
}

func TestBuild(t *testing.T) {
	tests := []struct {
		host, doc, sub string
		params         url.Values
		want           string
	}{
		{"com.example.docs", "", "", nil, "dpe://com.example.docs"},
		{"com.example.docs", "rpt-2026", "", url.Values{"limit": {"10"}, "offset": {"0"}, "depth": {"pages"}},
			"dpe://com.example.docs/rpt-2026?depth=pages&offset=0&limit=10"},
		{"com.example.docs", "rpt-2026", "pages/0", url.Values{"format": {"markdown"}, "categories": {"table,pivot_table"}},
			"dpe://com.example.docs/rpt-2026/pages/0?categories=table,pivot_table&format=markdown"},
		{"com.example.docs", "rpt", "elements/sheet1%2FA1", nil, "dpe://com.example.docs/rpt/elements/sheet1%2FA1"},
		{"h", "annual report", "", url.Values{}, "dpe://h/annual%20report"},
	}
	for _, tt := range tests {
		got := dpe.Build(tt.host, tt.doc, tt.sub, tt.params)
		assert.Equal(t, tt.want, got)
		u, err := dpe.Parse(got)
		require.NoError(t, err)
		assert.Equal(t, got, u.String())
		assert.Equal(t, tt.sub, u.SubPath())
	}
	// A sub-path without doc-ref is written as given and fails to parse.
	bad := dpe.Build("h", "", "pages/0", nil)
	assert.Equal(t, "dpe://h//pages/0", bad)
	assert.False(t, dpe.IsValid(bad))
}

func TestCategories(t *testing.T) {
	all := dpe.Categories()
	require.Len(t, all, 19)
	assert.Equal(t, protocol.DPEElementCategoryText, all[0])
	assert.Equal(t, protocol.DPEElementCategoryWidget, all[18])
	seen := map[protocol.DPEElementCategory]bool{}
	for _, c := range all {
		got, ok := dpe.ParseCategory(string(c))
		assert.True(t, ok, c)
		assert.Equal(t, c, got)
		seen[c] = true
	}
	assert.Len(t, seen, 19)
	all[0] = "mutated"
	assert.Equal(t, protocol.DPEElementCategoryText, dpe.Categories()[0], "Categories returns a copy")
	for _, s := range []string{"", "Table", "TABLE", " table", "spreadsheet", "pivot-table"} {
		_, ok := dpe.ParseCategory(s)
		assert.False(t, ok, s)
	}
}

func TestErrorDetailsBounded(t *testing.T) {
	long := "dpe://h/d?format=" + string(make([]byte, 5000))
	_, err := dpe.Parse(long)
	var perr *protocol.Error
	require.ErrorAs(t, err, &perr)
	assert.LessOrEqual(t, len(perr.Details["uri"].(string)), 1024+len("…"))
	assert.Less(t, len(perr.Message), 400)
}

func TestLevelString(t *testing.T) {
	assert.Equal(t, "catalog", dpe.LevelCatalog.String())
	assert.Equal(t, "document", dpe.LevelDocument.String())
	assert.Equal(t, "page", dpe.LevelPage.String())
	assert.Equal(t, "element", dpe.LevelElement.String())
	assert.Equal(t, "Level(7)", dpe.Level(7).String())
}

// Appending to one parameter's values never changes another's.
func TestQueryValuesIndependent(t *testing.T) {
	u, err := dpe.Parse("dpe://h/d?a=1&b=2&c=3")
	require.NoError(t, err)
	u.Query["a"] = append(u.Query["a"], "x")
	u.Query.Add("b", "y")
	assert.Equal(t, []string{"1", "x"}, u.Query["a"])
	assert.Equal(t, []string{"2", "y"}, u.Query["b"])
	assert.Equal(t, []string{"3"}, u.Query["c"])
}
