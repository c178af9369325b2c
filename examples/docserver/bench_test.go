package docserver_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/dpekit"
	"github.com/a2c-smcp/smcp-go/examples/docserver"
)

// benchPage measures one Level-2 read three ways: the raw provider call
// (Library.Page), the kit's read path without transport (Server.Read: parse
// the URI, look up, filter, encode JSON), and a full resources/read from an
// mcp-go client over streamable HTTP on loopback.
func benchPage(b *testing.B, ref string, page int) {
	ctx := context.Background()
	root, err := filepath.Abs(shippedDocs)
	require.NoError(b, err)
	lib, err := docserver.New(root, docserver.WithoutWatch())
	require.NoError(b, err)
	srv, err := dpekit.New(ctx, docserver.DefaultHost, lib)
	require.NoError(b, err)
	defer srv.Close()
	uri := fmt.Sprintf("%s/%s/pages/%d", catalog, ref, page)

	b.Run("provider", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := lib.Page(ctx, ref, page); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, format := range []string{"json", "markdown"} {
		b.Run("kit/"+format, func(b *testing.B) {
			b.ReportAllocs()
			u := uri + "?format=" + format
			var n int
			for b.Loop() {
				body, err := srv.Read(ctx, u)
				if err != nil {
					b.Fatal(err)
				}
				n = len(body)
			}
			b.ReportMetric(float64(n), "bytes/read")
		})
	}
	b.Run("mcp-http/json", func(b *testing.B) {
		h := dpekit.NewStreamableHTTPHandler(srv)
		ts := httptest.NewServer(h)
		defer ts.Close()
		defer h.Shutdown(ctx)
		tr, err := transport.NewStreamableHTTP(ts.URL + "/mcp")
		require.NoError(b, err)
		c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
		defer c.Close()
		require.NoError(b, c.Start(ctx))
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
		init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "0"}
		_, err = c.Initialize(ctx, init)
		require.NoError(b, err)
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.ReadResource(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReadCSVPage reads the first page (100 rows × 7 columns) of the
// shipped CSV.
func BenchmarkReadCSVPage(b *testing.B) { benchPage(b, "sales-2026-q3.csv", 0) }

// BenchmarkReadPDFPage reads the second page of the shipped PDF.
func BenchmarkReadPDFPage(b *testing.B) { benchPage(b, "service-agreement.pdf", 1) }

// BenchmarkScanMarkdown1000 scans a folder of 1,000 Markdown files (about
// 1.5 KB each, 50 subfolders): walk, parse every file, list the catalog.
// "library" is docserver.New + Documents; "server" is NewServer (which lists
// the documents to register their resources) + a Level-0 read.
func BenchmarkScanMarkdown1000(b *testing.B) {
	root := b.TempDir()
	for i := range 1000 {
		writeFile(b, filepath.Join(root, fmt.Sprintf("dir%02d", i%50), fmt.Sprintf("note-%04d.md", i)), markdownFile(i))
	}
	ctx := context.Background()
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			lib, err := docserver.New(root, docserver.WithoutWatch())
			if err != nil {
				b.Fatal(err)
			}
			docs, err := lib.Documents(ctx)
			if err != nil || len(docs) != 1000 {
				b.Fatalf("%d documents, %v", len(docs), err)
			}
		}
	})
	b.Run("server", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			srv, err := docserver.NewServer(ctx, root, docserver.WithoutWatch())
			if err != nil {
				b.Fatal(err)
			}
			if _, err := srv.Read(ctx, catalog); err != nil {
				b.Fatal(err)
			}
			srv.Close()
		}
	})
	// retained: the heap a Library keeps after cataloguing the 1,000 files,
	// with the default cache of parsed documents and with one large enough
	// to keep them all (what it did before the cache was bounded).
	for _, n := range []int{docserver.DefaultCacheDocuments, 1000} {
		b.Run(fmt.Sprintf("retained/cache=%d", n), func(b *testing.B) {
			var kb float64
			for b.Loop() {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				lib, err := docserver.New(root, docserver.WithoutWatch(), docserver.WithCacheDocuments(n))
				require.NoError(b, err)
				_, err = lib.Documents(ctx)
				require.NoError(b, err)
				runtime.GC()
				runtime.ReadMemStats(&after)
				kb = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / 1024
				runtime.KeepAlive(lib)
				require.NoError(b, lib.Close())
			}
			b.ReportMetric(kb, "retained-KB")
		})
	}
	b.Run("relist-cached", func(b *testing.B) {
		lib, err := docserver.New(root, docserver.WithoutWatch())
		require.NoError(b, err)
		_, err = lib.Documents(ctx)
		require.NoError(b, err)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := lib.Documents(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func markdownFile(i int) string {
	var s strings.Builder
	fmt.Fprintf(&s, "# Note %d\n\nThis note records the status of work item %d. It has a few sections.\n\n", i, i)
	fmt.Fprintf(&s, "## Status\n\n- owner: team %d\n- state: open\n- priority: %d\n\n", i%7, i%3)
	s.WriteString("## Figures\n\n| Metric | Value |\n|---|---:|\n")
	for j := range 8 {
		fmt.Fprintf(&s, "| m%d | %d |\n", j, i*j)
	}
	s.WriteString("\n## Details\n\n")
	for range 4 {
		s.WriteString("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore. ")
	}
	s.WriteString("\n\n```go\nfmt.Println(\"hello\")\n```\n\nSee [the tracker](https://tracker.example/items).\n")
	return s.String()
}
