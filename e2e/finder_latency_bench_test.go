package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/dpekit"
	"github.com/a2c-smcp/smcp-go/e2e/internal/memdocs"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// hangingDocs serves memdocs whose document "slow" answers no read until
// the benchmark ends, and whose titles the benchmark edits.
type hangingDocs struct {
	memdocs.Provider
	mu      sync.Mutex
	release chan struct{}
	slowed  chan struct{} // receives when a read of "slow" starts
	reads   map[string]int
}

func (h *hangingDocs) Document(ctx context.Context, ref string) (dpekit.Document, error) {
	h.mu.Lock()
	if h.reads == nil {
		h.reads = map[string]int{}
	}
	h.reads[ref]++
	h.mu.Unlock()
	if ref == "slow" {
		select {
		case h.slowed <- struct{}{}:
		default:
		}
		h.mu.Lock()
		release := h.release
		h.mu.Unlock()
		select {
		case <-release:
		case <-ctx.Done():
			return dpekit.Document{}, ctx.Err()
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.Provider.Document(ctx, ref)
}

func (h *hangingDocs) Documents(ctx context.Context) ([]dpekit.Document, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]dpekit.Document(nil), h.Docs...), nil
}

func (h *hangingDocs) retitle(ref, title string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range h.Docs {
		if h.Docs[i].DocRef == ref {
			h.Docs[i].Title = title
			h.Docs[i].LastModified = h.Docs[i].LastModified.Add(time.Second)
		}
	}
}

// serveOverStdio serves srv, in this process, as the stdio MCP server of a
// Computer: the configured command is this binary relaying its stdin and
// stdout to a Unix socket on which srv is served (runRelay). The server's
// provider thus stays under the benchmark's control, over a real stdio
// transport. (Over streamable HTTP, mcp-go writes a session's
// notifications into the stream of a request in flight, so a read that
// hangs swallows them: a transport effect this benchmark does not measure.)
func serveOverStdio(tb testing.TB, srv *dpekit.Server, name string) mcpServer {
	sock := filepath.Join(tb.TempDir(), "mcp.sock")
	ln, err := net.Listen("unix", sock)
	require.NoError(tb, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	tb.Cleanup(func() {
		cancel()
		_ = ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer conn.Close()
				stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
				defer stop()
				_ = dpekit.ServeIO(ctx, srv, conn, conn)
			})
		}
	})
	m := reexec(tb, name, "relay")
	m["server_parameters"].(map[string]any)["env"].(map[string]string)["SMCP_E2E_SOCKET"] = sock
	return m
}

// runRelay copies stdin to the Unix socket SMCP_E2E_SOCKET and the socket
// to stdout, until either ends.
func runRelay() int {
	conn, err := net.Dial("unix", os.Getenv("SMCP_E2E_SOCKET"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		return 1
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(conn, os.Stdin); done <- struct{}{} }()
	go func() { _, _ = io.Copy(os.Stdout, conn); done <- struct{}{} }()
	<-done
	return 0
}

// BenchmarkUpdateBesideHangingDocument (issue 27, item 3) measures, at the
// Agent, edit → notify:update_finder for one document of an MCP server,
// alone and while a re-read of another document of the same server hangs:
// each iteration of the second first has the server announce an update of
// "slow" (whose reads never answer), then edits "fast" and announces it,
// and times the notification the Agent receives. A real Server, Computer
// (debounce 20 ms, catalog read timeout 2 s) and dpekit server over stdio.
// Edits are paced 120 ms apart: the Server sends a Computer's
// notify:update_finder at most every 100 ms. Target: p99 ≤ 100 ms beside
// the hanging read; before issue 27 the edit waited for its timeout.
func BenchmarkUpdateBesideHangingDocument(b *testing.B) {
	b.Run("alone", func(b *testing.B) { benchUpdateLatency(b, false) })
	b.Run("beside-a-hanging-read", func(b *testing.B) { benchUpdateLatency(b, true) })
}

func benchUpdateLatency(b *testing.B, hang bool) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &hangingDocs{release: make(chan struct{}), slowed: make(chan struct{}, 1)}
	p.Docs = []dpekit.Document{
		{DocRef: "fast", Title: "fast 0", FileType: "md", FileURI: "file:///fast", PageCount: 1, LastModified: base},
		{DocRef: "slow", Title: "slow", FileType: "md", FileURI: "file:///slow", PageCount: 1, LastModified: base},
	}
	// The cold build reads "slow" too: let it through once.
	close(p.release)
	srv, err := dpekit.New(context.Background(), "hang.docs", p)
	require.NoError(b, err)
	b.Cleanup(func() { _ = srv.Close() })

	d := startServer(b)
	startComputer(b, d, "bench", "desk", []mcpServer{serveOverStdio(b, srv, "docs")},
		computer.WithDebounce(20*time.Millisecond), computer.WithCatalogReadTimeout(2*time.Second))
	notes := make(chan time.Time, 1024)
	dialAgent(b, d, "bench", "bot", agent.OnNotification(func(n agent.Notification) {
		if n.Event == protocol.NotifyUpdateFinder {
			notes <- time.Now()
		}
	}))
	// From now on "slow" hangs.
	p.mu.Lock()
	p.release = make(chan struct{})
	p.mu.Unlock()
	b.Cleanup(func() {
		p.mu.Lock()
		close(p.release)
		p.mu.Unlock()
	})
	drain := func() {
		for {
			select {
			case <-notes:
			default:
				return
			}
		}
	}

	var lat []time.Duration
	var last time.Time
	i := 0
	for b.Loop() {
		i++
		// The Server sends a Computer's notify:update_finder at most every
		// 100 ms (server/ratelimit.go, updateInterval): pace the edits
		// beyond it, so that the figure is the Computer's, not that bound.
		time.Sleep(time.Until(last.Add(120 * time.Millisecond)))
		if hang {
			srv.Notify(dpekit.Change{Kind: dpekit.DocumentUpdated, DocRef: "slow"})
			select { // the hanging read has started (or is still pending from before)
			case <-p.slowed:
			case <-time.After(50 * time.Millisecond):
			}
		}
		drain()
		p.retitle("fast", fmt.Sprintf("fast %d", i))
		start := time.Now()
		srv.Notify(dpekit.Change{Kind: dpekit.DocumentUpdated, DocRef: "fast"})
		select {
		case at := <-notes:
			lat = append(lat, at.Sub(start))
			last = at
		case <-time.After(30 * time.Second):
			p.mu.Lock()
			reads := fmt.Sprint(p.reads)
			p.mu.Unlock()
			b.Fatalf("no notify:update_finder within 30 s (iteration %d, reads %s)", i, reads)
		}
	}
	reportPercentiles(b, lat)
}
