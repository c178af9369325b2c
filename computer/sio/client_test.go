package sio

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/internal/siotest"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type handler struct {
	block     chan struct{}
	cancelled chan string
	big       int // the length of the text a tool call answers, when set
}

func (h *handler) GetTools(_ context.Context, _ protocol.Generation, req protocol.GetToolsReq) (protocol.GetToolsRet, error) {
	return protocol.GetToolsRet{ReqID: req.ReqID, Tools: []protocol.SMCPTool{}}, nil
}
func (h *handler) ToolCall(_ context.Context, _ protocol.Generation, req protocol.ToolCallReq) protocol.CallToolResult {
	text := req.ToolName
	if h.big > 0 {
		text = strings.Repeat("x", h.big)
	}
	return protocol.CallToolResult{Content: []protocol.ContentBlock{{Type: protocol.ContentBlockTypeText, Text: &text}}}
}
func (h *handler) GetConfig(context.Context, protocol.Generation, protocol.GetComputerConfigReq) (protocol.GetComputerConfigRet, error) {
	return protocol.GetComputerConfigRet{}, protocol.NewNotFound("no config")
}
func (h *handler) GetDesktop(ctx context.Context, _ protocol.Generation, req protocol.GetDesktopReq) (protocol.GetDesktopRet, error) {
	select {
	case <-h.block:
	case <-ctx.Done():
	}
	return protocol.GetDesktopRet{ReqID: req.ReqID, Desktops: []string{"window://a/b"}}, nil
}
func (h *handler) GetFinder(context.Context, protocol.Generation, protocol.GetFinderReq) (protocol.GetFinderRet, error) {
	panic("boom")
}
func (h *handler) ReadResource(context.Context, protocol.Generation, protocol.ReadResourceReq) (protocol.ReadResourceRet, error) {
	return protocol.ReadResourceRet{}, protocol.NewDocumentNotFound("nope").With("doc_ref", "x")
}
func (h *handler) GetResources(_ context.Context, g protocol.Generation, req protocol.GetResourcesReq) (protocol.GetResourcesRet, error) {
	return protocol.GetResourcesRet{}, protocol.NewMCPServerNotFound("no %s", req.MCPServer).WithField("mcp_server", req.MCPServer)
}
func (h *handler) GetSkills(_ context.Context, g protocol.Generation, req protocol.GetSkillsReq) (protocol.GetSkillsRet, error) {
	return protocol.GetSkillsRet{ReqID: req.ReqID, Skills: []protocol.A2CSkillRef{}}, nil
}
func (h *handler) GetSkill(context.Context, protocol.Generation, protocol.GetSkillReq) (protocol.GetSkillRet, error) {
	return protocol.GetSkillRet{}, protocol.NewMCPServerNotFound("no skill")
}
func (h *handler) GetBlob(_ context.Context, _ protocol.Generation, req protocol.GetBlobReq) (protocol.GetBlobRet, error) {
	// An answer over any message limit.
	return protocol.GetBlobRet{ReqID: req.ReqID, BlobHandle: req.BlobHandle, Blob: strings.Repeat("A", protocol.ReferenceMaxMessageBytes)}, nil
}
func (h *handler) PutBlob(context.Context, protocol.Generation, protocol.PutBlobReq) (protocol.PutBlobRet, error) {
	return protocol.PutBlobRet{}, protocol.NewBlobWriteFailed("no").With("reason", "forbidden")
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
	f := siotest.Start(t, "127.0.0.1:0", "secret")
	h := newHandler()
	// The 0.2.0 wire (answers in 0.3/0.4: answer_test.go).
	c, err := Dial(context.Background(), f.URL(), "office-1", "pc", h, WithAPIKey("secret"), WithGenerations(protocol.Gen02))
	require.NoError(t, err)
	defer c.Close()
	assert.True(t, c.Joined())
	// Every namespace handshake carries the key both as header and as auth
	// payload. The client library occasionally sends the namespace CONNECT
	// twice on one connection (spec/decisions.md, Socket.IO defects), so the
	// count is not fixed.
	auths := f.Auths()
	require.NotEmpty(t, auths)
	for _, a := range auths {
		assert.Equal(t, "secret|secret", a)
	}
	assert.Equal(t, map[string]any{"role": "computer", "name": "pc", "office_id": "office-1"}, f.Joins()[0])

	vals := f.Request(protocol.EventGetTools, req(nil))
	require.Len(t, vals, 1, "exactly one ack value")
	b, _ := json.Marshal(vals[0])
	require.NoError(t, protocol.Validate(protocol.EventGetTools, protocol.Ack, b), string(b))
	assert.JSONEq(t, `{"tools":[],"req_id":"r1"}`, string(b))

	vals = f.Request(protocol.EventToolCall, req(map[string]any{"tool_name": "echo", "params": map[string]any{}, "timeout": 5}))
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
		vals := f.Request(tt.event, tt.payload)
		require.Len(t, vals, 1, tt.event)
		assert.Equal(t, tt.code, errCode(t, vals[0]), "%s %v", tt.event, tt.payload)
	}
}

