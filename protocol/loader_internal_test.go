package protocol

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The loader serves the embedded schemas and nothing else: no network, no
// file system, no escaping the schema directory.
func TestEmbeddedLoaderIsHermetic(t *testing.T) {
	doc, err := embeddedLoader{dir: "0.2.0"}.Load(SchemaBase + "get_finder_req.json")
	require.NoError(t, err)
	assert.Contains(t, doc, "$id")

	for _, url := range []string{
		"https://example.com/schema/get_finder_req.json",
		SchemaBase + "missing.json",
		SchemaBase + "../validate.go",
		SchemaBase + "sub/get_finder_req.json",
		SchemaBase + "get_blob_req.json", // a 0.4.0 schema is not in 0.2.0
		"file:///etc/passwd",
	} {
		_, err := embeddedLoader{dir: "0.2.0"}.Load(url)
		assert.Error(t, err, url)
		_, err = embeddedLoader{}.Load(url)
		assert.Error(t, err, url)
	}
}

// A schema file that is not in the set is an internal error, not a panic,
// and the event manifests are not payload schemas.
func TestUnknownSchemaFile(t *testing.T) {
	for _, file := range []string{"missing.json", "events.json", "errors.json", "../go.mod"} {
		_, err := schemaFor(file)
		assert.Equal(t, CodeInternal, CodeOf(err), file)
	}
}
