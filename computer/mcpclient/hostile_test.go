package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/bridge"
	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An answer over the message limit is never held whole: it is dropped, its
// request fails at once with 413 (not at its timeout), and the connection
// keeps serving.
func TestOversizeAnswerRefusedWith413(t *testing.T) {
	var logs logSink
	m := startManager(t, []protocol.MCPServerConfig{stdioConfig(t, "a", "-huge-read", "3000000")},
		WithLogger(logs.logger()), WithMaxMessageBytes(1<<20), WithTimeouts(30*time.Second, 30*time.Second))
	c := m.Conn("a")
	require.NotNil(t, c)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := c.ReadResource(ctx, "dpe://test/huge")
	var rpc *mcpsource.RPCError
	require.True(t, errors.As(err, &rpc), "got %v", err)
	assert.Equal(t, 413, rpc.Code)
	assert.Contains(t, rpc.Message, "limit of 1048576 bytes")
	var data struct {
		LimitBytes int `json:"limit_bytes"`
		SizeBytes  int `json:"size_bytes"`
	}
	require.NoError(t, json.Unmarshal(rpc.Data, &data))
	assert.Equal(t, 1<<20, data.LimitBytes)
	assert.Greater(t, data.SizeBytes, 3000000, "the whole answer, counted while dropped")
	assert.NoError(t, ctx.Err(), "answered before the deadline")

	assert.Equal(t, 1, c.proc.oversizeLines())
	recs := logs.records("mcp server wrote a message over the size limit on stdout (dropped)")
	require.Len(t, recs, 1)
	assert.Equal(t, "WARN", recs[0]["level"])
	assert.Equal(t, "hi", callText(t, c, "echo", map[string]any{"text": "hi"}), "the connection keeps serving")
	assert.Same(t, c, m.Conn("a"), "not restarted")
}

// The id of an oversized answer is looked for only before its result.
func TestJSONRPCIDOfPrefix(t *testing.T) {
	for _, tc := range []struct {
		in, id string
		ok     bool
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"contents":[{"text":"xxxx`, `7`, true},
		{`{"jsonrpc":"2.0","id":"smcp-3","error":{"code":1`, `"smcp-3"`, true},
		{`{"id":{"a":1},"result":`, ``, false},
		{`{"jsonrpc":"2.0","result":{"x":1},"id":3}`, ``, false},
		{`{"jsonrpc":"2.0","method":"notifications/x","id":1,"result":`, ``, false},
		{`["id",1]`, ``, false},
		{`{"jsonrpc":"2.0","id":1`, ``, false},
	} {
		id, ok := jsonrpcID([]byte(tc.in))
		assert.Equal(t, tc.ok, ok, tc.in)
		assert.Equal(t, tc.id, string(id), tc.in)
	}
}

// A server flooding notifications for distinct URIs while a hook is busy
// costs bounded memory: at most maxPendingNotifications wait, the rest are
// dropped and replaced by one Resync, delivered after the ones kept.
func TestNotificationFloodBoundedThenResync(t *testing.T) {
	const flood = 50000
	release := make(chan struct{})
	first := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	notified, resyncs, ups := 0, 0, 0
	var order []string
	h := Hooks{
		Up: func(context.Context, *Conn) { mu.Lock(); ups++; mu.Unlock() },
		Notification: func(context.Context, *Conn, mcp.JSONRPCNotification) {
			once.Do(func() { close(first) })
			<-release
			mu.Lock()
			notified++
			order = append(order, "n")
			mu.Unlock()
		},
		Resync: func(context.Context, *Conn) {
			mu.Lock()
			resyncs++
			order = append(order, "resync")
			mu.Unlock()
		},
	}
	// The flood starts when the test subscribes to its start URI, once the
	// Manager holds the connection: the notifications a server sends before
	// that (between initialized and the Manager's handler) are not taken,
	// the Up hook reading everything after them, and could not be counted.
	m := NewManager([]protocol.MCPServerConfig{stdioConfig(t, "a", "-flood-updates", strconv.Itoa(flood), "-flood-on-subscribe")}, WithHooks(h))
	// The hook holds the notifications until release.
	releaseAll := closeAfterRelease(t, m, release)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	require.NoError(t, m.Start(context.Background()))
	subCtx, cancelSub := context.WithTimeout(context.Background(), time.Minute)
	_ = m.Conn("a").Subscribe(subCtx, "dpe://flood/start") // its answer does not matter: its arrival starts the flood
	cancelSub()
	select {
	case <-first:
	case <-time.After(2 * time.Minute):
		t.Fatal("no notification of the flood reached the hook")
	}
	m.mu.Lock()
	q := m.sups["a"].q
	m.mu.Unlock()
	seen := func() int { // notifications received so far: taken, pending, dropped
		q.mu.Lock()
		defer q.mu.Unlock()
		return 1 + q.count + q.dropped
	}
	// A flood of 50,000 lines takes its time on a busy machine: the limit
	// is only there so that a lost notification fails the test.
	require.Eventually(t, func() bool { return seen() == flood }, 5*time.Minute, 20*time.Millisecond,
		"every notification reached the queue")
	n, size := q.pendingNotifications()
	assert.Equal(t, maxPendingNotifications, n)
	assert.LessOrEqual(t, size, maxPendingBytes)
	var during runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&during)
	t.Logf("flood of %d distinct updates: %d pending (%d bytes), heap in use %+d KiB, goroutines %d",
		flood, n, size, (int64(during.HeapInuse)-int64(before.HeapInuse))>>10, runtime.NumGoroutine())

	releaseAll()
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return resyncs == 1 }, 2*time.Minute, 10*time.Millisecond)
	mu.Lock()
	assert.Equal(t, 1+maxPendingNotifications, notified, "the first, then the ones kept")
	assert.Equal(t, "resync", order[len(order)-1], "the re-read comes after the notifications kept")
	assert.Equal(t, 1, ups, "Resync is not Up")
	mu.Unlock()
	n, size = q.pendingNotifications()
	assert.Zero(t, n)
	assert.Zero(t, size)
	assert.Equal(t, "hi", callText(t, m.Conn("a"), "echo", map[string]any{"text": "hi"}), "the connection keeps serving")
}

