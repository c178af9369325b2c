package sio

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zishang520/socket.io/servers/socket/v3"
)

// fakeServer is a minimal SMCP Server for the client's tests: a real
// Socket.IO server on loopback that accepts joins and lets the test send
// client:* requests to the Computer.
type fakeServer struct {
	t      *testing.T
	addr   string
	apiKey string
	refuse atomic.Bool // refuse joins

	mu     sync.Mutex
	io     *socket.Server
	srv    *http.Server
	sock   *socket.Socket
	joins  []map[string]any
	auths  []string
	events []string
	joined chan struct{}
}

func startServer(t *testing.T, addr, apiKey string) *fakeServer {
	f := &fakeServer{t: t, addr: addr, apiKey: apiKey, joined: make(chan struct{}, 10)}
	f.start()
	t.Cleanup(f.stop)
	return f
}

func (f *fakeServer) start() {
	ln, err := net.Listen("tcp", f.addr)
	require.NoError(f.t, err)
	f.addr = ln.Addr().String()
	io := socket.NewServer(nil, socket.DefaultServerOptions())
	mux := http.NewServeMux()
	mux.Handle("/socket.io/", io.ServeHandler(nil))
	srv := &http.Server{Handler: mux}
	nsp := io.Of(protocol.Namespace, nil)
	nsp.Use(func(s *socket.Socket, next func(*socket.ExtendedError)) {
		hs := s.Handshake()
		key := hs.Headers.Header().Get("x-api-key")
		auth, _ := hs.Auth["api_key"].(string)
		f.mu.Lock()
		f.auths = append(f.auths, key+"|"+auth)
		f.mu.Unlock()
		if f.apiKey != "" && key != f.apiKey {
			next(socket.NewExtendedError("unauthorized", map[string]any{"code": 401}))
			return
		}
		next(nil)
	})
	_ = nsp.On("connection", func(args ...any) {
		s := args[0].(*socket.Socket)
		_ = s.On(protocol.EventJoinOffice, func(args ...any) {
			req, _ := args[0].(map[string]any)
			ack := args[len(args)-1].(socket.Ack)
			f.mu.Lock()
			f.joins = append(f.joins, req)
			f.sock = s
			f.mu.Unlock()
			if f.refuse.Load() {
				ack([]any{false, "name taken"}, nil)
				return
			}
			ack([]any{true, nil}, nil)
			f.joined <- struct{}{}
		})
		for _, ev := range []string{protocol.EventUpdateToolList, protocol.EventUpdateFinder} {
			_ = s.On(ev, func(args ...any) {
				f.mu.Lock()
				f.events = append(f.events, ev)
				f.mu.Unlock()
			})
		}
	})
	f.mu.Lock()
	f.io, f.srv = io, srv
	f.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

func (f *fakeServer) stop() {
	f.mu.Lock()
	io, srv := f.io, f.srv
	f.mu.Unlock()
	io.Close(nil)
	_ = srv.Close()
}

func (f *fakeServer) url() string { return "http://" + f.addr }

// request sends event to the joined Computer and returns its ack values.
func (f *fakeServer) request(event string, payload any) []any {
	f.t.Helper()
	f.mu.Lock()
	s := f.sock
	f.mu.Unlock()
	require.NotNil(f.t, s)
	ch := make(chan []any, 1)
	require.NoError(f.t, s.Emit(event, payload, socket.Ack(func(vals []any, _ error) { ch <- vals })))
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		f.t.Fatalf("%s: no ack", event)
		return nil
	}
}

type handler struct {
	block     chan struct{}
	cancelled chan string
}

func (h *handler) GetTools(_ context.Context, req protocol.GetToolsReq) (protocol.GetToolsRet, error) {
	return protocol.GetToolsRet{ReqID: req.ReqID, Tools: []protocol.SMCPTool{}}, nil
}
func (h *handler) ToolCall(_ context.Context, req protocol.ToolCallReq) protocol.CallToolResult {
	text := req.ToolName
	return protocol.CallToolResult{Content: []protocol.ContentBlock{{Type: protocol.ContentBlockTypeText, Text: &text}}}
}
func (h *handler) GetConfig(context.Context, protocol.GetComputerConfigReq) (protocol.GetComputerConfigRet, error) {
	return protocol.GetComputerConfigRet{}, protocol.NewNotFound("no config")
}
func (h *handler) GetDesktop(ctx context.Context, req protocol.GetDesktopReq) (protocol.GetDesktopRet, error) {
	select {
	case <-h.block:
	case <-ctx.Done():
	}
	return protocol.GetDesktopRet{ReqID: req.ReqID, Desktops: []string{"window://a/b"}}, nil
}
func (h *handler) GetFinder(context.Context, protocol.GetFinderReq) (protocol.GetFinderRet, error) {
	panic("boom")
}
func (h *handler) ReadResource(context.Context, protocol.ReadResourceReq) (protocol.ReadResourceRet, error) {
	return protocol.ReadResourceRet{}, protocol.NewDocumentNotFound("nope").With("doc_ref", "x")
}
func (h *handler) CancelToolCall(req protocol.CancelToolCallReq) { h.cancelled <- req.ReqID }

func newHandler() *handler {
	return &handler{block: make(chan struct{}), cancelled: make(chan string, 1)}
}

func errCode(t *testing.T, v any) int {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	e, ok := protocol.DecodeErrorPayload(b)
	require.True(t, ok, string(b))
	return int(e.Code)
}

