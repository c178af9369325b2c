package dpekit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/dpekit"
)

// BenchmarkRead measures the kit's read path (parse, provider lookup,
// filter, render, encode) on an in-memory provider, without transport.
func BenchmarkRead(b *testing.B) {
	ctx := context.Background()
	srv, err := dpekit.New(ctx, testHost, testProvider())
	require.NoError(b, err)
	defer srv.Close()
	for _, tc := range []struct{ name, uri string }{
		{"catalog", "dpe://" + testHost},
		{"document/pages", "dpe://" + testHost + "/big?depth=pages&limit=100"},
		{"page/json", "dpe://" + testHost + "/rpt-2026/pages/0"},
		{"page/markdown+filter", "dpe://" + testHost + "/rpt-2026/pages/0?categories=table&format=markdown"},
		{"element", "dpe://" + testHost + "/rpt-2026/elements/tbl-001"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := srv.Read(ctx, tc.uri); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
