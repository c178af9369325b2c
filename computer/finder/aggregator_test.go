package finder

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/sourcetest"
	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testmcp.Cleanup()
	os.Exit(code)
}

const (
	wait = sourcetest.Wait
	tick = sourcetest.Tick
)

type events = sourcetest.Events

func waitEvents(t *testing.T, ev *events, n int, quiet time.Duration) {
	t.Helper()
	ev.Expect(t, n, quiet)
}

func ctx(t *testing.T) context.Context { return sourcetest.Ctx(t) }

func wire(_ *testing.T, cl *sourcetest.Client, a *Aggregator) { sourcetest.Wire(cl, a) }

func TestAggregatorColdAggregation(t *testing.T) {
	srv := sourcetest.NewServer()
	for i := range 5 {
		srv.Put(sourcetest.Doc(sourcetest.Meta("alpha.docs", "d"+string(rune('1'+i)), i)))
	}
	noTitle := `{"doc_ref":"no-title","uri":"dpe://alpha.docs/no-title","file_uri":"file:///x","file_type":"pdf","page_count":1}`
	badPages := `{"doc_ref":"neg","uri":"dpe://alpha.docs/neg","file_uri":"file:///x","file_type":"pdf","title":"t","page_count":-1}`
	srv.Put(
		sourcetest.Resource{URI: "dpe://alpha.docs/broken-json", Contents: sourcetest.Text("dpe://alpha.docs/broken-json", "application/json", "{not json")},
		sourcetest.Resource{URI: "dpe://alpha.docs/no-title", Contents: sourcetest.Text("dpe://alpha.docs/no-title", "application/json", noTitle)},
		sourcetest.Resource{URI: "dpe://alpha.docs/neg", Contents: sourcetest.Text("dpe://alpha.docs/neg", "application/json", badPages)},
		sourcetest.Resource{URI: "dpe://alpha.docs/fails", Err: errors.New("disk on fire")},
		sourcetest.Resource{URI: "dpe://alpha.docs/blob", Contents: []mcp.ResourceContents{mcp.BlobResourceContents{URI: "dpe://alpha.docs/blob", Blob: "AAAA"}}},
		// Not documents: never read.
		sourcetest.Resource{URI: "dpe://alpha.docs", Contents: sourcetest.Text("dpe://alpha.docs", "application/json", "{}")},
		sourcetest.Resource{URI: "dpe://alpha.docs/d1/pages/0", Contents: sourcetest.Text("dpe://alpha.docs/d1/pages/0", "application/json", "{}")},
		sourcetest.Resource{URI: "dpe://alpha.docs/q?limit=1000", Contents: sourcetest.Text("dpe://alpha.docs/q?limit=1000", "application/json", "{}")},
		sourcetest.Resource{URI: "window://alpha/w", Contents: sourcetest.Text("window://alpha/w", "text/plain", "hi")},
		sourcetest.Resource{URI: "file:///etc/hosts", Contents: sourcetest.Text("file:///etc/hosts", "text/plain", "hi")},
	)
	cl := sourcetest.DialHTTP(t, "alpha", sourcetest.Serve(t, srv))
	logs := &sourcetest.LogRecorder{}
	var ev events
	a := New(WithLogger(logs.Logger()), WithOnChange(ev.Fn()), WithDebounce(20*time.Millisecond))
	t.Cleanup(a.Close)

	require.NoError(t, a.AddSource(ctx(t), cl))

	assert.Equal(t, 5, a.Len())
	ret := a.Query(protocol.GetFinderReq{ReqID: "r1"}, nil)
	assert.Equal(t, "r1", ret.ReqID)
	assert.Equal(t, 5, ret.TotalCount)
	assert.Equal(t, []string{"d5", "d4", "d3", "d2", "d1"}, refs(ret.Documents))
	d := ret.Documents[4]
	assert.Equal(t, "alpha", d.Server)
	assert.Equal(t, "dpe://alpha.docs/d1", d.URI)
	assert.Equal(t, "Document d1", d.Title)
	assert.Equal(t, []string{"test", "d1"}, d.Keywords)
	require.NotNil(t, d.Summary)
	assert.Equal(t, "summary of d1", d.Summary)

	for _, u := range []string{"dpe://alpha.docs/d1", "dpe://alpha.docs/d5", "dpe://alpha.docs/broken-json", "dpe://alpha.docs/fails", "dpe://alpha.docs/blob"} {
		assert.Equal(t, 1, srv.ReadsOf(u), u)
	}
	for _, u := range []string{"dpe://alpha.docs", "dpe://alpha.docs/d1/pages/0", "dpe://alpha.docs/q?limit=1000", "window://alpha/w", "file:///etc/hosts"} {
		assert.Zero(t, srv.ReadsOf(u), u)
	}
	assert.EqualValues(t, 10, srv.Reads())

	w := logs.Warnings()
	assert.Len(t, w, 5, "one warning per skipped document: %v", w)
	for _, ref := range []string{"broken-json", "no-title", "neg", "fails", "blob"} {
		assert.True(t, slices.ContainsFunc(w, func(m string) bool { return strings.Contains(m, "dpe://alpha.docs/"+ref) }), ref)
	}
	waitEvents(t, &ev, 1, 200*time.Millisecond)
}

