package server

import (
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

	require.True(t, answersEvent(protocol.Gen02, nil, protocol.EventReadResource), "0.2 Computers that declare nothing keep read_resource")
	require.False(t, answersEvent(protocol.Gen02, []string{}, protocol.EventReadResource))
	require.False(t, answersEvent(protocol.Gen04, nil, protocol.EventGetFinder))
	require.True(t, answersEvent(protocol.Gen04, []string{protocol.EventGetFinder}, protocol.EventGetFinder))
	require.False(t, answersEvent(protocol.Gen03, nil, protocol.EventPutBlob))
	require.True(t, answersEvent(protocol.Gen03, nil, protocol.EventGetBlob))
	require.True(t, answersEvent(protocol.Gen02, []string{protocol.EventGetSkills}, protocol.EventGetSkills))
}
