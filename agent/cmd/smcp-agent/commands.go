package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

func (e *env) table(header ...string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(e.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	return tw
}

// cell makes s fit one table cell: first line only, tabs as spaces, at most
// max runes.
func cell(s string, max int) string {
	s, _, _ = strings.Cut(s, "\n")
	s = strings.ReplaceAll(strings.TrimSpace(s), "\t", " ")
	if r := []rune(s); max > 0 && len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	if s == "" {
		return "-"
	}
	return s
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func cmdRoom(ctx context.Context, e *env, _ []string) error {
	sessions, err := e.client.ListRoom(ctx)
	if err != nil {
		return err
	}
	if e.g.json {
		return e.printJSON(sessions)
	}
	// VERSION is the protocol version the member named (SessionInfo's
	// a2c_version: 0.3/0.4 Servers and smcp-go's record it), "-" when the
	// Server shows none; FINDER whether a Computer offers the Finder.
	tw := e.table("NAME", "ROLE", "VERSION", "FINDER", "SID")
	for _, s := range sessions {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.Role, cell(s.A2CVersion, 0), finderCell(s), s.Sid)
	}
	return tw.Flush()
}

func cmdTools(ctx context.Context, e *env, args []string) error {
	var computers []string
	if len(args) == 1 {
		computers = args
	} else {
		sessions, err := e.client.ListRoom(ctx)
		if err != nil {
			return err
		}
		computers = agent.ComputerNames(sessions)
	}
	all := map[string][]protocol.SMCPTool{}
	for _, name := range computers {
		tools, err := e.client.GetTools(ctx, name)
		if err != nil {
			return err
		}
		all[name] = tools
	}
	if e.g.json {
		if len(args) == 1 {
			return e.printJSON(all[args[0]])
		}
		return e.printJSON(all)
	}
	// TOOL is the name to call the tool by, as the Computer exposes it
	// (from 0.3 on {bundle_id}__{name}); BUNDLE is the MCP server it comes
	// from, "-" for a 0.2 Computer, which names none.
	tw := e.table("COMPUTER", "TOOL", "BUNDLE", "CONFIRM", "TAGS", "DESCRIPTION")
	for _, name := range computers {
		for _, t := range all[name] {
			confirm, tags := toolMetaCells(t)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, t.Name, cell(t.BundleID, 0), confirm, tags, cell(t.Description, 60))
		}
	}
	return tw.Flush()
}

// toolMetaCells says whether the tool's Computer runs it at once ("auto",
// auto_apply: true) or asks its user first ("ask"), and lists its tags.
func toolMetaCells(t protocol.SMCPTool) (confirm, tags string) {
	m, err := t.ToolMeta()
	if err != nil {
		return "?", "?"
	}
	confirm, tags = "ask", "-"
	if m != nil && m.AutoApply != nil && *m.AutoApply {
		confirm = "auto"
	}
	if m != nil && len(m.Tags) > 0 {
		tags = strings.Join(m.Tags, ",")
	}
	return confirm, tags
}

func cmdCall(ctx context.Context, e *env, args []string) error {
	var params map[string]any
	dec := json.NewDecoder(strings.NewReader(e.o.params))
	dec.UseNumber()
	if err := dec.Decode(&params); err != nil || params == nil {
		return usagef("--params must be a JSON object: %s", e.o.params)
	}
	if err := callArgs(params, args[2:]); err != nil {
		return err
	}
	pctx, done := withProgressBar(ctx, e.errOut)
	res, err := e.client.CallTool(pctx, args[0], args[1], params, e.o.toolTimeout)
	done()
	if err != nil {
		return err
	}
	if e.g.json {
		if err := e.printJSON(res); err != nil {
			return err
		}
	} else if agent.ToolError(res) == nil {
		printContent(e, res)
	}
	if terr := agent.ToolError(res); terr != nil {
		return terr
	}
	return nil
}

