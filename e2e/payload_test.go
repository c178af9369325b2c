package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
	"github.com/a2c-smcp/smcp-go/server"
)

// TestOversizedAnswer (issue 12, item 3): with the Server and the Computer
// set to one payload limit, a page over it answers 413 with advice on
// narrowing the read — the Computer is not disconnected, and the Agent's
// next requests, including a narrowed read, succeed.
func TestOversizedAnswer(t *testing.T) {
	const limit = 64 << 10
	root := t.TempDir()
	var csv strings.Builder
	csv.WriteString("id,body\n")
	for i := range 150 { // 100 rows of ~1 KB on the first page: ~100 KB
		fmt.Fprintf(&csv, "%d,%s\n", i, strings.Repeat("x", 1000))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "wide.csv"), []byte(csv.String()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "note.md"), []byte("# Note\n\nSmall.\n"), 0o644))

	d := startServer(t, server.WithMaxPayloadBytes(limit))
	startComputer(t, d, "o1", "desk", []mcpServer{docServer(t, "docs", root, "big.docs")}, computer.WithMaxPayloadBytes(limit))
	a := dialAgent(t, d, "o1", "bot")
	ctx := testContext(t)

	wide := dpe.DocumentURI("big.docs", "wide.csv").String()
	_, err := a.ReadPage(ctx, "desk", wide, 0, agent.PageQuery{})
	require.Error(t, err)
	perr := protocol.AsError(err)
	assert.Equal(t, protocol.CodePayloadTooLarge, perr.Code, "%v", err)
	assert.Contains(t, perr.Message, "narrow the read")
	assert.EqualValues(t, limit, perr.Details["limit"])

	// Still connected: the office has its Computer, and smaller reads work.
	ret, err := a.GetFinder(ctx, "desk", agent.FinderQuery{})
	require.NoError(t, err)
	assert.Equal(t, 2, ret.TotalCount)
	p, err := a.ReadPage(ctx, "desk", wide, 1, agent.PageQuery{}) // 50 rows: ~50 KB
	require.NoError(t, err)
	require.Len(t, p.Elements, 1)
	_, err = a.ReadPage(ctx, "desk", dpe.DocumentURI("big.docs", "note.md").String(), 0, agent.PageQuery{})
	require.NoError(t, err)
}