// TestAggregatorServerWithoutSubscribe (issue 12, item 8): a server that
// does not declare resources.subscribe is listed all the same, with a
// warning, never subscribed to, and refreshed by list_changed and updated.
func TestAggregatorServerWithoutSubscribe(t *testing.T) {
	srv := sourcetest.NewServer(sourcetest.WithoutSubscribe())
	srv.Put(sourcetest.Doc(sourcetest.Meta("beta.docs", "b1", 1)))
	cl := sourcetest.DialHTTP(t, "beta", sourcetest.Serve(t, srv))
	require.False(t, cl.SupportsSubscribe())
	logs := &sourcetest.LogRecorder{}
	var ev events
	a := New(WithLogger(logs.Logger()), WithOnChange(ev.Fn()), WithDebounce(10*time.Millisecond))
	t.Cleanup(a.Close)

	require.NoError(t, a.AddSource(ctx(t), cl))
	assert.Equal(t, []string{"b1"}, refs(a.Documents()))
	w := logs.Warnings()
	require.Len(t, w, 1, "one warning, none per failed subscribe: %v", w)
	assert.Contains(t, w[0], "does not declare resources.subscribe")
	assert.Contains(t, w[0], "docs/dpe-server-python.md")
	waitEvents(t, &ev, 1, 150*time.Millisecond)

	srv.Put(sourcetest.Doc(sourcetest.Meta("beta.docs", "b2", 2)))
	a.ResourceListChanged(ctx(t), "beta")
	assert.Equal(t, []string{"b2", "b1"}, refs(a.Documents()))
	waitEvents(t, &ev, 2, 150*time.Millisecond)
	m := sourcetest.Meta("beta.docs", "b1", 3)
	m.Title = "Edited"
	srv.Put(sourcetest.Doc(m))
	a.ResourceUpdated(ctx(t), "beta", "dpe://beta.docs/b1")
	assert.Equal(t, "Edited", a.Documents()[0].Title)
	waitEvents(t, &ev, 3, 150*time.Millisecond)
}

