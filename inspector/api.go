package inspector

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a2c-smcp/smcp-go/agent"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/a2c-smcp/smcp-go/protocol/dpe"
)

//go:embed web
var webFiles embed.FS

// Limits of the page's requests.
const (
	maxCallBody   = 1 << 20 // a tool call's JSON body
	maxToolWait   = 10 * time.Minute
	maxServerScan = 20000 // documents read to filter a catalog by MCP server
)

// views are the page's addresses: each serves the same page, which shows
// the view its address names, so that any view can be bookmarked.
var views = []string{"/{$}", "/office", "/tools", "/desktop", "/finder", "/skills", "/resources"}

// Handler returns the page and its API.
func (in *Inspector) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(webFiles, "web")
	index, _ := fs.ReadFile(static, "index.html")
	for _, v := range views {
		mux.HandleFunc("GET "+v, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write(index)
		})
	}
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /api/session", in.apiSession)
	mux.HandleFunc("GET /api/office", in.apiOffice)
	mux.HandleFunc("GET /api/tools", in.apiTools)
	mux.HandleFunc("POST /api/call", in.apiCall)
	mux.HandleFunc("POST /api/cancel", in.apiCancel)
	mux.HandleFunc("GET /api/desktop", in.apiDesktop)
	mux.HandleFunc("GET /api/finder", in.apiFinder)
	mux.HandleFunc("GET /api/servers", in.apiServers)
	mux.HandleFunc("GET /api/read", in.apiRead)
	mux.HandleFunc("GET /api/complete", in.apiComplete)
	mux.HandleFunc("GET /api/skills", in.apiSkills)
	mux.HandleFunc("GET /api/skill", in.apiSkill)
	mux.HandleFunc("GET /api/resources", in.apiResources)
	mux.HandleFunc("GET /api/blob", in.apiBlob)
	mux.HandleFunc("GET /api/events", in.serveEvents)
	return in.secure(mux)
}

// errorBody is the JSON shape of an error on the page: the protocol code,
// its name, the message and the details.
func errorBody(err error) map[string]any {
	perr := protocol.AsError(err)
	return map[string]any{"code": int(perr.Code), "name": perr.Code.String(), "message": perr.Message, "details": perr.Details}
}

