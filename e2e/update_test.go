package e2e

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// catalogs collects the catalogs OnFinderChanged delivers.
type catalogs struct {
	mu  sync.Mutex
	got []*protocol.GetFinderRet
}

func (c *catalogs) add(computer string, ret *protocol.GetFinderRet) {
	if computer != "desk" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, ret)
}

// find returns the newest delivered catalog satisfying ok.
func (c *catalogs) find(ok func(*protocol.GetFinderRet) bool) *protocol.GetFinderRet {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.got) - 1; i >= 0; i-- {
		if ok(c.got[i]) {
			return c.got[i]
		}
	}
	return nil
}

func docByRef(ret *protocol.GetFinderRet, ref string) *protocol.DPEDocumentSummary {
	for i := range ret.Documents {
		if ret.Documents[i].DocRef == ref {
			return &ret.Documents[i]
		}
	}
	return nil
}

// An edited, added or removed file reaches the Agent as notify:update_finder
// with the refreshed catalog (spec/finder.md, Update mechanism: MCP
// resources/updated and list_changed → Computer → server:update_finder →
// notify:update_finder).
func TestFinderUpdates(t *testing.T) {
	var seen catalogs
	a, root := finderDeployment(t, agent.OnFinderChanged(seen.add))
	ctx := testContext(t)
	before, err := a.GetFinder(ctx, "desk", agent.FinderQuery{})
	require.NoError(t, err)
	report := docByRef(before, "quarterly-report.md")
	require.NotNil(t, report)

	// Edit: a new top-level section is a new page.
	path := filepath.Join(root, "quarterly-report.md")
	body, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append(body, []byte("\n## Appendix\n\nAdded by the end-to-end test.\n")...), 0o644))
	var updated *protocol.GetFinderRet
	require.Eventually(t, func() bool {
		updated = seen.find(func(r *protocol.GetFinderRet) bool {
			d := docByRef(r, "quarterly-report.md")
			return d != nil && d.PageCount == report.PageCount+1
		})
		return updated != nil
	}, testTimeout, 20*time.Millisecond, "notify:update_finder with the edited report")
	edited := docByRef(updated, "quarterly-report.md")
	assert.NotEqual(t, report.LastModified, edited.LastModified)
	assert.Equal(t, "quarterly-report.md", updated.Documents[0].DocRef, "the edited document is now the newest")

	// Add a file: the catalog grows.
	require.NoError(t, os.WriteFile(filepath.Join(root, "notes.md"), []byte("# Notes\n\nA new document.\n"), 0o644))
	require.Eventually(t, func() bool {
		return seen.find(func(r *protocol.GetFinderRet) bool { return r.TotalCount == 5 && docByRef(r, "notes.md") != nil }) != nil
	}, testTimeout, 20*time.Millisecond, "notify:update_finder with the added document")

	// Remove it: the catalog shrinks again.
	require.NoError(t, os.Remove(filepath.Join(root, "notes.md")))
	require.Eventually(t, func() bool {
		last := seen.find(func(*protocol.GetFinderRet) bool { return true })
		return last != nil && last.TotalCount == 4 && docByRef(last, "notes.md") == nil
	}, testTimeout, 20*time.Millisecond, "notify:update_finder without the removed document")
}
