package e2e

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/dpekit"
	"github.com/a2c-smcp/smcp-go/e2e/internal/memdocs"
)

// newMemoryDocs is an in-memory provider of n one-page documents.
func newMemoryDocs(server, n int) *memdocs.Provider {
	m := &memdocs.Provider{}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	kinds := []string{"pdf", "xlsx", "md", "csv"}
	for i := range n {
		m.Docs = append(m.Docs, dpekit.Document{
			DocRef:       fmt.Sprintf("doc-%d-%05d", server, i),
			Title:        fmt.Sprintf("Report %d of server %d", i, server),
			FileType:     kinds[i%len(kinds)],
			FileURI:      fmt.Sprintf("file:///data/%d/%05d", server, i),
			PageCount:    1,
			Keywords:     []string{"finance", fmt.Sprintf("q%d", i%4+1)},
			Summary:      "Generated document for the benchmark",
			LastModified: base.Add(time.Duration(i) * time.Minute),
		})
	}
	return m
}

// countingDocs counts the Level-1 reads of a provider.
type countingDocs struct {
	*memdocs.Provider
	reads *atomic.Int64
}

func (c countingDocs) Document(ctx context.Context, ref string) (dpekit.Document, error) {
	c.reads.Add(1)
	return c.Provider.Document(ctx, ref)
}

// startDocumentServers serves `servers` in-memory providers of perServer
// documents each over streamable HTTP on loopback and returns their Computer
// config entries; reads counts their Level-1 reads.
func startDocumentServers(b *testing.B, servers, perServer int, reads *atomic.Int64) []mcpServer {
	b.Helper()
	var out []mcpServer
	for s := range servers {
		srv, err := dpekit.New(context.Background(), fmt.Sprintf("bench%d.docs", s), countingDocs{newMemoryDocs(s, perServer), reads})
		require.NoError(b, err)
		h := dpekit.NewStreamableHTTPHandler(srv)
		ts := httptest.NewServer(h)
		b.Cleanup(func() {
			ts.Close()
			_ = h.Shutdown(context.Background())
			_ = srv.Close()
		})
		out = append(out, mcpServer{
			"name": fmt.Sprintf("docs%d", s), "type": "streamable",
			"server_parameters": map[string]any{"url": ts.URL + "/mcp", "timeout": "PT60S"},
		})
	}
	return out
}

// BenchmarkGetFinderEndToEnd measures client:get_finder from an Agent
// through the Server to a Computer holding 10,000 cached documents from 5
// MCP servers (streamable HTTP), and back: Socket.IO both ways, request
// validation on the Server and on the Computer, organize_finder over the
// cache. Target (issue 4, issue 27): p50 ≤ 1 ms. "during-revalidation"
// measures while the Finder's default revalidation (every minute) reads
// every document again: it waits for the first round to start (about a
// minute) and measures within it (a round of 10,000 documents is spread
// over 30 s).
func BenchmarkGetFinderEndToEnd(b *testing.B) {
	b.Run("idle", func(b *testing.B) { benchGetFinder(b, false) })
	b.Run("during-revalidation", func(b *testing.B) { benchGetFinder(b, true) })
}

func benchGetFinder(b *testing.B, duringRound bool) {
	const servers, perServer = 5, 2000
	var reads atomic.Int64
	d := startServer(b)
	cfg := startDocumentServers(b, servers, perServer, &reads)
	c := startComputer(b, d, "bench", "desk", cfg)
	require.Equal(b, servers*perServer, len(c.Documents()), "cold aggregation of every document")
	a := dialAgent(b, d, "bench", "bot")
	if duringRound {
		built := reads.Load()
		deadline := time.Now().Add(3 * time.Minute)
		for reads.Load() < built+500 { // the round has started, and has 29 s to go
			if time.Now().After(deadline) {
				b.Fatal("no revalidation round within 3 minutes")
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	queries := []struct {
		name string
		q    agent.FinderQuery
	}{
		{"first-page", agent.FinderQuery{}},
		{"keyword", agent.FinderQuery{Keywords: []string{"q3"}, Limit: 50}},
		{"deep-offset", agent.FinderQuery{Offset: 9000, Limit: 100}},
	}
	for _, qq := range queries {
		b.Run(qq.name, func(b *testing.B) {
			ctx := context.Background()
			var mu sync.Mutex
			lat := make([]time.Duration, 0, 1024)
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				ret, err := a.GetFinder(ctx, "desk", qq.q)
				el := time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				if ret.TotalCount == 0 {
					b.Fatal("empty catalog")
				}
				mu.Lock()
				lat = append(lat, el)
				mu.Unlock()
			}
			reportPercentiles(b, lat)
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}
