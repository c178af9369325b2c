package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
)

// TestDialRepeatedly connects, joins and lists the office many times in a
// row. The upstream Socket.IO client lost a few percent of its handshakes
// under -race, or connected its namespace twice and got disconnected
// (sio/third_party/PATCHES.md); every round must succeed.
func TestDialRepeatedly(t *testing.T) {
	p := startPeer(t)
	for i := 0; i < 100; i++ {
		log, lb := newLogger()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		c, err := agent.Dial(ctx, p.URL, agent.WithLogger(log))
		if err == nil {
			err = c.JoinOffice(ctx, "office-1")
			if err == nil {
				_, err = c.ListRoom(ctx)
			}
			require.NoError(t, c.Close())
		}
		cancel()
		require.NoError(t, err, "round %d; log:\n%s", i, lb.String())
	}
}
