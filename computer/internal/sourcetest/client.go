package sourcetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Client is an mcpsource.Source over a real mcp-go client. It is safe for
// concurrent use.
type Client struct {
	name      string
	c         *client.Client
	subscribe bool
	nextID    atomic.Int64

	mu       sync.Mutex
	handlers []func(method, uri string)
}

var _ mcpsource.Source = (*Client)(nil)

// DialHTTP connects to a streamable HTTP endpoint (with continuous listening,
// so notifications arrive while idle) and closes the client at the end of
// the test.
func DialHTTP(tb testing.TB, name, url string) *Client {
	tb.Helper()
	tr, err := transport.NewStreamableHTTP(url, transport.WithContinuousListening())
	if err != nil {
		tb.Fatalf("sourcetest: %v", err)
	}
	return Connect(tb, name, tr)
}

// DialStdio starts command as an MCP server over stdio and closes (reaps) it
// at the end of the test.
func DialStdio(tb testing.TB, name, command string, args ...string) *Client {
	tb.Helper()
	return Connect(tb, name, transport.NewStdio(command, nil, args...))
}

// Connect starts tr, initializes at revision 2025-11-25 and registers
// cleanup.
func Connect(tb testing.TB, name string, tr transport.Interface) *Client {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := New(ctx, name, tr)
	if err != nil {
		tb.Fatalf("sourcetest: connect %s: %v", name, err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// New starts tr and initializes an MCP session pinned to revision
// 2025-11-25, as the Computer's manager does.
func New(ctx context.Context, name string, tr transport.Interface) (*Client, error) {
	mc := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	// Start's context bounds the connection's life (the stdio child runs
	// under exec.CommandContext, the HTTP listener stops with it): only
	// Close ends it.
	if err := mc.Start(context.Background()); err != nil {
		return nil, err
	}
	s := &Client{name: name, c: mc}
	mc.OnNotification(s.notify)
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "sourcetest", Version: "1.0.0"}
	res, err := mc.Initialize(ctx, init)
	if err != nil {
		_ = mc.Close()
		return nil, err
	}
	s.subscribe = res.Capabilities.Resources != nil && res.Capabilities.Resources.Subscribe
	return s, nil
}

// OnResourceNotification registers fn for notifications/resources/list_changed
// (uri "") and notifications/resources/updated. fn runs on the client's read
// loop: it must not block (start a goroutine, as the manager does).
func (s *Client) OnResourceNotification(fn func(method, uri string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers = append(s.handlers, fn)
}

func (s *Client) notify(n mcp.JSONRPCNotification) {
	var uri string
	switch n.Method {
	case mcp.MethodNotificationResourcesListChanged:
	case mcp.MethodNotificationResourceUpdated:
		if u, ok := n.Params.AdditionalFields["uri"].(string); ok {
			uri = u
		}
	default:
		return
	}
	s.mu.Lock()
	hs := append([]func(string, string){}, s.handlers...)
	s.mu.Unlock()
	for _, h := range hs {
		h(n.Method, uri)
	}
}

// Close ends the session.
func (s *Client) Close() error { return s.c.Close() }

// Name implements mcpsource.Source.
func (s *Client) Name() string { return s.name }

// SupportsSubscribe implements mcpsource.Source.
func (s *Client) SupportsSubscribe() bool { return s.subscribe }

// ListResources implements mcpsource.Source (all pages).
func (s *Client) ListResources(ctx context.Context) ([]mcp.Resource, error) {
	res, err := s.c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		return nil, err
	}
	return res.Resources, nil
}

// ListResourceTemplates implements mcpsource.Source (all pages).
func (s *Client) ListResourceTemplates(ctx context.Context) ([]mcp.ResourceTemplate, error) {
	res, err := s.c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil {
		return nil, err
	}
	return res.ResourceTemplates, nil
}

// Subscribe implements mcpsource.Source.
func (s *Client) Subscribe(ctx context.Context, uri string) error {
	req := mcp.SubscribeRequest{}
	req.Params.URI = uri
	return s.c.Subscribe(ctx, req)
}

// ReadResource implements mcpsource.Source over the raw transport so that a
// JSON-RPC error keeps its code, message and data (*mcpsource.RPCError).
func (s *Client) ReadResource(ctx context.Context, uri string) ([]mcp.ResourceContents, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id := "sourcetest-" + strconv.FormatInt(s.nextID.Add(1), 10)
	resp, err := s.c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId(id),
		Method:  string(mcp.MethodResourcesRead),
		Params:  map[string]any{"uri": uri},
	})
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			return nil, fmt.Errorf("%w: %v", ctxErr, err)
		}
		return nil, err
	}
	if resp.Error != nil {
		e := &mcpsource.RPCError{Code: resp.Error.Code, Message: resp.Error.Message}
		if resp.Error.Data != nil {
			if b, err := json.Marshal(resp.Error.Data); err == nil {
				e.Data = b
			}
		}
		return nil, e
	}
	raw := json.RawMessage(resp.Result)
	res, err := mcp.ParseReadResourceResult(&raw)
	if err != nil {
		return nil, err
	}
	return res.Contents, nil
}

// CallTool calls a tool of the server (the testmcp program's mutate tool, for
// example) and fails on a JSON-RPC error or an error result.
func (s *Client) CallTool(ctx context.Context, name string, args map[string]any) error {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := s.c.CallTool(ctx, req)
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("tool %s: error result", name)
	}
	return nil
}
