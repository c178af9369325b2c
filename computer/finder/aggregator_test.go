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

// settle waits for the Aggregator's work in flight (Wait): what a
// notification asked for has then been applied. Changes are checked on
// Version, which moves at every visible change and only then; OnChange
// itself is debounced, so a test asks only that it follows a change
// (signalled), never how the debouncer grouped them.
func settle(t *testing.T, a *Aggregator) {
	t.Helper()
	require.NoError(t, a.Wait(ctx(t)))
}

// signalled waits for OnChange to follow the changes made so far: its count
// must pass before.
func signalled(t *testing.T, ev *events, before int) {
	t.Helper()
	require.Eventually(t, func() bool { return ev.Count() > before }, wait, tick, "OnChange after a change")
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
	signalled(t, &ev, 0)
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
	signalled(t, &ev, 0)

	n := ev.Count()
	srv.Put(sourcetest.Doc(sourcetest.Meta("beta.docs", "b2", 2)))
	a.ResourceListChanged(ctx(t), "beta")
	settle(t, a)
	assert.Equal(t, []string{"b2", "b1"}, refs(a.Documents()))
	signalled(t, &ev, n)
	n = ev.Count()
	m := sourcetest.Meta("beta.docs", "b1", 3)
	m.Title = "Edited"
	srv.Put(sourcetest.Doc(m))
	a.ResourceUpdated(ctx(t), "beta", "dpe://beta.docs/b1")
	settle(t, a)
	assert.Equal(t, "Edited", a.Documents()[0].Title)
	signalled(t, &ev, n)
}

