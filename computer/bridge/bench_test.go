package bridge

import (
	"context"
	"testing"

	"github.com/a2c-smcp/smcp-go/computer/internal/sourcetest"
)

// BenchmarkRead is one client:read_resource as the Computer serves it:
// parse, route, resources/read over streamable HTTP, convert.
func BenchmarkRead(b *testing.B) {
	srv := sourcetest.NewServer()
	srv.Put(sourcetest.Doc(sourcetest.Meta("bench.docs", "d1", 1)))
	br := New()
	if err := br.AddSource(context.Background(), sourcetest.DialHTTP(b, "bench", sourcetest.Serve(b, srv))); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := br.Read(ctx, "dpe://bench.docs/d1"); err != nil {
			b.Fatal(err)
		}
	}
}