// callArgs adds the NAME=TEXT and NAME:=JSON arguments of call to params
// (as HTTPie writes them): NAME=TEXT is the string TEXT, whatever it looks
// like; NAME:=JSON is a JSON value (a number, true, null, an array, an
// object, a quoted string). A later argument replaces an earlier one and
// --params.
func callArgs(params map[string]any, args []string) error {
	for _, a := range args {
		eq := strings.IndexByte(a, '=')
		if eq <= 0 {
			return usagef("tool argument %q: want NAME=TEXT or NAME:=JSON", a)
		}
		name, value := a[:eq], a[eq+1:]
		if raw, ok := strings.CutSuffix(name, ":"); ok {
			if raw == "" {
				return usagef("tool argument %q: want NAME=TEXT or NAME:=JSON", a)
			}
			dec := json.NewDecoder(strings.NewReader(value))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil || dec.More() {
				return usagef("tool argument %s: not one JSON value: %s", raw, value)
			}
			params[raw] = v
			continue
		}
		params[name] = value
	}
	return nil
}

// printContent prints a tool result readably: text blocks as they are,
// other blocks as one descriptive line, structured content as JSON when
// there is no text.
func printContent(e *env, res *protocol.CallToolResult) {
	texts := 0
	for _, b := range res.Content {
		switch b.Type {
		case protocol.ContentBlockTypeText:
			fmt.Fprintln(e.out, str(b.Text))
			texts++
		case protocol.ContentBlockTypeResource:
			if b.Resource != nil {
				fmt.Fprintf(e.out, "[resource %s]\n", b.Resource.URI)
				if b.Resource.Text != nil {
					fmt.Fprintln(e.out, *b.Resource.Text)
				}
			}
		case protocol.ContentBlockTypeResourceLink:
			fmt.Fprintf(e.out, "[link %s]\n", str(b.URI))
		default:
			// A blob the Computer spooled keeps its handle in the item's
			// metadata (drained or not): blob get saves it to a file.
			if h, ok := b.Meta[agent.MetaBlobHandle].(string); ok && h != "" {
				fmt.Fprintf(e.out, "[%s %s blob %s]\n", b.Type, str(b.MimeType), h)
				continue
			}
			fmt.Fprintf(e.out, "[%s %s]\n", b.Type, str(b.MimeType))
		}
	}
	if texts == 0 && res.StructuredContent != nil {
		_ = e.printJSON(res.StructuredContent)
	}
}

