// Package testmcp is the MCP server the Computer's tests run as a real
// process (stdio or streamable HTTP). It serves the tools echo, slow, fail,
// mutate, crash and pid; window:// windows; and dpe:// documents (Levels 0–3,
// minimal) whose failures carry Finder error codes the way dpekit encodes
// them (protocol.EncodeMCPErrorMessage). Every change made through mutate
// sends the matching MCP notification (resources/list_changed,
// resources/updated, tools/list_changed).
//
// The program lives in ./cmd/testmcp; tests build it once with Binary.
package testmcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Options configure the test server.
type Options struct {
	// Host is the host of its dpe:// and window:// URIs (default "test").
	Host string
	// Docs is the number of documents doc-1 … doc-N served at start.
	Docs int
	// Windows lists window paths with their query, e.g. "main?priority=50".
	Windows []string
	// NoSubscribe leaves resources.subscribe out of the capabilities.
	NoSubscribe bool
	// NoResources serves tools only: no resources capability, no
	// documents, windows or templates.
	NoResources bool
	// Tools is the list of tools served (default all).
	Tools []string
	// Skills serves the skill "review" as skill:// resources, as an MCP
	// server offers skills to a 0.4 Computer: the root
	// skill://<host>/review (_meta.source "resources"), its SKILL.md and
	// docs/guide.txt.
	Skills bool
	// ArchiveSkills are skill roots offered as archives: skill://<host>/<leaf>
	// with _meta.source "archive", and the archive's format, URI and
	// (when not empty) sha256.
	ArchiveSkills []ArchiveSkill
	// ServerOptions are added to the MCP server's options (the fault
	// injection of the program uses them).
	ServerOptions []server.ServerOption
}

// ArchiveSkill is a skill root offered as an archive.
type ArchiveSkill struct{ Leaf, Format, URI, SHA256 string }

// AllTools are the tools served by default.
var AllTools = []string{"echo", "slow", "fail", "mutate", "crash", "pid"}

type doc struct {
	title    string
	fileType string
	pages    int
	version  int
	modified time.Time
}

type window struct {
	query   string
	version int
}

// Server is one test MCP server.
type Server struct {
	*server.MCPServer
	host string

	mu      sync.Mutex
	docs    map[string]*doc
	windows map[string]*window
	extra   map[string]bool // tools added through mutate
}

// New returns the test server described by o.
func New(o Options) *Server {
	if o.Host == "" {
		o.Host = "test"
	}
	if o.Tools == nil {
		o.Tools = AllTools
	}
	s := &Server{host: o.Host, docs: map[string]*doc{}, windows: map[string]*window{}, extra: map[string]bool{}}
	opts := []server.ServerOption{server.WithToolCapabilities(true), server.WithRecovery()}
	if !o.NoResources {
		opts = append(opts, server.WithResourceCapabilities(!o.NoSubscribe, true), server.WithResourceRecovery())
	}
	s.MCPServer = server.NewMCPServer("smcp-testmcp", "1.0.0", append(opts, o.ServerOptions...)...)
	if o.NoResources {
		for _, name := range o.Tools {
			s.addTool(name)
		}
		return s
	}
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= o.Docs; i++ {
		ref := "doc-" + strconv.Itoa(i)
		s.docs[ref] = &doc{title: "Document " + strconv.Itoa(i), fileType: "md", pages: 3, modified: base.Add(time.Duration(i) * time.Hour)}
		s.addDocResource(ref)
	}
	for _, w := range o.Windows {
		path, query, _ := strings.Cut(w, "?")
		s.windows[path] = &window{query: query}
		s.addWindowResource(path)
	}
	if o.Skills {
		s.addSkill()
	}
	for _, a := range o.ArchiveSkills {
		s.addArchiveSkill(a)
	}
	s.AddResourceTemplate(mcp.NewResourceTemplate("dpe://"+s.host+"{+rest}", "dpe", mcp.WithTemplateMIMEType("application/json")), s.readDPE)
	for _, name := range o.Tools {
		s.addTool(name)
	}
	return s
}

