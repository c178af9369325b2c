package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
)

// TestDialRepeatedly dials many times in a row: with the connection
// watchdog every dial connects (the Socket.IO client alone loses a few
// percent of its handshakes under -race; see openwatch.go).
func TestDialRepeatedly(t *testing.T) {
	p := startPeer(t)
	log, _ := newLogger()
	for i := 0; i < 60; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := agent.Dial(ctx, p.URL, agent.WithLogger(log))
		cancel()
		require.NoError(t, err, "dial %d", i)
		require.NoError(t, c.Close())
	}
}
