package inspector_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/examples/docserver"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// chromiumPath is the browser the tests drive: SMCP_INTEROP_CHROMIUM, else
// Debian's chromium. Under `go run mage.go test` (SMCP_INTEROP=1) a missing
// browser fails the test; a plain `go test` skips it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	path := os.Getenv("SMCP_INTEROP_CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("SMCP_INTEROP") == "1" || os.Getenv("SMCP_INTEROP_CHROMIUM") != "" {
			t.Fatalf("headless Chromium is required (SMCP_INTEROP_CHROMIUM=%q): %v — run `go run mage.go setup`", path, err)
		}
		t.Skipf("no Chromium at %s (set SMCP_INTEROP_CHROMIUM, or run `go run mage.go setup`)", path)
	}
	return path
}

// artifacts is where the screenshots go: $SMCP_ARTIFACTS/inspector, else a
// temporary folder kept for the test's duration.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if base := os.Getenv("SMCP_ARTIFACTS"); base != "" {
		dir = filepath.Join(base, "inspector")
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	return dir
}

// browser starts headless Chromium with a fresh profile and returns a tab.
// dialogs counts the JavaScript dialogs a page opened (alert, confirm…).
func browser(t *testing.T) (ctx context.Context, dialogs *atomic.Int32) {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	// Start the browser now, so its start-up is not counted in a step.
	require.NoError(t, chromedp.Do(ctx))
	dialogs = &atomic.Int32{}
	opened := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range opened {
			if err != nil {
				return
			}
			dialogs.Add(1)
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return ctx, dialogs
}

// stepTimeout bounds each step of a browser test.
const stepTimeout = 45 * time.Second

// step runs browser actions in order, bounded by stepTimeout.
func step(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	get(t, ctx, what, chromedp.Steps(actions...))
}

// get runs one browser action that returns a value, bounded by stepTimeout.
func get[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(sctx, a)
	if err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		if png, serr := chromedp.Run(ctx, chromedp.FullScreenshot(100)); serr == nil {
			path := filepath.Join(os.TempDir(), fmt.Sprintf("smcp-inspector-failure-%d.png", time.Now().UnixNano()))
			if os.WriteFile(path, png, 0o644) == nil {
				t.Logf("screenshot of the failure: %s", path)
			}
		}
		t.Fatalf("%s: %v (page %s)", what, err, loc)
	}
	return v
}

// eval evaluates a JavaScript expression and returns its value.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	return get(t, ctx, "evaluate "+expr, chromedp.Evaluate[T](expr))
}

// run evaluates a JavaScript expression for its effect.
func run(expr string) chromedp.Action[chromedp.Void] { return chromedp.Evaluate[chromedp.Void](expr) }

// text returns the visible text of the first element matching a CSS selector.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return get(t, ctx, "text of "+sel, chromedp.Text(chromedp.CSS(sel)))
}

// until waits for a JavaScript expression to become true.
func until(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(40*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))
}

func click(sel string) chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(sel)) }

