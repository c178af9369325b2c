package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// BenchmarkRoutedToolCall measures one routed client:tool_call (echo on a
// stdio MCP server) through our Server and through the Rust SDK's Server
// (rustpeer-server) with the same clients, our Agent and our Computer, at 1
// and 32 calls in flight: p50 (and p99) latency and calls per second. `go run mage.go
// benchrust` runs it with a fixed number of calls.
//
// Through the Rust Server every answer arrives wrapped in {"Ok": …}
// (conformance/lockstep-rust.md, R2), which our Agent rejects as an invalid
// answer: the round trip Agent → Server → Computer → MCP server → back is
// complete all the same, and a call counts only when it ends that way (any
// other error fails the benchmark).
func BenchmarkRoutedToolCall(b *testing.B) {
	// A benchmark is not the test suite: without the peers (`go run
	// mage.go bench` does not build them) it skips even under
	// SMCP_INTEROP=1; `go run mage.go benchRust` builds them first.
	if dir := os.Getenv("SMCP_INTEROP_RUST_BIN"); dir == "" || !fileExists(filepath.Join(dir, "rustpeer-server")) {
		b.Skip("Rust interop peers not built (run `go run mage.go benchRust`)")
	}
	rs := startRustServer(b)
	servers := []struct {
		name string
		d    *deployment
		ok   func(*protocol.CallToolResult, error) error
	}{
		{"server=go", startServer(b), func(res *protocol.CallToolResult, err error) error {
			if err != nil {
				return err
			}
			if perr := agent.ToolError(res); perr != nil {
				return perr
			}
			return nil
		}},
		{"server=rust", &deployment{URL: rs.URL, APIKey: rs.APIKey}, func(_ *protocol.CallToolResult, err error) error {
			if errors.Is(err, agent.ErrInvalidAnswer) {
				return nil
			}
			return fmt.Errorf("expected the Rust Server's wrapped answer, got %v", err)
		}},
	}
	for _, s := range servers {
		var a *agent.Client
		if s.name == "server=rust" {
			startComputerRust(b, s.d, "o1", "desk", []mcpServer{toolsMeta(toolServer(b, "tools"))})
			a = dialAgentRust(b, s.d, "o1", "bot")
		} else {
			startComputer(b, s.d, "o1", "desk", []mcpServer{toolsMeta(toolServer(b, "tools"))})
			a = dialAgent(b, s.d, "o1", "bot")
		}
		for _, inflight := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/inflight=%d", s.name, inflight), func(b *testing.B) {
				ctx := context.Background()
				lat := make([]time.Duration, b.N)
				var next atomic.Int64
				var wg sync.WaitGroup
				errs := make(chan error, inflight)
				b.ResetTimer()
				start := time.Now()
				for range inflight {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							i := int(next.Add(1)) - 1
							if i >= b.N {
								return
							}
							t0 := time.Now()
							res, err := a.CallTool(ctx, "desk", "echo", map[string]any{"text": "bench"}, 10*time.Second)
							lat[i] = time.Since(t0)
							if err := s.ok(res, err); err != nil {
								errs <- err
								return
							}
						}
					}()
				}
				wg.Wait()
				elapsed := time.Since(start)
				b.StopTimer()
				close(errs)
				for err := range errs {
					require.NoError(b, err)
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
			})
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
