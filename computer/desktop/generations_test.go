package desktop

import (
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/sourcetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

// Windows of a server that declares resources without subscribe are listed;
// their layout comes from annotations.priority and _meta.fullscreen, the
// URI's query standing in where the listing has none; one server's windows
// come out by priority, and of several fullscreen windows the
// highest-priority one is shown, as a2c-smcp 0.1.2 and 0.4.2 both choose
// it (e2e TestGoComputerDesktopOrder compares with 0.4.2).
func TestDesktopWindowMetadata(t *testing.T) {
	srv := sourcetest.NewServer(sourcetest.WithoutSubscribe())
	win := func(uri string, p *float64, f *bool) sourcetest.Resource {
		return sourcetest.Resource{URI: uri, Contents: sourcetest.Text(uri, "text/plain", "body"), Priority: p, Fullscreen: f}
	}
	srv.Put(
		win("window://w/a", ptr(0.2), nil),
		win("window://w/b", ptr(0.9), nil),
		win("window://w/c?priority=100", ptr(0.1), nil), // the annotation wins
		win("window://w/d?priority=50", nil, nil),       // the query: 0.5
		win("window://w/e?fullscreen=true", nil, ptr(false)),
	)
	other := sourcetest.NewServer()
	other.Put(
		win("window://f/a-low", ptr(0.1), ptr(true)),
		win("window://f/b-high", ptr(0.9), ptr(true)),
		win("window://f/c", ptr(1.0), nil),
	)
	d := New(WithDebounce(20 * time.Millisecond))
	t.Cleanup(d.Close)
	require.NoError(t, d.AddSource(sourcetest.Ctx(t), sourcetest.DialHTTP(t, "w", sourcetest.Serve(t, srv))))
	require.NoError(t, d.AddSource(sourcetest.Ctx(t), sourcetest.DialHTTP(t, "f", sourcetest.Serve(t, other))))

	uris := func(history []string) []string {
		got, err := d.Get(sourcetest.Ctx(t), nil, "", history)
		require.NoError(t, err)
		out := make([]string, len(got))
		for i, s := range got {
			out[i] = s[:len(s)-len("\n\nbody")]
		}
		return out
	}
	ordered := []string{"window://w/b", "window://w/d?priority=50", "window://w/a", "window://w/c?priority=100", "window://w/e?fullscreen=true"}
	assert.Equal(t, append([]string{"window://f/b-high"}, ordered...), uris(nil),
		"the highest-priority fullscreen window; then w by priority, e not fullscreen")
	assert.Equal(t, append(ordered, "window://f/b-high"), uris([]string{"f", "w"}), "the history orders the servers")
}