// A listing whose cursor never ends (a new, longer cursor on every page)
// stops at the page bound with 413, long before the request timeout, and
// the connection keeps serving.
func TestEndlessListingBounded(t *testing.T) {
	m := startManager(t, []protocol.MCPServerConfig{stdioConfig(t, "a", "-list-forever")}, WithTimeouts(30*time.Second, 60*time.Second))
	c := m.Conn("a")
	require.NotNil(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	res, err := c.ListResources(ctx)
	assert.Nil(t, res)
	var pe *protocol.Error
	require.True(t, errors.As(err, &pe), "got %v", err)
	assert.Equal(t, protocol.CodePayloadTooLarge, pe.Code)
	assert.EqualValues(t, maxListPages, pe.Details["pages"])
	assert.NoError(t, ctx.Err(), "stopped by the bound, not by the timeout")
	assert.Equal(t, "hi", callText(t, c, "echo", map[string]any{"text": "hi"}))

	// Templates are listed by mcp-go's server as usual: one page.
	_, err = c.ListResourceTemplates(ctx)
	assert.NoError(t, err)
}

// A server that dies in the middle of an answer: the read fails at once
// (not at its timeout) with an error that says the server is unavailable,
// and the server is restarted.
func TestDiesMidAnswer(t *testing.T) {
	r := newRecorder()
	m := startManager(t, []protocol.MCPServerConfig{stdioConfig(t, "a", "-huge-read", "10")},
		WithHooks(r.hooks()), WithTimeouts(30*time.Second, 30*time.Second))
	c := m.Conn("a")
	require.NotNil(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.ReadResource(ctx, "dpe://test/die")
	require.ErrorIs(t, err, mcpsource.ErrConnectionLost)
	t.Logf("failed after %v: %v", time.Since(start), err)
	assert.NoError(t, ctx.Err(), "failed before the deadline")
	perr := bridge.MapError(err, "dpe://test/die")
	assert.Equal(t, protocol.CodeUnavailable, perr.Code, "the Agent is told to retry: %v", perr)
	r.wait(t, is("down", "a"))
	r.wait(t, is("up", "a"))
	c = m.Conn("a")
	require.NotNil(t, c)
	_, err = c.ReadResource(ctx, "dpe://test/doc-1")
	assert.NoError(t, err, "restarted and serving")
}

// A server that answers initialize and then nothing (not even ping): its
// connection is declared lost by the health check, a read in flight fails
// with ErrConnectionLost (503 for the Agent) in bounded time, and another
// server keeps answering meanwhile.
func TestHangsAfterInitialize(t *testing.T) {
	r := newRecorder()
	m := startManager(t, []protocol.MCPServerConfig{stdioConfig(t, "hang", "-hang-after-initialize"), stdioConfig(t, "ok")},
		WithHooks(r.hooks()), WithHealthCheck(100*time.Millisecond, 500*time.Millisecond), WithTimeouts(5*time.Second, 30*time.Second))
	c := m.Conn("hang")
	require.NotNil(t, c, "initialize was answered")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.ReadResource(ctx, "dpe://test/doc-1")
	require.ErrorIs(t, err, mcpsource.ErrConnectionLost)
	t.Logf("read failed after %v: %v", time.Since(start), err)
	assert.NoError(t, ctx.Err(), "before the read's own timeout")
	assert.Equal(t, protocol.CodeUnavailable, bridge.MapError(err, "dpe://test/doc-1").Code)
	r.wait(t, is("down", "hang"))
	ok := m.Conn("ok")
	require.NotNil(t, ok)
	assert.Equal(t, "hi", callText(t, ok, "echo", map[string]any{"text": "hi"}), "the other server keeps answering")
}

// Over streamable HTTP an answer over the message limit stops being read at
// the limit and its request fails with 413; the connection keeps serving.
func TestOversizeHTTPAnswerRefusedWith413(t *testing.T) {
	p := testmcp.StartHTTP(t, "127.0.0.1:0", "-huge-read", "3000000")
	m := startManager(t, []protocol.MCPServerConfig{httpConfig("h", p.URL)}, WithMaxMessageBytes(1<<20))
	c := m.Conn("h")
	require.NotNil(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := c.ReadResource(ctx, "dpe://test/huge")
	var pe *protocol.Error
	require.True(t, errors.As(err, &pe), "got %v", err)
	assert.Equal(t, protocol.CodePayloadTooLarge, pe.Code)
	assert.Equal(t, protocol.CodePayloadTooLarge, bridge.MapError(err, "dpe://test/huge").Code)
	assert.NoError(t, ctx.Err())
	_, err = c.ReadResource(ctx, "dpe://test/doc-1")
	assert.NoError(t, err, "the connection keeps serving")
	assert.Same(t, c, m.Conn("h"))
}

// tools/list is bounded like resources/list: a listing that never ends
// stops at the page bound with 413, long before the request timeout, and
// the connection keeps serving.
func TestEndlessToolListingBounded(t *testing.T) {
	m := startManager(t, []protocol.MCPServerConfig{stdioConfig(t, "a", "-tools-forever")}, WithTimeouts(30*time.Second, 60*time.Second))
	c := m.Conn("a")
	require.NotNil(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	start := time.Now()
	res, err := c.ListTools(ctx)
	assert.Nil(t, res)
	var pe *protocol.Error
	require.True(t, errors.As(err, &pe), "got %v", err)
	assert.Equal(t, protocol.CodePayloadTooLarge, pe.Code)
	assert.EqualValues(t, maxListPages, pe.Details["pages"])
	assert.NoError(t, ctx.Err(), "stopped by the bound, not by the timeout")
	t.Logf("gave up after %v", time.Since(start))
	assert.Equal(t, "hi", callText(t, c, "echo", map[string]any{"text": "hi"}))
}

// One listing page of 300,000 resources (11 MB, under the message limit):
// refused with 413 from its count, before its entries are decoded. A
// listing of 100,001 keeps its first 100,000 with a coded warning (a
// folder of 100,000 documents plus its catalog lists its documents).
func TestHugeListingPageCountedBeforeDecoding(t *testing.T) {
	var logs logSink
	for _, tc := range []struct {
		n  int
		ok bool
	}{{300_000, false}, {100_001, true}, {100_000, true}} {
		m := startManager(t, []protocol.MCPServerConfig{stdioConfig(t, "a", "-big-list-page", strconv.Itoa(tc.n))},
			WithTimeouts(30*time.Second, 60*time.Second), WithLogger(logs.logger()),
			// Decoding a 30 MB message holds mcp-go's read loop, pings
			// included, for seconds under -race: not what is tested here.
			WithHealthCheck(250*time.Millisecond, 30*time.Second))
		c := m.Conn("a")
		require.NotNil(t, c)
		var peak atomic.Uint64
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() { // samples the heap while the page is read
			defer close(sampled)
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Millisecond):
				}
			}
		}()
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		res, err := c.ListResources(context.Background())
		close(stop)
		<-sampled
		t.Logf("page of %d resources: heap peak %+d MiB", tc.n, (int64(peak.Load())-int64(before.HeapInuse))>>20)
		if tc.ok {
			require.NoError(t, err)
			assert.Len(t, res, min(tc.n, maxListEntries))
			continue
		}
		var pe *protocol.Error
		require.True(t, errors.As(err, &pe), "got %v", err)
		assert.Equal(t, protocol.CodePayloadTooLarge, pe.Code)
		assert.EqualValues(t, tc.n, pe.Details["entries"])
		assert.Equal(t, "hi", callText(t, c, "echo", map[string]any{"text": "hi"}), "the connection keeps serving")
	}
	recs := logs.records("mcp server lists more entries than the Computer keeps; keeping the first ones")
	require.Len(t, recs, 1, "the listing of 100,001 only")
	assert.EqualValues(t, 413, recs[0]["code"])
	assert.EqualValues(t, 100_001, recs[0]["listed_at_least"])
}