// httpStatus maps a protocol code to the HTTP status of the page's request.
func httpStatus(code protocol.Code) int {
	switch code {
	case protocol.CodeBadRequest, protocol.CodeInvalidDPEURI, protocol.CodeSkillNameInvalid:
		return http.StatusBadRequest
	case protocol.CodeUnauthorized:
		return http.StatusUnauthorized
	case protocol.CodeForbidden:
		return http.StatusForbidden
	case protocol.CodeNotFound, protocol.CodeDocumentNotFound, protocol.CodePageOutOfRange, protocol.CodeElementNotFound,
		protocol.CodeMCPServerNotFound, protocol.CodeSkillResourceNotAccessible, protocol.CodeBlobNotAccessible:
		return http.StatusNotFound
	case protocol.CodeTimeout:
		return http.StatusGatewayTimeout
	case protocol.CodeTooManyRequests:
		return http.StatusTooManyRequests
	case protocol.CodePayloadTooLarge:
		return http.StatusRequestEntityTooLarge
	case protocol.CodeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusBadGateway
}

func writeError(w http.ResponseWriter, err error) {
	writeJSON(w, httpStatus(protocol.CodeOf(err)), map[string]any{"error": errorBody(err)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}

// computerParam reads the required ?computer=.
func computerParam(r *http.Request) (string, error) {
	c := r.URL.Query().Get("computer")
	if c == "" {
		return "", protocol.Errorf(protocol.CodeBadRequest, "no computer given")
	}
	return c, nil
}

// intParam reads an optional non-negative integer query parameter.
func intParam(r *http.Request, name string, def, maxValue int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > maxValue {
		return 0, protocol.Errorf(protocol.CodeBadRequest, "%s must be an integer from 0 to %d, got %q", name, maxValue, s)
	}
	return n, nil
}

func (in *Inspector) apiSession(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"office": in.office, "agent": in.name, "server": in.server,
		"connected": in.client.Connected(), "csrf": in.csrf,
	})
}

// apiOffice lists the office's sessions (server:list_room).
func (in *Inspector) apiOffice(w http.ResponseWriter, r *http.Request) {
	sessions, err := in.client.ListRoom(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	type session struct {
		Name    string        `json:"name"`
		Role    protocol.Role `json:"role"`
		Version string        `json:"a2c_version,omitempty"`
	}
	out := make([]session, 0, len(sessions))
	// finder says which Computers offer the Finder (spec/generations.md,
	// Extensions a Computer offers): the page hides it for the others.
	finder := map[string]bool{}
	for _, s := range sessions {
		out = append(out, session{s.Name, s.Role, s.A2CVersion})
		if s.Role == protocol.RoleComputer {
			finder[s.Name] = protocol.OffersFinder(s)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"office": in.office, "agent": in.name,
		"computers": agent.ComputerNames(sessions), "sessions": out, "finder": finder,
	})
}

// tool is a tool as the page shows it: the SMCPTool and its decoded meta.
type tool struct {
	protocol.SMCPTool
	ToolMeta  *protocol.ToolMeta `json:"tool_meta,omitempty"`
	MetaError string             `json:"meta_error,omitempty"`
}

// apiTools lists a Computer's tools (client:get_tools).
func (in *Inspector) apiTools(w http.ResponseWriter, r *http.Request) {
	computer, err := computerParam(r)
	if err != nil {
		writeError(w, err)
		return
	}
	tools, err := in.client.GetTools(r.Context(), computer)
	if err != nil {
		writeError(w, err)
		return
	}
	out := make([]tool, 0, len(tools))
	for _, t := range tools {
		tm, err := t.ToolMeta()
		tt := tool{SMCPTool: t, ToolMeta: tm}
		if err != nil {
			tt.MetaError = err.Error()
		}
		out = append(out, tt)
	}
	writeJSON(w, http.StatusOK, map[string]any{"computer": computer, "tools": out})
}

// callRequest is the body of POST /api/call.
type callRequest struct {
	CallID   string         `json:"call_id"`
	Computer string         `json:"computer"`
	Tool     string         `json:"tool"`
	Params   map[string]any `json:"params"`
	Timeout  float64        `json:"timeout"` // seconds; 0 = agent.DefaultToolTimeout
}

// apiCall calls a tool (client:tool_call). The page may cancel it with
// apiCancel while it runs: the Agent then sends server:tool_call_cancel and
// the answer is a timeout result (spec/protocol.md, Routed requests).
func (in *Inspector) apiCall(w http.ResponseWriter, r *http.Request) {
	if err := in.checkSameOrigin(r); err != nil {
		writeError(w, err)
		return
	}
	var req callRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxCallBody))
	if err := dec.Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, protocol.Errorf(protocol.CodePayloadTooLarge, "the call is larger than %d bytes", maxCallBody))
			return
		}
		writeError(w, protocol.Errorf(protocol.CodeBadRequest, "invalid call: %v", err))
		return
	}
	if req.CallID == "" || len(req.CallID) > 64 || req.Computer == "" || req.Tool == "" {
		writeError(w, protocol.Errorf(protocol.CodeBadRequest, "a call needs call_id (at most 64 characters), computer and tool"))
		return
	}
	timeout := time.Duration(req.Timeout * float64(time.Second))
	if timeout < 0 || timeout > maxToolWait {
		writeError(w, protocol.Errorf(protocol.CodeBadRequest, "timeout must be from 0 to %s", maxToolWait))
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if err := in.startCall(req.CallID, cancel); err != nil {
		writeError(w, err)
		return
	}
	defer in.endCall(req.CallID)
	// The call's progress goes to the page over its event stream
	// (spec/protocol.md, Tool-call progress).
	ctx = agent.WithProgress(ctx, func(p agent.Progress) {
		in.events.publish("progress", map[string]any{"call_id": req.CallID, "computer": req.Computer, "tool": req.Tool,
			"progress": p.Progress, "total": p.Total, "message": p.Message})
	})
	start := time.Now()
	res, err := in.client.CallTool(ctx, req.Computer, req.Tool, req.Params, timeout)
	elapsed := time.Since(start)
	if err != nil {
		writeError(w, err)
		return
	}
	out := map[string]any{"result": res, "elapsed_ms": elapsed.Milliseconds()}
	if terr := agent.ToolError(res); terr != nil {
		out["tool_error"] = errorBody(terr)
	}
	writeJSON(w, http.StatusOK, out)
}

