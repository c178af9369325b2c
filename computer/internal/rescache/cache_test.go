package rescache

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fake is an in-memory Source for the cache's concurrency properties (the
// MCP behaviour is tested against real servers in finder and desktop).
type fake struct {
	name string

	mu     sync.Mutex
	uris   []string
	bodies map[string]string

	lists, reads, subs    atomic.Int32
	inflight, maxInflight atomic.Int32
	block                 chan struct{}   // when set, reads wait for it (or ctx)
	blockList             chan struct{}   // when set, listings wait for it (or ctx)
	hang                  map[string]bool // reads of these URIs wait for ctx
}

var _ mcpsource.Source = (*fake)(nil)

func newFake(name string, uris ...string) *fake {
	f := &fake{name: name, bodies: map[string]string{}}
	f.set(uris...)
	return f
}

func (f *fake) set(uris ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.uris = uris
	for _, u := range uris {
		if _, ok := f.bodies[u]; !ok {
			f.bodies[u] = "body of " + u
		}
	}
}

func (f *fake) wait(ctx context.Context, list bool) error {
	f.mu.Lock()
	b := f.block
	if list {
		b = f.blockList
	}
	f.mu.Unlock()
	if b == nil {
		return nil
	}
	select {
	case <-b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fake) Name() string            { return f.name }
func (f *fake) SupportsSubscribe() bool { return true }
func (f *fake) ListResources(ctx context.Context) ([]mcp.Resource, error) {
	f.lists.Add(1)
	if err := f.wait(ctx, true); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []mcp.Resource
	for _, u := range f.uris {
		out = append(out, mcp.Resource{URI: u, Name: u})
	}
	return out, nil
}
func (f *fake) ListResourceTemplates(context.Context) ([]mcp.ResourceTemplate, error) {
	return nil, nil
}
func (f *fake) Subscribe(context.Context, string) error { f.subs.Add(1); return nil }
func (f *fake) ReadResource(ctx context.Context, uri string) ([]mcp.ResourceContents, error) {
	f.reads.Add(1)
	n := f.inflight.Add(1)
	defer f.inflight.Add(-1)
	for {
		m := f.maxInflight.Load()
		if n <= m || f.maxInflight.CompareAndSwap(m, n) {
			break
		}
	}
	if err := f.wait(ctx, false); err != nil {
		return nil, err
	}
	f.mu.Lock()
	hang := f.hang[uri]
	f.mu.Unlock()
	if hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	body, ok := f.bodies[uri]
	if !ok || strings.Contains(uri, "fail") {
		return nil, errors.New("no such resource")
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, Text: body}}, nil
}

