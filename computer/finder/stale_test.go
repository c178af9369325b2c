package finder

import (
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/sourcetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRevalidationBoundsStaleness (issue 27, item 2): a server without
// resources.subscribe whose edits and additions are never announced is
// seen all the same, by the revalidation. The bound is counted in rounds,
// not in time: a round that started after the change has ended once two
// rounds ended after it, and the catalog then shows the change. In time,
// that is at most max(period, D) + D after the change, D being one round's
// duration (spec/finder.md, Update mechanism).
func TestRevalidationBoundsStaleness(t *testing.T) {
	const period = 30 * time.Millisecond
	srv := sourcetest.NewServer(sourcetest.WithoutSubscribe())
	srv.Put(sourcetest.Doc(sourcetest.Meta("quiet.docs", "a", 1)), sourcetest.Doc(sourcetest.Meta("quiet.docs", "b", 2)))
	cl := sourcetest.DialHTTP(t, "quiet", sourcetest.Serve(t, srv))
	var ev events
	a := New(WithOnChange(ev.Fn()), WithDebounce(5*time.Millisecond), WithRevalidation(period))
	t.Cleanup(a.Close)
	require.NoError(t, a.AddSource(ctx(t), cl))
	assert.Equal(t, []string{"b", "a"}, refs(a.Documents()))
	// No notification reaches the Aggregator (nothing is wired): only the
	// revalidation can see what follows.

	afterRounds := func(n uint64) {
		t.Helper()
		target := a.cache.Rounds() + n
		require.Eventually(t, func() bool { return a.cache.Rounds() >= target }, wait, tick, "revalidation rounds")
	}

	t.Run("rounds that find nothing signal nothing", func(t *testing.T) {
		afterRounds(1)
		v, n := a.Version(), ev.Count()
		afterRounds(3)
		assert.Equal(t, v, a.Version())
		assert.Equal(t, n, ev.Count())
	})
	t.Run("an edit nobody announced", func(t *testing.T) {
		n := ev.Count()
		m := sourcetest.Meta("quiet.docs", "a", 5)
		m.Title = "Edited quietly"
		start := time.Now()
		srv.Put(sourcetest.Doc(m)) // a known URI: the server says nothing
		afterRounds(2)
		docs := a.Documents()
		require.Len(t, docs, 2)
		assert.Equal(t, "Edited quietly", docs[0].Title)
		signalled(t, &ev, n)
		t.Logf("seen after %v (period %v)", time.Since(start), period)
	})
	t.Run("an addition and a removal nobody announced", func(t *testing.T) {
		srv.Put(sourcetest.Doc(sourcetest.Meta("quiet.docs", "c", 9))) // list_changed goes nowhere
		srv.Delete("dpe://quiet.docs/b")
		afterRounds(2)
		assert.Equal(t, []string{"c", "a"}, refs(a.Documents()))
	})
}

// TestUpdateNotBehindHangingDocument (issue 27, item 3): while one
// document's read hangs, an update of another document of the same server
// is read and published at once. Event order, not time: the hanging read
// is still held when the edit shows.
func TestUpdateNotBehindHangingDocument(t *testing.T) {
	srv := sourcetest.NewServer()
	srv.Put(sourcetest.Doc(sourcetest.Meta("h.docs", "slow", 1)), sourcetest.Doc(sourcetest.Meta("h.docs", "fast", 2)))
	cl := sourcetest.DialHTTP(t, "h", sourcetest.Serve(t, srv))
	var ev events
	a := New(WithOnChange(ev.Fn()), WithDebounce(5*time.Millisecond), WithReadTimeout(time.Hour))
	t.Cleanup(a.Close)
	require.NoError(t, a.AddSource(ctx(t), cl))
	wire(t, cl, a)

	hang := srv.Block(t, "dpe://h.docs/slow")
	srv.Updated("dpe://h.docs/slow")
	select {
	case <-hang.Entered():
	case <-time.After(wait):
		t.Fatal("the slow document was not read again")
	}
	n := ev.Count()
	m := sourcetest.Meta("h.docs", "fast", 3)
	m.Title = "Fast edit"
	srv.Put(sourcetest.Doc(m))
	srv.Updated("dpe://h.docs/fast")
	require.Eventually(t, func() bool { return a.Documents()[0].Title == "Fast edit" }, wait, tick)
	signalled(t, &ev, n)
	hang.Release() // only now: the edit above was published while it hung
	require.NoError(t, a.Wait(ctx(t)))
	assert.Len(t, a.Documents(), 2, "the slow document is kept")
}

// TestRestartFirstChangeAnnouncedAsSoonAsRead (issue 27, item 3): after a
// server restart, while its cold build still waits for a document that
// hangs, the documents already read are published, and an edit of one of
// them is read and published at once, before the build ends.
func TestRestartFirstChangeAnnouncedAsSoonAsRead(t *testing.T) {
	srv := sourcetest.NewServer()
	srv.Put(sourcetest.Doc(sourcetest.Meta("r.docs", "slow", 1)), sourcetest.Doc(sourcetest.Meta("r.docs", "fast", 2)))
	url := sourcetest.Serve(t, srv)
	var ev events
	a := New(WithOnChange(ev.Fn()), WithDebounce(5*time.Millisecond), WithReadTimeout(time.Hour))
	t.Cleanup(a.Close)
	require.NoError(t, a.AddSource(ctx(t), sourcetest.DialHTTP(t, "r", url)))
	a.RemoveSource("r") // the server went down

	hang := srv.Block(t, "dpe://r.docs/slow")
	cl := sourcetest.DialHTTP(t, "r", url) // and came back
	build := a.StartSource(ctx(t), cl)
	wire(t, cl, a)
	require.Eventually(t, func() bool { return len(a.Documents()) == 1 }, wait, tick, "the document read is published at once")
	n := ev.Count()
	m := sourcetest.Meta("r.docs", "fast", 3)
	m.Title = "First change after the restart"
	srv.Put(sourcetest.Doc(m))
	srv.Updated("dpe://r.docs/fast")
	require.Eventually(t, func() bool { return a.Documents()[0].Title == "First change after the restart" }, wait, tick)
	signalled(t, &ev, n)
	select {
	case <-build.Done():
		t.Fatal("the build ended: the hanging read was not held")
	default:
	}
	hang.Release()
	<-build.Done()
	require.NoError(t, build.Err())
	assert.Len(t, a.Documents(), 2)
}
