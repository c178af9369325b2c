package bridge

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/a2c-smcp/smcp-go/computer/internal/sourcetest"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPayloadLimit (issue 12, item 3): an answer the Server would refuse is
// refused by the bridge with 413 and advice, never sent; a smaller one
// passes.
func TestPayloadLimit(t *testing.T) {
	srv := sourcetest.NewServer()
	srv.Put(sourcetest.Doc(sourcetest.Meta("big.docs", "d1", 1)))
	big := strings.Repeat("x", 64<<10)
	quotes := strings.Repeat(`"`, 20<<10) // 20 KiB raw, 40 KiB escaped
	srv.Template("dpe://big.docs/{doc_ref}/pages/{page_index}", func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		body := "small"
		switch strings.Trim(strings.TrimPrefix(req.Params.URI, "dpe://big.docs/d1/pages/"), "") {
		case "1":
			body = big
		case "2":
			body = quotes
		}
		return sourcetest.Text(req.Params.URI, "application/json", body), nil
	})
	b := New(WithMaxPayloadBytes(36 << 10))
	require.NoError(t, b.AddSource(sourcetest.Ctx(t), sourcetest.DialHTTP(t, "big", sourcetest.Serve(t, srv))))

	got, err := b.Read(sourcetest.Ctx(t), "dpe://big.docs/d1/pages/0")
	require.NoError(t, err)
	assert.Equal(t, "small", *got[0].Text)

	for _, uri := range []string{"dpe://big.docs/d1/pages/1", "dpe://big.docs/d1/pages/2"} {
		_, err = b.Read(sourcetest.Ctx(t), uri)
		pe := requireCode(t, err, protocol.CodePayloadTooLarge)
		assert.Contains(t, pe.Message, "narrow the read")
		assert.Contains(t, pe.Message, "categories")
		assert.EqualValues(t, 36<<10, pe.Details["limit"])
		assert.Greater(t, pe.Details["bytes"], int64(32<<10), uri)
	}
	assert.Equal(t, int64(protocol.DefaultMaxPayloadBytes), New().maxPayload, "the Server's default limit")
}

// TestSourceDown (issue 12, item 6): while a server is down and reconnecting
// its hosts answer 503, not 4201; back up, reads work; removed, 4201.
func TestSourceDown(t *testing.T) {
	_, url := docServer(t)
	b := New()
	require.NoError(t, b.AddSource(sourcetest.Ctx(t), sourcetest.DialHTTP(t, "alpha", url)))
	_, err := b.Read(sourcetest.Ctx(t), "dpe://a.docs/d1")
	require.NoError(t, err)

	b.SourceDown("alpha", errors.New("process exited"))
	_, err = b.Read(sourcetest.Ctx(t), "dpe://a.docs/d1")
	pe := requireCode(t, err, protocol.CodeUnavailable)
	assert.Equal(t, "alpha", pe.Details["server"])
	assert.Contains(t, pe.Message, "retry later")
	b.ResourceListChanged(sourcetest.Ctx(t), "alpha") // no source to list: ignored
	_, err = b.Read(sourcetest.Ctx(t), "dpe://nobody.docs/d1")
	requireCode(t, err, protocol.CodeDocumentNotFound)

	require.NoError(t, b.AddSource(sourcetest.Ctx(t), sourcetest.DialHTTP(t, "alpha", url)))
	_, err = b.Read(sourcetest.Ctx(t), "dpe://a.docs/d1")
	require.NoError(t, err)

	b.SourceDown("alpha", nil)
	b.RemoveSource("alpha")
	_, err = b.Read(sourcetest.Ctx(t), "dpe://a.docs/d1")
	requireCode(t, err, protocol.CodeDocumentNotFound)
}