func TestSlowHandlerDoesNotBlockQueue(t *testing.T) {
	f := siotest.Start(t, "127.0.0.1:0", "")
	h := newHandler()
	c, err := Dial(context.Background(), f.URL(), "o", "pc", h)
	require.NoError(t, err)
	defer c.Close()
	slow := make(chan []any, 1)
	go func() { slow <- f.Request(protocol.EventGetDesktop, req(nil)) }()
	// get_desktop blocks in the handler; other requests are still answered.
	for i := 0; i < 3; i++ {
		vals := f.Request(protocol.EventGetTools, req(nil))
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
	f.Emit(protocol.NotifyCancelToolCall, map[string]any{"agent": "ag", "req_id": "r-77"})
	select {
	case id := <-h.cancelled:
		assert.Equal(t, "r-77", id)
	case <-time.After(10 * time.Second):
		t.Fatal("cancel not delivered")
	}
}

func TestRejoinAfterReconnectAndNotify(t *testing.T) {
	f := siotest.Start(t, "127.0.0.1:0", "")
	c, err := Dial(context.Background(), f.URL(), "o", "pc", newHandler())
	require.NoError(t, err)
	defer c.Close()
	<-f.Joined
	assert.True(t, c.Notify(protocol.EventUpdateToolList))
	assert.Equal(t, protocol.EventUpdateToolList, <-f.Events)

	f.Stop()
	require.Eventually(t, func() bool { return !c.Joined() }, 10*time.Second, 10*time.Millisecond)
	assert.False(t, c.Notify(protocol.EventUpdateFinder), "not sent while not joined")
	f.Restart() // same address
	select {
	case <-f.Joined:
	case <-time.After(30 * time.Second):
		t.Fatal("did not rejoin after reconnect")
	}
	require.Eventually(t, c.Joined, 10*time.Second, 10*time.Millisecond)
	assert.Len(t, f.Joins(), 2)
	assert.True(t, c.Notify(protocol.EventUpdateFinder))
	assert.Equal(t, protocol.EventUpdateFinder, <-f.Events)
	vals := f.Request(protocol.EventGetTools, req(nil))
	require.Len(t, vals, 1)
}

func TestDialRefused(t *testing.T) {
	f := siotest.Start(t, "127.0.0.1:0", "secret")
	_, err := Dial(context.Background(), f.URL(), "o", "pc", newHandler(), WithAPIKey("wrong"))
	require.Error(t, err)
	assert.Equal(t, protocol.CodeUnauthorized, protocol.CodeOf(err))

	f.RefuseJoin.Store(true)
	_, err = Dial(context.Background(), f.URL(), "o", "pc", newHandler(), WithAPIKey("secret"))
	require.Error(t, err)
	assert.Equal(t, protocol.CodeForbidden, protocol.CodeOf(err))
	assert.Contains(t, err.Error(), "name taken")

	_, err = Dial(context.Background(), "ftp://x", "o", "pc", newHandler())
	assert.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err))
}

// TestNoticeOnTheWireBeforeClose: a notice the Computer emits (no ack) is
// written before Close returns, though the namespace DISCONNECT and the
// connection's close follow right behind it: the Server receives every one
// (issue 24).
func TestNoticeOnTheWireBeforeClose(t *testing.T) {
	f := siotest.Start(t, "127.0.0.1:0", "")
	const rounds = 20
	for i := range rounds {
		c, err := Dial(context.Background(), f.URL(), "office-1", "pc", newHandler())
		require.NoError(t, err)
		require.True(t, c.Notify(protocol.EventUpdateConfig), "round %d", i)
		require.NoError(t, c.Close())
		select {
		case ev := <-f.Events:
			require.Equal(t, protocol.EventUpdateConfig, ev)
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: the notice did not reach the server", i)
		}
	}
}

