package protocol_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/a2c-smcp/smcp-go/protocol"
)

func TestContentText(t *testing.T) {
	hello, world := "hello", "world"
	uri := "dpe://h/doc"
	res := &protocol.CallToolResult{Content: []protocol.ContentBlock{
		{Type: protocol.ContentBlockTypeText, Text: &hello},
		{Type: protocol.ContentBlockTypeImage, Data: &hello},     // no Text: no panic
		{Type: protocol.ContentBlockTypeResourceLink, URI: &uri}, // no Text either
		{Type: protocol.ContentBlockTypeResource, Text: &world},  // not a text block
		{Type: protocol.ContentBlockTypeText},                    // a text block without text
		{Type: protocol.ContentBlockTypeText, Text: &world},
	}}
	require.Equal(t, "hello\n\nworld", res.Text())

	text, ok := res.Content[0].AsText()
	require.True(t, ok)
	require.Equal(t, "hello", text)
	for _, b := range res.Content[1:4] {
		text, ok := b.AsText()
		require.False(t, ok, "%s", b.Type)
		require.Empty(t, text)
	}
	text, ok = res.Content[4].AsText()
	require.True(t, ok)
	require.Empty(t, text)

	var none *protocol.CallToolResult
	require.Empty(t, none.Text())
	require.Empty(t, (&protocol.CallToolResult{}).Text())
}
