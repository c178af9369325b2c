// Command quickstart is smcp-go's one-command demo:
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart --inspector
//
// In a few seconds it starts the three roles of A2C-SMCP on this machine and
// lets an Agent browse real documents through the Finder (dpe:// URIs,
// catalog → document → page → element):
//
//   - a Server, the signalling hub, on a free loopback port;
//   - a Computer whose one MCP server is smcp-docserver, run as a child
//     process over a temporary copy of the documents in docs/ (a Markdown
//     report, a CSV export, an XLSX workbook, a PDF);
//   - an Agent that joins the office, reads the catalog, opens a document,
//     reads a page and an element, runs into an error on purpose, then edits
//     a document and watches the change notification arrive.
//
// With --inspector the demo keeps running after its walk and serves
// smcp-inspector's web page on a loopback port (its address is printed)
// until Ctrl-C.
//
// The walk is printed on standard output. Logs go to standard error:
// warnings only, everything with -v. Everything the demo starts is stopped
// before it exits, also on Ctrl-C.
package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/examples/docserver"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// shipped holds the committed documents; the demo works on a copy.
//
//go:embed docs
var shipped embed.FS

func main() {
	if os.Getenv(docserverEnv) == "1" {
		os.Exit(runDocserver()) // we are the Computer's MCP server
	}
	verbose := flag.Bool("v", false, "log debug messages to standard error")
	inspect := flag.Bool("inspector", false, "after the walk, keep the demo running and serve smcp-inspector's page until Ctrl-C")
	flag.Parse()

	// Our own signal handling: Ctrl-C cancels ctx and the demo shuts down
	// cleanly (the Socket.IO client library swallows the first signal).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	began := time.Now()
	err := run(ctx, newLogger(*verbose), *inspect)
	interrupted := ctx.Err() != nil
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		if interrupted {
			os.Exit(130)
		}
		os.Exit(1)
	}
	fmt.Printf("\nDone in %.1f s: everything stopped, temporary copy removed.\n", time.Since(began).Seconds())
}

// newLogger keeps standard output for the demo: logs go to standard error.
func newLogger(verbose bool) *slog.Logger {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(log)
	return log
}

// run starts the three roles, walks the Finder, serves the inspector's page
// when inspect is set, and stops everything.
func run(ctx context.Context, log *slog.Logger, inspect bool) (err error) {
	d := &demo{log: log}
	defer func() {
		if ctx.Err() != nil && (err != nil || !inspect) {
			err = errors.New("interrupted") // what failed next was its consequence
		}
		if stopErr := d.stop(); stopErr != nil {
			err = errors.Join(err, fmt.Errorf("stop: %w", stopErr))
		}
	}()

	fmt.Println("smcp-go quickstart: an Agent browses documents through a Server and a Computer")
	docs, err := fs.Sub(shipped, "docs")
	if err != nil {
		return err
	}
	if err := d.copyDocuments(docs); err != nil {
		return err
	}
	if err := d.startServer(); err != nil {
		return fmt.Errorf("start the Server: %w", err)
	}
	if err := d.startComputer(ctx); err != nil {
		return fmt.Errorf("start the Computer: %w", err)
	}
	if err := d.startAgent(ctx); err != nil {
		return fmt.Errorf("start the Agent: %w", err)
	}
	showStarted(d)

	if err := browse(ctx, d); err != nil || !inspect {
		return err
	}
	return serveInspector(ctx, d)
}

// showStarted describes what runs now.
func showStarted(d *demo) {
	section(1, "Started")
	table(
		[]string{"Server", d.url + " (Socket.IO namespace /smcp, API key made for this run)"},
		[]string{"Computer", fmt.Sprintf("%s, in office %q", computerName, office)},
		[]string{"", fmt.Sprintf("MCP server %q: smcp-docserver over stdio, child process pid %d", mcpServerName, d.pid)},
		[]string{"", "documents: " + d.docs + " (a copy of examples/quickstart/docs)"},
		[]string{"Agent", fmt.Sprintf("%s, in office %q", agentName, office)},
	)
}

// Documents the demo reads, by their file in docs/.
const (
	reportFile = "quarterly-report.md" // opened, read, then edited
	budgetFile = "budget-2026.xlsx"    // one of its elements is read in full
	// tablePage is the report's page (a top-level section) with a table.
	tablePage = "Revenue by region"
)

