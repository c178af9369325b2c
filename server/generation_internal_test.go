package server

import (
	"encoding/json"
	"testing"

	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/require"
)

// TestErrorShapeOf: the top level of an answer tells an error of either
// shape from a result, whatever the result holds deeper down.
func TestErrorShapeOf(t *testing.T) {
	for raw, want := range map[string]protocol.ErrorShape{
		`{"error":{"code":404,"message":"x"}}`:                               protocol.ErrorShapeNested,
		` {"error" : {"code":404}} `:                                         protocol.ErrorShapeNested,
		`{"error":{"code":404},"req_id":"r"}`:                                protocol.ErrorShapeNone,
		`{"error":"text"}`:                                                   protocol.ErrorShapeNone,
		`{"code":4014,"message":"x","mcp_server":"b"}`:                       protocol.ErrorShapeFlat,
		`{"message":"x","code":404}`:                                         protocol.ErrorShapeFlat,
		`{"code":"404"}`:                                                     protocol.ErrorShapeNone,
		`{"content":[],"isError":true,"structuredContent":{"code":4001}}`:    protocol.ErrorShapeNone,
		`{"content":[{"type":"text","text":"{\"code\":1}"}],"isError":true}`: protocol.ErrorShapeNone,
		`[{"code":1}]`:                                                       protocol.ErrorShapeNone,
		`{"code":`:                                                           protocol.ErrorShapeNone,
		``:                                                                   protocol.ErrorShapeNone,
	} {
		require.Equal(t, want, errorShapeOf([]byte(raw)), raw)
	}
}

// TestGenerationTables: which events every generation's Computers answer,
// and which generations lack a notification.
func TestGenerationTables(t *testing.T) {
	var universal []string
	for _, ev := range clientEvents {
		if universalEvents[ev] {
			universal = append(universal, ev)
		}
	}
	require.ElementsMatch(t, []string{protocol.EventToolCall, protocol.EventGetTools, protocol.EventGetConfig, protocol.EventGetDesktop}, universal)
	require.Contains(t, clientEvents, protocol.EventPutBlob)
	require.Equal(t, map[protocol.Generation]bool{protocol.Gen02: true}, lacksNotifications)
	require.Equal(t, []string{string(lacksRoom(protocol.Gen02))}, func() (out []string) {
		for _, r := range notifyExcept(protocol.NotifyUpdateSkills) {
			out = append(out, string(r))
		}
		return out
	}())
	require.Empty(t, notifyExcept(protocol.NotifyUpdateFinder))
}

// TestAppendCaller: the member is appended to the Agent's bytes, trailing
// space and an empty object included, and the result is the object with
// the member; bytes that do not end an object are left to withCaller's
// re-encoding, as is a request holding the member already.
func TestAppendCaller(t *testing.T) {
	for raw, want := range map[string]string{
		`{"req_id":"r"}`:        `{"req_id":"r","a2c_caller_version":"0.2.0"}`,
		"{\"req_id\":\"r\"} \n": `{"req_id":"r","a2c_caller_version":"0.2.0"}`,
		`{}`:                    `{"a2c_caller_version":"0.2.0"}`,
		`{ }`:                   `{ "a2c_caller_version":"0.2.0"}`,
	} {
		got, ok := appendCaller([]byte(raw), protocol.Gen02)
		require.True(t, ok, raw)
		require.JSONEq(t, want, string(got), raw)
	}
	_, ok := appendCaller([]byte(`[1]`), protocol.Gen02)
	require.False(t, ok)

	forged := map[string]any{"req_id": "r", protocol.CallerVersionMember: "0.4.0"}
	got := withCaller(json.RawMessage(`{"req_id":"r","a2c_caller_version":"0.4.0"}`), forged, protocol.Gen02)
	require.Equal(t, map[string]any{"req_id": "r", protocol.CallerVersionMember: "0.2.0"}, got)
	require.Equal(t, "0.4.0", forged[protocol.CallerVersionMember], "the decoded request is not changed")

	n := &nodeCaller{Version: "0.3.0", Office: "o", Name: "c"}
	j := nodeJSON(`{"req_id":"r"}`)
	require.JSONEq(t, `{"req_id":"r","a2c_caller_version":"0.3.0"}`, string(n.add(&j).(json.RawMessage)))
	n.Forged = true
	j = nodeJSON(`{"req_id":"r","a2c_caller_version":"0.4.0"}`)
	require.JSONEq(t, `{"req_id":"r","a2c_caller_version":"0.3.0"}`, string(n.add(&j).(json.RawMessage)))
	b, err := n.MarshalMsgpack()
	require.NoError(t, err)
	var back nodeCaller
	require.NoError(t, back.UnmarshalMsgpack(b))
	require.Equal(t, *n, back)
	require.Error(t, back.UnmarshalMsgpack([]byte(`{"v":"9.9.0","o":"o","n":"c"}`)))
	require.Error(t, back.UnmarshalMsgpack([]byte(`{"v":"0.2.0","o":"","n":"c"}`)))
}
