package dpekit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/dpekit"
)

// slowListing is a Provider whose Documents blocks until release is closed,
// as a document server parsing a large folder does; its other methods answer
// at once.
type slowListing struct {
	*memProvider
	release chan struct{}
}

func (p slowListing) Documents(ctx context.Context) ([]dpekit.Document, error) {
	select {
	case <-p.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return p.memProvider.Documents(ctx)
}

// TestSlowFirstListing: a Server whose Provider is slow to list answers
// initialize and reads while the listing runs, then registers the documents
// and announces them with resources/list_changed.
func TestSlowFirstListing(t *testing.T) {
	p := slowListing{memProvider: testProvider(), release: make(chan struct{})}
	released := false
	defer func() {
		if !released {
			close(p.release)
		}
	}()
	srv, err := dpekit.New(testCtx(t), testHost, p, dpekit.WithStartupWait(50*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })

	c := connect(t, overPipe, srv) // initialize answered while the listing blocks
	in := listen(c)
	base := "dpe://" + testHost
	assert.Equal(t, []string{base}, listURIs(t, c), "only the catalog while listing")
	v := read(t, c, base+"/"+refReport)
	assert.Equal(t, refReport, v["doc_ref"], "reads do not wait for the listing")

	close(p.release)
	released = true
	eventually(t, func() bool { return in.listChanged() == 1 }, "list_changed once the listing ends")
	assert.Contains(t, listURIs(t, c), base+"/"+refReport)
}

// TestEditSendsNoListChanged: an edit that keeps the set of documents sends
// resources/updated only; an addition sends exactly one list_changed.
func TestEditSendsNoListChanged(t *testing.T) {
	p := testProvider()
	srv := newServer(t, p)
	c := connect(t, overPipe, srv)
	in := listen(c)
	caps := c.GetServerCapabilities()
	require.NotNil(t, caps.Resources)
	assert.True(t, caps.Resources.ListChanged, "the capability is still declared")
	assert.True(t, caps.Resources.Subscribe)
	rpt := "dpe://" + testHost + "/" + refReport
	subscribe(t, c, rpt)

	p.put(dpekit.Document{DocRef: refReport, Title: "renamed", FileType: "xlsx", FileURI: "file:///r.xlsx",
		LastModified: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, dpekit.Page{Title: "only"})
	srv.Notify(dpekit.Change{Kind: dpekit.DocumentUpdated, DocRef: refReport})
	eventually(t, func() bool { return len(in.updated()) == 1 }, "resources/updated for the edit")

	p.put(dpekit.Document{DocRef: "added", Title: "Added", FileType: "md", FileURI: "file:///a.md"}, dpekit.Page{})
	srv.Notify(dpekit.Change{Kind: dpekit.DocumentAdded, DocRef: "added"})
	eventually(t, func() bool { return in.listChanged() >= 1 }, "list_changed for the addition")
	// A marker sent after it: notifications reach a session in order, so
	// once the marker is in, a duplicate list_changed would be too.
	subscribe(t, c, "dpe://"+testHost+"/added")
	srv.Notify(dpekit.Change{Kind: dpekit.DocumentUpdated, DocRef: "added"})
	eventually(t, func() bool { return len(in.updated()) == 2 }, "the marker")
	assert.Equal(t, 1, in.listChanged(), "one list_changed: none for the edit, no duplicate")
}
