package computer

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/computer/internal/sourcetest"
	"github.com/a2c-smcp/smcp-go/computer/internal/testmcp"
	"github.com/a2c-smcp/smcp-go/computer/mcpclient"
	"github.com/a2c-smcp/smcp-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An MCP server that lists 40,000 tools (10 MB of definitions; 100,000 behave
// alike, see spec/decisions.md) and one whose tool has a 10 MB input schema: the tool list the Computer publishes still fits one
// get_tools answer and is valid, the huge tool is withheld with 413, the
// server listing too much keeps a prefix of its tools, a third server keeps
// all of its tools, and every published tool answers.
func TestToolListBoundedForTheServer(t *testing.T) {
	bin := testmcp.Binary(t)
	raw := fmt.Sprintf(`{"servers": {
	  "big":  {"type": "stdio", "default_tool_meta": {"auto_apply": true},
	           "server_parameters": {"command": %q, "args": ["-host", "hbig", "-tools", "echo", "-many-tools", "39999"]}},
	  "huge": {"type": "stdio", "default_tool_meta": {"auto_apply": true},
	           "server_parameters": {"command": %q, "args": ["-host", "hhuge", "-tools", "echo,pid", "-huge-tool", "10000000"]}},
	  "ok":   {"type": "stdio", "default_tool_meta": {"auto_apply": true},
	           "server_parameters": {"command": %q, "args": ["-host", "hok", "-tools", "echo,pid,fail"]}}
	}}`, bin, bin, bin)
	cfg, err := config.Parse([]byte(raw))
	require.NoError(t, err)
	var logs sourcetest.LogRecorder
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	// The listings take long under -race on a loaded machine: timeouts and
	// health checks far away, so that only the bounds are tested.
	c := newComputer(t, cfg, WithLogger(logs.Logger()),
		WithManagerOptions(mcpclient.WithTimeouts(10*time.Minute, 10*time.Minute), mcpclient.WithHealthCheck(time.Hour, 10*time.Minute)))
	took := time.Since(start)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("warnings: %q", logs.Warnings())
		}
	})

	list := c.Tools(protocol.Gen02)
	ret, err := json.Marshal(protocol.GetToolsRet{Tools: list, ReqID: "r"})
	require.NoError(t, err)
	assert.LessOrEqual(t, len(ret), protocol.DefaultMaxPayloadBytes, "one get_tools answer the Server accepts")
	require.NoError(t, protocol.Validate(protocol.EventGetTools, protocol.Ack, ret), "a valid answer")
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("published %d tools in %d bytes; start %v; heap in use %+d MiB, goroutines %d",
		len(list), len(ret), took.Round(time.Millisecond), (int64(after.HeapInuse)-int64(before.HeapInuse))>>20, runtime.NumGoroutine())

	published := map[string]bool{}
	for _, tl := range list {
		published[tl.Name] = true
	}
	for _, n := range []string{"ok__echo", "ok__pid", "fail", "huge__echo", "huge__pid", "big__echo", "t-000001"} {
		assert.True(t, published[n], "%s published", n)
	}
	assert.False(t, published["huge"], "the 10 MB tool is withheld")
	assert.False(t, published["t-039999"], "the end of the listing is withheld")
	bigCount := 0
	for n := range published {
		if strings.HasPrefix(n, "t-") {
			bigCount++
		}
	}
	assert.Greater(t, bigCount, 10000, "the big server keeps a large prefix")

	withheld := map[string]protocol.Code{}
	for _, w := range c.tools.Withheld(protocol.Gen02) {
		withheld[w.Tool] = w.Err.Code
	}
	assert.Equal(t, protocol.CodePayloadTooLarge, withheld["huge"])
	assert.Equal(t, protocol.CodePayloadTooLarge, withheld["t-039999"])
	assert.Len(t, withheld, 1+39999-bigCount)
	warned := 0
	for _, w := range logs.Warnings() {
		if strings.HasPrefix(w, "tools of an MCP server withheld") {
			warned++
		}
	}
	// One per server and code, and one more for the big server under the
	// exposed names, which are longer: more of its tools are over its share.
	assert.Equal(t, 3, warned, "one warning per server, code and naming")

	// A 0.4 session's list: exposed names with bundle ids, within the same
	// budget, valid in 0.4.0.
	list4 := c.Tools(protocol.Gen04)
	ret4, err := json.Marshal(protocol.GetToolsRet{Tools: list4, ReqID: "r"})
	require.NoError(t, err)
	assert.LessOrEqual(t, len(ret4), protocol.DefaultMaxPayloadBytes, "one get_tools answer the Server accepts")
	require.NoError(t, protocol.Gen04.Validate(protocol.EventGetTools, protocol.Ack, ret4), "a valid 0.4 answer")
	exposed := map[string]bool{}
	for _, tl := range list4 {
		require.True(t, strings.HasPrefix(tl.Name, tl.BundleID+"__"), "%s of %s", tl.Name, tl.BundleID)
		exposed[tl.Name] = true
	}
	for _, n := range []string{"ok__echo", "ok__fail", "huge__echo", "big__echo", "big__t-000001"} {
		assert.True(t, exposed[n], "%s published", n)
	}
	assert.False(t, exposed["huge__huge"], "the 10 MB tool is withheld")
	assert.Less(t, len(list4), len(list), "the longer names cost the big server some tools")

	for _, n := range []string{"ok__echo", "huge__echo", "big__echo"} {
		res := call(c, n, map[string]any{"text": n})
		require.Nil(t, res.IsError, "%s: %+v", n, res)
		assert.Equal(t, n, *res.Content[0].Text)
	}
	res := call(c, "t-000001", nil)
	require.Nil(t, res.IsError, "%+v", res)
	assert.Equal(t, "t-000001", *res.Content[0].Text)
	res = call(c, "huge", nil)
	require.NotNil(t, res.IsError)
	assert.Equal(t, int(protocol.CodeToolNotFound), res.StructuredContent["code"])
	assert.Contains(t, *res.Content[0].Text, "not published")
}
