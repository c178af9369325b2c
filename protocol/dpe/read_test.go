package dpe_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// lenientVectors is conformance/finder_lenient.json.
type lenientVectors struct {
	Answers []struct {
		Name     string          `json:"name"`
		Level    int             `json:"level"`
		Answer   json.RawMessage `json:"answer"`
		Error    bool            `json:"error"`
		Problems []string        `json:"problems"`
		Parts    int             `json:"parts"`
	} `json:"answers"`
	Contents []struct {
		Name    string          `json:"name"`
		Element json.RawMessage `json:"element"`
		Typed   json.RawMessage `json:"typed"`
		Problem string          `json:"problem"`
	} `json:"contents"`
}

// TestLenientVectors replays conformance/finder_lenient.json: the tolerant
// readers return every part of an answer and report the broken ones on
// themselves; typed content is normalised as the vectors say.
func TestLenientVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "conformance", "finder_lenient.json"))
	require.NoError(t, err)
	var v lenientVectors
	require.NoError(t, json.Unmarshal(raw, &v))
	require.NotEmpty(t, v.Answers)
	for _, tc := range v.Answers {
		t.Run(tc.Name, func(t *testing.T) {
			var probs []dpe.Problem
			var parts int
			var err error
			switch tc.Level {
			case 0:
				var c *dpe.Catalog
				if c, err = dpe.DecodeCatalog(tc.Answer); err == nil {
					probs, parts = c.Problems, len(c.Documents)
				}
			case 1:
				var d *dpe.Document
				if d, err = dpe.DecodeDocument(tc.Answer); err == nil {
					probs, parts = d.Problems, len(d.Pages)
				}
			case 2:
				var p *dpe.Page
				if p, err = dpe.DecodePage(tc.Answer); err == nil {
					probs, parts = p.Problems, len(p.Elements)
				}
			case 3:
				var e *dpe.ElementDetail
				if e, err = dpe.DecodeElementDetail(tc.Answer); err == nil {
					probs, parts = e.Problems, 1
				}
			}
			if tc.Error {
				require.Error(t, err)
				assert.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err))
				return
			}
			require.NoError(t, err)
			paths := []string{}
			for _, p := range probs {
				paths = append(paths, p.Path)
				assert.NotEmpty(t, p.Message)
			}
			assert.Equal(t, tc.Problems, paths)
			if tc.Parts > 0 {
				assert.Equal(t, tc.Parts, parts)
			}
		})
	}
	for _, tc := range v.Contents {
		t.Run(tc.Name, func(t *testing.T) {
			var e protocol.DPEElement
			require.NoError(t, json.Unmarshal(tc.Element, &e))
			got, err := dpe.DecodeContent(e)
			if tc.Problem != "" {
				require.Error(t, err)
				assert.Equal(t, tc.Problem, protocol.AsError(err).Details["path"])
				return
			}
			require.NoError(t, err)
			b, err := json.Marshal(got)
			require.NoError(t, err)
			assert.JSONEq(t, string(tc.Typed), string(b))
			// The typed content renders as the original does.
			back, err := elementOf(e.ElementID, e.Category, got)
			require.NoError(t, err)
			assert.Equal(t, dpe.ElementMarkdown(e), dpe.ElementMarkdown(back))
		})
	}
}

func elementOf(id string, cat protocol.DPEElementCategory, v any) (protocol.DPEElement, error) {
	switch c := v.(type) {
	case protocol.TableContent:
		return dpe.NewElement(id, cat, "", c)
	case protocol.HeadingContent:
		return dpe.NewElement(id, cat, "", c)
	case protocol.ListContent:
		return dpe.NewElement(id, cat, "", c)
	case protocol.FormulaContent:
		return dpe.NewElement(id, cat, "", c)
	case protocol.ChartContent:
		return dpe.NewElement(id, cat, "", c)
	}
	panic("no case")
}

func TestContentOf(t *testing.T) {
	e := protocol.DPEElement{ElementID: "t", Category: protocol.DPEElementCategoryTable,
		Content: map[string]any{"headers": []any{"a"}, "rows": []any{[]any{1.0, nil}}}}
	tbl, err := dpe.ContentOf[protocol.TableContent](e)
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, tbl.Headers)
	assert.Equal(t, [][]string{{"1", ""}}, tbl.Rows)

	_, err = dpe.ContentOf[protocol.HeadingContent](e)
	require.Error(t, err, "a table is not heading content")
	assert.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err))

	v, err := dpe.DecodeContent(protocol.DPEElement{Category: protocol.DPEElementCategoryWidget, Content: map[string]any{"k": 1}})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"k": 1}, v, "categories without a shape keep their map")
}

func TestNewElement(t *testing.T) {
	h, err := dpe.NewElement("h1", protocol.DPEElementCategoryHeading, "Intro", protocol.HeadingContent{Level: 2, Text: "Intro"})
	require.NoError(t, err)
	assert.Equal(t, "## Intro", dpe.ElementMarkdown(h))
	require.Equal(t, "Intro", h.Summary)
	b, err := json.Marshal(h)
	require.NoError(t, err)
	require.NoError(t, protocol.ValidateSchema("dpe_element.json", b))
	require.NoError(t, protocol.ValidateSchema("dpe_content_rules.json", b), "the strict shape smcp-go writes")

	p, err := dpe.NewElement("p", protocol.DPEElementCategoryPivotTable, "", protocol.TableContent{Rows: [][]string{{"a", "1"}}})
	require.NoError(t, err)
	assert.Equal(t, "[pivot_table: ]", dpe.ElementMarkdown(p))
	back, err := dpe.ContentOf[protocol.TableContent](p)
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"a", "1"}}, back.Rows, "typed values read back without JSON")

	_, err = dpe.NewElement("x", protocol.DPEElementCategoryHeading, "", protocol.TextContent{Text: "t"})
	assert.Error(t, err)
}
