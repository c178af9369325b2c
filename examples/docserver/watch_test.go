package docserver_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol"
)

// inbox records the notifications a client receives.
type inbox struct {
	mu    sync.Mutex
	notes []mcp.JSONRPCNotification
}

func listen(c *client.Client) *inbox {
	in := &inbox{}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		in.mu.Lock()
		in.notes = append(in.notes, n)
		in.mu.Unlock()
	})
	return in
}

func (in *inbox) count(method, uri string) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	n := 0
	for _, note := range in.notes {
		if note.Method == method && (uri == "" || fmt.Sprint(note.Params.AdditionalFields["uri"]) == uri) {
			n++
		}
	}
	return n
}

func (in *inbox) updated(uri string) int {
	return in.count(mcp.MethodNotificationResourceUpdated, uri)
}

func (in *inbox) listChanged() int { return in.count(mcp.MethodNotificationResourcesListChanged, "") }

func eventually(t testing.TB, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 30*time.Second, 10*time.Millisecond, msg)
}

func subscribe(t testing.TB, c *client.Client, uri string) {
	t.Helper()
	req := mcp.SubscribeRequest{}
	req.Params.URI = uri
	require.NoError(t, c.Subscribe(testCtx(t), req))
}

func listURIs(t testing.TB, c *client.Client) []string {
	t.Helper()
	res, err := c.ListResources(testCtx(t), mcp.ListResourcesRequest{})
	require.NoError(t, err)
	var out []string
	for _, r := range res.Resources {
		out = append(out, r.URI)
	}
	return out
}