// Change detection through direct calls (deterministic): same set → nothing,
// add → the new document read once and one event, remove → one event.
func TestAggregatorListChanged(t *testing.T) {
	srv := sourcetest.NewServer()
	srv.Put(sourcetest.Doc(sourcetest.Meta("alpha.docs", "a", 1)), sourcetest.Doc(sourcetest.Meta("alpha.docs", "b", 2)))
	srv.Put(sourcetest.Resource{URI: "window://alpha/w", Contents: sourcetest.Text("window://alpha/w", "text/plain", "x")})
	cl := sourcetest.DialHTTP(t, "alpha", sourcetest.Serve(t, srv))
	var ev events
	a := New(WithOnChange(ev.Fn()), WithDebounce(20*time.Millisecond))
	t.Cleanup(a.Close)
	require.NoError(t, a.AddSource(ctx(t), cl))
	waitEvents(t, &ev, 1, 150*time.Millisecond)
	reads := srv.Reads()

	t.Run("same set: no read, no event", func(t *testing.T) {
		a.ResourceListChanged(ctx(t), "alpha")
		assert.Equal(t, reads, srv.Reads())
		waitEvents(t, &ev, 1, 150*time.Millisecond)
	})
	t.Run("non-dpe resources added: same dpe set", func(t *testing.T) {
		srv.Put(sourcetest.Resource{URI: "window://alpha/w2", Contents: sourcetest.Text("window://alpha/w2", "text/plain", "x")})
		a.ResourceListChanged(ctx(t), "alpha")
		assert.Equal(t, reads, srv.Reads())
		waitEvents(t, &ev, 1, 150*time.Millisecond)
	})
	t.Run("added: only the new document read, one event", func(t *testing.T) {
		srv.Put(sourcetest.Doc(sourcetest.Meta("alpha.docs", "c", 3)))
		a.ResourceListChanged(ctx(t), "alpha")
		assert.Equal(t, reads+1, srv.Reads())
		assert.Equal(t, 1, srv.ReadsOf("dpe://alpha.docs/c"))
		assert.Equal(t, []string{"c", "b", "a"}, refs(a.Documents()))
		waitEvents(t, &ev, 2, 150*time.Millisecond)
	})
	t.Run("removed: no read, one event", func(t *testing.T) {
		srv.Delete("dpe://alpha.docs/a")
		a.ResourceListChanged(ctx(t), "alpha")
		assert.Equal(t, reads+1, srv.Reads())
		assert.Equal(t, []string{"c", "b"}, refs(a.Documents()))
		waitEvents(t, &ev, 3, 150*time.Millisecond)
	})
	t.Run("unknown server ignored", func(t *testing.T) {
		a.ResourceListChanged(ctx(t), "nobody")
		a.ResourceUpdated(ctx(t), "nobody", "dpe://alpha.docs/b")
		assert.Equal(t, reads+1, srv.Reads())
		waitEvents(t, &ev, 3, 150*time.Millisecond)
	})
}

