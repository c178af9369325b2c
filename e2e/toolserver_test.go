package e2e

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// holdEnv names a file the tool server waits for before it serves.
const holdEnv = "SMCP_E2E_HOLD_FILE"

// statusWindow is the one window:// resource of the tool server.
const statusWindow = "window://e2e.tools/status?priority=50"

// runToolServer is a small real MCP server (stdio) with the tools the
// end-to-end tests call — echo answers its text, slow waits for its seconds
// unless cancelled, fail returns an error result — and one window.
func runToolServer() int {
	// Started by a Computer that joins before it is up: hold the
	// initialize until the test lets it go.
	if hold := os.Getenv(holdEnv); hold != "" {
		for {
			if _, err := os.Stat(hold); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	s := mcpserver.NewMCPServer("e2e-tools", "1.0.0", mcpserver.WithToolCapabilities(true),
		mcpserver.WithResourceCapabilities(true, true), mcpserver.WithRecovery())
	s.AddResource(mcp.NewResource(statusWindow, "status", mcp.WithMIMEType("text/plain")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: statusWindow, MIMEType: "text/plain", Text: "all systems nominal"}}, nil
		})
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Answers its text."), mcp.WithString("text", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("slow", mcp.WithDescription("Waits for seconds, or until cancelled."), mcp.WithNumber("seconds", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			d := time.Duration(req.GetFloat("seconds", 1) * float64(time.Second))
			fmt.Fprintln(os.Stderr, "slow: started") // the chaos suite waits for it
			select {
			case <-time.After(d):
				return mcp.NewToolResultText(fmt.Sprintf("slept %s", d)), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	s.AddTool(mcp.NewTool("fail", mcp.WithDescription("Always fails.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("this tool always fails"), nil
		})
	if err := mcpserver.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, "toolserver:", err)
		return 1
	}
	return 0
}