// browse is the Agent's walk through the Finder.
func browse(ctx context.Context, d *demo) error {
	catalog, err := showCatalog(ctx, d)
	if err != nil {
		return err
	}
	report, err := findDocument(catalog, reportFile)
	if err != nil {
		return err
	}
	budget, err := findDocument(catalog, budgetFile)
	if err != nil {
		return err
	}
	doc, err := openDocument(ctx, d, report)
	if err != nil {
		return err
	}
	if err := readTables(ctx, d, doc); err != nil {
		return err
	}
	if err := readElement(ctx, d, budget); err != nil {
		return err
	}
	if err := readPastTheEnd(ctx, d, doc); err != nil {
		return err
	}
	return editAndWatch(ctx, d, report)
}

// showCatalog asks the Computer for its document catalog (client:get_finder):
// one entry per document, whichever of its MCP servers holds it.
func showCatalog(ctx context.Context, d *demo) (*protocol.GetFinderRet, error) {
	section(2, "The catalog: client:get_finder")
	catalog, err := d.agent.GetFinder(ctx, computerName, agent.FinderQuery{})
	if err != nil {
		return nil, fmt.Errorf("client:get_finder: %w", err)
	}
	rows := [][]string{{"URI", "TYPE", "PAGES", "TITLE"}}
	for _, doc := range catalog.Documents {
		rows = append(rows, []string{doc.URI, doc.FileType, strconv.Itoa(doc.PageCount), doc.Title})
	}
	table(rows...)
	say("%d documents", catalog.TotalCount)
	return catalog, nil
}

// findDocument picks a file's entry out of a catalog.
func findDocument(catalog *protocol.GetFinderRet, file string) (protocol.DPEDocumentSummary, error) {
	ref := docserver.DocRef(file)
	for _, doc := range catalog.Documents {
		if doc.DocRef == ref {
			return doc, nil
		}
	}
	return protocol.DPEDocumentSummary{}, fmt.Errorf("%s is not in the catalog", file)
}

// openDocument reads Level 1 of a document with its page index
// (depth=pages): its metadata and one line per page.
func openDocument(ctx context.Context, d *demo, entry protocol.DPEDocumentSummary) (*dpe.Document, error) {
	section(3, "A document and its page index: Level 1, depth=pages")
	say("read %s?depth=pages", entry.URI)
	doc, err := d.agent.ReadDocument(ctx, computerName, entry.URI, agent.DocumentQuery{Pages: true})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", entry.URI, err)
	}
	fmt.Println()
	say("%s (%s, %d pages)", doc.Title, doc.FileType, doc.PageCount)
	block(wrap(doc.Summary, 72))
	fmt.Println()
	rows := [][]string{{"PAGE", "ELEMENTS", "TITLE"}}
	for _, p := range doc.Pages {
		rows = append(rows, []string{strconv.Itoa(p.PageIndex), strconv.Itoa(p.ElementCount), p.Title})
	}
	table(rows...)
	return doc, nil
}

// readTables reads one page of the report (Level 2) keeping only its
// tables, rendered as Markdown by the document server
// (categories=table&format=markdown).
func readTables(ctx context.Context, d *demo, doc *dpe.Document) error {
	section(4, "One page, tables only, as Markdown: Level 2")
	index := slices.IndexFunc(doc.Pages, func(p protocol.DPEPageSummary) bool { return p.Title == tablePage })
	if index < 0 {
		return fmt.Errorf("%s has no page %q", doc.URI, tablePage)
	}
	page := doc.Pages[index]
	say("read %s?categories=table&format=markdown", page.URI)
	p, err := d.agent.ReadPage(ctx, computerName, doc.URI, page.PageIndex, agent.PageQuery{
		Categories: []protocol.DPEElementCategory{protocol.DPEElementCategoryTable},
		Format:     dpe.FormatMarkdown,
	})
	if err != nil {
		return fmt.Errorf("read %s: %w", page.URI, err)
	}
	fmt.Println()
	block(deref(p.ContentMarkdown))
	return nil
}

