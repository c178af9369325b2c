package finder

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/sourcetest"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// synthetic returns n summaries over `servers` servers with varied
// timestamps (some missing, various offsets).
func synthetic(n, servers int) []protocol.DPEDocumentSummary {
	docs := make([]protocol.DPEDocumentSummary, n)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	types := []string{"pdf", "xlsx", "pptx", "md"}
	for i := range docs {
		srv := "server-" + strconv.Itoa(i%servers)
		ref := "doc-" + strconv.Itoa(i)
		s := fmt.Sprintf("Summary of document %d about topic %d", i, i%97)
		d := protocol.DPEDocumentSummary{
			DocRef: ref, URI: "dpe://" + srv + ".docs/" + ref, Server: srv, FileURI: "file:///data/" + ref,
			FileType: types[i%len(types)], Title: "Document " + strconv.Itoa(i), PageCount: 1 + i%50,
			Keywords: []string{"k" + strconv.Itoa(i%13), "topic" + strconv.Itoa(i%97)}, Summary: s,
		}
		if i%10 != 0 {
			loc := time.FixedZone("", (i%25-12)*3600)
			lm := base.Add(time.Duration((i*7919)%100000) * time.Minute).In(loc).Format(time.RFC3339)
			d.LastModified = lm
		}
		docs[i] = d
	}
	return docs
}

var queries = []struct {
	name string
	q    Query
}{
	{"all", Query{}},
	{"page-50", Query{Offset: 5000, Limit: 100}},
	{"keyword", Query{Keywords: []string{"TOPIC42"}}},
	{"file_type", Query{FileType: "xlsx"}},
}

var history = []string{"server-3", "server-1", "server-3", "server-0"}

// BenchmarkOrganize is organize_finder from plain summaries: every call
// validates every URI and parses every timestamp.
func BenchmarkOrganize(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		docs := synthetic(n, 5)
		for _, q := range queries {
			b.Run(fmt.Sprintf("n=%d/%s", n, q.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					Organize(docs, q.q, history)
				}
			})
		}
	}
}

// BenchmarkOrganizeCached is organize_finder as Aggregator.Query runs it:
// on the cache, whose URIs are validated, instants parsed and per-server
// order sorted once, when a document is read.
func BenchmarkOrganizeCached(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		docs := synthetic(n, 5)
		ix := cachedIndex(docs)
		for _, q := range queries {
			b.Run(fmt.Sprintf("n=%d/%s", n, q.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					organize(ix, q.q, history)
				}
			})
		}
	}
}

// serveDocs starts an MCP endpoint (streamable HTTP) serving n documents of
// host.
func serveDocs(tb testing.TB, host string, n int, opts ...sourcetest.ServerOption) (*sourcetest.Server, string) {
	srv := sourcetest.NewServer(opts...)
	rs := make([]sourcetest.Resource, n)
	for i := range rs {
		rs[i] = sourcetest.Doc(sourcetest.Meta(host, "doc-"+strconv.Itoa(i), i%5000))
	}
	srv.Put(rs...)
	return srv, sourcetest.Serve(tb, srv)
}

// BenchmarkColdAggregation lists 10,000 documents of one MCP server over
// streamable HTTP, subscribes to each and reads each Level 1.
func BenchmarkColdAggregation(b *testing.B) {
	for _, page := range []int{0, 1000} {
		for _, conc := range []int{8, 16} {
			b.Run(fmt.Sprintf("docs=10000/page=%d/concurrency=%d", page, conc), func(b *testing.B) {
				var opts []sourcetest.ServerOption
				if page > 0 {
					opts = append(opts, sourcetest.WithPageSize(page))
				}
				_, url := serveDocs(b, "bench.docs", 10_000, opts...)
				cl := sourcetest.DialHTTP(b, "bench", url)
				for b.Loop() {
					a := New(WithConcurrency(conc))
					if err := a.AddSource(context.Background(), cl); err != nil {
						b.Fatal(err)
					}
					if a.Len() != 10_000 {
						b.Fatalf("cached %d documents", a.Len())
					}
					a.Close()
				}
			})
		}
	}
}

var (
	fiveOnce sync.Once
	five     *Aggregator
)

// fiveServers caches 10,000 documents from 5 real MCP servers (2,000 each).
func fiveServers(b *testing.B) *Aggregator {
	fiveOnce.Do(func() {
		five = New()
		for i := range 5 {
			name := "server-" + strconv.Itoa(i)
			_, url := serveDocs(b, name+".docs", 2_000)
			// The endpoints must outlive this sub-benchmark: they are closed
			// with the process.
			if err := five.AddSource(context.Background(), sourcetest.DialHTTP(b, name, url)); err != nil {
				b.Fatal(err)
			}
		}
	})
	if five.Len() != 10_000 {
		b.Fatalf("cached %d documents", five.Len())
	}
	return five
}

// BenchmarkQuery is the Computer's share of client:get_finder: Query over
// 10,000 cached documents of 5 MCP servers (no MCP round trip).
func BenchmarkQuery(b *testing.B) {
	for _, q := range queries {
		b.Run("docs=10000/servers=5/"+q.name, func(b *testing.B) {
			a := fiveServers(b)
			req := protocol.GetFinderReq{ReqID: "r", Keywords: q.q.Keywords, Offset: q.q.Offset, Limit: q.q.Limit}
			if q.q.FileType != "" {
				req.FileType = q.q.FileType
			}
			b.ReportAllocs()
			for b.Loop() {
				a.Query(req, history)
			}
		})
	}
}

// BenchmarkUpdate: one resources/updated of a cached document costs one
// Level-1 read (reported as reads/op, counted by the MCP server).
func BenchmarkUpdate(b *testing.B) {
	srv, url := serveDocs(b, "bench.docs", 1_000)
	a := New()
	defer a.Close()
	if err := a.AddSource(context.Background(), sourcetest.DialHTTP(b, "bench", url)); err != nil {
		b.Fatal(err)
	}
	before := srv.Reads()
	i := 0
	for b.Loop() {
		a.ResourceUpdated(context.Background(), "bench", "dpe://bench.docs/doc-"+strconv.Itoa(i%1000))
		if err := a.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(srv.Reads()-before)/float64(i), "reads/op")
}
