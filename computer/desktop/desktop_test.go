package desktop

import (
	"encoding/json"
	"errors"
	"fmt"
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

func put(srv *sourcetest.Server, uri, body string) {
	srv.Put(sourcetest.Resource{URI: uri, Contents: sourcetest.Text(uri, "text/plain", body)})
}

const quiet = 150 * time.Millisecond

func TestDesktopCollect(t *testing.T) {
	srv := sourcetest.NewServer()
	put(srv, "window://alpha/main?priority=50", "main body")
	put(srv, "window://alpha/log?priority=10", "log body")
	put(srv, "window://alpha/bad?priority=500", "never read")
	srv.Put(sourcetest.Resource{URI: "window://alpha/broken", Err: errors.New("boom")})
	srv.Put(sourcetest.Resource{URI: "window://alpha/empty", Contents: []mcp.ResourceContents{}})
	put(srv, "dpe://alpha.docs/d1", "not a window")
	logs := &sourcetest.LogRecorder{}
	var ev sourcetest.Events
	d := New(WithLogger(logs.Logger()), WithOnChange(ev.Fn()), WithDebounce(20*time.Millisecond))
	t.Cleanup(d.Close)
	cl := sourcetest.DialHTTP(t, "alpha", sourcetest.Serve(t, srv))

	require.NoError(t, d.AddSource(sourcetest.Ctx(t), cl))

	got, err := d.Get(sourcetest.Ctx(t), nil, "", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"window://alpha/main?priority=50\n\nmain body", "window://alpha/log?priority=10\n\nlog body"}, got)
	assert.Zero(t, srv.ReadsOf("window://alpha/bad?priority=500"))
	assert.Zero(t, srv.ReadsOf("dpe://alpha.docs/d1"))
	assert.Equal(t, 1, srv.ReadsOf("window://alpha/broken"))
	assert.Equal(t, 1, srv.ReadsOf("window://alpha/empty"))
	w := logs.Warnings()
	assert.Len(t, w, 1)
	assert.True(t, slices.ContainsFunc(w, func(m string) bool { return strings.Contains(m, "window://alpha/broken") }))
	ev.Expect(t, 1, quiet)

	t.Run("desktop_size", func(t *testing.T) {
		one := 1
		got, err := d.Get(sourcetest.Ctx(t), &one, "", nil)
		require.NoError(t, err)
		assert.Equal(t, []string{"window://alpha/main?priority=50\n\nmain body"}, got)
		zero := 0
		got, err = d.Get(sourcetest.Ctx(t), &zero, "", nil)
		require.NoError(t, err)
		assert.Equal(t, []string{}, got)
	})
	t.Run("window: exact, canonical, unknown, invalid", func(t *testing.T) {
		got, err := d.Get(sourcetest.Ctx(t), nil, "window://alpha/log?priority=10", nil)
		require.NoError(t, err)
		assert.Equal(t, []string{"window://alpha/log?priority=10\n\nlog body"}, got)
		got, err = d.Get(sourcetest.Ctx(t), nil, "window://ALPHA/log?priority=010", nil)
		require.NoError(t, err)
		assert.Equal(t, []string{"window://alpha/log?priority=10\n\nlog body"}, got)
		got, err = d.Get(sourcetest.Ctx(t), nil, "window://alpha/nope", nil)
		require.NoError(t, err)
		assert.Equal(t, []string{}, got)
		_, err = d.Get(sourcetest.Ctx(t), nil, "window://alpha/x?priority=-1", nil)
		require.Error(t, err)
		assert.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err))
	})
	t.Run("windows", func(t *testing.T) {
		ws := d.Windows()
		require.Len(t, ws, 3) // main, log, empty (organising drops it)
		assert.Equal(t, "alpha", ws[0].Server)
	})
}

// A server that declares resources without subscribe has its windows
// listed and read all the same, as the 0.4 references list them; a new
// window arrives with resources/list_changed.
func TestDesktopServerWithoutSubscribe(t *testing.T) {
	srv := sourcetest.NewServer(sourcetest.WithoutSubscribe())
	put(srv, "window://beta/w", "x")
	cl := sourcetest.DialHTTP(t, "beta", sourcetest.Serve(t, srv))
	var ev sourcetest.Events
	d := New(WithOnChange(ev.Fn()), WithDebounce(10*time.Millisecond))
	t.Cleanup(d.Close)
	require.NoError(t, d.AddSource(sourcetest.Ctx(t), cl))
	got, err := d.Get(sourcetest.Ctx(t), nil, "", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"window://beta/w\n\nx"}, got)
	assert.Equal(t, 1, srv.ReadsOf("window://beta/w"))
	ev.Expect(t, 1, quiet)

	put(srv, "window://beta/v", "y")
	d.ResourceListChanged(sourcetest.Ctx(t), "beta")
	got, err = d.Get(sourcetest.Ctx(t), nil, "", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"window://beta/v\n\ny", "window://beta/w\n\nx"}, got, "listing order, equal priorities")
}

