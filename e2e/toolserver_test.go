package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
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
// unless cancelled, fail returns an error result, progress reports MCP
// progress — one window, and the prompt greet whose language it completes.
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
	opts := []mcpserver.ServerOption{mcpserver.WithToolCapabilities(true),
		mcpserver.WithResourceCapabilities(true, true), mcpserver.WithRecovery()}
	extra := os.Getenv(extrasEnv) != ""
	if extra {
		opts = append(opts, mcpserver.WithPromptCapabilities(false), mcpserver.WithCompletions(),
			mcpserver.WithPromptCompletionProvider(languages{}))
	}
	s := mcpserver.NewMCPServer("e2e-tools", "1.0.0", opts...)
	if extra {
		addExtras(s)
	}
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

// toolLanguages are the values the prompt greet completes its language from.
var toolLanguages = []string{"english", "esperanto", "french", "german", "greek"}

type languages struct{}

func (languages) CompletePromptArgument(_ context.Context, name string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	if name != "greet" || arg.Name != "language" {
		return nil, fmt.Errorf("prompt %q has no argument %q", name, arg.Name)
	}
	out := []string{}
	for _, l := range toolLanguages {
		if strings.HasPrefix(l, arg.Value) {
			out = append(out, l)
		}
	}
	return &mcp.Completion{Values: out, Total: len(out)}, nil
}

// progressTool sends notifications/progress 1 … steps (of total steps) for
// the call's progressToken, none without one (unless stray: then for a
// token nobody gave), and answers "sent N" (after the file hold exists, when
// given).
func progressTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	steps := req.GetInt("steps", 3)
	sent := 0
	var token mcp.ProgressToken
	if req.Params.Meta != nil {
		token = req.Params.Meta.ProgressToken
	}
	if token == nil && req.GetBool("stray", false) {
		token = "a-token-nobody-gave" // a server that reports progress unasked
	}
	if token != nil {
		srv := mcpserver.ServerFromContext(ctx)
		for i := 1; i <= steps; i++ {
			if err := srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
				"progressToken": token, "progress": i, "total": steps,
				"message": fmt.Sprintf("step %d of %d", i, steps)}); err != nil {
				return nil, err
			}
			sent++
		}
	}
	// The MCP SDK writes notifications on a goroutine of their own, so an
	// answer may overtake them: with hold, the tool answers only once the
	// test, having received the last report, created that file.
	if hold := req.GetString("hold", ""); hold != "" && sent > 0 {
		deadline := time.Now().Add(time.Minute)
		for {
			if _, err := os.Stat(hold); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return mcp.NewToolResultError("the test never saw the last report"), nil
			}
			select {
			case <-time.After(20 * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return mcp.NewToolResultText(fmt.Sprintf("sent %d", sent)), nil
}

// extrasEnv, when set, makes the tool server also serve the tool progress
// and the prompt greet with the completions capability (toolServerExtras).
const extrasEnv = "SMCP_E2E_TOOL_EXTRAS"

// toolServerExtras is toolServer with the tool progress and the prompt greet.
func toolServerExtras(t testing.TB, name string) mcpServer {
	s := toolServer(t, name)
	s["server_parameters"].(map[string]any)["env"].(map[string]string)[extrasEnv] = "1"
	return s
}

func addExtras(s *mcpserver.MCPServer) {
	s.AddPrompt(mcp.NewPrompt("greet", mcp.WithPromptDescription("Greets in a language."), mcp.WithArgument("language", mcp.RequiredArgument())),
		func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("greet", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Say hello in "+req.Params.Arguments["language"]))}), nil
		})
	s.AddTool(mcp.NewTool("progress", mcp.WithDescription("Reports steps of steps as MCP progress when the call has a progressToken, then answers how many it sent."),
		mcp.WithNumber("steps", mcp.Required()), mcp.WithString("hold"), mcp.WithBoolean("stray")), progressTool)
}
