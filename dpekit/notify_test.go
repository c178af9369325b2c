package dpekit_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/dpekit"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// inbox records the notifications a client receives, without blocking the
// client's read loop.
type inbox struct {
	mu    sync.Mutex
	notes []mcp.JSONRPCNotification
}

func listen(c *client.Client) *inbox {
	in := &inbox{}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		in.mu.Lock()
		in.notes = append(in.notes, n)
		in.mu.Unlock()
	})
	return in
}

// updated returns the URIs of the resources/updated received so far, in order.
func (in *inbox) updated() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []string
	for _, n := range in.notes {
		if n.Method == mcp.MethodNotificationResourceUpdated {
			out = append(out, fmt.Sprint(n.Params.AdditionalFields["uri"]))
		}
	}
	return out
}

func (in *inbox) listChanged() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	n := 0
	for _, note := range in.notes {
		if note.Method == mcp.MethodNotificationResourcesListChanged {
			n++
		}
	}
	return n
}

func (in *inbox) reset() {
	in.mu.Lock()
	in.notes = nil
	in.mu.Unlock()
}

func subscribe(t testing.TB, c *client.Client, uri string) {
	t.Helper()
	req := mcp.SubscribeRequest{}
	req.Params.URI = uri
	require.NoError(t, c.Subscribe(testCtx(t), req))
}

func unsubscribe(t testing.TB, c *client.Client, uri string) {
	t.Helper()
	req := mcp.UnsubscribeRequest{}
	req.Params.URI = uri
	require.NoError(t, c.Unsubscribe(testCtx(t), req))
}

func eventually(t testing.TB, cond func() bool, msg string, args ...any) {
	t.Helper()
	require.Eventually(t, cond, 30*time.Second, 5*time.Millisecond, append([]any{msg}, args...)...)
}

func listURIs(t testing.TB, c *client.Client) []string {
	res, err := c.ListResources(testCtx(t), mcp.ListResourcesRequest{})
	require.NoError(t, err)
	var out []string
	for _, r := range res.Resources {
		out = append(out, r.URI)
	}
	return out
}

func TestNotifications(t *testing.T) {
	for _, kind := range []string{overPipe, overHTTP} {
		t.Run(kind, func(t *testing.T) {
			p := testProvider()
			srv := newServer(t, p)
			a := connect(t, kind, srv)
			inA := listen(a)
			base := "dpe://" + testHost
			rpt := base + "/" + refReport
			page := rpt + "/pages/0?format=markdown"
			subscribe(t, a, rpt)
			subscribe(t, a, page)
			subscribe(t, a, base+"/"+refBig)

			// An edit reaches every subscribed URI of the document, and
			// only those.
			p.put(dpekit.Document{DocRef: refReport, Title: "2026 年度报告 (rev 2)", FileType: "xlsx", FileURI: "file:///r.xlsx"},
				dpekit.Page{Title: "only"})
			srv.Notify(dpekit.Change{Kind: dpekit.DocumentUpdated, DocRef: refReport})
			eventually(t, func() bool { return len(inA.updated()) == 2 }, "two resources/updated")
			assert.ElementsMatch(t, []string{rpt, page}, inA.updated())
			v := read(t, a, rpt)
			assert.Equal(t, "2026 年度报告 (rev 2)", v["title"])
			assert.EqualValues(t, 1, v["page_count"])

			// Unsubscribing stops the URI's notifications.
			unsubscribe(t, a, page)
			inA.reset()
			srv.Notify(dpekit.Change{Kind: dpekit.DocumentUpdated, DocRef: refReport})
			eventually(t, func() bool { return len(inA.updated()) >= 1 }, "resources/updated after unsubscribe")
			// A later list change bounds the wait: it is queued after any
			// updated the first change could have caused.
			p.put(dpekit.Document{DocRef: "new-doc", Title: "New", FileType: "md", FileURI: "file:///new.md"}, dpekit.Page{})
			srv.Notify(dpekit.Change{Kind: dpekit.DocumentAdded, DocRef: "new-doc"})
			eventually(t, func() bool { return inA.listChanged() >= 1 }, "resources/list_changed on add")
			assert.Equal(t, []string{rpt}, inA.updated())
			assert.Contains(t, listURIs(t, a), base+"/new-doc")

			// Removal: list_changed, the resource is gone, reads answer 4201.
			inA.reset()
			p.remove("new-doc")
			srv.Notify(dpekit.Change{Kind: dpekit.DocumentRemoved, DocRef: "new-doc"})
			eventually(t, func() bool { return inA.listChanged() >= 1 }, "resources/list_changed on remove")
			assert.NotContains(t, listURIs(t, a), base+"/new-doc")
			assert.Equal(t, protocol.CodeDocumentNotFound, readErr(t, a, base+"/new-doc").Code)
			assert.Empty(t, inA.updated(), "no subscriber of new-doc or of the catalog")

			// A catalog subscriber hears of every change.
			subscribe(t, a, base)
			inA.reset()
			srv.Notify(dpekit.Change{Kind: dpekit.DocumentUpdated, DocRef: refEmpty})
			eventually(t, func() bool { return slices.Contains(inA.updated(), base) }, "catalog updated")
			assert.Equal(t, []string{base}, inA.updated())
		})
	}
}

