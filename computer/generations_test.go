package computer

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/internal/siotest"
	"github.com/a2c-smcp/smcp-go/computer/internal/sourcetest"
	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/computer/sio"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two MCP servers whose names derive one bundle_id: the first keeps it, the
// second is refused (logged, not started, Ready says so with a 400), and a
// PutServer that would take a bundle_id another server has is refused. A
// 0.4 session lists and calls the tools by exposed name and sees the config
// keyed by bundle_id; a 0.2 session keeps the bare names.
func TestBundleIDsOfAComputer(t *testing.T) {
	bin := testmcp.Binary(t)
	cfg, err := config.Parse(fmt.Appendf(nil, `[
	  {"name":"my.fs","type":"stdio","default_tool_meta":{"auto_apply":true},"server_parameters":{"command":%q,"args":["-host","h1","-tools","echo"]}},
	  {"name":"my fs","type":"stdio","default_tool_meta":{"auto_apply":true},"server_parameters":{"command":%q,"args":["-host","h2","-tools","echo"]}},
	  {"name":"plain","type":"stdio","default_tool_meta":{"auto_apply":true},"server_parameters":{"command":%q,"args":["-no-resources","-tools","pid"]}}
	]`, bin, bin, bin))
	require.NoError(t, err)
	var logs sourcetest.LogRecorder
	c := New(cfg, WithLogger(logs.Logger()), WithInputs(config.WithPrompter(nil)))
	t.Cleanup(func() { c.Close(context.Background()) })
	require.NoError(t, c.Launch(context.Background()))
	err = c.Ready(context.Background())
	require.Error(t, err)
	assert.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err))
	assert.Contains(t, err.Error(), `"my fs"`)
	assert.Contains(t, logs.Warnings(), `MCP server refused: not started server=my fs err=MCP server "my fs" has bundle_id "my_fs", which MCP server "my.fs" already has: set a distinct bundle_id`)
	names := map[string]bool{}
	for _, st := range c.Status() {
		names[st.Name] = true
	}
	assert.Equal(t, map[string]bool{"my.fs": true, "plain": true}, names, "the refused server is not started")

	assert.Equal(t, []string{"echo", "pid"}, toolNames(c))
	var exposed []string
	for _, tl := range c.Tools(protocol.Gen04) {
		exposed = append(exposed, tl.BundleID+" "+tl.Name)
	}
	assert.Equal(t, []string{"my_fs my_fs__echo", "plain plain__pid"}, exposed)
	res := c.CallTool(context.Background(), protocol.Gen04, protocol.ToolCallReq{Agent: "ag", Computer: "pc", ReqID: "r", ToolName: "my_fs__echo", Params: map[string]any{"text": "hi"}, Timeout: 10})
	require.Nil(t, res.IsError, "%+v", res)
	assert.Equal(t, "hi", res.Text())

	ret := c.Config(protocol.Gen04)
	assert.ElementsMatch(t, []string{"my_fs", "plain"}, keysOf(ret.Servers))
	assert.Equal(t, "my.fs", ret.Servers["my_fs"].Name())
	assert.Len(t, c.Config(protocol.Gen02).Servers, 3, "0.2.0: the config as written, by name")

	clash := protocol.MCPServerConfig{Stdio: &protocol.MCPStdioConfig{Name: "plain!", ServerParameters: protocol.MCPStdioParameters{Command: bin}}}
	err = c.PutServer(context.Background(), clash)
	require.Error(t, err)
	assert.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(err))
	assert.Equal(t, "plain", protocol.AsError(err).Details["held_by"])
	given := protocol.MCPServerConfig{Stdio: &protocol.MCPStdioConfig{Name: "other", BundleID: "my_fs", ServerParameters: protocol.MCPStdioParameters{Command: bin}}}
	assert.Equal(t, protocol.CodeBadRequest, protocol.CodeOf(c.PutServer(context.Background(), given)), "an explicit bundle_id clashes too")
	assert.Len(t, c.Config(protocol.Gen02).Servers, 3, "neither was added")
}