func (s *Server) docURI(ref string) string { return "dpe://" + s.host + "/" + url.PathEscape(ref) }

func (s *Server) windowURI(path string) string {
	s.mu.Lock()
	w := s.windows[path]
	s.mu.Unlock()
	u := "window://" + s.host + "/" + path
	if w != nil && w.query != "" {
		u += "?" + w.query
	}
	return u
}

// SkillMD is the SKILL.md of the skill the Skills option serves.
const SkillMD = "---\nname: review\ndescription: Reviews code, from an MCP server\n---\n# Review\nRead the diff.\n"

func (s *Server) addSkill() {
	root := "skill://" + s.host + "/review"
	files := map[string]string{root + "/SKILL.md": SkillMD, root + "/docs/guide.txt": "guide from mcp"}
	read := func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		text, ok := files[req.Params.URI]
		if !ok {
			return nil, fmt.Errorf("no resource %s", req.Params.URI)
		}
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/markdown", Text: text}}, nil
	}
	r := mcp.NewResource(root, "skill review")
	r.Meta = &mcp.Meta{AdditionalFields: map[string]any{"source": "resources"}}
	s.AddResource(r, read)
	for uri := range files {
		s.AddResource(mcp.NewResource(uri, uri), read)
	}
}

func (s *Server) addArchiveSkill(a ArchiveSkill) {
	uri := "skill://" + s.host + "/" + a.Leaf
	meta := map[string]any{"source": "archive", "archive_uri": a.URI, "archive_format": a.Format}
	if a.SHA256 != "" {
		meta["archive_sha256"] = a.SHA256
	}
	r := mcp.NewResource(uri, "skill "+a.Leaf)
	r.Meta = &mcp.Meta{AdditionalFields: meta}
	s.AddResource(r, func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: a.URI}}, nil
	})
}

func (s *Server) addDocResource(ref string) {
	s.AddResource(mcp.NewResource(s.docURI(ref), "doc "+ref, mcp.WithMIMEType("application/json")), s.readDPE)
}

func (s *Server) addWindowResource(path string) {
	s.AddResource(mcp.NewResource(s.windowURI(path), "window "+path, mcp.WithMIMEType("text/plain")), s.readWindow)
}

func (s *Server) readWindow(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	u, err := url.Parse(req.Params.URI)
	if err != nil {
		return nil, err
	}
	path := strings.TrimPrefix(u.Path, "/")
	s.mu.Lock()
	w, ok := s.windows[path]
	var v int
	if ok {
		v = w.version
	}
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("window %q not found", path)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain",
		Text: fmt.Sprintf("window %s of %s v%d", path, s.host, v)}}, nil
}

func jsonContents(uri string, v any) ([]mcp.ResourceContents, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}}, nil
}

func smcpErr(e *protocol.Error) error { return fmt.Errorf("%s", protocol.EncodeMCPErrorMessage(e)) }