// apiCancel cancels a running call of the page.
func (in *Inspector) apiCancel(w http.ResponseWriter, r *http.Request) {
	if err := in.checkSameOrigin(r); err != nil {
		writeError(w, err)
		return
	}
	var req struct {
		CallID string `json:"call_id"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil {
		writeError(w, protocol.Errorf(protocol.CodeBadRequest, "invalid cancel: %v", err))
		return
	}
	if !in.cancelCall(req.CallID) {
		writeError(w, protocol.Errorf(protocol.CodeNotFound, "no running call %q", req.CallID))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"cancelled": req.CallID})
}

// window is one window of a desktop: its URI and its body rendered.
type window struct {
	URI  string `json:"uri"`
	HTML string `json:"html"`
}

// apiDesktop reads a Computer's desktop (client:get_desktop, spec/desktop.md,
// Desktop): each window "URI\n\nbody", the body rendered as Markdown.
func (in *Inspector) apiDesktop(w http.ResponseWriter, r *http.Request) {
	computer, err := computerParam(r)
	if err != nil {
		writeError(w, err)
		return
	}
	desks, err := in.client.GetDesktop(r.Context(), computer, agent.DesktopQuery{})
	if err != nil {
		writeError(w, err)
		return
	}
	out := make([]window, 0, len(desks))
	for _, d := range desks {
		uri, body, _ := strings.Cut(d, "\n\n")
		out = append(out, window{URI: uri, HTML: renderMarkdown(body)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"computer": computer, "windows": out})
}

// apiFinder reads one page of a Computer's catalog (client:get_finder,
// spec/finder.md, Organizer): keywords, file type, offset and limit go to
// the Computer, which pages. client:get_finder has no MCP-server filter:
// with ?server= the Inspector reads the filtered catalog in pages of 100
// (at most maxServerScan documents) and keeps that server's.
func (in *Inspector) apiFinder(w http.ResponseWriter, r *http.Request) {
	computer, err := computerParam(r)
	if err != nil {
		writeError(w, err)
		return
	}
	offset, err := intParam(r, "offset", 0, 1<<31-1)
	if err != nil {
		writeError(w, err)
		return
	}
	// The organizer's limit: 0 is the default, above the maximum is the
	// maximum (spec/finder.md, Organizer).
	limit, err := intParam(r, "limit", dpe.DefaultLimit, 1<<31-1)
	if err != nil {
		writeError(w, err)
		return
	}
	if limit == 0 {
		limit = dpe.DefaultLimit
	}
	limit = min(limit, dpe.MaxLimit)
	q := agent.FinderQuery{Keywords: strings.Fields(r.URL.Query().Get("q")), FileType: r.URL.Query().Get("type"), Offset: offset, Limit: limit}
	server := r.URL.Query().Get("server")
	if server == "" {
		ret, err := in.client.GetFinder(r.Context(), computer, q)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"documents": ret.Documents, "total_count": ret.TotalCount, "offset": offset, "limit": limit})
		return
	}
	scan := q
	scan.Offset, scan.Limit = 0, 0
	docs := []protocol.DPEDocumentSummary{}
	total, scanned := 0, 0
	for d, err := range in.client.Documents(r.Context(), computer, scan) {
		if err != nil {
			writeError(w, err)
			return
		}
		if scanned++; scanned > maxServerScan {
			writeError(w, protocol.Errorf(protocol.CodePayloadTooLarge, "the catalog holds more than %d documents: narrow it with keywords or a file type before filtering by server", maxServerScan))
			return
		}
		if d.Server != server {
			continue
		}
		if total >= offset && len(docs) < limit {
			docs = append(docs, d)
		}
		total++
	}
	writeJSON(w, http.StatusOK, map[string]any{"documents": docs, "total_count": total, "offset": offset, "limit": limit})
}

// apiServers names a Computer's MCP servers (client:get_config) for the
// catalog's server filter. Only the names leave: a config may hold secrets.
func (in *Inspector) apiServers(w http.ResponseWriter, r *http.Request) {
	computer, err := computerParam(r)
	if err != nil {
		writeError(w, err)
		return
	}
	cfg, err := in.client.GetConfig(r.Context(), computer)
	if err != nil {
		writeError(w, err)
		return
	}
	names := make([]string, 0, len(cfg.Servers))
	for name := range cfg.Servers {
		names = append(names, name)
	}
	slices.Sort(names)
	writeJSON(w, http.StatusOK, map[string]any{"computer": computer, "servers": names})
}

// apiRead reads one dpe:// URI through a Computer (spec/finder.md, Reading
// through the Computer): a document with a window of its page index, a page
// (its elements and its Markdown rendering, filtered by the URI's
// categories) or an element. Markdown reaches the page as sanitised HTML.
func (in *Inspector) apiRead(w http.ResponseWriter, r *http.Request) {
	computer, err := computerParam(r)
	if err != nil {
		writeError(w, err)
		return
	}
	raw := r.URL.Query().Get("uri")
	u, err := dpe.Parse(raw)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx := r.Context()
	switch u.Level() {
	case dpe.LevelDocument:
		doc, err := in.client.ReadDocument(ctx, computer, raw, agent.DocumentQuery{Pages: true, Offset: u.Offset(), Limit: u.Limit()})
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"level": "document", "uri": u.Document().String(), "document": doc})
	case dpe.LevelPage:
		cats := u.Categories()
		p, err := in.client.ReadPage(ctx, computer, raw, u.PageIndex, agent.PageQuery{Categories: cats})
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"level": "page", "uri": dpe.PageURI(u.Host, u.DocRef, u.PageIndex).String(),
			"document": u.Document().String(), "categories": cats, "all_categories": dpe.Categories(),
			"page": p, "html": renderMarkdown(dpe.PageMarkdown(p.DPEPage)),
		})
	case dpe.LevelElement:
		el, err := in.client.ReadElement(ctx, computer, raw, u.ElementID, dpe.FormatJSON)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"level": "element", "uri": dpe.ElementURI(u.Host, u.DocRef, u.ElementID).String(),
			"document": u.Document().String(), "element": el, "html": renderMarkdown(dpe.ElementDetailMarkdown(el.DPEElementDetail)),
		})
	default:
		writeError(w, protocol.NewInvalidDPEURI("%s is a catalog URI: open the Finder's catalog instead", raw).With("uri", raw))
	}
}

// apiComplete completes a partly typed dpe:// URI for the URI box
// (client:complete, spec/finder.md, Completion): whole URIs, at most 100.
func (in *Inspector) apiComplete(w http.ResponseWriter, r *http.Request) {
	computer, err := computerParam(r)
	if err != nil {
		writeError(w, err)
		return
	}
	partial := r.URL.Query().Get("uri")
	if len(partial) > 8192 {
		writeError(w, protocol.Errorf(protocol.CodeBadRequest, "the URI is longer than 8192 bytes"))
		return
	}
	uris, more, err := in.client.CompleteDPE(r.Context(), computer, partial)
	if err != nil {
		writeError(w, err)
		return
	}
	if len(uris) > 100 {
		uris, more = uris[:100], true
	}
	writeJSON(w, http.StatusOK, map[string]any{"computer": computer, "values": uris, "has_more": more})
}
