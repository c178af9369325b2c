package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/mcpsource"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An answer over the message limit is never held whole: it is dropped, its
// request fails at once with 413 (not at its timeout), and the connection
// keeps serving.
func TestOversizeAnswerRefusedWith413(t *testing.T) {
	var logs logSink
	m := NewManager([]protocol.MCPServerConfig{stdioConfig(t, "a", "-huge-read", "3000000")},
		WithLogger(logs.logger()), WithMaxMessageBytes(1<<20), WithTimeouts(30*time.Second, 30*time.Second))
	defer m.Close(context.Background())
	require.NoError(t, m.Start(context.Background()))
	c := m.Conn("a")
	require.NotNil(t, c)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := c.ReadResource(ctx, "dpe://test/huge")
	var rpc *mcpsource.RPCError
	require.True(t, errors.As(err, &rpc), "got %v", err)
	assert.Equal(t, 413, rpc.Code)
	assert.Contains(t, rpc.Message, "limit of 1048576 bytes")
	var data struct {
		LimitBytes int `json:"limit_bytes"`
		SizeBytes  int `json:"size_bytes"`
	}
	require.NoError(t, json.Unmarshal(rpc.Data, &data))
	assert.Equal(t, 1<<20, data.LimitBytes)
	assert.Greater(t, data.SizeBytes, 3000000, "the whole answer, counted while dropped")
	assert.NoError(t, ctx.Err(), "answered before the deadline")

	assert.Equal(t, 1, c.proc.oversizeLines())
	recs := logs.records("mcp server wrote a message over the size limit on stdout (dropped)")
	require.Len(t, recs, 1)
	assert.Equal(t, "WARN", recs[0]["level"])
	assert.Equal(t, "hi", callText(t, c, "echo", map[string]any{"text": "hi"}), "the connection keeps serving")
	assert.Same(t, c, m.Conn("a"), "not restarted")
}

// The id of an oversized answer is looked for only before its result.
func TestJSONRPCIDOfPrefix(t *testing.T) {
	for _, tc := range []struct {
		in, id string
		ok     bool
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"contents":[{"text":"xxxx`, `7`, true},
		{`{"jsonrpc":"2.0","id":"smcp-3","error":{"code":1`, `"smcp-3"`, true},
		{`{"id":{"a":1},"result":`, ``, false},
		{`{"jsonrpc":"2.0","result":{"x":1},"id":3}`, ``, false},
		{`{"jsonrpc":"2.0","method":"notifications/x","id":1,"result":`, ``, false},
		{`["id",1]`, ``, false},
		{`{"jsonrpc":"2.0","id":1`, ``, false},
	} {
		id, ok := jsonrpcID([]byte(tc.in))
		assert.Equal(t, tc.ok, ok, tc.in)
		assert.Equal(t, tc.id, string(id), tc.in)
	}
}