// TestWatch edits, adds, renames and removes files in a copy of the shipped
// documents while a client is connected, over stdio and streamable HTTP.
func TestWatch(t *testing.T) {
	for _, kind := range []string{overStdio, overHTTP} {
		t.Run(kind, func(t *testing.T) {
			root := copyDocs(t)
			c := serve(t, kind, root)
			in := listen(c)
			salesPage := sales + "/pages/0?format=markdown"
			subscribe(t, c, report)
			subscribe(t, c, salesPage)

			// Edit: resources/updated for the subscribed URI, new content.
			f, err := os.OpenFile(filepath.Join(root, "quarterly-report.md"), os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteString("\n## Risks\n\nSupply delays for Gateway Pro components.\n")
			require.NoError(t, err)
			require.NoError(t, f.Close())
			eventually(t, func() bool { return in.updated(report) >= 1 }, "resources/updated after an edit")
			doc := read(t, c, report+"?depth=pages")
			assert.EqualValues(t, 6, doc["page_count"])
			assert.Equal(t, "Risks", getObj(doc, "pages", 5, "title"))
			assert.Zero(t, in.updated(salesPage), "the CSV did not change")

			// An editor's burst of writes: the last content is served.
			before := in.updated(salesPage)
			for i := range 5 {
				writeFile(t, filepath.Join(root, "sales-2026-q3.csv"), fmt.Sprintf("id,value\nrow,%d\n", i))
			}
			eventually(t, func() bool { return in.updated(salesPage) > before }, "resources/updated after a burst of writes")
			eventually(t, func() bool {
				p := read(t, c, salesPage)
				return strings.Contains(p["content_markdown"].(string), "| row | 4 |")
			}, "the last write is served")

			// Add a file, then one in a new nested folder.
			lists := in.listChanged()
			writeFile(t, filepath.Join(root, "new-note.md"), "# New note\n\nHello.\n")
			eventually(t, func() bool {
				return in.listChanged() > lists && slices.Contains(listURIs(t, c), catalog+"/new-note.md")
			},
				"list_changed and the new document listed")
			lists = in.listChanged()
			writeFile(t, filepath.Join(root, "notes", "2026", "plan.md"), "# Plan\n\n## Goals\n\nShip it.\n")
			nested := catalog + "/notes~2026~plan.md"
			eventually(t, func() bool { return in.listChanged() > lists && slices.Contains(listURIs(t, c), nested) },
				"a document in a new folder is listed")
			assert.Equal(t, "Plan", read(t, c, nested)["title"])

			// Rename: the old document goes, the new one comes.
			lists = in.listChanged()
			require.NoError(t, os.Rename(filepath.Join(root, "new-note.md"), filepath.Join(root, "renamed-note.md")))
			eventually(t, func() bool {
				uris := listURIs(t, c)
				return in.listChanged() > lists && slices.Contains(uris, catalog+"/renamed-note.md") && !slices.Contains(uris, catalog+"/new-note.md")
			}, "rename seen")

			// Remove: list_changed, subscribers of the document are told, reads answer 4201.
			lists = in.listChanged()
			before = in.updated(salesPage)
			require.NoError(t, os.Remove(filepath.Join(root, "sales-2026-q3.csv")))
			eventually(t, func() bool { return in.listChanged() > lists && !slices.Contains(listURIs(t, c), sales) }, "removal seen")
			eventually(t, func() bool { return in.updated(salesPage) > before }, "subscribers of a removed document are told")
			assert.Equal(t, protocol.CodeDocumentNotFound, readErr(t, c, sales).Code)

			// A whole folder removed.
			lists = in.listChanged()
			require.NoError(t, os.RemoveAll(filepath.Join(root, "notes")))
			eventually(t, func() bool { return in.listChanged() > lists && !slices.Contains(listURIs(t, c), nested) }, "folder removal seen")
		})
	}
}

// TestBrokenFiles: files that fail to parse are skipped, never fatal, and
// served once they are repaired.
func TestBrokenFiles(t *testing.T) {
	root := copyDocs(t)
	writeFile(t, filepath.Join(root, "broken.pdf"), "%PDF-1.4\nthis is not a PDF body\n")
	writeFile(t, filepath.Join(root, "broken.xlsx"), "PK\x03\x04 not a zip archive")
	writeFile(t, filepath.Join(root, "bad.csv"), "a,b\n\"unterminated,1\n")
	writeFile(t, filepath.Join(root, "latin1.txt"), "caf\xe9\n")
	writeFile(t, filepath.Join(root, "notes.txt"), "Plain text notes.\n\nSecond paragraph.\n")
	writeFile(t, filepath.Join(root, ".hidden.md"), "# hidden\n")
	writeFile(t, filepath.Join(root, "draft.md~"), "# backup\n")
	for _, kind := range []string{overStdio, overHTTP} {
		t.Run(kind, func(t *testing.T) {
			c := serve(t, kind, root)
			in := listen(c)
			v := read(t, c, catalog)
			var refs []string
			for _, d := range v["documents"].([]any) {
				refs = append(refs, getObj(d, "doc_ref").(string))
			}
			assert.Equal(t, []string{"bad.csv", "budget-2026.xlsx", "notes.txt", "quarterly-report.md", "sales-2026-q3.csv", "service-agreement.pdf"}, refs,
				"broken PDF/XLSX, non-UTF-8 text, hidden and backup files are skipped; a lenient CSV parses")
			txt := read(t, c, catalog+"/notes.txt/pages/0")
			assert.Equal(t, "notes.txt", txt["title"])
			assert.Equal(t, "Plain text notes.\n\nSecond paragraph.", getObj(txt, "elements", 0, "content", "text"))
			assert.Equal(t, protocol.CodeDocumentNotFound, readErr(t, c, catalog+"/broken.pdf").Code)
			if kind == overHTTP {
				return // one repair is enough; the folder is shared by both runs
			}
			// Repair the PDF: it appears.
			lists := in.listChanged()
			data, err := os.ReadFile(filepath.Join(shippedDocs, "service-agreement.pdf"))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(root, "broken.pdf"), data, 0o644))
			eventually(t, func() bool {
				return in.listChanged() > lists && slices.Contains(listURIs(t, c), catalog+"/broken.pdf")
			}, "a repaired file is served")
			assert.EqualValues(t, 3, read(t, c, catalog+"/broken.pdf")["page_count"])
			require.NoError(t, os.WriteFile(filepath.Join(root, "broken.pdf"), []byte("%PDF-1.4 broken again"), 0o644))
		})
	}
}
