package sio

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/a2c-smcp/smcp-go/computer/internal/siotest"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// genHandler records the generation each tool list and tool call was
// answered in.
type genHandler struct {
	*handler
	gens chan protocol.Generation
}

func (h *genHandler) GetTools(ctx context.Context, g protocol.Generation, req protocol.GetToolsReq) (protocol.GetToolsRet, error) {
	h.gens <- g
	return h.handler.GetTools(ctx, g, req)
}

func (h *genHandler) ToolCall(ctx context.Context, g protocol.Generation, req protocol.ToolCallReq) protocol.CallToolResult {
	h.gens <- g
	return h.handler.ToolCall(ctx, g, req)
}

// TestAnswerInCallersGeneration: on a Server that confirmed the session's
// generation, a request naming its caller's version
// (protocol.CallerVersionMember) is validated and answered in the
// caller's generation when the Computer speaks it, the member upsetting
// neither validation nor the call; otherwise, and always on a Server that
// did not confirm, in the session's.
func TestAnswerInCallersGeneration(t *testing.T) {
	for _, tc := range []struct {
		name    string
		confirm bool
		opts    []Option
		caller  any // the member's value; nil: absent
		want    protocol.Generation
	}{
		{"0.2 caller", true, nil, "0.2.0", protocol.Gen02},
		{"0.3 caller", true, nil, "0.3.0", protocol.Gen03},
		{"0.4 caller", true, nil, "0.4.0", protocol.Gen04},
		{"no member", true, nil, nil, protocol.Gen04},
		{"unknown version", true, nil, "9.9.0", protocol.Gen04},
		{"not a version", true, nil, 2, protocol.Gen04},
		{"a generation the Computer does not speak", true, []Option{WithGenerations(protocol.Gen04, protocol.Gen03)}, "0.2.0", protocol.Gen04},
		{"unconfirmed server", false, nil, "0.2.0", protocol.Gen04},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := siotest.Start(t, "127.0.0.1:0", "")
			f.Confirm.Store(tc.confirm)
			// A Server that does not confirm gates versions here, as the
			// 0.4 references do: one that ignores them is a 0.2 Server,
			// which makes the session 0.2.0 (TestDialGenerations).
			f.Strict.Store(!tc.confirm)
			h := &genHandler{handler: newHandler(), gens: make(chan protocol.Generation, 1)}
			c, err := Dial(context.Background(), f.URL(), "office-1", "pc", h, tc.opts...)
			require.NoError(t, err)
			defer c.Close()
			require.Equal(t, protocol.Gen04, c.Generation())
			member := map[string]any{}
			if tc.caller != nil {
				member[protocol.CallerVersionMember] = tc.caller
			}

			vals := f.Request(protocol.EventGetTools, req(member))
			require.Len(t, vals, 1)
			assert.Equal(t, tc.want, <-h.gens)
			b, _ := json.Marshal(vals[0])
			require.NoError(t, tc.want.Validate(protocol.EventGetTools, protocol.Ack, b), string(b))

			call := req(map[string]any{"tool_name": "echo", "params": map[string]any{}, "timeout": 5})
			for k, v := range member {
				call[k] = v
			}
			vals = f.Request(protocol.EventToolCall, call)
			require.Len(t, vals, 1)
			assert.Equal(t, tc.want, <-h.gens)
			b, _ = json.Marshal(vals[0])
			assert.JSONEq(t, `{"content":[{"type":"text","text":"echo"}]}`, string(b))

			// Errors in the answering generation's shape: nested for 0.2.
			vals = f.Request(protocol.EventGetConfig, req(member))
			require.Len(t, vals, 1)
			b, _ = json.Marshal(vals[0])
			var nested struct {
				Error *struct{ Code int } `json:"error"`
			}
			require.NoError(t, json.Unmarshal(b, &nested))
			assert.Equal(t, tc.want == protocol.Gen02, nested.Error != nil, string(b))
			e, ok := protocol.DecodeError(b)
			require.True(t, ok, string(b))
			assert.Equal(t, protocol.Code(404), e.Code)

			// An event the answering generation lacks: 4106.
			vals = f.Request(protocol.EventGetSkills, req(member))
			require.Len(t, vals, 1)
			if tc.want == protocol.Gen02 {
				b, _ = json.Marshal(vals[0])
				e, ok := protocol.DecodeError(b)
				require.True(t, ok, string(b))
				assert.Equal(t, protocol.Code(4106), e.Code)
			} else {
				b, _ = json.Marshal(vals[0])
				assert.JSONEq(t, `{"req_id":"r1","skills":[]}`, string(b))
			}
		})
	}
}