// readDPE serves the four dpe:// levels (minimal content).
func (s *Server) readDPE(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	raw := req.Params.URI
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "dpe" || u.Host != s.host {
		return nil, smcpErr(protocol.NewInvalidDPEURI("invalid dpe uri %q", raw).With("uri", raw))
	}
	segs := []string{}
	for _, p := range strings.Split(strings.TrimPrefix(u.EscapedPath(), "/"), "/") {
		if p == "" {
			continue
		}
		d, err := url.PathUnescape(p)
		if err != nil {
			return nil, smcpErr(protocol.NewInvalidDPEURI("invalid dpe uri %q", raw).With("uri", raw))
		}
		segs = append(segs, d)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(segs) == 0 { // Level 0
		refs := make([]string, 0, len(s.docs))
		for ref := range s.docs {
			refs = append(refs, ref)
		}
		sort.Strings(refs)
		metas := []protocol.DPEDocumentMeta{}
		for _, ref := range refs {
			d := s.docs[ref]
			lm := d.modified.Format(time.RFC3339)
			metas = append(metas, protocol.DPEDocumentMeta{DocRef: ref, FileType: d.fileType, FileURI: "file:///" + ref + "." + d.fileType,
				PageCount: d.pages, Title: d.title, URI: s.docURI(ref), LastModified: lm})
		}
		return jsonContents(raw, protocol.DPECatalog{Documents: metas, TotalCount: len(metas)})
	}
	ref := segs[0]
	d, ok := s.docs[ref]
	if !ok {
		return nil, smcpErr(protocol.NewDocumentNotFound("document %q not found", ref).With("doc_ref", ref))
	}
	switch {
	case len(segs) == 1:
		lm := d.modified.Format(time.RFC3339)
		summary := fmt.Sprintf("summary of %s v%d", ref, d.version)
		return jsonContents(raw, protocol.DPEDocument{DocRef: ref, FileType: d.fileType, FileURI: "file:///" + ref + "." + d.fileType,
			PageCount: d.pages, Title: d.title, URI: s.docURI(ref), LastModified: lm, Summary: summary, Keywords: []string{"test", ref}})
	case len(segs) == 3 && segs[1] == "pages":
		n, err := strconv.Atoi(segs[2])
		if err != nil || n < 0 {
			return nil, smcpErr(protocol.NewInvalidDPEURI("invalid page index %q", segs[2]).With("uri", raw))
		}
		if n >= d.pages {
			return nil, smcpErr(protocol.NewPageOutOfRange("page %d out of range", n).With("page_index", n).With("page_count", d.pages))
		}
		title := fmt.Sprintf("Page %d", n)
		summary := "first paragraph"
		return jsonContents(raw, protocol.DPEPage{DocRef: ref, PageIndex: n, Title: title, ElementCount: 1, URI: raw,
			Elements: []protocol.DPEElement{{ElementID: fmt.Sprintf("p%d-e1", n), Category: protocol.DPEElementCategoryText,
				Content: map[string]any{"text": fmt.Sprintf("text of page %d", n)}, Summary: summary}}})
	case len(segs) == 3 && segs[1] == "elements":
		id := segs[2]
		var page int
		if _, err := fmt.Sscanf(id, "p%d-e1", &page); err != nil || page < 0 || page >= d.pages {
			return nil, smcpErr(protocol.NewElementNotFound("element %q not found", id).With("element_id", id))
		}
		return jsonContents(raw, protocol.DPEElementDetail{ElementID: id, Category: protocol.DPEElementCategoryText,
			Content: map[string]any{"text": fmt.Sprintf("text of page %d", page)}, DocRef: ref, PageIndex: &page, URI: raw})
	}
	return nil, smcpErr(protocol.NewInvalidDPEURI("invalid dpe uri %q", raw).With("uri", raw))
}

func (s *Server) addTool(name string) {
	switch name {
	case "echo":
		s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo the text back."),
			mcp.WithString("text", mcp.Required()),
			mcp.WithRawOutputSchema(json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)),
			mcp.WithTitleAnnotation("Echo"), mcp.WithReadOnlyHintAnnotation(true),
			func(t *mcp.Tool) {
				t.Meta = &mcp.Meta{AdditionalFields: map[string]any{"category": "test", "nested": map[string]any{"a": 1}}}
			}),
			func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				text := req.GetString("text", "")
				return mcp.NewToolResultStructured(map[string]any{"text": text}, text), nil
			})
	case "slow":
		s.AddTool(mcp.NewTool("slow", mcp.WithDescription("Sleep for seconds (cancellable)."), mcp.WithNumber("seconds", mcp.Required())),
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				d := time.Duration(req.GetFloat("seconds", 1) * float64(time.Second))
				select {
				case <-time.After(d):
					return mcp.NewToolResultText("done"), nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			})
	case "fail":
		s.AddTool(mcp.NewTool("fail", mcp.WithDescription("Fail: mode result (isError result) or rpc (JSON-RPC error)."), mcp.WithString("mode")),
			func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if req.GetString("mode", "result") == "rpc" {
					return nil, fmt.Errorf("fail tool: rpc error")
				}
				return mcp.NewToolResultError("fail tool: error result"), nil
			})
	case "crash":
		s.AddTool(mcp.NewTool("crash", mcp.WithDescription("Exit the process."), mcp.WithNumber("code")),
			func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				os.Exit(req.GetInt("code", 3))
				return nil, nil
			})
	case "image":
		// Not in AllTools: served when asked for (-tools echo,image).
		s.AddTool(mcp.NewTool("image", mcp.WithDescription("Return an image of size pseudo-random bytes (seeded by seed) and, with resource, an embedded resource of the same bytes."),
			mcp.WithNumber("size", mcp.Required()), mcp.WithNumber("seed"), mcp.WithBoolean("resource")),
			func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				data := Bytes(req.GetInt("size", 0), int64(req.GetInt("seed", 1)))
				b64 := base64.StdEncoding.EncodeToString(data)
				res := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("an image"), mcp.NewImageContent(b64, "image/png")}}
				if req.GetBool("resource", false) {
					res.Content = append(res.Content, mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "file:///image.bin", MIMEType: "application/x-test", Blob: b64}))
				}
				return res, nil
			})
	case "pid":
		s.AddTool(mcp.NewTool("pid", mcp.WithDescription("Return the process id.")),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(strconv.Itoa(os.Getpid())), nil
			})
	case "mutate":
		s.AddTool(mcp.NewTool("mutate", mcp.WithDescription("Change resources or tools and notify."),
			mcp.WithString("action", mcp.Required(), mcp.Enum("add_doc", "remove_doc", "update_doc", "add_window", "remove_window", "update_window", "add_tool", "remove_tool", "list_changed")),
			mcp.WithString("id")),
			s.mutate)
	default:
		// A tool added through mutate: echoes its name.
		s.AddTool(mcp.NewTool(name, mcp.WithDescription("Added tool "+name)),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(name), nil
			})
	}
}