// TestDialErrors: a Server that cannot be reached is a retryable 503 that
// wraps the network's error and matches ErrUnreachable; a context the
// caller cancels is a 408 that wraps context.Canceled; neither is a
// refusal by the Server.
func TestDialErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	_, err = Dial(context.Background(), "http://"+addr, "o", "pc", newHandler())
	require.Equal(t, protocol.CodeUnavailable, protocol.CodeOf(err), "%v", err)
	require.True(t, protocol.CodeOf(err).Retryable())
	require.ErrorIs(t, err, ErrUnreachable)
	var op *net.OpError
	require.ErrorAs(t, err, &op)
	require.ErrorIs(t, err, syscall.ECONNREFUSED)

	// A listener that accepts and never answers; the caller cancels once
	// the connection is accepted.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer silent.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		c, err := silent.Accept()
		if err == nil {
			defer c.Close()
			cancel()
			<-t.Context().Done()
		}
	}()
	_, err = Dial(ctx, "http://"+silent.Addr().String(), "o", "pc", newHandler())
	require.Equal(t, protocol.CodeTimeout, protocol.CodeOf(err), "%v", err)
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, ErrUnreachable)
}

// TestDialGenerations: the Computer names its generation in every
// Engine.IO request (the newest by default, none when pinned to 0.2.0),
// reports the session's generation and whether the Server confirmed it,
// and lists its extension events in server:join_office only to a Server
// that confirmed the generation.
func TestDialGenerations(t *testing.T) {
	for _, tc := range []struct {
		name       string
		confirm    bool
		strict     bool // the server gates versions, as the 0.4 references do
		opts       []Option
		gen        protocol.Generation
		version    string
		extensions any
	}{
		{"reference server", false, true, nil, protocol.Gen04, "0.4.0", nil},
		// Asked by a request naming no version (its "-"), a Server that
		// ignores versions is found to speak 0.2.0.
		{"old server", false, false, nil, protocol.Gen02, "", nil},
		{"reference server, 0.4 only", false, false, []Option{WithGenerations(protocol.Gen04, protocol.Gen03)}, protocol.Gen04, "0.4.0", nil},
		{"smcp-go server", true, false, nil, protocol.Gen04, "0.4.0", []any{protocol.EventGetFinder, protocol.EventReadResource, protocol.EventComplete}},
		{"smcp-go server, 0.2 pinned", true, false, []Option{WithGenerations(protocol.Gen02)}, protocol.Gen02, "-", []any{protocol.EventReadResource, protocol.EventComplete}},
		{"smcp-go server, no extensions", true, false, []Option{WithExtensions()}, protocol.Gen04, "0.4.0", nil},
		{"smcp-go server, core events left out", true, false, []Option{WithGenerations(protocol.Gen02), WithExtensions(protocol.EventGetFinder, protocol.EventReadResource)}, protocol.Gen02, "-", []any{protocol.EventReadResource}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := siotest.Start(t, "127.0.0.1:0", "")
			f.Confirm.Store(tc.confirm)
			f.Strict.Store(tc.strict)
			c, err := Dial(context.Background(), f.URL(), "office-1", "pc", newHandler(), tc.opts...)
			require.NoError(t, err)
			defer c.Close()
			assert.Equal(t, tc.gen, c.Generation())
			assert.Equal(t, tc.confirm, c.Confirmed())
			if tc.version == "" {
				assert.Equal(t, []string{"0.4.0", "-", "-"}, f.Versions(), "the handshake, then the probe and its close")
			}
			for _, v := range f.Versions() {
				if tc.version != "" {
					assert.Equal(t, tc.version, v)
				}
			}
			join := f.Joins()[0]
			if tc.extensions == nil {
				assert.NotContains(t, join, "extensions")
			} else {
				assert.Equal(t, tc.extensions, join["extensions"])
			}
		})
	}
}

// TestDialDropped: a Server that drops the session as soon as it accepted
// it (the Rust 0.4.1 Server's answer to a wrong key) fails Dial with a 401
// refusal, not with Dial's timeout.
func TestDialDropped(t *testing.T) {
	f := siotest.Start(t, "127.0.0.1:0", "")
	f.DropOnConnect.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Dial(ctx, f.URL(), "office-1", "pc", newHandler(), WithTimeout(time.Minute))
	require.Error(t, err)
	assert.Equal(t, protocol.CodeUnauthorized, protocol.CodeOf(err), "%v", err)
	require.NoError(t, ctx.Err(), "Dial waited for its bound")
}