func keys(sel, v string) chromedp.Action[chromedp.Void] {
	return chromedp.SendKeys(chromedp.CSS(sel), v)
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// shot saves a screenshot of the whole page under dir.
func shot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png := get(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
	path := filepath.Join(dir, name+".png")
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot: %s", path)
}

func finderURL(base, computer, uri string) string {
	q := url.Values{"computer": {computer}}
	if uri != "" {
		q.Set("uri", uri)
	}
	return base + "/finder?" + q.Encode()
}

// TestOffice inspects a real Server with two real Computers (startOffice),
// through the API, then in headless Chromium (one office for both: it is
// the costly part).
func TestOffice(t *testing.T) {
	d := startOffice(t)
	_, base := dialInspector(t, d)
	t.Run("api", func(t *testing.T) { testAPI(t, base) })
	t.Run("browser", func(t *testing.T) { testBrowser(t, d, base) })
}

// testBrowser drives the page in headless Chromium: the office (live), the
// Finder down to an element, the category filter, error codes, an XSS
// attempt, the tools (generated form, call, cancel, an error result), the
// desktop and a live catalog update. It reports the first paint of a
// catalog of 10,000 documents.
func testBrowser(t *testing.T, d *deployment, base string) {
	ctx, dialogs := browser(t)
	dir := artifacts(t)

	report := dpe.DocumentURI(deskHost, docserver.DocRef("quarterly-report.md")).String()
	xss := dpe.DocumentURI(deskHost, docserver.DocRef("xss.md")).String()

	t.Run("office", func(t *testing.T) {
		step(t, ctx, "open the office",
			chromedp.Navigate(base+"/office"),
			until(`document.querySelector('tr[data-computer="desk"]') && document.querySelector('tr[data-computer="lab"]')`))
		assert.Equal(t, 2, eval[int](t, ctx, `document.querySelectorAll('table.computers tbody tr').length`), "two Computers in the office")
		shot(t, ctx, dir, "office")

		// Live: a third Computer enters, then leaves (notify:enter_office,
		// notify:leave_office reach the page over its event stream).
		visitor := startComputer(t, d, "visitor", []mcpServer{})
		step(t, ctx, "a Computer enters", until(`document.querySelector('tr[data-computer="visitor"]')`))
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		require.NoError(t, visitor.Close(cctx))
		step(t, ctx, "a Computer leaves", until(`!document.querySelector('tr[data-computer="visitor"]') && document.querySelector('tr[data-computer="desk"]')`))
	})

	t.Run("finder", func(t *testing.T) {
		row := `tr[data-uri=` + jsString(report) + `]`
		step(t, ctx, "open the catalog",
			chromedp.Navigate(finderURL(base, "desk", "")),
			until(`document.querySelector('`+row+`')`))
		shot(t, ctx, dir, "finder-catalog")

		// Search with the keyboard only: keywords, Enter.
		step(t, ctx, "search the catalog",
			chromedp.Focus(chromedp.CSS(`#finder-q`)),
			chromedp.KeyEvent("budget"),
			chromedp.KeyEvent(kb.Enter),
			until(`location.search.includes("q=budget") && document.querySelector('.pager span') && document.querySelector('.pager span').textContent.includes("of 1 ")`))
		assert.Equal(t, []string{"Budget 2026"}, eval[[]string](t, ctx, `[...document.querySelectorAll('table.catalog tbody th')].map(th => th.textContent)`))
		// The MCP-server filter (its names come from the Computer's config).
		step(t, ctx, "filter by MCP server",
			chromedp.Navigate(finderURL(base, "desk", "")),
			until(`document.querySelector('#finder-server option[value="tools"]')`),
			chromedp.SetValue(chromedp.CSS(`#finder-server`), "tools"),
			click(`.finder-search button[type=submit]`),
			until(`location.search.includes("server=tools") && document.querySelector('.pager span') && document.querySelector('.pager span').textContent.includes("of 0 ")`),
			chromedp.SetValue(chromedp.CSS(`#finder-server`), ""),
			until(`document.querySelector('#finder-server option[value="docs"]')`),
			chromedp.SetValue(chromedp.CSS(`#finder-server`), "docs"),
			click(`.finder-search button[type=submit]`),
			until(`location.search.includes("server=docs") && document.querySelector('`+row+`')`))

		step(t, ctx, "open the report through its link",
			click(row+` th a`),
			until(`[...document.querySelectorAll('table.pages a')].some(a => a.textContent === "Revenue by region")`))
		loc := get(t, ctx, "location", chromedp.Location())
		assert.Contains(t, loc, "uri="+url.QueryEscape(report), "the document view is bookmarkable")

		step(t, ctx, "open the page with the table",
			run(`[...document.querySelectorAll('table.pages a')].find(a => a.textContent === "Revenue by region").click()`),
			until(`document.querySelector('.rendered.page table')`))
		headers := eval[[]string](t, ctx, `[...document.querySelectorAll('.rendered.page table th')].map(th => th.textContent.trim())`)
		cells := eval[[]string](t, ctx, `[...document.querySelectorAll('.rendered.page table tbody tr:first-child td')].map(td => td.textContent.trim())`)
		assert.Equal(t, []string{"Region", "Q2 revenue", "Q3 revenue", "Change"}, headers)
		assert.Equal(t, []string{"North", "412", "455", "+10.4 %"}, cells)
		shot(t, ctx, dir, "finder-page")

		step(t, ctx, "keep tables only",
			click(`#cat-table`),
			click(`form.categories button[type=submit]`),
			until(`location.search.includes("categories%3Dtable") && document.querySelector('#cat-table') && document.querySelector('#cat-table').checked`))
		cats := eval[[]string](t, ctx, `[...document.querySelectorAll('ul.elements a')].map(a => a.textContent.split(" ")[0])`)
		require.NotEmpty(t, cats)
		for _, c := range cats {
			assert.Equal(t, "table", c)
		}

		step(t, ctx, "open the table element",
			click(`ul.elements a`),
			until(`document.querySelector('.rendered.element table') && document.querySelector('pre.metadata')`))
		assert.Contains(t, text(t, ctx, `main dl`), "table")
		shot(t, ctx, dir, "finder-element")
	})

	t.Run("capabilities", func(t *testing.T) {
		step(t, ctx, "the office says which Computers offer the Finder",
			chromedp.Navigate(base+"/office"),
			until(`document.querySelector('tr[data-computer="desk"] td.finder-offered')`))
		assert.Equal(t, "offered", text(t, ctx, `tr[data-computer="desk"] td.finder-offered`))
		assert.Equal(t, "offered", text(t, ctx, `tr[data-computer="lab"] td.finder-offered`))
	})

	t.Run("skills, resources and blobs", func(t *testing.T) {
		// download fetches the link a into window[key] as {status, type,
		// size, sha256} (the inspector's /api/blob streaming
		// client:get_blob).
		download := func(sel, key string) chromedp.Action[chromedp.Void] {
			return run(`(async () => { const r = await fetch(document.querySelector(` + jsString(sel) + `).href);
				const b = await r.arrayBuffer(); const d = new Uint8Array(await crypto.subtle.digest("SHA-256", b));
				window[` + jsString(key) + `] = { status: r.status, type: r.headers.get("content-type"), size: b.byteLength,
					sha256: [...d].map(x => x.toString(16).padStart(2, "0")).join("") }; })()`)
		}
		type got struct {
			Status int    `json:"status"`
			Type   string `json:"type"`
			Size   int    `json:"size"`
			SHA256 string `json:"sha256"`
		}
		sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

		// A tool's image above the Computer's inline budget: spooled, drained
		// by the inspector's Agent, shown; its handle offers a download.
		const img = `section[data-tool="tools__image"] .outcome figure.image img`
		step(t, ctx, "call the image tool",
			chromedp.Navigate(base+"/tools?computer=desk&tool=tools__image"),
			until(`document.querySelector('section[data-tool="tools__image"] button[type=submit]')`),
			click(`section[data-tool="tools__image"] button[type=submit]`),
			until(`document.querySelector('`+img+`') && document.querySelector('`+img+`').complete`))
		assert.Equal(t, 160, eval[int](t, ctx, `document.querySelector('`+img+`').naturalWidth`), "the PNG decoded")
		step(t, ctx, "download the image", download(`section[data-tool="tools__image"] figcaption a.blob-download`, "__img"), until(`window.__img`))
		want := noisePNG(160)
		assert.Equal(t, got{200, "image/png", len(want), sum(want)}, eval[got](t, ctx, `window.__img`))
		shot(t, ctx, dir, "tools-image")

		step(t, ctx, "open the skills",
			chromedp.Navigate(base+"/skills?computer=desk"),
			until(`document.querySelector('tr[data-skill="review"] a')`))
		assert.Contains(t, text(t, ctx, `tr[data-skill="review"]`), "Reviews code")
		step(t, ctx, "open SKILL.md", click(`tr[data-skill="review"] a`), until(`document.querySelector('pre.skill-body')`))
		assert.Equal(t, "# Review\nRead the diff.\n", text(t, ctx, `pre.skill-body`))
		step(t, ctx, "open the skill's binary file",
			keys(`#skill-path`, "assets/logo.png"),
			click(`form.skill-path button[type=submit]`),
			until(`document.querySelector('.skill-file a.blob-download')`),
			download(`.skill-file a.blob-download`, "__logo"), until(`window.__logo`))
		assert.Equal(t, got{200, "image/png", len(skillLogo), sum(skillLogo)}, eval[got](t, ctx, `window.__logo`))
		shot(t, ctx, dir, "skills")

		step(t, ctx, "list a server's resources",
			chromedp.Navigate(base+"/resources?computer=desk"),
			until(`[...document.querySelectorAll('nav.servers a')].some(a => a.textContent === "tools")`),
			run(`[...document.querySelectorAll('nav.servers a')].find(a => a.textContent === "tools").click()`),
			until(`document.querySelector('tr[data-uri=`+jsString(statusWindow)+`]')`))
		assert.Contains(t, text(t, ctx, `tr[data-uri=`+jsString(statusWindow)+`]`), "text/markdown")
		// Paging, a resource a page, over the documents' server.
		step(t, ctx, "page the resources",
			chromedp.Navigate(base+"/resources?computer=desk&server=docs&limit=1"),
			until(`document.querySelector('table.resources tbody tr') && document.querySelector('nav.pager a')`))
		first := eval[string](t, ctx, `document.querySelector('table.resources tbody tr').dataset.uri`)
		step(t, ctx, "the next page",
			run(`[...document.querySelectorAll('nav.pager a')].find(a => a.textContent === "Next page").click()`),
			until(`location.search.includes("offset=1") && document.querySelector('table.resources tbody tr')`))
		assert.Equal(t, 1, eval[int](t, ctx, `document.querySelectorAll('table.resources tbody tr').length`))
		assert.NotEqual(t, first, eval[string](t, ctx, `document.querySelector('table.resources tbody tr').dataset.uri`))
		shot(t, ctx, dir, "resources")
	})

	t.Run("uri box", func(t *testing.T) {
		// Typing a dpe:// URI offers what the Computer completes
		// (client:complete through dpekit's completion/complete).
		prefix := "dpe://" + deskHost + "/quar"
		step(t, ctx, "type part of a URI",
			chromedp.Navigate(finderURL(base, "desk", "")),
			until(`document.querySelector('#finder-uri')`),
			chromedp.Focus(chromedp.CSS(`#finder-uri`)),
			chromedp.KeyEvent(prefix),
			until(`document.querySelector('#finder-uri-options').dataset.for === `+jsString(prefix)))
		options := eval[[]string](t, ctx, `[...document.querySelectorAll('#finder-uri-options option')].map(o => o.value)`)
		assert.Equal(t, []string{report}, options)

		page := report + "/pages/"
		step(t, ctx, "complete the page index",
			run(`document.querySelector('#finder-uri').value = `+jsString(page)+`; document.querySelector('#finder-uri').dispatchEvent(new Event('input'))`),
			until(`document.querySelector('#finder-uri-options').dataset.for === `+jsString(page)))
		pages := eval[[]string](t, ctx, `[...document.querySelectorAll('#finder-uri-options option')].map(o => o.value)`)
		require.NotEmpty(t, pages)
		for i, p := range pages {
			assert.Equal(t, dpe.PageURI(deskHost, docserver.DocRef("quarterly-report.md"), i).String(), p)
		}
		shot(t, ctx, dir, "finder-uri-box")

		step(t, ctx, "open the suggestion",
			run(`document.querySelector('#finder-uri').value = `+jsString(report)),
			click(`form.finder-uri button[type=submit]`),
			until(`[...document.querySelectorAll('table.pages a')].some(a => a.textContent === "Revenue by region")`))
	})

	t.Run("errors", func(t *testing.T) {
		past := dpe.PageURI(deskHost, docserver.DocRef("quarterly-report.md"), 999).String()
		step(t, ctx, "a page past the end",
			chromedp.Navigate(finderURL(base, "desk", past)),
			until(`document.querySelector('.error')`))
		assert.Contains(t, text(t, ctx, `.error`), "Error 4202 PageOutOfRange")
		shot(t, ctx, dir, "finder-error")

		step(t, ctx, "a document that does not exist",
			chromedp.Navigate(finderURL(base, "desk", "dpe://"+deskHost+"/no-such-doc")),
			until(`document.querySelector('.error')`))
		assert.Contains(t, text(t, ctx, `.error`), "Error 4201 DocumentNotFound")
		step(t, ctx, "an invalid URI",
			chromedp.Navigate(finderURL(base, "desk", "dpe://"+deskHost+"/x/pages/1?limit=999")),
			until(`document.querySelector('.error')`))
		assert.Contains(t, text(t, ctx, `.error`), "Error 4204 InvalidDPEURI")
	})

	t.Run("xss", func(t *testing.T) {
		page0 := dpe.PageURI(deskHost, docserver.DocRef("xss.md"), 0).String()
		step(t, ctx, "open the hostile document and its page",
			chromedp.Navigate(finderURL(base, "desk", xss)),
			until(`document.querySelector('table.pages a')`),
			chromedp.Navigate(finderURL(base, "desk", page0)),
			until(`document.querySelector('.rendered.page')`),
			// Hover and click everything the document rendered.
			run(`for (const el of document.querySelectorAll('.rendered *')) {
				el.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
				if (el.tagName !== 'A') el.click();
			}`),
			chromedp.Sleep(300*time.Millisecond))
		html := get(t, ctx, "rendered HTML", chromedp.InnerHTML(chromedp.CSS(`.rendered.page`)))
		ran := eval[any](t, ctx, `window.__xss === undefined ? null : window.__xss`)
		assert.Nil(t, ran, "a script of the document ran")
		assert.Zero(t, dialogs.Load(), "a dialog was opened")
		lower := strings.ToLower(html)
		for _, bad := range []string{"<script", "onerror", "onload", "onmouseover", "javascript:", "<iframe", "<svg", "<img"} {
			assert.NotContains(t, lower, bad)
		}
		assert.Contains(t, html, "Notes", "the text of the document is shown")
		shot(t, ctx, dir, "finder-xss")
	})

	t.Run("tools", func(t *testing.T) {
		// The Computer and the inspector's Agent speak 0.4 by default: the
		// tools are named {bundle_id}__{name}.
		step(t, ctx, "open the tools",
			chromedp.Navigate(base+"/tools?computer=desk"),
			until(`document.querySelector('section[data-tool="tools__form"]') && document.querySelector('section[data-tool="tools__echo"]')`))
		assert.Equal(t, []string{"auto-apply", "tag: demo", "tag: safe"},
			eval[[]string](t, ctx, `[...document.querySelectorAll('section[data-tool="tools__echo"] .badges li')].map(li => li.textContent)`))
		assert.Equal(t, []string{"needs confirmation", "tag: dangerous"},
			eval[[]string](t, ctx, `[...document.querySelectorAll('section[data-tool="tools__guard"] .badges li')].map(li => li.textContent)`))

		// echo with the keyboard only: type, then Enter submits.
		step(t, ctx, "call echo",
			chromedp.Focus(chromedp.CSS(`section[data-tool="tools__echo"] input[name="text"]`)),
			chromedp.KeyEvent("hello inspector"),
			chromedp.KeyEvent(kb.Enter),
			until(`document.querySelector('section[data-tool="tools__echo"] .outcome')`))
		assert.Equal(t, "echo: hello inspector", text(t, ctx, `section[data-tool="tools__echo"] .outcome pre.text`))

		const form = `section[data-tool="tools__form"] `
		addLabel := run(`[...document.querySelectorAll('section[data-tool="tools__form"] button')].find(b => b.textContent === "Add an item to labels").click()`)
		step(t, ctx, "fill the generated form and call",
			keys(form+`input[name="title"]`, "Quarter"),
			keys(form+`input[name="count"]`, "3"),
			click(form+`input[name="loud"]`),
			chromedp.SetValue(chromedp.CSS(form+`select[name="mood"]`), "2"),
			addLabel,
			keys(form+`input[name="labels[0]"]`, "north"),
			addLabel,
			keys(form+`input[name="labels[1]"]`, "south"),
			keys(form+`input[name="x"]`, "4"),
			keys(form+`textarea[name="extra"]`, `{"deep": [1, true]}`),
			click(form+`button[type=submit]`),
			until(`document.querySelector('section[data-tool="tools__form"] .outcome pre.structured')`))
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(text(t, ctx, form+`.outcome pre.structured`)), &got))
		assert.Equal(t, map[string]any{
			"title": "Quarter", "count": 3.0, "loud": true, "mood": "grim",
			"labels": []any{"north", "south"}, "point": map[string]any{"x": 4.0},
			"extra": map[string]any{"deep": []any{1.0, true}},
		}, got)
		shot(t, ctx, dir, "tools")

		step(t, ctx, "call guard",
			click(`section[data-tool="tools__guard"] button[type=submit]`),
			until(`document.querySelector('section[data-tool="tools__guard"] .result .error, section[data-tool="tools__guard"] .outcome')`))
		assert.Contains(t, text(t, ctx, `section[data-tool="tools__guard"] .result`), "4005 ToolRequiresConfirmation")

		step(t, ctx, "call slow, then cancel it",
			keys(`section[data-tool="tools__slow"] input[name="seconds"]`, "60"),
			click(`section[data-tool="tools__slow"] button[type=submit]`),
			until(`document.querySelector('section[data-tool="tools__slow"] .running')`),
			chromedp.Sleep(300*time.Millisecond),
			click(`section[data-tool="tools__slow"] .buttons button[type=button]`),
			until(`document.querySelector('section[data-tool="tools__slow"] .result .error')`))
		assert.Contains(t, text(t, ctx, `section[data-tool="tools__slow"] .result .error`), "Error 408 Timeout", "a cancelled call ends as a 408 error")
		assert.Contains(t, text(t, ctx, `section[data-tool="tools__slow"] .result .error`), "canceled by the caller")
		shot(t, ctx, dir, "tools-cancelled")
	})

	t.Run("progress", func(t *testing.T) {
		// The page draws a call's progress (notify:tool_progress over its
		// event stream); the tool answers once the test saw the last step.
		hold := filepath.Join(t.TempDir(), "hold")
		const card = `section[data-tool$="steps"] ` // "steps", or "tools__steps" in a 0.4 session
		step(t, ctx, "call steps",
			chromedp.Navigate(base+"/tools?computer=desk"),
			until(`document.querySelector('`+card+`input[name="steps"]')`),
			chromedp.SetValue(chromedp.CSS(card+`input[name="steps"]`), "4"),
			chromedp.SetValue(chromedp.CSS(card+`input[name="hold"]`), hold),
			click(card+`button[type=submit]`),
			until(`(() => { const p = document.querySelector('`+card+`progress'); return p && p.max === 4 && p.value === 4; })()`))
		assert.Equal(t, "4 / 4 step 4 of 4", text(t, ctx, card+`.progress-note`))
		shot(t, ctx, dir, "tool-progress")
		require.NoError(t, os.WriteFile(hold, nil, 0o644))
		step(t, ctx, "the call ends", until(`document.querySelector('`+card+`.outcome')`))
		assert.Equal(t, "done", text(t, ctx, card+`.outcome pre.text`))
	})

	t.Run("desktop", func(t *testing.T) {
		step(t, ctx, "open the desktop",
			chromedp.Navigate(base+"/desktop?computer=desk"),
			until(`document.querySelector('.window')`))
		assert.Equal(t, statusWindow, text(t, ctx, `.window h2`))
		assert.Equal(t, "All systems nominal", text(t, ctx, `.window .rendered strong`))
		shot(t, ctx, dir, "desktop")
	})

	t.Run("update", func(t *testing.T) {
		cell := `document.querySelector('tr[data-uri=` + jsString(report) + `] td.num')`
		step(t, ctx, "open the catalog",
			chromedp.Navigate(finderURL(base, "desk", "")),
			until(cell),
			until(`[...document.querySelectorAll('#log li')].some(li => li.textContent.includes("event stream open"))`))
		before := eval[string](t, ctx, cell+`.textContent`)
		f, err := os.OpenFile(filepath.Join(d.docs, "quarterly-report.md"), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = fmt.Fprint(f, "\n## Appendix: incidents\n\nNone.\n")
		require.NoError(t, err)
		require.NoError(t, f.Close())
		step(t, ctx, "the catalog follows notify:update_finder",
			until(cell+` && `+cell+`.textContent !== `+jsString(before)),
			until(`[...document.querySelectorAll('#log li')].some(li => li.textContent.includes("notify:update_finder computer=desk"))`))
		t.Logf("report pages %s → %s after notify:update_finder", before, eval[string](t, ctx, cell+`.textContent`))
		shot(t, ctx, dir, "finder-updated")
	})

	t.Run("catalog-10000", func(t *testing.T) {
		step(t, ctx, "open the big catalog",
			chromedp.Navigate(finderURL(base, "lab", "")),
			until(`performance.getEntriesByName("catalog-rendered").length > 0`))
		fcp := eval[float64](t, ctx, `(performance.getEntriesByName("first-contentful-paint")[0] || {startTime: -1}).startTime`)
		rendered := eval[float64](t, ctx, `performance.getEntriesByName("catalog-rendered")[0].startTime`)
		assert.Contains(t, text(t, ctx, `.pager span`), fmt.Sprintf("Documents 1–20 of %d", labDocs))
		// Reported, not asserted (timings belong to benchmarks): the page's
		// first contentful paint and the frame in which the first page of
		// the catalog was in the document, from the start of the navigation.
		t.Logf("catalog of %d documents: first contentful paint %.0f ms, first catalog page rendered %.0f ms after navigation start (target ≤ 300 ms)", labDocs, fcp, rendered)

		first := text(t, ctx, `table.catalog tbody tr th`)
		step(t, ctx, "next page",
			run(`[...document.querySelectorAll('.pager a')].find(a => a.textContent.startsWith("Next")).click()`),
			until(`location.search.includes("offset=20") && document.querySelector('.pager span') && document.querySelector('.pager span').textContent.includes("21–40")`))
		assert.NotEqual(t, first, text(t, ctx, `table.catalog tbody tr th`))
		shot(t, ctx, dir, "finder-10000")
	})
}
