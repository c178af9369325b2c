package e2e

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/computer"
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

// startDocumentServers serves `servers` in-memory providers of perServer
// documents each over streamable HTTP on loopback and returns their Computer
// config entries.
func startDocumentServers(b *testing.B, servers, perServer int) []mcpServer {
	b.Helper()
	var out []mcpServer
	for s := range servers {
		srv, err := dpekit.New(context.Background(), fmt.Sprintf("bench%d.docs", s), newMemoryDocs(s, perServer))
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
// cache. Target (issue 4, issue 27): p50 ≤ 1 ms, with the Finder's default
// revalidation and with one revalidating every 2 s (every document read
// again, beside the queries).
func BenchmarkGetFinderEndToEnd(b *testing.B) {
	for _, rv := range []struct {
		name   string
		period time.Duration
	}{{"revalidation=default", 0}, {"revalidation=2s", 2 * time.Second}} {
		b.Run(rv.name, func(b *testing.B) {
			var opts []computer.Option
			if rv.period > 0 {
				opts = append(opts, computer.WithFinderRevalidation(rv.period))
			}
			benchGetFinder(b, opts...)
		})
	}
}

func benchGetFinder(b *testing.B, opts ...computer.Option) {
	const servers, perServer = 5, 2000
	d := startServer(b)
	cfg := startDocumentServers(b, servers, perServer)
	c := startComputer(b, d, "bench", "desk", cfg, opts...)
	require.Equal(b, servers*perServer, len(c.Documents()), "cold aggregation of every document")
	a := dialAgent(b, d, "bench", "bot")

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
