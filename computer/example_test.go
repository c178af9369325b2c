package computer_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/a2c-smcp/smcp-go/computer"
	"github.com/a2c-smcp/smcp-go/computer/config"
	"github.com/a2c-smcp/smcp-go/protocol"
)

// A Computer hosting one MCP server, used locally: its tools, and a call.
// Connect would then join an office of a Server and answer its Agents
// (computer.Connect, or `smcp-computer run`).
func Example() {
	// An MCP server with one tool, over streamable HTTP. Any MCP server
	// works: a stdio command ("type": "stdio"), an SSE or HTTP endpoint.
	mcpServer := server.NewMCPServer("greeter", "1.0.0", server.WithToolCapabilities(false))
	mcpServer.AddTool(mcp.NewTool("greet", mcp.WithDescription("Greets someone"), mcp.WithString("name", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("hello, " + req.GetString("name", "world")), nil
		})
	web := httptest.NewServer(server.NewStreamableHTTPServer(mcpServer))
	defer web.Close()

	// The configuration, in the Python SDK's format (usually a file:
	// config.Load). auto_apply: the tools run without asking a user
	// (otherwise give computer.WithConfirm).
	cfg, err := config.Parse([]byte(`[{"name": "greeter", "type": "streamable",
		"default_tool_meta": {"auto_apply": true},
		"server_parameters": {"url": "` + web.URL + `/mcp"}}]`))
	if err != nil {
		panic(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := computer.New(cfg, computer.WithLogger(slog.New(slog.DiscardHandler)))
	defer c.Close(context.Background())
	if err := c.Start(ctx); err != nil { // every server's first attempt
		panic(err)
	}
	for _, t := range c.Tools(protocol.Gen02) {
		fmt.Println(t.Name+":", t.Description)
	}

	// What an Agent's client:tool_call runs.
	res := c.CallTool(ctx, protocol.Gen02, protocol.ToolCallReq{Agent: "bot", Computer: "desk", ReqID: "1",
		ToolName: "greet", Params: map[string]any{"name": "Ada"}, Timeout: 10})
	fmt.Println(res.Text())
	// Output:
	// greet: Greets someone
	// hello, Ada
}