// Bytes returns n pseudo-random bytes from seed, the image tool's data.
func Bytes(n int, seed int64) []byte {
	if n < 0 || n > 256<<20 {
		n = 0
	}
	b := make([]byte, n)
	x := uint64(seed)*0x9E3779B97F4A7C15 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return b
}

func (s *Server) notifyUpdated(uri string) {
	s.SendNotificationToAllClients(mcp.MethodNotificationResourceUpdated, map[string]any{"uri": uri})
}

func (s *Server) mutate(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id := req.GetString("id", "")
	action := req.GetString("action", "")
	switch action {
	case "add_doc":
		s.mu.Lock()
		s.docs[id] = &doc{title: "Document " + id, fileType: "md", pages: 2, modified: time.Now().UTC()}
		s.mu.Unlock()
		s.addDocResource(id) // sends resources/list_changed
	case "remove_doc":
		s.mu.Lock()
		delete(s.docs, id)
		s.mu.Unlock()
		s.DeleteResources(s.docURI(id))
	case "update_doc":
		s.mu.Lock()
		if d, ok := s.docs[id]; ok {
			d.version++
			d.modified = time.Now().UTC()
		}
		s.mu.Unlock()
		s.notifyUpdated(s.docURI(id))
	case "add_window":
		path, query, _ := strings.Cut(id, "?")
		s.mu.Lock()
		s.windows[path] = &window{query: query}
		s.mu.Unlock()
		s.addWindowResource(path)
	case "remove_window":
		uri := s.windowURI(id)
		s.mu.Lock()
		delete(s.windows, id)
		s.mu.Unlock()
		s.DeleteResources(uri)
	case "update_window":
		s.mu.Lock()
		if w, ok := s.windows[id]; ok {
			w.version++
		}
		s.mu.Unlock()
		s.notifyUpdated(s.windowURI(id))
	case "add_tool":
		s.addTool(id) // sends tools/list_changed
	case "remove_tool":
		s.DeleteTools(id)
	case "list_changed":
		s.SendNotificationToAllClients(mcp.MethodNotificationResourcesListChanged, nil)
	default:
		return mcp.NewToolResultErrorf("unknown action %q", action), nil
	}
	return mcp.NewToolResultText("ok"), nil
}
