package docserver

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Library keeps the metadata of every document but the pages of the most
// recently used ones only; an evicted document is parsed again on demand,
// and a changed file is still noticed.
func TestParsedDocumentsAreBounded(t *testing.T) {
	dir := t.TempDir()
	write := func(i int, body string) {
		name := filepath.Join(dir, fmt.Sprintf("doc-%d.md", i))
		require.NoError(t, os.WriteFile(name, []byte(body), 0o644))
	}
	for i := range 5 {
		write(i, fmt.Sprintf("# Doc %d\n\nbody %d\n", i, i))
	}
	l, err := New(dir, WithoutWatch(), WithCacheDocuments(2), WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	defer l.Close()
	ctx := context.Background()

	docs, err := l.Documents(ctx)
	require.NoError(t, err)
	require.Len(t, docs, 5, "the catalog holds every document")
	assert.LessOrEqual(t, l.parsed.Len(), 2)

	// Documents parses in parallel: find one of the three evicted.
	var evicted *entry
	for i := range 5 {
		if e := l.entry(DocRef(fmt.Sprintf("doc-%d.md", i))); !l.parsed.Contains(e) {
			evicted = e
		}
	}
	require.NotNil(t, evicted)
	// Metadata and the page index come without parsing again.
	d, err := l.Document(ctx, evicted.ref)
	require.NoError(t, err)
	assert.Equal(t, 1, d.PageCount)
	pages, err := l.Pages(ctx, evicted.ref, 0, 10)
	require.NoError(t, err)
	require.Len(t, pages, 1)
	assert.False(t, l.parsed.Contains(evicted), "metadata reads do not parse")

	// Pages of every document, evicted or not.
	for i := range 5 {
		pg, err := l.Page(ctx, DocRef(fmt.Sprintf("doc-%d.md", i)), 0)
		require.NoError(t, err)
		assert.Contains(t, fmt.Sprint(pg.Elements), fmt.Sprintf("body %d", i))
		assert.LessOrEqual(t, l.parsed.Len(), 2)
	}

	// Read in order, doc-0 is evicted now; an edit is seen by the next read.
	ref0 := DocRef("doc-0.md")
	e0 := l.entry(ref0)
	require.False(t, l.parsed.Contains(e0))
	write(0, "# Doc 0 edited\n\nnew body\n")
	future := time.Now().Add(2 * time.Second)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "doc-0.md"), future, future))
	pg, err := l.Page(ctx, ref0, 0)
	require.NoError(t, err)
	assert.Contains(t, fmt.Sprint(pg.Elements), "new body")
	d, err = l.Document(ctx, ref0)
	require.NoError(t, err)
	assert.WithinDuration(t, future, d.LastModified, time.Second, "metadata follows the edit")

	// A removed file leaves the cache with its entry.
	require.NoError(t, os.Remove(filepath.Join(dir, "doc-0.md")))
	l.untrack("doc-0.md")
	assert.False(t, l.parsed.Contains(e0))
	_, err = l.Page(ctx, ref0, 0)
	assert.Error(t, err)
}