func TestAggregatorResourceUpdated(t *testing.T) {
	srv := sourcetest.NewServer()
	srv.Put(sourcetest.Doc(sourcetest.Meta("alpha.docs", "a", 1)), sourcetest.Doc(sourcetest.Meta("alpha.docs", "b", 2)))
	cl := sourcetest.DialHTTP(t, "alpha", sourcetest.Serve(t, srv))
	var ev events
	a := New(WithOnChange(ev.Fn()), WithDebounce(20*time.Millisecond))
	t.Cleanup(a.Close)
	require.NoError(t, a.AddSource(ctx(t), cl))
	waitEvents(t, &ev, 1, 100*time.Millisecond)

	t.Run("non-dpe and invalid URIs are ignored; catalog and unlisted ones re-list without reading", func(t *testing.T) {
		before := srv.Reads()
		for _, u := range []string{"window://alpha/w", "file:///a", "dpe://alpha.docs/a?limit=0", "dpe://alpha.docs", "dpe://alpha.docs/ghost", "dpe://other.host/a", ""} {
			a.ResourceUpdated(ctx(t), "alpha", u)
		}
		assert.Equal(t, before, srv.Reads())
		waitEvents(t, &ev, 1, 150*time.Millisecond)
	})
	t.Run("an update of a document not listed yet adds it (item 7)", func(t *testing.T) {
		srv.Put(sourcetest.Doc(sourcetest.Meta("alpha.docs", "late", 5)))
		a.ResourceUpdated(ctx(t), "alpha", "dpe://alpha.docs/late/pages/0")
		docsAre := func(want ...string) func() bool {
			return func() bool { return slices.Equal(want, refs(a.Documents())) }
		}
		require.Eventually(t, docsAre("late", "b", "a"), 10*time.Second, 5*time.Millisecond, "re-listed in the background")
		waitEvents(t, &ev, 2, 150*time.Millisecond)
		srv.Delete("dpe://alpha.docs/late")
		a.ResourceUpdated(ctx(t), "alpha", "dpe://alpha.docs")
		require.Eventually(t, docsAre("b", "a"), 10*time.Second, 5*time.Millisecond, "a catalog update re-lists")
		waitEvents(t, &ev, 3, 150*time.Millisecond)
	})
	t.Run("one update costs one Level-1 read and one event", func(t *testing.T) {
		before := srv.Reads()
		m := sourcetest.Meta("alpha.docs", "a", 9)
		m.Title = "Renamed"
		srv.Put(sourcetest.Doc(m))
		a.ResourceUpdated(ctx(t), "alpha", "dpe://alpha.docs/a")
		assert.Equal(t, before+1, srv.Reads())
		docs := a.Documents()
		assert.Equal(t, []string{"a", "b"}, refs(docs))
		assert.Equal(t, "Renamed", docs[0].Title)
		waitEvents(t, &ev, 4, 150*time.Millisecond)
	})
	t.Run("an update of a page re-reads its document", func(t *testing.T) {
		before := srv.ReadsOf("dpe://alpha.docs/b")
		a.ResourceUpdated(ctx(t), "alpha", "dpe://alpha.docs/b/pages/2?format=markdown")
		assert.Equal(t, before+1, srv.ReadsOf("dpe://alpha.docs/b"))
		waitEvents(t, &ev, 5, 150*time.Millisecond)
	})
	t.Run("a document that became invalid is dropped", func(t *testing.T) {
		srv.Put(sourcetest.Resource{URI: "dpe://alpha.docs/b", Contents: sourcetest.Text("dpe://alpha.docs/b", "application/json", `{"doc_ref":"b"}`)})
		a.ResourceUpdated(ctx(t), "alpha", "dpe://alpha.docs/b")
		assert.Equal(t, []string{"a"}, refs(a.Documents()))
		waitEvents(t, &ev, 6, 150*time.Millisecond)
	})
	t.Run("and comes back on its next update", func(t *testing.T) {
		srv.Put(sourcetest.Doc(sourcetest.Meta("alpha.docs", "b", 20)))
		a.ResourceUpdated(ctx(t), "alpha", "dpe://alpha.docs/b")
		assert.Equal(t, []string{"b", "a"}, refs(a.Documents()))
		waitEvents(t, &ev, 7, 150*time.Millisecond)
	})
}

// Real notifications from the MCP server, forwarded off the read loop.
func TestAggregatorNotifications(t *testing.T) {
	srv := sourcetest.NewServer()
	srv.Put(sourcetest.Doc(sourcetest.Meta("alpha.docs", "a", 1)))
	cl := sourcetest.DialHTTP(t, "alpha", sourcetest.Serve(t, srv))
	var ev events
	// A long debounce keeps a burst one burst on a loaded machine.
	a := New(WithOnChange(ev.Fn()), WithDebounce(300*time.Millisecond))
	t.Cleanup(a.Close)
	require.NoError(t, a.AddSource(ctx(t), cl))
	wire(t, cl, a)
	waitEvents(t, &ev, 1, 100*time.Millisecond)

	t.Run("a burst of additions is one event", func(t *testing.T) {
		for i, ref := range []string{"b", "c", "d"} {
			srv.Put(sourcetest.Doc(sourcetest.Meta("alpha.docs", ref, 10+i))) // one list_changed each
		}
		require.Eventually(t, func() bool { return a.Len() == 4 }, wait, tick)
		waitEvents(t, &ev, 2, 900*time.Millisecond)
		for _, ref := range []string{"b", "c", "d"} {
			assert.Equal(t, 1, srv.ReadsOf("dpe://alpha.docs/"+ref), ref)
		}
		assert.Equal(t, 1, srv.ReadsOf("dpe://alpha.docs/a"))
	})
	t.Run("list_changed with the same set is no event", func(t *testing.T) {
		before := srv.Reads()
		srv.ListChanged()
		srv.ListChanged()
		waitEvents(t, &ev, 2, 900*time.Millisecond)
		assert.Equal(t, before, srv.Reads())
	})
	t.Run("resources/updated re-reads one document", func(t *testing.T) {
		before := srv.Reads()
		m := sourcetest.Meta("alpha.docs", "a", 50)
		m.Title = "Updated"
		srv.Put(sourcetest.Doc(m))
		srv.Updated("dpe://alpha.docs/a")
		require.Eventually(t, func() bool { return a.Query(protocol.GetFinderReq{}, nil).Documents[0].Title == "Updated" }, wait, tick)
		waitEvents(t, &ev, 3, 900*time.Millisecond)
		assert.Equal(t, before+1, srv.Reads())
	})
	t.Run("a removal is one event", func(t *testing.T) {
		srv.Delete("dpe://alpha.docs/b", "dpe://alpha.docs/c")
		require.Eventually(t, func() bool { return a.Len() == 2 }, wait, tick)
		waitEvents(t, &ev, 4, 900*time.Millisecond)
	})
}

