package agent_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/agent/agenttest"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// The examples run against agenttest, an in-process office whose Computer
// "alpha" serves the documents of dpe://com.example.docs (rpt-2026,
// contract-a1) and the tools echo, fail and slow, and whose Computer
// "beta" serves one more document. Against a deployment, dial the
// smcp-server's URL (and pass agent.WithAPIKey) instead of office.URL.

// Browse documents step by step: catalog, document, page, element.
func Example() {
	office, err := agenttest.Start(agenttest.Options{})
	if err != nil {
		panic(err)
	}
	defer office.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	c, err := agent.Dial(ctx, office.URL, agent.WithName("my-agent"))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if err := c.JoinOffice(ctx, "office-1"); err != nil {
		panic(err)
	}

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
		fmt.Printf("  [%s] %s: %s\n", e.Category, e.ElementID, e.Summary)
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
	office, err := agenttest.Start(agenttest.Options{APIKey: "s3cret"})
	if err != nil {
		panic(err)
	}
	defer office.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c, err := agent.Dial(ctx, office.URL, agent.WithAPIKey("s3cret"), agent.WithName("my-agent"))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println("connected as", c.Name())

	// A refusal is the Server's code.
	_, err = agent.Dial(ctx, office.URL, agent.WithAPIKey("wrong"))
	fmt.Println(err)
	// Output:
	// connected as my-agent
	// 401 Unauthorized: connection refused by the server: unauthorized
}

// A Server that cannot be reached is a retryable 503 that wraps the
// network's error; a context that ends first is a 408 that wraps it.
func ExampleDial_errors() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	quiet := agent.WithLogger(slog.New(slog.DiscardHandler))

	_, err := agent.Dial(ctx, "http://127.0.0.1:1", quiet) // nothing listens on port 1
	fmt.Println(errors.Is(err, agent.ErrUnreachable), protocol.CodeOf(err), protocol.CodeOf(err).Retryable())

	ended, stop := context.WithCancel(ctx)
	stop()
	_, err = agent.Dial(ended, "http://127.0.0.1:1", quiet)
	fmt.Println(errors.Is(err, context.Canceled), protocol.CodeOf(err))
	// Output:
	// true Unavailable true
	// true Timeout
}

func ExampleClient_ListRoom() {
	c, done := joinExampleOffice()
	defer done()
	sessions, err := c.ListRoom(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(agent.ComputerNames(sessions))
	// Output: [alpha beta]
}

// A result is what the Computer answered, the tool's failures included; an
// error is a call that got no answer from it.
func ExampleClient_CallTool() {
	c, done := joinExampleOffice()
	defer done()
	ctx := context.Background()

	res, err := c.CallTool(ctx, "alpha", "echo", map[string]any{"text": "hi"}, 10*time.Second)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text())

	// A failing tool is a result, not an error; ToolError reads its code.
	res, err = c.CallTool(ctx, "alpha", "fail", nil, 10*time.Second)
	fmt.Println(err, "|", agent.ToolError(res))

	// No answer before the context's deadline: an error (408) that wraps
	// the context's; the Agent sent server:tool_call_cancel to the Computer.
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = c.CallTool(short, "alpha", "slow", nil, 30*time.Second)
	fmt.Println(protocol.CodeOf(err), errors.Is(err, context.DeadlineExceeded))
	// Output:
	// {"text":"hi"}
	// <nil> | 4003 ToolExecutionFailed: the tool failed on purpose
	// Timeout true
}

// Wait for a Computer's tools: the Client fetches them in the background
// after JoinOffice and whenever they change.
func ExampleClient_WaitTools() {
	c, done := joinExampleOffice()
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tools, err := c.WaitTools(ctx, "alpha", func(ts []protocol.SMCPTool) bool {
		return slices.ContainsFunc(ts, func(t protocol.SMCPTool) bool { return t.Name == "echo" })
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(tools), "tools")
	// Output: 3 tools
}

func ExampleClient_GetFinder() {
	c, done := joinExampleOffice()
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
	c, done := joinExampleOffice()
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
	c, done := joinExampleOffice()
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
	// ## Scope
	//
	// The supplier delivers.
	// --- page 1 ---
	// # Signatures
	//
	// Signed by both parties.
}

// Finder errors keep their protocol codes.
func ExampleClient_ReadPage_errors() {
	c, done := joinExampleOffice()
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
	office, err := agenttest.Start(agenttest.Options{})
	if err != nil {
		panic(err)
	}
	defer office.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	catalogs := make(chan *protocol.GetFinderRet, 1)
	c, err := agent.Dial(ctx, office.URL,
		agent.OnFinderChanged(func(computer string, cat *protocol.GetFinderRet) { catalogs <- cat }))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if err := c.JoinOffice(ctx, "office-1"); err != nil {
		panic(err)
	}

	// A Computer's server:update_finder reaches the office as
	// notify:update_finder; agenttest broadcasts it on demand.
	if err := office.Broadcast(protocol.NotifyUpdateFinder, map[string]any{"computer": "alpha"}); err != nil {
		panic(err)
	}
	cat := <-catalogs
	fmt.Println("alpha now has", cat.TotalCount, "documents")
	// Output: alpha now has 2 documents
}

// joinExampleOffice starts an agenttest office and returns a Client that
// joined its office "office-1", and a function that closes both.
func joinExampleOffice() (*agent.Client, func()) {
	office, err := agenttest.Start(agenttest.Options{})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := agent.Dial(ctx, office.URL, agent.WithName("example"))
	if err != nil {
		panic(err)
	}
	if err := c.JoinOffice(ctx, "office-1"); err != nil {
		panic(err)
	}
	return c, func() { c.Close(); office.Close() }
}