// readElement goes down to Level 3 in the workbook: the first sheet's page
// (Level 2, JSON) lists its elements, and its table is then read in full,
// with the metadata the document server attaches (the sheet's formulas),
// rendered as Markdown.
func readElement(ctx context.Context, d *demo, budget protocol.DPEDocumentSummary) error {
	section(5, "One element in full: Level 3")
	page, err := d.agent.ReadPage(ctx, computerName, budget.URI, 0, agent.PageQuery{
		Categories: []protocol.DPEElementCategory{protocol.DPEElementCategoryTable},
	})
	if err != nil {
		return fmt.Errorf("read page 0 of %s: %w", budget.URI, err)
	}
	if len(page.Elements) == 0 {
		return fmt.Errorf("page 0 of %s has no table", budget.URI)
	}
	id := page.Elements[0].ElementID
	say("read %s/pages/0?categories=table: element %s", budget.URI, id)
	say("read %s/elements/%s?format=markdown", budget.URI, id)
	el, err := d.agent.ReadElement(ctx, computerName, budget.URI, id, dpe.FormatMarkdown)
	if err != nil {
		return fmt.Errorf("read element %s of %s: %w", id, budget.URI, err)
	}
	fmt.Println()
	block(el.ContentMarkdown)
	return nil
}

// readPastTheEnd asks for a page the document does not have. The document
// server's error 4202 reaches the Agent through the Computer and the Server
// as a *protocol.Error with its code, message and details.
func readPastTheEnd(ctx context.Context, d *demo, doc *dpe.Document) error {
	section(6, "An error on purpose: a page past the end")
	past := doc.PageCount
	say("read %s/pages/%d (the document has pages 0 to %d)", doc.URI, past, doc.PageCount-1)
	_, err := d.agent.ReadPage(ctx, computerName, doc.URI, past, agent.PageQuery{})
	var perr *protocol.Error
	if !errors.As(err, &perr) || perr.Code != protocol.CodePageOutOfRange {
		return fmt.Errorf("page %d of %s: want error %d, got %v", past, doc.URI, protocol.CodePageOutOfRange, err)
	}
	fmt.Println()
	say("error %d (%s): %s", int(perr.Code), perr.Code, perr.Message)
	if len(perr.Details) > 0 {
		details, _ := json.Marshal(perr.Details)
		say("details: %s", details)
	}
	return nil
}

// updateTimeout bounds the wait for the change notification.
const updateTimeout = 15 * time.Second

// editAndWatch appends a section to the copied report. The document server
// sees the file change and tells the Computer (MCP resources/updated); the
// Computer re-reads the document and tells the office (server:update_finder,
// relayed as notify:update_finder); the Agent then fetches the refreshed
// catalog.
func editAndWatch(ctx context.Context, d *demo, before protocol.DPEDocumentSummary) error {
	section(7, "A document changes: notify:update_finder")
	path := filepath.Join(d.docs, reportFile)
	if err := appendSection(path); err != nil {
		return err
	}
	edited := time.Now()
	say("appended a section %q to %s", appendixTitle, path)
	after, err := waitForUpdate(ctx, d, before)
	if err != nil {
		return err
	}
	say("notify:update_finder arrived %.1f s later; the Agent re-fetched the catalog:", time.Since(edited).Seconds())
	say("%s  pages %d → %d, last modified %s", after.URI, before.PageCount, after.PageCount, after.LastModified)
	return nil
}

// appendixTitle is the heading of the section the demo appends: a new
// top-level section, so the report gains a page.
const appendixTitle = "## Appendix: incidents"

func appendSection(path string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "\n%s\n\nNo customer-facing incident was recorded in the quarter.\n", appendixTitle)
	return errors.Join(err, f.Close())
}

// waitForUpdate waits until a refreshed catalog shows the document changed.
func waitForUpdate(ctx context.Context, d *demo, before protocol.DPEDocumentSummary) (protocol.DPEDocumentSummary, error) {
	timeout := time.NewTimer(updateTimeout)
	defer timeout.Stop()
	for {
		select {
		case catalog := <-d.finderUpdates:
			doc, err := findDocument(catalog, reportFile)
			if err == nil && (doc.PageCount != before.PageCount || doc.LastModified != before.LastModified) {
				return doc, nil
			}
		case <-timeout.C:
			return protocol.DPEDocumentSummary{}, fmt.Errorf("no notify:update_finder showing the edit of %s within %s", reportFile, updateTimeout)
		case <-ctx.Done():
			return protocol.DPEDocumentSummary{}, ctx.Err()
		}
	}
}
