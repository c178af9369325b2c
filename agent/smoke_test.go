package agent_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSmoke(t *testing.T) {
	p := startPeer(t)
	c, _ := joined(t, p)
	sessions, err := c.ListRoom(ctxT(t))
	require.NoError(t, err)
	t.Logf("%+v", sessions)
	tools, err := c.GetTools(ctxT(t), "alpha")
	require.NoError(t, err)
	t.Logf("%+v", tools)
}
