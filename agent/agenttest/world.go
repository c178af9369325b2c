package agenttest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

// World is the data the peer answers from by default: one office whose
// Computers hold tools, a configuration, a desktop and MCP servers with
// DPE documents. Change it under Mu.
type World struct {
	Mu        sync.Mutex
	Computers []*Computer
	// FullOffice is refused on join with "4101 RoomFull: ...".
	FullOffice string

	cancels map[string]chan struct{} // by tool call req_id
}

// Computer is one Computer of the office.
type Computer struct {
	Name string
	// A2CVersion and Extensions are what server:list_room shows of it;
	// events it does not offer by them (protocol.Offers) are answered with
	// 4106, as the Server does.
	A2CVersion string
	Extensions []string
	Tools      []protocol.SMCPTool
	Config     protocol.GetComputerConfigRet
	Desktops   []string
	Servers    []*DocServer
}

// DocServer is one MCP server of a Computer serving dpe://Host.
type DocServer struct {
	Name string
	Host string
	Docs []*Doc
}

// Doc is one document: its Level-1 metadata and its pages with elements.
type Doc struct {
	Meta  protocol.DPEDocumentMeta
	Pages []protocol.DPEPage
}

func str(s string) *string { return &s }

func el(id string, cat protocol.DPEElementCategory, summary string, content map[string]any) protocol.DPEElement {
	return protocol.DPEElement{ElementID: id, Category: cat, Summary: summary, Content: content}
}

// NewDoc builds a document of host from its pages' titles and elements.
func NewDoc(host, ref, title, fileType string, keywords []string, summary, modified string, pages []string, elements [][]protocol.DPEElement) *Doc {
	u := dpe.DocumentURI(host, ref).String()
	d := &Doc{Meta: protocol.DPEDocumentMeta{
		DocRef: ref, URI: u, FileURI: "file:///data/" + ref + "." + fileType, FileType: fileType,
		Title: title, PageCount: len(pages), Keywords: keywords, Summary: summary,
	}}
	if modified != "" {
		d.Meta.LastModified = modified
	}
	for i, t := range pages {
		p := protocol.DPEPage{PageIndex: i, Title: t, DocRef: ref, URI: dpe.PageURI(host, ref, i).String()}
		if i < len(elements) {
			p.Elements = elements[i]
		}
		p.ElementCount = len(p.Elements)
		d.Pages = append(d.Pages, p)
	}
	return d
}