func TestAggregatorRemoveAndRestartSource(t *testing.T) {
	s1, s2 := sourcetest.NewServer(), sourcetest.NewServer()
	s1.Put(sourcetest.Doc(sourcetest.Meta("one.docs", "x", 1)), sourcetest.Doc(sourcetest.Meta("one.docs", "y", 2)))
	s2.Put(sourcetest.Doc(sourcetest.Meta("two.docs", "z", 3)))
	url1 := sourcetest.Serve(t, s1)
	c1 := sourcetest.DialHTTP(t, "one", url1)
	c2 := sourcetest.DialHTTP(t, "two", sourcetest.Serve(t, s2))
	var ev events
	a := New(WithOnChange(ev.Fn()), WithDebounce(20*time.Millisecond))
	t.Cleanup(a.Close)
	require.NoError(t, a.AddSource(ctx(t), c1))
	require.NoError(t, a.AddSource(ctx(t), c2))
	waitEvents(t, &ev, 1, 150*time.Millisecond) // both in one burst
	assert.Equal(t, []string{"y", "x", "z"}, refs(a.Documents()))

	a.RemoveSource("one")
	assert.Equal(t, []string{"z"}, refs(a.Documents()))
	waitEvents(t, &ev, 2, 150*time.Millisecond)

	a.RemoveSource("one") // already gone
	a.RemoveSource("nobody")
	waitEvents(t, &ev, 2, 150*time.Millisecond)

	// The server restarts with another document set.
	s1.Delete("dpe://one.docs/x")
	s1.Put(sourcetest.Doc(sourcetest.Meta("one.docs", "w", 9)))
	require.NoError(t, a.AddSource(ctx(t), sourcetest.DialHTTP(t, "one", url1)))
	assert.Equal(t, []string{"w", "y", "z"}, refs(a.Documents()))
	waitEvents(t, &ev, 3, 150*time.Millisecond)
}

