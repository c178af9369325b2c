package finder

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/sourcetest"
	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gatedSource counts the listings of a real connection and holds the
// second one (the first re-list) until released.
type gatedSource struct {
	*mcpclient.Conn
	lists   atomic.Int32
	release chan struct{}
}

func (g *gatedSource) ListResources(ctx context.Context) ([]mcp.Resource, error) {
	if g.lists.Add(1) == 2 {
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.Conn.ListResources(ctx)
}

// A real DPE server floods resources/updated for 1,000 documents it never
// listed, each of which asks for a re-list: the re-lists are coalesced (one
// in flight, one pending), so the whole flood costs at most two re-lists, and the
// server's event goroutine is never held by them (every notification is
// handled while the first re-list is still held).
func TestUpdatesOfUnlistedDocumentsCoalesce(t *testing.T) {
	const flood = 1000
	a := New(WithDebounce(20 * time.Millisecond))
	var src atomic.Pointer[gatedSource]
	var handled atomic.Int32
	release := make(chan struct{})
	h := mcpclient.Hooks{
		Up: func(ctx context.Context, c *mcpclient.Conn) {
			g := &gatedSource{Conn: c, release: release}
			src.Store(g)
			assert.NoError(t, a.AddSource(ctx, g))
		},
		Notification: func(ctx context.Context, c *mcpclient.Conn, n mcp.JSONRPCNotification) {
			if uri, _ := n.Params.AdditionalFields["uri"].(string); uri != "" {
				a.ResourceUpdated(ctx, c.Name(), uri)
				handled.Add(1)
			}
		},
	}
	cfg := protocol.MCPServerConfig{Stdio: &protocol.MCPStdioConfig{Name: "flood", ForbiddenTools: []string{}, ToolMeta: map[string]protocol.ToolMeta{},
		ServerParameters: protocol.MCPStdioParameters{Command: testmcp.Binary(t), Args: []string{"-host", "real", "-docs", "2", "-flood-updates", "1000",
			"-flood-on-subscribe"}}}}
	m := mcpclient.NewManager([]protocol.MCPServerConfig{cfg}, mcpclient.WithHooks(h))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = m.Close(ctx)
	})
	t.Cleanup(func() { // a failure before the release below must not hold the re-list
		select {
		case <-release:
		default:
			close(release)
		}
	})
	before := runtime.NumGoroutine()
	start := time.Now()
	require.NoError(t, m.Start(ctx(t)))
	// The flood starts once the Manager holds the connection (what a server
	// sends before its handler is in place is not taken, and not counted).
	_ = m.Conn("flood").Subscribe(ctx(t), "dpe://flood/start") // its arrival starts the flood
	require.Eventually(t, func() bool { return handled.Load() == flood }, 2*time.Minute, 5*time.Millisecond,
		"every notification handled while the first re-list is held")
	goroutines := runtime.NumGoroutine()
	close(release)
	a.Close() // waits for the background re-list (and the pending one)
	t.Logf("flood of %d updates of unlisted documents handled in %v; goroutines %d before, %d during",
		flood, time.Since(start).Round(time.Millisecond), before, goroutines)
	lists := src.Load().lists.Load()
	t.Logf("listings: %d", lists)
	assert.GreaterOrEqual(t, lists, int32(2), "the first listing, then a re-list")
	assert.LessOrEqual(t, lists, int32(3), "one re-list held, at most one pending for the rest")
	assert.Equal(t, 2, a.Len(), "the listed documents stay")
	assert.Less(t, goroutines, before+50, "no goroutine per notification")
}

// A real DPE server whose documents are slow to read: the catalog build
// publishes the documents read so far while it runs, stops at its budget
// (long before documents × read timeout), leaves the slow documents out
// with one warning, and reads them at the server's next re-list.
func TestCatalogBuildBudget(t *testing.T) {
	cl := sourcetest.DialStdio(t, "slow", testmcp.Binary(t), "-host", "slow", "-docs", "6",
		"-slow-docs", "doc-2,doc-3", "-read-delay", "1h", "-tools", "mutate")
	var logs sourcetest.LogRecorder
	a := New(WithLogger(logs.Logger()), WithConcurrency(3), WithReadTimeout(time.Hour), WithBuildBudget(2*time.Second), WithDebounce(10*time.Millisecond))
	t.Cleanup(a.Close)
	bctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var built atomic.Bool
	errc := make(chan error, 1)
	go func() { errc <- a.AddSource(bctx, cl); built.Store(true) }()
	require.Eventually(t, func() bool { return a.Len() > 0 }, 10*time.Second, 5*time.Millisecond, "documents published during the build")
	during := a.Len()
	wasBuilding := !built.Load()
	require.NoError(t, <-errc)
	assert.True(t, wasBuilding, "the first documents were published while the build ran (%d)", during)
	assert.NoError(t, bctx.Err(), "the build stopped at its budget")
	assert.ElementsMatch(t, []string{"doc-1", "doc-4", "doc-5", "doc-6"}, refs(a.Documents()), "the slow documents are left out")
	warned := 0
	for _, w := range logs.Warnings() {
		if strings.HasPrefix(w, "finder: the build's time budget is spent") {
			warned++
		}
	}
	assert.Equal(t, 1, warned)
}

