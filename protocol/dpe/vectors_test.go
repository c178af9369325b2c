package dpe_test

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// conformanceDir walks up from the working directory to the directory that
// holds shared/conformance (COMMON.md: /work/shared is a sibling of the repo
// root, and CI has the same layout). It fails the test when there is none.
func conformanceDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	require.NoError(tb, err)
	for {
		c := filepath.Join(dir, "shared", "conformance")
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			return c
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			require.FailNow(tb, "shared/conformance not found above the working directory")
		}
		dir = parent
	}
}

// vectorFile is the shape of shared/conformance/dpe_uri_vectors.json; the
// extra vectors in testdata/ use the same shape plus "canonical" and "note".
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
	return loadVectors(tb, filepath.Join(conformanceDir(tb), "dpe_uri_vectors.json"))
}

func extraVectors(tb testing.TB) vectorFile {
	return loadVectors(tb, filepath.Join("testdata", "extra_vectors.json"))
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
