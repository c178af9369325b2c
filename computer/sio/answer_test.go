package sio

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// answer runs one request through the session's answerer as onRequest
// does, and returns the ack value as JSON members.
func answer(t *testing.T, a answerer, event string, payload map[string]any) map[string]any {
	t.Helper()
	var v any
	if err := a.check(event, []any{payload}); err != nil {
		v = a.encode(event, err)
	} else {
		v = a.encode(event, a.dispatch(context.Background(), event, payload))
	}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), string(b))
	return m
}

func session(g protocol.Generation, limit int64) answerer {
	return answerer{g: g, limit: limit, name: "pc", h: newHandler(), log: slog.New(slog.DiscardHandler)}
}

// Errors go out in the session's shape: nested in 0.2.0, flat with the
// code-specific members at the top level from 0.3.0 on; a request for
// another Computer is the generation's Computer-not-found.
func TestAnswerErrorShapes(t *testing.T) {
	m := answer(t, session(protocol.Gen02, 0), protocol.EventGetConfig, req(nil))
	assert.Equal(t, float64(404), m["error"].(map[string]any)["code"], "%v", m)

	for _, g := range []protocol.Generation{protocol.Gen03, protocol.Gen04} {
		m := answer(t, session(g, 0), protocol.EventGetConfig, req(nil))
		assert.Equal(t, float64(404), m["code"], "%s: %v", g, m)
		assert.NotContains(t, m, "error")

		m = answer(t, session(g, 0), protocol.EventGetResources, req(map[string]any{"mcp_server": "fs"}))
		assert.Equal(t, float64(4014), m["code"], "%v", m)
		assert.Equal(t, "fs", m["mcp_server"], "4014 names the server at the top level")

		m = answer(t, session(g, 0), protocol.EventGetTools, req(map[string]any{"computer": "other"}))
		want, err := json.Marshal(protocol.ComputerNotFound(g, "other").In(g))
		require.NoError(t, err)
		got, err := json.Marshal(m)
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(got))
	}
	m = answer(t, session(protocol.Gen02, 0), protocol.EventGetTools, req(map[string]any{"computer": "other"}))
	assert.Equal(t, float64(404), m["error"].(map[string]any)["code"])
}

// A request is validated in its session's generation, and an event the
// generation lacks is answered 4106, never passed on.
func TestAnswerEventsOfTheGeneration(t *testing.T) {
	m := answer(t, session(protocol.Gen02, 0), protocol.EventGetSkills, req(nil))
	assert.Equal(t, float64(4106), m["error"].(map[string]any)["code"], "%v", m)
	m = answer(t, session(protocol.Gen03, 0), protocol.EventPutBlob, req(map[string]any{"blob": "", "chunk_offset": 0, "eof": true}))
	assert.Equal(t, float64(4106), m["code"], "no put_blob in 0.3.0: %v", m)

	m = answer(t, session(protocol.Gen04, 0), protocol.EventGetSkills, req(nil))
	assert.Equal(t, []any{}, m["skills"])
	m = answer(t, session(protocol.Gen04, 0), protocol.EventPutBlob, req(map[string]any{"blob": "", "chunk_offset": 0, "eof": true}))
	assert.Equal(t, float64(4019), m["code"], "%v", m)
	// 0.4.0's schema: mcp_server is required.
	m = answer(t, session(protocol.Gen04, 0), protocol.EventGetResources, req(nil))
	assert.Equal(t, float64(400), m["code"], "%v", m)
	assert.Contains(t, m["message"], "mcp_server")
}

// An answer over the Server's message limit is refused with a 413 in the
// session's shape (a tool call's as an error result), not sent for the
// Server to close the connection.
func TestAnswerOverTheMessageLimit(t *testing.T) {
	get := req(map[string]any{"blob_handle": "h"})
	m := answer(t, session(protocol.Gen04, protocol.ReferenceMaxMessageBytes), protocol.EventGetBlob, get)
	assert.Equal(t, float64(413), m["code"], "%.200v", m)
	m = answer(t, session(protocol.Gen04, 0), protocol.EventGetBlob, get)
	assert.Equal(t, "h", m["blob_handle"], "no limit: an smcp-go Server's own is the Handler's bound")

	h := newHandler()
	h.big = protocol.ReferenceMaxMessageBytes
	a := session(protocol.Gen02, protocol.ReferenceMaxMessageBytes)
	a.h = h
	m = answer(t, a, protocol.EventToolCall, req(map[string]any{"tool_name": "t", "params": map[string]any{}, "timeout": 5}))
	assert.Equal(t, true, m["isError"], "%.200v", m)
	assert.Equal(t, float64(413), m["structuredContent"].(map[string]any)["code"])
	b, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, protocol.Gen02.Validate(protocol.EventToolCall, protocol.Ack, b))
}
