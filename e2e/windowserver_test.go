package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// runWindowServer is a real MCP server (stdio) serving window:// resources
// laid out the 0.4 way, for the desktop-order tests: each argument is
// "PATH:PRIORITY[:full]", listed as window://e2e.win/PATH with
// annotations.priority PRIORITY (0 to 1) and, with ":full",
// _meta.fullscreen true. Each window's text is "window PATH".
func runWindowServer(args []string) int {
	s := mcpserver.NewMCPServer("e2e-windows", "1.0.0", mcpserver.WithResourceCapabilities(true, true), mcpserver.WithRecovery())
	for _, a := range args {
		parts := strings.Split(a, ":")
		if len(parts) < 2 {
			fmt.Fprintln(os.Stderr, "windowserver: want PATH:PRIORITY[:full], got", a)
			return 2
		}
		p, err := strconv.ParseFloat(parts[1], 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "windowserver:", err)
			return 2
		}
		uri, text := "window://e2e.win/"+parts[0], "window "+parts[0]
		res := mcp.NewResource(uri, parts[0], mcp.WithMIMEType("text/plain"))
		res.Annotations = &mcp.Annotations{Priority: &p, Audience: []mcp.Role{mcp.RoleAssistant}}
		if len(parts) > 2 && parts[2] == "full" {
			res.Meta = &mcp.Meta{AdditionalFields: map[string]any{"fullscreen": true}}
		}
		s.AddResource(res, func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: text}}, nil
		})
	}
	if err := mcpserver.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, "windowserver:", err)
		return 1
	}
	return 0
}
