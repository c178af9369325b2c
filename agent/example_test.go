package agent_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/agent/internal/peer"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// The examples run against the scripted test peer, which plays a Server
// with two Computers: "alpha" (MCP server dpe://com.example.docs with the
// documents rpt-2026 and contract-a1) and "beta". Against a real
// deployment, dial the Server's URL instead of srv.URL.

var quiet = agent.WithLogger(slog.New(slog.DiscardHandler))

// connect starts the peer and returns a Client that joined "office-1".
func connect(opts ...agent.Option) (*agent.Client, func()) {
	srv, err := peer.Start(peer.Options{})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	c, err := agent.Dial(ctx, srv.URL, append([]agent.Option{quiet, agent.WithName("example")}, opts...)...)
	if err != nil {
		panic(err)
	}
	if err := c.JoinOffice(ctx, "office-1"); err != nil {
		panic(err)
	}
	return c, func() { c.Close(); srv.Close() }
}

// Browse documents step by step: catalog, document, page, element.
func Example() {
	c, done := connect()
	defer done()
	ctx := context.Background()

	// Step 1: the Computer's document catalog.
	cat, err := c.GetFinder(ctx, "alpha", agent.FinderQuery{})
	if err != nil {
		panic(err)
	}
	doc := cat.Documents[0]
	fmt.Printf("%s: %d pages\n", doc.Title, doc.PageCount)

	// Step 2: the document's page index.
	meta, err := c.ReadDocument(ctx, "alpha", doc.URI, agent.DocumentQuery{Pages: true})
	if err != nil {
		panic(err)
	}
	for _, p := range meta.Pages {
		fmt.Printf("  page %d: %s (%d elements)\n", p.PageIndex, p.Title, p.ElementCount)
	}

	// Step 3: a page, only its tables.
	page, err := c.ReadPage(ctx, "alpha", doc.URI, 0, agent.PageQuery{Categories: []protocol.DPEElementCategory{protocol.DPEElementCategoryTable}})
	if err != nil {
		panic(err)
	}
	for _, e := range page.Elements {
		fmt.Printf("  [%s] %s: %s\n", e.Category, e.ElementID, *e.Summary)
	}

	// Step 4: one element in full.
	el, err := c.ReadElement(ctx, "alpha", doc.URI, page.Elements[0].ElementID, dpe.FormatJSON)
	if err != nil {
		panic(err)
	}
	fmt.Println("  headers:", el.Content["headers"])
	// Output:
	// 2026 Annual Report: 3 pages
	//   page 0: Overview (4 elements)
	//   page 1: Revenue (2 elements)
	//   page 2: Outlook (2 elements)
	//   [table] tbl-001: Quarterly revenue (4x3)
	//   headers: [Quarter Revenue Growth]
}

func ExampleDial() {
	srv, _ := peer.Start(peer.Options{APIKey: "s3cret"})
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c, err := agent.Dial(ctx, srv.URL, agent.WithAPIKey("s3cret"), agent.WithName("my-agent"), quiet)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println("connected as", c.Name())

	_, err = agent.Dial(ctx, srv.URL, agent.WithAPIKey("wrong"), quiet)
	fmt.Println(err)
	// Output:
	// connected as my-agent
	// 401 Unauthorized: connection refused by the server: unauthorized
}

func ExampleClient_ListRoom() {
	c, done := connect()
	defer done()
	sessions, err := c.ListRoom(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(agent.ComputerNames(sessions))
	// Output: [alpha beta]
}

func ExampleClient_CallTool() {
	c, done := connect()
	defer done()
	ctx := context.Background()

	res, err := c.CallTool(ctx, "alpha", "echo", map[string]any{"text": "hi"}, 10*time.Second)
	if err != nil {
		panic(err)
	}
	fmt.Println(*res.Content[0].Text)

	// A failing tool is a result, not an error; ToolError reads its code.
	res, _ = c.CallTool(ctx, "alpha", "fail", nil, 10*time.Second)
	fmt.Println(agent.ToolError(res))

	// No answer before the context's deadline: an error (408) that wraps
	// the context's; the Agent sent server:tool_call_cancel to the Computer.
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = c.CallTool(short, "alpha", "slow", nil, 30*time.Second)
	fmt.Println(int(protocol.CodeOf(err)), errors.Is(err, context.DeadlineExceeded))
	// Output:
	// {"text":"hi"}
	// 4003 ToolExecutionFailed: the tool failed on purpose
	// 408 true
}

func ExampleClient_GetFinder() {
	c, done := connect()
	defer done()
	ret, err := c.GetFinder(context.Background(), "alpha", agent.FinderQuery{Keywords: []string{"contract"}, Limit: 10})
	if err != nil {
		panic(err)
	}
	for _, d := range ret.Documents {
		fmt.Printf("%s %s (%s, %d pages) from %s\n", d.URI, d.Title, d.FileType, d.PageCount, d.Server)
	}
	fmt.Println("total:", ret.TotalCount)
	// Output:
	// dpe://com.example.docs/contract-a1 A1 Contract (pdf, 2 pages) from docs
	// total: 1
}

// Every document of a catalog, however many pages of client:get_finder it
// takes.
func ExampleClient_Documents() {
	c, done := connect()
	defer done()
	for doc, err := range c.Documents(context.Background(), "alpha", agent.FinderQuery{Limit: 1}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(doc.DocRef)
	}
	// Output:
	// rpt-2026
	// contract-a1
}

// Read a whole document, rendered as Markdown, in one loop.
func ExampleClient_Pages() {
	c, done := connect()
	defer done()
	for page, err := range c.Pages(context.Background(), "alpha", "dpe://com.example.docs/contract-a1", agent.PageQuery{Format: dpe.FormatMarkdown}) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("--- page %d ---\n%s\n", page.PageIndex, strings.TrimSpace(*page.ContentMarkdown))
	}
	// Output:
	// --- page 0 ---
	// # Terms
	//
	// # Terms
	//
	// The supplier delivers.
	// --- page 1 ---
	// # Signatures
	//
	// Signed by both parties.
}

// Finder errors keep their protocol codes.
func ExampleClient_ReadPage_errors() {
	c, done := connect()
	defer done()
	_, err := c.ReadPage(context.Background(), "alpha", "dpe://com.example.docs/rpt-2026", 12, agent.PageQuery{})
	var perr *protocol.Error
	if errors.As(err, &perr) && perr.Code == protocol.CodePageOutOfRange {
		fmt.Println("no page 12; the document has", perr.Details["page_count"])
	}
	// Output: no page 12; the document has 3
}

// React to notifications: the Client re-fetches what changed and hands it
// over, off the Socket.IO event queue.
func ExampleOnFinderChanged() {
	catalogs := make(chan *protocol.GetFinderRet, 1)
	srv, _ := peer.Start(peer.Options{})
	defer srv.Close()
	ctx := context.Background()
	c, err := agent.Dial(ctx, srv.URL, quiet,
		agent.OnFinderChanged(func(computer string, cat *protocol.GetFinderRet) { catalogs <- cat }))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	_ = c.JoinOffice(ctx, "office-1")

	// The Server relays a Computer's server:update_finder to the office.
	_ = srv.Broadcast(protocol.NotifyUpdateFinder, map[string]any{"computer": "alpha"})
	cat := <-catalogs
	fmt.Println("alpha now has", cat.TotalCount, "documents")
	// Output: alpha now has 2 documents
}