// TestNotificationsOnlySubscribers runs two sessions on one HTTP server: the
// one that did not subscribe gets list changes but no resources/updated.
func TestNotificationsOnlySubscribers(t *testing.T) {
	p := testProvider()
	srv := newServer(t, p)
	a := connect(t, overHTTP, srv)
	b := connect(t, overHTTP, srv)
	inA, inB := listen(a), listen(b)
	rpt := "dpe://" + testHost + "/" + refReport
	subscribe(t, a, rpt)
	require.Equal(t, 2, dpekit.SessionsForTest(srv))
	assert.Equal(t, []string{rpt}, dpekit.SubscriptionsForTest(srv, a.GetSessionId()))
	assert.Empty(t, dpekit.SubscriptionsForTest(srv, b.GetSessionId()))

	srv.Notify(dpekit.Change{Kind: dpekit.DocumentUpdated, DocRef: refReport})
	p.put(dpekit.Document{DocRef: "x", Title: "X", FileType: "md", FileURI: "file:///x.md"})
	srv.Notify(dpekit.Change{Kind: dpekit.DocumentAdded, DocRef: "x"})
	eventually(t, func() bool { return inA.listChanged() >= 1 && inB.listChanged() >= 1 }, "both sessions hear the list change")
	assert.Equal(t, []string{rpt}, inA.updated())
	assert.Empty(t, inB.updated(), "resources/updated only reaches subscribers")

	// Ending a session drops it and its subscriptions.
	require.NoError(t, a.Close())
	eventually(t, func() bool { return dpekit.SessionsForTest(srv) == 1 }, "closed session dropped")
	assert.Empty(t, dpekit.SubscriptionsForTest(srv, a.GetSessionId()))
}

// TestNotificationBurst sends 1000 changes at once: mcp-go's own sends drop
// whatever does not fit the session's queue of 100; the kit delivers all.
func TestNotificationBurst(t *testing.T) {
	const n = 1000
	for _, kind := range []string{overPipe, overHTTP} {
		t.Run(kind, func(t *testing.T) {
			p := newMemProvider()
			for i := range n {
				p.put(dpekit.Document{DocRef: fmt.Sprintf("doc-%04d", i), Title: fmt.Sprint(i), FileType: "txt", FileURI: "file:///x"})
			}
			srv := newServer(t, p)
			c := connect(t, kind, srv)
			in := listen(c)
			want := make([]string, n)
			for i := range n {
				want[i] = fmt.Sprintf("dpe://%s/doc-%04d", testHost, i)
				subscribe(t, c, want[i])
			}
			for i := range n {
				srv.Notify(dpekit.Change{Kind: dpekit.DocumentUpdated, DocRef: fmt.Sprintf("doc-%04d", i)})
			}
			eventually(t, func() bool { return len(in.updated()) >= n }, "all %d resources/updated", n)
			assert.ElementsMatch(t, want, in.updated())

			// 1000 updates of one document: coalesced, never lost; the last
			// one is always followed by a notification. The list change
			// marks the end of the burst; within one batch of changes the
			// kit sends list_changed before resources/updated, so both are
			// awaited.
			in.reset()
			for range n {
				srv.Notify(dpekit.Change{Kind: dpekit.DocumentUpdated, DocRef: "doc-0000"})
			}
			p.put(dpekit.Document{DocRef: "doc-fence", Title: "fence", FileType: "txt", FileURI: "file:///x"})
			srv.Notify(dpekit.Change{Kind: dpekit.DocumentAdded, DocRef: "doc-fence"})
			eventually(t, func() bool { return in.listChanged() >= 1 && len(in.updated()) >= 1 }, "list change and an update after the burst")
			got := in.updated()
			assert.LessOrEqual(t, len(got), n)
			for _, u := range got {
				assert.Equal(t, want[0], u)
			}
		})
	}
}

func TestCloseStopsWatcher(t *testing.T) {
	w := &tickWatcher{memProvider: testProvider(), started: make(chan struct{}), stopped: make(chan struct{})}
	srv, err := dpekit.New(testCtx(t), testHost, w)
	require.NoError(t, err)
	c := connect(t, overHTTP, srv)
	in := listen(c)
	subscribe(t, c, "dpe://"+testHost+"/"+refReport)
	<-w.started
	eventually(t, func() bool { return len(in.updated()) > 0 }, "watcher change delivered")
	done := make(chan struct{})
	go func() { _ = srv.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return")
	}
	select {
	case <-w.stopped:
	default:
		t.Fatal("Close returned before the watcher ended")
	}
}

// tickWatcher reports an update of rpt-2026 every few milliseconds until its
// context ends.
type tickWatcher struct {
	*memProvider
	started, stopped chan struct{}
}

func (w *tickWatcher) Watch(ctx context.Context, emit func(dpekit.Change)) error {
	defer close(w.stopped)
	close(w.started)
	tk := time.NewTicker(5 * time.Millisecond)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tk.C:
			emit(dpekit.Change{Kind: dpekit.DocumentUpdated, DocRef: refReport})
		}
	}
}
