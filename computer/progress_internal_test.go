package computer

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
)

// A burst of progress notifications is folded: the first is sent at once,
// the latest pending one by close, never one out of order, nothing after
// close (spec/protocol.md, Tool-call progress).
func TestProgressRelayFolds(t *testing.T) {
	var mu sync.Mutex
	var sent []float64
	r := &progressRelay{send: func(p mcpclient.Progress) {
		mu.Lock()
		sent = append(sent, p.Progress)
		mu.Unlock()
	}}
	const n = 500
	for i := 1; i <= n; i++ {
		r.push(mcpclient.Progress{Progress: float64(i), Total: n, HasTotal: true})
	}
	r.close()
	r.push(mcpclient.Progress{Progress: n + 1})
	r.close()

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, sent)
	assert.Equal(t, 1.0, sent[0], "the first report goes at once")
	assert.Equal(t, float64(n), sent[len(sent)-1], "the latest is flushed before the answer; nothing after")
	assert.Less(t, len(sent), n, "folded")
	for i := 1; i < len(sent); i++ {
		assert.Greater(t, sent[i], sent[i-1], "in order")
	}
}

func TestClipMessage(t *testing.T) {
	assert.Equal(t, "short", clipMessage("short"))
	long := make([]rune, 2000)
	for i := range long {
		long[i] = 'é'
	}
	got := []rune(clipMessage(string(long)))
	assert.Len(t, got, 1024)
	assert.Equal(t, '…', got[1023])
}