var codec = Codec[string]{
	Select: func(uri string) (string, bool) { return uri, strings.HasPrefix(uri, "t://") },
	Match:  func(uri string) (string, bool) { return uri, strings.HasPrefix(uri, "t://") },
	Decode: func(_ string, _ mcp.Resource, c []protocol.ResourceContents) (string, error) { return *c[0].Text, nil },
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func uris(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "t://h/" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	return out
}

func TestConcurrencyBound(t *testing.T) {
	f := newFake("s", uris(200)...)
	c := New(codec, Options{Concurrency: 3})
	defer c.Close()
	require.NoError(t, c.Add(ctx(t), f))
	assert.Equal(t, 200, c.Snapshot().Len)
	assert.LessOrEqual(t, f.maxInflight.Load(), int32(3))
	assert.EqualValues(t, 200, f.reads.Load())
	assert.EqualValues(t, 200, f.subs.Load(), "every resource subscribed")
}

func TestListChangedCoalesces(t *testing.T) {
	f := newFake("s", "t://h/a")
	c := New(codec, Options{})
	defer c.Close()
	require.NoError(t, c.Add(ctx(t), f))
	f.lists.Store(0)

	block := make(chan struct{})
	f.mu.Lock()
	f.blockList = block
	f.mu.Unlock()
	first := c.Refresh(ctx(t), "s", false) // lists, and is held
	require.Eventually(t, func() bool { return f.lists.Load() == 1 }, 10*time.Second, time.Millisecond)
	// Refresh returns once the request is queued: all 50 are, before the
	// listing is let go.
	var later []<-chan struct{}
	for range 50 {
		later = append(later, c.Refresh(ctx(t), "s", false))
	}
	f.set("t://h/a", "t://h/b")
	close(block)
	for _, done := range append(later, first) {
		waitCtx(ctx(t), done)
	}
	assert.EqualValues(t, 2, f.lists.Load(), "the running re-list plus one for every request that arrived during it")
	assert.Equal(t, 2, c.Snapshot().Len)
}

func TestUpdatedCoalescesPerResource(t *testing.T) {
	f := newFake("s", "t://h/a", "t://h/b")
	c := New(codec, Options{})
	defer c.Close()
	require.NoError(t, c.Add(ctx(t), f))
	f.reads.Store(0)
	block := make(chan struct{})
	f.mu.Lock()
	f.block = block
	f.mu.Unlock()
	first := c.Update(ctx(t), "s", "t://h/a")
	require.Eventually(t, func() bool { return f.reads.Load() == 1 }, 10*time.Second, time.Millisecond)
	var later []<-chan struct{}
	for range 30 {
		later = append(later, c.Update(ctx(t), "s", "t://h/a"))
	}
	close(block)
	for _, done := range append(later, first) {
		waitCtx(ctx(t), done)
	}
	assert.EqualValues(t, 2, f.reads.Load(), "the running read plus one for every request that arrived during it")
}

func TestSnapshotNeverWaitsForRefresh(t *testing.T) {
	f := newFake("s", "t://h/a")
	c := New(codec, Options{})
	defer c.Close()
	require.NoError(t, c.Add(ctx(t), f))
	block := make(chan struct{})
	f.mu.Lock()
	f.block = block
	f.mu.Unlock()
	done := make(chan struct{})
	go func() { c.Updated(ctx(t), "s", "t://h/a"); close(done) }()
	require.Eventually(t, func() bool { return f.inflight.Load() == 1 }, 10*time.Second, time.Millisecond)
	for range 1000 {
		assert.Equal(t, 1, c.Snapshot().Len)
	}
	close(block)
	<-done
}

func TestRemoveDuringAddDiscardsTheStaleResult(t *testing.T) {
	f := newFake("s", "t://h/a")
	var changes atomic.Int32
	c := New(codec, Options{Debounce: time.Millisecond, OnChange: func() { changes.Add(1) }})
	defer c.Close()
	block := make(chan struct{})
	f.block = block
	done := make(chan error)
	go func() { done <- c.Add(ctx(t), f) }()
	require.Eventually(t, func() bool { return f.inflight.Load() == 1 }, 10*time.Second, time.Millisecond)
	c.Remove("s")
	close(block)
	require.NoError(t, <-done)
	assert.Zero(t, c.Snapshot().Len)
	c.ListChanged(ctx(t), "s") // unknown now
	require.NoError(t, c.Wait(ctx(t)))
	assert.Zero(t, c.Version(), "nothing was published")
}

func TestCloseCancelsAndLeaksNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	f := newFake("s", uris(20)...)
	block := make(chan struct{})
	defer close(block)
	f.block = block
	c := New(codec, Options{Concurrency: 4, OnChange: func() {}})
	done := make(chan error)
	go func() { done <- c.Add(context.Background(), f) }()
	require.Eventually(t, func() bool { return f.inflight.Load() == 4 }, 10*time.Second, time.Millisecond)
	c.Close()
	select {
	case err := <-done:
		require.NoError(t, err) // the listing succeeded before; reads were cancelled and skipped
	case <-time.After(10 * time.Second):
		t.Fatal("Add did not return after Close")
	}
	assert.Zero(t, c.Snapshot().Len)
	assert.ErrorIs(t, c.Add(context.Background(), f), ErrClosed)
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polling the goroutine count; testify's Eventually adds its own
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines left behind")
}

func TestDuplicateAndUnselectedURIs(t *testing.T) {
	f := newFake("s", "t://h/a", "x://h/b", "t://h/a", "t://h/fail")
	c := New(codec, Options{})
	defer c.Close()
	require.NoError(t, c.Add(ctx(t), f))
	snap := c.Snapshot()
	assert.Equal(t, []string{"s"}, snap.Servers)
	assert.Equal(t, []string{"body of t://h/a"}, snap.Items["s"])
	assert.EqualValues(t, 2, f.reads.Load(), "a and fail, once each")
}