func TestAggregatorListingFailure(t *testing.T) {
	srv := sourcetest.NewServer()
	srv.Put(sourcetest.Doc(sourcetest.Meta("one.docs", "x", 1)))
	cl := sourcetest.DialHTTP(t, "one", sourcetest.Serve(t, srv))
	a := New()
	t.Cleanup(a.Close)
	require.NoError(t, cl.Close()) // the session is gone: listing fails
	err := a.AddSource(ctx(t), cl)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"one"`)
	assert.Zero(t, a.Len())
}

func TestAggregatorQuery(t *testing.T) {
	v := loadVectors(t)
	// Serve the vector documents from one MCP server per vector server.
	byServer := map[string][]protocol.DPEDocumentSummary{}
	for _, d := range v.Documents {
		byServer[d.Server] = append(byServer[d.Server], d)
	}
	a := New()
	t.Cleanup(a.Close)
	for name, docs := range byServer {
		srv := sourcetest.NewServer()
		for _, d := range docs {
			if _, ok := selectDocument(d.URI); !ok {
				continue // the invalid ones cannot be listed as documents
			}
			srv.Put(sourcetest.Doc(protocol.DPEDocumentMeta{DocRef: d.DocRef, URI: d.URI, FileURI: d.FileURI, FileType: d.FileType,
				Title: d.Title, PageCount: d.PageCount, Keywords: d.Keywords, Summary: d.Summary, LastModified: d.LastModified}))
		}
		require.NoError(t, a.AddSource(ctx(t), sourcetest.DialHTTP(t, name, sourcetest.Serve(t, srv))))
	}
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			req := protocol.GetFinderReq{ReqID: "q-" + c.Name, Keywords: c.Keywords, Offset: c.Offset, Limit: c.Limit}
			if c.FileType != "" {
				req.FileType = c.FileType
			}
			ret := a.Query(req, c.History)
			assert.Equal(t, c.Expect, refs(ret.Documents))
			assert.Equal(t, c.TotalCount, ret.TotalCount)
			assert.Equal(t, req.ReqID, ret.ReqID)
			raw, err := jsonMarshal(ret)
			require.NoError(t, err)
			require.NoError(t, protocol.Validate(protocol.EventGetFinder, protocol.Ack, raw))
		})
	}
}

// The testmcp program over stdio: a real MCP server process.
func TestAggregatorStdioProcess(t *testing.T) {
	cl := sourcetest.DialStdio(t, "proc", testmcp.Binary(t), "-host", "proc.docs", "-docs", "4", "-tools", "mutate")
	var ev events
	a := New(WithOnChange(ev.Fn()), WithDebounce(50*time.Millisecond))
	t.Cleanup(a.Close)
	require.NoError(t, a.AddSource(ctx(t), cl))
	wire(t, cl, a)
	assert.Equal(t, []string{"doc-4", "doc-3", "doc-2", "doc-1"}, refs(a.Documents()))
	waitEvents(t, &ev, 1, 200*time.Millisecond)

	require.NoError(t, cl.CallTool(ctx(t), "mutate", map[string]any{"action": "add_doc", "id": "fresh"}))
	require.Eventually(t, func() bool { return a.Len() == 5 }, wait, tick)
	assert.Equal(t, "fresh", a.Documents()[0].DocRef)

	require.NoError(t, cl.CallTool(ctx(t), "mutate", map[string]any{"action": "update_doc", "id": "doc-1"}))
	require.Eventually(t, func() bool { return a.Documents()[0].DocRef == "doc-1" }, wait, tick) // now the newest
	d := a.Documents()[0]
	require.NotNil(t, d.Summary)
	assert.Equal(t, "summary of doc-1 v1", d.Summary)

	require.NoError(t, cl.CallTool(ctx(t), "mutate", map[string]any{"action": "remove_doc", "id": "doc-2"}))
	require.Eventually(t, func() bool { return a.Len() == 4 }, wait, tick)
	require.Eventually(t, func() bool { return ev.Count() >= 2 }, wait, tick)
}

func TestAggregatorClose(t *testing.T) {
	srv := sourcetest.NewServer()
	srv.Put(sourcetest.Doc(sourcetest.Meta("alpha.docs", "a", 1)))
	cl := sourcetest.DialHTTP(t, "alpha", sourcetest.Serve(t, srv))
	var ev events
	a := New(WithOnChange(ev.Fn()), WithDebounce(time.Hour))
	require.NoError(t, a.AddSource(ctx(t), cl))
	a.Close()
	a.Close()
	assert.Equal(t, 1, a.Len(), "Query keeps answering from the last cache")
	assert.Error(t, a.AddSource(ctx(t), cl))
	a.ResourceListChanged(ctx(t), "alpha")
	assert.Zero(t, ev.Count(), "the pending burst is dropped")
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
