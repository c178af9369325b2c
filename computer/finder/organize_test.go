package finder

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// conformance returns the path of a file of the repository's conformance
// suite (conformance/ at the repository root).
func conformance(name string) string {
	return filepath.Join("..", "..", "conformance", name)
}

type organizeVectors struct {
	Documents []protocol.DPEDocumentSummary `json:"documents"`
	Cases     []struct {
		Name       string   `json:"name"`
		Keywords   []string `json:"keywords"`
		FileType   string   `json:"file_type"`
		Offset     int      `json:"offset"`
		Limit      int      `json:"limit"`
		History    []string `json:"history"`
		Expect     []string `json:"expect"`
		TotalCount int      `json:"total_count"`
	} `json:"cases"`
}

func loadVectors(t testing.TB) organizeVectors {
	b, err := os.ReadFile(conformance("organize_finder.json"))
	require.NoError(t, err)
	var v organizeVectors
	require.NoError(t, json.Unmarshal(b, &v))
	require.NotEmpty(t, v.Cases)
	return v
}

func refs(docs []protocol.DPEDocumentSummary) []string {
	out := make([]string, 0, len(docs))
	for _, d := range docs {
		out = append(out, d.DocRef)
	}
	return out
}

func TestOrganizeVectors(t *testing.T) {
	v := loadVectors(t)
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			q := Query{Keywords: c.Keywords, FileType: c.FileType, Offset: c.Offset, Limit: c.Limit}
			got, total := Organize(v.Documents, q, c.History)
			assert.Equal(t, c.Expect, refs(got))
			assert.Equal(t, c.TotalCount, total)
		})
	}
}

// The cache path (prepared entries, as Aggregator.Query uses them) must give
// the same answers as Organize.
func TestOrganizeVectorsPrepared(t *testing.T) {
	v := loadVectors(t)
	ix := cachedIndex(v.Documents)
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			q := Query{Keywords: c.Keywords, FileType: c.FileType, Offset: c.Offset, Limit: c.Limit}
			got, total := organize(ix, q, c.History)
			assert.Equal(t, c.Expect, refs(got))
			assert.Equal(t, c.TotalCount, total)
		})
	}
}

func str(s string) *string { return &s }

func doc(ref, server, lm string) protocol.DPEDocumentSummary {
	d := protocol.DPEDocumentSummary{DocRef: ref, URI: "dpe://" + server + ".h/" + ref, Server: server,
		FileType: "pdf", FileURI: "file:///" + ref, Title: "T " + ref, PageCount: 1}
	if lm != "" {
		d.LastModified = lm
	}
	return d
}

