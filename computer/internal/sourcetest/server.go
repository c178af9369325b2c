// Package sourcetest provides real MCP endpoints and an mcpsource.Source
// over a real mark3labs/mcp-go client, for the tests and benchmarks of the
// Finder, the Desktop and the read bridge.
//
// Server is an in-process mcp-go server whose resources the test sets and
// changes (each change sends the MCP notification a real server would);
// Serve puts it behind a real streamable HTTP endpoint (httptest); Client is
// the Source the features consume, pinned to MCP revision 2025-11-25 like the
// Computer's manager, reading over the raw transport so that JSON-RPC error
// codes and data survive (mcpsource.RPCError).
package sourcetest

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Server is an in-process MCP server with test-controlled resources. It
// counts every resources/read it answers.
type Server struct {
	MCP *server.MCPServer

	reads atomic.Int64

	mu       sync.Mutex
	contents map[string][]mcp.ResourceContents // uri → what a read returns
	fail     map[string]error                  // uri → error a read returns
	perURI   map[string]int                    // uri → reads answered
	blocks   map[string]*Block                 // uri → reads held until released
}

// Block holds the reads of one URI (see Server.Block).
type Block struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
	enter   sync.Once
}

// Entered is closed when the first held read has arrived.
func (b *Block) Entered() <-chan struct{} { return b.entered }

// Release lets the held reads, and later ones, answer. Idempotent.
func (b *Block) Release() { b.once.Do(func() { close(b.release) }) }

// Block makes the reads of uri hang until the returned Block is released
// or the request ends (a document whose reads hang); Release is also
// called when the test ends.
func (s *Server) Block(tb testing.TB, uri string) *Block {
	b := &Block{entered: make(chan struct{}), release: make(chan struct{})}
	s.mu.Lock()
	s.blocks[uri] = b
	s.mu.Unlock()
	tb.Cleanup(b.Release)
	return b
}

// ServerOption configures NewServer.
type ServerOption func(*serverConfig)

type serverConfig struct {
	subscribe bool
	pageSize  int
}

// WithoutSubscribe leaves resources.subscribe out of the capabilities.
func WithoutSubscribe() ServerOption { return func(c *serverConfig) { c.subscribe = false } }

// WithPageSize makes resources/list answer pages of n resources (default:
// one unpaged answer).
func WithPageSize(n int) ServerOption { return func(c *serverConfig) { c.pageSize = n } }

// NewServer returns a server declaring resources {subscribe, listChanged}.
func NewServer(opts ...ServerOption) *Server {
	cfg := serverConfig{subscribe: true}
	for _, o := range opts {
		o(&cfg)
	}
	sopts := []server.ServerOption{
		server.WithResourceCapabilities(cfg.subscribe, true),
		server.WithResourceRecovery(),
		server.WithRecovery(),
	}
	if cfg.pageSize > 0 {
		sopts = append(sopts, server.WithPaginationLimit(cfg.pageSize))
	}
	return &Server{
		MCP:      server.NewMCPServer("sourcetest", "1.0.0", sopts...),
		contents: map[string][]mcp.ResourceContents{},
		fail:     map[string]error{},
		perURI:   map[string]int{},
		blocks:   map[string]*Block{},
	}
}

// Resource is one resource to publish.
type Resource struct {
	URI      string
	Contents []mcp.ResourceContents // what resources/read answers
	Err      error                  // if set, resources/read fails with it (-32603)
	// Priority and Fullscreen, when set, are listed as the 0.4 window
	// metadata: annotations.priority and _meta.fullscreen (applied when the
	// URI is new).
	Priority   *float64
	Fullscreen *bool
}

// Text is a single application/json-or-text content for uri.
func Text(uri, mime, text string) []mcp.ResourceContents {
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: mime, Text: text}}
}

// Doc is the Level-1 resource of a DPE document whose body is meta.
func Doc(meta protocol.DPEDocumentMeta) Resource {
	b, err := json.Marshal(meta)
	if err != nil {
		panic(err)
	}
	return Resource{URI: meta.URI, Contents: Text(meta.URI, "application/json", string(b))}
}

// Put publishes (or replaces) resources in one step: one
// notifications/resources/list_changed is sent when a URI is new.
func (s *Server) Put(rs ...Resource) {
	var fresh []server.ServerResource
	s.mu.Lock()
	for _, r := range rs {
		_, known := s.contents[r.URI]
		if !known {
			_, known = s.fail[r.URI]
		}
		delete(s.contents, r.URI)
		delete(s.fail, r.URI)
		if r.Err != nil {
			s.fail[r.URI] = r.Err
		} else {
			s.contents[r.URI] = r.Contents
		}
		if !known {
			// Names must be unique: mcp-go pages by the last name.
			res := mcp.NewResource(r.URI, r.URI, mcp.WithMIMEType("application/json"))
			if r.Priority != nil {
				res.Annotations = &mcp.Annotations{Priority: r.Priority, Audience: []mcp.Role{mcp.RoleAssistant}}
			}
			if r.Fullscreen != nil {
				res.Meta = &mcp.Meta{AdditionalFields: map[string]any{protocol.MetaFullscreen: *r.Fullscreen}}
			}
			fresh = append(fresh, server.ServerResource{Resource: res, Handler: s.handle})
		}
	}
	s.mu.Unlock()
	if len(fresh) > 0 {
		s.MCP.AddResources(fresh...)
	}
}

// Delete removes resources; one list_changed is sent.
func (s *Server) Delete(uris ...string) {
	s.mu.Lock()
	for _, u := range uris {
		delete(s.contents, u)
		delete(s.fail, u)
	}
	s.mu.Unlock()
	s.MCP.DeleteResources(uris...)
}

// ListChanged sends notifications/resources/list_changed without changing
// anything.
func (s *Server) ListChanged() {
	s.MCP.SendNotificationToAllClients(string(mcp.MethodNotificationResourcesListChanged), nil)
}

// Updated sends notifications/resources/updated for uri.
func (s *Server) Updated(uri string) {
	s.MCP.SendNotificationToAllClients(string(mcp.MethodNotificationResourceUpdated), map[string]any{"uri": uri})
}

// Template declares a resource template answered by fn.
func (s *Server) Template(uriTemplate string, fn server.ResourceTemplateHandlerFunc) {
	s.MCP.AddResourceTemplate(mcp.NewResourceTemplate(uriTemplate, uriTemplate), fn)
}

// Reads is the number of resources/read answered (templates excluded).
func (s *Server) Reads() int64 { return s.reads.Load() }

// ReadsOf is the number of resources/read answered for uri.
func (s *Server) ReadsOf(uri string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.perURI[uri]
}

func (s *Server) handle(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	s.reads.Add(1)
	uri := req.Params.URI
	s.mu.Lock()
	b := s.blocks[uri]
	s.mu.Unlock()
	if b != nil {
		b.enter.Do(func() { close(b.entered) })
		select {
		case <-b.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.perURI[uri]++
	if err, ok := s.fail[uri]; ok {
		return nil, err
	}
	c, ok := s.contents[uri]
	if !ok {
		return nil, mcp.ErrResourceNotFound
	}
	return c, nil
}

// Serve puts srv behind a real streamable HTTP endpoint for the duration of
// the test and returns its URL.
func Serve(tb testing.TB, srv *Server) string {
	tb.Helper()
	h := server.NewStreamableHTTPServer(srv.MCP, server.WithStateful(true))
	ts := httptest.NewServer(h)
	tb.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}