// A DPE server that answers a document's read with another document's
// Level 1 (a different doc_ref, or an encoded one that decodes elsewhere):
// that document is skipped with a warning; the others are listed.
func TestLevelOneNamingAnotherDocumentSkipped(t *testing.T) {
	srv := sourcetest.NewServer()
	liar := sourcetest.Meta("h.docs", "b", 2) // served at the URI of "a"
	liar.URI = "dpe://h.docs/a"
	b, err := jsonMarshal(liar)
	require.NoError(t, err)
	spaced := sourcetest.Meta("h.docs", "x y", 3) // an encoded doc_ref that decodes to its own
	spaced.URI = "dpe://h.docs/x%20y"
	srv.Put(sourcetest.Resource{URI: "dpe://h.docs/a", Contents: sourcetest.Text("dpe://h.docs/a", "application/json", string(b))},
		sourcetest.Doc(sourcetest.Meta("h.docs", "b", 2)), sourcetest.Doc(spaced))
	cl := sourcetest.DialHTTP(t, "h", sourcetest.Serve(t, srv))
	var logs sourcetest.LogRecorder
	a := New(WithLogger(logs.Logger()))
	t.Cleanup(a.Close)
	require.NoError(t, a.AddSource(ctx(t), cl))
	assert.ElementsMatch(t, []string{"b", "x y"}, refs(a.Documents()))
	warnings := strings.Join(logs.Warnings(), "\n")
	assert.Contains(t, warnings, `finder: skipping resource server=h uri=dpe://h.docs/a err=invalid Level 1: dpe://h.docs/a answers doc_ref "b", not "a"`)
	assert.Equal(t, 1, strings.Count(warnings, "skipping resource"))
}

// Documents with long keyword lists: a get_finder page is cut to fit the
// payload limit (fewer than limit, total_count unchanged), paging with the
// offset reaches every document, a document too large on its own is sent
// clipped, and the Finder keeps at most 256 keywords of a document.
func TestQueryFitsThePayloadLimit(t *testing.T) {
	const limit = 256 << 10
	srv := sourcetest.NewServer()
	kw := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%04d%s", i, strings.Repeat("k", 252))
		}
		return out
	}
	for i := range 60 {
		m := sourcetest.Meta("h.docs", fmt.Sprintf("d%02d", i), i)
		m.Keywords = kw(20) // about 5 KB each
		srv.Put(sourcetest.Doc(m))
	}
	huge := sourcetest.Meta("h.docs", "huge", 100) // the newest: first
	huge.Keywords = kw(2000)                       // the Finder keeps 256
	huge.Title = strings.Repeat("文", 65536)        // 192 KiB
	long := strings.Repeat("字", 65536)
	huge.Summary = long // 192 KiB more: over the limit alone
	srv.Put(sourcetest.Doc(huge))
	cl := sourcetest.DialHTTP(t, "h", sourcetest.Serve(t, srv))
	a := New(WithMaxAnswerBytes(limit))
	t.Cleanup(a.Close)
	require.NoError(t, a.AddSource(ctx(t), cl))
	require.Equal(t, 61, a.Len())

	seen := map[string]bool{}
	for offset, pages := 0, 0; offset < 61; pages++ {
		require.Less(t, pages, 61, "paging ends")
		ret := a.Query(protocol.GetFinderReq{ReqID: "r", Offset: offset, Limit: 100}, nil)
		raw, err := json.Marshal(ret)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(raw), limit, "offset %d", offset)
		require.NoError(t, protocol.Validate(protocol.EventGetFinder, protocol.Ack, raw))
		assert.Equal(t, 61, ret.TotalCount)
		require.NotEmpty(t, ret.Documents)
		if offset == 0 {
			assert.Equal(t, "huge", ret.Documents[0].DocRef, "sent, clipped")
			assert.Empty(t, ret.Documents[0].Keywords)
			assert.Less(t, len(ret.Documents), 61, "cut to the limit")
		}
		for _, d := range ret.Documents {
			seen[d.DocRef] = true
		}
		offset += len(ret.Documents)
	}
	assert.Len(t, seen, 61, "every document reached by paging")
	assert.Len(t, a.Documents()[0].Keywords, maxKeywords, "the cache keeps the first keywords")
	assert.Equal(t, huge.Title, a.Documents()[0].Title, "and the rest of the document whole")
}