func TestOrganize(t *testing.T) {
	many := make([]protocol.DPEDocumentSummary, 0, 150)
	for i := range 150 {
		many = append(many, doc(string(rune('a'+i/26))+string(rune('a'+i%26)), "s", ""))
	}
	for _, tc := range []struct {
		name    string
		docs    []protocol.DPEDocumentSummary
		q       Query
		history []string
		want    []string
		total   int
	}{
		{name: "nil input", want: []string{}, total: 0},
		{name: "empty input with filters", docs: []protocol.DPEDocumentSummary{}, q: Query{Keywords: []string{"x"}, FileType: "pdf"}, want: []string{}, total: 0},
		{name: "limit 0 means the default 20", docs: many, q: Query{Limit: 0}, want: refs(many[:20]), total: 150},
		{name: "negative limit means the default", docs: many, q: Query{Limit: -5}, want: refs(many[:20]), total: 150},
		{name: "limit above 100 is 100", docs: many, q: Query{Limit: 1000}, want: refs(many[:100]), total: 150},
		{name: "limit exactly 100", docs: many, q: Query{Limit: 100, Offset: 100}, want: refs(many[100:150]), total: 150},
		{name: "limit 1", docs: many, q: Query{Limit: 1, Offset: 149}, want: refs(many[149:]), total: 150},
		{name: "offset equal to total", docs: many, q: Query{Offset: 150}, want: []string{}, total: 150},
		{name: "negative offset is 0", docs: many, q: Query{Offset: -3, Limit: 2}, want: refs(many[:2]), total: 150},
		{
			name: "instants compared across offsets, fractions and case",
			docs: []protocol.DPEDocumentSummary{
				doc("utc", "s", "2026-01-01T00:00:00Z"),            // 00:00Z
				doc("east", "s", "2026-01-01T08:30:00+08:00"),      // 00:30Z
				doc("west", "s", "2025-12-31T19:15:00-05:00"),      // 00:15Z
				doc("frac", "s", "2026-01-01T00:00:00.5z"),         // 00:00:00.5Z
				doc("lower-t", "s", "2026-01-01t00:00:00.25Z"),     // 00:00:00.25Z
				doc("no-offset", "s", "2026-01-01T00:20:00"),       // UTC: 00:20Z
				doc("date", "s", "2026-01-02"),                     // next day
				doc("garbage", "s", "yesterday"),                   // like missing
				doc("missing", "s", ""),                            // last
				doc("empty", "s", " "),                             // like missing
				doc("leap", "s", "2026-01-01T00:00:00.123456789Z"), // 00:00:00.123456789Z
			},
			want:  []string{"date", "east", "no-offset", "west", "frac", "lower-t", "leap", "utc", "garbage", "missing", "empty"},
			total: 11,
		},
		{
			name: "equal instants keep input order",
			docs: []protocol.DPEDocumentSummary{
				doc("x", "s", "2026-01-01T01:00:00+01:00"), doc("y", "s", "2026-01-01T00:00:00Z"), doc("z", "s", "2026-01-01T00:00:00Z"),
			},
			want: []string{"x", "y", "z"}, total: 3,
		},
		{
			name:    "history: most recent first, duplicates ignored, unknown servers harmless",
			docs:    []protocol.DPEDocumentSummary{doc("a", "a", ""), doc("b", "b", ""), doc("c", "c", ""), doc("d", "d", "")},
			history: []string{"c", "zz", "b", "c", "a", "c"},
			want:    []string{"c", "a", "b", "d"}, total: 4,
		},
		{
			name: "page spanning servers",
			docs: []protocol.DPEDocumentSummary{doc("a1", "a", ""), doc("a2", "a", ""), doc("b1", "b", ""), doc("b2", "b", ""), doc("c1", "c", "")},
			q:    Query{Offset: 1, Limit: 3},
			want: []string{"a2", "b1", "b2"}, total: 5,
		},
		{
			name: "keywords match inside the joined keyword list and ignore case",
			docs: func() []protocol.DPEDocumentSummary {
				d1 := doc("k1", "s", "")
				d1.Keywords = []string{"Quarterly", "Report"}
				d2 := doc("k2", "s", "")
				d2.Summary = "a QUARTERLY review"
				d3 := doc("k3", "s", "")
				return []protocol.DPEDocumentSummary{d1, d2, d3}
			}(),
			q:    Query{Keywords: []string{"quarterly report"}},
			want: []string{"k1"}, total: 1,
		},
		{
			name: "an empty keyword matches everything",
			docs: []protocol.DPEDocumentSummary{doc("a", "s", ""), doc("b", "s", "")},
			q:    Query{Keywords: []string{""}},
			want: []string{"a", "b"}, total: 2,
		},
		{
			name: "invalid URIs dropped by the eight rules, not by prefix",
			docs: func() []protocol.DPEDocumentSummary {
				ok := doc("ok", "s", "")
				badPage := doc("bad-page", "s", "")
				badPage.URI = "dpe://s.h/doc/pages/x"
				badLimit := doc("bad-limit", "s", "")
				badLimit.URI = "dpe://s.h/doc?limit=1000"
				other := doc("other", "s", "")
				other.URI = "window://s.h/doc"
				empty := doc("empty", "s", "")
				empty.URI = ""
				return []protocol.DPEDocumentSummary{badPage, ok, badLimit, other, empty}
			}(),
			want: []string{"ok"}, total: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, total := Organize(tc.docs, tc.q, tc.history)
			require.NotNil(t, got)
			assert.Equal(t, tc.want, refs(got))
			assert.Equal(t, tc.total, total)
		})
	}
}

func TestQueryFrom(t *testing.T) {
	q := QueryFrom(protocol.GetFinderReq{Keywords: []string{"a"}, FileType: "pdf", Offset: 3, Limit: 7})
	assert.Equal(t, Query{Keywords: []string{"a"}, FileType: "pdf", Offset: 3, Limit: 7}, q)
	assert.Equal(t, Query{}, QueryFrom(protocol.GetFinderReq{}))
}

func TestParseInstant(t *testing.T) {
	for _, s := range []string{"2026-01-15T08:30:00Z", "2026-01-15T16:30:00+08:00", "2026-01-15t08:30:00z", "2026-01-15T08:30:00", "2026-01-15 08:30:00Z", " 2026-01-15T08:30:00.000Z "} {
		got, ok := ParseInstant(s)
		require.True(t, ok, s)
		assert.Equal(t, int64(1768465800), got.Unix(), s)
	}
	for _, s := range []string{"", "2026", "15/01/2026", "2026-01-15T08:30", "2026-13-01T00:00:00Z", "now"} {
		_, ok := ParseInstant(s)
		assert.False(t, ok, s)
	}
}

// TestLimitAboveMax pins the limit rule of the user's spec (issue 27,
// item 6): the schema accepts any limit ≥ 0, so a request with limit 0 or
// 500 reaches the Computer, which reads 0 as DefaultLimit and clamps
// anything above MaxLimit (spec/finder.md, client:get_finder).
func TestLimitAboveMax(t *testing.T) {
	for _, lim := range []string{"0", "100", "101", "500"} {
		require.NoError(t, protocol.Validate(protocol.EventGetFinder, protocol.Request,
			[]byte(`{"agent":"a","req_id":"r","computer":"c","limit":`+lim+`}`)), "limit %s", lim)
	}
	err := protocol.Validate(protocol.EventGetFinder, protocol.Request,
		[]byte(`{"agent":"a","req_id":"r","computer":"c","limit":-1}`))
	assert.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err))

	docs := make([]protocol.DPEDocumentSummary, 150)
	for i := range docs {
		docs[i] = protocol.DPEDocumentSummary{DocRef: fmt.Sprintf("d%03d", i), URI: fmt.Sprintf("dpe://h.docs/d%03d", i), Server: "s", Title: "t", FileType: "md"}
	}
	got, total := Organize(docs, Query{Limit: 500}, nil)
	assert.Equal(t, 150, total)
	assert.Len(t, got, MaxLimit)
}
