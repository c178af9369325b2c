package dpekit_test

import (
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func complete(t testing.TB, c *client.Client, tmpl, name, value string, ctxArgs map[string]string) mcp.Completion {
	t.Helper()
	req := mcp.CompleteRequest{}
	req.Params.Ref = mcp.ResourceReference{Type: "ref/resource", URI: tmpl}
	req.Params.Argument = mcp.CompleteArgument{Name: name, Value: value}
	req.Params.Context = mcp.CompleteContext{Arguments: ctxArgs}
	res, err := c.Complete(testCtx(t), req)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(res.Completion.Values), 100)
	return res.Completion
}

func TestCompletion(t *testing.T) {
	for _, kind := range allTransports {
		t.Run(kind, func(t *testing.T) {
			var c *client.Client
			if kind == overStdio {
				c = connect(t, kind, nil)
			} else {
				c = connect(t, kind, newServer(t, testProvider()))
			}
			require.NotNil(t, c.GetServerCapabilities().Completions, "completions capability")
			testCompletion(t, c)
		})
	}
}

func bigPageIDs(from, to int) []string {
	var ids []string
	for i := from; i < to; i++ {
		ids = append(ids, fmt.Sprintf("e%d-0", i))
	}
	return ids
}

func testCompletion(t *testing.T, c *client.Client) {
	pages := "dpe://" + testHost + "/{doc_ref}/pages/{page_index}"
	elems := "dpe://" + testHost + "/{doc_ref}/elements/{element_id}"
	p0 := []string{"e0-0"}
	for j := 1; j < 120; j++ {
		p0 = append(p0, fmt.Sprintf("e0-%d", j))
	}
	cases := []struct {
		name    string
		tmpl    string
		arg     string
		value   string
		ctx     map[string]string
		values  []string // nil: check total/hasMore only
		total   int
		hasMore bool
	}{
		{"doc_ref, all", pages, "doc_ref", "", nil, []string{"big", "contract a1/b", "empty", "rpt-2026"}, 4, false},
		{"doc_ref, prefix", pages, "doc_ref", "rpt", nil, []string{"rpt-2026"}, 1, false},
		{"doc_ref, no match", elems, "doc_ref", "zzz", nil, []string{}, 0, false},
		{"page_index of a 3-page document", pages, "page_index", "", map[string]string{"doc_ref": refReport}, []string{"0", "1", "2"}, 3, false},
		{"page_index, prefix", pages, "page_index", "24", map[string]string{"doc_ref": refBig},
			[]string{"24", "240", "241", "242", "243", "244", "245", "246", "247", "248", "249"}, 11, false},
		{"page_index past 100", pages, "page_index", "", map[string]string{"doc_ref": refBig}, nil, 250, true},
		{"page_index without doc_ref", pages, "page_index", "", nil, []string{}, 0, false},
		{"page_index of an unknown doc_ref", pages, "page_index", "", map[string]string{"doc_ref": "nope"}, []string{}, 0, false},
		{"element_id of a page", elems, "element_id", "", map[string]string{"doc_ref": refReport, "page_index": "1"},
			[]string{"lst-001", "code-001", "lnk-001", "img-001", "fml-001", "tbl-002"}, 6, false},
		{"element_id, prefix on a page", elems, "element_id", "tbl", map[string]string{"doc_ref": refReport, "page_index": "1"}, []string{"tbl-002"}, 1, false},
		{"element_id, prefix, whole document", elems, "element_id", "tbl", map[string]string{"doc_ref": refReport}, []string{"tbl-001", "tbl-002"}, 2, false},
		{"element_id past 100", elems, "element_id", "e0-", map[string]string{"doc_ref": refBig, "page_index": "0"}, p0[:100], 120, true},
		{"element_id, whole big document", elems, "element_id", "e2", map[string]string{"doc_ref": refBig},
			append(append([]string{"e2-0"}, bigPageIDs(20, 30)...), bigPageIDs(200, 250)...), 61, false},
		{"element_id, page out of range", elems, "element_id", "", map[string]string{"doc_ref": refReport, "page_index": "9"}, []string{}, 0, false},
		{"element_id, page not a number", elems, "element_id", "", map[string]string{"doc_ref": refReport, "page_index": "x"}, []string{}, 0, false},
		{"element_id without doc_ref", elems, "element_id", "", nil, []string{}, 0, false},
		{"unknown argument", pages, "format", "", nil, []string{}, 0, false},
		{"another host's template", "dpe://other.host/{doc_ref}/pages/{page_index}", "doc_ref", "", nil, []string{}, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := complete(t, c, tc.tmpl, tc.arg, tc.value, tc.ctx)
			if tc.values != nil {
				assert.Equal(t, tc.values, got.Values)
			} else {
				assert.Len(t, got.Values, 100)
			}
			assert.Equal(t, tc.total, got.Total)
			assert.Equal(t, tc.hasMore, got.HasMore)
		})
	}
}
