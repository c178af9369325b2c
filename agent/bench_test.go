package agent_test

import (
	"context"
	"testing"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/agent/agenttest"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// Round trips against the scripted peer over loopback: request validation,
// Socket.IO emit and ack, answer validation and decoding. The peer's own
// work is included; compare the figures, not their absolute values.

func benchClient(b *testing.B) (*agent.Client, *agenttest.Peer) {
	b.Helper()
	p, err := agenttest.Start(agenttest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	p.World.AddDocs("alpha", 18) // 20 documents: a full default page
	log, _ := newLogger()
	c, err := agent.Dial(context.Background(), p.URL, agent.WithLogger(log))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	if err := c.JoinOffice(context.Background(), "bench"); err != nil {
		b.Fatal(err)
	}
	return c, p
}

func BenchmarkGetFinder20(b *testing.B) {
	c, _ := benchClient(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ret, err := c.GetFinder(ctx, "alpha", agent.FinderQuery{})
		if err != nil || len(ret.Documents) != 20 {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetFinder20Parallel(b *testing.B) {
	c, _ := benchClient(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(16) // 32 in flight on 2 cores
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.GetFinder(ctx, "alpha", agent.FinderQuery{}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkReadPage(b *testing.B) {
	c, _ := benchClient(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.ReadPage(ctx, "alpha", reportURI, 0, agent.PageQuery{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCallTool(b *testing.B) {
	c, _ := benchClient(b)
	ctx := context.Background()
	params := map[string]any{"text": "hello"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.CallTool(ctx, "alpha", "echo", params, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateFinderAnswer isolates what checking a 20-document
// answer against its schema costs the Agent.
func BenchmarkValidateFinderAnswer(b *testing.B) {
	_, p := benchClient(b)
	r := p.World.Handler(protocol.EventGetFinder)(context.Background(), map[string]any{"computer": "alpha", "req_id": "r"})
	v := r.Values[0]
	b.ReportAllocs()
	for b.Loop() {
		if err := protocol.ValidateValue(protocol.EventGetFinder, protocol.Ack, v); err != nil {
			b.Fatal(err)
		}
	}
}