// The 0.4 events are answered with the references' codes: 4014 for a
// bundle_id no server has, 4015 for a server without resources, an empty
// skills list, 4014 for a skill, 4018 for a blob, 4019 for an upload.
func TestEventsOf04Answered(t *testing.T) {
	bin := testmcp.Binary(t)
	cfg, err := config.Parse(fmt.Appendf(nil, `[
	  {"name":"plain","type":"stdio","server_parameters":{"command":%q,"args":["-no-resources","-tools","pid"]}}
	]`, bin))
	require.NoError(t, err)
	c := newComputer(t, cfg)
	h := handler{c}
	ctx := context.Background()
	g := protocol.Gen04
	check := func(err error, code protocol.Code) *protocol.Error {
		t.Helper()
		require.Error(t, err)
		e := protocol.AsError(err)
		assert.Equal(t, code, e.Code, "%v", e)
		b, jerr := json.Marshal(e.In(g))
		require.NoError(t, jerr)
		d, ok := protocol.DecodeError(b)
		require.True(t, ok, "a 0.4 reader takes it as an error: %s", b)
		assert.Equal(t, code, d.Code)
		return e
	}
	_, err = h.GetResources(ctx, g, protocol.GetResourcesReq{Agent: "ag", Computer: "pc", ReqID: "r", MCPServer: "nope"})
	assert.Equal(t, "nope", check(err, protocol.CodeMCPServerNotFound).Fields["mcp_server"])
	_, err = h.GetResources(ctx, g, protocol.GetResourcesReq{Agent: "ag", Computer: "pc", ReqID: "r", MCPServer: "plain"})
	e := check(err, protocol.CodeMCPCapabilityNotSupported)
	assert.Equal(t, "resources", e.Fields["capability"])
	assert.Contains(t, e.Message, "does not declare the resources capability")

	skills, err := h.GetSkills(ctx, g, protocol.GetSkillsReq{Agent: "ag", Computer: "pc", ReqID: "r"})
	require.NoError(t, err)
	b, err := json.Marshal(skills)
	require.NoError(t, err)
	require.NoError(t, g.Validate(protocol.EventGetSkills, protocol.Ack, b), string(b))
	_, err = h.GetSkill(ctx, g, protocol.GetSkillReq{Agent: "ag", Computer: "pc", ReqID: "r", Name: "x"})
	assert.Equal(t, "x", check(err, protocol.CodeMCPServerNotFound).Details["name"])
	_, err = h.GetBlob(ctx, g, protocol.GetBlobReq{Agent: "ag", Computer: "pc", ReqID: "r", BlobHandle: "h"})
	assert.Equal(t, "invalid_handle", check(err, protocol.CodeBlobNotAccessible).Details["reason"])
	_, err = h.PutBlob(ctx, g, protocol.PutBlobReq{Agent: "ag", Computer: "pc", ReqID: "r", Eof: true})
	assert.Equal(t, "forbidden", check(err, protocol.CodeBlobWriteFailed).Details["reason"])
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// To a Server that did not confirm it is smcp-go, the tool list is kept
// within the reference Servers' message limit; to one that did, within the
// Computer's payload limit.
func TestToolListWithinTheReferenceLimit(t *testing.T) {
	bin := testmcp.Binary(t)
	cfg, err := config.Parse(fmt.Appendf(nil, `[
	  {"name":"many","type":"stdio","default_tool_meta":{"auto_apply":true},"server_parameters":{"command":%q,"args":["-no-resources","-tools","echo","-many-tools","8000"]}}
	]`, bin))
	require.NoError(t, err)
	size := func(c *Computer) int {
		b, err := json.Marshal(protocol.GetToolsRet{ReqID: "r", Tools: c.Tools(protocol.Gen04)})
		require.NoError(t, err)
		return len(b)
	}
	for _, confirm := range []bool{false, true} {
		t.Run(fmt.Sprint("confirmed=", confirm), func(t *testing.T) {
			c := newComputer(t, cfg)
			all := size(c)
			require.Greater(t, all, protocol.ReferenceMaxMessageBytes, "the listing is larger than the limit")
			srv := siotest.Start(t, "127.0.0.1:0", "")
			srv.Confirm.Store(confirm)
			require.NoError(t, c.Connect(context.Background(), srv.URL(), "o", "pc", sio.WithGenerations(protocol.Gen04)))
			if confirm {
				assert.Equal(t, all, size(c))
				return
			}
			assert.LessOrEqual(t, size(c), protocol.ReferenceMaxMessageBytes)
			assert.Greater(t, size(c), protocol.ReferenceMaxMessageBytes/2, "a prefix of the tools is kept")
		})
	}
}