// Change detection through direct calls: same set → nothing (no read, no
// change), add → the new document read once and a change, remove → a
// change without a read.
func TestAggregatorListChanged(t *testing.T) {
	srv := sourcetest.NewServer()
	srv.Put(sourcetest.Doc(sourcetest.Meta("alpha.docs", "a", 1)), sourcetest.Doc(sourcetest.Meta("alpha.docs", "b", 2)))
	srv.Put(sourcetest.Resource{URI: "window://alpha/w", Contents: sourcetest.Text("window://alpha/w", "text/plain", "x")})
	cl := sourcetest.DialHTTP(t, "alpha", sourcetest.Serve(t, srv))
	var ev events
	a := New(WithOnChange(ev.Fn()), WithDebounce(20*time.Millisecond))
	t.Cleanup(a.Close)
	require.NoError(t, a.AddSource(ctx(t), cl))
	signalled(t, &ev, 0)
	reads := srv.Reads()

	t.Run("same set: no read, no change", func(t *testing.T) {
		v := a.Version()
		a.ResourceListChanged(ctx(t), "alpha")
		settle(t, a)
		assert.Equal(t, reads, srv.Reads())
		assert.Equal(t, v, a.Version())
	})
	t.Run("non-dpe resources added: same dpe set", func(t *testing.T) {
		v := a.Version()
		srv.Put(sourcetest.Resource{URI: "window://alpha/w2", Contents: sourcetest.Text("window://alpha/w2", "text/plain", "x")})
		a.ResourceListChanged(ctx(t), "alpha")
		settle(t, a)
		assert.Equal(t, reads, srv.Reads())
		assert.Equal(t, v, a.Version())
	})
	t.Run("added: only the new document read, a change", func(t *testing.T) {
		v, n := a.Version(), ev.Count()
		srv.Put(sourcetest.Doc(sourcetest.Meta("alpha.docs", "c", 3)))
		a.ResourceListChanged(ctx(t), "alpha")
		settle(t, a)
		assert.Equal(t, reads+1, srv.Reads())
		assert.Equal(t, 1, srv.ReadsOf("dpe://alpha.docs/c"))
		assert.Equal(t, []string{"c", "b", "a"}, refs(a.Documents()))
		assert.Greater(t, a.Version(), v)
		signalled(t, &ev, n)
	})
	t.Run("removed: no read, a change", func(t *testing.T) {
		v, n := a.Version(), ev.Count()
		srv.Delete("dpe://alpha.docs/a")
		a.ResourceListChanged(ctx(t), "alpha")
		settle(t, a)
		assert.Equal(t, reads+1, srv.Reads())
		assert.Equal(t, []string{"c", "b"}, refs(a.Documents()))
		assert.Greater(t, a.Version(), v)
		signalled(t, &ev, n)
	})
	t.Run("unknown server ignored", func(t *testing.T) {
		v := a.Version()
		a.ResourceListChanged(ctx(t), "nobody")
		a.ResourceUpdated(ctx(t), "nobody", "dpe://alpha.docs/b")
		settle(t, a)
		assert.Equal(t, reads+1, srv.Reads())
		assert.Equal(t, v, a.Version())
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
	signalled(t, &ev, 0)

	t.Run("non-dpe and invalid URIs are ignored; unlisted ones re-list without reading", func(t *testing.T) {
		before, v := srv.Reads(), a.Version()
		for _, u := range []string{"window://alpha/w", "file:///a", "dpe://alpha.docs/a?limit=0", "dpe://alpha.docs/ghost", "dpe://other.host/a", ""} {
			a.ResourceUpdated(ctx(t), "alpha", u)
		}
		settle(t, a)
		assert.Equal(t, before, srv.Reads())
		assert.Equal(t, v, a.Version())
	})
	t.Run("an update of a document not listed yet adds it (item 7)", func(t *testing.T) {
		n := ev.Count()
		srv.Put(sourcetest.Doc(sourcetest.Meta("alpha.docs", "late", 5)))
		a.ResourceUpdated(ctx(t), "alpha", "dpe://alpha.docs/late/pages/0")
		settle(t, a)
		assert.Equal(t, []string{"late", "b", "a"}, refs(a.Documents()), "re-listed in the background")
		signalled(t, &ev, n)
		n = ev.Count()
		srv.Delete("dpe://alpha.docs/late")
		a.ResourceUpdated(ctx(t), "alpha", "dpe://alpha.docs")
		settle(t, a)
		assert.Equal(t, []string{"b", "a"}, refs(a.Documents()), "a catalog update re-lists")
		signalled(t, &ev, n)
	})
	t.Run("a catalog update re-reads every document: an unannounced edit is seen (issue 27)", func(t *testing.T) {
		before, v := srv.Reads(), a.Version()
		m := sourcetest.Meta("alpha.docs", "b", 2)
		m.Title = "Quietly edited"
		srv.Put(sourcetest.Doc(m)) // a known URI: no notification
		a.ResourceUpdated(ctx(t), "alpha", "dpe://alpha.docs?format=json")
		settle(t, a)
		assert.Equal(t, before+2, srv.Reads(), "both documents read again")
		assert.Equal(t, "Quietly edited", a.Documents()[0].Title)
		assert.Greater(t, a.Version(), v)
		v = a.Version()
		a.ResourceUpdated(ctx(t), "alpha", "dpe://alpha.docs")
		settle(t, a)
		assert.Equal(t, v, a.Version(), "nothing changed: no change signalled")
	})
	t.Run("one update costs one Level-1 read and one change", func(t *testing.T) {
		before, n := srv.Reads(), ev.Count()
		m := sourcetest.Meta("alpha.docs", "a", 9)
		m.Title = "Renamed"
		srv.Put(sourcetest.Doc(m))
		a.ResourceUpdated(ctx(t), "alpha", "dpe://alpha.docs/a")
		settle(t, a)
		assert.Equal(t, before+1, srv.Reads())
		docs := a.Documents()
		assert.Equal(t, []string{"a", "b"}, refs(docs))
		assert.Equal(t, "Renamed", docs[0].Title)
		signalled(t, &ev, n)
	})
	t.Run("an update of a page re-reads its document; unchanged, it signals nothing", func(t *testing.T) {
		before, v := srv.ReadsOf("dpe://alpha.docs/b"), a.Version()
		a.ResourceUpdated(ctx(t), "alpha", "dpe://alpha.docs/b/pages/2?format=markdown")
		settle(t, a)
		assert.Equal(t, before+1, srv.ReadsOf("dpe://alpha.docs/b"))
		assert.Equal(t, v, a.Version())
	})
	t.Run("a document that became invalid is dropped", func(t *testing.T) {
		n := ev.Count()
		srv.Put(sourcetest.Resource{URI: "dpe://alpha.docs/b", Contents: sourcetest.Text("dpe://alpha.docs/b", "application/json", `{"doc_ref":"b"}`)})
		a.ResourceUpdated(ctx(t), "alpha", "dpe://alpha.docs/b")
		settle(t, a)
		assert.Equal(t, []string{"a"}, refs(a.Documents()))
		signalled(t, &ev, n)
	})
	t.Run("and comes back on its next update", func(t *testing.T) {
		n := ev.Count()
		srv.Put(sourcetest.Doc(sourcetest.Meta("alpha.docs", "b", 20)))
		a.ResourceUpdated(ctx(t), "alpha", "dpe://alpha.docs/b")
		settle(t, a)
		assert.Equal(t, []string{"b", "a"}, refs(a.Documents()))
		signalled(t, &ev, n)
	})
}

// Real notifications from the MCP server, forwarded off the read loop.
func TestAggregatorNotifications(t *testing.T) {
	srv := sourcetest.NewServer()
	srv.Put(sourcetest.Doc(sourcetest.Meta("alpha.docs", "a", 1)))
	cl := sourcetest.DialHTTP(t, "alpha", sourcetest.Serve(t, srv))
	var ev events
	a := New(WithOnChange(ev.Fn()), WithDebounce(20*time.Millisecond))
	t.Cleanup(a.Close)
	require.NoError(t, a.AddSource(ctx(t), cl))
	wire(t, cl, a)
	signalled(t, &ev, 0)

	t.Run("additions are read once each", func(t *testing.T) {
		n := ev.Count()
		for i, ref := range []string{"b", "c", "d"} {
			srv.Put(sourcetest.Doc(sourcetest.Meta("alpha.docs", ref, 10+i))) // one list_changed each
		}
		require.Eventually(t, func() bool { return a.Len() == 4 }, wait, tick)
		signalled(t, &ev, n)
		settle(t, a)
		for _, ref := range []string{"b", "c", "d"} {
			assert.Equal(t, 1, srv.ReadsOf("dpe://alpha.docs/"+ref), ref)
		}
		assert.Equal(t, 1, srv.ReadsOf("dpe://alpha.docs/a"))
	})
	t.Run("resources/updated re-reads one document", func(t *testing.T) {
		before, n := srv.Reads(), ev.Count()
		m := sourcetest.Meta("alpha.docs", "a", 50)
		m.Title = "Updated"
		srv.Put(sourcetest.Doc(m))
		srv.Updated("dpe://alpha.docs/a")
		require.Eventually(t, func() bool { return a.Query(protocol.GetFinderReq{}, nil).Documents[0].Title == "Updated" }, wait, tick)
		signalled(t, &ev, n)
		settle(t, a)
		assert.Equal(t, before+1, srv.Reads())
	})
	t.Run("a removal is a change", func(t *testing.T) {
		n := ev.Count()
		srv.Delete("dpe://alpha.docs/b", "dpe://alpha.docs/c")
		require.Eventually(t, func() bool { return a.Len() == 2 }, wait, tick)
		signalled(t, &ev, n)
	})
}

// TestAggregatorRemoveAndRestartSource: removing a source withdraws its
// documents (a change); removing it again, or an unknown one, changes
// nothing; a restarted source with another document set replaces them.
// Changes are counted on Version, not on OnChange: how the debouncer groups
// them depends on the machine's load (it once saw two sources' builds as
// two bursts).
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
	signalled(t, &ev, 0)
	assert.Equal(t, []string{"y", "x", "z"}, refs(a.Documents()))

	v, n := a.Version(), ev.Count()
	a.RemoveSource("one")
	assert.Equal(t, []string{"z"}, refs(a.Documents()))
	assert.Equal(t, v+1, a.Version())
	signalled(t, &ev, n)

	v = a.Version()
	a.RemoveSource("one") // already gone
	a.RemoveSource("nobody")
	assert.Equal(t, v, a.Version())

	// The server restarts with another document set.
	n = ev.Count()
	s1.Delete("dpe://one.docs/x")
	s1.Put(sourcetest.Doc(sourcetest.Meta("one.docs", "w", 9)))
	require.NoError(t, a.AddSource(ctx(t), sourcetest.DialHTTP(t, "one", url1)))
	assert.Equal(t, []string{"w", "y", "z"}, refs(a.Documents()))
	assert.Greater(t, a.Version(), v)
	signalled(t, &ev, n)
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
	signalled(t, &ev, 0)

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
	require.NoError(t, a.Wait(ctx(t)))
	assert.Zero(t, ev.Count(), "the pending burst is dropped")
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