func TestDesktopChangeDetection(t *testing.T) {
	srv := sourcetest.NewServer()
	put(srv, "window://alpha/a?priority=5", "a0")
	put(srv, "window://alpha/b", "b0")
	cl := sourcetest.DialHTTP(t, "alpha", sourcetest.Serve(t, srv))
	var ev sourcetest.Events
	d := New(WithOnChange(ev.Fn()), WithDebounce(20*time.Millisecond))
	t.Cleanup(d.Close)
	require.NoError(t, d.AddSource(sourcetest.Ctx(t), cl))
	ev.Expect(t, 1, quiet)
	get := func() []string {
		got, err := d.Get(sourcetest.Ctx(t), nil, "", nil)
		require.NoError(t, err)
		return got
	}
	reads := srv.Reads()

	t.Run("same set: nothing", func(t *testing.T) {
		put(srv, "dpe://alpha.docs/x", "{}") // not a window
		d.ResourceListChanged(sourcetest.Ctx(t), "alpha")
		assert.Equal(t, reads, srv.Reads())
		ev.Expect(t, 1, quiet)
	})
	t.Run("added: only the new window read, one event", func(t *testing.T) {
		put(srv, "window://alpha/c?priority=9", "c0")
		d.ResourceListChanged(sourcetest.Ctx(t), "alpha")
		assert.Equal(t, reads+1, srv.Reads())
		assert.Equal(t, []string{"window://alpha/c?priority=9\n\nc0", "window://alpha/a?priority=5\n\na0", "window://alpha/b\n\nb0"}, get())
		ev.Expect(t, 2, quiet)
	})
	t.Run("removed: one event", func(t *testing.T) {
		srv.Delete("window://alpha/a?priority=5")
		d.ResourceListChanged(sourcetest.Ctx(t), "alpha")
		assert.Equal(t, reads+1, srv.Reads())
		assert.Equal(t, []string{"window://alpha/c?priority=9\n\nc0", "window://alpha/b\n\nb0"}, get())
		ev.Expect(t, 3, quiet)
	})
	t.Run("updated: one read, new body, one event", func(t *testing.T) {
		put(srv, "window://alpha/b", "b1")
		d.ResourceUpdated(sourcetest.Ctx(t), "alpha", "window://alpha/b")
		assert.Equal(t, reads+2, srv.Reads())
		assert.Equal(t, []string{"window://alpha/c?priority=9\n\nc0", "window://alpha/b\n\nb1"}, get())
		ev.Expect(t, 4, quiet)
	})
	t.Run("updated named in another spelling of the same URI", func(t *testing.T) {
		put(srv, "window://alpha/c?priority=9", "c1")
		d.ResourceUpdated(sourcetest.Ctx(t), "alpha", "window://Alpha/c?priority=09")
		assert.Equal(t, reads+3, srv.Reads())
		assert.Contains(t, get(), "window://alpha/c?priority=9\n\nc1")
		ev.Expect(t, 5, quiet)
	})
	t.Run("non-window and unlisted URIs ignored", func(t *testing.T) {
		for _, u := range []string{"dpe://alpha.docs/x", "window://alpha/ghost", "window://alpha/x?priority=x", "file:///w", ""} {
			d.ResourceUpdated(sourcetest.Ctx(t), "alpha", u)
		}
		assert.Equal(t, reads+3, srv.Reads())
		ev.Expect(t, 5, quiet)
	})
	t.Run("RemoveSource withdraws the windows, one event", func(t *testing.T) {
		d.RemoveSource("alpha")
		assert.Empty(t, get())
		ev.Expect(t, 6, quiet)
	})
}

func TestDesktopTwoServersAndHistory(t *testing.T) {
	s1, s2 := sourcetest.NewServer(), sourcetest.NewServer()
	put(s1, "window://one/a", "a")
	put(s1, "window://one/full?fullscreen=true", "full")
	put(s2, "window://two/b?priority=1", "b")
	d := New()
	t.Cleanup(d.Close)
	require.NoError(t, d.AddSource(sourcetest.Ctx(t), sourcetest.DialHTTP(t, "one", sourcetest.Serve(t, s1))))
	require.NoError(t, d.AddSource(sourcetest.Ctx(t), sourcetest.DialHTTP(t, "two", sourcetest.Serve(t, s2))))
	got, err := d.Get(sourcetest.Ctx(t), nil, "", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"window://one/full?fullscreen=true\n\nfull", "window://two/b?priority=1\n\nb"}, got)
	got, err = d.Get(sourcetest.Ctx(t), nil, "", []string{"one", "two"})
	require.NoError(t, err)
	assert.Equal(t, []string{"window://two/b?priority=1\n\nb", "window://one/full?fullscreen=true\n\nfull"}, got)
	raw, err := jsonMarshal(protocol.GetDesktopRet{Desktops: got, ReqID: "r"})
	require.NoError(t, err)
	require.NoError(t, protocol.Validate(protocol.EventGetDesktop, protocol.Ack, raw))
}

