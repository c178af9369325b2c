package tools

import (
	"context"
	"testing"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// BenchmarkCall measures one client:tool_call through the Set to the echo
// tool of a real testmcp process (stdio and streamable HTTP): name
// resolution, meta merge, tools/call round trip, result decoding, history.
func BenchmarkCall(b *testing.B) {
	for _, tr := range []string{"stdio", "streamable"} {
		b.Run(tr, func(b *testing.B) {
			s, _ := env(b, tr)
			req := protocol.ToolCallReq{ReqID: "b", ToolName: "echo", Params: map[string]any{"text": "hello"}, Timeout: 10}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if res := s.Call(context.Background(), protocol.Gen02, req); res.IsError != nil && *res.IsError {
					b.Fatal(*res.Content[0].Text)
				}
			}
		})
	}
}
