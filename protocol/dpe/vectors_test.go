package dpe_test

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// conformanceFile is a file of the repository's conformance suite
// (conformance/ at the repository root, two levels above this package).
func conformanceFile(name string) string {
	return filepath.Join("..", "..", "conformance", name)
}

// vectorFile is the shape of conformance/dpe_uri.json; the extra vectors of
// conformance/dpe_uri_extra.json use the same shape plus "canonical" and "note".
type vectorFile struct {
	Valid   []validVector   `json:"valid"`
	Invalid []invalidVector `json:"invalid"`
}

type validVector struct {
	URI       string                     `json:"uri"`
	Host      string                     `json:"host"`
	DocRef    *string                    `json:"doc_ref"`
	SubPath   *string                    `json:"sub_path"`
	Level     int                        `json:"level"`
	PageIndex *int                       `json:"page_index"`
	ElementID *string                    `json:"element_id"`
	Query     map[string]json.RawMessage `json:"query"` // a string, or a list for repeated names
	Canonical *string                    `json:"canonical"`
	Note      string                     `json:"note"`
}

type invalidVector struct {
	URI  string `json:"uri"`
	Rule int    `json:"rule"`
	Note string `json:"note"`
}

func loadVectors(tb testing.TB, path string) vectorFile {
	tb.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(tb, err)
	var f vectorFile
	require.NoError(tb, json.Unmarshal(raw, &f))
	require.NotEmpty(tb, f.Valid, path)
	require.NotEmpty(tb, f.Invalid, path)
	return f
}

func conformanceVectors(tb testing.TB) vectorFile {
	return loadVectors(tb, conformanceFile("dpe_uri.json"))
}

func extraVectors(tb testing.TB) vectorFile {
	return loadVectors(tb, conformanceFile("dpe_uri_extra.json"))
}

// expectedQuery turns a vector's query object into url.Values.
func expectedQuery(tb testing.TB, q map[string]json.RawMessage) url.Values {
	tb.Helper()
	out := url.Values{}
	for k, raw := range q {
		var one string
		if err := json.Unmarshal(raw, &one); err == nil {
			out[k] = []string{one}
			continue
		}
		var many []string
		require.NoError(tb, json.Unmarshal(raw, &many), "query %q", k)
		out[k] = many
	}
	return out
}