// A source whose every read hangs is given up after giveUpAfter timeouts in
// a row instead of being read to the end (200 × ReadTimeout / Concurrency);
// the cache stays usable, and a source whose reads only sometimes time out
// is read to the end.
func TestHangingReadsGivenUp(t *testing.T) {
	f := newFake("s", uris(200)...)
	f.block = make(chan struct{}) // never released: every read times out
	var logs strings.Builder
	var mu sync.Mutex
	c := New(codec, Options{Concurrency: 4, ReadTimeout: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return logs.Write(p)
		}), nil))})
	defer c.Close()
	require.NoError(t, c.Add(ctx(t), f))
	reads := f.reads.Load()
	assert.LessOrEqual(t, reads, int32(giveUpAfter(4))+4, "given up after the timeouts in a row (and the reads then in flight)")
	assert.GreaterOrEqual(t, reads, int32(giveUpAfter(4)))
	assert.Zero(t, c.Snapshot().Len)
	mu.Lock()
	assert.Contains(t, logs.String(), "reads of this MCP server keep timing out")
	assert.Equal(t, 1, strings.Count(logs.String(), "keep timing out"))
	mu.Unlock()

	// Updates still read the resources left out.
	f.mu.Lock()
	f.block = nil
	f.mu.Unlock()
	c.Updated(ctx(t), "s", uris(200)[199])
	assert.Equal(t, 1, c.Snapshot().Len)

	// Timeouts that are not in a row do not give up: every other read
	// hangs, the others answer.
	all := uris(60)
	g := newFake("g", all...)
	g.hang = map[string]bool{}
	for i, u := range all {
		if i%2 == 1 {
			g.hang[u] = true
		}
	}
	c2 := New(codec, Options{Concurrency: 1, ReadTimeout: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	defer c2.Close()
	require.NoError(t, c2.Add(ctx(t), g))
	assert.EqualValues(t, 60, g.reads.Load(), "every resource read")
	assert.Equal(t, 30, c2.Snapshot().Len)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// The build stops at its budget; what was not read then is read at the
// next re-list even though the URI set did not change.
func TestBudgetLeavesUnreadUntilReList(t *testing.T) {
	all := uris(10)
	f := newFake("s", all...)
	f.hang = map[string]bool{all[3]: true, all[7]: true}
	c := New(codec, Options{Concurrency: 4, ReadTimeout: time.Hour, Budget: 300 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	defer c.Close()
	bctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, c.Add(bctx, f))
	assert.NoError(t, bctx.Err(), "stopped by the budget, not by the read timeout")
	assert.Equal(t, 8, c.Snapshot().Len)

	f.mu.Lock()
	f.hang = nil
	f.mu.Unlock()
	reads := f.reads.Load()
	c.ListChanged(ctx(t), "s")
	assert.Equal(t, 10, c.Snapshot().Len, "the unread ones are read at the re-list")
	assert.EqualValues(t, reads+2, f.reads.Load(), "only they")
	c.ListChanged(ctx(t), "s")
	assert.EqualValues(t, reads+2, f.reads.Load(), "and only once")
}

// A source whose every read fails costs ten warnings and one count, not
// one warning per resource.
func TestFailingReadsWarnedInBounds(t *testing.T) {
	all := uris(500)
	f := newFake("s", all...)
	f.mu.Lock()
	for _, u := range all {
		delete(f.bodies, u)
	}
	f.mu.Unlock()
	var logs strings.Builder
	var mu sync.Mutex
	c := New(codec, Options{Logger: slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))})
	defer c.Close()
	require.NoError(t, c.Add(ctx(t), f))
	assert.EqualValues(t, 500, f.reads.Load())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, maxSkipWarnings, strings.Count(logs.String(), "skipping resource"))
	assert.Contains(t, logs.String(), "skipped=500")
}

// A revalidation round is spread over the period, never slower than
// minRevalidationRate reads a second.
func TestRevalidationPace(t *testing.T) {
	c := New(codec, Options{Revalidate: time.Minute})
	defer c.Close()
	assert.Equal(t, 6*time.Millisecond, c.paceFor(10_000), "10,000 reads over 60 s")
	assert.Equal(t, time.Second/minRevalidationRate, c.paceFor(10), "a small catalog at the floor rate")
	assert.Zero(t, c.paceFor(0))
	none := New(codec, Options{})
	defer none.Close()
	assert.Zero(t, none.paceFor(10_000), "no revalidation, no pacing")
}