func cmdDesktop(ctx context.Context, e *env, args []string) error {
	q := agent.DesktopQuery{Window: e.o.window}
	if e.set["size"] {
		n := e.o.size
		q.Size = &n
	}
	desktops, err := e.client.GetDesktop(ctx, args[0], q)
	if err != nil {
		return err
	}
	if e.g.json {
		return e.printJSON(desktops)
	}
	for i, d := range desktops {
		if i > 0 {
			fmt.Fprintln(e.out)
		}
		uri, body, _ := strings.Cut(d, "\n\n")
		fmt.Fprintf(e.out, "== %s\n", uri)
		if body != "" {
			fmt.Fprintln(e.out, body)
		}
	}
	if len(desktops) == 0 {
		fmt.Fprintln(e.out, "(no windows)")
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

func cmdFinder(ctx context.Context, e *env, args []string) error {
	q := agent.FinderQuery{Keywords: splitList(e.o.keywords), FileType: e.o.fileType, Offset: e.o.offset, Limit: e.o.limit}
	ret, err := e.client.GetFinder(ctx, args[0], q)
	if err != nil {
		return noFinder(err, args[0])
	}
	if e.g.json {
		return e.printJSON(ret)
	}
	tw := e.table("URI", "TITLE", "TYPE", "PAGES", "SERVER", "MODIFIED")
	for _, d := range ret.Documents {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", d.URI, cell(d.Title, 40), cell(d.FileType, 10), d.PageCount, d.Server, cell(d.LastModified, 25))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if n := len(ret.Documents); n > 0 {
		fmt.Fprintf(e.out, "documents %d-%d of %d\n", q.Offset+1, q.Offset+n, ret.TotalCount)
	} else {
		fmt.Fprintf(e.out, "no documents (of %d)\n", ret.TotalCount)
	}
	return nil
}

func cmdOpen(ctx context.Context, e *env, args []string) error {
	computer, err := resolveComputer(ctx, e, args[0])
	if err != nil {
		return err
	}
	pctx, done := withProgressBar(ctx, e.errOut)
	d, err := e.client.ReadDocument(pctx, computer, args[0], agent.DocumentQuery{Pages: e.o.pages, Offset: e.o.offset, Limit: e.o.limit})
	done()
	if err != nil {
		return noFinder(err, computer)
	}
	if e.g.json {
		return e.printJSON(d)
	}
	// The text rendering lists the page index as tab-separated lines: align
	// them.
	tw := tabwriter.NewWriter(e.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, dpe.DocumentText(d.DPEDocument))
	if err := tw.Flush(); err != nil {
		return err
	}
	e.problems(d.Problems)
	return nil
}

func cmdPage(ctx context.Context, e *env, args []string) error {
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 0 {
		return usagef("page number must be an integer >= 0: %s", args[1])
	}
	format := dpe.Format(e.o.format)
	switch format {
	case dpe.FormatJSON, dpe.FormatMarkdown, dpe.FormatText:
	default:
		return usagef("--format must be markdown, text or json: %s", e.o.format)
	}
	var cats []protocol.DPEElementCategory
	for _, name := range splitList(e.o.categories) {
		cat, ok := dpe.ParseCategory(name)
		if !ok {
			return usagef("unknown element category %q", name)
		}
		cats = append(cats, cat)
	}
	computer, err := resolveComputer(ctx, e, args[0])
	if err != nil {
		return err
	}
	pctx, done := withProgressBar(ctx, e.errOut)
	p, err := e.client.ReadPage(pctx, computer, args[0], n, agent.PageQuery{Format: format, Categories: cats})
	done()
	if errors.Is(err, agent.ErrInvalidAnswer) && format != dpe.FormatJSON && !e.g.json {
		// A third-party server may answer format=markdown or text with the
		// rendering itself (text/markdown) instead of a DPE page object:
		// print it as it came.
		if text, ok := rawRendering(ctx, e, computer, args[0], n, cats, format); ok {
			fmt.Fprintln(e.out, strings.TrimRight(text, "\n"))
			return nil
		}
	}
	if err != nil {
		return noFinder(err, computer)
	}
	if e.g.json || format == dpe.FormatJSON {
		return e.printJSON(p)
	}
	defer e.problems(p.Problems)
	switch format {
	case dpe.FormatMarkdown:
		// A server that ignores format sends elements: render them here.
		fmt.Fprintln(e.out, dpe.PageMarkdown(p.DPEPage))
	case dpe.FormatText:
		fmt.Fprintln(e.out, dpe.PageText(p.DPEPage))
	}
	return nil
}

// problems tells, on the error output, which parts of an answer a tolerant
// reader kept despite a structural problem (spec/finder.md, Reading the
// levels); the output itself stays what was read.
func (e *env) problems(ps []dpe.Problem) {
	for _, p := range ps {
		fmt.Fprintf(e.errOut, "warning: %s\n", p)
	}
}

// rawRendering reads the page as ReadPage does and returns its first text
// contents when that is not JSON (a server's own Markdown or text rendering).
func rawRendering(ctx context.Context, e *env, computer, uri string, page int, cats []protocol.DPEElementCategory, format dpe.Format) (string, bool) {
	u, err := dpe.Parse(uri)
	if err != nil || u.DocRef == "" {
		return "", false
	}
	target := dpe.PageURI(u.Host, u.DocRef, page)
	if len(cats) > 0 {
		names := make([]string, len(cats))
		for i, c := range cats {
			names[i] = string(c)
		}
		target = target.With(dpe.ParamCategories, strings.Join(names, ","))
	}
	target = target.With(dpe.ParamFormat, string(format))
	contents, err := e.client.ReadResource(ctx, computer, target.String())
	if err != nil {
		return "", false
	}
	for _, c := range contents {
		if c.Text == nil {
			continue
		}
		if json.Valid([]byte(*c.Text)) {
			return "", false // JSON, but not a valid page: the error stands
		}
		return *c.Text, true
	}
	return "", false
}

func cmdElement(ctx context.Context, e *env, args []string) error {
	computer, err := resolveComputer(ctx, e, args[0])
	if err != nil {
		return err
	}
	pctx, done := withProgressBar(ctx, e.errOut)
	d, err := e.client.ReadElement(pctx, computer, args[0], args[1], dpe.FormatJSON)
	done()
	if err != nil {
		return noFinder(err, computer)
	}
	if e.g.json {
		return e.printJSON(d)
	}
	fmt.Fprintln(e.out, dpe.ElementDetailText(d.DPEElementDetail))
	e.problems(d.Problems)
	return nil
}

// watch prints each notification, then what the Client re-fetched for it.
type watcher struct {
	e  *env
	mu sync.Mutex
}

func (w *watcher) print(line string, v any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.e.g.json {
		b, _ := json.Marshal(v)
		fmt.Fprintln(w.e.out, string(b))
		return
	}
	fmt.Fprintf(w.e.out, "%s %s\n", time.Now().Format("15:04:05"), line)
}

func watchOptions(e *env) []agent.Option {
	w := &watcher{e: e}
	e.watch = w
	return []agent.Option{
		agent.OnNotification(func(n agent.Notification) {
			var parts []string
			for _, kv := range [][2]string{{"office", n.OfficeID}, {"computer", n.Computer}, {"agent", n.Agent}, {"req_id", n.ReqID}} {
				if kv[1] != "" {
					parts = append(parts, kv[0]+"="+kv[1])
				}
			}
			w.print(n.Event+" "+strings.Join(parts, " "), n)
		}),
		agent.OnToolsChanged(func(computer string, tools []protocol.SMCPTool) {
			names := make([]string, len(tools))
			for i, t := range tools {
				names[i] = t.Name
			}
			sort.Strings(names)
			w.print(fmt.Sprintf("  tools of %s: %d [%s]", computer, len(tools), strings.Join(names, " ")),
				map[string]any{"event": "tools", "computer": computer, "tools": names})
		}),
		agent.OnDesktopChanged(func(computer string, desktops []string) {
			w.print(fmt.Sprintf("  desktop of %s: %d windows", computer, len(desktops)),
				map[string]any{"event": "desktop", "computer": computer, "desktops": desktops})
		}),
		agent.OnFinderChanged(func(computer string, cat *protocol.GetFinderRet) {
			w.print(fmt.Sprintf("  catalog of %s: %d documents", computer, cat.TotalCount),
				map[string]any{"event": "catalog", "computer": computer, "catalog": cat})
		}),
		agent.OnReconnect(func(err error) {
			if err != nil {
				w.print("reconnected, but could not rejoin the office: "+err.Error(), map[string]any{"event": "reconnect", "error": err.Error()})
				return
			}
			w.print("reconnected", map[string]any{"event": "reconnect"})
		}),
	}
}

func cmdWatch(ctx context.Context, e *env, _ []string) error {
	if !e.g.json {
		e.watch.mu.Lock()
		fmt.Fprintf(e.out, "watching office %s (Ctrl-C to stop)\n", e.g.office)
		e.watch.mu.Unlock()
	}
	select {
	case <-ctx.Done():
		return nil
	case <-e.client.Done():
		// The Server ended the session: nothing more will come.
		return e.client.Err()
	}
}