// NewWorld returns the default World: Computer "alpha" with the MCP server
// "docs" (dpe://com.example.docs: rpt-2026, 3 pages; contract-a1, 2 pages)
// and Computer "beta" with the MCP server "files" (dpe://org.example.files:
// notes, 1 page).
func NewWorld() *World {
	report := NewDoc("com.example.docs", "rpt-2026", "2026 Annual Report", "xlsx", []string{"finance", "annual"},
		"Finance and operations 2026", "2026-01-15T08:30:00Z",
		[]string{"Overview", "Revenue", "Outlook"},
		[][]protocol.DPEElement{
			{
				el("h-001", protocol.DPEElementCategoryHeading, "2026 summary", map[string]any{"level": 1, "text": "2026 summary"}),
				el("txt-001", protocol.DPEElementCategoryText, "Introduction", map[string]any{"text": "This report sums up 2026."}),
				el("tbl-001", protocol.DPEElementCategoryTable, "Quarterly revenue (4x3)", map[string]any{
					"headers": []any{"Quarter", "Revenue", "Growth"},
					"rows":    []any{[]any{"Q1", "1,250", "+12%"}, []any{"Q2", "1,380", "+15%"}, []any{"Q3", "1,420", "+8%"}, []any{"Q4", "1,560", "+18%"}},
				}),
				el("chart-001", protocol.DPEElementCategoryChart, "Revenue trend", map[string]any{"chart_type": "line", "title": "Revenue trend", "data_summary": "Rising every quarter"}),
			},
			{
				el("h-002", protocol.DPEElementCategoryHeading, "Revenue", map[string]any{"level": 2, "text": "Revenue"}),
				el("tbl-002", protocol.DPEElementCategoryTable, "Revenue by region", map[string]any{
					"headers": []any{"Region", "Revenue"}, "rows": []any{[]any{"North", "3,100"}, []any{"South", "2,510"}},
				}),
			},
			{
				el("txt-003", protocol.DPEElementCategoryText, "Outlook", map[string]any{"text": "Growth continues."}),
				el("lst-001", protocol.DPEElementCategoryList, "Goals", map[string]any{"ordered": true, "items": []any{"Grow", "Hire"}}),
			},
		})
	contract := NewDoc("com.example.docs", "contract-a1", "A1 Contract", "pdf", []string{"contract"},
		"Service contract of project A1", "2026-02-01T14:00:00Z",
		[]string{"Terms", "Signatures"},
		[][]protocol.DPEElement{
			{
				el("h-101", protocol.DPEElementCategoryHeading, "Scope", map[string]any{"level": 2, "text": "Scope"}),
				el("txt-101", protocol.DPEElementCategoryText, "Scope", map[string]any{"text": "The supplier delivers."}),
			},
			{el("txt-102", protocol.DPEElementCategoryText, "Signed", map[string]any{"text": "Signed by both parties."})},
		})
	notes := NewDoc("org.example.files", "notes", "Meeting notes", "md", []string{"meeting"},
		"Weekly meeting notes", "",
		[]string{"Week 1"},
		[][]protocol.DPEElement{{el("txt-201", protocol.DPEElementCategoryText, "Notes", map[string]any{"text": "Ship it."})}})

	tool := func(name, desc string) protocol.SMCPTool {
		t := protocol.SMCPTool{Name: name, Description: desc,
			ParamsSchema: map[string]any{"type": "object"}, ReturnSchema: nil}
		if name != "slow" { // slow is a tool its Computer asks the user about
			t.Meta = map[string]any{protocol.MetaKeyToolMeta: `{"auto_apply":true,"tags":["test"]}`}
		}
		return t
	}
	stdio := func(name string) protocol.MCPServerConfig {
		return protocol.MCPServerConfig{Stdio: &protocol.MCPStdioConfig{
			Name: name, Type: protocol.ServerTypeStdio, ForbiddenTools: []string{}, ToolMeta: map[string]protocol.ToolMeta{},
			ServerParameters: protocol.MCPStdioParameters{Command: "docserver", Args: []string{"--dir", "/data"},
				Encoding: "utf-8", EncodingErrorHandler: protocol.MCPStdioParametersEncodingErrorHandlerStrict},
		}}
	}
	return &World{
		Computers: []*Computer{
			{
				Name:     "alpha",
				Tools:    []protocol.SMCPTool{tool("echo", "Echo the params back"), tool("fail", "Always fails"), tool("slow", "Never finishes")},
				Config:   protocol.GetComputerConfigRet{Servers: map[string]protocol.MCPServerConfig{"docs": stdio("docs")}},
				Desktops: []string{"window://com.example.docs/editor\n\nreport open", "window://com.example.docs/status"},
				Servers:  []*DocServer{{Name: "docs", Host: "com.example.docs", Docs: []*Doc{report, contract}}},
			},
			{
				Name:     "beta",
				Tools:    []protocol.SMCPTool{tool("echo", "Echo the params back")},
				Config:   protocol.GetComputerConfigRet{Servers: map[string]protocol.MCPServerConfig{"files": stdio("files")}},
				Desktops: []string{},
				Servers:  []*DocServer{{Name: "files", Host: "org.example.files", Docs: []*Doc{notes}}},
			},
		},
		FullOffice: "full",
	}
}