// The testmcp program over stdio, with real notifications.
func TestDesktopStdioProcess(t *testing.T) {
	cl := sourcetest.DialStdio(t, "proc", testmcp.Binary(t), "-host", "proc", "-docs", "1", "-tools", "mutate")
	var ev sourcetest.Events
	d := New(WithOnChange(ev.Fn()), WithDebounce(50*time.Millisecond))
	t.Cleanup(d.Close)
	require.NoError(t, d.AddSource(sourcetest.Ctx(t), cl))
	sourcetest.Wire(cl, d)
	get := func() []string {
		got, err := d.Get(sourcetest.Ctx(t), nil, "", nil)
		require.NoError(t, err)
		return got
	}
	assert.Equal(t, []string{"window://proc/main?priority=50\n\nwindow main of proc v0", "window://proc/log?priority=10\n\nwindow log of proc v0"}, get())
	ev.Expect(t, 1, 200*time.Millisecond)

	require.NoError(t, cl.CallTool(sourcetest.Ctx(t), "mutate", map[string]any{"action": "update_window", "id": "log"}))
	require.Eventually(t, func() bool { return slices.Contains(get(), "window://proc/log?priority=10\n\nwindow log of proc v1") }, sourcetest.Wait, sourcetest.Tick)
	ev.Expect(t, 2, 200*time.Millisecond)

	require.NoError(t, cl.CallTool(sourcetest.Ctx(t), "mutate", map[string]any{"action": "add_window", "id": "pop?priority=90&fullscreen=true"}))
	require.Eventually(t, func() bool { return len(get()) == 1 }, sourcetest.Wait, sourcetest.Tick)
	assert.Equal(t, []string{"window://proc/pop?priority=90&fullscreen=true\n\nwindow pop of proc v0"}, get())
	ev.Expect(t, 3, 200*time.Millisecond)
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// TestDesktopAnswerBound: a get_desktop answer fits the payload limit. A
// window larger than the limit on its own is kept cut (one warning) and
// sent cut; windows after the limit is reached are left out of the answer,
// the first ones kept whole.
func TestDesktopAnswerBound(t *testing.T) {
	const limit = 64 << 10
	alpha, beta := sourcetest.NewServer(), sourcetest.NewServer()
	put(alpha, "window://alpha/huge?priority=90", strings.Repeat("h", 200<<10))
	for i := range 5 {
		put(beta, fmt.Sprintf("window://beta/w%d?priority=%d", i, 50-i), strings.Repeat("b", 15<<10))
	}
	logs := &sourcetest.LogRecorder{}
	d := New(WithLogger(logs.Logger()), WithMaxAnswerBytes(limit), WithDebounce(20*time.Millisecond))
	t.Cleanup(d.Close)
	require.NoError(t, d.AddSource(sourcetest.Ctx(t), sourcetest.DialHTTP(t, "alpha", sourcetest.Serve(t, alpha))))
	require.NoError(t, d.AddSource(sourcetest.Ctx(t), sourcetest.DialHTTP(t, "beta", sourcetest.Serve(t, beta))))

	size := func(ws []string) int {
		b, err := json.Marshal(ws)
		require.NoError(t, err)
		return len(b)
	}
	// The huge window alone: cut to the limit.
	got, err := d.Get(sourcetest.Ctx(t), nil, "window://alpha/huge?priority=90", nil)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.True(t, strings.HasPrefix(got[0], "window://alpha/huge?priority=90\n\nhhh"))
	require.LessOrEqual(t, size(got), limit)
	require.Greater(t, size(got), limit/2, "cut to the limit, not far below it")
	require.True(t, slices.ContainsFunc(logs.Warnings(), func(m string) bool { return strings.Contains(m, "exceeds the answer limit") }))

	// beta used last, so first: three of its 15 KB windows fit, whole.
	got, err = d.Get(sourcetest.Ctx(t), nil, "", []string{"alpha", "beta"})
	require.NoError(t, err)
	require.LessOrEqual(t, size(got), limit)
	require.Len(t, got, 3)
	for i, w := range got {
		head := fmt.Sprintf("window://beta/w%d?priority=%d\n\n", i, 50-i)
		require.True(t, strings.HasPrefix(w, head), w[:40])
		require.Len(t, w, len(head)+15<<10, "kept whole")
	}
}
