package window_test

import (
	"testing"

	"github.com/a2c-smcp/smcp-go/protocol/window"
)

var sink *window.URI

func BenchmarkParse(b *testing.B) {
	for _, raw := range []string{"window://com.example.mcp", "window://com.example.mcp/dashboard/main?priority=90&fullscreen=true"} {
		b.Run(raw, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				u, err := window.Parse(raw)
				if err != nil {
					b.Fatal(err)
				}
				sink = u
			}
		})
	}
}