// Computer returns the named Computer, nil when unknown.
func (w *World) Computer(name string) *Computer {
	for _, c := range w.Computers {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// RemoveComputer drops a Computer from the World.
func (w *World) RemoveComputer(name string) {
	w.Mu.Lock()
	defer w.Mu.Unlock()
	w.Computers = slices.DeleteFunc(w.Computers, func(c *Computer) bool { return c.Name == name })
}

// AddDocs adds n generated one-page documents to the first MCP server of a
// Computer (for paging tests): doc-000, doc-001, ...
func (w *World) AddDocs(computer string, n int) {
	w.Mu.Lock()
	defer w.Mu.Unlock()
	c := w.Computer(computer)
	s := c.Servers[0]
	for i := 0; i < n; i++ {
		ref := fmt.Sprintf("doc-%03d", i)
		s.Docs = append(s.Docs, NewDoc(s.Host, ref, "Generated "+ref, "txt", nil, "generated", "", []string{"Only"},
			[][]protocol.DPEElement{{el("t-"+ref, protocol.DPEElementCategoryText, "text", map[string]any{"text": ref})}}))
	}
}

// Handler returns the World's default answer to event, nil for events the
// peer only records (tests wrap it to break one answer out of many).
func (w *World) Handler(event string) Handler {
	switch event {
	case protocol.EventJoinOffice:
		return w.join
	case protocol.EventLeaveOffice:
		return func(context.Context, map[string]any) Reply { return Values(true, nil) }
	case protocol.EventListRoom:
		return w.listRoom
	case protocol.EventGetTools:
		return w.onComputer(func(c *Computer, req map[string]any) Reply {
			return Answer(jsonValue(protocol.GetToolsRet{Tools: c.Tools, ReqID: reqID(req)}))
		})
	case protocol.EventGetConfig:
		return w.onComputer(func(c *Computer, _ map[string]any) Reply { return Answer(jsonValue(c.Config)) })
	case protocol.EventGetDesktop:
		return w.onComputer(w.desktop)
	case protocol.EventGetFinder:
		return w.onComputer(offering(event, w.finder))
	case protocol.EventReadResource:
		return w.onComputer(offering(event, w.read))
	case protocol.EventComplete:
		return w.onComputer(offering(event, w.complete))
	case protocol.EventToolCall:
		return w.toolCall
	case protocol.EventCancelToolCall:
		return w.cancel
	}
	return nil
}

func reqID(req map[string]any) string { s, _ := req["req_id"].(string); return s }

func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

func errorValue(e *protocol.Error) any { return jsonValue(e) }

func (w *World) join(_ context.Context, req map[string]any) Reply {
	w.Mu.Lock()
	defer w.Mu.Unlock()
	office, _ := req["office_id"].(string)
	if office == w.FullOffice {
		return Values(false, protocol.NewRoomFull("office %s already has an agent", office).Error())
	}
	return Values(true, nil)
}

func (w *World) listRoom(_ context.Context, req map[string]any) Reply {
	w.Mu.Lock()
	defer w.Mu.Unlock()
	office, _ := req["office_id"].(string)
	agent, _ := req["agent"].(string)
	sessions := []protocol.SessionInfo{{Sid: "sid-agent", Name: agent, Role: protocol.RoleAgent, OfficeID: office}}
	for i, c := range w.Computers {
		sessions = append(sessions, c.session(i, office))
	}
	return Answer(jsonValue(protocol.ListRoomRet{Sessions: sessions, ReqID: reqID(req)}))
}

// offering answers event with fn for a Computer that offers it, with 4106
// for the others, as the Server does.
func offering(event string, fn func(*Computer, map[string]any) Reply) func(*Computer, map[string]any) Reply {
	return func(c *Computer, req map[string]any) Reply {
		if !protocol.Offers(c.session(0, ""), event) {
			return Answer(errorValue(protocol.NewNotSupported("computer %q does not offer %s: its protocol generation %s does not have it and it did not declare it",
				c.Name, event, c.A2CVersion).With("event", event)))
		}
		return fn(c, req)
	}
}

func (c *Computer) session(i int, office string) protocol.SessionInfo {
	return protocol.SessionInfo{Sid: fmt.Sprintf("sid-%d", i), Name: c.Name, Role: protocol.RoleComputer, OfficeID: office,
		A2CVersion: c.A2CVersion, Extensions: c.Extensions}
}

func (w *World) onComputer(fn func(*Computer, map[string]any) Reply) Handler {
	return func(_ context.Context, req map[string]any) Reply {
		w.Mu.Lock()
		defer w.Mu.Unlock()
		name, _ := req["computer"].(string)
		c := w.Computer(name)
		if c == nil {
			return Answer(errorValue(protocol.NewNotFound("computer %s not found", name)))
		}
		return fn(c, req)
	}
}

func (w *World) desktop(c *Computer, req map[string]any) Reply {
	out := slices.Clone(c.Desktops)
	if win, ok := req["window"].(string); ok {
		out = slices.DeleteFunc(out, func(d string) bool { return d != win && !strings.HasPrefix(d, win+"\n\n") })
	}
	if n, ok := req["desktop_size"].(float64); ok {
		switch {
		case n <= 0:
			out = []string{}
		case int(n) < len(out):
			out = out[:int(n)]
		}
	}
	return Answer(jsonValue(protocol.GetDesktopRet{Desktops: out, ReqID: reqID(req)}))
}

func (w *World) finder(c *Computer, req map[string]any) Reply {
	var kws []string
	if list, ok := req["keywords"].([]any); ok {
		for _, k := range list {
			if s, ok := k.(string); ok {
				kws = append(kws, strings.ToLower(s))
			}
		}
	}
	fileType, _ := req["file_type"].(string)
	offset, limit := 0, 20
	if v, ok := req["offset"].(float64); ok {
		offset = int(v)
	}
	if v, ok := req["limit"].(float64); ok {
		limit = int(v)
	}
	var all []protocol.DPEDocumentSummary
	for _, s := range c.Servers {
		for _, d := range s.Docs {
			m := d.Meta
			if fileType != "" && m.FileType != fileType {
				continue
			}
			if len(kws) > 0 && !matches(m, kws) {
				continue
			}
			all = append(all, protocol.DPEDocumentSummary{
				DocRef: m.DocRef, URI: m.URI, FileURI: m.FileURI, FileType: m.FileType, Title: m.Title,
				PageCount: m.PageCount, Keywords: m.Keywords, Summary: m.Summary, LastModified: m.LastModified, Server: s.Name,
			})
		}
	}
	ret := protocol.GetFinderRet{Documents: []protocol.DPEDocumentSummary{}, TotalCount: len(all), ReqID: reqID(req)}
	if offset < len(all) {
		ret.Documents = all[offset:min(len(all), offset+limit)]
	}
	return Answer(jsonValue(ret))
}

func matches(m protocol.DPEDocumentMeta, kws []string) bool {
	hay := strings.ToLower(m.Title + " " + strings.Join(m.Keywords, " ") + " " + m.Summary)
	for _, k := range kws {
		if strings.Contains(hay, k) {
			return true
		}
	}
	return false
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// read serves client:read_resource for dpe:// URIs like a Computer whose
// MCP servers are built with dpekit: 4204, 4201, 4202, 4203, and the
// markdown/text renderings of protocol/dpe.
func (w *World) read(c *Computer, req map[string]any) Reply {
	raw, _ := req["uri"].(string)
	u, err := dpe.Parse(raw)
	if err != nil {
		return Answer(errorValue(protocol.AsError(err)))
	}
	var srv *DocServer
	for _, s := range c.Servers {
		if s.Host == u.Host {
			srv = s
		}
	}
	if srv == nil {
		return Answer(errorValue(protocol.NewDocumentNotFound("no MCP server serves dpe://%s", u.Host).With("host", u.Host)))
	}
	format := u.Format()
	var body any
	switch u.Level() {
	case dpe.LevelCatalog:
		cat := protocol.DPECatalog{Documents: []protocol.DPEDocumentMeta{}, TotalCount: len(srv.Docs)}
		for _, d := range srv.Docs {
			cat.Documents = append(cat.Documents, d.Meta)
		}
		switch format {
		case dpe.FormatMarkdown:
			cat.ContentMarkdown = dpe.CatalogMarkdown(cat)
		case dpe.FormatText:
			cat.ContentText = dpe.CatalogText(cat)
		}
		body = cat
	default:
		var doc *Doc
		for _, d := range srv.Docs {
			if d.Meta.DocRef == u.DocRef {
				doc = d
			}
		}
		if doc == nil {
			return Answer(errorValue(protocol.NewDocumentNotFound("document %s not found", u.DocRef).With("doc_ref", u.DocRef)))
		}
		switch u.Level() {
		case dpe.LevelDocument:
			body = w.document(doc, u)
		case dpe.LevelPage:
			if u.PageIndex >= len(doc.Pages) {
				return Answer(errorValue(protocol.NewPageOutOfRange("page %d out of range", u.PageIndex).
					With("page_index", u.PageIndex).With("page_count", len(doc.Pages))))
			}
			body = page(doc.Pages[u.PageIndex], u)
		case dpe.LevelElement:
			d, ok := element(doc, u)
			if !ok {
				return Answer(errorValue(protocol.NewElementNotFound("element %s not found", u.ElementID).With("element_id", u.ElementID)))
			}
			body = d
		}
	}
	text, _ := json.Marshal(body)
	return Answer(jsonValue(protocol.ReadResourceRet{ReqID: reqID(req), Contents: []protocol.ResourceContents{{
		URI: raw, MimeType: "application/json", Text: str(string(text)),
	}}}))
}

func (w *World) document(doc *Doc, u *dpe.URI) protocol.DPEDocument {
	m := doc.Meta
	d := protocol.DPEDocument{DocRef: m.DocRef, URI: m.URI, FileURI: m.FileURI, FileType: m.FileType, Title: m.Title,
		PageCount: m.PageCount, Keywords: m.Keywords, Summary: m.Summary, LastModified: m.LastModified}
	if u.Depth() == dpe.DepthPages {
		off, lim := u.Offset(), u.Limit()
		d.Pages = []protocol.DPEPageSummary{}
		for i := off; i < len(doc.Pages) && i < off+lim; i++ {
			p := doc.Pages[i]
			d.Pages = append(d.Pages, protocol.DPEPageSummary{PageIndex: i, Title: p.Title, ElementCount: len(p.Elements), URI: p.URI, DocRef: m.DocRef})
		}
		d.PageOffset, d.PageLimit, d.PageTotal = &off, lim, &m.PageCount
	}
	switch u.Format() {
	case dpe.FormatMarkdown:
		d.ContentMarkdown = dpe.DocumentMarkdown(d)
	case dpe.FormatText:
		d.ContentText = dpe.DocumentText(d)
	}
	return d
}

func page(p protocol.DPEPage, u *dpe.URI) protocol.DPEPage {
	if cats := u.Categories(); cats != nil {
		p.Elements = slices.DeleteFunc(slices.Clone(p.Elements), func(e protocol.DPEElement) bool { return !slices.Contains(cats, e.Category) })
	}
	p.ElementCount = len(p.Elements)
	switch u.Format() {
	case dpe.FormatMarkdown:
		p.ContentMarkdown = str(dpe.PageMarkdown(p))
		p.Elements = nil
	case dpe.FormatText:
		p.ContentText = str(dpe.PageText(p))
		p.Elements = nil
	}
	return p
}

func element(doc *Doc, u *dpe.URI) (protocol.DPEElementDetail, bool) {
	for i, p := range doc.Pages {
		for _, e := range p.Elements {
			if e.ElementID != u.ElementID {
				continue
			}
			pi := i
			d := protocol.DPEElementDetail{ElementID: e.ElementID, Category: e.Category, Summary: e.Summary, Content: e.Content,
				DocRef: doc.Meta.DocRef, PageIndex: &pi, URI: dpe.ElementURI(u.Host, doc.Meta.DocRef, e.ElementID).String(),
				Metadata: map[string]any{"source": "fixture"}}
			switch u.Format() {
			case dpe.FormatMarkdown:
				d.ContentMarkdown = dpe.ElementDetailMarkdown(d)
			case dpe.FormatText:
				d.ContentText = dpe.ElementDetailText(d)
			}
			return d, true
		}
	}
	return protocol.DPEElementDetail{}, false
}

// toolCall runs the fixture tools: echo answers its params as JSON text,
// fail answers a 4003 error result, slow answers only when cancelled
// (server:tool_call_cancel) — never, as a Computer would after a cancel —
// and an unknown tool is a 4001 error result.
func (w *World) toolCall(ctx context.Context, req map[string]any) Reply {
	name, _ := req["tool_name"].(string)
	computer, _ := req["computer"].(string)
	w.Mu.Lock()
	c := w.Computer(computer)
	w.Mu.Unlock()
	if c == nil {
		return Answer(errorValue(protocol.NewNotFound("computer %s not found", computer)))
	}
	switch name {
	case "echo":
		b, _ := json.Marshal(req["params"])
		return Answer(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(b)}}, "isError": false})
	case "fail":
		return Answer(errorResult(protocol.NewToolExecutionFailed("the tool failed on purpose")))
	case "slow":
		ch := w.cancelChan(reqID(req))
		select {
		case <-ch:
		case <-ctx.Done():
		}
		return Silent()
	}
	return Answer(errorResult(protocol.NewToolNotFound("tool %s not found", name)))
}