func req(extra map[string]any) map[string]any {
	m := map[string]any{"agent": "ag", "req_id": "r1", "computer": "pc"}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func TestDialJoinAndAnswer(t *testing.T) {
	f := startServer(t, "127.0.0.1:0", "secret")
	h := newHandler()
	c, err := Dial(context.Background(), f.url(), "office-1", "pc", h, WithAPIKey("secret"))
	require.NoError(t, err)
	defer c.Close()
	assert.True(t, c.Joined())
	f.mu.Lock()
	assert.Equal(t, []string{"secret|secret"}, f.auths)
	assert.Equal(t, map[string]any{"role": "computer", "name": "pc", "office_id": "office-1"}, f.joins[0])
	f.mu.Unlock()

	vals := f.request(protocol.EventGetTools, req(nil))
	require.Len(t, vals, 1, "exactly one ack value")
	b, _ := json.Marshal(vals[0])
	require.NoError(t, protocol.Validate(protocol.EventGetTools, protocol.Ack, b), string(b))
	assert.JSONEq(t, `{"tools":[],"req_id":"r1"}`, string(b))

	vals = f.request(protocol.EventToolCall, req(map[string]any{"tool_name": "echo", "params": map[string]any{}, "timeout": 5}))
	require.Len(t, vals, 1)
	b, _ = json.Marshal(vals[0])
	assert.JSONEq(t, `{"content":[{"type":"text","text":"echo"}]}`, string(b))

	tests := []struct {
		event   string
		payload any
		code    int
	}{
		{protocol.EventGetTools, map[string]any{"agent": "ag"}, 400},
		{protocol.EventGetTools, "not an object", 400},
		{protocol.EventGetTools, req(map[string]any{"computer": "other"}), 404},
		{protocol.EventToolCall, req(map[string]any{"tool_name": "x"}), 400},
		{protocol.EventGetConfig, req(nil), 404},
		{protocol.EventGetFinder, req(nil), 500},
		{protocol.EventReadResource, req(map[string]any{"uri": "dpe://h/x"}), 4201},
	}
	for _, tt := range tests {
		vals := f.request(tt.event, tt.payload)
		require.Len(t, vals, 1, tt.event)
		assert.Equal(t, tt.code, errCode(t, vals[0]), "%s %v", tt.event, tt.payload)
	}
}

func TestSlowHandlerDoesNotBlockQueue(t *testing.T) {
	f := startServer(t, "127.0.0.1:0", "")
	h := newHandler()
	c, err := Dial(context.Background(), f.url(), "o", "pc", h)
	require.NoError(t, err)
	defer c.Close()
	slow := make(chan []any, 1)
	go func() { slow <- f.request(protocol.EventGetDesktop, req(nil)) }()
	// get_desktop blocks in the handler; other requests are still answered.
	for i := 0; i < 3; i++ {
		vals := f.request(protocol.EventGetTools, req(nil))
		require.Len(t, vals, 1)
	}
	close(h.block)
	select {
	case vals := <-slow:
		require.Len(t, vals, 1)
	case <-time.After(10 * time.Second):
		t.Fatal("slow request not answered")
	}
	// notify:tool_call_cancel reaches the handler.
	f.mu.Lock()
	s := f.sock
	f.mu.Unlock()
	require.NoError(t, s.Emit(protocol.NotifyCancelToolCall, map[string]any{"agent": "ag", "req_id": "r-77"}))
	select {
	case id := <-h.cancelled:
		assert.Equal(t, "r-77", id)
	case <-time.After(10 * time.Second):
		t.Fatal("cancel not delivered")
	}
}

func TestRejoinAfterReconnectAndNotify(t *testing.T) {
	f := startServer(t, "127.0.0.1:0", "")
	c, err := Dial(context.Background(), f.url(), "o", "pc", newHandler())
	require.NoError(t, err)
	defer c.Close()
	<-f.joined
	assert.True(t, c.Notify(protocol.EventUpdateToolList))
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.events) == 1
	}, 10*time.Second, 10*time.Millisecond)

	f.stop()
	require.Eventually(t, func() bool { return !c.Joined() }, 10*time.Second, 10*time.Millisecond)
	assert.False(t, c.Notify(protocol.EventUpdateFinder), "not sent while not joined")
	f.start() // same address
	select {
	case <-f.joined:
	case <-time.After(30 * time.Second):
		t.Fatal("did not rejoin after reconnect")
	}
	require.Eventually(t, c.Joined, 10*time.Second, 10*time.Millisecond)
	f.mu.Lock()
	assert.Len(t, f.joins, 2)
	f.mu.Unlock()
	assert.True(t, c.Notify(protocol.EventUpdateFinder))
	vals := f.request(protocol.EventGetTools, req(nil))
	require.Len(t, vals, 1)
}

func TestDialRefused(t *testing.T) {
	f := startServer(t, "127.0.0.1:0", "secret")
	_, err := Dial(context.Background(), f.url(), "o", "pc", newHandler(), WithAPIKey("wrong"))
	require.Error(t, err)
	assert.Equal(t, protocol.CodeUnauthorized, protocol.CodeOf(err))

	f.refuse.Store(true)
	_, err = Dial(context.Background(), f.url(), "o", "pc", newHandler(), WithAPIKey("secret"))
	require.Error(t, err)
	assert.Equal(t, protocol.CodeForbidden, protocol.CodeOf(err))
	assert.Contains(t, err.Error(), "name taken")

	_, err = Dial(context.Background(), "ftp://x", "o", "pc", newHandler())
	assert.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err))
}