func errorResult(e *protocol.Error) map[string]any {
	return map[string]any{
		"content":           []any{map[string]any{"type": "text", "text": e.Message}},
		"isError":           true,
		"structuredContent": map[string]any{"error": e.Message, "error_type": e.Code.String(), "code": int(e.Code)},
	}
}

func (w *World) cancelChan(id string) chan struct{} {
	w.Mu.Lock()
	defer w.Mu.Unlock()
	if w.cancels == nil {
		w.cancels = map[string]chan struct{}{}
	}
	ch, ok := w.cancels[id]
	if !ok {
		ch = make(chan struct{})
		w.cancels[id] = ch
	}
	return ch
}

func (w *World) cancel(_ context.Context, req map[string]any) Reply {
	ch := w.cancelChan(reqID(req))
	w.Mu.Lock()
	defer w.Mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
	return Silent()
}

// complete answers client:complete for the dpe:// chain of the Computer's
// documents: doc_ref by prefix, page_index of the doc_ref in context.
func (w *World) complete(c *Computer, req map[string]any) Reply {
	var r protocol.CompleteReq
	if b, err := json.Marshal(req); err != nil || json.Unmarshal(b, &r) != nil {
		return Answer(errorValue(protocol.NewBadRequest("bad client:complete")))
	}
	values := []string{}
	for _, s := range c.Servers {
		if r.Ref.URI == nil || !strings.HasPrefix(*r.Ref.URI, "dpe://"+s.Host+"/") {
			continue
		}
		for _, d := range s.Docs {
			switch r.Argument.Name {
			case "doc_ref":
				if strings.HasPrefix(d.Meta.DocRef, r.Argument.Value) {
					values = append(values, d.Meta.DocRef)
				}
			case "page_index":
				if r.Context != nil && r.Context.Arguments["doc_ref"] == d.Meta.DocRef {
					for i := range d.Pages {
						if v := strconv.Itoa(i); strings.HasPrefix(v, r.Argument.Value) {
							values = append(values, v)
						}
					}
				}
			}
		}
	}
	slices.Sort(values)
	return Answer(jsonValue(protocol.CompleteRet{Completion: protocol.CompletionValues{Values: values}, ReqID: r.ReqID}))
}
